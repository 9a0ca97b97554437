package sinks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/pipeline"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "dim", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "votes", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64},
}, nil)

func batch(t testing.TB, mem memory.Allocator, rows string) arrow.RecordBatch {
	t.Helper()
	b, _, err := array.RecordFromJSON(mem, testSchema, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readBack reads a Parquet file with pqarrow and returns its rows as JSON.
func readBack(t testing.TB, mem memory.Allocator, p string) (*arrow.Schema, []string) {
	t.Helper()
	rdr, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1024}, mem)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1<<20)
	defer tr.Release()
	var rows []string
	for tr.Next() {
		b := tr.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			rows = append(rows, pipeline.RowJSON(b, i))
		}
	}
	return tbl.Schema(), rows
}

func TestTableWritesHivePartitions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	w := config.DefaultWriter
	w.FileRows = 2 // roll every 2 rows
	sink, err := NewTable(root, "t", testSchema, []string{"dim"}, w, mem)
	if err != nil {
		t.Fatal(err)
	}
	b := batch(t, mem, `[
		{"id":"1","dim":"a/b","votes":["x"],"ts":"2024-01-02T03:04:05.123456Z","_line":1},
		{"id":"2","dim":null,"votes":[],"ts":null,"_line":2},
		{"id":"3","dim":"a/b","votes":null,"ts":null,"_line":3},
		{"id":"4","dim":"a/b","votes":["y","z"],"ts":null,"_line":4},
		{"id":"5","dim":"","votes":["q"],"ts":null,"_line":5}
	]`)
	defer b.Release()
	if err := sink.Write(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if err := sink.Reject(t.Context(), []pipeline.Reject{{Rule: "range", Column: "p", Reason: "1.7 > 1", File: "f", Line: 9, Row: "{}"}}); err != nil {
		t.Fatal(err)
	}
	files, err := sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	total := int64(0)
	for _, f := range files {
		paths = append(paths, f.Path)
		total += f.Rows
		st, err := os.Stat(filepath.Join(root, filepath.FromSlash(f.Path)))
		if err != nil || st.Size() != f.Bytes || len(f.SHA256) != 64 {
			t.Errorf("%s: stat %v, size %d vs %d", f.Path, err, st.Size(), f.Bytes)
		}
	}
	want := []string{
		"t/dim=__HIVE_DEFAULT_PARTITION__/part-00000.parquet",
		"t/dim=a%2Fb/part-00000.parquet",
		"t/dim=a%2Fb/part-00001.parquet",
		"_rejects/t/part-00000.parquet",
	}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v, want %v", paths, want)
	}
	if total != 6 {
		t.Fatalf("rows %d", total)
	}
	// No temporary or partial files are left.
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if strings.HasSuffix(p, ".tmp") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	schema, rows := readBack(t, mem, filepath.Join(root, "t", "dim=a%2Fb", "part-00000.parquet"))
	if schema.HasField("dim") || schema.HasField(pipeline.LineColumn) {
		t.Errorf("partition or internal column written into the file: %s", schema)
	}
	if got := strings.Join(rows, "\n"); got != `{"id":"1","ts":"2024-01-02T03:04:05.123456Z","votes":["x"]}`+"\n"+`{"id":"3","ts":null,"votes":null}` {
		t.Errorf("rows in file order:\n%s", got)
	}
	if ts := schema.Field(schema.FieldIndices("ts")[0]).Type.(*arrow.TimestampType); ts.Unit != arrow.Microsecond || ts.TimeZone != "UTC" {
		t.Errorf("timestamp written as %s", ts)
	}
	_, rej := readBack(t, mem, filepath.Join(root, "_rejects", "t", "part-00000.parquet"))
	if len(rej) != 1 || !strings.Contains(rej[0], `"table":"t"`) || !strings.Contains(rej[0], `"rule":"range"`) || !strings.Contains(rej[0], `"source_line":9`) {
		t.Errorf("rejects %v", rej)
	}
}

func TestTableTooManyPartitions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	w := config.DefaultWriter
	w.MaxPartitions = 2
	sink, err := NewTable(t.TempDir(), "t", testSchema, []string{"id"}, w, mem)
	if err != nil {
		t.Fatal(err)
	}
	ok := batch(t, mem, `[{"id":"1","_line":1},{"id":"1","_line":2}]`)
	defer ok.Release()
	if err := sink.Write(t.Context(), ok); err != nil {
		t.Fatal(err)
	}
	b := batch(t, mem, `[{"id":"2","_line":3},{"id":"3","_line":4}]`)
	defer b.Release()
	if err := sink.Write(t.Context(), b); !errors.Is(err, ErrTooManyPartitions) || !strings.Contains(err.Error(), "line 4: ") || !strings.Contains(err.Error(), "(the first past it: id=3)") {
		t.Fatalf("err = %v", err)
	}
	// The refused batch is not written, the one before it is.
	files, err := sink.Close()
	if err != nil {
		t.Fatalf("Close after a refused batch: %v", err)
	}
	if len(files) != 1 || files[0].Rows != 2 {
		t.Errorf("files %+v, want id=1 with 2 rows", files)
	}
}

