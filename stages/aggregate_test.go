package stages

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// aggRun feeds batches (JSON arrays of rows) through an aggregate and
// returns the flushed rows.
func aggRun(t *testing.T, mem memory.Allocator, s *arrow.Schema, cfg *config.Aggregate, batches ...string) []string {
	t.Helper()
	a := aggFeed(t, mem, s, cfg, batches...)
	defer a.Close()
	out, err := a.Flush(t.Context(), &pipeline.Rejects{})
	if err != nil {
		t.Fatal(err)
	}
	if out == nil {
		return nil
	}
	defer out.Release()
	if !out.Schema().Equal(a.Schema()) {
		t.Errorf("schema %s, want %s", out.Schema(), a.Schema())
	}
	return tcRows(out)
}

// aggFeed makes an aggregate and feeds it batches (JSON arrays of rows),
// which it must not return; the caller closes it.
func aggFeed(t *testing.T, mem memory.Allocator, s *arrow.Schema, cfg *config.Aggregate, batches ...string) *Aggregate {
	t.Helper()
	a, err := NewAggregate(mem, s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, js := range batches {
		in := tcBatch(t, mem, s, js)
		out, err := a.Process(t.Context(), in, &pipeline.Rejects{})
		in.Release() // the aggregate must keep what it needs itself
		if err != nil {
			t.Fatal(err)
		}
		if out != nil {
			out.Release()
			t.Fatalf("batch %d: Process returned a batch; an aggregate emits at Flush", i)
		}
	}
	return a
}

func TestAggregate(t *testing.T) {
	s := tcSchema(t, "g:string", "n:int64", "v:string", "l:list<string>", "st:string", "_line:int64")
	batches := []string{
		`[{"g":"b","n":2,"v":null,"l":["x","y"],"st":"ok","_line":1},{"g":"a","n":5,"v":"a1","l":["y"],"st":"no","_line":2}]`,
		`[]`,
		`[{"g":"b","n":null,"v":"b2","l":[],"st":"ok","_line":3},{"g":null,"n":1,"v":"z","l":null,"st":"ok","_line":4},{"g":"a","n":-1,"v":"a3","l":["z","x"],"st":"ok","_line":5}]`,
		`[{"g":"b","n":7,"v":"b4","l":["w"],"st":"no","_line":6}]`,
	}
	tests := []struct {
		name string
		cfg  config.Aggregate
		want []string
	}{
		{
			name: "first-seen order, counts",
			cfg: config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
				{Name: "rows", Fn: "count"},
				{Name: "ok", Fn: "count", When: &config.When{Column: "st", In: []string{"ok"}}},
				{Name: "vs", Fn: "count_non_null", Args: []string{"v"}},
			}},
			want: []string{
				`1:{"g":"b","ok":2,"rows":3,"vs":2}`,
				`2:{"g":"a","ok":1,"rows":2,"vs":2}`,
				`4:{"g":null,"ok":1,"rows":1,"vs":1}`,
			},
		},
		{
			name: "sorted, first and last skip nulls and honour when",
			cfg: config.Aggregate{By: []string{"g"}, Sort: true, Columns: []config.AggColumn{
				{Name: "f", Fn: "first", Args: []string{"v"}},
				{Name: "la", Fn: "last", Args: []string{"v"}},
				{Name: "lok", Fn: "last", Args: []string{"v"}, When: &config.When{Column: "st", In: []string{"ok"}}},
				{Name: "none", Fn: "first", Args: []string{"v"}, When: &config.When{Column: "st", In: []string{"never"}}},
			}},
			want: []string{
				`4:{"f":"z","g":null,"la":"z","lok":"z","none":null}`,
				`2:{"f":"a1","g":"a","la":"a3","lok":"a3","none":null}`,
				`1:{"f":"b2","g":"b","la":"b4","lok":"b2","none":null}`,
			},
		},
		{
			name: "min, max, sum",
			cfg: config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
				{Name: "lo", Fn: "min", Args: []string{"n"}},
				{Name: "hi", Fn: "max", Args: []string{"n"}},
				{Name: "sum", Fn: "sum", Args: []string{"n"}, When: &config.When{Column: "st", In: []string{"no"}}},
			}},
			want: []string{
				`1:{"g":"b","hi":7,"lo":2,"sum":7}`,
				`2:{"g":"a","hi":5,"lo":-1,"sum":5}`,
				`4:{"g":null,"hi":1,"lo":1,"sum":null}`,
			},
		},
		{
			name: "union, arg after arg, without exclude",
			cfg: config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
				{Name: "u", Fn: "union", Args: []string{"l", "v"}, Exclude: []string{"y"}},
			}},
			want: []string{
				`1:{"g":"b","u":["x","w","b2","b4"]}`,
				`2:{"g":"a","u":["z","x","a1","a3"]}`,
				`4:{"g":null,"u":["z"]}`,
			},
		},
	}
	for _, tt := range tests {
		atBudgets(t, tt.name, func(t *testing.T, mem memory.Allocator) {
			tcEqual(t, "rows", aggRun(t, mem, s, &tt.cfg, batches...), tt.want)
		})
	}
}

