// Package e2e runs agora on the shipped samples and reads every table
// back with the real consumers: DuckDB (through its Go binding) and an
// independent JavaScript Parquet reader (hyparquet). It is its own Go
// module so that agora itself does not depend on DuckDB.
package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

var agoraBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agora-e2e")
	if err != nil {
		panic(err)
	}
	agoraBin = filepath.Join(dir, "agora")
	build := exec.Command("go", "build", "-o", agoraBin, "./cmd/agora")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building agora:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runAgora runs agora run with the repository's pipeline.yaml.
func runAgora(t *testing.T, data, out string, extra ...string) string {
	t.Helper()
	return runAgoraArgs(t, append([]string{"run", "--config", "../pipeline.yaml", "--data", data, "--out", out}, extra...)...)
}

// runAgoraArgs runs agora with the given arguments and fails the test on
// a non-zero exit.
func runAgoraArgs(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(agoraBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agora %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

type manifest struct {
	Tables []struct {
		Name        string   `json:"name"`
		PartitionBy []string `json:"partition_by"`
		InputRows   int64    `json:"input_rows"`
		RowsIn      int64    `json:"rows_in"`
		Written     int64    `json:"rows_written"`
		Rejected    int64    `json:"rows_rejected"`
		Files       []struct {
			Path string `json:"path"`
			Rows int64  `json:"rows"`
		} `json:"files"`
	} `json:"tables"`
}

func readManifest(t *testing.T, dir string) manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func openDuck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("SET TimeZone='UTC'"); err != nil {
		t.Fatal(err)
	}
	return db
}

func queryInt(t *testing.T, db *sql.DB, q string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// countLines counts the lines of a gzipped JSONL file.
func countLines(t *testing.T, path string) int64 {
	t.Helper()
	return int64(len(readGzLines(t, path)))
}

func TestCrowdRAG25ReadByDuckDB(t *testing.T) {
	out := t.TempDir()
	runAgora(t, "../testdata", out, "--only", "crowdrag25")
	ds := filepath.Join(out, "crowdrag25")
	m := readManifest(t, ds)
	db := openDuck(t)
	glob := func(table string) string {
		return fmt.Sprintf("read_parquet('%s/%s/**/*.parquet', hive_partitioning=true)", ds, table)
	}
	src := func(name string) string {
		return fmt.Sprintf("read_json('../testdata/crowdrag25/%s.jsonl.gz', format='newline_delimited')", name)
	}

	t.Run("row counts match the manifest and the source", func(t *testing.T) {
		want := map[string]int64{}
		nRatings := countLines(t, "../testdata/crowdrag25/ratings.jsonl.gz")
		nResponses := countLines(t, "../testdata/crowdrag25/responses.jsonl.gz")
		nLLM := countLines(t, "../testdata/crowdrag25/llm_ratings.jsonl.gz")
		nGrades := countLines(t, "../testdata/crowdrag25/grades.jsonl.gz")
		want["responses"] = nResponses
		want["ratings"] = nRatings * 7
		want["votes"] = nRatings * 7 * 5
		want["llm_ratings"] = nLLM * 7
		want["grades"] = nGrades * 7
		want["statements"] = queryInt(t, db, "SELECT sum(len(statements)) FROM "+src("responses"))
		if len(m.Tables) != 6 {
			t.Fatalf("manifest has %d tables", len(m.Tables))
		}
		for _, tb := range m.Tables {
			if tb.RowsIn != tb.Written+tb.Rejected {
				t.Errorf("%s: rows in %d ≠ written %d + rejected %d", tb.Name, tb.RowsIn, tb.Written, tb.Rejected)
			}
			if tb.Rejected != 0 {
				t.Errorf("%s: %d rows rejected from the clean sample", tb.Name, tb.Rejected)
			}
			var fileRows int64
			for _, f := range tb.Files {
				fileRows += f.Rows
			}
			got := queryInt(t, db, "SELECT count(*) FROM "+glob(tb.Name))
			if got != tb.Written || fileRows != tb.Written || got != want[tb.Name] {
				t.Errorf("%s: duckdb %d, manifest written %d, files %d, want %d", tb.Name, got, tb.Written, fileRows, want[tb.Name])
			}
		}
	})

	t.Run("ratings types, partition column and p_n", func(t *testing.T) {
		types := map[string]string{}
		rows, err := db.Query("DESCRIBE SELECT * FROM " + glob("ratings"))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name, typ string
			var null, key, def, extra sql.NullString
			if err := rows.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
				t.Fatal(err)
			}
			types[name] = typ
		}
		rows.Close()
		want := map[string]string{
			"dimension": "VARCHAR", "workers": "VARCHAR[]", "votes": "VARCHAR[]", "spam_probabilities": "DOUBLE[]",
			"p_a": "DOUBLE", "p_n": "DOUBLE", "p_b": "DOUBLE", "gold": "VARCHAR", "n_votes_a": "BIGINT",
			"has_majority": "BOOLEAN", "pair_key": "VARCHAR", "submission_id": "VARCHAR",
		}
		for c, w := range want {
			if types[c] != w {
				t.Errorf("column %s: %q, want %q (all: %v)", c, types[c], w, types)
			}
		}
		bad := queryInt(t, db, `SELECT count(*) FROM `+glob("ratings")+` WHERE (p_n IS NULL) <> (dimension = 'quality_overall')`)
		if bad != 0 {
			t.Errorf("%d rows where p_n is null other than exactly for quality_overall", bad)
		}
		if n := queryInt(t, db, `SELECT count(DISTINCT dimension) FROM `+glob("ratings")); n != 7 {
			t.Errorf("%d dimensions", n)
		}
	})

	t.Run("ratings values equal the source and the derivations hold", func(t *testing.T) {
		// Every dimension's wide columns in the source against the long rows.
		for _, dim := range []string{"correctness_topical", "coherence_logical", "coherence_stylistic", "coverage_broad", "coverage_deep", "consistency_internal", "quality_overall"} {
			pn := dim + "_p_n"
			if dim == "quality_overall" {
				pn = "NULL::DOUBLE"
			}
			q := fmt.Sprintf(`SELECT count(*) FROM (
				SELECT submission_id, query_id, response_a, response_b, worker,
				       list_transform(%[1]s_vote, x -> lower(x)), %[1]s_spam_probability, %[1]s_p_a, %[2]s, %[1]s_p_b, lower(%[1]s_gold)
				FROM %[3]s
				EXCEPT
				SELECT submission_id, query_id, response_a, response_b, workers, votes, spam_probabilities, p_a, p_n, p_b, gold
				FROM %[4]s WHERE dimension = '%[1]s')`, dim, pn, src("ratings"), glob("ratings"))
			if n := queryInt(t, db, q); n != 0 {
				t.Errorf("%s: %d source rows not found in ratings", dim, n)
			}
		}
		checks := map[string]string{
			"vote counts sum to 5":      `n_votes_a + n_votes_b + n_votes_n <> 5`,
			"vote counts are the votes": `n_votes_a <> len(list_filter(votes, x -> x = 'a'))`,
			"has_majority is >2 agree":  `has_majority <> (greatest(n_votes_a, n_votes_b, n_votes_n) > 2)`,
			"pair_key is order-free":    `pair_key <> least(response_a, response_b) || '|' || greatest(response_a, response_b)`,
			"votes lower case":          `list_has_any(votes, ['A', 'B', 'N'])`,
			"probabilities sum to 1":    `abs(p_a + coalesce(p_n, 0) + p_b - 1) > 1e-6`,
			"quality_overall has no n":  `dimension = 'quality_overall' AND list_contains(votes, 'n')`,
			"aligned lists have 5 each": `len(workers) <> 5 OR len(votes) <> 5 OR len(spam_probabilities) <> 5`,
		}
		for name, where := range checks {
			if n := queryInt(t, db, "SELECT count(*) FROM "+glob("ratings")+" WHERE "+where); n != 0 {
				t.Errorf("%s: %d rows violate it", name, n)
			}
		}
		if n := queryInt(t, db, "SELECT count(*) FROM "+glob("ratings")+" WHERE has_majority"); n == 0 {
			t.Error("no pair has a majority: derivation never true")
		}
	})

	t.Run("votes are the ratings' lists, one row per worker", func(t *testing.T) {
		q := `SELECT count(*) FROM ` + glob("votes") + ` v JOIN ` + glob("ratings") + ` r
			USING (response_a, response_b, dimension)
			WHERE v.vote <> r.votes[v.worker_index + 1] OR v.worker <> r.workers[v.worker_index + 1]
			   OR v.spam_probability <> r.spam_probabilities[v.worker_index + 1] OR v.gold <> r.gold OR v.pair_key <> r.pair_key`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d votes differ from their rating row", n)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM (SELECT response_a, response_b, dimension, count(*) c FROM `+glob("votes")+` GROUP BY ALL) WHERE c <> 5`); n != 0 {
			t.Errorf("%d (pair, dimension) without exactly 5 votes", n)
		}
	})

	t.Run("responses and statements keep the source's values", func(t *testing.T) {
		q := `SELECT count(*) FROM (
			SELECT response, topic, style, kind, query, references_ids, references_texts, raw_text, cleaned_text, len(statements) FROM ` + src("responses") + `
			EXCEPT SELECT response, topic, style, kind, query, references_ids, references_texts, raw_text, cleaned_text, n_statements FROM ` + glob("responses") + `)`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d responses differ from the source", n)
		}
		q = `SELECT count(*) FROM (
			SELECT s.response, s.statement_index, s.text, s.citations FROM ` + glob("statements") + ` s
			EXCEPT SELECT response, idx - 1, statements[idx].text, statements[idx].citations
			FROM (SELECT response, statements, unnest(range(1, len(statements) + 1)) AS idx FROM ` + src("responses") + `))`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d statements differ from the source", n)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM `+glob("statements")+` WHERE style = 'bullet' AND NOT starts_with(text, chr(10))`); n != 0 {
			t.Errorf("%d bullet statements lost their leading newline", n)
		}
		q = `SELECT count(*) FROM ` + glob("responses") + ` r JOIN (SELECT response, sum(n_citations) c, count(*) k FROM ` + glob("statements") + ` GROUP BY response) s USING (response)
			WHERE r.n_citations <> s.c OR r.n_statements <> s.k`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d responses whose counts disagree with their statements", n)
		}
		q = `SELECT count(*) FROM ` + glob("responses") + ` WHERE n_words <> len(regexp_split_to_array(trim(cleaned_text), '\s+'))`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d responses whose n_words differs from DuckDB's count", n)
		}
	})

	t.Run("llm_ratings keep nulls and duplicates", func(t *testing.T) {
		if n := queryInt(t, db, `SELECT count(*) FROM `+glob("llm_ratings")+` WHERE label IS NULL`); n == 0 {
			t.Error("no null labels: the release has some")
		}
		if n := queryInt(t, db, `SELECT count(*) FROM `+glob("llm_ratings")+` WHERE occurrence > 0`); n == 0 {
			t.Error("no duplicates numbered")
		}
		q := `SELECT count(*) FROM ` + glob("llm_ratings") + ` l JOIN (
				SELECT response_a, response_b, inference, dimension, count(DISTINCT coalesce(label, '<null>')) > 1 AS conflict
				FROM ` + glob("llm_ratings") + ` GROUP BY ALL) k USING (response_a, response_b, inference, dimension)
			WHERE l.conflicting_duplicate <> k.conflict`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d rows with a wrong conflicting_duplicate", n)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM `+glob("llm_ratings")+` WHERE conflicting_duplicate`); n == 0 {
			t.Error("no conflicting duplicates flagged: the sample has some")
		}
	})

	t.Run("grades are the source's, per dimension", func(t *testing.T) {
		q := `SELECT count(*) FROM (
			UNPIVOT ` + src("grades") + ` ON COLUMNS(* EXCLUDE (response)) INTO NAME dimension VALUE grade
			EXCEPT SELECT response, dimension, grade FROM ` + glob("grades") + `)`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d grades differ from the source", n)
		}
	})

	t.Run("Spark-safe physical layout", func(t *testing.T) {
		q := `SELECT count(*) FROM parquet_metadata('` + ds + `/*/**/*.parquet') WHERE compression <> 'ZSTD'`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d column chunks not zstd", n)
		}
		q = `SELECT count(*) FROM parquet_schema('` + ds + `/*/**/*.parquet') WHERE type = 'INT96' OR converted_type LIKE 'UINT%'`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d INT96 or unsigned columns", n)
		}
		q = `SELECT count(*) FROM parquet_schema('` + ds + `/ratings/**/*.parquet') WHERE name = 'element' AND repetition_type IN ('OPTIONAL', 'REQUIRED')`
		if n := queryInt(t, db, q); n == 0 {
			t.Error("lists are not 3-level list/element")
		}
		q = `SELECT count(*) FROM parquet_file_metadata('` + ds + `/*/**/*.parquet') WHERE created_by NOT LIKE 'agora version %'`
		if n := queryInt(t, db, q); n != 0 {
			t.Errorf("%d files without agora's created_by", n)
		}
		q = `SELECT count(*) FROM parquet_schema('` + ds + `/ratings/**/*.parquet') WHERE name = 'dimension'`
		if n := queryInt(t, db, q); n != 0 {
			t.Error("the partition column is stored inside the files")
		}
	})
}

