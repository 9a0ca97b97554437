package stages

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/pipeline"
)

func TestConformShapes(t *testing.T) {
	tests := []struct {
		name, have, in, want, out string
		errRow                    int // with err
		err                       string
	}{
		{name: "a list of one value repeated, as that value", have: "list<string>", in: `[["a","a"],[],null,["b"],[null,null]]`, want: "string", out: `["a",null,null,"b",null]`},
		{name: "a list whose values differ stops at its row", have: "list<string>", in: `[["a"],["b"],["a","c"]]`, want: "string", errRow: 2, err: `the file has list<item: utf8, nullable>, want utf8: the row's list holds values that differ ("a" and "c"); declare the column as a list`},
		{name: "a value where a list is declared, as a list of one", have: "string", in: `["a",null,"b"]`, want: "list<string>", out: `[["a"],null,["b"]]`},
		{name: "a value converted too", have: "int64", in: `[1,null,2]`, want: "list<float64>", out: `[[1],null,[2]]`},
		{name: "one level less nested", have: "list<float64>", in: `[[1,2],null,[],[3]]`, want: "list<list<float64>>", out: `[[[1],[2]],null,[],[[3]]]`},
		{name: "one level more nested", have: "list<list<float64>>", in: `[[[1,1],[2]],[[3]],[[]]]`, want: "list<float64>", out: `[[1,2],[3],[null]]`},
		{name: "inner values that differ name their row", have: "list<list<float64>>", in: `[[[1]],[[2],[3,4]]]`, want: "list<float64>", errRow: 1, err: `values that differ ("3" and "4")`},
		{name: "values compared before conversion", have: "list<string>", in: `[["1"],["01","1"]]`, want: "int64", errRow: 1, err: `values that differ ("01" and "1")`},
		{name: "a value that does not convert names its row", have: "string", in: `["1","x"]`, want: "list<int64>", errRow: 1, err: "the file has utf8, want int64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			in, _, err := array.FromJSON(mem, mustType(t, tt.have), strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Release()
			want := mustType(t, tt.want)
			if !shapeDiffers(in.DataType(), want) {
				t.Fatalf("shapeDiffers(%s, %s) = false", in.DataType(), want)
			}
			out, err := conform(t.Context(), mem, in, want)
			if tt.err != "" {
				var re *rowError
				if err == nil || !errors.As(err, &re) || re.row != tt.errRow || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want a row error at row %d containing %q", err, tt.errRow, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if !arrow.TypeEqual(out.DataType(), want) {
				t.Errorf("type %s, want %s", out.DataType(), want)
			}
			if v, ok := out.(interface{ ValidateFull() error }); ok {
				if err := v.ValidateFull(); err != nil {
					t.Errorf("invalid array: %v", err)
				}
			}
			wantArr, _, err := array.FromJSON(mem, want, strings.NewReader(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			defer wantArr.Release()
			if !array.Equal(out, wantArr) {
				t.Errorf("got %v, want %v", out, wantArr)
			}
		})
	}
}

func TestShapeDiffers(t *testing.T) {
	tests := []struct {
		have, want string
		differs    bool
	}{
		{"string", "string", false},
		{"int64", "float64", false},
		{"list<string>", "list<string>", false},
		{"list<int64>", "list<float64>", false},
		{"list<string>", "string", true},
		{"string", "list<string>", true},
		{"list<float64>", "list<list<float64>>", true},
		{"map<string,list<string>>", "map<string,list<string>>", false},
	}
	for _, tt := range tests {
		if got := shapeDiffers(mustType(t, tt.have), mustType(t, tt.want)); got != tt.differs {
			t.Errorf("shapeDiffers(%s, %s) = %v, want %v", tt.have, tt.want, got, tt.differs)
		}
	}
}

// A file whose status is a list per candidate and whose predictions are
// one level less nested than declared reads into the declared shapes,
// with a note for each.
func TestParquetFileReadsIntoDeclaredShape(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	status, _, _ := array.FromJSON(mem, mustType(t, "list<string>"), strings.NewReader(`[["COMPLETED","COMPLETED"],["COMPLETED"],null]`))
	preds, _, _ := array.FromJSON(mem, mustType(t, "list<float64>"), strings.NewReader(`[[0.5,0.25],[1],null]`))
	b := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{
		{Name: "rankings.metadata.status", Type: status.DataType(), Nullable: true},
		{Name: "candidates.reward_data.reward_predictions", Type: preds.DataType(), Nullable: true},
	}, nil), []arrow.Array{status, preds}, 3)
	status.Release()
	preds.Release()
	p := writeParquetFile(t, "f.parquet", b, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	b.Release()
	s := &ParquetFile{Path: p, Name: "f.parquet", Mem: mem, Columns: []ParquetColumn{
		{Name: "rankings.metadata.status", Type: mustType(t, "string")},
		{Name: "candidates.reward_data.reward_predictions", Type: mustType(t, "list<list<float64>>")},
	}}
	var got []string
	err := s.Chunks(t.Context(), func(c pipeline.Chunk) error {
		defer c.Batch.Release()
		out, err := s.Decode(t.Context(), c, &pipeline.Rejects{})
		if err != nil {
			return err
		}
		defer out.Release()
		got = append(got, tcRows(out)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`1:{"candidates.reward_data.reward_predictions":[[0.5],[0.25]],"rankings.metadata.status":"COMPLETED"}`,
		`2:{"candidates.reward_data.reward_predictions":[[1]],"rankings.metadata.status":"COMPLETED"}`,
		`3:{"candidates.reward_data.reward_predictions":null,"rankings.metadata.status":null}`,
	}
	tcEqual(t, "rows", got, want)
	notes := strings.Join(s.Notes(), "\n")
	for _, w := range []string{
		"f.parquet: column rankings.metadata.status is list<element: utf8, nullable> in the file, declared utf8: each row's list, one value repeated, read as that value",
		"f.parquet: column candidates.reward_data.reward_predictions is list<element: float64, nullable> in the file, declared list<item: list<item: float64, nullable>, nullable>: its lists' elements read into the declared shape",
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

// Edge cases the table above cannot build from JSON: NaN, a slice of a
// list, large lists.
func TestConformShapeEdges(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	check := func(name string, in arrow.Array, want arrow.DataType, out string) {
		t.Helper()
		got, err := conform(t.Context(), mem, in, want)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		defer got.Release()
		wantArr, _, err := array.FromJSON(mem, want, strings.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		defer wantArr.Release()
		if !array.Equal(got, wantArr) {
			t.Errorf("%s: got %v, want %v", name, got, wantArr)
		}
	}

	// NaN repeated is NaN (array.Equal takes NaN as unequal, so look at it).
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Float64)
	fb := lb.ValueBuilder().(*array.Float64Builder)
	lb.Append(true)
	fb.AppendValues([]float64{math.NaN(), math.NaN()}, nil)
	nan := lb.NewArray()
	lb.Release()
	got, err := conform(t.Context(), mem, nan, arrow.PrimitiveTypes.Float64)
	nan.Release()
	if err != nil {
		t.Errorf("NaN, NaN: %v", err)
	} else {
		if v := got.(*array.Float64).Value(0); !math.IsNaN(v) {
			t.Errorf("NaN, NaN read as %v", v)
		}
		got.Release()
	}

	// A slice converts only its own rows: row 3's differing values are
	// outside it.
	all, _, err := array.FromJSON(mem, mustType(t, "list<list<float64>>"), strings.NewReader(`[[[1]],[[2],[2,2]],[[3]],[[4,5]]]`))
	if err != nil {
		t.Fatal(err)
	}
	part := array.NewSlice(all, 1, 3)
	all.Release()
	check("a slice", part, mustType(t, "list<float64>"), `[[2,2],[3]]`)
	part.Release()

	// A large list: the same shape is a plain cast, another is reshaped.
	llb := array.NewLargeListBuilder(mem, arrow.BinaryTypes.String)
	sb := llb.ValueBuilder().(*array.StringBuilder)
	llb.Append(true)
	sb.AppendValues([]string{"a", "a"}, nil)
	llb.AppendNull()
	large := llb.NewArray()
	llb.Release()
	if shapeDiffers(large.DataType(), mustType(t, "list<string>")) {
		t.Errorf("shapeDiffers(large_list<string>, list<string>) = true")
	}
	check("large list, same shape", large, mustType(t, "list<string>"), `[["a","a"],null]`)
	check("large list as a value", large, mustType(t, "string"), `["a",null]`)
	large.Release()
}

// Large and fixed-size lists, of dictionaries too (a categorical in a
// list as polars writes it), read like plain lists; lists converted here
// (not by arrow-go's list cast, which panics on a list of dictionaries
// and leaks on nested large lists).
func TestConformOtherLists(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	tests := []struct {
		name string
		typ  arrow.DataType
		in   string
		want string
		out  string
		err  string
	}{
		{name: "large list of dictionaries as a list", typ: arrow.LargeListOf(dict), in: `[["a","b"],null,["a"]]`, want: "list<string>", out: `[["a","b"],null,["a"]]`},
		{name: "large list of dictionaries as a value", typ: arrow.LargeListOf(dict), in: `[["a","a"],[]]`, want: "string", out: `["a",null]`},
		{name: "fixed-size list as a list", typ: arrow.FixedSizeListOf(2, arrow.BinaryTypes.String), in: `[["a","b"],null]`, want: "list<string>", out: `[["a","b"],null]`},
		{name: "fixed-size list as a value", typ: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), in: `[[1,1],null]`, want: "float64", out: `[1,null]`},
		{name: "nested large lists", typ: arrow.LargeListOf(arrow.LargeListOf(arrow.PrimitiveTypes.Float64)), in: `[[[1],[2,3]],[]]`, want: "list<list<float64>>", out: `[[[1],[2,3]],[]]`},
		{name: "lists of nulls are one value", typ: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float64)), in: `[[[null],[null]]]`, want: "float64", out: `[null]`},
		{name: "a list value that does not convert names its row", typ: arrow.ListOf(arrow.BinaryTypes.String), in: `[["1"],["2","x"]]`, want: "list<int64>", err: "row 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			in, _, err := array.FromJSON(mem, tt.typ, strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Release()
			got, err := conform(t.Context(), mem, in, mustType(t, tt.want))
			if tt.err != "" {
				var re *rowError
				if err == nil || !errors.As(err, &re) || re.row != 1 {
					t.Fatalf("err = %v, want a row error at row 1", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			want, _, err := array.FromJSON(mem, mustType(t, tt.want), strings.NewReader(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()
			if !array.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}

	// NaN inside lists: [[NaN],[NaN]] is one value, NaN.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	lb := array.NewListBuilder(mem, arrow.ListOf(arrow.PrimitiveTypes.Float64))
	inner := lb.ValueBuilder().(*array.ListBuilder)
	fb := inner.ValueBuilder().(*array.Float64Builder)
	lb.Append(true)
	for range 2 {
		inner.Append(true)
		fb.Append(math.NaN())
	}
	nested := lb.NewArray()
	lb.Release()
	defer nested.Release()
	got, err := conform(t.Context(), mem, nested, arrow.PrimitiveTypes.Float64)
	if err != nil {
		t.Fatalf("[[NaN],[NaN]]: %v", err)
	}
	defer got.Release()
	if v := got.(*array.Float64).Value(0); !math.IsNaN(v) {
		t.Errorf("[[NaN],[NaN]] read as %v", v)
	}

	// A slice of no rows converts nothing of its parent.
	all, _, _ := array.FromJSON(mem, mustType(t, "list<list<float64>>"), strings.NewReader(`[[[1]],[[4,5]]]`))
	defer all.Release()
	none := array.NewSlice(all, 1, 1)
	defer none.Release()
	empty, err := conform(t.Context(), mem, none, mustType(t, "list<float64>"))
	if err != nil {
		t.Fatalf("a slice of no rows: %v", err)
	}
	if empty.Len() != 0 {
		t.Errorf("a slice of no rows gave %d", empty.Len())
	}
	empty.Release()
}

// A null row whose offsets still span values (valid Arrow, as a
// fixed-size list's null rows always do) converts none of them.
func TestConformNullRowSpanningValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	vals, _, _ := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["1","x","2"]`))
	defer vals.Release()
	validity := []byte{0b101}
	data := array.NewData(arrow.ListOf(arrow.BinaryTypes.String), 3,
		[]*memory.Buffer{memory.NewBufferBytes(validity), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 1, 2, 3}))},
		[]arrow.ArrayData{vals.Data()}, 1, 0)
	l := array.NewListData(data)
	data.Release()
	defer l.Release()
	got, err := conform(t.Context(), mem, l, mustType(t, "list<int64>"))
	if err != nil {
		t.Fatalf("the null row's value was converted: %v", err)
	}
	defer got.Release()
	want, _, _ := array.FromJSON(mem, mustType(t, "list<int64>"), strings.NewReader(`[[1],null,[2]]`))
	defer want.Release()
	if !array.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestConformListElementNamed: a list value that does not convert to the
// declared element type stops at the row holding it, and the message
// names the element within the row's list and the list's type, not only
// the element types.
func TestConformListElementNamed(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in, _, err := array.FromJSON(mem, mustType(t, "list<string>"), strings.NewReader(`[["1"],null,["2","3","x"]]`))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	out, err := conform(t.Context(), mem, in, mustType(t, "list<int64>"))
	var re *rowError
	if err == nil || !errors.As(err, &re) || re.row != 2 {
		if out != nil {
			out.Release()
		}
		t.Fatalf("err = %v, want a row error at row 2", err)
	}
	if want := "element 2 of its list<string>: the file has utf8, want int64"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}
}

// TestRestructSliced: a struct array sliced from a larger one converts
// field by field with the slice's rows, and a field's error names the
// slice's row.
func TestRestructSliced(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	typ := arrow.StructOf(arrow.Field{Name: "t", Type: ns, Nullable: true}, arrow.Field{Name: "n", Type: arrow.BinaryTypes.String, Nullable: true})
	whole, _, err := array.FromJSON(mem, typ, strings.NewReader(`[{"t":1,"n":"1"},{"t":1999,"n":"2"},null,{"t":5000,"n":"x"}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	part := array.NewSlice(whole, 1, 3)
	defer part.Release()
	want := mustType(t, "struct<t:timestamp,n:int64>")
	out, err := conform(t.Context(), mem, part, want)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got, _ := json.Marshal(out); string(got) != `[{"n":2,"t":"1970-01-01T00:00:00.000001Z"},null]` {
		t.Errorf("got %s", got)
	}
	bad := array.NewSlice(whole, 2, 4)
	defer bad.Release()
	if o, err := conform(t.Context(), mem, bad, want); err == nil {
		o.Release()
		t.Error("a field that does not convert converted")
	} else if re := (*rowError)(nil); !errors.As(err, &re) || re.row != 1 || !strings.Contains(err.Error(), "field n") {
		t.Errorf("err = %v, want field n at row 1 of the slice", err)
	}
}
