package e2e

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestHostilePartitionValuesReadByDuckDB writes partition values that need
// escaping (/, .., =, %, spaces, non-ASCII, NULL, the Hive null sentinel,
// empty, null) and checks DuckDB reads each back as written; empty reads
// as null, as in Spark. The fixture also carries a timestamp and a map.
func TestHostilePartitionValuesReadByDuckDB(t *testing.T) {
	out := t.TempDir()
	cmd := []string{"run", "--config", "../testdata/hostile/pipeline.yaml", "--data", "../testdata", "--out", out}
	runAgoraArgs(t, cmd...)
	f, err := os.Open("../testdata/hostile/values.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[int64]*string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			ID  int64   `json:"id"`
			Key *string `json:"key"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Key != nil && *r.Key == "" {
			r.Key = nil
		}
		want[r.ID] = r.Key
	}
	db := openDuck(t)
	rows, err := db.Query(`SELECT id, part, ts = TIMESTAMPTZ '2024-01-01 03:04:05.123456+00' + to_days(CAST(id % 9 AS INTEGER)) + to_microseconds(id),
		tags['k'], typeof(part), typeof(ts), typeof(tags)
		FROM read_parquet('` + filepath.Join(out, "hostile", "values") + `/**/*.parquet', hive_partitioning=true) ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int64
		var part sql.NullString
		var tsOK bool
		var k any
		var tp, tts, ttags string
		if err := rows.Scan(&id, &part, &tsOK, &k, &tp, &tts, &ttags); err != nil {
			t.Fatal(err)
		}
		n++
		w := want[id]
		switch {
		case w == nil && part.Valid:
			t.Errorf("id %d: want NULL, got %q", id, part.String)
		case w != nil && (!part.Valid || part.String != *w):
			t.Errorf("id %d: want %q, got %v", id, *w, part)
		}
		if !tsOK {
			t.Errorf("id %d: timestamp is not the instant written", id)
		}
		if tp != "VARCHAR" || tts != "TIMESTAMP WITH TIME ZONE" || ttags != "MAP(VARCHAR, VARCHAR[])" {
			t.Errorf("types %s %s %s", tp, tts, ttags)
		}
	}
	if n != len(want) {
		t.Errorf("%d rows, want %d", n, len(want))
	}
}
