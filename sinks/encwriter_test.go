package sinks

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/pqenc"
)

// encoderSchema is colwriterSchema with microsecond timestamps, the unit
// agora's encoder writes (pqarrow would convert others), and without
// "items", whose non-nullable elements randBatch fills with nulls: a file
// arrow-go writes of that reads back as an array that cannot be
// concatenated, so it is no reference to compare with.
var encoderSchema = func() *arrow.Schema {
	var fields []arrow.Field
	for _, f := range colwriterSchema.Fields() {
		switch f.Name {
		case "ts":
			f.Type = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		case "items":
			continue
		}
		fields = append(fields, f)
	}
	return arrow.NewSchema(fields, nil)
}()

// TestEncoderReadsBackAsArrowGo: a file written by agora's own encoder
// reads back, through arrow-go's reader, as the same table as the file
// arrow-go's column writers make of the same row groups, with the same
// schema, row groups, value counts and statistics (minimum, maximum,
// null count), for every kind of column, nulls everywhere or nowhere,
// slices, dictionaries, small pages, no statistics and snappy.
func TestEncoderReadsBackAsArrowGo(t *testing.T) {
	leafs := func(cols ...string) []string { return cols }
	cases := []struct {
		name      string
		nullEvery int
		rows      []int
		slice     bool
		w         func(*config.Writer)
	}{
		{name: "nulls", nullEvery: 5, rows: []int{40, 1, 300}},
		{name: "no nulls", rows: []int{200, 50, 7}},
		{name: "mostly nulls", nullEvery: 2, rows: []int{64, 64, 64}},
		{name: "slices", nullEvery: 6, rows: []int{120, 90, 33}, slice: true},
		{name: "dictionaries", nullEvery: 7, rows: []int{500, 700, 300}, w: func(w *config.Writer) {
			w.Dictionary = leafs("text", "words", "ids", "meta.b", "big")
		}},
		{name: "no statistics, small pages", nullEvery: 4, rows: []int{300, 10, 200}, w: func(w *config.Writer) {
			w.NoStatistics = leafs("text", "grid", "tags")
			w.DataPageBytes = 4 << 10
		}},
		{name: "one value a page", rows: []int{128, 256, 128}, w: func(w *config.Writer) {
			w.DataPageBytes = 1
			w.Dictionary = leafs("words")
		}},
		{name: "shared pages", nullEvery: 9, rows: []int{400, 400, 400}, w: func(w *config.Writer) {
			w.Dictionary = leafs("text", "words")
			w.SharedPages = leafs("text", "words", "id")
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
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rng := rand.New(rand.NewPCG(7, uint64(len(tc.rows))+uint64(tc.nullEvery)))
				w := config.DefaultWriter
				if tc.w != nil {
					tc.w(&w)
				}
				groups := randGroupsOf(rng, mem, encoderSchema, 2, tc.rows, tc.nullEvery, tc.slice)
				defer releaseGroups(groups)
				props, arrowProps := writerProps(w, encoderSchema, mem)
				var want, got bytes.Buffer
				aw, err := newRowGroupWriter(encoderSchema, &want, props, arrowProps, "arrow-go")
				if err != nil {
					t.Fatal(err)
				}
				writeGroups(t, aw, groups)
				ew, err := newRowGroupWriter(encoderSchema, &got, props, arrowProps, "agora")
				if err != nil {
					t.Fatal(err)
				}
				enc, ok := ew.(*encWriter)
				if !ok {
					t.Fatalf("writer.encoder agora gave %T, not agora's encoder", ew)
				}
				if mode == "parallel" {
					enc.workers = 2 // whatever GOMAXPROCS the test runs with
				}
				writeGroups(t, ew, groups)
				sameParquet(t, mem, want.Bytes(), got.Bytes())
			})
		}
	}
}

