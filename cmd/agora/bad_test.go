package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// badData copies testdata/bad/files and adds the generated cases: a gzip
// bomb, a 30 MB line and three Parquet files.
func badData(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	src := "../../testdata/bad/files"
	filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			os.MkdirAll(filepath.Join(data, rel), 0o755)
			return nil
		}
		b, _ := os.ReadFile(p)
		return os.WriteFile(filepath.Join(data, rel), b, 0o644)
	})
	// A gzip bomb: one compressed MiB of spaces, repeated as 1,024 gzip
	// members: 1 MiB on disk, 1 GiB inflated, one line that never ends.
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte(" "), 1<<20))
	zw.Close()
	os.WriteFile(filepath.Join(data, "bomb.jsonl.gz"), bytes.Repeat(member.Bytes(), 1024), 0o644)
	// One line of 30 MB.
	line := `{"id":"long","p":0.5,"tags":["` + strings.Repeat("a", 30<<20) + `"]}` + "\n"
	os.WriteFile(filepath.Join(data, "long_line.jsonl"), []byte(line), 0o644)
	writeParquet(t, filepath.Join(data, "missing_column.parquet"), `{"a.id":"1","a.xs":["x"]}`, "a.id:string", "a.xs:list<string>")
	writeParquet(t, filepath.Join(data, "wrong_type.parquet"), `{"a.id":"1","a.xs":["x"],"a.ys":["not a number"]}`, "a.id:string", "a.xs:list<string>", "a.ys:list<string>")
	writeParquet(t, filepath.Join(data, "unequal_lists.parquet"), `{"a.id":"1","a.xs":["x","y"],"a.ys":[1,2]},{"a.id":"2","a.xs":["x","y"],"a.ys":[1,2,3]}`, "a.id:string", "a.xs:list<string>", "a.ys:list<int64>")
	writeInvalidUTF8Parquet(t, filepath.Join(data, "invalid_utf8.parquet"))
	return data
}

// writeInvalidUTF8Parquet writes the columns of the Parquet cases, whose
// second row holds a list<string> element that is not UTF-8, as a writer
// that does not check (pyarrow's from_buffers, a C program) can.
func writeInvalidUTF8Parquet(t *testing.T, path string) {
	t.Helper()
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a.id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "a.xs", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "a.ys", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	ids := rb.Field(0).(*array.StringBuilder)
	xs := rb.Field(1).(*array.ListBuilder)
	ys := rb.Field(2).(*array.ListBuilder)
	for i, x := range []string{"ok", "caf\xe9"} {
		ids.Append(strconv.Itoa(i + 1))
		xs.Append(true)
		xs.ValueBuilder().(*array.StringBuilder).BinaryBuilder.Append([]byte(x))
		ys.Append(true)
		ys.ValueBuilder().(*array.Int64Builder).Append(int64(i))
	}
	b := rb.NewRecordBatch()
	defer b.Release()
	writeBatchParquet(t, path, b)
}

// writeBatchParquet writes b to a Parquet file at path with pqarrow's
// defaults.
func writeBatchParquet(t *testing.T, path string, b arrow.RecordBatch) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(b.Schema(), f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeParquet(t *testing.T, path, rows string, cols ...string) {
	t.Helper()
	var fields []arrow.Field
	for _, c := range cols {
		name, typ, _ := strings.Cut(c, ":")
		dt := arrow.DataType(arrow.BinaryTypes.String)
		switch typ {
		case "list<string>":
			dt = arrow.ListOf(arrow.BinaryTypes.String)
		case "list<int64>":
			dt = arrow.ListOf(arrow.PrimitiveTypes.Int64)
		}
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: true})
	}
	schema := arrow.NewSchema(fields, nil)
	b, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader("["+rows+"]"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	f, _ := os.Create(path)
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	w.Close()
}