func TestTableRejectsBadPartitionColumn(t *testing.T) {
	if _, err := NewTable(t.TempDir(), "t", testSchema, []string{"votes"}, config.DefaultWriter, nil); err == nil {
		t.Fatal("partitioning on a list must be refused")
	}
	if _, err := NewTable(t.TempDir(), "t", testSchema, []string{"nope"}, config.DefaultWriter, nil); err == nil {
		t.Fatal("partitioning on a missing column must be refused")
	}
}

func TestReleasePublishSwapsAtomically(t *testing.T) {
	out := t.TempDir()
	// A previous release and stale staging from a killed run.
	os.MkdirAll(filepath.Join(out, "ds", "t"), 0o755)
	os.WriteFile(filepath.Join(out, "ds", "t", "old.parquet"), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(out, "ds", "_SUCCESS"), nil, 0o644)
	os.MkdirAll(filepath.Join(out, ".agora-staging-ds", "junk"), 0o755)
	r, err := NewRelease(nil, out, "ds")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "junk")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("stale staging not cleaned")
	}
	os.WriteFile(filepath.Join(r.Dir(), "new.parquet"), []byte("new"), 0o644)
	// Until Publish, the old release is what readers see.
	if _, err := os.Stat(filepath.Join(out, "ds", "t", "old.parquet")); err != nil {
		t.Fatal("previous release disturbed before publish")
	}
	if err := r.Publish(); err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if !info.IsDir() {
			rel, _ := filepath.Rel(out, p)
			got = append(got, rel)
		}
		return nil
	})
	sort.Strings(got)
	if strings.Join(got, " ") != "ds/_SUCCESS ds/new.parquet" {
		t.Fatalf("after publish: %v", got)
	}
}

func TestVerifyCatchesAFooterThatDisagrees(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	sink, err := NewTable(root, "t", testSchema, nil, config.DefaultWriter, mem)
	if err != nil {
		t.Fatal(err)
	}
	b := batch(t, mem, `[{"id":"1","_line":1},{"id":"2","_line":2}]`)
	defer b.Release()
	if err := sink.Write(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	files, err := sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, filepath.FromSlash(files[0].Path))
	if err := verify(p, 2); err != nil {
		t.Fatalf("a good file fails verification: %v", err)
	}
	if err := verify(p, 3); !errors.Is(err, ErrVerify) {
		t.Fatalf("a row count mismatch passes: %v", err)
	}
	os.WriteFile(p, []byte("PAR1garbage"), 0o644)
	if err := verify(p, 2); !errors.Is(err, ErrVerify) {
		t.Fatalf("a corrupt file passes: %v", err)
	}
}

// TestDictionaryColumnsAreByteIdentical: arrow-go writes a column's
// encoding stats from a Go map, in random order, once a dictionary falls
// back to plain. A listed dictionary column never falls back (its page
// limit is far above any column chunk), so repeated writes of a
// high-cardinality dictionary column give the same bytes.
func TestDictionaryColumnsAreByteIdentical(t *testing.T) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	for i := 0; i < 60000; i++ {
		bld.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("%08x-%d-a-rather-long-unique-value", i*2654435761, i))
		bld.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	b := bld.NewRecordBatch()
	bld.Release()
	defer b.Release()
	w := config.DefaultWriter
	w.Dictionary = []string{"id"}
	var sums []string
	for run := 0; run < 3; run++ {
		root := t.TempDir()
		sink, err := NewTable(root, "t", schema, nil, w, mem)
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < b.NumRows(); off += 7000 {
			part := b.NewSlice(off, min(off+7000, b.NumRows()))
			err := sink.Write(t.Context(), part)
			part.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		files, err := sink.Close()
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, files[0].SHA256)
	}
	if sums[0] != sums[1] || sums[1] != sums[2] {
		t.Fatalf("three writes gave %v", sums)
	}
}

// TestReleaseReplacesOnlyReleases: what is at the target folder is
// replaced only when it is a release (or empty, or absent); anything else
// (the inputs, when --out names the data folder) stops the release before
// a file is written, and again at Publish should it appear meanwhile.
func TestReleaseReplacesOnlyReleases(t *testing.T) {
	tests := []struct {
		name  string
		setup func(target string)
		ok    bool
	}{
		{"absent", func(string) {}, true},
		{"empty folder", func(p string) { os.MkdirAll(p, 0o755) }, true},
		{"a release", func(p string) { os.MkdirAll(p, 0o755); os.WriteFile(filepath.Join(p, "_SUCCESS"), nil, 0o644) }, true},
		{"a release without _SUCCESS", func(p string) {
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "manifest.json"), []byte(`{"dataset": "ds", "agora_version": "0.1.0"}`), 0o644)
		}, true},
		{"a dataset's own manifest.json", func(p string) {
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "manifest.json"), []byte(`{"files": ["a.jsonl"]}`), 0o644)
		}, false},
		{"input files", func(p string) {
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "ratings.jsonl.gz"), []byte("data"), 0o644)
		}, false},
		{"a file", func(p string) { os.WriteFile(p, []byte("data"), 0o644) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			target := filepath.Join(out, "ds")
			tt.setup(target)
			r, err := NewRelease(nil, out, "ds")
			if !tt.ok {
				if !errors.Is(err, ErrNotRelease) {
					t.Fatalf("err = %v, want ErrNotRelease", err)
				}
				if _, err := os.Stat(filepath.Join(out, ".agora-staging-ds")); !errors.Is(err, os.ErrNotExist) {
					t.Error("staging made for a release that cannot be published")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Publish(); err != nil {
				t.Fatal(err)
			}
			if !Published(out, "ds") {
				t.Error("not published")
			}
		})
	}
	// Something that is not a release appears while the run writes.
	out := t.TempDir()
	r, err := NewRelease(nil, out, "ds")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(out, "ds"), 0o755)
	os.WriteFile(filepath.Join(out, "ds", "notes.txt"), []byte("mine"), 0o644)
	if err := r.Publish(); !errors.Is(err, ErrNotRelease) {
		t.Errorf("publish over a user's folder: err = %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "ds", "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the user's file: %q, %v", b, err)
	}
	r.Abort()
}