// randGroupsOf builds n row groups of random batches of schema, one
// batch of each size in rows; with slice, each batch of more than 4 rows
// is cut to a slice that starts at row 2 (an offset not 0).
func randGroupsOf(rng *rand.Rand, mem memory.Allocator, schema *arrow.Schema, n int, rows []int, nullEvery int, slice bool) [][]arrow.RecordBatch {
	var groups [][]arrow.RecordBatch
	for range n {
		var batches []arrow.RecordBatch
		for _, k := range rows {
			b := randBatch(rng, mem, schema, k, nullEvery)
			if slice && k > 4 {
				s := b.NewSlice(2, int64(k-1))
				b.Release()
				b = s
			}
			batches = append(batches, b)
		}
		groups = append(groups, batches)
	}
	return groups
}

// sameParquet fails unless the two files read back as equal tables with
// equal footers: schema, key-value metadata, row groups, and each column
// chunk's value count, codec and statistics.
func sameParquet(t *testing.T, mem memory.Allocator, want, got []byte) {
	t.Helper()
	read := func(b []byte) (arrow.Table, *metadata.FileMetaData) {
		r, err := file.NewParquetReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, mem)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return tbl, r.MetaData()
	}
	wt, wm := read(want)
	defer wt.Release()
	gt, gm := read(got)
	defer gt.Release()
	if wt.NumRows() != gt.NumRows() || wt.NumCols() != gt.NumCols() {
		t.Fatalf("%d rows, %d columns; want %d, %d", gt.NumRows(), gt.NumCols(), wt.NumRows(), wt.NumCols())
	}
	for c := range int(wt.NumCols()) {
		if !columnsEqual(wt.Column(c).Data(), gt.Column(c).Data()) {
			t.Errorf("column %s differs:\narrow-go: %v\nagora:    %v", wt.Schema().Field(c).Name, wt.Column(c).Data(), gt.Column(c).Data())
		}
	}
	if !wm.Schema.Equals(gm.Schema) {
		t.Fatalf("schemas differ:\n%s\n%s", wm.Schema, gm.Schema)
	}
	if !slices.Equal(wm.KeyValueMetadata().Keys(), gm.KeyValueMetadata().Keys()) || !slices.Equal(wm.KeyValueMetadata().Values(), gm.KeyValueMetadata().Values()) || wm.GetCreatedBy() != gm.GetCreatedBy() {
		t.Fatal("key-value metadata or created_by differ")
	}
	if wm.NumRowGroups() != gm.NumRowGroups() || wm.NumRows != gm.NumRows {
		t.Fatalf("%d row groups of %d rows, want %d of %d", gm.NumRowGroups(), gm.NumRows, wm.NumRowGroups(), wm.NumRows)
	}
	for g := range wm.NumRowGroups() {
		wr, gr := wm.RowGroup(g), gm.RowGroup(g)
		for c := range wr.NumColumns() {
			wc, _ := wr.ColumnChunk(c)
			gc, _ := gr.ColumnChunk(c)
			path := wc.PathInSchema().String()
			if wc.NumValues() != gc.NumValues() || wc.Compression() != gc.Compression() || wc.HasDictionaryPage() != gc.HasDictionaryPage() {
				t.Errorf("row group %d column %s: %d values, %s, dictionary %t; want %d, %s, %t", g, path, gc.NumValues(), gc.Compression(), gc.HasDictionaryPage(), wc.NumValues(), wc.Compression(), wc.HasDictionaryPage())
			}
			ws, werr := wc.StatsSet()
			gs, gerr := gc.StatsSet()
			if werr != nil || gerr != nil || ws != gs {
				t.Errorf("row group %d column %s: statistics set %t, want %t", g, path, gs, ws)
				continue
			}
			if !ws {
				continue
			}
			we, _ := wc.Statistics()
			ge, _ := gc.Statistics()
			wenc, _ := we.Encode()
			genc2, _ := ge.Encode()
			if wenc.HasNullCount != genc2.HasNullCount || wenc.NullCount != genc2.NullCount || wenc.HasMin != genc2.HasMin || wenc.HasMax != genc2.HasMax || !bytes.Equal(wenc.Min, genc2.Min) || !bytes.Equal(wenc.Max, genc2.Max) {
				t.Errorf("row group %d column %s: statistics %+v, want %+v", g, path, genc2, wenc)
			}
		}
	}
}

