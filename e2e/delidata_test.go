package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDeliDataReadByDuckDB(t *testing.T) {
	out := t.TempDir()
	runAgora(t, "../testdata", out, "--only", "delidata")
	ds := filepath.Join(out, "delidata")
	db := openDuck(t)
	msgs := "read_parquet('" + ds + "/messages/**/*.parquet', hive_partitioning=true)"
	groups := "read_parquet('" + ds + "/groups/*.parquet')"

	// Count what is in the source folder.
	entries, err := os.ReadDir("../testdata/delidata")
	if err != nil {
		t.Fatal(err)
	}
	var lines, files int64
	for _, e := range entries {
		if strings.Contains(e.Name(), ".") {
			continue // __init__.py
		}
		b, _ := os.ReadFile(filepath.Join("../testdata/delidata", e.Name()))
		lines += int64(strings.Count(string(b), "\n")) - 1 // minus the header
		files++
	}
	if files == 0 {
		t.Fatal("no sample group files")
	}
	if n := queryInt(t, db, "SELECT count(*) FROM "+msgs); n != lines {
		t.Errorf("%d messages, the files hold %d lines", n, lines)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM "+groups); n != files {
		t.Errorf("%d groups, want %d", n, files)
	}
	checks := map[string]string{
		"no SQL quoting left in text":          `starts_with(text, '''') AND ends_with(text, '''') AND contains(text, '''''')`,
		"message_id null exactly on INITIAL":   `(message_id IS NULL) <> (message_type = 'INITIAL')`,
		"seq 0 exactly on INITIAL":             `(seq = 0) <> (message_type = 'INITIAL')`,
		"annotation literals mapped to null":   `annotation_type IN ('None', '0', '') OR annotation_target IN ('None', '0', '')`,
		"annotation_additional has no 0":       `list_contains(annotation_additional, '0')`,
		"INITIAL rows carry 4 cards":           `message_type = 'INITIAL' AND len(cards) <> 4`,
		"INITIAL participants without SYSTEM":  `message_type = 'INITIAL' AND (len(participants) = 0 OR list_contains(participants, 'SYSTEM'))`,
		"SUBMIT rows carry their cards":        `message_type = 'SUBMIT' AND submitted_cards IS NULL`,
		"element_at works on sol_tracker_all":  `message_type <> 'INITIAL' AND origin <> 'SYSTEM' AND typeof(element_at(sol_tracker_all, origin)) IS NULL`,
		"team_performance is a double in 0..1": `team_performance < 0 OR team_performance > 1`,
		"text equals the source once unquoted": `NOT starts_with(original_text, '''') AND text <> original_text`,
	}
	for name, where := range checks {
		if n := queryInt(t, db, "SELECT count(*) FROM "+msgs+" WHERE "+where); n != 0 {
			t.Errorf("%s: %d rows violate it", name, n)
		}
	}
	var typ, ptyp string
	if err := db.QueryRow("SELECT typeof(sol_tracker_all), typeof(message_type) FROM "+msgs+" LIMIT 1").Scan(&typ, &ptyp); err != nil {
		t.Fatal(err)
	}
	if typ != "MAP(VARCHAR, VARCHAR[])" || ptyp != "VARCHAR" {
		t.Errorf("sol_tracker_all is %s, message_type is %s", typ, ptyp)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM "+msgs+" WHERE contains(text, '''') "); n == 0 {
		t.Error("no apostrophes left at all: the sample should have unquoted texts")
	}
	gchecks := map[string]string{
		"counts add up":                        `n_messages + n_submits + 1 <> n_rows`,
		"correct cards are vowels, odd digits": `correct_cards <> list_filter(cards, c -> c IN ('A','E','I','O','U','1','3','5','7','9'))`,
		"gain is final minus initial":          `abs(performance_gain - (final_team_performance - initial_team_performance)) > 1e-9`,
		"participants exclude SYSTEM":          `list_contains(participants, 'SYSTEM') OR n_participants < 2`,
	}
	for name, where := range gchecks {
		if n := queryInt(t, db, "SELECT count(*) FROM "+groups+" WHERE "+where); n != 0 {
			t.Errorf("groups: %s: %d rows violate it", name, n)
		}
	}
	// Groups agree with their messages.
	q := `SELECT count(*) FROM ` + groups + ` g JOIN (
		SELECT group_id, count(*) n, max(seq) + 1 s,
		       arg_min(team_performance, seq) i, arg_max(team_performance, seq) f
		FROM ` + msgs + ` GROUP BY group_id) m USING (group_id)
		WHERE g.n_rows <> m.n OR m.s <> m.n OR g.initial_team_performance <> m.i OR g.final_team_performance <> m.f`
	if n := queryInt(t, db, q); n != 0 {
		t.Errorf("%d groups disagree with their messages", n)
	}
	// Participants: the union of the INITIAL list, tracker keys and origins.
	q = `SELECT count(*) FROM ` + groups + ` g JOIN (
		SELECT group_id, list_sort(list_distinct(flatten(list(list_concat(coalesce(participants, []), map_keys(sol_tracker_all), [origin]))))) p
		FROM ` + msgs + ` GROUP BY group_id) m USING (group_id)
		WHERE list_sort(g.participants) <> list_filter(m.p, x -> x <> 'SYSTEM')`
	if n := queryInt(t, db, q); n != 0 {
		t.Errorf("%d groups whose participants are not the union", n)
	}

	// The team_performance mismatches are flagged, not rejected.
	var m struct {
		Tables []struct {
			Name     string `json:"name"`
			Rejected int64  `json:"rows_rejected"`
			Checks   []struct {
				Rule     string `json:"rule"`
				Column   string `json:"column"`
				Failures int64  `json:"failures"`
			} `json:"checks"`
			Notes []string `json:"notes"`
		} `json:"tables"`
	}
	raw, _ := os.ReadFile(filepath.Join(ds, "manifest.json"))
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, tb := range m.Tables {
		if tb.Rejected != 0 {
			t.Errorf("%s: %d rows rejected from the sample", tb.Name, tb.Rejected)
		}
		if tb.Name != "messages" {
			continue
		}
		found := false
		for _, c := range tb.Checks {
			if c.Column == "team_performance" && c.Failures > 0 {
				found = true
			}
			if c.Column == "performance_change" {
				t.Errorf("performance_change check failed %d times; the sample obeys it", c.Failures)
			}
		}
		if !found {
			t.Error("no team_performance mismatch flagged; the sample has N/A artefact rows")
		}
		if !strings.Contains(strings.Join(tb.Notes, " "), "__init__.py") {
			t.Errorf("notes do not mention __init__.py: %v", tb.Notes)
		}
	}
	if n := queryInt(t, db, "SELECT count(DISTINCT message_type) FROM "+msgs); n != 3 {
		t.Errorf("%d message_type partitions", n)
	}
}
