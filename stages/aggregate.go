package stages

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
	"github.com/agora-etl/agora/stages/schulze"
)

// Aggregate groups rows by key columns and emits one row per group, in
// the order keys first appear, with the key columns, the line of the
// group's first row, and one column per aggregate. It is Ordered and
// holds its input until the end (Flush), so its memory is the size of
// the table it aggregates.
type Aggregate struct {
	sort   bool
	keep   []int // input columns held
	mem    memory.Allocator
	in     *arrow.Schema
	by     []int
	aggs   []aggFn
	schema *arrow.Schema
	held   []arrow.RecordBatch
}

type aggFn struct {
	spec config.AggColumn
	typ  arrow.DataType
	// build computes the column from the whole input and each group's rows.
	build func(b arrow.RecordBatch, groups [][]int) (arrow.Array, error)
}

// Name returns the step kind.
func (a *Aggregate) Name() string { return "aggregate" }

// Schema returns the output schema.
func (a *Aggregate) Schema() *arrow.Schema { return a.schema }

// Ordered reports true: groups come out in first-seen order.
func (a *Aggregate) Ordered() bool { return true }

// AggregateFuncs documents the aggregate functions.
var AggregateFuncs = map[string]string{
	"count":          "rows in the group (that pass when)",
	"count_non_null": "rows whose arg is not null",
	"first":          "the first non-null value of arg",
	"last":           "the last non-null value of arg",
	"min":            "the smallest number",
	"max":            "the largest number",
	"sum":            "the sum of numbers (float64)",
	"union":          "distinct values of string, list<string> or map<string,…> keys over several args, in first-seen order, without exclude",
	"schulze":        "the Schulze winner of the group's rankings: args [candidates list<string>, ranked ids list<string>, ranks list<int64>] per row, 0 = best; rankings with a -1 (mock) or not ranking every candidate are left out; ties go to the smallest id",
}

// NewAggregate plans an aggregation of in.
func NewAggregate(mem memory.Allocator, full *arrow.Schema, cfg *config.Aggregate) (*Aggregate, error) {
	// Hold only the columns the aggregation reads.
	need := map[string]bool{pipeline.LineColumn: true}
	for _, b := range cfg.By {
		need[b] = true
	}
	for _, c := range cfg.Columns {
		for _, a := range c.Args {
			need[a] = true
		}
		if c.When != nil {
			need[c.When.Column] = true
		}
	}
	var keep []int
	for i, f := range full.Fields() {
		if need[f.Name] {
			keep = append(keep, i)
		}
	}
	in := selectSchema(full, keep)
	by, err := needColumns(in, cfg.By...)
	if err != nil {
		return nil, fmt.Errorf("aggregate: by: %w", err)
	}
	a := &Aggregate{mem: mem, in: in, keep: keep, by: by, sort: cfg.Sort}
	var fields []arrow.Field
	for _, c := range by {
		fields = append(fields, in.Field(c))
	}
	fields = append(fields, arrow.Field{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64})
	for i, c := range cfg.Columns {
		fn, err := newAggFn(mem, in, c)
		if err != nil {
			return nil, fmt.Errorf("aggregate: columns[%d] %s: %w", i, c.Name, err)
		}
		a.aggs = append(a.aggs, fn)
		fields = append(fields, arrow.Field{Name: c.Name, Type: fn.typ, Nullable: true})
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("aggregate: two columns named %q", f.Name)
		}
		seen[f.Name] = true
	}
	a.schema = arrow.NewSchema(fields, nil)
	return a, nil
}

// Process holds the columns of the batch the aggregation reads until
// Flush.
func (a *Aggregate) Process(_ context.Context, in arrow.RecordBatch, _ *pipeline.Rejects) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(a.keep))
	for i, j := range a.keep {
		cols[i] = in.Column(j)
	}
	a.held = append(a.held, array.NewRecordBatch(a.in, cols, in.NumRows()))
	return nil, nil
}

// Close releases held batches if the run ends before Flush.
func (a *Aggregate) Close() {
	for _, b := range a.held {
		b.Release()
	}
	a.held = nil
}

