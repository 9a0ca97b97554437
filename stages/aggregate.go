package stages

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/pipeline"
	"github.com/agora-etl/agora/stages/schulze"
)

// Aggregate groups rows by key columns and emits one row per group, in
// the order keys first appear (or sorted by key), with the key columns,
// the line of the group's first row, and one column per aggregate. It is
// Ordered and folds each batch into per-group state as it comes: a 12-byte
// key hash, the group's first row (key columns and line, copied), and each
// aggregate's accumulator (a count, a number, a copied value, the distinct
// strings of a union, the pairwise counts of a Schulze tally).
//
// It keeps state for at most AggregateMemGroups groups. The rows of
// further groups go to temporary partition files by their key's hash
// (aggspill.go); at the end each partition is aggregated in turn (and
// split again if it still holds too many groups), and the partitions'
// groups are merged with those in memory into the same order, so its
// memory is bounded whatever the number of groups. It emits batches of
// aggOutRows groups.
//
// Grouped (config.Aggregate.Grouped: the input holds each group's rows
// together), it instead emits the groups it holds from Process, once
// there are aggOutRows of them, at the first row of a new group, and
// starts again with none. A key that comes back after its group ended
// (after rows of another key) is an error: it keeps the emitted groups'
// key hashes in a keySet to know them. It never writes partition files.
type Aggregate struct {
	sort      bool
	grouped   bool
	cfg       *config.Aggregate
	keep      []int // input columns read
	mem       memory.Allocator
	in        *arrow.Schema // the columns read, then the row number (seq)
	by        []int
	line      int // the line column in in, or -1
	file      int // the file column in in (a folder input's), or -1
	seq       int // the row-number column in in: the last
	aggs      []aggFn
	schema    *arrow.Schema // what the aggregate emits
	outSchema *arrow.Schema // schema and the first row's seq: what partitions give back

	level     int   // 0, or how many times the rows were split into partitions
	memGroups int   // groups kept in memory
	nextSeq   int64 // the next input row's number (level 0)
	parts     []*spillFile

	index   map[keyHash]int
	ngroups int
	firsts  *rowStore // key columns and line of each group's first row
	accs    []accumulator
	keyBuf  []byte

	// Grouped only: the keys of the groups emitted, and the key of the
	// last row folded (open says there was one).
	done *keySet
	last keyHash
	open bool
}

type aggFn struct {
	spec config.AggColumn
	typ  arrow.DataType
	// newAcc starts the aggregate's per-group state.
	newAcc func() accumulator
}

// accumulator folds rows into per-group state.
type accumulator interface {
	// add folds row i of b (the aggregation's input columns) into group g;
	// groups are numbered from 0 as they first appear.
	add(b arrow.RecordBatch, i, g int)
	// endBatch is called after the rows of b were added, before b goes.
	endBatch(ctx context.Context, b arrow.RecordBatch) error
	// build returns the column for the groups in order.
	build(ctx context.Context, order []int) (arrow.Array, error)
	release()
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
	"min":            "the smallest number (int64 for an integer column, exact; else float64)",
	"max":            "the largest number (int64 for an integer column, exact; else float64)",
	"sum":            "the sum of numbers (float64)",
	"union":          "distinct values of string, list<string> or map<string,…> keys over several args, in first-seen order within each arg, arg after arg, without exclude",
	"schulze":        "the Schulze winner of the group's rankings: args [candidates list<string>, ranked ids list<string>, ranks list<int64>] per row, 0 = best; rankings with a -1 (mock) or not ranking every candidate of their row are left out; a candidate only other rows show is below all a ballot ranks; ties go to the smallest id",
}

// NewAggregate plans an aggregation of in.
func NewAggregate(mem memory.Allocator, full *arrow.Schema, cfg *config.Aggregate) (*Aggregate, error) {
	if colIndex(full, seqField) >= 0 {
		return nil, fmt.Errorf("aggregate: %q is a name agora keeps for itself", seqField)
	}
	// A column named that the input lacks is reported here, against the
	// whole input: newAggregate sees only the columns read (and finds
	// them again, for a partition file's rows too, by name).
	if _, err := needColumns(full, cfg.By...); err != nil {
		return nil, fmt.Errorf("aggregate: by: %w", err)
	}
	for i, c := range cfg.Columns {
		if _, err := needColumns(full, c.Args...); err != nil {
			return nil, fmt.Errorf("aggregate: columns[%d] %s: %w", i, c.Name, err)
		}
		if c.When != nil {
			if _, err := needColumns(full, c.When.Column); err != nil {
				return nil, fmt.Errorf("aggregate: columns[%d] %s: when: %w", i, c.Name, err)
			}
		}
	}
	// Read only the columns the aggregation needs.
	need := map[string]bool{pipeline.LineColumn: true, pipeline.FileColumn: true}
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
	in = arrow.NewSchema(append(in.Fields(), arrow.Field{Name: seqField, Type: arrow.PrimitiveTypes.Int64}), nil)
	return newAggregate(mem, in, keep, cfg, 0)
}

