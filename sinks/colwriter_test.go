package sinks

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/config"
)

// randArray appends n random values of dt to b: about one null in
// nullEvery (none when 0), lists of 0 to 4 elements, words from a small
// vocabulary (so that dictionaries repeat) with a long tail.
func randArray(rng *rand.Rand, b array.Builder, n, nullEvery int) {
	for i := 0; i < n; i++ {
		if nullEvery > 0 && rng.IntN(nullEvery) == 0 {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.StringBuilder:
			if rng.IntN(4) == 0 {
				b.Append(fmt.Sprintf("rare %d %s", rng.Uint64(), strings.Repeat("x", rng.IntN(300))))
			} else {
				b.Append(fmt.Sprintf("word %d %s", rng.IntN(50), strings.Repeat("long text ", rng.IntN(40))))
			}
		case *array.Int64Builder:
			b.Append(rng.Int64N(1000) - 500)
		case *array.Int32Builder:
			b.Append(rng.Int32N(100))
		case *array.Float64Builder:
			b.Append(rng.Float64())
		case *array.BooleanBuilder:
			b.Append(rng.IntN(2) == 0)
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(rng.Int64N(1 << 40)))
		case *array.Date32Builder:
			b.Append(arrow.Date32(rng.Int32N(20000)))
		case *array.MapBuilder:
			k := rng.IntN(4)
			b.Append(true)
			for j := 0; j < k; j++ {
				b.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprintf("k%d", j))
				randArray(rng, b.ItemBuilder(), 1, nullEvery)
			}
		case array.ListLikeBuilder:
			k := rng.IntN(5)
			b.Append(true)
			randArray(rng, b.ValueBuilder(), k, nullEvery)
		case *array.StructBuilder:
			b.Append(true)
			for f := 0; f < b.NumField(); f++ {
				randArray(rng, b.FieldBuilder(f), 1, nullEvery)
			}
		default:
			panic(fmt.Sprintf("randArray: no case for %T", b))
		}
	}
}

// colwriterSchema holds every kind of column the column-parallel writer
// walks: flat types, lists, lists of lists, structs, maps, large lists,
// and a field that is not nullable.
var colwriterSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "words", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "nums", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "grid", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float64)), Nullable: true},
	{Name: "ids", Type: arrow.ListOf(arrow.ListOf(arrow.BinaryTypes.String)), Nullable: true},
	{Name: "meta", Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	), Nullable: true},
	{Name: "tags", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "big", Type: arrow.LargeListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "items", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32), Nullable: true},
}, nil)

// randBatch builds n random rows of schema.
func randBatch(rng *rand.Rand, mem memory.Allocator, schema *arrow.Schema, n, nullEvery int) arrow.RecordBatch {
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for i, f := range schema.Fields() {
		ne := nullEvery
		if !f.Nullable {
			ne = 0
		}
		randArray(rng, rb.Field(i), n, ne)
	}
	return rb.NewRecordBatch()
}

// writeBoth writes the same row groups through pqarrow's FileWriter and
// through newRowGroupWriter, and returns both files.
func writeBoth(t *testing.T, mem memory.Allocator, schema *arrow.Schema, w config.Writer, groups [][]arrow.RecordBatch) (want, got []byte) {
	t.Helper()
	props, arrowProps := writerProps(w, schema, mem)
	var a, b bytes.Buffer
	pw, err := pqarrow.NewFileWriter(schema, &a, props, arrowProps)
	if err != nil {
		t.Fatal(err)
	}
	writeGroups(t, pqarrowWriter{pw, schema}, groups)
	cw, err := newRowGroupWriter(schema, &b, props, arrowProps, "arrow-go")
	if err != nil {
		t.Fatal(err)
	}
	writeGroups(t, cw, groups)
	return a.Bytes(), b.Bytes()
}

