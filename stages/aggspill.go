package stages

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/agora-etl/agora/internal/arrowx"
)

// AggregateMemGroups is how many groups an aggregate keeps state for in
// memory (about 1.4 KB a group for Habermas round_outcomes, so some
// 11 MB). The rows of groups past it go to temporary partition files in
// SpillDir, aggregated one at a time at the end with as many groups in
// memory again; the groups in memory wait in a file meanwhile. Past
// aggMaxLevel splits a partition is aggregated in memory whatever its
// size.
//
// 8,192 rather than the 32,768 of earlier releases: the whole Habermas
// pipeline at 10× rows (87,672 rounds) peaked at 529–539 MiB with
// 32,768 and 426 MiB with 8,192, at 3–4% less CPU (the state held is
// small objects the collector scans; the partition files cost less);
// 2,048 took 345 MiB but 6% more CPU. At 1× (8,723 rounds, some of them
// spilled now) the same CPU and RSS. The files are the same whatever
// spills (TestOutputIndependentOfSpilling).
var AggregateMemGroups = 1 << 13

const (
	// aggParts is how many partition files one aggregate writes: rows
	// go by 4 bits of their key's hash, other bits at each level.
	aggParts = 16
	// aggMaxLevel is how often rows are split at most (4 bits each, 32
	// of the hash's bits); a partition that deep stays in memory.
	aggMaxLevel = 8
	// aggBufBytes is the buffer of each partition file: 16 are open
	// while rows come, and as many are read in the merge.
	aggBufBytes = 256 << 10
	// seqField numbers an aggregate's input rows, so that groups from
	// different partitions merge in the order they first appeared (and,
	// sorted by key, equal keys in that order).
	seqField = "__agora_row"
)

// aggOutRows is how many groups an aggregate emits a batch, split alike
// whether it spilled or not (a variable for tests).
var aggOutRows int64 = 4096

// partOf is the partition of a key at a level.
func partOf(k keyHash, level int) int {
	return int(k[2]>>(4*level)) & (aggParts - 1)
}

// spillRows appends rows spill[p] of b to partition file p.
func (a *Aggregate) spillRows(ctx context.Context, b arrow.RecordBatch, spill *[aggParts][]int64) error {
	for p, idx := range spill {
		if len(idx) == 0 {
			continue
		}
		if a.parts == nil {
			a.parts = make([]*spillFile, aggParts)
		}
		if a.parts[p] == nil {
			f, err := newSpillFileSize(a.in, a.mem, aggBufBytes)
			if err != nil {
				return fmt.Errorf("aggregate: %w", err)
			}
			a.parts[p] = f
		}
		cols, err := arrowx.TakeColumns(ctx, a.mem, b.Columns(), idx)
		if err != nil {
			return fmt.Errorf("aggregate: %w", err)
		}
		rows := newBatch(a.in.Fields(), cols, int64(len(idx)))
		err = a.parts[p].write([]arrow.RecordBatch{rows})
		rows.Release()
		if err != nil {
			return fmt.Errorf("aggregate: %w", err)
		}
	}
	return nil
}

// flush hands put (which takes it) each batch of groups (outSchema) in
// output order, aggOutRows a batch, and releases the state as it goes.
func (a *Aggregate) flush(ctx context.Context, put func(arrow.RecordBatch) error) error {
	mem, err := a.inMemory(ctx)
	a.releaseState()
	if err != nil {
		return err
	}
	if a.parts == nil {
		if mem == nil {
			return nil
		}
		src := batchSource(mem)
		defer src.close()
		return a.merge(ctx, []*aggSource{src}, put)
	}
	// Each partition is aggregated with as many groups in memory again:
	// the groups in memory and every partition's groups wait in files,
	// opened for the merge once all are written.
	var runs []*spillFile
	defer func() {
		for _, f := range runs {
			f.remove()
		}
	}()
	if mem != nil {
		f, err := newSpillFileSize(a.outSchema, a.mem, aggBufBytes)
		for lo := int64(0); err == nil && lo < mem.NumRows(); lo += aggOutRows {
			part := mem.NewSlice(lo, min(lo+aggOutRows, mem.NumRows()))
			err = f.write([]arrow.RecordBatch{part})
			part.Release()
		}
		mem.Release()
		if f != nil {
			runs = append(runs, f)
		}
		if err != nil {
			return fmt.Errorf("aggregate: %w", err)
		}
	}
	for p, f := range a.parts {
		if f == nil {
			continue
		}
		out, err := a.aggregatePart(ctx, f)
		f.remove()
		a.parts[p] = nil
		if err != nil {
			return err
		}
		runs = append(runs, out)
	}
	var srcs []*aggSource
	defer func() {
		for _, s := range srcs {
			s.close()
		}
	}()
	for len(runs) > 0 {
		s, err := fileSource(runs[0]) // which removes the file when closed
		runs = runs[1:]
		if err != nil {
			return err
		}
		srcs = append(srcs, s)
	}
	return a.merge(ctx, srcs, put)
}