// atBudgets runs f as subtests with every group in memory and with all
// but the first (or two) in partition files: each in a spill folder of
// its own that must end empty, with a checked allocator that must end
// empty. The groups must be the same whatever the budget.
func atBudgets(t *testing.T, name string, f func(t *testing.T, mem memory.Allocator)) {
	for _, groups := range []int{AggregateMemGroups, 1, 2} {
		t.Run(fmt.Sprintf("%s/%d groups in memory", name, groups), func(t *testing.T) {
			aggMemGroups(t, groups)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			f(t, mem)
			spillEmpty(t)
		})
	}
}

// aggMemGroups sets AggregateMemGroups, and SpillDir to a new folder, for
// a test.
func aggMemGroups(t testing.TB, groups int) {
	setForTest(t, &AggregateMemGroups, groups)
	setForTest(t, &SpillDir, t.TempDir())
}

func TestAggregateSchulze(t *testing.T) {
	s := tcSchema(t, "round:string", "cands:list<string>", "ids:list<string>", "ranks:list<int64>", "status:string", "_line:int64")
	row := func(line int, round, ids, ranks, status string) string {
		return fmt.Sprintf(`{"round":%q,"cands":["A","B","C"],"ids":%s,"ranks":%s,"status":%q,"_line":%d}`, round, ids, ranks, status, line)
	}
	batches := []string{
		"[" + strings.Join([]string{
			row(1, "r1", `["A","B","C"]`, `[0,1,2]`, "COMPLETED"),
			row(2, "r1", `["C","B","A"]`, `[0,1,2]`, "COMPLETED"),
			row(3, "r2", `["B","A","C"]`, `[0,0,1]`, "COMPLETED"),
		}, ",") + "]",
		"[" + strings.Join([]string{
			row(4, "r1", `["B","A","C"]`, `[0,1,2]`, "COMPLETED"),
			row(5, "r1", `["C","A","B"]`, `[0,-1,1]`, "COMPLETED"), // mock: left out
			row(6, "r1", `["C","A"]`, `[0,1]`, "COMPLETED"),        // incomplete: left out
			row(7, "r1", `["C","B","A"]`, `[0,1,2]`, "ABORTED"),    // not COMPLETED
			row(8, "r3", `["A","B","C"]`, `[0,1,2]`, "ABORTED"),
		}, ",") + "]",
	}
	atBudgets(t, "schulze", func(t *testing.T, mem memory.Allocator) {
		got := aggRun(t, mem, s, &config.Aggregate{By: []string{"round"}, Columns: []config.AggColumn{
			{Name: "w", Fn: "schulze", Args: []string{"cands", "ids", "ranks"}, When: &config.When{Column: "status", In: []string{"COMPLETED"}}},
		}}, batches...)
		// r1: A>B>C, C>B>A, B>A>C: B beats A 2-1 and C 2-1. r2: A and B tie
		// at the top; the smaller id wins. r3: no counted ranking.
		tcEqual(t, "rows", got, []string{`1:{"round":"r1","w":"B"}`, `3:{"round":"r2","w":"A"}`, `8:{"round":"r3","w":null}`})
	})
}

