package stages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/pipeline"
)

// writePandasLike writes a Parquet file shaped the way pandas/pyarrow
// write the Habermas release: dotted flat names, list elements named
// "element", ns timestamps, ISO strings, integers stored as floats.
func writePandasLike(t *testing.T, rowGroup int64) string {
	t.Helper()
	mem := memory.NewGoAllocator()
	md := arrow.NewMetadata([]string{"pandas"}, []string{`{"index_columns": []}`})
	elem := arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.BinaryTypes.String, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "candidates.metadata.id", Type: elem, Nullable: true},
		{Name: "metadata.created", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "metadata.updated", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "question.topic", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "nested", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Float64, Nullable: true}), Nullable: true}), Nullable: true},
		{Name: "extra", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, &md)
	b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[
		{"candidates.metadata.id": ["a","b"], "metadata.created": "2024-01-02T03:04:05.123456Z", "metadata.updated": "2024-01-02T03:04:05.5+00:00", "question.topic": 7, "nested": [[1.5],[2]], "extra": 1},
		{"candidates.metadata.id": [], "metadata.created": null, "metadata.updated": null, "question.topic": null, "nested": null, "extra": 2},
		{"candidates.metadata.id": ["c"], "metadata.created": "2024-01-02T03:04:05Z", "metadata.updated": "2024-01-02T03:04:05Z", "question.topic": 104, "nested": [], "extra": 3}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	return writeParquetFile(t, "f.parquet", b, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroup)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
}