// TestRecoverRemovesAReleaseLeftBehind: a release set aside by a swap
// that finished (its removal failed, or the run was killed then) is
// removed by the next run, even one with nothing to publish.
func TestRecoverRemovesAReleaseLeftBehind(t *testing.T) {
	out := t.TempDir()
	for _, d := range []string{"ds", ".agora-old-ds"} {
		os.MkdirAll(filepath.Join(out, d), 0o755)
		os.WriteFile(filepath.Join(out, d, "_SUCCESS"), nil, 0o644)
	}
	os.WriteFile(filepath.Join(out, "ds", "new"), nil, 0o644)
	if _, err := Recover(nil, out, "ds"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, ".agora-old-ds")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the release left behind is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "ds", "new")); err != nil {
		t.Errorf("the published release: %v", err)
	}
}

func TestNewReleaseRestoresAReleaseLeftAside(t *testing.T) {
	out := t.TempDir()
	// A run killed between the two renames of a non-atomic swap.
	os.MkdirAll(filepath.Join(out, ".agora-old-ds"), 0o755)
	os.WriteFile(filepath.Join(out, ".agora-old-ds", "_SUCCESS"), nil, 0o644)
	if _, err := NewRelease(nil, out, "ds"); err != nil {
		t.Fatal(err)
	}
	if !Published(out, "ds") {
		t.Fatal("the previous release was not put back")
	}
}

// writeBatches writes one batch per JSON array of rows, then closes the
// sink and returns its files.
func writeBatches(t *testing.T, sink *Table, mem memory.Allocator, batches ...string) []FileInfo {
	t.Helper()
	for _, rows := range batches {
		b := batch(t, mem, rows)
		err := sink.Write(t.Context(), b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	files, err := sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestBufferBytesCutsTheLargestRowGroup: with a small budget over all
// open partitions, row groups are written out early, and the files still
// hold every row in order.
func TestBufferBytesCutsTheLargestRowGroup(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	w := config.DefaultWriter
	w.BufferBytes = 1 // every write goes over: each batch ends a row group
	sink, err := NewTable(root, "t", testSchema, []string{"dim"}, w, mem)
	if err != nil {
		t.Fatal(err)
	}
	two := `[{"id":"a","dim":"x","_line":1},{"id":"b","dim":"y","_line":2}]`
	files := writeBatches(t, sink, mem, two, two, two)
	for _, f := range files {
		rdr, err := file.OpenParquetFile(filepath.Join(root, filepath.FromSlash(f.Path)), false)
		if err != nil {
			t.Fatal(err)
		}
		// Each write was cut off; the last cut leaves an empty trailing
		// row group, which readers skip.
		if rdr.NumRowGroups() < 3 || rdr.NumRows() != 3 {
			t.Errorf("%s: %d row groups, %d rows; want at least 3 and 3", f.Path, rdr.NumRowGroups(), rdr.NumRows())
		}
		rdr.Close()
	}
}

// TestFileBytesStartsANewFile: once a file's written row groups reach
// file_bytes, the partition's next rows go to a new file. The size is
// cached between row groups, so this also checks the cache is dropped
// when a row group is written.
func TestFileBytesStartsANewFile(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	w := config.DefaultWriter
	w.RowGroupRows = 2 // every two rows fill a row group
	w.FileBytes = 1    // any written row group fills a file
	sink, err := NewTable(root, "t", testSchema, nil, w, mem)
	if err != nil {
		t.Fatal(err)
	}
	// One row at a time: the size is asked for after each row, before and
	// after its row group is written.
	files := writeBatches(t, sink, mem, oneRowBatches(6)...)
	if len(files) != 3 {
		t.Fatalf("got %d files, want 3 (one per row group): %+v", len(files), files)
	}
	for i, f := range files {
		_, rows := readBack(t, mem, filepath.Join(root, filepath.FromSlash(f.Path)))
		want := []string{fmt.Sprintf(`{"dim":null,"id":"%d","ts":null,"votes":null}`, 2*i), fmt.Sprintf(`{"dim":null,"id":"%d","ts":null,"votes":null}`, 2*i+1)}
		if f.Path != fmt.Sprintf("t/part-%05d.parquet", i) || strings.Join(rows, "\n") != strings.Join(want, "\n") {
			t.Errorf("file %d: %s holds %v, want t/part-%05d.parquet with %v", i, f.Path, rows, i, want)
		}
	}
}

// writeLeafCase writes a table of id, tags (list<string>) and text, written as one
// file with the given writer; check looks at each leaf's column chunk.
func writeLeafCase(t *testing.T, w config.Writer, check func(path string, cc *metadata.ColumnChunkMetaData)) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "text", Type: arrow.BinaryTypes.String},
	}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	for i := 0; i < 100; i++ {
		bld.Field(0).(*array.StringBuilder).Append(fmt.Sprint("id-", i%3))
		lb := bld.Field(1).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"a", "b"}, nil)
		bld.Field(2).(*array.StringBuilder).Append(fmt.Sprint("a paragraph ", i))
	}
	b := bld.NewRecordBatch()
	bld.Release()
	defer b.Release()
	root, files := writeTable(t, mem, nil, w, b)
	r, err := file.OpenParquetFile(filepath.Join(root, files[0].Path), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rg := r.MetaData().RowGroup(0)
	for i := 0; i < rg.NumColumns(); i++ {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		check(cc.PathInSchema().String(), cc)
	}
}