// An aggregate's memory follows its groups, not its rows: 200 batches of
// 1,000 rows over 3 groups (334 rows of g0 a batch) leave a few kilobytes held, where holding the
// rows would take megabytes.
func TestAggregateMemoryFollowsGroups(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "v:string", "l:list<string>", "_line:int64")
	a, err := NewAggregate(mem, s, &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
		{Name: "n", Fn: "count"},
		{Name: "last", Fn: "last", Args: []string{"v"}},
		{Name: "u", Fn: "union", Args: []string{"l"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var peak int
	line := int64(0)
	for range 200 {
		rb := array.NewRecordBuilder(mem, s)
		for i := 0; i < 1000; i++ {
			line++
			rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("g%d", i%3))
			rb.Field(1).(*array.StringBuilder).Append(strings.Repeat("v", 100))
			lb := rb.Field(2).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("x%d", i%5))
			rb.Field(3).(*array.Int64Builder).Append(line)
		}
		b := rb.NewRecordBatch()
		rb.Release()
		out, err := a.Process(t.Context(), b, &pipeline.Rejects{})
		b.Release()
		if err != nil || out != nil {
			t.Fatalf("Process = %v, %v", out, err)
		}
		peak = max(peak, mem.CurrentAlloc())
	}
	if peak > 1<<20 {
		t.Errorf("aggregate holds %d bytes after 200,000 rows in 3 groups; want its state to follow the groups", peak)
	}
	out, err := a.Flush(t.Context(), &pipeline.Rejects{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	tcEqual(t, "rows", tcRows(out)[:1], []string{`1:{"g":"g0","last":"` + strings.Repeat("v", 100) + `","n":66800,"u":["x0","x3","x1","x4","x2"]}`})
}

// Strings an aggregate keeps must be copies: an Arrow string points into
// its batch's buffer, and keeping the view would keep every batch alive
// as long as its group. Scribbling over the input after Process must not
// change the output.
func TestAggregateKeepsCopiesOfStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "cands:list<string>", "ids:list<string>", "ranks:list<int64>", "_line:int64")
	a, err := NewAggregate(mem, s, &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
		{Name: "u", Fn: "union", Args: []string{"cands"}},
		{Name: "w", Fn: "schulze", Args: []string{"cands", "ids", "ranks"}},
		{Name: "f", Fn: "first", Args: []string{"cands"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	in := tcBatch(t, mem, s, `[{"g":"r1","cands":["alpha","beta"],"ids":["beta","alpha"],"ranks":[0,1],"_line":1}]`)
	if _, err := a.Process(t.Context(), in, &pipeline.Rejects{}); err != nil {
		t.Fatal(err)
	}
	for _, col := range []int{0, 1, 2} {
		var scribble func(d arrow.ArrayData)
		scribble = func(d arrow.ArrayData) {
			if d.DataType().ID() == arrow.STRING {
				b := d.Buffers()[2].Bytes()
				for i := range b {
					b[i] = 'X'
				}
			}
			for _, c := range d.Children() {
				scribble(c)
			}
		}
		scribble(in.Column(col).Data())
	}
	in.Release()
	out, err := a.Flush(t.Context(), &pipeline.Rejects{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	tcEqual(t, "rows", tcRows(out), []string{`1:{"f":["alpha","beta"],"g":"r1","u":["alpha","beta"],"w":"beta"}`})
}

// TestAggregateSchulzeNullsAndEmptyBallots: a null candidate is no
// candidate, a ballot with a null id or that ranks nothing is not
// counted, and a group with no ballot counted has no winner. A null read
// as "" and could win; an empty ballot made every candidate tie.
func TestAggregateSchulzeNullsAndEmptyBallots(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "cands:list<string>", "ids:list<string>", "ranks:list<int64>", "_line:int64")
	cfg := &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
		{Name: "w", Fn: "schulze", Args: []string{"cands", "ids", "ranks"}},
	}}
	tcEqual(t, "rows", aggRun(t, mem, s, cfg, `[`+
		`{"g":"nullcand","cands":[null,"a"],"ids":["a"],"ranks":[0],"_line":1},`+
		`{"g":"nullid","cands":["a","b"],"ids":[null,"b"],"ranks":[0,1],"_line":2},`+
		`{"g":"nullid","cands":["a","b"],"ids":["b","a"],"ranks":[0,1],"_line":3},`+
		`{"g":"empty","cands":["x","y"],"ids":["x","y"],"ranks":[-1,0],"_line":4},`+
		`{"g":"empty","cands":[],"ids":[],"ranks":[],"_line":5}]`),
		[]string{`1:{"g":"nullcand","w":"a"}`, `2:{"g":"nullid","w":"b"}`, `4:{"g":"empty","w":null}`})
}

// TestAggregateSpillMatchesMemory: groups in random order, keys with
// nulls and numbers, through an aggregate that keeps them all in memory
// (the model) and through one that keeps a few and puts the rest in
// partition files: 3,000 groups with 200 in memory (one level of files,
// the output in batches of 64, the groups in memory written out in 4),
// and 300 with 5 (files split again, up
// to three levels deep; tiny budgets are in TestAggregate too). The rows
// must be the same, in the same order, sorted or not; the files must be
// there while rows come and gone after; the batches emitted must hold
// aggOutRows groups (the last fewer).
func TestAggregateSpillMatchesMemory(t *testing.T) {
	s := tcSchema(t, "g:string", "k:int64", "v:string", "n:int64", "l:list<string>", "_line:int64")
	for _, tc := range []struct {
		groups, memGroups, rows int
		outRows                 int64
	}{{3000, 200, 10000, 64}, {300, 5, 1000, aggOutRows}} {
		setForTest(t, &aggOutRows, tc.outRows)
		r := rand.New(rand.NewPCG(3, 4))
		var batches []string
		line := 0
		for range tc.rows / 250 {
			var rows []string
			for range 250 {
				line++
				g, k := fmt.Sprintf("%q", fmt.Sprintf("g%d", r.IntN(tc.groups/3))), fmt.Sprint(r.IntN(3))
				if r.IntN(50) == 0 {
					g = "null"
				}
				if r.IntN(50) == 0 {
					k = "null"
				}
				rows = append(rows, fmt.Sprintf(`{"g":%s,"k":%s,"v":"v%d","n":%d,"l":["x%d","y%d"],"_line":%d}`,
					g, k, r.IntN(100), r.IntN(1000)-500, r.IntN(4), r.IntN(4), line))
			}
			batches = append(batches, "["+strings.Join(rows, ",")+"]")
		}
		for _, sorted := range []bool{false, true} {
			cfg := &config.Aggregate{By: []string{"g", "k"}, Sort: sorted, Columns: []config.AggColumn{
				{Name: "rows", Fn: "count"},
				{Name: "f", Fn: "first", Args: []string{"v"}},
				{Name: "la", Fn: "last", Args: []string{"v"}},
				{Name: "lo", Fn: "min", Args: []string{"n"}},
				{Name: "sum", Fn: "sum", Args: []string{"n"}},
				{Name: "u", Fn: "union", Args: []string{"l"}},
			}}
			var want []string
			for _, groups := range []int{1 << 20, tc.memGroups} {
				t.Run(fmt.Sprintf("%d groups, sort %v, %d in memory", tc.groups, sorted, groups), func(t *testing.T) {
					aggMemGroups(t, groups)
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					a := aggFeed(t, mem, s, cfg, batches...)
					defer a.Close()
					files, _ := os.ReadDir(SpillDir)
					if spills := groups < tc.groups; spills != (len(files) > 0) {
						t.Errorf("%d partition files for %d groups, %d in memory", len(files), tc.groups, groups)
					}
					var got []string
					var sizes []int64
					err := a.FlushTo(t.Context(), func(b arrow.RecordBatch, _ *pipeline.Rejects) error {
						defer b.Release()
						if !b.Schema().Equal(a.Schema()) {
							t.Errorf("schema %s, want %s", b.Schema(), a.Schema())
						}
						sizes = append(sizes, b.NumRows())
						got = append(got, tcRows(b)...)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					spillEmpty(t)
					for i, n := range sizes {
						if n > tc.outRows || n < tc.outRows && i < len(sizes)-1 || n == 0 {
							t.Errorf("batch %d of %v holds %d groups", i, sizes, n)
						}
					}
					if want == nil {
						want = got
						if len(want) < tc.groups*9/10 {
							t.Fatalf("%d groups, want about %d", len(want), tc.groups)
						}
						return
					}
					tcEqual(t, "rows", got, want)
				})
			}
		}
	}
}

// TestAggregateSpillError: a partition file that cannot be made is an
// error, not a lost group.
func TestAggregateSpillError(t *testing.T) {
	aggMemGroups(t, 1)
	setForTest(t, &SpillDir, SpillDir+"/missing")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "_line:int64")
	a, err := NewAggregate(mem, s, &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	in := tcBatch(t, mem, s, `[{"g":"a","_line":1},{"g":"b","_line":2}]`)
	defer in.Release()
	if _, err := a.Process(t.Context(), in, &pipeline.Rejects{}); err == nil || !strings.Contains(err.Error(), "spill") {
		t.Fatalf("Process = %v, want an error naming the spill file", err)
	}
}

// TestAggregateSortedTotalOrder: sorted keys that a plain < does not
// order (NaN, -0 and 0, int64 past 2^53), or that compare equal though
// distinct (lists), come out in one order, NaN first and equal keys in
// first-seen order, whether every group is in
// memory or all but one or two spill; with NaN compared by <, the merge
// placed it differently from run to run.
func TestAggregateSortedTotalOrder(t *testing.T) {
	tests := []struct {
		name  string
		col   func(memory.Allocator) arrow.Array
		lines []string // of the groups' first rows, in output order
	}{
		{"float64", func(mem memory.Allocator) arrow.Array {
			b := array.NewFloat64Builder(mem)
			defer b.Release()
			b.AppendValues([]float64{3, math.NaN(), 1, 0, math.Copysign(0, -1), 2, math.NaN()}, nil)
			return b.NewArray()
		}, []string{"4", "3", "6", "1", "2"}}, // 0 and -0.0 (lines 4 and 5) one group; NaN last, as in DuckDB
		{"int64 past 2^53", func(mem memory.Allocator) arrow.Array {
			b := array.NewInt64Builder(mem)
			defer b.Release()
			b.AppendValues([]int64{1<<60 + 2, 1<<60 + 1, 1 << 60, -1 << 60, 1<<60 + 3}, nil)
			return b.NewArray()
		}, []string{"4", "3", "2", "1", "5"}},
		// Lists compare by their last number: 40 distinct keys, all equal.
		{"list<int64> ties", func(mem memory.Allocator) arrow.Array {
			b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
			defer b.Release()
			for i := range 40 {
				b.Append(true)
				b.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{int64(i), 5}, nil)
			}
			return b.NewArray()
		}, strings.Fields("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40")},
	}
	for _, tt := range tests {
		atBudgets(t, tt.name, func(t *testing.T, mem memory.Allocator) {
			x := tt.col(mem)
			defer x.Release()
			s := arrow.NewSchema([]arrow.Field{{Name: "x", Type: x.DataType(), Nullable: true}, {Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64}}, nil)
			lb := array.NewInt64Builder(mem)
			for i := range x.Len() {
				lb.Append(int64(i + 1))
			}
			l := lb.NewArray()
			lb.Release()
			defer l.Release()
			in := array.NewRecordBatch(s, []arrow.Array{x, l}, int64(x.Len()))
			defer in.Release()
			a, err := NewAggregate(mem, s, &config.Aggregate{By: []string{"x"}, Sort: true, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if _, err := a.Process(t.Context(), in, &pipeline.Rejects{}); err != nil {
				t.Fatal(err)
			}
			out, err := a.Flush(t.Context(), &pipeline.Rejects{})
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			var got []string
			for _, r := range tcRows(out) {
				got = append(got, r[:strings.IndexByte(r, ':')])
			}
			tcEqual(t, "first lines", got, tt.lines)
		})
	}
}

// TestAggregateCloseWithoutFlush: a run that fails after an aggregate
// spilled closes it without a flush; its partition files must go and
// its memory be given back.
func TestAggregateCloseWithoutFlush(t *testing.T) {
	aggMemGroups(t, 2)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "_line:int64")
	a := aggFeed(t, mem, s, &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{{Name: "f", Fn: "first", Args: []string{"g"}}}},
		`[{"g":"a","_line":1},{"g":"b","_line":2},{"g":"c","_line":3},{"g":"d","_line":4}]`)
	if files, _ := os.ReadDir(SpillDir); len(files) == 0 {
		t.Fatal("4 groups with 2 in memory made no partition file")
	}
	a.Close()
	spillEmpty(t)
}

// TestPartOfSplitsAgain: the keys of one partition spread over the
// partitions of the next level, so a partition with too many groups
// splits instead of falling through to the last level in memory.
func TestPartOfSplitsAgain(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for level := 0; level < aggMaxLevel-1; level++ {
		next := map[int]bool{}
		for range 4000 {
			k := keyHash{r.Uint32(), r.Uint32(), r.Uint32()}
			if partOf(k, level) == 3 {
				next[partOf(k, level+1)] = true
			}
		}
		if len(next) < aggParts {
			t.Errorf("level %d: the keys of one partition go to %d of %d partitions at the next level", level, len(next), aggParts)
		}
	}
}

// TestAggregateFlushStops: a flush that spilled stops at a cancelled
// context or at an emit that fails, returns why, and leaves no file and
// no Arrow memory behind.
func TestAggregateFlushStops(t *testing.T) {
	var rows []string
	for i := range 300 {
		rows = append(rows, fmt.Sprintf(`{"g":"g%d","_line":%d}`, i, i+1))
	}
	batch := "[" + strings.Join(rows, ",") + "]"
	stop := errors.New("downstream failed")
	for _, tt := range []struct {
		name   string
		cancel bool
		want   error
	}{{"cancelled", true, context.Canceled}, {"emit fails", false, stop}} {
		t.Run(tt.name, func(t *testing.T) {
			aggMemGroups(t, 10)
			setForTest(t, &aggOutRows, 16)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, "g:string", "_line:int64")
			a := aggFeed(t, mem, s, &config.Aggregate{By: []string{"g"}, Sort: true, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}}, batch)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			emitted := 0
			err := a.FlushTo(ctx, func(b arrow.RecordBatch, _ *pipeline.Rejects) error {
				b.Release()
				emitted++
				return stop
			})
			if !errors.Is(err, tt.want) {
				t.Errorf("FlushTo = %v, want %v", err, tt.want)
			}
			if emitted > 1 {
				t.Errorf("%d batches emitted after the first failed", emitted)
			}
			a.Close()
			spillEmpty(t)
		})
	}
}

// groupedBatches makes batches (JSON) of rows whose groups come one
// after another, each group's rows spread over batch boundaries.
func groupedBatches(r *rand.Rand, groups, perBatch int) []string {
	var rows []string
	line := 0
	row := func(g int) string {
		line++
		gs := fmt.Sprintf("%q", fmt.Sprintf("g%d", g))
		if g == 5 {
			gs = "null"
		}
		return fmt.Sprintf(`{"g":%s,"v":"v%d","n":%d,"l":["x%d","y%d"],"_line":%d,"_file":"f%d"}`,
			gs, r.IntN(100), r.IntN(1000)-500, r.IntN(4), r.IntN(4), line, g)
	}
	for g := 0; g < groups; g++ {
		n := 1 + r.IntN(12)
		for k := 0; k < n; k++ {
			rows = append(rows, row(g))
		}
	}
	var batches []string
	for len(rows) > 0 {
		n := min(len(rows), 1+r.IntN(2*perBatch))
		batches = append(batches, "["+strings.Join(rows[:n], ",")+"]")
		rows = rows[n:]
	}
	return batches
}

// TestAggregateGrouped: on input whose groups come one after another, a
// grouped aggregate gives the rows, order and columns of the plain one,
// but emits groups from Process as they end and holds no more than
// aggOutRows groups and a batch's.
func TestAggregateGrouped(t *testing.T) {
	s := tcSchema(t, "g:string", "v:string", "n:int64", "l:list<string>", "_line:int64", "_file:string")
	setForTest(t, &aggOutRows, 16)
	aggMemGroups(t, 1<<20)
	cols := []config.AggColumn{
		{Name: "rows", Fn: "count"},
		{Name: "f", Fn: "first", Args: []string{"v"}},
		{Name: "la", Fn: "last", Args: []string{"v"}},
		{Name: "lo", Fn: "min", Args: []string{"n"}},
		{Name: "sum", Fn: "sum", Args: []string{"n"}},
		{Name: "u", Fn: "union", Args: []string{"l", "v"}},
	}
	for _, tc := range []struct {
		name     string
		groups   int
		perBatch int
	}{
		{"small batches", 500, 5},
		{"batches of many groups", 500, 300},
		{"fewer groups than a batch of output", 10, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batches := groupedBatches(rand.New(rand.NewPCG(7, uint64(tc.groups+tc.perBatch))), tc.groups, tc.perBatch)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			want := aggRun(t, mem, s, &config.Aggregate{By: []string{"g"}, Columns: cols}, batches...)
			if len(want) < tc.groups*9/10 {
				t.Fatalf("%d groups, want about %d", len(want), tc.groups)
			}

			a, err := NewAggregate(mem, s, &config.Aggregate{By: []string{"g"}, Columns: cols, Grouped: true})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var got []string
			emitted, held := 0, 0
			for _, js := range batches {
				in := tcBatch(t, mem, s, js)
				out, err := a.Process(t.Context(), in, &pipeline.Rejects{})
				if err != nil {
					in.Release()
					t.Fatal(err)
				}
				held = max(held, a.ngroups-keyRuns(in.Column(0).(*array.String)))
				in.Release()
				if out != nil {
					if !out.Schema().Equal(a.Schema()) {
						t.Errorf("schema %s, want %s", out.Schema(), a.Schema())
					}
					emitted++
					got = append(got, tcRows(out)...)
					out.Release()
				}
			}
			err = a.FlushTo(t.Context(), func(b arrow.RecordBatch, _ *pipeline.Rejects) error {
				got = append(got, tcRows(b)...)
				b.Release()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			tcEqual(t, "rows", got, want)
			// The first row of group aggOutRows+1 finds aggOutRows held.
			if many := len(want) > int(aggOutRows); many != (emitted > 0) {
				t.Errorf("Process emitted %d batches for %d groups", emitted, len(want))
			}
			if held > int(aggOutRows) {
				t.Errorf("held %d groups besides a batch's; want at most %d", held, aggOutRows)
			}
			spillEmpty(t)
		})
	}
}

// keyRuns counts the runs of equal keys in a string column (nulls
// equal): the groups a batch of grouped input holds rows of.
func keyRuns(c *array.String) int {
	runs := 0
	for i := 0; i < c.Len(); i++ {
		if i == 0 || c.IsNull(i) != c.IsNull(i-1) || c.IsValid(i) && c.Value(i) != c.Value(i-1) {
			runs++
		}
	}
	return runs
}

// TestAggregateGroupedKeyComesBackAfterSpill: the emitted keys past the
// key set's memory are in its run files; a key found there is the same
// error, and Close removes the files.
func TestAggregateGroupedKeyComesBackAfterSpill(t *testing.T) {
	s := tcSchema(t, "g:string", "_line:int64", "_file:string")
	setForTest(t, &aggOutRows, 2)
	setForTest(t, &UniqueMemKeys, 4)
	setForTest(t, &SpillDir, t.TempDir())
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a, err := NewAggregate(mem, s, &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}, Grouped: true})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for g := 0; g < 50; g++ {
		rows = append(rows, fmt.Sprintf(`{"g":"k%d","_line":%d,"_file":"f"}`, g, g+1))
	}
	rows = append(rows, `{"g":"k1","_line":51,"_file":"f"}`)
	err = tcProcessAll(t, a, mem, s, jsonBatches(rows, 5))
	if err == nil || !strings.Contains(err.Error(), "f:51: grouped: the group of g=k1 comes again") {
		t.Errorf("error %v, want one naming line 51", err)
	}
	if files, _ := os.ReadDir(SpillDir); len(files) == 0 {
		t.Error("the key set never spilled; the test does not test what it says")
	}
	a.Close()
	spillEmpty(t)
}

