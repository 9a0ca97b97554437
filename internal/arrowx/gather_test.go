package arrowx

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// gatherCases are arrays of every type Gather handles, as JSON, with
// nulls at every level.
var gatherCases = []struct {
	name string
	typ  arrow.DataType
	json string
}{
	{"int64", arrow.PrimitiveTypes.Int64, `[1, null, 3, 4, -5, 6, null, 8]`},
	{"int32", arrow.PrimitiveTypes.Int32, `[1, 2, null, 4, 5, 6, 7, 8]`},
	{"int8", arrow.PrimitiveTypes.Int8, `[1, 2, 3, null, 5, 6, 7, 8]`},
	{"float64", arrow.PrimitiveTypes.Float64, `[1.5, null, 3.25, 4, 5, 6e10, 7, 8]`},
	{"bool", arrow.FixedWidthTypes.Boolean, `[true, false, null, true, true, false, false, true]`},
	{"timestamp", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, `["2024-01-01T00:00:00Z", null, "2024-02-01T10:00:00Z", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z", "2024-05-01T00:00:00Z", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"]`},
	{"string", arrow.BinaryTypes.String, `["a", "", null, "dddd", "eeeee", "ffffff", "g", "hhhhhhhhhhhhhh"]`},
	{"large string", arrow.BinaryTypes.LargeString, `["a", "", null, "dddd", "eeeee", "ffffff", "g", "h"]`},
	{"binary", arrow.BinaryTypes.Binary, `["YQ==", null, "", "ZGQ=", "ZQ==", "Zg==", "Zw==", "aA=="]`},
	{"null", arrow.Null, `[null, null, null, null, null, null, null, null]`},
	{"list of string", arrow.ListOf(arrow.BinaryTypes.String), `[["a", "b"], [], null, ["c", null, "d"], ["e"], ["f", "g", "h"], null, ["i"]]`},
	{"large list of int", arrow.LargeListOf(arrow.PrimitiveTypes.Int64), `[[1, 2], [], null, [3, null], [4], [5, 6, 7], null, [8]]`},
	{"list of list", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), `[[[1], [2, 3]], [], null, [[4], null, []], [[5]], [[6, 7]], null, [[8]]]`},
	{"struct", arrow.StructOf(arrow.Field{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "citations", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}),
		`[{"text": "a", "citations": ["x"]}, null, {"text": null, "citations": []}, {"text": "d", "citations": null}, {"text": "e", "citations": ["y", "z"]}, {"text": "f", "citations": []}, {"text": "g", "citations": ["w"]}, {"text": "h", "citations": null}]`},
	{"list of struct", arrow.ListOf(arrow.StructOf(arrow.Field{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true})),
		`[[{"text": "a"}, {"text": "b"}], [], null, [{"text": null}, null], [{"text": "e"}], [{"text": "f"}], null, [{"text": "h"}]]`},
}

// TestGatherMatchesTake checks Gather against the compute Take kernel on
// every type, on whole and sliced arrays (offsets at each level), with
// repeated, reversed and empty selections, and that the result shares no
// buffer with its input.
func TestGatherMatchesTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	selections := map[string][]int64{
		"all":      {0, 1, 2, 3, 4, 5, 6, 7},
		"reversed": {7, 6, 5, 4, 3, 2, 1, 0},
		"repeated": {3, 3, 0, 7, 3},
		"nulls":    {2, 6, 1},
		"none":     {},
	}
	for _, tc := range gatherCases {
		whole, _, err := array.FromJSON(mem, tc.typ, strings.NewReader(tc.json))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		inputs := map[string]arrow.Array{"whole": whole}
		sliced := array.NewSlice(whole, 2, 8)
		inputs["sliced"] = sliced
		for inName, in := range inputs {
			for selName, sel := range selections {
				t.Run(tc.name+"/"+inName+"/"+selName, func(t *testing.T) {
					var idx []int64
					for _, i := range sel {
						if i < int64(in.Len()) {
							idx = append(idx, i)
						}
					}
					got, ok := Gather(mem, in, idx)
					if !ok {
						t.Fatalf("Gather does not handle %s", in.DataType())
					}
					defer got.Release()
					want := take(t, mem, in, idx)
					defer want.Release()
					if !array.Equal(got, want) {
						t.Fatalf("Gather(%v) = %v, Take = %v", idx, got, want)
					}
					if got.NullN() != want.NullN() {
						t.Fatalf("null count %d, want %d", got.NullN(), want.NullN())
					}
				})
			}
		}
		sliced.Release()
		whole.Release()
	}
}