// TestDictionaryReachesListColumns: a dictionary column is set per leaf,
// so a listed list column gets its dictionary on "name.list.element"
// (it was silently written plain when the option named only "name"),
// and a column not listed stays plain.
func TestDictionaryReachesListColumns(t *testing.T) {
	w := config.DefaultWriter
	w.Dictionary = []string{"id", "tags"}
	want := map[string]bool{"id": true, "tags.list.element": true, "text": false}
	writeLeafCase(t, w, func(path string, cc *metadata.ColumnChunkMetaData) {
		if got := cc.HasDictionaryPage(); got != want[path] {
			t.Errorf("column %s: dictionary page %v, want %v", path, got, want[path])
		}
	})
}

// TestNoStatisticsReachesLeaves: a column listed in no_statistics (a
// list column: its values) is written without min/max; the others keep
// theirs.
func TestNoStatisticsReachesLeaves(t *testing.T) {
	w := config.DefaultWriter
	w.NoStatistics = []string{"tags", "text"}
	want := map[string]bool{"id": true, "tags.list.element": false, "text": false}
	writeLeafCase(t, w, func(path string, cc *metadata.ColumnChunkMetaData) {
		has := false
		if ok, _ := cc.StatsSet(); ok {
			st, err := cc.Statistics()
			has = err == nil && st != nil && st.HasMinMax()
		}
		if has != want[path] {
			t.Errorf("column %s: min/max written %v, want %v", path, has, want[path])
		}
	})
}

// TestRowGroupJoinsHeldBatches: the batches a partition holds for a row
// group (nulls, empty and null lists, several partitions interleaved) are
// joined and written as one row group with every row in order, and the
// joined copy is released.
func TestRowGroupJoinsHeldBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	sink := dimTable(t, root, mem, 1) // split each batch on arrival: five pieces a partition
	var batches, want []string
	for i := 0; i < 5; i++ {
		batches = append(batches, fmt.Sprintf(`[{"id":"a%d","dim":"x","votes":["v%d",null],"ts":null,"_line":%d},{"id":"b%d","dim":"y","votes":[],"_line":%d},{"id":"c%d","dim":"x","votes":null,"ts":"2024-05-01T10:00:00Z","_line":%d}]`, i, i, 3*i+1, i, 3*i+2, i, 3*i+3))
		want = append(want,
			fmt.Sprintf(`{"id":"a%d","votes":["v%d",null],"ts":null}`, i, i),
			fmt.Sprintf(`{"id":"c%d","votes":null,"ts":"2024-05-01T10:00:00Z"}`, i))
	}
	files := writeBatches(t, sink, mem, batches...)
	for _, f := range files {
		if f.Partition["dim"] == nil || *f.Partition["dim"] != "x" {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := rdr.NumRowGroups(); n != 1 {
			t.Errorf("%s: %d row groups, want the 5 batches in one", f.Path, n)
		}
		rdr.Close()
		_, got := readBack(t, mem, p)
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", f.Path, len(got), len(want))
		}
		for i := range want {
			var g, w any
			json.Unmarshal([]byte(got[i]), &g)
			json.Unmarshal([]byte(want[i]), &w)
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("row %d: got %s, want %s", i, got[i], want[i])
			}
		}
		return
	}
	t.Fatal("no file for dim=x")
}