// TestAggregateGroupedKeyComesBack: a key whose group ended, emitted or
// still held, is an error naming the row's file and line, not a second
// row for the group or a quiet merge.
func TestAggregateGroupedKeyComesBack(t *testing.T) {
	s := tcSchema(t, "g:string", "_line:int64", "_file:string")
	setForTest(t, &aggOutRows, 2)
	cfg := &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}, Grouped: true}
	for _, tc := range []struct {
		name    string
		batches []string
		err     string // "" for none
	}{
		{"together across batches", []string{
			`[{"g":"a","_line":1,"_file":"x"},{"g":"a","_line":2,"_file":"x"}]`,
			`[{"g":"a","_line":3,"_file":"x"},{"g":"b","_line":4,"_file":"x"}]`,
			`[{"g":"b","_line":5,"_file":"y"}]`,
		}, ""},
		{"held, an error", []string{`[{"g":"a","_line":1,"_file":"x"},{"g":"b","_line":2,"_file":"x"},{"g":"a","_line":3,"_file":"x"}]`}, "x:3: grouped: the group of g=a comes again after it ended"},
		{"emitted, an error", []string{
			`[{"g":"a","_line":1,"_file":"x"},{"g":"b","_line":2,"_file":"x"},{"g":"c","_line":3,"_file":"y"}]`,
			`[{"g":"d","_line":1,"_file":"z"},{"g":"a","_line":7,"_file":"z"}]`,
		}, "z:7: grouped: the group of g=a comes again after it ended"},
		{"interleaved past a batch of output, an error", []string{
			`[{"g":"a","_line":1,"_file":"x"},{"g":"b","_line":2,"_file":"x"},{"g":"c","_line":3,"_file":"x"},{"g":"b","_line":4,"_file":"x"}]`,
		}, "x:4: grouped: the group of g=b comes again"},
		{"null key emitted, an error", []string{
			`[{"g":null,"_line":1,"_file":"x"},{"g":"b","_line":2,"_file":"x"},{"g":"c","_line":3,"_file":"y"}]`,
			`[{"g":null,"_line":4,"_file":"y"}]`,
		}, "y:4: grouped: the group of g=null comes again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			a, err := NewAggregate(mem, s, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			err = tcProcessAll(t, a, mem, s, tc.batches)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				out, err := a.Flush(t.Context(), &pipeline.Rejects{})
				if err != nil {
					t.Fatal(err)
				}
				defer out.Release()
				tcEqual(t, "rows", tcRows(out), []string{`1:{"g":"a","n":3}`, `4:{"g":"b","n":2}`})
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
		})
	}
	if _, err := NewAggregate(memory.DefaultAllocator, s, &config.Aggregate{By: []string{"g"}, Columns: cfg.Columns, Grouped: true, Sort: true}); err == nil {
		t.Error("grouped and sort: no error")
	}
}