// newAggregate plans an aggregation of in, whose last column numbers the
// rows; keep are the columns of Process's batches read into in, but for
// the last (level 0), or nil when they are in's (a partition's).
func newAggregate(mem memory.Allocator, in *arrow.Schema, keep []int, cfg *config.Aggregate, level int) (*Aggregate, error) {
	by, err := needColumns(in, cfg.By...)
	if err != nil {
		return nil, fmt.Errorf("aggregate: by: %w", err)
	}
	a := &Aggregate{mem: mem, cfg: cfg, in: in, keep: keep, by: by, sort: cfg.Sort, line: colIndex(in, pipeline.LineColumn), file: -1,
		seq: in.NumFields() - 1, level: level, memGroups: AggregateMemGroups, index: map[keyHash]int{}}
	if cfg.Grouped && level == 0 {
		if cfg.Sort {
			return nil, fmt.Errorf("aggregate: grouped emits groups as they end, sort orders them all by key: choose one")
		}
		// Groups leave memory as they end, so a batch's worth at most is
		// held: no partition files.
		a.grouped, a.done, a.memGroups = true, newKeySet(), math.MaxInt
	}
	var fields []arrow.Field
	for _, c := range by {
		fields = append(fields, in.Field(c))
	}
	fields = append(fields, arrow.Field{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64})
	if a.line >= 0 {
		// A group's row names the file and line of its first row, for
		// the rejects of the steps after.
		if a.file = colIndex(in, pipeline.FileColumn); a.file >= 0 {
			fields = append(fields, in.Field(a.file))
		}
	}
	for i, c := range cfg.Columns {
		fn, err := newAggFn(mem, in, c)
		if err != nil {
			return nil, fmt.Errorf("aggregate: columns[%d] %s: %w", i, c.Name, err)
		}
		a.aggs = append(a.aggs, fn)
		fields = append(fields, arrow.Field{Name: c.Name, Type: fn.typ, Nullable: true})
	}
	seen := map[string]bool{seqField: true}
	for _, f := range fields {
		if seen[f.Name] {
			if f.Name == seqField {
				return nil, fmt.Errorf("aggregate: %q is a name agora keeps for itself", seqField)
			}
			return nil, fmt.Errorf("aggregate: two columns named %q", f.Name)
		}
		seen[f.Name] = true
	}
	a.schema = arrow.NewSchema(fields, nil)
	a.outSchema = arrow.NewSchema(append(fields, in.Field(a.seq)), nil)
	a.start()
	return a, nil
}

// start sets up empty per-group state.
func (a *Aggregate) start() {
	firstCols := append([]int(nil), a.by...)
	if a.line >= 0 {
		firstCols = append(firstCols, a.line)
	}
	if a.file >= 0 {
		firstCols = append(firstCols, a.file)
	}
	firstCols = append(firstCols, a.seq)
	a.firsts = newRowStore(a.mem, a.in, firstCols)
	a.accs = make([]accumulator, len(a.aggs))
	for i, fn := range a.aggs {
		a.accs[i] = fn.newAcc()
	}
}

// Process folds the batch into the groups' state, or writes the rows of
// groups past the memory budget to their partition file; it returns
// nothing until Flush. Grouped, it returns the groups held that had
// ended by the first row of a new group, once aggOutRows had (at most
// one batch per call, the caller's), and nothing otherwise.
func (a *Aggregate) Process(ctx context.Context, full arrow.RecordBatch, _ *pipeline.Rejects) (_ arrow.RecordBatch, err error) {
	b := a.numbered(full)
	defer b.Release()
	var out arrow.RecordBatch // grouped: the groups that ended
	defer func() {
		if err != nil && out != nil {
			out.Release()
		}
	}()
	var spill [aggParts][]int64
	for i := 0; i < int(b.NumRows()); i++ {
		k := hashRowKey(&a.keyBuf, b, a.by, i)
		g, ok := a.index[k]
		if a.grouped && (!a.open || k != a.last) {
			// The last row's group ended, and with it every group held:
			// emit them, once there are enough for a batch. A key held
			// is a group that ended coming back, as one emitted would be.
			if ok {
				return nil, a.comesAgain(full, b, i)
			}
			if out == nil && a.ngroups >= int(aggOutRows) {
				if out, err = a.emitHeld(ctx, b); err != nil {
					return nil, err
				}
			}
			a.last, a.open = k, true
		}
		if !ok {
			if a.ngroups >= a.memGroups && a.level < aggMaxLevel {
				p := partOf(k, a.level)
				spill[p] = append(spill[p], int64(i))
				continue
			}
			if a.done != nil {
				if err := a.checkNotDone(k, full, b, i); err != nil {
					return nil, err
				}
			}
			g = a.ngroups
			a.ngroups++
			a.index[k] = g
			a.firsts.set(g, i)
		}
		for _, acc := range a.accs {
			acc.add(b, i, g)
		}
	}
	if err := a.endBatch(ctx, b); err != nil {
		return nil, err
	}
	if err := a.spillRows(ctx, b, &spill); err != nil {
		return nil, err
	}
	return out, nil
}

