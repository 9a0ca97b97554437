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

// TestCarriedColumnsReadByDuckDB: columns carried from a Parquet file in
// pyarrow's own types (large_string, uint8, uint64, a dictionary, a naive
// timestamp[ms], timestamp[ns] in Europe/London, large_list<uint16>, a
// struct of uint32 and large_string, the null type) reach DuckDB in the
// types declared columns have, with their values; a time of day is left
// out. And the table whose every row is rejected is one file DuckDB reads
// as no rows, with the table's columns.
func TestCarriedColumnsReadByDuckDB(t *testing.T) {
	out := t.TempDir()
	runAgoraArgs(t, "run", "--config", "../testdata/hostile/pipeline.yaml", "--data", "../testdata", "--out", out)
	db := openDuck(t)
	var types string
	if err := db.QueryRow(`SELECT string_agg(column_name || ' ' || column_type, ', ') FROM (DESCRIBE SELECT * FROM read_parquet('` + filepath.Join(out, "hostile", "carried") + `/*.parquet'))`).Scan(&types); err != nil {
		t.Fatal(err)
	}
	want := "id VARCHAR, big_text VARCHAR, small INTEGER, huge BIGINT, category VARCHAR, naive TIMESTAMP WITH TIME ZONE, precise TIMESTAMP WITH TIME ZONE, counts INTEGER[], pair STRUCT(a BIGINT, b VARCHAR), nothing VARCHAR"
	if types != want {
		t.Errorf("types\n %s\nwant\n %s", types, want)
	}
	var got string
	if err := db.QueryRow(`SELECT string_agg(concat_ws('|', id, big_text, small, huge, category, strftime(naive, '%Y-%m-%dT%H:%M:%S.%f'), strftime(precise, '%Y-%m-%dT%H:%M:%S.%f'), counts::VARCHAR, pair.a, pair.b), ' ; ' ORDER BY id)
		FROM read_parquet('` + filepath.Join(out, "hostile", "carried") + `/*.parquet')`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	wantRows := "a|x|255|9007199254740993|red|2024-01-02T03:04:05.000000|2024-01-02T03:04:05.123456|[1, 65535]|4294967295|y ; b ; c|zé|0|9223372036854775807|red|1969-12-31T23:59:59.000000|1969-12-31T23:59:59.999999|[]"
	if got != wantRows {
		t.Errorf("rows\n %s\nwant\n %s", got, wantRows)
	}
	var n, cols int64
	if err := db.QueryRow(`SELECT count(*) FROM read_parquet('` + filepath.Join(out, "hostile", "none") + `/*.parquet')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM (DESCRIBE SELECT * FROM read_parquet('` + filepath.Join(out, "hostile", "none") + `/*.parquet'))`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	if n != 0 || cols != 5 {
		t.Errorf("table none: %d rows and %d columns, want 0 and 5 (id, key, ts, tags, score)", n, cols)
	}
}