// TestAggregateMinMaxIntegersExact: min and max of integers are integers,
// exact past 2⁵³ (as float64 they rounded); of floats, floats; a group
// whose values are all null gets null.
func TestAggregateMinMaxIntegersExact(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "i:int64", "j:int32", "f:float64", "_line:int64")
	cfg := &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
		{Name: "lo", Fn: "min", Args: []string{"i"}},
		{Name: "hi", Fn: "max", Args: []string{"i"}},
		{Name: "jhi", Fn: "max", Args: []string{"j"}},
		{Name: "fhi", Fn: "max", Args: []string{"f"}},
	}}
	got := aggRun(t, mem, s, cfg,
		`[{"g":"a","i":9007199254740993,"j":-5,"f":0.5,"_line":1},{"g":"a","i":9007199254740992,"j":-7,"f":1.5,"_line":2}]`,
		`[{"g":"b","i":null,"j":null,"f":null,"_line":3},{"g":"a","i":-9223372036854775808,"j":-6,"f":null,"_line":4}]`)
	want := []string{
		`1:{"fhi":1.5,"g":"a","hi":9007199254740993,"jhi":-5,"lo":-9223372036854775808}`,
		`3:{"fhi":null,"g":"b","hi":null,"jhi":null,"lo":null}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	a, err := NewAggregate(mem, s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, c := range []struct{ name, typ string }{{"lo", "int64"}, {"jhi", "int64"}, {"fhi", "float64"}} {
		if f, ok := a.Schema().FieldsByName(c.name); !ok || f[0].Type.String() != c.typ {
			t.Errorf("%s is %v, want %s", c.name, f, c.typ)
		}
	}
}

// -0.0 and 0.0 are one key, as in SQL's GROUP BY; the group's key is
// its first row's.
func TestAggregateNegativeZeroGroupsWithZero(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "f:float64", "x:float64", "_line:int64")
	cfg := &config.Aggregate{By: []string{"f", "x"}, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}}
	got := aggRun(t, mem, s, cfg,
		`[{"f":0.0,"x":-0.0,"_line":1},{"f":-0.0,"x":0.0,"_line":2}]`,
		`[{"f":1.5,"x":0.0,"_line":3},{"f":-0.0,"x":-0.0,"_line":4}]`)
	want := []string{
		`1:{"f":0,"n":3,"x":-0}`,
		`3:{"f":1.5,"n":1,"x":0}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAggregateKeepsFirstRowsFile: a group's row names the file and line
// of its first row (a folder input's rows carry their file), in memory
// and through partition files, so the rejects of the steps after an
// aggregate name their source.
func TestAggregateKeepsFirstRowsFile(t *testing.T) {
	s := tcSchema(t, "g:string", "v:int64", "_file:string", "_line:int64")
	cfg := &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}}
	for _, groups := range []int{1 << 20, 1} {
		t.Run(fmt.Sprintf("%d groups in memory", groups), func(t *testing.T) {
			aggMemGroups(t, groups)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			a := aggFeed(t, mem, s, cfg,
				`[{"g":"x","v":1,"_file":"chats/a","_line":2},{"g":"y","v":2,"_file":"chats/b","_line":2}]`,
				`[{"g":"x","v":3,"_file":"chats/b","_line":3},{"g":"z","v":4,"_file":"chats/c","_line":5}]`)
			defer a.Close()
			var got []string
			err := a.FlushTo(t.Context(), func(b arrow.RecordBatch, _ *pipeline.Rejects) error {
				defer b.Release()
				for i := range int(b.NumRows()) {
					got = append(got, fmt.Sprintf("%s:%d %s", pipeline.FileOf(b, i), pipeline.LineOf(b, i), pipeline.RowJSON(b, i)))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{`chats/a:2 {"g":"x","n":2}`, `chats/b:2 {"g":"y","n":1}`, `chats/c:5 {"g":"z","n":1}`}
			tcEqual(t, "rows", got, want)
		})
	}
}

// TestAggregateNamesInputColumns: a by or arg column the input lacks is
// reported with the input's columns, not only those the aggregate reads.
func TestAggregateNamesInputColumns(t *testing.T) {
	s := tcSchema(t, "g:string", "v:int64", "_line:int64")
	for _, tc := range []struct {
		name string
		cfg  *config.Aggregate
		want string
	}{
		{"by", &config.Aggregate{By: []string{"file"}, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}}, `aggregate: by: no column "file" (have g, v)`},
		{"arg", &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{{Name: "s", Fn: "sum", Args: []string{"w"}}}}, `aggregate: columns[0] s: no column "w" (have g, v)`},
		{"when", &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{{Name: "n", Fn: "count", When: &config.When{Column: "w", In: []string{"x"}}}}}, `aggregate: columns[0] n: when: no column "w" (have g, v)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewAggregate(memory.NewGoAllocator(), s, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestAggregateMinMaxNaN: NaN is the largest number, as in DuckDB and
// PostgreSQL: min passes it over unless every value is NaN, max takes it
// (math.Min and math.Max made both NaN).
func TestAggregateMinMaxNaN(t *testing.T) {
	s := tcSchema(t, "g:string", "f:float64", "_line:int64")
	cfg := config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
		{Name: "lo", Fn: "min", Args: []string{"f"}},
		{Name: "hi", Fn: "max", Args: []string{"f"}},
	}}
	atBudgets(t, "nan", func(t *testing.T, mem memory.Allocator) {
		tcEqual(t, "rows", aggRun(t, mem, s, &cfg,
			`[{"g":"a","f":1,"_line":1},{"g":"a","f":"NaN","_line":2},{"g":"a","f":2,"_line":3},{"g":"n","f":"NaN","_line":4},{"g":"z","f":0,"_line":5},{"g":"z","f":-0.0,"_line":6},{"g":"i","f":"-Inf","_line":7},{"g":"i","f":"NaN","_line":8}]`), []string{
			`1:{"g":"a","hi":"NaN","lo":1}`,
			`4:{"g":"n","hi":"NaN","lo":"NaN"}`,
			`5:{"g":"z","hi":0,"lo":-0}`,
			`7:{"g":"i","hi":"NaN","lo":"-Inf"}`,
		})
	})
}

// TestAggregateBuildErrors: keys a function does not read are errors, as
// derive's are (count took args and exclude went unread).
func TestAggregateBuildErrors(t *testing.T) {
	s := tcSchema(t, "g:string", "v:string", "n:int64", "_line:int64")
	tests := []struct {
		name string
		col  config.AggColumn
		err  string
	}{
		{"count with args", config.AggColumn{Name: "c", Fn: "count", Args: []string{"v"}}, "count counts rows and takes no args"},
		{"exclude on sum", config.AggColumn{Name: "s", Fn: "sum", Args: []string{"n"}, Exclude: []string{"x"}}, "exclude applies to union only, not sum"},
		{"exclude on count", config.AggColumn{Name: "c", Fn: "count", Exclude: []string{"x"}}, "exclude applies to union only, not count"},
		{"sum of a string", config.AggColumn{Name: "s", Fn: "sum", Args: []string{"v"}}, "sum needs a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			a, err := NewAggregate(mem, s, &config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{tt.col}})
			if a != nil {
				a.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

// TestAggregateSortsTimesInTime: sort: true orders timestamp keys by
// time, where it ordered their RFC 3339 text, in which "…00Z" comes
// after "…00.000001Z".
func TestAggregateSortsTimesInTime(t *testing.T) {
	s := tcSchema(t, "t:timestamp", "_line:int64")
	cfg := config.Aggregate{By: []string{"t"}, Sort: true, Columns: []config.AggColumn{{Name: "n", Fn: "count"}}}
	atBudgets(t, "sorted times", func(t *testing.T, mem memory.Allocator) {
		tcEqual(t, "rows", aggRun(t, mem, s, &cfg,
			`[{"t":"2024-01-01T00:00:00.000002Z","_line":1},{"t":"2024-01-01T00:00:00Z","_line":2},{"t":"2024-01-01T00:00:00.000001Z","_line":3},{"t":null,"_line":4}]`), []string{
			`4:{"n":1,"t":null}`,
			`2:{"n":1,"t":"2024-01-01T00:00:00Z"}`,
			`3:{"n":1,"t":"2024-01-01T00:00:00.000001Z"}`,
			`1:{"n":1,"t":"2024-01-01T00:00:00.000002Z"}`,
		})
	})
}

// TestAggregateMinMaxTimestamps: min and max of a timestamp column are a
// group's first and last time, in its type (they were refused: "needs a
// number"), with groups spilled too.
func TestAggregateMinMaxTimestamps(t *testing.T) {
	s := tcSchema(t, "g:string", "ts:timestamp", "_line:int64")
	cfg := config.Aggregate{By: []string{"g"}, Columns: []config.AggColumn{
		{Name: "first_at", Fn: "min", Args: []string{"ts"}},
		{Name: "last_at", Fn: "max", Args: []string{"ts"}},
	}}
	atBudgets(t, "timestamps", func(t *testing.T, mem memory.Allocator) {
		tcEqual(t, "rows", aggRun(t, mem, s, &cfg,
			`[{"g":"a","ts":"2025-03-01T10:00:00Z","_line":1},{"g":"b","ts":null,"_line":2},{"g":"a","ts":"1969-07-20T20:17:00Z","_line":3},{"g":"a","ts":"2025-03-01T10:00:00.000001Z","_line":4}]`), []string{
			`1:{"first_at":"1969-07-20T20:17:00Z","g":"a","last_at":"2025-03-01T10:00:00.000001Z"}`,
			`2:{"first_at":null,"g":"b","last_at":null}`,
		})
	})
	a, err := NewAggregate(memory.NewGoAllocator(), s, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, name := range []string{"first_at", "last_at"} {
		if typ := a.Schema().Field(a.Schema().FieldIndices(name)[0]).Type; !arrow.TypeEqual(typ, s.Field(1).Type) {
			t.Errorf("%s is %s, want %s", name, typ, s.Field(1).Type)
		}
	}
}