// TestEncoderFallsBack: a schema with a type agora's encoder does not
// write (milliseconds, which pqarrow converts) is written through
// arrow-go's column writers instead.
func TestEncoderFallsBack(t *testing.T) {
	props, arrowProps := writerProps(config.DefaultWriter, colwriterSchema, memory.DefaultAllocator)
	rw, err := newRowGroupWriter(colwriterSchema, new(bytes.Buffer), props, arrowProps, "agora")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rw.(*columnsWriter); !ok {
		t.Fatalf("got %T, want arrow-go's column-parallel writer", rw)
	}
	leaves, _ := pathsToLeaves(colwriterSchema)
	if _, err := newEncWriter(colwriterSchema, leaves, new(bytes.Buffer), props, arrowProps); !errors.Is(err, pqenc.ErrUnsupported) {
		t.Fatalf("newEncWriter: %v, want ErrUnsupported", err)
	}
}

// columnsEqual compares two chunked columns value by value, a row at a
// time, so that differing layouts of equal values compare equal.
func columnsEqual(a, b *arrow.Chunked) bool {
	x, err := array.Concatenate(a.Chunks(), memory.DefaultAllocator)
	if err != nil {
		return false
	}
	defer x.Release()
	y, err := array.Concatenate(b.Chunks(), memory.DefaultAllocator)
	if err != nil {
		return false
	}
	defer y.Release()
	if x.Len() != y.Len() {
		return false
	}
	for i := range x.Len() {
		if x.IsNull(i) != y.IsNull(i) || x.ValueStr(i) != y.ValueStr(i) {
			return false
		}
	}
	return true
}

// TestEncoderPanicIsAnError: a panic while a column is encoded (here in
// its codec) is an error naming the column, serial or column-parallel,
// and when two columns fail it is the lower column's, run after run; the
// encoders that failed go back to the pool clean, so a file written next
// is the same as before.
func TestEncoderPanicIsAnError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(5, 5))
	groups := randGroupsOf(rng, mem, encoderSchema, 1, []int{300, 200}, 4, false)
	defer releaseGroups(groups)
	props, arrowProps := writerProps(config.DefaultWriter, encoderSchema, mem)
	clean := func() []byte {
		var b bytes.Buffer
		rw, err := newRowGroupWriter(encoderSchema, &b, props, arrowProps, "agora")
		if err != nil {
			t.Fatal(err)
		}
		writeGroups(t, rw, groups)
		return b.Bytes()
	}
	want := clean()
	for _, mode := range []string{"parallel", "serial"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "parallel" {
				withParallelMin(t, 0)
			} else {
				withParallelMin(t, 1<<62)
			}
			for range 20 {
				rw, err := newRowGroupWriter(encoderSchema, new(bytes.Buffer), props, arrowProps, "agora")
				if err != nil {
					t.Fatal(err)
				}
				ew := rw.(*encWriter)
				ew.workers = 2
				for _, i := range []int{2, 5} {
					ew.cols[i].Compress = func(dst, src []byte) []byte { panic("boom") }
				}
				err = ew.WriteRowGroup(groups[0])
				if err == nil || !strings.Contains(err.Error(), "column "+ew.fw.ColumnPath(2)+": internal error encoding it: boom") {
					t.Fatalf("got %v, want column %s's panic as an error", err, ew.fw.ColumnPath(2))
				}
			}
			if got := clean(); !bytes.Equal(got, want) {
				t.Fatal("a file written after the failed ones differs from one written before")
			}
		})
	}
}