// TestPendingBatchesSplitTogether writes the same batches split one by one
// and all together (drained at Close), and checks both give every row of
// each partition in input order, with lists, nulls and empty lists, and
// leave nothing allocated; and that Abort lets pending batches go.
func TestPendingBatchesSplitTogether(t *testing.T) {
	var batches []string
	for i := 0; i < 7; i++ {
		batches = append(batches, fmt.Sprintf(`[{"id":"a%d","dim":"x","votes":["v%d",null],"ts":null,"_line":%d},{"id":"b%d","dim":"y","votes":[],"_line":%d},{"id":"c%d","dim":"x","votes":null,"ts":"2024-05-01T10:00:00Z","_line":%d},{"id":"d%d","dim":null,"votes":["w"],"_line":%d}]`, i, i, 4*i+1, i, 4*i+2, i, 4*i+3, i, 4*i+4))
	}
	first := batch(t, memory.DefaultAllocator, batches[0])
	size := arrowx.BatchBytes(first) // the batches are alike
	first.Release()
	rows := map[string]map[string][]string{} // by drain, by file
	for _, drain := range []struct {
		name string
		at   int64
	}{{"each batch", 1}, {"every third batch", 3 * size}, {"at close", 1 << 40}} {
		t.Run(drain.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			root := t.TempDir()
			sink := dimTable(t, root, mem, drain.at)
			files := writeBatches(t, sink, mem, batches...)
			rows[drain.name] = map[string][]string{}
			for _, f := range files {
				_, got := readBack(t, mem, filepath.Join(root, filepath.FromSlash(f.Path)))
				rows[drain.name][f.Path] = got
			}
		})
	}
	one, third, all := rows["each batch"], rows["every third batch"], rows["at close"]
	if len(one) != 3 || len(third) != 3 || len(all) != 3 {
		t.Fatalf("files: %d, %d and %d, want 3 partitions each", len(one), len(third), len(all))
	}
	for p, want := range one {
		if len(want) != 7 && len(want) != 14 {
			t.Errorf("%s: %d rows, want 7 or 14", p, len(want))
		}
		if fmt.Sprint(all[p]) != fmt.Sprint(want) {
			t.Errorf("%s split together:\n%v\nsplit one by one:\n%v", p, all[p], want)
		}
		if fmt.Sprint(third[p]) != fmt.Sprint(want) {
			t.Errorf("%s split every third batch:\n%v\nsplit one by one:\n%v", p, third[p], want)
		}
	}
	if x := one["t/dim=x/part-00000.parquet"]; len(x) != 14 || !strings.Contains(x[0], `"a0"`) || !strings.Contains(x[1], `"c0"`) || !strings.Contains(x[13], `"c6"`) {
		t.Errorf("dim=x rows out of order: %v", x)
	}

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sink := dimTable(t, t.TempDir(), mem, 1<<40)
	for _, js := range batches[:2] {
		b := batch(t, mem, js)
		err := sink.Write(t.Context(), b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(sink.pending) != 2 {
		t.Fatalf("%d batches pending, want 2", len(sink.pending))
	}
	sink.Abort()
}

// dimTable is a table of testSchema partitioned by dim, with the default
// writer, that splits waiting batches once they hold drainAt bytes.
func dimTable(t *testing.T, root string, mem memory.Allocator, drainAt int64) *Table {
	t.Helper()
	sink, err := NewTable(root, "t", testSchema, []string{"dim"}, config.DefaultWriter, mem)
	if err != nil {
		t.Fatal(err)
	}
	sink.drainAt = drainAt // the row groups keep their share of buffer_bytes
	return sink
}

// TestFailedDrainIsNotClosed makes the second partition of a drain fail
// (its folder is a file) after the first was written: Close must fail
// and leave no file, not publish the first partition's rows alone.
func TestFailedDrainIsNotClosed(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "t", "dim=y"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sink := dimTable(t, root, mem, 1)
	b := batch(t, mem, `[{"id":"a","dim":"x","votes":[],"_line":1},{"id":"b","dim":"y","votes":[],"_line":2}]`)
	err := sink.Write(t.Context(), b)
	b.Release()
	if err == nil {
		t.Fatal("Write succeeded with a partition folder that cannot be made")
	}
	b = batch(t, mem, `[{"id":"c","dim":"x","votes":[],"_line":3}]`)
	err = sink.Write(t.Context(), b)
	b.Release()
	if err == nil {
		t.Error("Write after a failed drain succeeded")
	}
	files, err := sink.Close()
	if err == nil || !strings.Contains(err.Error(), "not closed after a failed write") {
		t.Fatalf("Close after a failed drain: %v, %v; want the write's failure", files, err)
	}
	left, _ := os.ReadDir(filepath.Join(root, "t", "dim=x"))
	for _, e := range left {
		t.Errorf("file left after a failed table: %s", e.Name())
	}
}

// TestFileRowGroupsStartsANewFile: a file holds at most file_row_groups
// row groups, whether its row groups fill up by rows or are cut short by
// buffer_bytes, and the files hold every row in order.
func TestFileRowGroupsStartsANewFile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		set      func(w *config.Writer)
		wantRows []int64
	}{
		{"row groups full by rows", func(w *config.Writer) { w.RowGroupRows = 2 }, []int64{4, 4, 2}},
		{"row groups cut by buffer_bytes", func(w *config.Writer) { w.BufferBytes = 1 }, []int64{2, 2, 2, 2, 2}},
		{"limit above the row groups", func(w *config.Writer) { w.RowGroupRows = 2; w.FileRowGroups = 5 }, []int64{10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			root := t.TempDir()
			w := config.DefaultWriter
			w.FileRowGroups = 2
			tc.set(&w)
			sink, err := NewTable(root, "t", testSchema, nil, w, mem)
			if err != nil {
				t.Fatal(err)
			}
			files := writeBatches(t, sink, mem, oneRowBatches(10)...)
			var gotRows []int64
			next := 0
			for _, f := range files {
				p := filepath.Join(root, filepath.FromSlash(f.Path))
				rdr, err := file.OpenParquetFile(p, false)
				if err != nil {
					t.Fatal(err)
				}
				if rdr.NumRowGroups() > int(w.FileRowGroups) {
					t.Errorf("%s: %d row groups, want at most %d", f.Path, rdr.NumRowGroups(), w.FileRowGroups)
				}
				gotRows = append(gotRows, rdr.NumRows())
				rdr.Close()
				_, got := readBack(t, mem, p)
				for _, r := range got {
					if want := fmt.Sprintf(`{"dim":null,"id":"%d","ts":null,"votes":null}`, next); r != want {
						t.Errorf("%s: row %s, want %s", f.Path, r, want)
					}
					next++
				}
			}
			if fmt.Sprint(gotRows) != fmt.Sprint(tc.wantRows) || next != 10 {
				t.Errorf("files hold %v rows (%d in all), want %v", gotRows, next, tc.wantRows)
			}
		})
	}
}