// writeGroups writes each group as a row group and closes rw.
func writeGroups(tb testing.TB, rw rowGroupWriter, groups [][]arrow.RecordBatch) {
	tb.Helper()
	for _, g := range groups {
		if err := rw.WriteRowGroup(g); err != nil {
			tb.Fatal(err)
		}
	}
	if err := rw.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestColumnsWriterSameBytes: the column-parallel writer makes the file
// pqarrow makes, byte for byte, for every kind of column, with nulls
// everywhere or nowhere, several batches and slices per row group,
// dictionaries (whose pages it compresses ahead), no statistics and
// shared pages.
func TestColumnsWriterSameBytes(t *testing.T) {
	leafs := func(cols ...string) []string { return cols }
	cases := []struct {
		name      string
		nullEvery int
		rows      []int // rows per batch; a row group is 3 batches
		slice     bool  // write slices of the batches (offsets not 0)
		w         func(*config.Writer)
	}{
		{name: "nulls", nullEvery: 5, rows: []int{40, 1, 300}},
		{name: "no nulls", rows: []int{200, 50, 7}},
		{name: "mostly nulls", nullEvery: 2, rows: []int{64, 64, 64}},
		{name: "slices", nullEvery: 6, rows: []int{120, 90, 33}, slice: true},
		{name: "dictionaries", nullEvery: 7, rows: []int{500, 700, 300}, w: func(w *config.Writer) {
			w.Dictionary = leafs("text", "words", "ids", "meta", "n")
		}},
		{name: "no statistics, small pages", nullEvery: 4, rows: []int{300, 10, 200}, w: func(w *config.Writer) {
			w.NoStatistics = leafs("text", "grid", "tags")
			w.DataPageBytes = 4 << 10
		}},
		{name: "shared pages", nullEvery: 9, rows: []int{400, 400, 400}, w: func(w *config.Writer) {
			w.Dictionary = leafs("text", "words")
			w.SharedPages = leafs("text", "words", "id")
		}},
		// A page after every 128 values (arrow-go's batch): the last page
		// of the flat columns ends with the row group, leaving none to flush.
		{name: "pages end with the row group", rows: []int{128, 256, 128}, w: func(w *config.Writer) {
			w.DataPageBytes = 1
		}},
		{name: "snappy", nullEvery: 3, rows: []int{100, 100, 100}, w: func(w *config.Writer) {
			w.Compression = "snappy"
			w.Dictionary = leafs("text")
		}},
	}
	for _, tc := range cases {
		for _, mode := range []string{"parallel", "serial"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				if mode == "parallel" {
					withParallelMin(t, 0)
				} else {
					withParallelMin(t, 1<<62)
				}
				testSameBytes(t, tc.nullEvery, tc.rows, tc.slice, tc.w)
			})
		}
	}
}

// testSameBytes writes two row groups of three random batches of
// colwriterSchema through both writers and compares the files.
func testSameBytes(t *testing.T, nullEvery int, rows []int, slice bool, setW func(*config.Writer)) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, uint64(len(rows))+uint64(nullEvery)))
	w := config.DefaultWriter
	if setW != nil {
		setW(&w)
	}
	groups := randGroups(rng, mem, 2, rows, nullEvery, slice)
	defer releaseGroups(groups)
	want, got := writeBoth(t, mem, colwriterSchema, w, groups)
	if !bytes.Equal(want, got) {
		t.Fatalf("files differ: pqarrow wrote %d bytes, the column-parallel writer %d (first difference at byte %d)", len(want), len(got), firstDiff(want, got))
	}
}

// randGroups builds n row groups of random colwriterSchema batches, one
// batch of each size in rows; with slice, each batch of more than 4 rows
// is cut to a slice that starts at row 2 (an offset not 0).
func randGroups(rng *rand.Rand, mem memory.Allocator, n int, rows []int, nullEvery int, slice bool) [][]arrow.RecordBatch {
	return randGroupsOf(rng, mem, colwriterSchema, n, rows, nullEvery, slice)
}

// releaseGroups releases every batch of groups.
func releaseGroups(groups [][]arrow.RecordBatch) {
	for _, g := range groups {
		for _, b := range g {
			b.Release()
		}
	}
}

