// Package arrowx holds small Arrow helpers shared by stages and sinks.
package arrowx

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
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

// Rows is a selection of rows of one set of columns: rows Idx of Cols,
// in Idx order.
type Rows struct {
	Cols []arrow.Array
	Idx  []int64
}

// TakeFrom gathers the rows of each selection, one selection after
// another, into one set of columns: what TakeColumns of each followed by
// a concatenation gives, with one copy of each value instead of two. The
// selections hold columns of the same types. The caller owns the result,
// which shares no buffer with the selections.
func TakeFrom(ctx context.Context, mem memory.Allocator, sels []Rows) ([]arrow.Array, error) {
	if len(sels) == 0 {
		return nil, fmt.Errorf("take: no selection")
	}
	ncol := len(sels[0].Cols)
	runs := make([][]span, len(sels))
	var n int64
	direct := true
	for k, s := range sels {
		if len(s.Cols) != ncol {
			return nil, fmt.Errorf("take: selection %d has %d columns, want %d", k, len(s.Cols), ncol)
		}
		if ncol == 0 {
			continue
		}
		// The columns of a selection come from one batch: one length.
		r, ok := spansOf(s.Idx, s.Cols[0].Len())
		for _, c := range s.Cols {
			ok = ok && c.Len() == s.Cols[0].Len()
		}
		direct = direct && ok
		runs[k] = r
		n += int64(len(s.Idx))
	}
	for c := 0; c < ncol; c++ {
		direct = direct && gatherable(sels[0].Cols[c].DataType())
		// 32-bit offsets hold what one array held, not what several do:
		// past that, Concatenate reports the overflow.
		total := dataBytes(sels[0].Cols[c].Data())
		for _, s := range sels[1:] {
			direct = direct && arrow.TypeEqual(s.Cols[c].DataType(), sels[0].Cols[c].DataType())
			total += dataBytes(s.Cols[c].Data())
		}
		direct = direct && total <= math.MaxInt32
	}
	if !direct {
		return takeThenJoin(ctx, mem, sels)
	}
	out := make([]arrow.Array, 0, ncol)
	srcs := make([]src, len(sels))
	for c := 0; c < ncol; c++ {
		if err := ctx.Err(); err != nil {
			for _, a := range out {
				a.Release()
			}
			return nil, context.Cause(ctx)
		}
		for k, s := range sels {
			srcs[k] = src{s.Cols[c].Data(), runs[k]}
		}
		d := gatherSrcs(mem, sels[0].Cols[c].DataType(), srcs, n)
		out = append(out, array.MakeFromData(d))
		d.Release()
	}
	return out, nil
}

// takeThenJoin is TakeFrom for what Gather does not handle: compute.Take
// of each selection, then a concatenation.
func takeThenJoin(ctx context.Context, mem memory.Allocator, sels []Rows) ([]arrow.Array, error) {
	parts := make([][]arrow.Array, 0, len(sels))
	defer func() {
		for _, p := range parts {
			for _, a := range p {
				a.Release()
			}
		}
	}()
	for _, s := range sels {
		p, err := CopyRows(ctx, mem, s.Cols, s.Idx)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	out, err := joinColumns(mem, parts, func(c int) string { return fmt.Sprint(c) })
	if err != nil {
		return nil, fmt.Errorf("take: %w", err)
	}
	return out, nil
}

// joinColumns concatenates, column by column, parts that each hold the
// same columns; name names a column in an error. The caller owns the
// result and keeps its references to parts.
func joinColumns(mem memory.Allocator, parts [][]arrow.Array, name func(c int) string) ([]arrow.Array, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("join: nothing to join")
	}
	out := make([]arrow.Array, 0, len(parts[0]))
	col := make([]arrow.Array, len(parts))
	for c := range parts[0] {
		for k, p := range parts {
			col[k] = p[c]
		}
		a, err := array.Concatenate(col, mem)
		if err != nil {
			for _, o := range out {
				o.Release()
			}
			return nil, fmt.Errorf("join column %s: %w", name(c), err)
		}
		out = append(out, a)
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
// the whole buffers: an over-estimate). A bitmap (validity, or a
// boolean's values) counts the bytes its rows take, not its length: a
// builder's bitmap keeps the length it was reserved to, and reservations
// follow hints that concurrent decoders update in no set order, so the
// same rows would measure differently from run to run, and the sink,
// which cuts batches and row groups by this size, would cut them at
// other rows (the same rows in other row groups and pages).
func BatchBytes(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

// dataBytes is the size of the buffers an array's data refers to, its
// children's included.
func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for i, buf := range d.Buffers() {
		if buf == nil {
			continue
		}
		k := int64(buf.Len())
		if i == 0 || i == 1 && d.DataType().ID() == arrow.BOOL {
			k = min(k, int64(bitutil.BytesForBits(int64(d.Offset()+d.Len()))))
		}
		n += k
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}

// ConcatBatches joins batches of schema s into one batch, copying their
// columns; the caller owns the result and keeps its references to bs.
func ConcatBatches(mem memory.Allocator, s *arrow.Schema, bs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	var rows int64
	parts := make([][]arrow.Array, len(bs))
	for i, b := range bs {
		rows += b.NumRows()
		parts[i] = b.Columns()
	}
	cols, err := joinColumns(mem, parts, func(c int) string { return s.Field(c).Name })
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	return array.NewRecordBatch(s, cols, rows), nil
}

// FieldNames returns the names of s's top-level fields, in order.
func FieldNames(s *arrow.Schema) []string {
	out := make([]string, 0, s.NumFields())
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}