// aggregatePart aggregates the rows of one partition file, one level
// down, into a file of its groups in output order.
func (a *Aggregate) aggregatePart(ctx context.Context, f *spillFile) (*spillFile, error) {
	sub, err := newAggregate(a.mem, a.in, nil, a.cfg, a.level+1)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	err = f.each(func(b arrow.RecordBatch) error {
		if err := context.Cause(ctx); err != nil {
			return err
		}
		_, err := sub.Process(ctx, b, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	out, err := newSpillFileSize(a.outSchema, a.mem, aggBufBytes)
	if err != nil {
		return nil, fmt.Errorf("aggregate: %w", err)
	}
	err = sub.flush(ctx, func(b arrow.RecordBatch) error {
		defer b.Release()
		return out.write([]arrow.RecordBatch{b})
	})
	if err != nil {
		out.remove()
		return nil, err
	}
	return out, nil
}

// aggSource is one ordered run of groups being merged: a batch in memory
// or a partition's file, read a batch at a time.
type aggSource struct {
	cur  arrow.RecordBatch // nil at the end
	i    int               // the next row of cur
	sel  int               // merge's selection of cur's rows, or -1
	next func() (arrow.RecordBatch, error)
	done func()
}

// batchSource is a run of one batch, which it takes.
func batchSource(b arrow.RecordBatch) *aggSource {
	return &aggSource{cur: b, next: func() (arrow.RecordBatch, error) { return nil, nil }, done: func() {}}
}

// fileSource is a run read from f, which it removes when closed (or at
// once, when it fails).
func fileSource(f *spillFile) (*aggSource, error) {
	r, err := f.open()
	if err != nil {
		f.remove()
		return nil, err
	}
	s := &aggSource{
		next: func() (arrow.RecordBatch, error) {
			if r.Next() {
				b := r.RecordBatch()
				b.Retain() // the reader releases it at the next Next
				return b, nil
			}
			return nil, f.readErr(r)
		},
		done: func() { r.Release(); f.remove() },
	}
	if err := s.advance(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// advance moves to the next non-empty batch, releasing the current one.
func (s *aggSource) advance() error {
	for {
		if s.cur != nil {
			s.cur.Release()
		}
		b, err := s.next()
		s.cur, s.i = b, 0
		if err != nil || b == nil || b.NumRows() > 0 {
			return err
		}
	}
}

func (s *aggSource) close() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	s.done()
}

// merge hands put the groups of srcs, each in output order, in output
// order: by key when sorted, then by first row.
func (a *Aggregate) merge(ctx context.Context, srcs []*aggSource, put func(arrow.RecordBatch) error) error {
	keys := make([]int, len(a.by)) // the key columns lead outSchema
	for i := range keys {
		keys[i] = i
	}
	seq := a.outSchema.NumFields() - 1
	less := func(x, y *aggSource) bool {
		if a.sort {
			if c := cmpRows(x.cur, x.i, y.cur, y.i, keys); c != 0 {
				return c < 0
			}
		}
		return x.cur.Column(seq).(*array.Int64).Value(x.i) < y.cur.Column(seq).(*array.Int64).Value(y.i)
	}
	// A batch's rows are gathered from one selection per source batch
	// (a selection per run of rows would make thousands, each counted
	// at its batch's size), then put in merge order.
	var (
		sels  []arrowx.Rows
		held  []arrow.RecordBatch // the batches sels point into
		picks [][2]int            // per row: selection, index in it
	)
	release := func() {
		for _, b := range held {
			b.Release()
		}
		held, sels, picks = nil, nil, picks[:0]
		for _, s := range srcs {
			s.sel = -1
		}
	}
	release()
	defer release()
	out := func() error {
		if len(picks) == 0 {
			return nil
		}
		at := make([]int64, len(sels)) // where each selection starts
		for k := 1; k < len(sels); k++ {
			at[k] = at[k-1] + int64(len(sels[k-1].Idx))
		}
		order := make([]int64, len(picks))
		for i, p := range picks {
			order[i] = at[p[0]] + int64(p[1])
		}
		cols, err := arrowx.TakeFrom(ctx, a.mem, sels)
		rows := int64(len(picks))
		release()
		if err != nil {
			return fmt.Errorf("aggregate: %w", err)
		}
		merged, err := arrowx.TakeColumns(ctx, a.mem, cols, order) // the same arrays when in order
		releaseAll(cols)
		if err != nil {
			return fmt.Errorf("aggregate: %w", err)
		}
		return put(newBatch(a.outSchema.Fields(), merged, rows))
	}
	for {
		var best *aggSource
		for _, s := range srcs {
			if s.cur != nil && (best == nil || less(s, best)) {
				best = s
			}
		}
		if best == nil {
			return out()
		}
		if best.sel < 0 {
			best.cur.Retain()
			held = append(held, best.cur)
			best.sel = len(sels)
			sels = append(sels, arrowx.Rows{Cols: best.cur.Columns()})
		}
		picks = append(picks, [2]int{best.sel, len(sels[best.sel].Idx)})
		sels[best.sel].Idx = append(sels[best.sel].Idx, int64(best.i))
		best.i++
		if best.i == int(best.cur.NumRows()) {
			best.sel = -1
			if err := best.advance(); err != nil {
				return err
			}
		}
		if int64(len(picks)) == aggOutRows {
			if err := context.Cause(ctx); err != nil {
				return err
			}
			if err := out(); err != nil {
				return err
			}
		}
	}
}
