package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agora-etl/agora/bench/inputs"
)

// TestMain lets the test binary stand in for the compare binary when it
// re-executes itself for the DuckDB and --verify children.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == duckdbChild || os.Args[1] == verifyChild) {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestSplitSQL(t *testing.T) {
	got, err := splitSQL("-- header\n-- table: a\nCOPY (SELECT 1) TO '{{out}}/a';\n\n-- table: b_2\nSELECT '{{data}}';\n", "/d'x", "/o")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b_2" {
		t.Fatalf("tables %+v", got)
	}
	if got[0].SQL != "COPY (SELECT 1) TO '/o/a';" || got[1].SQL != "SELECT '/d''x';" {
		t.Fatalf("SQL %q, %q", got[0].SQL, got[1].SQL)
	}
}

func TestSQLFilesMatchPipeline(t *testing.T) {
	for ds, d := range datasets {
		tables, err := sqlTables(filepath.Join("..", "..", "sql", d.sql))
		if err != nil {
			t.Fatal(err)
		}
		all, err := subsetConfig(filepath.Join("..", "..", "..", "pipeline.yaml"), filepath.Join(t.TempDir(), "p.yaml"), ds, tables)
		if err != nil {
			t.Fatalf("%s: %v", ds, err)
		}
		if len(tables) == 0 || len(tables) > len(all) {
			t.Errorf("%s: SQL tables %v, pipeline tables %v", ds, tables, all)
		}
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
}

// TestPairedRatio: the median of each repetition's own ratio, not the
// ratio of the medians (which a slow repetition of one engine moves).
func TestPairedRatio(t *testing.T) {
	walls := func(ws ...float64) []measurement {
		var ms []measurement
		for _, w := range ws {
			ms = append(ms, measurement{Wall: w})
		}
		return ms
	}
	for _, tc := range []struct {
		name string
		a, b []measurement
		want float64
	}{
		// Repetition 2 ran slow for both: ratios 0.5, 0.5, 0.6.
		{"a load that hits both", walls(2, 6, 3), walls(4, 12, 5), 0.5},
		{"even count", walls(1, 2), walls(2, 2), 0.75},
		{"a failed repetition left out", walls(2, 0, 3), walls(4, 5, 5), 0.55},
		{"unequal lengths", walls(1, 1, 1), walls(2), 0.5},
		{"nothing to pair", walls(), walls(1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pairedRatio(tc.a, tc.b); got < tc.want-1e-9 || got > tc.want+1e-9 {
				t.Errorf("pairedRatio = %v, want %v", got, tc.want)
			}
		})
	}
	// Against the ratio of medians: summarise fills both.
	res := map[string]*result{
		"agora":  {Engine: "agora", Reps: walls(2, 6, 3)},
		"duckdb": {Engine: "duckdb", Reps: walls(4, 12, 5)},
	}
	summarise(res)
	if a := res["agora"]; a.PairedVsDuckDB != 0.5 || a.VsDuckDB != 0.6 {
		t.Errorf("agora: paired %v (want 0.5), ratio of medians %v (want 0.6)", a.PairedVsDuckDB, a.VsDuckDB)
	}
}

// TestWriteTargets: each dataset and scale with an agora and a DuckDB
// run gets a line, judged with agora-same where there is one, against
// CrowdRAG-25 10×'s 0.67 and 1.00 elsewhere; RSS against 300 MB (286.1
// MiB) and DuckDB's. Failed runs and sets without DuckDB get none; agora
// writing more tables than DuckDB, without an agora-same run, is not judged.
func TestWriteTargets(t *testing.T) {
	rep := report{Results: []result{
		{Dataset: "crowdrag25", Scale: "10", Engine: "agora", WallS: 1.5, RSSMB: 284, PairedVsDuckDB: 0.6},
		{Dataset: "crowdrag25", Scale: "10", Engine: "duckdb", WallS: 2.5, RSSMB: 1208},
		{Dataset: "crowdrag25", Scale: "50", Engine: "agora", WallS: 8.5, RSSMB: 287},
		{Dataset: "crowdrag25", Scale: "50", Engine: "duckdb", WallS: 12.5, RSSMB: 5000},
		{Dataset: "habermas", Scale: "10", Engine: "agora", WallS: 5, RSSMB: 100},
		{Dataset: "habermas", Scale: "10", Engine: "agora-same", WallS: 9.3, RSSMB: 348, PairedVsDuckDB: 1.04},
		{Dataset: "habermas", Scale: "10", Engine: "duckdb", WallS: 8.8, RSSMB: 4900},
		{Dataset: "habermas", Scale: "1", Engine: "agora", WallS: 1, RSSMB: 280},
		{Dataset: "habermas", Scale: "1", Engine: "duckdb", WallS: 1.1, RSSMB: 800, Tables: "4/5", Missing: []string{"round_outcomes"}},
		{Dataset: "delidata", Scale: "10", Engine: "agora", WallS: 1, RSSMB: 128},
		{Dataset: "delidata", Scale: "50", Engine: "agora", WallS: 1, RSSMB: 128},
		{Dataset: "delidata", Scale: "50", Engine: "duckdb", Error: "boom"},
	}}
	var b strings.Builder
	writeTargets(&b, rep)
	got := b.String()
	for _, want := range []string{
		"- crowdrag25 10×: wall 0.60 of DuckDB's (paired 0.60), at most 0.67: met; peak RSS 284 MiB (298 MB), under 300 MB: met, below DuckDB's 1208 MiB: met\n",
		"- crowdrag25 50×: wall 0.68 of DuckDB's (paired 0.00), at most 1.00: met; peak RSS 287 MiB (301 MB), under 300 MB: NOT MET,",
		"- habermas 10×: wall 1.06 of DuckDB's (paired 1.04), at most 1.00: NOT MET; peak RSS 348 MiB (365 MB), under 300 MB: NOT MET, below DuckDB's 4900 MiB: met\n",
		"- habermas 1×: not judged: DuckDB writes fewer tables than agora (4/5) and agora-same was not run\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "delidata") {
		t.Errorf("a set without a DuckDB run got a line:\n%s", got)
	}
}

// TestWriteGrowth: datasets run at two or more row scales get a line per
// engine, from the smallest scale to the largest whatever the order run,
// with agora's judged against growthLimit; widened and failed sets, and
// datasets at one scale, get none.
func TestWriteGrowth(t *testing.T) {
	rep := report{Results: []result{
		{Dataset: "crowdrag25", Scale: "50", Engine: "agora", RSSMB: 535},
		{Dataset: "crowdrag25", Scale: "10", Engine: "agora", RSSMB: 513},
		{Dataset: "crowdrag25", Scale: "10", Engine: "duckdb", RSSMB: 1208},
		{Dataset: "crowdrag25", Scale: "50", Engine: "duckdb", RSSMB: 5071},
		{Dataset: "habermas", Scale: "1", Engine: "agora-same", RSSMB: 400},
		{Dataset: "habermas", Scale: "1w10", Engine: "agora-same", RSSMB: 9999},
		{Dataset: "habermas", Scale: "10", Engine: "agora-same", RSSMB: 634},
		{Dataset: "habermas", Scale: "50", Engine: "agora-same", Error: "boom"},
		{Dataset: "delidata", Scale: "10", Engine: "agora", RSSMB: 148},
	}}
	var b strings.Builder
	writeGrowth(&b, rep)
	got := b.String()
	for _, want := range []string{
		"- crowdrag25, agora: 513 MiB at 10× → 535 MiB at 50×, ×1.04 (within)\n",
		"- crowdrag25, duckdb: 1208 MiB at 10× → 5071 MiB at 50×, ×4.20\n",
		"- habermas, agora-same: 400 MiB at 1× → 634 MiB at 10×, ×1.58 (over)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "delidata") || strings.Contains(got, "9999") {
		t.Errorf("a dataset at one scale or a widened set got a line:\n%s", got)
	}
	b.Reset()
	writeGrowth(&b, report{Results: rep.Results[8:]})
	if b.Len() != 0 {
		t.Errorf("one scale only printed %q", b.String())
	}
}

// TestQuickCompare runs the whole comparison on tiny inputs: every engine
// row must be in the table with agora's row counts and parseable ratios.
func TestQuickCompare(t *testing.T) {
	repo := runRepo(t)
	engines := "agora,agora-same,duckdb"
	if _, err := os.Stat(filepath.Join(repo, ".venv", "bin", "python")); err == nil {
		engines += ",polars,pyarrow"
	} else {
		t.Logf("no %s/.venv: polars and pyarrow left out", repo)
	}
	work := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"--repo", repo, "--work", work, "--quick", "--sets", "crowdrag25:0.1;delidata:0.1", "--engines", engines, "--verify"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("compare exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	var rows [][]string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "| crowdrag25 ") || strings.HasPrefix(line, "| delidata ") {
			rows = append(rows, strings.Split(strings.Trim(line, "| "), " | "))
		}
	}
	n := len(strings.Split(engines, ",")) // crowdrag25 has no agora-same row: DuckDB writes every table
	if want := 2*n - 1; len(rows) != want {
		t.Fatalf("%d table rows, want %d:\n%s", len(rows), want, stdout.String())
	}
	for _, r := range rows {
		if len(r) != 14 {
			t.Fatalf("row has %d cells: %q", len(r), r)
		}
		for _, c := range []int{4, 5, 6, 7, 8, 9, 10, 11} {
			if _, err := strconv.ParseFloat(r[c], 64); err != nil {
				t.Errorf("%s %s: cell %d %q is not a number", r[0], r[2], c, r[c])
			}
		}
		if cpu, _ := strconv.ParseFloat(r[6], 64); cpu <= 0 {
			t.Errorf("%s %s: CPU seconds %q, want > 0", r[0], r[2], r[6])
		}
		if r[12] != "ok" {
			t.Errorf("%s %s: row check %q", r[0], r[2], r[12])
		}
		if v := r[13]; !strings.HasPrefix(r[2], "agora") && v != "equal" {
			t.Errorf("%s %s: values %q", r[0], r[2], v)
		}
	}
	b, err := os.ReadFile(filepath.Join(work, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(rows) {
		t.Errorf("results.json has %d results, the table %d", len(rep.Results), len(rows))
	}
}

// TestEveryDatasetHasSQL: each dataset the input sets accept has a DuckDB
// script to compare with.
func TestEveryDatasetHasSQL(t *testing.T) {
	for _, ds := range inputs.Datasets {
		d, ok := datasets[ds]
		if !ok {
			t.Errorf("dataset %s has no entry in datasets", ds)
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "..", "sql", d.sql)); err != nil {
			t.Errorf("dataset %s: %v", ds, err)
		}
	}
}

func TestOnlyTable(t *testing.T) {
	tables := []sqlTable{{Name: "a", SQL: "SELECT 1"}, {Name: "b", SQL: "SELECT 2"}}
	got, err := onlyTable(tables, "b")
	if err != nil || len(got) != 1 || got[0].SQL != "SELECT 2" {
		t.Fatalf("onlyTable(b) = %+v, %v", got, err)
	}
	if _, err := onlyTable(tables, "c"); err == nil {
		t.Error("onlyTable(c): no error for a table the script does not write")
	}
}

func TestPerTableOptions(t *testing.T) {
	repo := filepath.Join("..", "..", "..")
	for _, tc := range []struct {
		name    string
		args    []string
		engines string // want, joined; "" for an error
	}{
		{"agora and DuckDB by default", []string{"--per-table"}, "agora,duckdb"},
		{"DuckDB alone", []string{"--per-table", "--engines", "duckdb"}, "duckdb"},
		{"polars cannot write one table", []string{"--per-table", "--engines", "agora,polars"}, ""},
		{"every engine without it", nil, "agora,agora-same,duckdb,polars,pyarrow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(append([]string{"--repo", repo}, tc.args...), new(bytes.Buffer))
			if tc.engines == "" {
				if err == nil {
					t.Fatalf("no error, engines %v", o.engines)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(o.engines, ","); got != tc.engines {
				t.Errorf("engines %s, want %s", got, tc.engines)
			}
		})
	}
}

// TestTurnOrder: engines take turns as given in even repetitions and
// reversed in odd ones, and the caller's list is left as it was.
func TestTurnOrder(t *testing.T) {
	engines := []string{"agora", "duckdb", "polars", "pyarrow"}
	for _, tc := range []struct {
		rep  int
		want string
	}{
		{0, "agora,duckdb,polars,pyarrow"},
		{1, "pyarrow,polars,duckdb,agora"},
		{2, "agora,duckdb,polars,pyarrow"},
		{5, "pyarrow,polars,duckdb,agora"},
	} {
		if got := strings.Join(turnOrder(engines, tc.rep), ","); got != tc.want {
			t.Errorf("repetition %d: %s, want %s", tc.rep, got, tc.want)
		}
	}
	if got := strings.Join(engines, ","); got != "agora,duckdb,polars,pyarrow" {
		t.Errorf("engines changed to %s", got)
	}
}

// runRepo returns the repository's absolute path for a test that builds
// agora and runs it, which -short skips.
func runRepo(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds agora and runs it")
	}
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// TestQuickPerTable: --per-table times each table of the DuckDB script
// alone, agora and DuckDB each writing just that table, with the same rows.
func TestQuickPerTable(t *testing.T) {
	repo := runRepo(t)
	tables, err := sqlTables(filepath.Join(repo, "bench", "sql", datasets["habermas"].sql))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"--repo", repo, "--work", t.TempDir(), "--quick", "--sets", "habermas:0.02", "--per-table", "--verify"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("compare exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	seen := map[string]int{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if !strings.HasPrefix(line, "| habermas.") {
			continue
		}
		r := strings.Split(strings.Trim(line, "| "), " | ")
		table := strings.TrimPrefix(r[0], "habermas.")
		seen[table]++
		if r[3] != "1/1" {
			t.Errorf("%s %s: tables %q, want 1/1 (the one table alone)", r[0], r[2], r[3])
		}
		if r[12] != "ok" {
			t.Errorf("%s %s: row check %q", r[0], r[2], r[12])
		}
		if r[2] == "duckdb" && r[13] != "equal" {
			t.Errorf("%s: values %q", r[0], r[13])
		}
	}
	for _, tb := range tables {
		if seen[tb] != 2 {
			t.Errorf("table %s: %d rows in the output, want 2 (agora and duckdb)\n%s", tb, seen[tb], stdout.String())
		}
	}
	if len(seen) != len(tables) {
		t.Errorf("tables in the output %v, want %v", seen, tables)
	}
}