// writeParquetFile writes b to a new file in a temporary folder and
// returns its path.
func writeParquetFile(t *testing.T, name string, b arrow.RecordBatch, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(b.Schema(), f, props, arrowProps)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParquetFileConformsPandasOutput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := writePandasLike(t, 2) // two row groups
	s := &ParquetFile{Path: p, Name: "f.parquet", BatchRows: 1, Mem: mem, Columns: []ParquetColumn{
		{Name: "candidates.metadata.id", Type: mustType(t, "list<string>")},
		{Name: "metadata.created", Type: mustType(t, "timestamp")},
		{Name: "metadata.updated", Type: mustType(t, "timestamp")},
		{Name: "question.topic", Type: mustType(t, "int64")},
		{Name: "nested", Type: mustType(t, "list<list<float64>>")},
	}}
	rows, err := parquetRows(t, s, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`1 {"candidates.metadata.id":["a","b"],"metadata.created":"2024-01-02T03:04:05.123456Z","metadata.updated":"2024-01-02T03:04:05.5Z","nested":[[1.5],[2]],"question.topic":7}`,
		`2 {"candidates.metadata.id":[],"metadata.created":null,"metadata.updated":null,"nested":null,"question.topic":null}`,
		`3 {"candidates.metadata.id":["c"],"metadata.created":"2024-01-02T03:04:05Z","metadata.updated":"2024-01-02T03:04:05Z","nested":[],"question.topic":104}`,
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// parquetRows reads s whole, decoding each batch, and returns its rows as
// JSON, each after its line number when withLine.
func parquetRows(t *testing.T, s *ParquetFile, withLine bool) ([]string, error) {
	t.Helper()
	var rows []string
	err := s.Chunks(t.Context(), func(c pipeline.Chunk) error {
		b, err := s.Decode(t.Context(), c, &pipeline.Rejects{})
		c.Batch.Release()
		if err != nil {
			return err
		}
		defer b.Release()
		for i := 0; i < int(b.NumRows()); i++ {
			row := pipeline.RowJSON(b, i)
			if withLine {
				row = itoa(pipeline.LineOf(b, i)) + " " + row
			}
			rows = append(rows, row)
		}
		return nil
	})
	return rows, err
}

func TestParquetFileErrors(t *testing.T) {
	p := writePandasLike(t, 10)
	s := &ParquetFile{Path: p, Name: "f.parquet", Columns: []ParquetColumn{
		{Name: "candidates.metadata.id", Type: mustType(t, "list<string>")},
		{Name: "nope.one", Type: mustType(t, "string")},
		{Name: "nope.two", Type: mustType(t, "string")},
	}}
	err := s.Chunks(t.Context(), func(c pipeline.Chunk) error { c.Batch.Release(); return nil })
	if !errors.Is(err, ErrMissingColumns) || !strings.Contains(err.Error(), "nope.one, nope.two") || !strings.Contains(err.Error(), "f.parquet") {
		t.Errorf("err = %v", err)
	}
	s = &ParquetFile{Path: p, Name: "f.parquet", Columns: []ParquetColumn{{Name: "candidates.metadata.id", Type: mustType(t, "int64")}}}
	err = s.Chunks(t.Context(), func(c pipeline.Chunk) error {
		defer c.Batch.Release()
		_, err := s.Decode(t.Context(), c, &pipeline.Rejects{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "column candidates.metadata.id") {
		t.Errorf("wrong column type: err = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	os.WriteFile(bad, []byte("PAR1 not really"), 0o644)
	s = &ParquetFile{Path: bad, Name: "bad.parquet", Columns: []ParquetColumn{{Name: "x", Type: mustType(t, "string")}}}
	if err := s.Chunks(t.Context(), func(pipeline.Chunk) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated file: err = %v", err)
	}
	carry := &ParquetFile{Path: p, Name: "f", CarryExtra: true, Columns: []ParquetColumn{{Name: "question.topic", Type: mustType(t, "int64")}}}
	before := openFiles(t)
	sc, err := carry.Schema()
	if err != nil || !sc.HasField("extra") || !sc.HasField("nested") {
		t.Errorf("carry: %v %v", sc, err)
	}
	if after := openFiles(t); after > before {
		t.Errorf("Schema left the file open: %d open files before, %d after", before, after)
	}
}

// TestParquetDuplicateColumn: a file with two columns of a declared
// name stops the run (it took the first without a word).
func TestParquetDuplicateColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "id", Type: arrow.BinaryTypes.String}}, nil)
	sb := array.NewStringBuilder(mem)
	sb.Append("a")
	col := sb.NewArray()
	sb.Release()
	b := array.NewRecordBatch(sc, []arrow.Array{col, col}, 1)
	col.Release()
	p := writeParquetFile(t, "d.parquet", b, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	b.Release()
	s := &ParquetFile{Path: p, Name: "d.parquet", Mem: mem, Columns: []ParquetColumn{{Name: "id", Type: mustType(t, "string")}}}
	err := s.Chunks(t.Context(), func(c pipeline.Chunk) error { c.Batch.Release(); return nil })
	if err == nil || !strings.Contains(err.Error(), "d.parquet: the file has 2 columns named id") {
		t.Errorf("err = %v", err)
	}
}

// TestParquetCarryMakesTypesSafe: carried columns (extra_columns: carry)
// come out in types every reader takes, as declared ones do: large texts
// and lists plain, dictionaries their values, unsigned and narrow
// integers signed, timestamps microseconds UTC, the null type a string,
// field metadata gone; a type no reader is promised (a time of day,
// which Spark refuses) is left out with a note. They were carried as the file had them, so Spark
// could not read a uint64 and DuckDB got a naive timestamp.
func TestParquetCarryMakesTypesSafe(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	fid := arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"-1"})
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "big", Type: arrow.BinaryTypes.LargeString, Nullable: true, Metadata: fid},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "naive", Type: &arrow.TimestampType{Unit: arrow.Second}, Nullable: true},
		{Name: "ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/London"}, Nullable: true},
		{Name: "ll", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Uint16), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Uint32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.LargeString, Nullable: true}), Nullable: true},
		{Name: "nothing", Type: arrow.Null, Nullable: true},
		{Name: "tod", Type: arrow.FixedWidthTypes.Time32ms, Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(`[
		{"id": "a", "big": "x", "u8": 255, "u64": 9007199254740993, "i16": -3, "cat": "red", "naive": "2024-01-02T03:04:05", "ns": 1704164645123456789, "ll": [1, 65535], "st": {"a": 4294967295, "b": "y"}, "nothing": null, "tod": 5},
		{"id": "b", "big": null, "u8": null, "u64": null, "i16": null, "cat": null, "naive": null, "ns": null, "ll": null, "st": null, "nothing": null, "tod": null}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	p := writeParquetFile(t, "carry.parquet", b, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	s := &ParquetFile{Path: p, Name: "carry.parquet", CarryExtra: true, Mem: mem, Columns: []ParquetColumn{{Name: "id", Type: mustType(t, "string")}}}
	schema, err := s.Schema()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"big": "string", "u8": "int32", "u64": "int64", "i16": "int32", "cat": "string",
		"naive": "timestamp", "ns": "timestamp", "ll": "list<int32>", "st": "struct<a:int64,b:string>", "nothing": "string",
	}
	for name, typ := range want {
		i := schema.FieldIndices(name)
		if len(i) != 1 {
			t.Errorf("no carried column %s in %s", name, schema)
			continue
		}
		f := schema.Field(i[0])
		if wt := mustType(t, typ); !sameLayout(f.Type, wt) {
			t.Errorf("column %s carried as %s, want %s", name, f.Type, wt)
		}
		if f.HasMetadata() {
			t.Errorf("column %s keeps metadata %v", name, f.Metadata)
		}
	}
	if len(schema.FieldIndices("tod")) != 0 {
		t.Errorf("a time of day was carried: %s", schema)
	}
	rows, err := parquetRows(t, s, false)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []string{
		`{"big":"x","cat":"red","i16":-3,"id":"a","ll":[1,65535],"naive":"2024-01-02T03:04:05Z","nothing":null,"ns":"2024-01-02T03:04:05.123456Z","st":{"a":4294967295,"b":"y"},"u64":9007199254740993,"u8":255}`,
		`{"big":null,"cat":null,"i16":null,"id":"b","ll":null,"naive":null,"nothing":null,"ns":null,"st":null,"u64":null,"u8":null}`,
	}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}
	notes := strings.Join(s.Notes(), "\n")
	if !strings.Contains(notes, "carry.parquet: tod (time32[ms]) not carried") {
		t.Errorf("notes %q lack the time of day left out", notes)
	}
}

// TestParquetCarryMapsAndNestedTimestamps: carried maps whose key or
// value type changes (map<uint8,string>, map<string,large_string>, a map
// of nanosecond timestamps) and a struct holding a nanosecond timestamp
// are converted field by field (arrow-go cannot cast maps, and its struct
// cast refused the digits below the microsecond: both stopped the run);
// every timestamp cut, nested, declared or carried, is counted in the
// notes.
func TestParquetCarryMapsAndNestedTimestamps(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "lts", Type: arrow.ListOf(ns), Nullable: true},
		{Name: "umap", Type: arrow.MapOf(arrow.PrimitiveTypes.Uint8, arrow.BinaryTypes.String), Nullable: true},
		{Name: "lmap", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString), Nullable: true},
		{Name: "tmap", Type: arrow.MapOf(arrow.BinaryTypes.String, ns), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "t", Type: ns, Nullable: true}), Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(`[
		{"id": "a", "lts": [1704164645123456789, 1000], "umap": [{"key": 1, "value": "x"}, {"key": 255, "value": null}], "lmap": [{"key": "k", "value": "v"}], "tmap": [{"key": "k", "value": 1704164645123456789}], "st": {"t": 1704164645123456789}},
		{"id": "b", "lts": null, "umap": null, "lmap": [], "tmap": null, "st": null}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	p := writeParquetFile(t, "maps.parquet", b, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	s := &ParquetFile{Path: p, Name: "maps.parquet", CarryExtra: true, Mem: mem, Columns: []ParquetColumn{
		{Name: "id", Type: mustType(t, "string")},
		{Name: "lts", Type: mustType(t, "list<timestamp>")},
	}}
	rows, err := parquetRows(t, s, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"id":"a","lmap":[{"key":"k","value":"v"}],"lts":["2024-01-02T03:04:05.123456Z","1970-01-01T00:00:00.000001Z"],"st":{"t":"2024-01-02T03:04:05.123456Z"},"tmap":[{"key":"k","value":"2024-01-02T03:04:05.123456Z"}],"umap":[{"key":1,"value":"x"},{"key":255,"value":null}]}`,
		`{"id":"b","lmap":[],"lts":null,"st":null,"tmap":null,"umap":null}`,
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	schema, _ := s.Schema()
	for name, typ := range map[string]string{"umap": "map<int32,string>", "lmap": "map<string,string>", "tmap": "map<string,timestamp>", "st": "struct<t:timestamp>"} {
		if f, ok := schema.FieldsByName(name); !ok || !sameLayout(f[0].Type, mustType(t, typ)) {
			t.Errorf("column %s carried as %v, want %s", name, f, typ)
		}
	}
	notes := strings.Join(s.Notes(), "\n")
	for _, w := range []string{"column lts: 1 timestamps had digits", "column tmap: 1 timestamps", "column st: 1 timestamps"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q lack %q", notes, w)
		}
	}
}

// TestParquetCarryLeavesReservedNames: with extra_columns: carry, a
// file column named like agora's own (_line) is left out with a note,
// and the rows' lines are still their rows in the file.
func TestParquetCarryLeavesReservedNames(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "_line", Type: arrow.PrimitiveTypes.Int64}, {Name: "other", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(`[{"id": "a", "_line": 999, "other": 1}, {"id": "b", "_line": 998, "other": 2}]`))
	if err != nil {
		t.Fatal(err)
	}
	p := writeParquetFile(t, "c.parquet", b, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	b.Release()
	s := &ParquetFile{Path: p, Name: "c.parquet", CarryExtra: true, Mem: mem, Columns: []ParquetColumn{{Name: "id", Type: mustType(t, "string")}}}
	var got []string
	err = s.Chunks(t.Context(), func(c pipeline.Chunk) error {
		defer c.Batch.Release()
		out, err := s.Decode(t.Context(), c, &pipeline.Rejects{})
		if err != nil {
			return err
		}
		defer out.Release()
		for i := range int(out.NumRows()) {
			got = append(got, fmtInt(pipeline.LineOf(out, i))+" "+pipeline.RowJSON(out, i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `1 {"id":"a","other":1} 2 {"id":"b","other":2}`; strings.Join(got, " ") != want {
		t.Errorf("rows %q, want %q", strings.Join(got, " "), want)
	}
	if notes := strings.Join(s.Notes(), "; "); !strings.Contains(notes, "c.parquet: _line not carried") {
		t.Errorf("notes %q", notes)
	}
}

// openFiles counts the process's open file descriptors (Linux only).
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	return len(fds)
}

// TestParquetBatchesFollowDecodedSize reads a file whose footer
// understates its rows' Arrow size (a dictionary-encoded text stored once
// per distinct value, decoded once per row) and checks the batches come
// near BatchBytes of Arrow data (set to 768 KiB, not the default), not the
// footer's estimate, with every row in order and nothing left allocated.
func TestParquetBatchesFollowDecodedSize(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const rows, width = 20000, 2000 // 40 MB of text decoded, 40 KB stored
	b := idTextBatch(rows, func(i int) string { return strings.Repeat(string(rune('a'+i%20)), width) })
	defer b.Release()
	p := writeParquetFile(t, "dict.parquet", b, parquet.NewWriterProperties(parquet.WithDictionaryDefault(true), parquet.WithMaxRowGroupLength(rows/2)), pqarrow.DefaultWriterProps())

	const batchBytes = 768 << 10
	s := &ParquetFile{Path: p, Name: "dict.parquet", BatchRows: rows, BatchBytes: batchBytes, Mem: mem, Columns: idTextColumns()}
	var sizes []int64
	next := readInOrder(t, s, func(c pipeline.Chunk, _ int64) error {
		sizes = append(sizes, arrowx.BatchBytes(c.Batch))
		return nil
	})
	if next != rows {
		t.Fatalf("read %d rows, want %d", next, rows)
	}
	var total int64
	for _, n := range sizes {
		total += n
	}
	if int64(len(sizes)) < total/(batchBytes*3/2) {
		t.Errorf("%d bytes of Arrow data came in %d batches, want batches of about %d", total, len(sizes), batchBytes)
	}
	for i, n := range sizes[:len(sizes)-1] { // the last batch may be short
		if n < batchBytes/2 || n > batchBytes*3/2 {
			t.Errorf("batch %d of %d holds %d bytes of Arrow data, want about %d", i, len(sizes), n, batchBytes)
		}
	}
}

// TestParquetFileWithoutRows reads files with no row group and with an
// empty first row group: no batch, no error, nothing left allocated (the
// batch-size probe has no rows to measure and leaves the footer's guess).
func TestParquetFileWithoutRows(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, tc := range []struct {
		name    string
		batches []string // JSON of each batch written, one row group each
		rows    int64
	}{
		{name: "no row group", batches: nil, rows: 0},
		{name: "empty first row group", batches: []string{`[]`, `[{"id": 7}, {"id": 8}]`}, rows: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			p := filepath.Join(t.TempDir(), "f.parquet")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
			if err != nil {
				t.Fatal(err)
			}
			for _, js := range tc.batches {
				b, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(js))
				if err != nil {
					t.Fatal(err)
				}
				w.NewBufferedRowGroup()
				err = w.WriteBuffered(b)
				b.Release()
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if r, err := file.OpenParquetFile(p, false); err != nil {
				t.Fatal(err)
			} else if r.NumRowGroups() != len(tc.batches) {
				r.Close()
				t.Fatalf("the file has %d row groups, want %d", r.NumRowGroups(), len(tc.batches))
			} else {
				r.Close()
			}
			s := &ParquetFile{Path: p, Name: "f.parquet", BatchRows: 1024, Mem: mem, Columns: []ParquetColumn{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}}
			var rows int64
			err = s.Chunks(t.Context(), func(c pipeline.Chunk) error {
				rows += c.Batch.NumRows()
				c.Batch.Release()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if rows != tc.rows {
				t.Errorf("read %d rows, want %d", rows, tc.rows)
			}
		})
	}
}

// TestParquetBatchesBoundedWhenFirstRowsAreShort reads a file whose first
// rows are short and the rest long (plain-encoded, so the footer's sizes
// are right on average): the probe of the first rows alone
// would make batches of thousands of long rows; the footer's average
// bounds them.
func TestParquetBatchesBoundedWhenFirstRowsAreShort(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const rows = 3000
	schema := arrow.NewSchema([]arrow.Field{{Name: "text", Type: arrow.BinaryTypes.String}}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	long := strings.Repeat("x", 20000)
	for i := 0; i < rows; i++ {
		if i < 2*probeRows {
			rb.Field(0).(*array.StringBuilder).Append("x")
		} else {
			rb.Field(0).(*array.StringBuilder).Append(fmt.Sprint(i) + long)
		}
	}
	b := rb.NewRecordBatch()
	defer b.Release()
	p := writeParquetFile(t, "short-first.parquet", b, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false)), pqarrow.DefaultWriterProps())
	s := &ParquetFile{Path: p, Name: "short-first.parquet", BatchRows: rows, Mem: mem, Columns: []ParquetColumn{{Name: "text", Type: arrow.BinaryTypes.String}}}
	var n int64
	err := s.Chunks(t.Context(), func(c pipeline.Chunk) error {
		defer c.Batch.Release()
		n += c.Batch.NumRows()
		if size := arrowx.BatchBytes(c.Batch); size > 2*config.DefaultBatchBytes {
			return fmt.Errorf("a batch of %d rows holds %d bytes of Arrow data, want about %d at most", c.Batch.NumRows(), size, config.DefaultBatchBytes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != rows {
		t.Fatalf("read %d rows, want %d", n, rows)
	}
}

// TestParquetWideRowsBatchFloor reads a file whose rows (64 KiB) are each
// larger than BatchBytes/minBatchRows: batches hold minBatchRows rows
// (not fewer, for the per-batch work) and no more than about twice
// BatchBytes (for the memory of the batches in flight), every row in
// order.
func TestParquetWideRowsBatchFloor(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const rows, width, batchBytes = 5*minBatchRows + 3, 64 << 10, 1 << 20 // 16 rows would make batchBytes
	b := idTextBatch(rows, func(i int) string { return strings.Repeat(strconv.Itoa(i%10), width) })
	defer b.Release()
	p := writeParquetFile(t, "wide.parquet", b, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false)), pqarrow.DefaultWriterProps())

	s := &ParquetFile{Path: p, Name: "wide.parquet", BatchRows: 1024, BatchBytes: batchBytes, Mem: mem, Columns: idTextColumns()}
	var counts []int
	next := readInOrder(t, s, func(c pipeline.Chunk, _ int64) error {
		counts = append(counts, int(c.Batch.NumRows()))
		if n := arrowx.BatchBytes(c.Batch); n > batchBytes*9/4 {
			t.Errorf("a batch of %d rows holds %d bytes, want at most about twice %d", c.Batch.NumRows(), n, batchBytes)
		}
		return nil
	})
	if next != rows {
		t.Fatalf("read %d rows, want %d", next, rows)
	}
	want := []int{minBatchRows, minBatchRows, minBatchRows, minBatchRows, minBatchRows, 3}
	if !slices.Equal(counts, want) {
		t.Errorf("batches of %v rows, want %v", counts, want)
	}
}

// TestParquetFooterParts reads files whose footer is larger than
// footerPartBytes (made small here), read in parts: every row once, in
// order, numbered from 1 across the parts, with its list column intact,
// and nothing left allocated. The cases make parts of one row group, of
// several with a short last one, and a footer just under the bound (one
// part).
func TestParquetFooterParts(t *testing.T) {
	saved := footerPartBytes
	defer func() { footerPartBytes = saved }()
	for _, tc := range []struct {
		name      string
		rowGroups int
		partBytes func(footer int) int
		per       int // row groups a part
	}{
		{"a row group a part", 20, func(f int) int { return f / 40 }, 1},
		{"a short last part", 47, func(f int) int { return f / 10 }, 4}, // 47 row groups in parts of 4.7 footer bytes' worth
		{"one part", 20, func(f int) int { return f }, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			const perGroup = 50
			rows := tc.rowGroups * perGroup
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "id", Type: arrow.PrimitiveTypes.Int64},
				{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
			}, nil)
			rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			defer rb.Release()
			for i := 0; i < rows; i++ {
				rb.Field(0).(*array.Int64Builder).Append(int64(i))
				lb := rb.Field(1).(*array.ListBuilder)
				lb.Append(true)
				for j := 0; j < i%3; j++ {
					lb.ValueBuilder().(*array.StringBuilder).Append(strconv.Itoa(i))
				}
			}
			b := rb.NewRecordBatch()
			defer b.Release()
			p := writeParquetFile(t, "many.parquet", b, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(perGroup)), pqarrow.DefaultWriterProps())
			r, err := file.OpenParquetFile(p, false)
			if err != nil {
				t.Fatal(err)
			}
			footer := r.MetaData().Size()
			r.Close()
			footerPartBytes = tc.partBytes(footer)

			s := &ParquetFile{Path: p, Name: "many.parquet", BatchRows: 64, Mem: mem, Columns: []ParquetColumn{
				{Name: "id", Type: arrow.PrimitiveTypes.Int64},
				{Name: "tags", Type: mustType(t, "list<string>")},
			}}
			var batches int
			next := readInOrder(t, s, func(c pipeline.Chunk, first int64) error {
				batches++
				if c.Line != first+1 {
					return fmt.Errorf("a batch starting at row %d says line %d", first+1, c.Line)
				}
				tags := c.Batch.Column(1).(*array.List)
				vals := tags.ListValues().(*array.String)
				for i := 0; i < tags.Len(); i++ {
					row := first + int64(i)
					lo, hi := tags.ValueOffsets(i)
					if int(hi-lo) != int(row%3) {
						return fmt.Errorf("row %d has %d tags, want %d", row, hi-lo, row%3)
					}
					for j := lo; j < hi; j++ {
						if vals.Value(int(j)) != strconv.FormatInt(row, 10) {
							return fmt.Errorf("row %d has tag %q", row, vals.Value(int(j)))
						}
					}
				}
				return nil
			})
			if next != int64(rows) {
				t.Fatalf("read %d rows, want %d", next, rows)
			}
			// Batches of 64 rows, cut at the end of each part.
			want := 0
			for g := 0; g < tc.rowGroups; g += tc.per {
				want += (min(tc.per, tc.rowGroups-g)*perGroup + 63) / 64
			}
			if batches != want {
				t.Errorf("%d batches, want %d (parts of %d row groups)", batches, want, tc.per)
			}
		})
	}
}

// readInOrder reads s's batches, calls each with every batch and the row
// it starts at (an error from each stops the read and fails the test),
// checks that column 0 holds the ids 0, 1, 2, ... in order, and returns
// how many rows were read.
func readInOrder(t *testing.T, s *ParquetFile, each func(c pipeline.Chunk, first int64) error) int64 {
	t.Helper()
	var next int64
	err := s.Chunks(t.Context(), func(c pipeline.Chunk) error {
		defer c.Batch.Release()
		if err := each(c, next); err != nil {
			return err
		}
		ids := c.Batch.Column(0).(*array.Int64)
		for i := 0; i < ids.Len(); i++ {
			if ids.Value(i) != next {
				return fmt.Errorf("row %d has id %d", next, ids.Value(i))
			}
			next++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// idTextColumns declares the columns of idTextBatch's files.
func idTextColumns() []ParquetColumn {
	return []ParquetColumn{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "text", Type: arrow.BinaryTypes.String}}
}

// idTextBatch makes a batch of rows rows: id (0, 1, 2, ...) and text
// (text(i) for row i), the columns idTextColumns declares. The caller
// releases it.
func idTextBatch(rows int, text func(i int) string) arrow.RecordBatch {
	var fields []arrow.Field
	for _, c := range idTextColumns() {
		fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type})
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer rb.Release()
	for i := 0; i < rows; i++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(text(i))
	}
	return rb.NewRecordBatch()
}

// TestParquetDamagedPageNamesRowGroupAndColumn: bytes flipped inside
// one compressed column chunk stop the read with an error naming the
// row group (the file's, also when the footer is read in parts), its
// rows and the column, where it named the row at which the failing batch
// started (in an intact row group) and no column; finding them leaves no
// Arrow memory behind.
func TestParquetDamagedPageNamesRowGroupAndColumn(t *testing.T) {
	saved := footerPartBytes
	defer func() { footerPartBytes = saved }()
	b := idTextBatch(2000, func(i int) string { return fmt.Sprintf("text %d of a row, long enough to compress %d", i, i*i) })
	defer b.Release()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(100), parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false))
	p := writeParquetFile(t, "d.parquet", b, props, pqarrow.DefaultWriterProps())
	// Row group 13's text chunk, its second half: past the page header.
	r, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := r.MetaData().RowGroup(13).ColumnChunk(1)
	if err != nil {
		t.Fatal(err)
	}
	start, size, footer := cc.DataPageOffset(), cc.TotalCompressedSize(), r.MetaData().Size()
	r.Close()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := start + size/2; i < start+size/2+16; i++ {
		data[i] ^= 0xFF
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		batch     int
		partBytes int
	}{
		{"batches across row groups", 64, saved},
		{"one batch for all", 5000, saved},
		{"the footer in five parts", 64, footer / 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			footerPartBytes = tc.partBytes
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := &ParquetFile{Path: p, Name: "d.parquet", Columns: idTextColumns(), BatchRows: tc.batch, Mem: mem}
			_, err := parquetRows(t, s, false)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "d.parquet:1301: unreadable input: row group 13 (rows 1301 to 1400), column text: ") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestParquetNotParquet: a file that is not Parquet (another format, a
// truncated download) is named as such by its magic bytes, where the
// reader's error spoke of metadata sizes.
func TestParquetNotParquet(t *testing.T) {
	b := idTextBatch(10, func(i int) string { return "x" })
	defer b.Release()
	good, err := os.ReadFile(writeParquetFile(t, "g.parquet", b, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"text", []byte(strings.Repeat("this is not parquet\n", 100)), `not a Parquet file: it does not start with PAR1 but "this" (another format?)`},
		{"truncated", good[:len(good)-10], "not a Parquet file: it starts with PAR1 but does not end with it (a truncated or damaged download?)"},
		{"tiny", []byte("PAR1"), "not a Parquet file: 4 bytes, fewer than the 12"},
		{"footer longer than the file", append([]byte("PAR1xxxxxxxx"), 0x40, 0x42, 0x0f, 0x00, 'P', 'A', 'R', '1'), "not a Parquet file: its footer would be 1000000 bytes, more than the file holds (20)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.parquet")
			os.WriteFile(p, tc.data, 0o644)
			s := &ParquetFile{Path: p, Name: "f.parquet", Columns: idTextColumns()}
			_, err := parquetRows(t, s, false)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "f.parquet: unreadable input: "+tc.want) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestParquetDamagedArrowSchema: a footer whose ARROW:schema value is
// damaged is named as such, where the error was base64's alone.
func TestParquetDamagedArrowSchema(t *testing.T) {
	b := idTextBatch(10, func(i int) string { return "x" })
	defer b.Release()
	p := writeParquetFile(t, "a.parquet", b, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("ARROW:schema"))
	if i < 0 {
		t.Fatal("no ARROW:schema in the footer")
	}
	// The value follows the key (its length, then base64): the first
	// base64 byte past the key, made one that base64 does not use.
	j := i + len("ARROW:schema") + 2
	for data[j] < '0' {
		j++
	}
	data[j+8] = '!'
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := &ParquetFile{Path: p, Name: "a.parquet", Columns: idTextColumns()}
	_, err = parquetRows(t, s, false)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "a.parquet: unreadable input: the Arrow schema in the file's footer (ARROW:schema) is damaged: ") {
		t.Errorf("err = %v", err)
	}
}

// TestParquetNumbersReadAsTextNoted: a column of numbers in the file,
// declared text, is read (each number as its text) and noted, where it
// was read without a word; text read as text is not noted.
func TestParquetNumbersReadAsTextNoted(t *testing.T) {
	b := idTextBatch(3, func(i int) string { return "x" })
	defer b.Release()
	p := writeParquetFile(t, "n.parquet", b, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	s := &ParquetFile{Path: p, Name: "n.parquet", Columns: []ParquetColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}}}
	rows, err := parquetRows(t, s, false)
	if err != nil || len(rows) != 3 || !strings.Contains(rows[2], `"id":"2"`) {
		t.Fatalf("rows %v, err %v", rows, err)
	}
	notes := strings.Join(s.Notes(), "\n")
	if !strings.Contains(notes, "n.parquet: column id is int64 in the file, declared utf8: its numbers read as text") {
		t.Errorf("notes %q", notes)
	}
	if strings.Contains(notes, "column text") {
		t.Errorf("text read as text noted: %q", notes)
	}
}

// TestParquetConversionErrorNamesRow checks that a value that does not
// convert to the declared type names its own row, not its batch's first.
func TestParquetConversionErrorNamesRow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tests := []struct {
		name, typ, bad, want string
	}{
		{"a string where an integer is declared", "int64", "abc", `f.parquet:301: column v: the file has utf8, want int64`},
		{"a string where a timestamp is declared", "timestamp", "not a time", `f.parquet:301: column v: "not a time" is not an ISO 8601 timestamp`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := array.NewStringBuilder(mem)
			for i := range 500 {
				switch {
				case i == 300:
					sb.Append(tt.bad)
				case tt.typ == "int64":
					sb.Append(strconv.Itoa(i))
				default:
					sb.Append("2024-01-02T03:04:05Z")
				}
			}
			col := sb.NewArray()
			sb.Release()
			b := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.BinaryTypes.String}}, nil), []arrow.Array{col}, 500)
			col.Release()
			p := writeParquetFile(t, "f.parquet", b, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(200)), pqarrow.DefaultWriterProps())
			b.Release()
			s := &ParquetFile{Path: p, Name: "f.parquet", BatchRows: 200, Mem: mem, Columns: []ParquetColumn{{Name: "v", Type: mustType(t, tt.typ)}}}
			err := s.Chunks(t.Context(), func(c pipeline.Chunk) error {
				defer c.Batch.Release()
				out, err := s.Decode(t.Context(), c, &pipeline.Rejects{})
				if err == nil {
					out.Release()
				}
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestConformIntegerTimestamp: integers where a timestamp is declared
// stop the run (their unit is unknown), at the top and inside lists,
// rather than being read as microseconds.
func TestConformIntegerTimestamp(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct{ have, want string }{
		{"int64", "timestamp"},
		{"int32", "timestamp"},
		{"list<int64>", "list<timestamp>"},
	} {
		t.Run(tc.have, func(t *testing.T) {
			a, _, err := array.FromJSON(mem, mustType(t, tc.have), strings.NewReader(map[bool]string{true: `[[1704067200], null]`, false: `[1704067200, 17040672]`}[strings.HasPrefix(tc.have, "list")]))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release()
			out, err := conform(t.Context(), mem, a, mustType(t, tc.want))
			if err == nil {
				out.Release()
				t.Fatal("integers read as a timestamp")
			}
			if !strings.Contains(err.Error(), "an integer does not say its unit") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestConformListOfDictionary: a list of dictionary values (a pandas
// categorical inside a list) converts to the declared list of strings;
// arrow-go's list cast alone panicked on it.
func TestConformListOfDictionary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dict, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["AGREE","MOCK"]`))
	if err != nil {
		t.Fatal(err)
	}
	defer dict.Release()
	idx, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Int32, strings.NewReader(`[1,0,null,0]`))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	d := array.NewDictionaryArray(dt, idx, dict)
	defer d.Release()
	offs := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 2, 2, 4}))
	data := array.NewData(arrow.ListOf(dt), 3, []*memory.Buffer{nil, offs}, []arrow.ArrayData{d.Data()}, 0, 0)
	defer data.Release()
	l := array.MakeFromData(data)
	defer l.Release()
	out, err := conform(t.Context(), mem, l, mustType(t, "list<string>"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got, _ := json.Marshal(out); string(got) != `[["MOCK","AGREE"],[],[null,"AGREE"]]` {
		t.Errorf("got %s", got)
	}
}

// TestISOTimestampsPastMicroseconds: ISO strings with more than six
// fractional digits are read and cut to the microsecond below, in any
// year.
func TestISOTimestampsPastMicroseconds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(
		`["2022-09-05T10:26:19.051292123Z","2022-09-05T10:26:19.0512921Z","2022-09-05 10:26:19.051292000+00:00","2022-09-05T10:26:19.051292Z","1969-12-31T23:59:59.9999995Z","1000-01-01T00:00:00.1234567Z","3000-01-01T00:00:00.0000009+01:00"]`))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	out, cut, err := isoTimestamps(mem, in.(*array.String))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if cut != 5 {
		t.Errorf("cut = %d, want 5 (…123Z, …1Z, 1969's, 1000's and 3000's; …000+00:00 has no digit to cut)", cut)
	}
	// Years outside 1678 to 2262 (where nanoseconds since 1970 overflow
	// int64) too: they were "not an ISO 8601 timestamp".
	want := []int64{1662373579051292, 1662373579051292, 1662373579051292, 1662373579051292, -1, -30610224000000000 + 123456, 32503676400000000}
	for i, w := range want {
		if got := int64(out.(*array.Timestamp).Value(i)); got != w {
			t.Errorf("%d: %d µs, want %d", i, got, w)
		}
	}
}