// withParallelMin sets parallelMin for the test.
func withParallelMin(t *testing.T, n int64) {
	old := parallelMin
	parallelMin = n
	t.Cleanup(func() { parallelMin = old })
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestLevels checks the levels of a list of lists by hand: a null list,
// an empty list, an empty inner list, a null inner list, null elements.
func TestLevels(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rows := `[{"g": [[1, null], []], "s": "a"}, {"g": null, "s": null}, {"g": [], "s": "b"}, {"g": [null, [2]], "s": "c"}]`
	b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	paths, err := pathsToLeaves(schema)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 {
		t.Fatalf("%d leaves, want 2", len(paths))
	}
	var sc levelScratch
	lv, err := paths[0].levels(b.Column(0), &sc)
	if err != nil {
		t.Fatal(err)
	}
	defer lv.values.Release()
	// Max definition level 5: list (1), its repeated group (2), inner
	// list (3), its repeated group (4), element (5).
	wantDef := []int16{5, 4, 3, 0, 1, 2, 5}
	wantRep := []int16{0, 2, 1, 0, 0, 0, 1}
	if fmt.Sprint(lv.def) != fmt.Sprint(wantDef) || fmt.Sprint(lv.rep) != fmt.Sprint(wantRep) {
		t.Errorf("levels def %v rep %v, want def %v rep %v", lv.def, lv.rep, wantDef, wantRep)
	}
	if lv.values.Len() != 3 || !lv.nullable {
		t.Errorf("%d leaf values (nullable %v), want 3 (1, null, 2), nullable", lv.values.Len(), lv.nullable)
	}
	lv2, err := paths[1].levels(b.Column(1), &sc)
	if err != nil {
		t.Fatal(err)
	}
	defer lv2.values.Release()
	if fmt.Sprint(lv2.def) != "[1 0 1 1]" || lv2.rep != nil {
		t.Errorf("flat levels def %v rep %v, want [1 0 1 1] and none", lv2.def, lv2.rep)
	}
}

// TestListLevelsAsVisit: the one-loop levels of a list of leaves, and of
// a list of lists of leaves, are those the general walk gives, for lists
// and large lists, nullable or not, with nullable and required values,
// nulls at every level or none, and slices that start past the first row.
func TestListLevelsAsVisit(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name      string
		field     arrow.Field
		nullEvery int
	}{
		{"strings with nulls", arrow.Field{Name: "c", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}, 5},
		{"strings without nulls", arrow.Field{Name: "c", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}, 0},
		{"required list", arrow.Field{Name: "c", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}, 4},
		{"required values", arrow.Field{Name: "c", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32), Nullable: true}, 3},
		{"large list", arrow.Field{Name: "c", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Float64), Nullable: true}, 6},
		{"list of lists with nulls", arrow.Field{Name: "c", Type: arrow.ListOf(arrow.ListOf(arrow.BinaryTypes.String)), Nullable: true}, 4},
		{"list of lists without nulls", arrow.Field{Name: "c", Type: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float64)), Nullable: true}, 0},
		{"list of required lists", arrow.Field{Name: "c", Type: arrow.ListOfNonNullable(arrow.ListOf(arrow.PrimitiveTypes.Int64)), Nullable: true}, 3},
		{"required list of lists of required values", arrow.Field{Name: "c", Type: arrow.ListOf(arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32))}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{tc.field}, nil)
			b := randBatch(rng, mem, schema, 300, tc.nullEvery)
			defer b.Release()
			paths, err := pathsToLeaves(schema)
			if err != nil {
				t.Fatal(err)
			}
			p := paths[0]
			if !p.isListOfLeaf() && !p.isListOfListOfLeaf() {
				t.Fatal("the path is not one of the shapes with a loop of their own")
			}
			for _, sl := range [][2]int64{{0, 300}, {17, 300}, {40, 41}, {123, 260}} {
				col := array.NewSlice(b.Column(0), sl[0], sl[1])
				var fast, slow levelScratch
				lv, err := p.levels(col, &fast)
				if err != nil {
					t.Fatal(err)
				}
				p.visitRows(col, &slow)
				if fmt.Sprint(fast.def) != fmt.Sprint(slow.def) || fmt.Sprint(fast.rep) != fmt.Sprint(slow.rep) {
					t.Errorf("rows %v: levels def %v rep %v, the walk gives def %v rep %v", sl, fast.def, fast.rep, slow.def, slow.rep)
				}
				if fast.lo != slow.lo || fast.hi != slow.hi || fast.gap != slow.gap || fast.seen != slow.seen {
					t.Errorf("rows %v: values %d..%d (gap %v), the walk gives %d..%d (gap %v)", sl, fast.lo, fast.hi, fast.gap, slow.lo, slow.hi, slow.gap)
				}
				lv.values.Release()
				col.Release()
			}
		})
	}
}