// Flush computes one row per group.
func (a *Aggregate) Flush(ctx context.Context, _ *pipeline.Rejects) (arrow.RecordBatch, error) {
	if len(a.held) == 0 {
		return nil, nil
	}
	defer a.Close()
	all, err := concatBatches(a.mem, a.in, a.held)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	var groups [][]int
	index := map[string]int{}
	for i := 0; i < int(all.NumRows()); i++ {
		k := rowKey(all, a.by, i)
		g, ok := index[k]
		if !ok {
			g = len(groups)
			index[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	if a.sort {
		sort.SliceStable(groups, func(x, y int) bool { return lessRow(all, a.by, groups[x][0], groups[y][0]) })
	}
	firsts := make([]int64, len(groups))
	for g, rows := range groups {
		firsts[g] = int64(rows[0])
	}
	keyCols := make([]arrow.Array, 0, len(a.by)+1)
	for _, c := range a.by {
		keyCols = append(keyCols, all.Column(c))
	}
	if l := colIndex(a.in, pipeline.LineColumn); l >= 0 {
		keyCols = append(keyCols, all.Column(l))
	}
	out, err := takeColumns(ctx, a.mem, keyCols, firsts)
	if err != nil {
		return nil, err
	}
	if len(out) == len(a.by) { // no line column in the input
		ib := array.NewInt64Builder(a.mem)
		ib.AppendNulls(len(groups))
		out = append(out, ib.NewArray())
		ib.Release()
	}
	for _, fn := range a.aggs {
		col, err := fn.build(all, groups)
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("%s: %w", fn.spec.Name, err)
		}
		out = append(out, col)
	}
	return newBatch(a.schema.Fields(), out, int64(len(groups))), nil
}

func newAggFn(mem memory.Allocator, in *arrow.Schema, c config.AggColumn) (aggFn, error) {
	var when func(b arrow.RecordBatch, i int) bool
	if c.When != nil {
		if colIndex(in, c.When.Column) < 0 {
			return aggFn{}, fmt.Errorf("when: %w %q", ErrNoColumn, c.When.Column)
		}
		w := c.When
		when = func(b arrow.RecordBatch, i int) bool { return matches(b, w, i) }
	}
	pass := func(b arrow.RecordBatch, i int) bool { return when == nil || when(b, i) }
	args, err := needColumns(in, c.Args...)
	if err != nil {
		return aggFn{}, err
	}
	one := func() error {
		if len(args) != 1 {
			return fmt.Errorf("%s takes one arg, got %d", c.Fn, len(args))
		}
		return nil
	}
	fn := aggFn{spec: c}
	switch c.Fn {
	case "count", "count_non_null":
		if c.Fn == "count_non_null" {
			if err := one(); err != nil {
				return fn, err
			}
		}
		fn.typ = arrow.PrimitiveTypes.Int64
		fn.build = func(b arrow.RecordBatch, groups [][]int) (arrow.Array, error) {
			ib := array.NewInt64Builder(mem)
			defer ib.Release()
			for _, rows := range groups {
				var n int64
				for _, i := range rows {
					if pass(b, i) && (c.Fn == "count" || b.Column(args[0]).IsValid(i)) {
						n++
					}
				}
				ib.Append(n)
			}
			return ib.NewArray(), nil
		}
	case "first", "last":
		if err := one(); err != nil {
			return fn, err
		}
		fn.typ = in.Field(args[0]).Type
		fn.build = func(b arrow.RecordBatch, groups [][]int) (arrow.Array, error) {
			col := b.Column(args[0])
			ib := array.NewInt64Builder(mem)
			defer ib.Release()
			for _, rows := range groups {
				pick := -1
				for _, i := range rows {
					if pass(b, i) && col.IsValid(i) {
						pick = i
						if c.Fn == "first" {
							break
						}
					}
				}
				if pick < 0 {
					ib.AppendNull()
				} else {
					ib.Append(int64(pick))
				}
			}
			idx := ib.NewArray()
			defer idx.Release()
			return takeOne(mem, col, idx)
		}
	case "min", "max", "sum":
		if err := one(); err != nil {
			return fn, err
		}
		if t := in.Field(args[0]).Type; !isNumeric(t) || isList(t) {
			return fn, fmt.Errorf("%s needs a number, %s is %s", c.Fn, c.Args[0], t)
		}
		fn.typ = arrow.PrimitiveTypes.Float64
		fn.build = func(b arrow.RecordBatch, groups [][]int) (arrow.Array, error) {
			col := b.Column(args[0])
			return float64Of(mem, len(groups), func(g int) (float64, bool) {
				acc, any := 0.0, false
				switch c.Fn {
				case "min":
					acc = math.Inf(1)
				case "max":
					acc = math.Inf(-1)
				}
				for _, i := range groups[g] {
					if !pass(b, i) || col.IsNull(i) {
						continue
					}
					eachNumber(col, i, func(f float64) bool {
						any = true
						switch c.Fn {
						case "min":
							acc = math.Min(acc, f)
						case "max":
							acc = math.Max(acc, f)
						default:
							acc += f
						}
						return true
					})
				}
				return acc, any
			}), nil
		}
	case "union":
		if len(args) == 0 {
			return fn, fmt.Errorf("union needs args")
		}
		for k, a := range args {
			t := in.Field(a).Type
			if !isString(t) && !isStringList(t) && !(isMap(t) && t.(*arrow.MapType).KeyType().ID() == arrow.STRING) {
				return fn, fmt.Errorf("union: %s is %s, want string, list<string> or a map with string keys", c.Args[k], t)
			}
		}
		exclude := map[string]bool{}
		for _, e := range c.Exclude {
			exclude[e] = true
		}
		fn.typ = arrow.ListOf(arrow.BinaryTypes.String)
		fn.build = func(b arrow.RecordBatch, groups [][]int) (arrow.Array, error) {
			lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
			defer lb.Release()
			vb := lb.ValueBuilder().(*array.StringBuilder)
			for _, rows := range groups {
				lb.Append(true)
				seen := map[string]bool{}
				add := func(s string) {
					if !seen[s] && !exclude[s] {
						seen[s] = true
						vb.Append(s)
					}
				}
				for _, a := range args {
					for _, i := range rows {
						if !pass(b, i) {
							continue
						}
						eachKeyOrString(b.Column(a), i, add)
					}
				}
			}
			return lb.NewArray(), nil
		}
	case "schulze":
		if len(args) != 3 {
			return fn, fmt.Errorf("schulze takes [candidates, ranked ids, ranks], got %d args", len(args))
		}
		for k := 0; k < 2; k++ {
			if !isStringList(in.Field(args[k]).Type) {
				return fn, fmt.Errorf("schulze: %s is %s, want list<string>", c.Args[k], in.Field(args[k]).Type)
			}
		}
		if lt, ok := in.Field(args[2]).Type.(*arrow.ListType); !ok || !isNumeric(lt.Elem()) {
			return fn, fmt.Errorf("schulze: %s is %s, want a list of integers", c.Args[2], in.Field(args[2]).Type)
		}
		fn.typ = arrow.BinaryTypes.String
		fn.build = func(b arrow.RecordBatch, groups [][]int) (arrow.Array, error) {
			cands, ids := b.Column(args[0]).(*array.List), b.Column(args[1]).(*array.List)
			ranks := b.Column(args[2])
			return stringOf(mem, len(groups), func(g int) (string, bool) {
				var ballots []schulze.Ballot
				all := map[string]bool{}
				var order []string
				for _, i := range groups[g] {
					for _, c := range stringList(cands, i) {
						if !all[c] {
							all[c] = true
							order = append(order, c)
						}
					}
				}
				for _, i := range groups[g] {
					if !pass(b, i) || ids.IsNull(i) || ranks.IsNull(i) {
						continue
					}
					rid := stringList(ids, i)
					var rs []float64
					eachNumber(ranks, i, func(f float64) bool { rs = append(rs, f); return true })
					if len(rs) != len(rid) {
						continue
					}
					ballot := schulze.Ballot{}
					ok := true
					for k, id := range rid {
						if rs[k] < 0 {
							ok = false // a mock ranking
						}
						ballot[id] = int(rs[k])
					}
					for _, c := range stringList(cands, i) {
						if _, ranked := ballot[c]; !ranked {
							ok = false // incomplete
						}
					}
					if ok {
						ballots = append(ballots, ballot)
					}
				}
				w, _, err := schulze.Winner(order, ballots)
				return w, err == nil
			}), nil
		}
	default:
		return fn, fmt.Errorf("unknown aggregate %q (have count, count_non_null, first, last, min, max, sum, union, schulze)", c.Fn)
	}
	return fn, nil
}

// lessRow orders rows i and j by the key columns: nulls first, numbers
// numerically, everything else by its string form.
func lessRow(b arrow.RecordBatch, keys []int, i, j int) bool {
	for _, c := range keys {
		col := b.Column(c)
		ni, nj := col.IsNull(i), col.IsNull(j)
		if ni || nj {
			if ni != nj {
				return ni
			}
			continue
		}
		if isNumeric(col.DataType()) {
			var x, y float64
			eachNumber(col, i, func(f float64) bool { x = f; return true })
			eachNumber(col, j, func(f float64) bool { y = f; return true })
			if x != y {
				return x < y
			}
			continue
		}
		if x, y := valueString(col, i), valueString(col, j); x != y {
			return x < y
		}
	}
	return false
}

func isMap(t arrow.DataType) bool { _, ok := t.(*arrow.MapType); return ok }

// eachKeyOrString calls f on a string, each string of a list, or each key
// of a map.
func eachKeyOrString(a arrow.Array, i int, f func(string)) {
	if a.IsNull(i) {
		return
	}
	if m, ok := a.(*array.Map); ok {
		keys := m.Keys().(*array.String)
		s, e := m.ValueOffsets(i)
		for j := s; j < e; j++ {
			f(keys.Value(int(j)))
		}
		return
	}
	eachString(a, i, func(s string) bool { f(s); return true })
}

// takeOne gathers col at idx; a null index gives null.
func takeOne(mem memory.Allocator, col, idx arrow.Array) (arrow.Array, error) {
	return compute.TakeArray(exec.WithAllocator(context.Background(), mem), col, idx)
}