// endBatch copies out of b what the groups chose of it.
func (a *Aggregate) endBatch(ctx context.Context, b arrow.RecordBatch) error {
	if err := a.firsts.endBatch(ctx, b); err != nil {
		return err
	}
	for _, acc := range a.accs {
		if err := acc.endBatch(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// emitHeld (grouped) ends every group in memory, in the middle of b:
// it returns their rows (FlushTo's batch, the caller's), records their
// keys as done and starts again with no groups.
func (a *Aggregate) emitHeld(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if err := a.endBatch(ctx, b); err != nil {
		return nil, err
	}
	held, err := a.inMemory(ctx)
	if err != nil || held == nil {
		return nil, err
	}
	defer held.Release()
	for k := range a.index {
		if err := a.done.set(k, 0); err != nil {
			return nil, fmt.Errorf("grouped: %w", err)
		}
	}
	a.releaseState()
	a.start()
	// Without the row numbers, as FlushTo.
	return array.NewRecordBatch(a.schema, held.Columns()[:a.schema.NumFields()], held.NumRows()), nil
}

// checkNotDone (grouped) returns comesAgain's error when row i's key is
// one of a group already emitted.
func (a *Aggregate) checkNotDone(k keyHash, full, b arrow.RecordBatch, i int) error {
	_, seen, err := a.done.get(k)
	if err != nil {
		return fmt.Errorf("grouped: %w", err)
	}
	if !seen {
		return nil
	}
	return a.comesAgain(full, b, i)
}

// comesAgain (grouped) is the error for row i of b (full, as Process got
// it), whose group ended before it: the input does not hold each group's
// rows together. Held or emitted, the group is an error alike, so that
// what fails does not depend on where the input's batches end.
func (a *Aggregate) comesAgain(full, b arrow.RecordBatch, i int) error {
	return groupComesAgain(full, b, a.by, i)
}

// groupComesAgain is the error of a grouped step (an aggregate, lag or
// fill_down) for row i, whose key's rows ended before it, naming its
// file (a pipeline.RowError: the pipeline names the file of an input of
// one file), line and key: keys are columns by of b, the file and line are
// full's (b itself or the columns of it the step reads).
func groupComesAgain(full, b arrow.RecordBatch, by []int, i int) error {
	key := make([]string, len(by))
	for j, c := range by {
		name := b.Schema().Field(c).Name
		key[j] = fmt.Sprintf("%s=%s", name, valueString(b.Column(c), i))
		if b.Column(c).IsNull(i) {
			key[j] = name + "=null"
		}
	}
	return &pipeline.RowError{File: pipeline.FileOf(full, i), Line: pipeline.LineOf(full, i),
		Err: fmt.Errorf("grouped: the group of %s comes again after it ended; the input does not hold each group's rows together (a row of another group among them, before this line, or the group split over files; leave grouped out to take any order)", strings.Join(key, ", "))}
}

// numbered returns the columns of full the aggregation reads and the
// rows' numbers; the caller releases it.
func (a *Aggregate) numbered(full arrow.RecordBatch) arrow.RecordBatch {
	if a.level > 0 { // a partition's rows, numbered when first read
		full.Retain()
		return full
	}
	n := full.NumRows()
	cols := make([]arrow.Array, len(a.keep), len(a.keep)+1)
	for i, j := range a.keep {
		cols[i] = full.Column(j)
	}
	base := a.nextSeq
	a.nextSeq += n
	seq := int64Of(a.mem, full, func(i int) (int64, bool) { return base + int64(i), true })
	defer seq.Release()
	return array.NewRecordBatch(a.in, append(cols, seq), n)
}

// Close releases the groups' state and removes the partition files.
func (a *Aggregate) Close() {
	a.releaseState()
	if a.done != nil {
		a.done.close()
	}
	for _, f := range a.parts {
		if f != nil {
			f.remove()
		}
	}
	a.parts = nil
}

// releaseState releases the state of the groups in memory.
func (a *Aggregate) releaseState() {
	if a.firsts != nil {
		a.firsts.release()
	}
	for _, acc := range a.accs {
		acc.release()
	}
	a.firsts, a.accs = nil, nil
	clear(a.index)
	a.ngroups = 0
}

// FlushTo emits one row per group, aggOutRows groups a batch: the
// groups in memory and, merged with them in the same order, those of
// each partition file.
func (a *Aggregate) FlushTo(ctx context.Context, emit func(arrow.RecordBatch, *pipeline.Rejects) error) error {
	defer a.Close()
	return a.flush(ctx, func(b arrow.RecordBatch) error {
		// Without the row numbers, which only order the merge.
		out := array.NewRecordBatch(a.schema, b.Columns()[:a.schema.NumFields()], b.NumRows())
		b.Release()
		return emit(out, &pipeline.Rejects{})
	})
}

// Flush emits one row per group, in one batch (what FlushTo emits,
// joined).
func (a *Aggregate) Flush(ctx context.Context, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	return joinFlush(ctx, a.mem, a.schema, rej, a.FlushTo)
}

// inMemory returns a batch (outSchema) of the groups in memory, in output
// order, or nil when there are none; the caller owns it.
func (a *Aggregate) inMemory(ctx context.Context) (arrow.RecordBatch, error) {
	if a.firsts == nil || a.ngroups == 0 {
		return nil, nil
	}
	order := make([]int, a.ngroups)
	for g := range order {
		order[g] = g
	}
	out, err := a.firsts.build(ctx, order) // keys, line (if any), seq
	if err != nil {
		return nil, err
	}
	if a.sort {
		keys := array.NewRecordBatch(selectSchema(a.in, a.by), out[:len(a.by)], int64(a.ngroups))
		idx := make([]int, len(a.by))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(order, func(x, y int) bool { return lessRow(keys, idx, order[x], order[y]) })
		keys.Release()
		sorted := make([]int64, len(order))
		for i, g := range order {
			sorted[i] = int64(g)
		}
		re, err := takeColumns(ctx, a.mem, out, sorted)
		releaseAll(out)
		if err != nil {
			return nil, err
		}
		out = re
	}
	seq := out[len(out)-1]
	out = out[:len(out)-1]
	if a.line < 0 { // no line column in the input
		ib := array.NewInt64Builder(a.mem)
		ib.AppendNulls(a.ngroups)
		out = append(out, ib.NewArray())
		ib.Release()
	}
	for i, acc := range a.accs {
		col, err := acc.build(ctx, order)
		if err != nil {
			releaseAll(out)
			seq.Release()
			return nil, fmt.Errorf("%s: %w", a.aggs[i].spec.Name, err)
		}
		out = append(out, col)
	}
	return newBatch(a.outSchema.Fields(), append(out, seq), int64(a.ngroups)), nil
}

// rowStore keeps copies of chosen rows of some columns, one slot per
// group: rows chosen while a batch is processed are copied out of it when
// the batch ends, so the store holds only what it keeps. Slots overwritten
// leave garbage, collected when it outgrows what is live.
type rowStore struct {
	mem    memory.Allocator
	cols   []int
	types  []arrow.DataType // of cols
	chunks [][]arrow.Array
	rows   int64   // rows stored over all chunks
	slots  []int64 // global row per slot, -1 for none
	pend   []int64 // rows of the current batch to copy
	pslot  map[int]int
}

func newRowStore(mem memory.Allocator, in *arrow.Schema, cols []int) *rowStore {
	types := make([]arrow.DataType, len(cols))
	for i, c := range cols {
		types[i] = in.Field(c).Type
	}
	return &rowStore{mem: mem, cols: cols, types: types, pslot: map[int]int{}}
}

// set chooses row i of the current batch for slot g (a later set of the
// same slot in the same batch replaces it).
func (s *rowStore) set(g, i int) {
	for len(s.slots) <= g {
		s.slots = append(s.slots, -1)
	}
	if p, ok := s.pslot[g]; ok {
		s.pend[p] = int64(i)
		return
	}
	s.pslot[g] = len(s.pend)
	s.pend = append(s.pend, int64(i))
}

// has reports whether slot g holds a row (or one is pending).
func (s *rowStore) has(g int) bool {
	if _, ok := s.pslot[g]; ok {
		return true
	}
	return g < len(s.slots) && s.slots[g] >= 0
}

func (s *rowStore) endBatch(ctx context.Context, b arrow.RecordBatch) error {
	if len(s.pend) == 0 {
		return nil
	}
	cols := make([]arrow.Array, len(s.cols))
	for i, c := range s.cols {
		cols[i] = b.Column(c)
	}
	// Copies, not views: the store outlives the batch.
	taken, err := arrowx.CopyRows(ctx, s.mem, cols, s.pend)
	if err != nil {
		return err
	}
	s.chunks = append(s.chunks, taken)
	for g, p := range s.pslot {
		s.slots[g] = s.rows + int64(p)
	}
	s.rows += int64(len(s.pend))
	s.pend = s.pend[:0]
	clear(s.pslot)
	// Collect garbage (rows of overwritten slots) when it outgrows what
	// is live: copy the live rows into one chunk.
	if live := int64(len(s.slots)); s.rows > 2*live+4096 {
		return s.compact(ctx)
	}
	return nil
}

// compact copies the live rows into one chunk, slot order.
func (s *rowStore) compact(ctx context.Context) error {
	order := make([]int, len(s.slots))
	for g := range order {
		order[g] = g
	}
	cols, err := s.build(ctx, order)
	if err != nil {
		return err
	}
	s.releaseChunks()
	s.chunks = [][]arrow.Array{cols}
	s.rows = int64(len(s.slots))
	for g := range s.slots {
		if s.slots[g] >= 0 {
			s.slots[g] = int64(g)
		}
	}
	return nil
}

// build returns each column's values for the slots in order (null for a
// slot without a row).
func (s *rowStore) build(ctx context.Context, order []int) ([]arrow.Array, error) {
	ib := array.NewInt64Builder(s.mem)
	defer ib.Release()
	for _, g := range order {
		if g < len(s.slots) && s.slots[g] >= 0 {
			ib.Append(s.slots[g])
		} else {
			ib.AppendNull()
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	out := make([]arrow.Array, 0, len(s.cols))
	for c := range s.cols {
		parts := make([]arrow.Array, len(s.chunks))
		for k, ch := range s.chunks {
			parts[k] = ch[c]
		}
		var all arrow.Array
		if len(parts) == 1 {
			all = parts[0]
			all.Retain()
		} else if len(parts) == 0 {
			all = array.MakeArrayOfNull(s.mem, s.types[c], 0)
		} else {
			var err error
			if all, err = array.Concatenate(parts, s.mem); err != nil {
				releaseAll(out)
				return nil, err
			}
		}
		col, err := takeOne(s.mem, all, idx)
		all.Release()
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, col)
	}
	return out, nil
}

func (s *rowStore) releaseChunks() {
	for _, ch := range s.chunks {
		releaseAll(ch)
	}
	s.chunks = nil
}

func (s *rowStore) release() { s.releaseChunks() }

// accFuncs adapts closures to accumulator.
type accFuncs struct {
	addFn   func(b arrow.RecordBatch, i, g int)
	endFn   func(ctx context.Context, b arrow.RecordBatch) error
	buildFn func(ctx context.Context, order []int) (arrow.Array, error)
	relFn   func()
}

func (f *accFuncs) add(b arrow.RecordBatch, i, g int) { f.addFn(b, i, g) }
func (f *accFuncs) endBatch(ctx context.Context, b arrow.RecordBatch) error {
	if f.endFn == nil {
		return nil
	}
	return f.endFn(ctx, b)
}
func (f *accFuncs) build(ctx context.Context, order []int) (arrow.Array, error) {
	return f.buildFn(ctx, order)
}
func (f *accFuncs) release() {
	if f.relFn != nil {
		f.relFn()
	}
}

// smallSet is the size up to which a group's distinct values are found
// by scanning their list; a map is made past it.
const smallSet = 16

// containsSmall reports whether s is among vals (seen, when made, holds
// the same values).
func containsSmall(vals []string, seen map[string]bool, s string) bool {
	if seen != nil {
		return seen[s]
	}
	return slices.Contains(vals, s)
}

// intExtreme is the accumulator of min (or max) over integer column col:
// per group, the smallest (largest) value of the rows pass lets through,
// null for a group with none.
func intExtreme(mem memory.Allocator, typ arrow.DataType, min bool, col int, pass func(b arrow.RecordBatch, i int) bool) accumulator {
	var acc []int64
	var any []bool
	return &accFuncs{
		addFn: func(b arrow.RecordBatch, i, g int) {
			acc, any = grow(acc, g, 0), grow(any, g, false)
			a := b.Column(col)
			if !pass(b, i) || a.IsNull(i) {
				return
			}
			v := intValue(a, i)
			if !any[g] || min && v < acc[g] || !min && v > acc[g] {
				acc[g] = v
			}
			any[g] = true
		},
		buildFn: func(_ context.Context, order []int) (arrow.Array, error) {
			ib := array.NewInt64Builder(mem)
			defer ib.Release()
			for _, g := range order {
				if g < len(acc) && any[g] {
					ib.Append(acc[g])
				} else {
					ib.AppendNull()
				}
			}
			out := ib.NewArray()
			if typ.ID() == arrow.INT64 {
				return out, nil
			}
			// A timestamp's extreme: the same int64s, typed as the column.
			defer out.Release()
			data := retype(out.Data(), typ)
			defer data.Release()
			return array.MakeFromData(data), nil
		},
	}
}

// grow extends a per-group slice to hold group g.
func grow[T any](s []T, g int, zero T) []T {
	for len(s) <= g {
		s = append(s, zero)
	}
	return s
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
	if len(c.Exclude) > 0 && c.Fn != "union" {
		return fn, fmt.Errorf("exclude applies to union only, not %s", c.Fn)
	}
	switch c.Fn {
	case "count", "count_non_null":
		if c.Fn == "count_non_null" {
			if err := one(); err != nil {
				return fn, err
			}
		} else if len(args) > 0 {
			return fn, fmt.Errorf("count counts rows and takes no args (count_non_null counts a column's values), got %d", len(args))
		}
		fn.typ = arrow.PrimitiveTypes.Int64
		fn.newAcc = func() accumulator {
			var n []int64
			return &accFuncs{
				addFn: func(b arrow.RecordBatch, i, g int) {
					n = grow(n, g, 0)
					if pass(b, i) && (c.Fn == "count" || b.Column(args[0]).IsValid(i)) {
						n[g]++
					}
				},
				buildFn: func(_ context.Context, order []int) (arrow.Array, error) {
					ib := array.NewInt64Builder(mem)
					defer ib.Release()
					for _, g := range order {
						n = grow(n, g, 0)
						ib.Append(n[g])
					}
					return ib.NewArray(), nil
				},
			}
		}
	case "first", "last":
		if err := one(); err != nil {
			return fn, err
		}
		fn.typ = in.Field(args[0]).Type
		fn.newAcc = func() accumulator {
			st := newRowStore(mem, in, []int{args[0]})
			return &accFuncs{
				addFn: func(b arrow.RecordBatch, i, g int) {
					if !pass(b, i) || b.Column(args[0]).IsNull(i) {
						return
					}
					if c.Fn == "first" && st.has(g) {
						return
					}
					st.set(g, i)
				},
				endFn: st.endBatch,
				buildFn: func(ctx context.Context, order []int) (arrow.Array, error) {
					cols, err := st.build(ctx, order)
					if err != nil {
						return nil, err
					}
					return cols[0], nil
				},
				relFn: st.release,
			}
		}
	case "min", "max", "sum":
		if err := one(); err != nil {
			return fn, err
		}
		t := in.Field(args[0]).Type
		if c.Fn != "sum" && t.ID() == arrow.TIMESTAMP {
			// The first or last time of a group, as its own type.
			fn.typ = t
			fn.newAcc = func() accumulator { return intExtreme(mem, t, c.Fn == "min", args[0], pass) }
			break
		}
		if !isNumeric(t) || isList(t) {
			return fn, fmt.Errorf("%s needs a number, %s is %s", c.Fn, c.Args[0], t)
		}
		if c.Fn != "sum" && isIntegerType(t) {
			// The smallest or largest of integers is one of them, exactly:
			// as a float64, integers past 2⁵³ would round.
			fn.typ = arrow.PrimitiveTypes.Int64
			fn.newAcc = func() accumulator { return intExtreme(mem, arrow.PrimitiveTypes.Int64, c.Fn == "min", args[0], pass) }
			break
		}
		fn.typ = arrow.PrimitiveTypes.Float64
		if c.Fn == "sum" && isIntegerType(t) {
			// Integers are summed exactly and the sum made a float64 once,
			// as SQL's SUM(BIGINT) is exact: adding each as a float64
			// rounded at every step past 2⁵³ (5 + 2⁵³+1 gave 2⁵³+4). A
			// group whose sum leaves int64 goes on in float64.
			fn.newAcc = func() accumulator {
				var exact []int64
				var float []float64
				var over, any []bool
				return &accFuncs{
					addFn: func(b arrow.RecordBatch, i, g int) {
						exact, float = grow(exact, g, 0), grow(float, g, 0)
						over, any = grow(over, g, false), grow(any, g, false)
						col := b.Column(args[0])
						if !pass(b, i) || col.IsNull(i) {
							return
						}
						v := intValue(col, i)
						any[g] = true
						if over[g] {
							float[g] += float64(v)
							return
						}
						r := exact[g] + v
						if (exact[g] >= 0) == (v >= 0) && (r >= 0) != (v >= 0) {
							over[g], float[g] = true, float64(exact[g])+float64(v)
							return
						}
						exact[g] = r
					},
					buildFn: func(_ context.Context, order []int) (arrow.Array, error) {
						return float64Of(mem, len(order), func(k int) (float64, bool) {
							g := order[k]
							if g >= len(exact) {
								return 0, false
							}
							if over[g] {
								return float[g], any[g]
							}
							return float64(exact[g]), any[g]
						}), nil
					},
				}
			}
			break
		}
		fn.newAcc = func() accumulator {
			var acc []float64
			var any []bool
			start := 0.0
			switch c.Fn {
			case "min":
				start = math.Inf(1)
			case "max":
				start = math.Inf(-1)
			}
			return &accFuncs{
				addFn: func(b arrow.RecordBatch, i, g int) {
					acc, any = grow(acc, g, start), grow(any, g, false)
					col := b.Column(args[0])
					if !pass(b, i) || col.IsNull(i) {
						return
					}
					eachNumber(col, i, func(f float64) bool {
						first := !any[g]
						any[g] = true
						// NaN is the largest number, as in DuckDB and
						// PostgreSQL (and the sort above): min passes it
						// over unless every value is NaN, max takes it.
						switch c.Fn {
						case "min":
							switch {
							case first || math.IsNaN(acc[g]):
								if first || !math.IsNaN(f) {
									acc[g] = f
								}
							case !math.IsNaN(f):
								acc[g] = math.Min(acc[g], f) // -0 before 0
							}
						case "max":
							switch {
							case first || math.IsNaN(f):
								acc[g] = f
							case !math.IsNaN(acc[g]):
								acc[g] = math.Max(acc[g], f)
							}
						default:
							acc[g] += f
						}
						return true
					})
				},
				buildFn: func(_ context.Context, order []int) (arrow.Array, error) {
					return float64Of(mem, len(order), func(k int) (float64, bool) {
						g := order[k]
						if g >= len(acc) {
							return 0, false
						}
						return acc[g], any[g]
					}), nil
				},
			}
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
		fn.newAcc = func() accumulator {
			// Per group and arg, the distinct values in first-seen order;
			// the output lists arg after arg, as a pass over each arg would.
			type set struct {
				vals [][]string
				seen []map[string]bool // made once a list passes smallSet
			}
			var groups []*set
			return &accFuncs{
				addFn: func(b arrow.RecordBatch, i, g int) {
					groups = grow(groups, g, nil)
					if groups[g] == nil {
						groups[g] = &set{vals: make([][]string, len(args)), seen: make([]map[string]bool, len(args))}
					}
					if !pass(b, i) {
						return
					}
					st := groups[g]
					for k, a := range args {
						eachKeyOrString(b.Column(a), i, func(s string) {
							if exclude[s] || containsSmall(st.vals[k], st.seen[k], s) {
								return
							}
							// A copy: Arrow strings point into the batch's buffer,
							// which would otherwise live as long as the group.
							s = strings.Clone(s)
							st.vals[k] = append(st.vals[k], s)
							if st.seen[k] != nil {
								st.seen[k][s] = true
							} else if len(st.vals[k]) > smallSet {
								st.seen[k] = make(map[string]bool, len(st.vals[k]))
								for _, v := range st.vals[k] {
									st.seen[k][v] = true
								}
							}
						})
					}
				},
				buildFn: func(_ context.Context, order []int) (arrow.Array, error) {
					lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
					defer lb.Release()
					vb := lb.ValueBuilder().(*array.StringBuilder)
					for _, g := range order {
						lb.Append(true)
						if g >= len(groups) || groups[g] == nil {
							continue
						}
						seen := map[string]bool{}
						for _, vals := range groups[g].vals {
							for _, s := range vals {
								if !seen[s] {
									seen[s] = true
									vb.Append(s)
								}
							}
						}
					}
					return lb.NewArray(), nil
				},
				relFn: func() { groups = nil },
			}
		}
	case "schulze":
		if len(args) != 3 {
			return fn, fmt.Errorf("schulze takes [candidates, ranked ids, ranks], got %d args", len(args))
		}
		for k := 0; k < 2; k++ {
			if !isStringList(in.Field(args[k]).Type) {
				return fn, fmt.Errorf("schulze: %s is %s, want list<string>", c.Args[k], config.FormatType(in.Field(args[k]).Type))
			}
		}
		if lt, ok := in.Field(args[2]).Type.(*arrow.ListType); !ok || !isNumeric(lt.Elem()) {
			return fn, fmt.Errorf("schulze: %s is %s, want a list of integers", c.Args[2], config.FormatType(in.Field(args[2]).Type))
		}
		fn.typ = arrow.BinaryTypes.String
		fn.newAcc = func() accumulator {
			// Per group: every candidate listed (all rows, in first-seen
			// order) and a tally of the complete, non-mock rankings.
			type state struct {
				order []string
				tally schulze.Tally
			}
			var groups []*state
			return &accFuncs{
				addFn: func(b arrow.RecordBatch, i, g int) {
					groups = grow(groups, g, nil)
					if groups[g] == nil {
						groups[g] = &state{}
					}
					st := groups[g]
					cands, ids := b.Column(args[0]).(*array.List), b.Column(args[1]).(*array.List)
					ranks := b.Column(args[2])
					// A null element is no candidate (it read as "", which
					// could win).
					rowCands := stringListValid(cands, i)
					for _, c := range rowCands {
						if !slices.Contains(st.order, c) {
							st.order = append(st.order, strings.Clone(c))
						}
					}
					if !pass(b, i) || ids.IsNull(i) || ranks.IsNull(i) {
						return
					}
					rid := stringList(ids, i)
					var rs []float64
					eachNumber(ranks, i, func(f float64) bool { rs = append(rs, f); return true })
					if len(rs) != len(rid) || len(rid) == 0 || hasNullElement(ids, i) {
						// Ranks that do not pair with ids, a ballot that
						// ranks nothing (it counted, and made every
						// candidate tie), or a null id (no candidate's).
						return
					}
					ballot := schulze.Ballot{}
					for k, id := range rid {
						if rs[k] < 0 {
							return // a mock ranking
						}
						ballot[id] = int(rs[k])
					}
					for _, c := range rowCands {
						if _, ranked := ballot[c]; !ranked {
							return // incomplete
						}
					}
					st.tally.Add(ballot)
				},
				buildFn: func(_ context.Context, order []int) (arrow.Array, error) {
					return stringOf(mem, len(order), func(k int) (string, bool) {
						g := order[k]
						if g >= len(groups) || groups[g] == nil {
							return "", false
						}
						w, _, err := groups[g].tally.Winner(groups[g].order)
						return w, err == nil
					}), nil
				},
				relFn: func() { groups = nil },
			}
		}
	default:
		return fn, fmt.Errorf("unknown aggregate %q (have count, count_non_null, first, last, min, max, sum, union, schulze)", c.Fn)
	}
	return fn, nil
}

// lessRow orders rows i and j by the key columns: nulls first, numbers
// numerically (int64 exactly, NaN before every other number), everything
// else by its string form.
func lessRow(b arrow.RecordBatch, keys []int, i, j int) bool {
	return cmpRows(b, i, b, j, keys) < 0
}

// cmpRows orders row i of a and row j of b (batches of one schema) by the
// key columns as lessRow does: -1, 0 or +1.
func cmpRows(a arrow.RecordBatch, i int, b arrow.RecordBatch, j int, keys []int) int {
	for _, c := range keys {
		x, y := a.Column(c), b.Column(c)
		nx, ny := x.IsNull(i), y.IsNull(j)
		if nx || ny {
			if nx != ny {
				if nx {
					return -1
				}
				return 1
			}
			continue
		}
		if xi, ok := x.(*array.Int64); ok { // exactly, past 2^53 too
			if c := cmp.Compare(xi.Value(i), y.(*array.Int64).Value(j)); c != 0 {
				return c
			}
			continue
		}
		if xt, ok := x.(*array.Timestamp); ok {
			// In time, not as text: RFC 3339's "…00Z" sorts after
			// "…00.000001Z". One column has one unit.
			if c := cmp.Compare(xt.Value(i), y.(*array.Timestamp).Value(j)); c != 0 {
				return c
			}
			continue
		}
		if xd, ok := x.(*array.Date32); ok {
			if c := cmp.Compare(xd.Value(i), y.(*array.Date32).Value(j)); c != 0 {
				return c
			}
			continue
		}
		if isNumeric(x.DataType()) {
			var u, v float64
			eachNumber(x, i, func(f float64) bool { u = f; return true })
			eachNumber(y, j, func(f float64) bool { v = f; return true })
			// A total order: NaN last, equal to itself, as DuckDB and
			// PostgreSQL take NaN for the largest number; lessRow would
			// otherwise order rows differently from one sort to the next.
			if c := compareNaNLast(u, v); c != 0 {
				return c
			}
			continue
		}
		if c := strings.Compare(valueString(x, i), valueString(y, j)); c != 0 {
			return c
		}
	}
	return 0
}

// compareNaNLast is cmp.Compare with NaN after every other number and
// equal to itself.
func compareNaNLast(u, v float64) int {
	switch un, vn := math.IsNaN(u), math.IsNaN(v); {
	case un && vn:
		return 0
	case un:
		return 1
	case vn:
		return -1
	}
	return cmp.Compare(u, v)
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