// TestParquetFileCutsNanoseconds: a nanosecond timestamp column (what
// pandas writes by default) whose values have digits below the
// microsecond is read cut to the microsecond before, as the same instants
// written as ISO strings are, and the source's notes count the values cut
// in each column; it stopped the run before ("would lose data").
func TestParquetFileCutsNanoseconds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "created", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		{Name: "updated", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "seen", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(memory.NewGoAllocator(), schema, strings.NewReader(`[
		{"created": 1704164645123456789, "updated": "2024-01-02T03:04:05.123456789Z", "seen": "2024-01-02T03:04:05Z"},
		{"created": null, "updated": null, "seen": null},
		{"created": 1704164645123456000, "updated": "2024-01-02T03:04:05.1234561Z", "seen": "2024-01-02T03:04:05.5Z"},
		{"created": -1, "updated": "2024-01-02T03:04:05Z", "seen": null}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	p := writeParquetFile(t, "ns.parquet", b, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	s := &ParquetFile{Path: p, Name: "ns.parquet", BatchRows: 1, Mem: mem, Columns: []ParquetColumn{
		{Name: "created", Type: mustType(t, "timestamp")},
		{Name: "updated", Type: mustType(t, "timestamp")},
		{Name: "seen", Type: mustType(t, "timestamp")},
	}}
	rows, err := parquetRows(t, s, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"created":"2024-01-02T03:04:05.123456Z","seen":"2024-01-02T03:04:05Z","updated":"2024-01-02T03:04:05.123456Z"}`,
		`{"created":null,"seen":null,"updated":null}`,
		`{"created":"2024-01-02T03:04:05.123456Z","seen":"2024-01-02T03:04:05.5Z","updated":"2024-01-02T03:04:05.123456Z"}`,
		`{"created":"1969-12-31T23:59:59.999999Z","seen":null,"updated":"2024-01-02T03:04:05Z"}`,
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	notes := strings.Join(s.Notes(), "\n")
	for _, w := range []string{"ns.parquet: column created: 2 timestamps had digits below the microsecond", "ns.parquet: column updated: 2 timestamps"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q lack %q", notes, w)
		}
	}
	if strings.Contains(notes, "column seen") {
		t.Errorf("notes %q count a column with nothing cut", notes)
	}
}

// TestParquetFileNestedStructsHint: a file holding the release's dotted
// names as fields of struct columns (read into nested records and written
// again) stops as missing those columns, and the message says they are
// inside structs and how to flatten them; a name that is nowhere is not
// said to be.
func TestParquetFileNestedStructsHint(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "round_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "metadata", Type: arrow.StructOf(
			arrow.Field{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "generative_model", Type: arrow.StructOf(arrow.Field{Name: "api_version", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		), Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(memory.NewGoAllocator(), schema, strings.NewReader(`[{"round_id":"r","metadata":{"id":"a","generative_model":{"api_version":"v"}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	p := writeParquetFile(t, "nested.parquet", b, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	s := &ParquetFile{Path: p, Name: "nested.parquet", Columns: []ParquetColumn{
		{Name: "round_id", Type: mustType(t, "string")},
		{Name: "metadata.id", Type: mustType(t, "string")},
		{Name: "metadata.generative_model.api_version", Type: mustType(t, "string")},
		{Name: "metadata.version", Type: mustType(t, "string")},
	}}
	err = s.Chunks(t.Context(), func(c pipeline.Chunk) error { c.Batch.Release(); return nil })
	if !errors.Is(err, ErrMissingColumns) {
		t.Fatalf("err = %v, want ErrMissingColumns", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"the file has no metadata.id, metadata.generative_model.api_version, metadata.version",
		"; metadata.id, metadata.generative_model.api_version are inside struct columns",
		"Table.flatten",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("err = %v\nwant it to contain %q", err, want)
		}
	}
	if strings.Contains(msg[strings.Index(msg, ";"):], "metadata.version") {
		t.Errorf("err = %v: names metadata.version, which no struct holds, as inside one", err)
	}
}

// TestParquetTimestampsOutOfRange: a Parquet timestamp outside the years
// 1 to 9999 stops the run naming file, row and column (a value that does
// not convert stops a Parquet input); it was written, and pyarrow's
// to_pylist then failed on the output.
func TestParquetTimestampsOutOfRange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true}}, nil)
	b, _, err := array.RecordFromJSON(memory.NewGoAllocator(), sc, strings.NewReader(`[{"ts": 0}, {"ts": null}, {"ts": 253402300799999999}, {"ts": 4611686018427387904}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	p := writeParquetFile(t, "far.parquet", b, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	s := &ParquetFile{Path: p, Name: "far.parquet", Mem: mem, Columns: []ParquetColumn{{Name: "ts", Type: mustType(t, "timestamp")}}}
	_, err = parquetRows(t, s, false)
	if err == nil || !strings.Contains(err.Error(), "far.parquet:4: column ts: 4611686018427387904 µs since 1970 is outside the years 1 to 9999") {
		t.Errorf("err = %v", err)
	}
}

// TestParquetOptionalColumns: a declared optional column the file lacks
// is read as nulls and noted; a required one still stops the run.
func TestParquetOptionalColumns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := writePandasLike(t, 2)
	s := &ParquetFile{Path: p, Name: "f.parquet", BatchRows: 2, Mem: mem, Columns: []ParquetColumn{
		{Name: "question.topic", Type: mustType(t, "int64")},
		{Name: "not.there", Type: mustType(t, "list<string>"), Optional: true},
	}}
	rows, err := parquetRows(t, s, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"not.there":null,"question.topic":7}`, `{"not.there":null,"question.topic":null}`, `{"not.there":null,"question.topic":104}`}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	// The file's other columns are said to be passed over, in its order.
	if n := s.Notes(); len(n) != 2 || !strings.Contains(n[0], "f.parquet has no not.there (declared optional: read as nulls)") ||
		n[1] != "f.parquet: 5 columns not declared, not read: candidates.metadata.id, metadata.created, metadata.updated, nested, extra (extra_columns: carry keeps them)" {
		t.Errorf("notes %q", n)
	}
	if got := listSome([]string{"a", "b", "c"}, 2); got != "a, b and 1 more" {
		t.Errorf("listSome = %q", got)
	}
	s.Columns[1].Optional = false
	s.absent = nil
	err = s.Chunks(t.Context(), func(c pipeline.Chunk) error { c.Batch.Release(); return nil })
	if !errors.Is(err, ErrMissingColumns) {
		t.Errorf("a required column missing: err = %v", err)
	}
}

// TestConformFloatsToText: floats where a string is declared read as
// the same number stored as an integer or text does: 123456789012, not
// 1.23456789012e+11 (pandas stores an integer id column with missing
// values as float64).
func TestConformFloatsToText(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a, _, err := array.FromJSON(mem, arrow.PrimitiveTypes.Float64, strings.NewReader(`[123456789012.0, 146938998, 0.5, -2.25, null, 1e22, 1e-7, 0]`))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	out, err := conform(t.Context(), mem, a, arrow.BinaryTypes.String)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	var got []string
	for i := range out.Len() {
		if out.IsNull(i) {
			got = append(got, "null")
			continue
		}
		got = append(got, out.(*array.String).Value(i))
	}
	if want := "123456789012 146938998 0.5 -2.25 null 1e+22 1e-07 0"; strings.Join(got, " ") != want {
		t.Errorf("texts %q, want %q", strings.Join(got, " "), want)
	}
}

// TestValidText: strings that are not UTF-8, top-level or nested, are
// found with their row; a character split between two strings (valid
// bytes as a whole) is found too; nulls are not looked at.
func TestValidText(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	strs := func(vals ...string) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for _, v := range vals {
			if v == "<null>" {
				b.AppendNull()
				continue
			}
			b.BinaryBuilder.Append([]byte(v))
		}
		return b.NewArray()
	}
	lists := func(rows ...[]string) arrow.Array {
		b := array.NewListBuilder(mem, arrow.BinaryTypes.String)
		defer b.Release()
		vb := b.ValueBuilder().(*array.StringBuilder)
		for _, r := range rows {
			if r == nil {
				b.AppendNull()
				continue
			}
			b.Append(true)
			for _, v := range r {
				vb.BinaryBuilder.Append([]byte(v))
			}
		}
		return b.NewArray()
	}
	structOf := func(a arrow.Array) arrow.Array {
		defer a.Release()
		s, err := array.NewStructArray([]arrow.Array{a}, []string{"f"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name string
		a    func() arrow.Array
		row  int // -1: valid
		msg  string
	}{
		{"ascii and accents", func() arrow.Array { return strs("a", "café", "", "<null>", "😀") }, -1, ""},
		{"invalid bytes", func() arrow.Array { return strs("a", "b", "\xff\xfe") }, 2, `"\xff\xfe" is not valid UTF-8`},
		{"a character split between two strings", func() arrow.Array { return strs("ok", "caf\xc3", "\xa9") }, 1, "not valid UTF-8"},
		{"list element", func() arrow.Array { return lists([]string{"a"}, nil, []string{}, []string{"b", "c\xff"}) }, 3, "element 1: "},
		{"struct field", func() arrow.Array { return structOf(strs("x", "\xc0\x80")) }, 1, "not valid UTF-8"},
		{"valid list", func() arrow.Array { return lists([]string{"é"}, []string{"😀", "x"}) }, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a()
			defer a.Release()
			err := validText(a)
			if tt.row < 0 {
				if err != nil {
					t.Errorf("err = %v", err)
				}
				return
			}
			var re *rowError
			if !errors.As(err, &re) || re.row != tt.row || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want row %d and %q", err, tt.row, tt.msg)
			}
		})
	}
	// A sliced string array: its bytes are the slice's (the check read
	// the bytes of the strings before it instead).
	whole := strs("aaaa", "bbbb", "cccc", "dd\xff", "eeee")
	defer whole.Release()
	for _, c := range []struct {
		lo, hi int64
		row    int
	}{{3, 5, 0}, {2, 4, 1}, {0, 3, -1}, {4, 5, -1}} {
		sl := array.NewSlice(whole, c.lo, c.hi)
		err := validText(sl)
		sl.Release()
		var re *rowError
		if c.row < 0 && err != nil || c.row >= 0 && (!errors.As(err, &re) || re.row != c.row) {
			t.Errorf("strings [%d, %d): err = %v, want row %d", c.lo, c.hi, err, c.row)
		}
	}
	// A slice of lists: the rows are the slice's.
	a := lists([]string{"\xff"}, []string{"a"}, []string{"b", "\xfe"})
	defer a.Release()
	sl := array.NewSlice(a, 1, 3)
	defer sl.Release()
	var re *rowError
	if err := validText(sl); !errors.As(err, &re) || re.row != 1 {
		t.Errorf("slice: err = %v, want row 1", err)
	}
}

// TestConformExactly: a conversion arrow-go's safe cast would make with a
// changed value stops at its row: numbers other than 0 and 1 as booleans,
// Go-only number syntax as floats, decimals with more digits than a
// float64 holds. The exact ones convert.
func TestConformExactly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tests := []struct {
		name string
		from arrow.DataType
		vals string
		want arrow.DataType
		out  string // the converted values, or
		err  string // the error, with its row
	}{
		{"0 and 1 as booleans", arrow.PrimitiveTypes.Int64, `[0, 1, null]`, arrow.FixedWidthTypes.Boolean, `[false true (null)]`, ""},
		{"2 as a boolean", arrow.PrimitiveTypes.Int64, `[0, 1, 2]`, arrow.FixedWidthTypes.Boolean, "", "row 2: the file has int64 2, want a boolean"},
		{"1.0 and -0.0 as booleans", arrow.PrimitiveTypes.Float64, `[1.0, -0.0]`, arrow.FixedWidthTypes.Boolean, `[true false]`, ""},
		{"0.5 as a boolean", arrow.PrimitiveTypes.Float64, `[1.0, 0.5]`, arrow.FixedWidthTypes.Boolean, "", "row 1: the file has float64 0.5"},
		{"texts as floats", arrow.BinaryTypes.String, `["1.5", "-2e3", "inf", "NaN", null]`, arrow.PrimitiveTypes.Float64, `[1.5 -2000 +Inf NaN (null)]`, ""},
		{"hex float text", arrow.BinaryTypes.String, `["1", "0x1p4"]`, arrow.PrimitiveTypes.Float64, "", `row 1: the file has "0x1p4", want float64`},
		{"digits apart text", arrow.BinaryTypes.String, `["1_0"]`, arrow.PrimitiveTypes.Float64, "", `row 0: the file has "1_0"`},
		{"decimals a float holds", &arrow.Decimal128Type{Precision: 10, Scale: 2}, `["2.50", "0.10", "-12345678.99", null]`, arrow.PrimitiveTypes.Float64, `[2.5 0.1 -1.234567899e+07 (null)]`, ""},
		{"a decimal a float does not hold", &arrow.Decimal128Type{Precision: 38, Scale: 18}, `["0.5", "0.123456789012345678"]`, arrow.PrimitiveTypes.Float64, "", "row 1: the file has decimal(38, 18) 0.123456789012345678, which float64 does not hold"},
		{"a large decimal", &arrow.Decimal256Type{Precision: 40, Scale: 2}, `["12345678901234567890.12"]`, arrow.PrimitiveTypes.Float64, "", "row 0: the file has decimal256(40, 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _, err := array.FromJSON(mem, tt.from, strings.NewReader(tt.vals))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release()
			out, err := conform(t.Context(), mem, a, tt.want)
			if tt.err != "" {
				var re *rowError
				if !errors.As(err, &re) || !strings.Contains(fmt.Sprintf("row %d: %v", re.row, err), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				if out != nil {
					out.Release()
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if got := fmt.Sprint(out); got != tt.out {
				t.Errorf("converted %s, want %s", got, tt.out)
			}
		})
	}
}

// TestConformStructFieldOrder: a struct whose fields the file orders
// otherwise than declared is read by name (it stopped the run with a
// cast error), nested in a list too.
func TestConformStructFieldOrder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	file := arrow.ListOf(arrow.StructOf(
		arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true}))
	want := arrow.ListOf(arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true}))
	a, _, err := array.FromJSON(mem, file, strings.NewReader(`[[{"b": 1, "a": "x"}, null], null, [{"b": null, "a": "y"}]]`))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	out, err := conform(t.Context(), mem, a, want)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if !arrow.TypeEqual(out.DataType(), want) {
		t.Errorf("type %s, want %s", out.DataType(), want)
	}
	if got, _ := json.Marshal(out); string(got) != `[[{"a":"x","b":1},null],null,[{"a":"y","b":null}]]` {
		t.Errorf("got %s", got)
	}
}

// TestConformHintsWhatToDeclare: a number that does not convert exactly
// says which type to declare to keep it (an int64 past 2^53 where a
// float64 is declared, as epoch nanoseconds are; a NaN or a fraction
// where an int64 is).
func TestConformHintsWhatToDeclare(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct{ have, vals, want, hint string }{
		{"int64", `[1, 1662373579051292123]`, "float64", "declare the column int64 to keep every digit"},
		{"float64", `[1, 2.5]`, "int64", "declare the column float64"},
		// No uint64 to declare: no hint, rather than a wrong one.
		{"uint64", `[1, 18446744073709551615]`, "float64", "want float64: invalid: integer value 18446744073709551615 not in range"},
	} {
		t.Run(tc.have, func(t *testing.T) {
			have := arrow.DataType(arrow.PrimitiveTypes.Uint64)
			if tc.have != "uint64" {
				have = mustType(t, tc.have)
			}
			a, _, err := array.FromJSON(mem, have, strings.NewReader(tc.vals))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release()
			out, err := conform(t.Context(), mem, a, mustType(t, tc.want))
			if err == nil {
				out.Release()
				t.Fatal("converted")
			}
			var re *rowError
			if !errors.As(err, &re) || re.row != 1 || !strings.Contains(err.Error(), tc.hint) || strings.Contains(err.Error(), "declare the column uint64") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestParquetColumnOfTheFilesType: a column declared with the file's own
// type (type: file) keeps whatever nesting the file has, in a type every
// reader takes (uint32 as int64); an optional one the file lacks is a
// string column of nulls. A declared type one level too shallow stops.
func TestParquetColumnOfTheFilesType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	deep := arrow.ListOf(arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float64)))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "deep", Type: deep, Nullable: true},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[{"deep":[[[1.5,2]],[[0.5]]],"u":7},{"deep":null,"u":null}]`))
	if err != nil {
		t.Fatal(err)
	}
	p := writeParquetFile(t, "f.parquet", b, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	b.Release()
	s := &ParquetFile{Path: p, Name: "f.parquet", Mem: mem, Columns: []ParquetColumn{
		{Name: "deep", AsFile: true},
		{Name: "u", AsFile: true},
		{Name: "gone", AsFile: true, Optional: true},
	}}
	sc, err := s.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(sc.Field(0).Type, " ", sc.Field(1).Type, " ", sc.Field(2).Type); got != "list<item: list<item: list<item: float64, nullable>, nullable>, nullable> int64 utf8" {
		t.Errorf("types %s", got)
	}
	rows, err := parquetRows(t, s, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"deep":[[[1.5,2]],[[0.5]]],"gone":null,"u":7}` + "\n" + `{"deep":null,"gone":null,"u":null}`
	if strings.Join(rows, "\n") != want {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), want)
	}
	declared := &ParquetFile{Path: p, Name: "f.parquet", Mem: mem, Columns: []ParquetColumn{{Name: "deep", Type: mustType(t, "list<list<float64>>")}}}
	if _, err := parquetRows(t, declared, false); err == nil {
		t.Error("a list nested deeper than declared was read")
	}
}