// TestRowGroupWriterFallsBack: a schema with a type the column-parallel
// writer does not walk is written by pqarrow, whole.
func TestRowGroupWriterFallsBack(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[{"id": "a", "v": [1, 2]}, {"id": null, "v": null}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if _, err := pathsToLeaves(schema); err == nil {
		t.Fatal("pathsToLeaves walks a fixed-size list; pick another type for this test")
	}
	rw := newTestRowGroupWriter(t, schema, mem)
	if _, ok := rw.(pqarrowWriter); !ok {
		t.Fatalf("writer is %T, want pqarrowWriter", rw)
	}
	want, got := writeBoth(t, mem, schema, config.DefaultWriter, [][]arrow.RecordBatch{{b}})
	if !bytes.Equal(want, got) {
		t.Fatalf("files differ at byte %d", firstDiff(want, got))
	}
	rw.Close()
}

// TestColumnsWriterPrimesDictionaries: large dictionary pages are
// compressed by the column's goroutine and taken when the row group
// closes; none is left behind.
func TestColumnsWriterPrimesDictionaries(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	z := zstdCodec(t)
	withParallelMin(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rng := rand.New(rand.NewPCG(7, 7))
	b := randBatch(rng, mem, schema, 2000, 0)
	defer b.Release()
	w := config.DefaultWriter
	w.Dictionary = []string{"text"}
	before := z.primedHits()
	want, got := writeBoth(t, mem, schema, w, [][]arrow.RecordBatch{{b}, {b}})
	if !bytes.Equal(want, got) {
		t.Fatalf("files differ at byte %d", firstDiff(want, got))
	}
	if hits := z.primedHits() - before; hits != 2 {
		t.Errorf("%d dictionary pages taken from those compressed ahead, want 2 (one per row group)", hits)
	}
	if n := z.primed.n.Load(); n != 0 {
		t.Errorf("%d pages compressed ahead left behind", n)
	}
}

// zstdCodec returns the registered zstd codec, ours.
func zstdCodec(t *testing.T) *pageZstd {
	t.Helper()
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	z, ok := c.(*pageZstd)
	if !ok {
		t.Fatalf("zstd codec is %T, not pageZstd", c)
	}
	return z
}

// primedHits counts the pages taken from those compressed ahead.
func (z *pageZstd) primedHits() int64 {
	z.primed.mu.Lock()
	defer z.primed.mu.Unlock()
	return z.primed.hits
}

// TestBufferedValuesReadable: the count of levels waiting for a page is
// found in this arrow-go's column writers, and follows what is written.
func TestBufferedValuesReadable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[{"s": "a", "n": 1, "b": true}, {"s": null, "n": null, "b": null}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	rw := newTestRowGroupWriter(t, schema, mem)
	c := rw.(*columnsWriter)
	rg, err := c.wr.AppendBufferedRowGroupChecked()
	if err != nil {
		t.Fatal(err)
	}
	ctx := pqarrow.NewArrowWriteContext(context.Background(), &c.arrowProps)
	var sc levelScratch
	for i := range c.leaves {
		cw, err := rg.Column(i)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := bufferedValues(cw); !ok || n != 0 {
			t.Fatalf("%s: %d buffered before writing (found %v), want 0, found", cw.Descr().Path(), n, ok)
		}
		lv, err := c.leaves[i].levels(b.Column(i), &sc)
		if err != nil {
			t.Fatal(err)
		}
		err = pqarrow.WriteArrowToColumn(ctx, cw, lv.values, lv.def, lv.rep, lv.nullable)
		lv.values.Release()
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := bufferedValues(cw); !ok || n != 2 {
			t.Errorf("%s: %d buffered after 2 rows (found %v), want 2", cw.Descr().Path(), n, ok)
		}
	}
	if err := rg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestColumnsWriterFailedRowGroup: a column that cannot be written (a null
// list that still spans values) fails the row group, serial or parallel,
// with the column's path; closing the abandoned writer afterwards gives
// back every buffer the other columns had taken.
func TestColumnsWriterFailedRowGroup(t *testing.T) {
	for _, tc := range []struct {
		name        string
		parallelMin int64
	}{{"serial", 1 << 40}, {"parallel", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			withParallelMin(t, tc.parallelMin)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
				{Name: "v", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
				{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			}, nil)
			b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[{"id": "a", "v": ["x"], "n": 1}, {"id": "b", "v": ["y"], "n": 2}, {"id": "c", "v": ["z"], "n": 3}]`))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Release()
			// Row 1's list made null without emptying it: its value stays
			// between those of rows 0 and 2.
			v := b.Column(1).Data()
			valid := memory.NewResizableBuffer(mem)
			valid.Resize(1)
			valid.Bytes()[0] = 0b101
			defer valid.Release()
			bad := array.NewData(v.DataType(), v.Len(), []*memory.Buffer{valid, v.Buffers()[1]}, v.Children(), 1, 0)
			defer bad.Release()
			badList := array.MakeFromData(bad)
			defer badList.Release()
			bb := array.NewRecordBatch(schema, []arrow.Array{b.Column(0), badList, b.Column(2)}, b.NumRows())
			defer bb.Release()

			rw := newTestRowGroupWriter(t, schema, mem)
			err = rw.WriteRowGroup([]arrow.RecordBatch{bb})
			if err == nil || !strings.Contains(err.Error(), "v.list.element") || !strings.Contains(err.Error(), "non-zero length null") {
				t.Errorf("WriteRowGroup error = %v, want the column's path and the null list", err)
			}
			rw.Close()
		})
	}
}

// newTestRowGroupWriter is the row group writer a file with schema and
// the default writer settings gets, writing to a buffer.
func newTestRowGroupWriter(t *testing.T, schema *arrow.Schema, mem memory.Allocator) rowGroupWriter {
	t.Helper()
	props, arrowProps := writerProps(config.DefaultWriter, schema, mem)
	rw, err := newRowGroupWriter(schema, new(bytes.Buffer), props, arrowProps, "arrow-go")
	if err != nil {
		t.Fatal(err)
	}
	return rw
}