// oneRowBatches returns n batches of one row each, ids "0" to n-1 on
// lines 1 to n.
func oneRowBatches(n int) []string {
	var rows []string
	for i := 0; i < n; i++ {
		rows = append(rows, fmt.Sprintf(`[{"id":"%d","_line":%d}]`, i, i+1))
	}
	return rows
}

// styleSchema is a table of sources partitioned by style.
var styleSchema = arrow.NewSchema([]arrow.Field{
	{Name: "style", Type: arrow.BinaryTypes.String},
	{Name: "source", Type: arrow.BinaryTypes.String},
}, nil)

// styleBatch holds n sources, each in the three styles one after another,
// so that the style partitions hold the same sources in the same order,
// as CrowdRAG-25's responses hold each topic's.
func styleBatch(mem memory.Allocator, n int, source func(i int) string) arrow.RecordBatch {
	bld := array.NewRecordBuilder(mem, styleSchema)
	defer bld.Release()
	for i := 0; i < n; i++ {
		s := source(i)
		for _, style := range []string{"bullet", "essay", "news"} {
			bld.Field(0).(*array.StringBuilder).Append(style)
			bld.Field(1).(*array.StringBuilder).Append(s)
		}
	}
	return bld.NewRecordBatch()
}

// writeTable writes b into a new table "t" in a temporary folder, closes
// it and returns the folder and the files.
func writeTable(t *testing.T, mem memory.Allocator, partitionBy []string, w config.Writer, b arrow.RecordBatch) (string, []FileInfo) {
	t.Helper()
	root := t.TempDir()
	sink, err := NewTable(root, "t", b.Schema(), partitionBy, w, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	files, err := sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	return root, files
}

// writeStyles writes b into a table partitioned by style: three files.
func writeStyles(t *testing.T, mem memory.Allocator, w config.Writer, b arrow.RecordBatch) (string, []FileInfo) {
	t.Helper()
	root, files := writeTable(t, mem, []string{"style"}, w, b)
	if len(files) != 3 {
		t.Fatalf("%d files, want 3", len(files))
	}
	return root, files
}

// TestPartitionsShareDictionaryPages: partitions holding the same texts in
// the same order, in row groups of as many rows, write the same pages, and
// the zstd codec compresses each once for a column in shared_pages, never
// for one that is not. Every row reads back.
func TestPartitionsShareDictionaryPages(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	texts := make([]string, 8)
	for i := range texts {
		texts[i] = string(textPage(20000, uint64(i)))
	}
	b := styleBatch(mem, len(texts), func(i int) string { return texts[i] })
	defer b.Release()
	for _, tc := range []struct {
		name    string
		shared  []string
		minHits int64
	}{
		// The first row groups are written one partition after another:
		// essay's and news's pages are bullet's. The last ones are written
		// as the files close, all at once, so they may all be compressed.
		{"shared", []string{"source"}, 2},
		{"not shared", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := config.DefaultWriter
			w.Dictionary = []string{"source"}
			w.NoStatistics = []string{"source"}
			w.SharedPages = tc.shared
			w.RowGroupRows = 4 // two row groups a partition, four texts each
			hits, misses := zstdCacheCounts(t)
			root, files := writeStyles(t, mem, w, b)
			h, m := zstdCacheCounts(t)
			hits, misses = h-hits, m-misses
			if hits < tc.minHits {
				t.Errorf("%d pages taken from the cache, want at least %d", hits, tc.minHits)
			}
			if tc.shared == nil && hits+misses != 0 {
				t.Errorf("a column not in shared_pages went through the cache: %d hits, %d misses", hits, misses)
			}
			for _, f := range files {
				_, rows := readBack(t, mem, filepath.Join(root, f.Path))
				if len(rows) != len(texts) {
					t.Fatalf("%s: %d rows, want %d", f.Path, len(rows), len(texts))
				}
				for i, r := range rows {
					var row struct{ Source string }
					if err := json.Unmarshal([]byte(r), &row); err != nil {
						t.Fatal(err)
					}
					if row.Source != texts[i] {
						t.Fatalf("%s row %d: source differs", f.Path, i)
					}
				}
			}
		})
	}
}

