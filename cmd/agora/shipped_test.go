package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestShippedConfigCountsKeptRows: with the shipped pipeline.yaml, a
// DeliData message given twice is counted in neither messages nor
// groups, and a Habermas comparison row given twice is rejected by
// comparisons and left out of round_outcomes' counts, as candidate_ratings
// already rejected its candidates.
func TestShippedConfigCountsKeptRows(t *testing.T) {
	data := t.TempDir()
	if err := os.CopyFS(filepath.Join(data, "delidata"), os.DirFS("../../testdata/delidata")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(data, "habermas"), 0o755); err != nil {
		t.Fatal(err)
	}
	// DeliData: the last MESSAGE line of one group file, twice.
	group := filepath.Join(data, "delidata", "04bc6ccf-e281-4801-9394-bd48dfebebea")
	b, err := os.ReadFile(group)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	last := -1
	for i, l := range lines {
		if strings.Contains(l, "\tMESSAGE\t") {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("no MESSAGE line in the group file")
	}
	dup := strings.TrimSuffix(lines[last], "\n") + "\n"
	if err := os.WriteFile(group, []byte(strings.Join(lines, "")+"\n"+dup), 0o644); err != nil {
		t.Fatal(err)
	}
	// Habermas: the comparisons file with its row 5 again at the end.
	src := "../../testdata/habermas/"
	b, err = os.ReadFile(src + "hm_all_position_statement_ratings.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "habermas", "hm_all_position_statement_ratings.parquet"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tbl := readTable(t, src+"hm_all_candidate_comparisons.parquet")
	defer tbl.Release()
	cols := make([]arrow.Column, tbl.NumCols())
	for i := range cols {
		row := array.NewChunkedSlice(tbl.Column(i).Data(), 5, 6)
		defer row.Release()
		chunks := append(append([]arrow.Array{}, tbl.Column(i).Data().Chunks()...), row.Chunks()...)
		ch := arrow.NewChunked(tbl.Column(i).DataType(), chunks)
		cols[i] = *arrow.NewColumn(tbl.Schema().Field(i), ch)
		ch.Release()
	}
	twice := array.NewTable(tbl.Schema(), cols, tbl.NumRows()+1)
	defer twice.Release()
	f, err := os.Create(filepath.Join(data, "habermas", "hm_all_candidate_comparisons.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pqarrow.WriteTable(twice, f, 100, parquet.NewWriterProperties(parquet.WithAllocator(memory.NewGoAllocator())), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f.Close()

	out := t.TempDir()
	if code, _, stderr := agora(t, "run", "--config", "../../pipeline.yaml", "--data", data, "--out", out, "--only", "delidata,habermas", "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	counts := func(ds string) map[string][3]int64 {
		var m struct {
			Tables []struct {
				Name                              string
				RowsIn, RowsWritten, RowsRejected int64
			}
		}
		b, err := os.ReadFile(filepath.Join(out, ds, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		// The manifest's keys are snake_case.
		b = []byte(strings.NewReplacer(`"rows_in"`, `"RowsIn"`, `"rows_written"`, `"RowsWritten"`, `"rows_rejected"`, `"RowsRejected"`).Replace(string(b)))
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		c := map[string][3]int64{}
		for _, tb := range m.Tables {
			c[tb.Name] = [3]int64{tb.RowsIn, tb.RowsWritten, tb.RowsRejected}
		}
		return c
	}
	sum := func(p, col string) int64 {
		var n int64
		files, _ := filepath.Glob(p)
		for _, f := range files {
			tb := readTable(t, f)
			ch := tb.Column(int(tb.Schema().FieldIndices(col)[0])).Data()
			for _, a := range ch.Chunks() {
				for _, v := range a.(*array.Int64).Int64Values() {
					n += v
				}
			}
			tb.Release()
		}
		return n
	}
	d := counts("delidata")
	if d["messages"][2] != 1 {
		t.Errorf("messages rejected %d rows, want the repeated message", d["messages"][2])
	}
	if got := sum(filepath.Join(out, "delidata", "groups", "*.parquet"), "n_rows"); got != d["messages"][1] {
		t.Errorf("groups count %d rows, messages holds %d", got, d["messages"][1])
	}
	h := counts("habermas")
	if h["comparisons"] != [3]int64{301, 300, 1} {
		t.Errorf("comparisons in, written, rejected = %v, want the repeated row rejected", h["comparisons"])
	}
	if got := sum(filepath.Join(out, "habermas", "round_outcomes", "*", "*.parquet"), "n_rows"); got != 300 {
		t.Errorf("round_outcomes count %d rows, want 300", got)
	}
}

// TestShippedConfigRejectsForeignGroupRows: with the shipped
// pipeline.yaml, DeliData rows whose group_id is not their file's name
// are rejected from both tables, where a whole file relabelled with the
// next file's group merged the two groups in groups (one row for two
// chats), and one stray row in a group failed the dataset (its grouped
// derivations saw the group come back).
func TestShippedConfigRejectsForeignGroupRows(t *testing.T) {
	const (
		first  = "04bc6ccf-e281-4801-9394-bd48dfebebea"
		second = "0896b72d-549a-4768-83da-de8a6795f6b6"
	)
	tests := []struct {
		name     string
		file     string
		edit     func(lines []string) []string
		rejected int64 // rows of messages rejected
		groups   int   // rows of groups
	}{
		{"whole file relabelled as the next group", first, func(lines []string) []string {
			for i := 1; i < len(lines); i++ {
				lines[i] = strings.Replace(lines[i], first, second, 1)
			}
			return lines
		}, -1, 11},
		{"one row of another group", second, func(lines []string) []string {
			lines[4] = "ffffffff" + lines[4][8:]
			return lines
		}, 1, 12},
		{"one row without a group", second, func(lines []string) []string {
			lines[4] = strings.TrimPrefix(lines[4], second)
			return lines
		}, 1, 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if err := os.CopyFS(filepath.Join(data, "delidata"), os.DirFS("../../testdata/delidata")); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(data, "delidata", tc.file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			want := tc.rejected
			if want < 0 {
				want = int64(len(lines) - 1) // every row under the header
			}
			if err := os.WriteFile(p, []byte(strings.Join(tc.edit(lines), "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			if code, _, stderr := agora(t, "run", "--config", "../../pipeline.yaml", "--data", data, "--out", out, "--only", "delidata", "--quiet"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			rej := readTable(t, filepath.Join(out, "delidata", "_rejects", "messages", "part-00000.parquet"))
			defer rej.Release()
			if rej.NumRows() != want {
				t.Errorf("messages rejected %d rows, want %d", rej.NumRows(), want)
			}
			rules := rej.Column(int(rej.Schema().FieldIndices("rule")[0])).Data().Chunk(0).(*array.String)
			for i := 0; i < rules.Len(); i++ {
				if rules.Value(i) != "equal" {
					t.Errorf("reject %d: rule %q, want equal (group_id against the file name)", i, rules.Value(i))
				}
			}
			files, _ := filepath.Glob(filepath.Join(out, "delidata", "groups", "*.parquet"))
			var n int64
			for _, f := range files {
				g := readTable(t, f)
				n += g.NumRows()
				g.Release()
			}
			if n != int64(tc.groups) {
				t.Errorf("groups holds %d rows, want %d", n, tc.groups)
			}
		})
	}
}

// TestShippedConfigReadsGzippedGroupFiles: DeliData group files
// gzipped, named <group_id>.gz, are read (compression auto) and none of
// their rows is rejected for its file's name.
func TestShippedConfigReadsGzippedGroupFiles(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "delidata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../testdata/delidata/*-*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(b)
		w.Close()
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)+".gz"), z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	if code, stdout, stderr := agora(t, "run", "--config", "../../pipeline.yaml", "--data", data, "--out", out, "--only", "delidata", "--quiet"); code != 0 || strings.Contains(stdout, "rejected by") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "delidata", "_rejects")); err == nil {
		t.Error("rows of gzipped group files rejected")
	}
}

// TestEmptyListsAreNoted: a row whose exploded lists are empty leaves a
// note in the run's summary, where nothing showed it.
func TestEmptyListsAreNoted(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(`{"id":"1","xs":["a"]}`+"\n"+`{"id":"2","xs":[]}`+"\n"), 0o644)
	cfg := filepath.Join(dir, "pipeline.yaml")
	os.WriteFile(cfg, []byte(`version: 1
datasets:
  d:
    inputs:
      in: {path: in.jsonl, format: jsonl, columns: [{name: id, type: string}, {name: xs, type: "list<string>"}]}
    tables:
      t: {input: in, steps: [{explode: {columns: [xs], as: [x]}}]}
`), 0o644)
	code, stdout, stderr := agora(t, "run", "--config", cfg, "--data", dir, "--out", filepath.Join(dir, "out"), "--quiet")
	if code != 0 || !strings.Contains(stdout, "explode: 1 rows had empty lists (xs) and gave no rows") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}