// TestGatherRandom compares Gather and Take on random lists of strings
// and booleans, with nulls, and random selections: scattered rows, and
// runs of consecutive rows as a partition split gives, short ones (a few
// rows, copied bit by bit) and long ones (past shortBits, copied by
// words), on whole and sliced arrays.
func TestGatherRandom(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(1, 2))
	lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	bb := array.NewBooleanBuilder(mem)
	for i := 0; i < 1000; i++ {
		switch r.IntN(10) {
		case 0:
			lb.AppendNull()
		default:
			lb.Append(true)
			for k := r.IntN(5); k > 0; k-- {
				if r.IntN(8) == 0 {
					vb.AppendNull()
				} else {
					vb.Append(strings.Repeat("x", r.IntN(40)))
				}
			}
		}
		if r.IntN(7) == 0 {
			bb.AppendNull()
		} else {
			bb.Append(r.IntN(2) == 0)
		}
	}
	lists, bools := lb.NewArray(), bb.NewArray()
	lb.Release()
	bb.Release()
	defer lists.Release()
	defer bools.Release()
	slicedLists, slicedBools := array.NewSlice(lists, 3, 997), array.NewSlice(bools, 5, 990)
	defer slicedLists.Release()
	defer slicedBools.Release()
	// Fixed widths of 8, 4 and 2 bytes, with nulls, whole and sliced.
	var fixed []arrow.Array
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Int16} {
		fb := array.NewBuilder(mem, dt)
		for i := 0; i < 1000; i++ {
			switch b := fb.(type) {
			case *array.Int64Builder:
				b.Append(r.Int64())
			case *array.Float32Builder:
				b.Append(r.Float32())
			case *array.Int16Builder:
				b.Append(int16(r.IntN(1 << 15)))
			}
			if r.IntN(9) == 0 {
				fb.AppendNull()
			}
		}
		a := fb.NewArray()
		fb.Release()
		sliced := array.NewSlice(a, 7, 993)
		defer a.Release()
		defer sliced.Release()
		fixed = append(fixed, a, sliced)
	}
	selections := []struct {
		name string
		pick func(n int) []int64
	}{
		{"scattered", func(n int) []int64 {
			idx := make([]int64, r.IntN(300))
			for i := range idx {
				idx[i] = r.Int64N(int64(n))
			}
			return idx
		}},
		{"short runs", func(n int) []int64 { return runs(r, n, 3) }},
		{"single rows in turns", func(n int) []int64 { // an unpivot's rows of one name
			var idx []int64
			for i := r.Int64N(7); i < int64(n); i += 7 {
				idx = append(idx, i)
			}
			return idx
		}},
		{"long runs", func(n int) []int64 { return runs(r, n, 300) }},
	}
	for _, a := range append([]arrow.Array{lists, bools, slicedLists, slicedBools}, fixed...) {
		for _, sel := range selections {
			for round := 0; round < 30; round++ {
				idx := sel.pick(a.Len())
				got, ok := Gather(mem, a, idx)
				if !ok {
					t.Fatalf("Gather does not handle %s", a.DataType())
				}
				want := take(t, mem, a, idx)
				if !array.Equal(got, want) || got.NullN() != want.NullN() {
					t.Fatalf("%s of %d, %s, round %d: Gather and Take differ", a.DataType(), a.Len(), sel.name, round)
				}
				got.Release()
				want.Release()
			}
		}
	}
}

