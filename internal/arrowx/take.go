// Package arrowx holds small Arrow helpers shared by stages and sinks.
package arrowx

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TakeColumns gathers rows idx of each array, in idx order. The caller
// owns the returned arrays; an identity selection returns the arrays
// themselves, retained.
func TakeColumns(ctx context.Context, mem memory.Allocator, cols []arrow.Array, idx []int64) ([]arrow.Array, error) {
	return takeColumns(ctx, mem, cols, idx, true)
}

// CopyRows is TakeColumns that always copies: what it returns shares no
// buffer with cols, so keeping it does not keep the input alive.
func CopyRows(ctx context.Context, mem memory.Allocator, cols []arrow.Array, idx []int64) ([]arrow.Array, error) {
	return takeColumns(ctx, mem, cols, idx, false)
}

func takeColumns(ctx context.Context, mem memory.Allocator, cols []arrow.Array, idx []int64, shortcut bool) ([]arrow.Array, error) {
	var ia arrow.Array // the indices as an array, for compute.Take
	defer func() {
		if ia != nil {
			ia.Release()
		}
	}()
	// The runs of idx, found once for all columns of one length.
	var (
		runs    []span
		inRange bool
		runsLen = -1
	)
	out := make([]arrow.Array, 0, len(cols))
	for _, c := range cols {
		if c.Len() != runsLen {
			runs, inRange = spansOf(idx, c.Len())
			runsLen = c.Len()
		}
		if shortcut && inRange && isIdentity(runs, len(idx), c.Len()) {
			c.Retain()
			out = append(out, c)
			continue
		}
		if inRange && gatherable(c.DataType()) {
			out = append(out, gatherRuns(mem, c, runs, len(idx)))
			continue
		}
		if ia == nil {
			ib := array.NewInt64Builder(mem)
			ib.AppendValues(idx, nil)
			ia = ib.NewArray()
			ib.Release()
		}
		// Compute kernels can leave their half-built output unreleased when
		// the context is cancelled mid-call; a take is short, so let it finish.
		cctx := exec.WithAllocator(context.WithoutCancel(ctx), mem)
		t, err := compute.TakeArray(cctx, c, ia)
		if err != nil {
			for _, o := range out {
				o.Release()
			}
			return nil, fmt.Errorf("take: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// isIdentity reports whether a selection of n rows, whose runs are runs,
// picks every row of an array of length rows, in order.
func isIdentity(runs []span, n, length int) bool {
	if n != length {
		return false
	}
	return n == 0 || len(runs) == 1 && runs[0] == span{0, int64(length)}
}

// BatchBytes is the size of the buffers a batch refers to (for a slice,
// the whole buffers: an over-estimate).
func BatchBytes(b arrow.RecordBatch) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, buf := range d.Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range b.Columns() {
		walk(c.Data())
	}
	return n
}

// ConcatBatches joins batches of schema s into one batch, copying their
// columns; the caller owns the result and keeps its references to bs.
func ConcatBatches(mem memory.Allocator, s *arrow.Schema, bs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, s.NumFields())
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	var rows int64
	for _, b := range bs {
		rows += b.NumRows()
	}
	parts := make([]arrow.Array, len(bs))
	for c := 0; c < s.NumFields(); c++ {
		for i, b := range bs {
			parts[i] = b.Column(c)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("join column %s: %w", s.Field(c).Name, err)
		}
		cols = append(cols, a)
	}
	return array.NewRecordBatch(s, cols, rows), nil
}