// zstdCacheCounts returns the pages the registered zstd codec found in its
// cache and those it compressed and added, so far.
func zstdCacheCounts(t *testing.T) (hits, misses int64) {
	t.Helper()
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	cache := &c.(*pageZstd).cache
	cache.mu.Lock()
	defer cache.mu.Unlock()
	return cache.hits, cache.misses
}

// TestSharedPagesSameBytes: data pages (no dictionary) that repeat across
// partitions are taken from the cache, and the files are byte for byte
// those written without shared_pages. arrow-go compresses data pages into
// one buffer it reuses, so a cache keeping that buffer instead of a copy
// of the frame would write another page's frame here.
func TestSharedPagesSameBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := styleBatch(mem, 600, func(i int) string { return string(textPage(100, uint64(i))) })
	defer b.Release()
	sums := map[string]string{}
	for _, shared := range [][]string{nil, {"source"}} {
		w := config.DefaultWriter
		w.SharedPages = shared
		w.RowGroupRows = 600
		w.DataPageBytes = 4 << 10 // 15 pages of 4 KiB a file
		hits, _ := zstdCacheCounts(t)
		_, files := writeStyles(t, mem, w, b)
		if h, _ := zstdCacheCounts(t); shared != nil && h-hits < 10 {
			t.Errorf("%d data pages taken from the cache, want at least 10", h-hits)
		}
		for _, f := range files {
			if s, ok := sums[f.Path]; ok && s != f.SHA256 {
				t.Errorf("%s: shared_pages changed the file", f.Path)
			}
			sums[f.Path] = f.SHA256
		}
	}
}

// TestPartitionValueErrorNamesRow checks that a partition value no
// folder can hold fails the write naming the row's file and line.
func TestPartitionValueErrorNamesRow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "dim", Type: arrow.BinaryTypes.String},
		{Name: pipeline.FileColumn, Type: arrow.BinaryTypes.String},
		{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	long := strings.Repeat("x", 300)
	tests := []struct {
		name, rows, want string
	}{
		{"with its file", `[{"id": "a", "dim": "ok", "_file": "in.jsonl", "_line": 6}, {"id": "b", "dim": "` + long + `", "_file": "in.jsonl", "_line": 7}]`, "in.jsonl:7: bad partition value"},
		// An input of one file has lines but no file column: the error
		// is a pipeline.RowError, whose file the pipeline fills in.
		{"with its line only", `[{"id": "a", "dim": "ok", "_line": 6}, {"id": "b", "dim": "` + long + `", "_line": 7}]`, "line 7: bad partition value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink, err := NewTable(t.TempDir(), "t", schema, []string{"dim"}, config.DefaultWriter, mem)
			if err != nil {
				t.Fatal(err)
			}
			b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(tt.rows))
			if err != nil {
				t.Fatal(err)
			}
			err = sink.Write(t.Context(), b)
			b.Release()
			sink.Abort()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrPartitionValue) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
	t.Run("without file or line", func(t *testing.T) {
		bare := arrow.NewSchema(schema.Fields()[:2], nil)
		sink, err := NewTable(t.TempDir(), "t", bare, []string{"dim"}, config.DefaultWriter, mem)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := array.RecordFromJSON(mem, bare, strings.NewReader(`[{"id": "a", "dim": "ok"}, {"id": "b", "dim": "`+long+`"}]`))
		if err != nil {
			t.Fatal(err)
		}
		err = sink.Write(t.Context(), b)
		b.Release()
		sink.Abort()
		if err == nil || !strings.Contains(err.Error(), "row 2: bad partition value") || !errors.Is(err, ErrPartitionValue) {
			t.Errorf("error %v, want it to name row 2", err)
		}
	})
}

