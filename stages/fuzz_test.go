package stages

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// FuzzJSONLines: any file content either fails with a file:line error or
// decodes; in reject mode every non-blank line becomes a row or a reject,
// never both, never neither, and nothing panics or leaks.
func FuzzJSONLines(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","n":1,"tags":["x"],"st":[{"text":"t","citations":["c"]}]}`,
		`{"id":"a\/b\u00e9","n":1.0}` + "\r\n\n" + `{"id": tru`,
		`[1,2]`, `{"n":"3"}`, "{\"id\":\"\xff\"}", `{"tags":"no"}`, `{"m":{"k":["v"]}}`, "", "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		p := filepath.Join(t.TempDir(), "f.jsonl")
		os.WriteFile(p, data, 0o644)
		s := &JSONLines{Path: p, Name: "f.jsonl", BatchRows: 3, RejectBadLines: true, Mem: mem, Columns: []JSONColumn{
			{Name: "id", Type: arrow.BinaryTypes.String},
			{Name: "n", Type: arrow.PrimitiveTypes.Int64},
			{Name: "tags", Type: mustType(t, "list<string>")},
			{Name: "st", Type: mustType(t, "list<struct<text:string,citations:list<string>>>")},
			{Name: "m", Type: mustType(t, "map<string,list<string>>")},
		}}
		rows, rejects, err := decodeAll(t, s)
		if err != nil {
			if !strings.Contains(err.Error(), "f.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(bytes.TrimRight(l, "\r"))) > 0 {
				lines++
			}
		}
		if len(rows)+len(rejects) != lines {
			t.Fatalf("%d rows + %d rejects for %d lines", len(rows), len(rejects), lines)
		}
	})
}

// FuzzTSVFolder: any file either fails on its header with the file named,
// or every non-blank data line becomes a row or a reject.
func FuzzTSVFolder(f *testing.F) {
	for _, s := range []string{
		"id\ttext\tscore\n1\t'isn''t'\t0.5\n2\tsays \"hi\"\t\n",
		"id\ttext\tscore\r\n1\ttoo few\r\n",
		"text\tid\tscore\n\xff\t1\tx\n",
		"no header here",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "g"), data, 0o644)
		s := &TSVFolder{Path: dir, Name: "chats", BatchRows: 2, Mem: mem, Columns: []TSVColumn{
			{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}, {Name: "score", Type: arrow.PrimitiveTypes.Float64}}}
		rows, rejects, err := decodeTSV(t, s)
		if err != nil {
			if !strings.Contains(err.Error(), "chats") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		lines := 0
		for i, l := range bytes.Split(data, []byte("\n")) {
			if i > 0 && len(bytes.TrimRight(l, "\r")) > 0 {
				lines++
			}
		}
		if len(rows)+len(rejects) != lines {
			t.Fatalf("%d rows + %d rejects for %d lines", len(rows), len(rejects), lines)
		}
	})
}

// FuzzParseJSON: the embedded-JSON derivation keeps a row or rejects it,
// never panics, and what it keeps matches the declared map type.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"Cat": ["2", "U"], "Bat": []}`, `{"N": ["N", "/", "A"]}`, `{bad}`, `[]`, `{"a": [1]}`, `null`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		schema := arrow.NewSchema([]arrow.Field{{Name: "j", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64}}, nil)
		bld := array.NewRecordBuilder(mem, schema)
		bld.Field(0).(*array.StringBuilder).Append(s)
		bld.Field(1).(*array.Int64Builder).Append(1)
		in := bld.NewRecordBatch()
		bld.Release()
		defer in.Release()
		d, err := NewDerive(mem, schema, []config.Derivation{{Name: "j", Fn: "parse_json", Args: []string{"j"}, Type: "map<string,list<string>>", Replace: true}})
		if err != nil {
			t.Fatal(err)
		}
		rej := &pipeline.Rejects{}
		out, err := d.Process(t.Context(), in, rej)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Release()
		if out.NumRows()+int64(rej.Len()) != 1 {
			t.Fatalf("%d rows + %d rejects", out.NumRows(), rej.Len())
		}
		if out.NumRows() == 1 && out.Column(0).DataType().ID() != arrow.MAP {
			t.Fatalf("kept a %s", out.Column(0).DataType())
		}
	})
}

type discardSink struct{}

func (discardSink) Write(context.Context, arrow.RecordBatch) error  { return nil }
func (discardSink) Reject(context.Context, []pipeline.Reject) error { return nil }

// FuzzParquetFile: any bytes given as a Parquet input make a run that
// either decodes or fails with an error naming the file; never a crash, a
// hang or a leak (the runner turns a library panic into an error).
func FuzzParquetFile(f *testing.F) {
	good, err := os.ReadFile(filepath.Join("..", "testdata", "habermas", "hm_all_position_statement_ratings.parquet"))
	if err == nil {
		f.Add(good)
		f.Add(good[:len(good)/2])
		f.Add(append([]byte(nil), good[len(good)-200:]...))
	}
	f.Add([]byte("PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		p := filepath.Join(t.TempDir(), "f.parquet")
		os.WriteFile(p, data, 0o644)
		s := &ParquetFile{Path: p, Name: "f.parquet", BatchRows: 64, Mem: mem, Columns: []ParquetColumn{
			{Name: "metadata.id", Type: arrow.BinaryTypes.String},
			{Name: "ratings.agreement", Type: mustType(t, "list<string>")},
			{Name: "metadata.created", Type: mustType(t, "timestamp")},
		}}
		_, err := pipeline.Run(t.Context(), pipeline.Table{Name: "fuzz", Source: s, Sink: discardSink{}, Workers: 2})
		if err != nil && !strings.Contains(err.Error(), "f.parquet") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