// rejectsOf reads a dataset's _rejects as "line:rule" strings.
func rejectsOf(t *testing.T, out, ds string) []string {
	t.Helper()
	p := filepath.Join(out, ds, "_rejects", "t", "part-00000.parquet")
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	tbl := readTable(t, p)
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1024)
	defer tr.Release()
	var got []string
	for tr.Next() {
		b := tr.RecordBatch()
		col := func(name string) arrow.Array { return b.Column(b.Schema().FieldIndices(name)[0]) }
		for i := 0; i < int(b.NumRows()); i++ {
			if tb := col("table").(*array.String).Value(i); tb != "t" {
				t.Errorf("a reject of table t names table %q", tb)
			}
			line := col("source_line").(*array.Int64).Value(i)
			got = append(got, itoa64(line)+":"+col("rule").(*array.String).Value(i))
		}
	}
	return got
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// TestBadInputCorpus runs every case of testdata/bad (the README's "Bad
// input" table) through agora run and checks what happens: a clear error
// naming the file and line, or rows rejected with their rule; never a
// panic, never a silent drop.
func TestBadInputCorpus(t *testing.T) {
	data := badData(t)
	cfg := "../../testdata/bad/pipeline.yaml"
	tests := []struct {
		dataset          string
		code             int
		stderr           []string
		written, rejects int64
		rules            string // "line:rule ..." of the rejects
	}{
		{dataset: "truncated_gzip", code: 1, stderr: []string{"truncated.jsonl.gz:", "file ends early"}},
		{dataset: "malformed_json", code: 1, stderr: []string{"malformed.jsonl:3: invalid JSON"}},
		{dataset: "malformed_json_rejected", written: 3, rejects: 1, rules: "3:decode"},
		{dataset: "invalid_utf8", written: 2, rejects: 1, rules: "2:type"},
		{dataset: "wrong_types", written: 2, rejects: 5, rules: "2:type 3:type 6:type 7:type 4:range"},
		{dataset: "duplicate_json_keys", written: 2, rejects: 1, rules: "2:duplicate_key"},
		{dataset: "nested_duplicate_keys", written: 2, rejects: 2, rules: "2:duplicate_key 3:duplicate_key"},
		{dataset: "bad_escape", code: 1, stderr: []string{`bad_escape.jsonl:2: invalid JSON: invalid escape \q at byte`}},
		{dataset: "lone_surrogate", written: 2, rejects: 1, rules: "2:type"},
		{dataset: "byte_order_mark", written: 2},
		{dataset: "missing_and_unknown_keys", written: 3},
		{dataset: "unknown_keys_rejected", written: 2, rejects: 1, rules: "2:unknown_key"},
		{dataset: "empty_file"},
		{dataset: "zero_byte_gz"},
		{dataset: "duplicate_ids", written: 3, rejects: 1, rules: "3:unique"},
		{dataset: "gzip_bomb", code: 1, stderr: []string{"bomb.jsonl.gz", "input too large", "max_bytes"}},
		{dataset: "long_line_over_limit", code: 1, stderr: []string{"long_line.jsonl:1: line too long"}},
		{dataset: "long_line", written: 1},
		{dataset: "long_partition_value", written: 2, rejects: 1, rules: "2:partition"},
		{dataset: "tsv_bad_lines", written: 2, rejects: 2, rules: "3:fields 4:parse_json"},
		{dataset: "tsv_crlf", written: 2},
		{dataset: "tsv_byte_order_mark", written: 2},
		{dataset: "tsv_duplicate_header", code: 1, stderr: []string{"tsv_dup_header/g1:1: bad header: column id comes twice"}},
		{dataset: "parquet_missing_column", code: 1, stderr: []string{"missing_column.parquet", "missing columns", "a.ys"}},
		{dataset: "parquet_wrong_type", code: 1, stderr: []string{"wrong_type.parquet", "column a.ys"}},
		{dataset: "parquet_unequal_lists", written: 2, rejects: 1, rules: "2:explode"},
		{dataset: "parquet_invalid_utf8", code: 1, stderr: []string{`invalid_utf8.parquet:2: column a.xs: element 0: "caf\xe9" is not valid UTF-8`}},
		{dataset: "grouped_key_comes_back", code: 1, stderr: []string{"split_groups/g3:3: grouped: the group of id=a comes again after it ended"}},
		{dataset: "grouped_key_comes_back_one_file", code: 1, stderr: []string{"aggregate: interleaved_groups.jsonl:3: grouped: the group of id=a comes again after it ended"}},
		{dataset: "grouped_lag_key_comes_back_one_file", code: 1, stderr: []string{"derive: previous_score: interleaved_groups.jsonl:3: grouped: the group of id=a comes again after it ended"}},
		{dataset: "grouped_aggregate_after_lead_one_file", code: 1, stderr: []string{"aggregate: interleaved_groups.jsonl:3: grouped: the group of id=a comes again after it ended"}},
		{dataset: "grouped_lag_key_comes_back", code: 1, stderr: []string{"derive: previous_score: split_groups/g3:3: grouped: the group of id=a comes again after it ended"}},
	}
	for _, tt := range tests {
		t.Run(tt.dataset, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := agora(t, "run", "--config", cfg, "--data", data, "--out", out, "--only", tt.dataset)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "internal error") {
				t.Errorf("a panic escaped:\n%s", stderr)
			}
			if tt.code != 0 {
				if _, err := os.Stat(filepath.Join(out, tt.dataset)); err == nil {
					t.Error("a failed run published a release")
				}
				return
			}
			m, err := readManifest(out, tt.dataset)
			if err != nil {
				t.Fatal(err)
			}
			tb := m.Tables[0]
			if tb.Written != tt.written || tb.Rejected != tt.rejects || tb.RowsIn != tb.Written+tb.Rejected {
				t.Errorf("rows in %d, written %d (want %d), rejected %d (want %d)", tb.RowsIn, tb.Written, tt.written, tb.Rejected, tt.rejects)
			}
			if got := strings.Join(rejectsOf(t, out, tt.dataset), " "); got != tt.rules {
				t.Errorf("rejects %q, want %q", got, tt.rules)
			}
		})
	}
}