func TestRejectsReadByDuckDB(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "crowdrag25")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"responses", "llm_ratings", "grades"} {
		b, err := os.ReadFile("../testdata/crowdrag25/" + f + ".jsonl.gz")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f+".jsonl.gz"), b, 0o644)
	}
	// Break ratings: line 2 gets a probability of 1.7, line 3 a 4-vote list,
	// line 4 a list given as a string.
	lines := readGzLines(t, "../testdata/crowdrag25/ratings.jsonl.gz")
	lines[1] = strings.Replace(lines[1], `"coverage_deep_p_a":`, `"coverage_deep_p_a":1.7,"x_":`, 1)
	lines[2] = strings.Replace(lines[2], `"coherence_logical_vote":["`, `"coherence_logical_vote":["`, 1)
	var obj map[string]any
	json.Unmarshal([]byte(lines[2]), &obj)
	votes := obj["coherence_logical_vote"].([]any)
	old, _ := json.Marshal(votes)
	short, _ := json.Marshal(votes[:4])
	lines[2] = strings.Replace(lines[2], string(old), string(short), 1)
	lines[3] = strings.Replace(lines[3], `"worker":[`, `"worker":"not a list","x":[`, 1)
	// Line 5 holds bytes that are not UTF-8: its reject's row must still
	// be text a reader accepts.
	lines[4] = strings.Replace(lines[4], `"worker":["`, "\"worker\":[\"\xff\xfe", 1)
	writeGzLines(t, filepath.Join(dir, "ratings.jsonl.gz"), lines)

	out := t.TempDir()
	runAgora(t, data, out, "--only", "crowdrag25")
	ds := filepath.Join(out, "crowdrag25")
	m := readManifest(t, ds)
	db := openDuck(t)
	for _, tb := range m.Tables {
		if tb.RowsIn != tb.Written+tb.Rejected {
			t.Errorf("%s: rows in %d ≠ written %d + rejected %d", tb.Name, tb.RowsIn, tb.Written, tb.Rejected)
		}
	}
	rows, err := db.Query(`SELECT "table", rule, coalesce("column", ''), reason, source_file, source_line, "row" FROM read_parquet('` + ds + `/_rejects/*/*.parquet') WHERE "table" = 'ratings' ORDER BY source_line, rule`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var table, rule, col, reason, file, row string
		var line int64
		if err := rows.Scan(&table, &rule, &col, &reason, &file, &line, &row); err != nil {
			t.Fatal(err)
		}

		if line == 5 && !strings.Contains(row, `\xff\xfe`) {
			t.Errorf("line 5's row %q does not show its bytes", row)
		}
		if file != "crowdrag25/ratings.jsonl.gz" || reason == "" {
			t.Errorf("reject without file or reason: %s %s %q", rule, file, reason)
		}
		got = append(got, fmt.Sprintf("%d:%s:%s", line, rule, col))
	}
	// Each reject's table column names the folder it is in.
	var misplaced int
	if err := db.QueryRow(`SELECT count(*) FROM read_parquet('` + ds + `/_rejects/*/*.parquet', filename = true) WHERE NOT contains(replace(filename, '\', '/'), '/_rejects/' || "table" || '/')`).Scan(&misplaced); err != nil || misplaced != 0 {
		t.Errorf("%d rejects whose table column is not their folder (%v)", misplaced, err)
	}
	want := []string{"2:range:p_a", "3:list_length:votes", "4:type:worker", "5:type:worker"}
	// The 4-vote row breaks equal_lengths before list_length can look at it.
	want[1] = "3:equal_lengths:workers"
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ratings rejects %v, want %v", got, want)
	}
	for _, tb := range m.Tables {
		if tb.Name == "ratings" && (tb.Rejected != 4 || tb.RowsIn != tb.Written+4) {
			t.Errorf("ratings accounting: %+v", tb)
		}
	}
}

func readGzLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func writeGzLines(t *testing.T, path string, lines []string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for _, l := range lines {
		zw.Write([]byte(l + "\n"))
	}
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEveryFileReadByHyparquet decodes every Parquet file with an
// independent JavaScript reader and compares row counts with the
// manifest.
func TestEveryFileReadByHyparquet(t *testing.T) {
	if _, err := os.Stat("js/node_modules/hyparquet"); err != nil {
		t.Fatal("js/node_modules missing: run `npm ci --prefix e2e/js` (make test does)")
	}
	out := t.TempDir()
	runAgora(t, "../testdata", out)
	cmd := exec.Command("node", "js/read-all.mjs", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hyparquet: %v\n%s", err, stderr.String())
	}
	decoded := map[string]int64{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var r struct {
			Path string `json:"path"`
			Rows int64  `json:"rows"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		decoded[r.Path] = r.Rows
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		m := readManifest(t, filepath.Join(out, e.Name()))
		for _, tb := range m.Tables {
			for _, f := range tb.Files {
				files++
				p := e.Name() + "/" + f.Path
				got, ok := decoded[p]
				if !ok {
					t.Errorf("%s: not decoded by hyparquet", p)
				} else if got != f.Rows {
					t.Errorf("%s: hyparquet decoded %d rows, manifest says %d", p, got, f.Rows)
				}
			}
		}
	}
	if files == 0 || len(decoded) != files {
		t.Errorf("hyparquet decoded %d files, manifests list %d", len(decoded), files)
	}
}