// TestTableWithoutRows: an unpartitioned table that gets no row (every
// row rejected, an empty input) still writes its one file, with the
// schema and no rows, which DuckDB-style globs of the folder find; a
// partitioned one has no folder to put it in and writes none.
func TestTableWithoutRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := t.TempDir()
	sink, err := NewTable(root, "t", testSchema, nil, config.DefaultWriter, mem)
	if err != nil {
		t.Fatal(err)
	}
	files, err := sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "t/part-00000.parquet" || files[0].Rows != 0 {
		t.Fatalf("files %+v, want t/part-00000.parquet with 0 rows", files)
	}
	rdr, err := file.OpenParquetFile(filepath.Join(root, "t", "part-00000.parquet"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if rdr.NumRows() != 0 || sc.NumFields() != testSchema.NumFields()-countHidden(testSchema) {
		t.Errorf("%d rows, schema %s; want 0 rows and the table's columns", rdr.NumRows(), sc)
	}

	part, err := NewTable(t.TempDir(), "t", testSchema, []string{"dim"}, config.DefaultWriter, mem)
	if err != nil {
		t.Fatal(err)
	}
	if files, err := part.Close(); err != nil || len(files) != 0 {
		t.Errorf("partitioned: files %+v, err %v; want none", files, err)
	}
}

// countHidden counts the columns of s the writers leave out (_file,
// _line).
func countHidden(s *arrow.Schema) int {
	n := 0
	for _, f := range s.Fields() {
		if strings.HasPrefix(f.Name, "_") {
			n++
		}
	}
	return n
}

// TestReleaseFollowsASymlink: out/<dataset> as a symbolic link to a
// folder elsewhere (a release kept on another disk) gets the new release
// where it points, the link kept; it used to be swapped for a real
// folder, and the storage it pointed to kept the old release. A link to a
// folder not made yet is followed too.
func TestReleaseFollowsASymlink(t *testing.T) {
	for _, made := range []bool{true, false} {
		t.Run(fmt.Sprintf("made=%v", made), func(t *testing.T) {
			out, store := t.TempDir(), t.TempDir()
			real := filepath.Join(store, "ds-kept")
			if made {
				os.MkdirAll(real, 0o755)
				os.WriteFile(filepath.Join(real, "_SUCCESS"), nil, 0o644)
				os.WriteFile(filepath.Join(real, "old.txt"), []byte("old"), 0o644)
			}
			if err := os.Symlink(real, filepath.Join(out, "ds")); err != nil {
				t.Fatal(err)
			}
			r, err := NewRelease(nil, out, "ds")
			if err != nil {
				t.Fatal(err)
			}
			if err := r.WriteFile("new.txt", []byte("new")); err != nil {
				t.Fatal(err)
			}
			if err := r.Publish(); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(filepath.Join(out, "ds")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the link is gone: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(real, "new.txt")); err != nil || string(b) != "new" {
				t.Errorf("the new release is not where the link points: %q %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(real, "old.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the old release is still there: %v", err)
			}
			for _, dir := range []string{out, store} {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), ".agora-") && !strings.HasSuffix(e.Name(), ".lock") {
						t.Errorf("left in %s: %s", dir, e.Name())
					}
				}
			}
		})
	}
}

// syncRecorder records the folders synced.
type syncRecorder struct {
	OS
	synced []string
}

func (s *syncRecorder) SyncDir(dir string) error {
	s.synced = append(s.synced, dir)
	return s.OS.SyncDir(dir)
}

// TestPublishSyncsEveryFolder: the folders files were renamed into (a
// table's partitions, its rejects) are synced before the swap, the
// staging folder last among them; only the top ones were.
func TestPublishSyncsEveryFolder(t *testing.T) {
	out := t.TempDir()
	fs := &syncRecorder{}
	r, err := NewRelease(fs, out, "ds")
	if err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(r.Dir(), "t", "k=a")
	os.MkdirAll(part, 0o755)
	os.WriteFile(filepath.Join(part, "part-00000.parquet"), nil, 0o644)
	if err := r.Publish(); err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(out, ".agora-staging-ds")
	want := []string{filepath.Join(staging, "t", "k=a"), filepath.Join(staging, "t"), staging, out}
	if !slices.Equal(fs.synced, want) {
		t.Errorf("synced %q, want %q", fs.synced, want)
	}
}

// TestReleaseLinkedTwiceIsLocked: two outputs whose out/<dataset> links
// to one folder do not stage into one place at once: the second run is
// refused while the first holds the folder; once it published, the
// second goes ahead.
func TestReleaseLinkedTwiceIsLocked(t *testing.T) {
	real := filepath.Join(t.TempDir(), "ds")
	os.MkdirAll(real, 0o755)
	outs := []string{t.TempDir(), t.TempDir()}
	for _, o := range outs {
		if err := os.Symlink(real, filepath.Join(o, "ds")); err != nil {
			t.Fatal(err)
		}
	}
	first, err := NewRelease(nil, outs[0], "ds")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRelease(nil, outs[1], "ds"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second output: err = %v, want ErrLocked", err)
	}
	if _, err := Recover(nil, outs[1], "ds"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second output's recovery: err = %v, want ErrLocked", err)
	}
	if err := first.Publish(); err != nil {
		t.Fatal(err)
	}
	second, err := NewRelease(nil, outs[1], "ds")
	if err != nil {
		t.Fatalf("after the first published: %v", err)
	}
	second.Abort()
	if _, err := Recover(nil, outs[0], "ds"); err != nil {
		t.Fatalf("after the second aborted: %v", err)
	}
}

// TestStaleAsideMatchesItsDatasetOnly: the folders set aside for one
// dataset are found in an output whose path has glob characters, and
// another dataset's (habermas-v2 beside habermas) are not.
func TestStaleAsideMatchesItsDatasetOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out[1]*")
	for _, d := range []string{".agora-stale-habermas-17", ".agora-stale-habermas-v2-18", ".agora-stale-habermas-", ".agora-staging-habermas"} {
		os.MkdirAll(filepath.Join(out, d), 0o755)
	}
	got := staleAside(out, "habermas")
	if want := []string{filepath.Join(out, ".agora-stale-habermas-17")}; !slices.Equal(got, want) {
		t.Errorf("staleAside = %q, want %q", got, want)
	}
}