// runs selects rows 0 to n-1 in order, dropping about one in every keep
// rows, so that the kept rows form runs of about keep rows.
func runs(r *rand.Rand, n, keep int) []int64 {
	var idx []int64
	for i := int64(0); i < int64(n); i++ {
		if r.IntN(keep) > 0 {
			idx = append(idx, i)
		}
	}
	return idx
}

// TestGatherCopies scribbles over the input after a gather: the result
// must not change.
func TestGatherCopies(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	in, _, err := array.FromJSON(mem, arrow.ListOf(arrow.BinaryTypes.String), strings.NewReader(`[["abc", "de"], ["fgh"]]`))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	got, _ := Gather(mem, in, []int64{1, 0})
	defer got.Release()
	before := got.String()
	for _, buf := range in.Data().Children()[0].Buffers() {
		if buf != nil {
			for i := range buf.Bytes() {
				buf.Bytes()[i] = 'Z'
			}
		}
	}
	if after := got.String(); after != before {
		t.Fatalf("result changed with its input: %s, then %s", before, after)
	}
}

// TestGatherFallsBack checks the cases Gather leaves to compute.Take: an
// unhandled type and an index out of range (which Take reports).
func TestGatherFallsBack(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	m, _, err := array.FromJSON(mem, arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), strings.NewReader(`[[{"key": "a", "value": 1}]]`))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if _, ok := Gather(mem, m, []int64{0}); ok {
		t.Error("Gather claims a map")
	}
	s, _, _ := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["a"]`))
	defer s.Release()
	if _, ok := Gather(mem, s, []int64{1}); ok {
		t.Error("Gather took index 1 of a 1-row array")
	}
	if _, err := TakeColumns(context.Background(), mem, []arrow.Array{s}, []int64{1}); err == nil {
		t.Error("TakeColumns took index 1 of a 1-row array without an error")
	}
	out, err := TakeColumns(context.Background(), mem, []arrow.Array{m}, []int64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Len() != 2 {
		t.Errorf("map taken through the fallback has %d rows, want 2", out[0].Len())
	}
	out[0].Release()
}

// TestTakeColumnsIdentity: a selection of every row in order hands back
// the columns themselves (CopyRows still copies); any other selection,
// and columns of other lengths, get new arrays holding the chosen rows.
func TestTakeColumnsIdentity(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	three, _, _ := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["a", "b", "c"]`))
	defer three.Release()
	two, _, _ := array.FromJSON(mem, arrow.PrimitiveTypes.Int64, strings.NewReader(`[7, 8]`))
	defer two.Release()
	empty, _, _ := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`[]`))
	defer empty.Release()
	tests := []struct {
		name string
		copy bool
		cols []arrow.Array
		idx  []int64
		same []bool // column i is handed back as is
		want []string
	}{
		{"every row in order", false, []arrow.Array{three}, []int64{0, 1, 2}, []bool{true}, []string{`["a","b","c"]`}},
		{"CopyRows copies every row", true, []arrow.Array{three}, []int64{0, 1, 2}, []bool{false}, []string{`["a","b","c"]`}},
		{"a prefix", false, []arrow.Array{three}, []int64{0, 1}, []bool{false}, []string{`["a","b"]`}},
		{"reversed", false, []arrow.Array{three}, []int64{2, 1, 0}, []bool{false}, []string{`["c","b","a"]`}},
		{"columns of two lengths", false, []arrow.Array{three, two}, []int64{0, 1}, []bool{false, true}, []string{`["a","b"]`, `[7,8]`}},
		{"nothing of nothing", false, []arrow.Array{empty}, nil, []bool{true}, []string{`[]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := TakeColumns
			if tt.copy {
				f = CopyRows
			}
			out, err := f(context.Background(), mem, tt.cols, tt.idx)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range out {
				if got := o == tt.cols[i]; got != tt.same[i] {
					t.Errorf("column %d handed back as is: %v, want %v", i, got, tt.same[i])
				}
				if got, _ := o.MarshalJSON(); string(got) != tt.want[i] {
					t.Errorf("column %d: %s, want %s", i, got, tt.want[i])
				}
				o.Release()
			}
		})
	}
}

func take(t *testing.T, mem memory.Allocator, a arrow.Array, idx []int64) arrow.Array {
	t.Helper()
	ib := array.NewInt64Builder(mem)
	ib.AppendValues(idx, nil)
	ia := ib.NewArray()
	ib.Release()
	defer ia.Release()
	out, err := compute.TakeArray(context.Background(), a, ia)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchmarkGather splits batches of CrowdRAG-25-like rows (an id and 20
// texts of about 1.3 KB) into three partitions, as the sink does, with
// Gather and with the compute Take kernel it replaces, in the same run.
func BenchmarkGather(b *testing.B) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(3, 4))
	ids := array.NewStringBuilder(mem)
	texts := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	tb := texts.ValueBuilder().(*array.StringBuilder)
	word := strings.Repeat("lorem ipsum ", 110)
	for i := 0; i < 1024; i++ {
		ids.Append(fmt.Sprintf("response-%06d", i))
		texts.Append(true)
		for k := 0; k < 20; k++ {
			tb.Append(word[r.IntN(100):])
		}
	}
	cols := []arrow.Array{ids.NewArray(), texts.NewArray()}
	defer cols[0].Release()
	defer cols[1].Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: cols[0].DataType()}, {Name: "texts", Type: cols[1].DataType()}}, nil)
	rec := array.NewRecordBatch(schema, cols, int64(cols[0].Len()))
	bytes := BatchBytes(rec)
	rec.Release()
	parts := make([][]int64, 3)
	for i := 0; i < 1024; i++ {
		parts[(i/2)%3] = append(parts[(i/2)%3], int64(i)) // rows alternate style every two rows
	}
	run := func(b *testing.B, take func(c arrow.Array, idx []int64) arrow.Array) {
		for b.Loop() {
			for _, idx := range parts {
				for _, c := range cols {
					take(c, idx).Release()
				}
			}
		}
		b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	}
	b.Run("gather", func(b *testing.B) {
		run(b, func(c arrow.Array, idx []int64) arrow.Array {
			out, _ := Gather(mem, c, idx)
			return out
		})
	})
	b.Run("take", func(b *testing.B) {
		ctx := exec.WithAllocator(context.Background(), mem)
		run(b, func(c arrow.Array, idx []int64) arrow.Array {
			ib := array.NewInt64Builder(mem)
			ib.AppendValues(idx, nil)
			ia := ib.NewArray()
			ib.Release()
			defer ia.Release()
			out, err := compute.TakeArray(ctx, c, ia)
			if err != nil {
				b.Fatal(err)
			}
			return out
		})
	})
}

// TestTakeFromMatchesTakeThenJoin checks TakeFrom, on every type, against
// the compute Take kernel on each selection followed by a concatenation:
// four selections of one whole and three sliced arrays (offsets at each
// level), one of them empty and one without nulls, in two columns; and
// that nothing leaks.
func TestTakeFromMatchesTakeThenJoin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range gatherCases {
		t.Run(tc.name, func(t *testing.T) {
			whole, _, err := array.FromJSON(mem, tc.typ, strings.NewReader(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			defer whole.Release()
			a := array.NewSlice(whole, 2, 8)
			defer a.Release()
			b := array.NewSlice(whole, 1, 5)
			defer b.Release()
			c := array.NewSlice(whole, 3, 5) // no nulls at the top level
			defer c.Release()
			c.NullN() // a slice's null count is unknown until asked; a built array knows it
			sels := []Rows{
				{Cols: []arrow.Array{whole, whole}, Idx: []int64{7, 0, 1, 2, 2}},
				{Cols: []arrow.Array{a, a}, Idx: nil},
				{Cols: []arrow.Array{c, c}, Idx: []int64{1, 0}},
				{Cols: []arrow.Array{b, b}, Idx: []int64{3, 1, 0, 2}},
			}
			got, err := TakeFrom(t.Context(), mem, sels)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, g := range got {
					g.Release()
				}
			}()
			var parts []arrow.Array
			for _, s := range sels {
				parts = append(parts, take(t, mem, s.Cols[0], s.Idx))
			}
			want, err := array.Concatenate(parts, mem)
			for _, p := range parts {
				p.Release()
			}
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()
			if len(got) != 2 {
				t.Fatalf("%d columns, want 2", len(got))
			}
			for c, g := range got {
				if !array.Equal(g, want) || g.NullN() != want.NullN() {
					t.Fatalf("column %d: TakeFrom = %v (%d nulls), want %v (%d nulls)", c, g, g.NullN(), want, want.NullN())
				}
			}
		})
	}
}

// TestTakeFromFallsBack checks TakeFrom on what Gather does not handle (a
// dictionary column) and on an index out of range.
func TestTakeFromFallsBack(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for _, s := range []string{"x", "y", "x", "z"} {
		if err := db.AppendString(s); err != nil {
			t.Fatal(err)
		}
	}
	dict := db.NewArray()
	db.Release()
	defer dict.Release()
	got, err := TakeFrom(t.Context(), mem, []Rows{{Cols: []arrow.Array{dict}, Idx: []int64{3, 0}}, {Cols: []arrow.Array{dict}, Idx: []int64{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(got[0]); got[0].Len() != 3 || !strings.Contains(s, "z") || !strings.Contains(s, "y") {
		t.Errorf("dictionary: got %v, want rows z, x, y", got[0])
	}
	got[0].Release()
	if _, err := TakeFrom(t.Context(), mem, []Rows{{Cols: []arrow.Array{dict}, Idx: []int64{4}}}); err == nil {
		t.Error("an index out of range gave no error")
	}
}

// TestTakeFromEmptyBuiltChild gathers from a list<int64> whose child a
// builder left without buffers (every list empty) together with one that
// has values: the empty source must be skipped, not read.
func TestTakeFromEmptyBuiltChild(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	build := func(lists ...[]int64) arrow.Array {
		lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
		defer lb.Release()
		vb := lb.ValueBuilder().(*array.Int64Builder)
		for _, l := range lists {
			lb.Append(true)
			vb.AppendValues(l, nil)
		}
		return lb.NewArray()
	}
	full, empty := build([]int64{1, 2}), build([]int64{})
	defer full.Release()
	defer empty.Release()
	got, err := TakeFrom(t.Context(), mem, []Rows{{Cols: []arrow.Array{full}, Idx: []int64{0}}, {Cols: []arrow.Array{empty}, Idx: []int64{0}}})
	if err != nil {
		t.Fatal(err)
	}
	defer got[0].Release()
	if s := fmt.Sprint(got[0]); s != "[[1 2] []]" {
		t.Errorf("got %s, want [[1 2] []]", s)
	}
}

// TestBatchBytesIgnoresReservations: the same rows measure the same
// however far their builders were reserved (a bitmap kept its reserved
// length), since the sink cuts batches and row groups by this size and
// reservations follow hints that concurrent decoders update in no set
// order: the same input wrote other row groups from run to run.
func TestBatchBytesIgnoresReservations(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	build := func(reserve int) arrow.RecordBatch {
		rb := array.NewRecordBuilder(mem, schema)
		defer rb.Release()
		rb.Reserve(reserve)
		lb := rb.Field(2).(*array.ListBuilder)
		lb.ValueBuilder().Reserve(reserve * 4)
		for i := range 5 {
			if i == 2 {
				rb.Field(0).AppendNull()
				rb.Field(1).AppendNull()
				lb.AppendNull()
				continue
			}
			rb.Field(0).(*array.Int64Builder).Append(int64(i))
			rb.Field(1).(*array.BooleanBuilder).Append(i%2 == 0)
			lb.Append(true)
			lb.ValueBuilder().(*array.StringBuilder).Append("x")
			lb.ValueBuilder().AppendNull()
		}
		return rb.NewRecordBatch()
	}
	small, large := build(1), build(100000)
	defer small.Release()
	defer large.Release()
	if a, b := BatchBytes(small), BatchBytes(large); a != b {
		t.Errorf("the same rows measure %d and %d bytes", a, b)
	}
}
