package arrowx

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Gather copies rows idx of a, in idx order, into a new array whose
// buffers are sized exactly: every output buffer is measured before it
// is allocated, so nothing is grown by doubling and copied again (what
// the compute Take kernel does for strings, which made it the largest
// allocator of a run). Consecutive indices are copied as one run, and a
// list's values as one run per list, so the texts of a list<string> move
// with one copy per row, not one per value. It handles the types agora
// writes: null, boolean, fixed-width numbers and temporals, string and
// binary (32- and 64-bit offsets), lists and structs of those. ok is
// false for any other type, and the caller falls back to compute.Take, as
// it does for an index out of range. The caller owns the result; it
// shares no buffer with a.
func Gather(mem memory.Allocator, a arrow.Array, idx []int64) (out arrow.Array, ok bool) {
	if !gatherable(a.DataType()) {
		return nil, false
	}
	runs, ok := spansOf(idx, a.Len())
	if !ok {
		return nil, false // compute.Take reports it
	}
	return gatherRuns(mem, a, runs, len(idx)), true
}

// gatherRuns is Gather of the runs of a selection of n rows, found by
// spansOf; a's type must be gatherable.
func gatherRuns(mem memory.Allocator, a arrow.Array, runs []span, n int) arrow.Array {
	d := gatherSpans(mem, a.Data(), runs, int64(n))
	defer d.Release()
	return array.MakeFromData(d)
}

// span is the positions [lo, hi) of an array, relative to its offset.
type span struct{ lo, hi int64 }

// spansOf returns the runs of consecutive positions in idx, for an array
// of length rows; ok is false when an index is out of range.
func spansOf(idx []int64, length int) (runs []span, ok bool) {
	for _, i := range idx {
		if i < 0 || i >= int64(length) {
			return nil, false
		}
		if k := len(runs) - 1; k >= 0 && runs[k].hi == i {
			runs[k].hi++
		} else {
			runs = append(runs, span{i, i + 1})
		}
	}
	return runs, true
}

// gatherable reports whether Gather handles type t.
func gatherable(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.NullType, *arrow.BooleanType, *arrow.StringType, *arrow.BinaryType,
		*arrow.LargeStringType, *arrow.LargeBinaryType:
		return true
	case *arrow.ListType:
		return gatherable(t.Elem())
	case *arrow.LargeListType:
		return gatherable(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !gatherable(f.Type) {
				return false
			}
		}
		return true
	case *arrow.DictionaryType:
		return false
	case arrow.FixedWidthDataType:
		return t.BitWidth()%8 == 0
	}
	return false
}

// newBuf allocates a buffer of exactly n bytes.
func newBuf(mem memory.Allocator, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(n)
	return b
}

// gatherValidity returns the validity bitmap of the spans of d and the
// null count; a nil bitmap when no gathered position is null.
func gatherValidity(mem memory.Allocator, d arrow.ArrayData, runs []span, n int64) (*memory.Buffer, int) {
	if d.NullN() == 0 || d.Buffers()[0] == nil {
		return nil, 0
	}
	in := d.Buffers()[0].Bytes()
	off := int64(d.Offset())
	valid := 0
	for _, r := range runs {
		valid += bitutil.CountSetBits(in, int(off+r.lo), int(r.hi-r.lo))
	}
	if int64(valid) == n {
		return nil, 0
	}
	b := newBuf(mem, int(bitutil.BytesForBits(n)))
	pos := int64(0)
	for _, r := range runs {
		bitutil.CopyBitmap(in, int(off+r.lo), int(r.hi-r.lo), b.Bytes(), int(pos))
		pos += r.hi - r.lo
	}
	return b, int(n) - valid
}

// gatherSpans copies the spans of d, n positions in all, into new array
// data; the caller releases the result.
func gatherSpans(mem memory.Allocator, d arrow.ArrayData, runs []span, n int64) arrow.ArrayData {
	dt := d.DataType()
	if n == 0 {
		empty := array.MakeArrayOfNull(mem, dt, 0)
		defer empty.Release()
		out := empty.Data()
		out.Retain()
		return out
	}
	if dt.ID() == arrow.NULL {
		return array.NewData(dt, int(n), []*memory.Buffer{nil}, nil, int(n), 0)
	}
	valid, nulls := gatherValidity(mem, d, runs, n)
	off := int64(d.Offset())
	switch t := dt.(type) {
	case *arrow.BooleanType:
		vals := newBuf(mem, int(bitutil.BytesForBits(n)))
		pos := int64(0)
		for _, r := range runs {
			bitutil.CopyBitmap(d.Buffers()[1].Bytes(), int(off+r.lo), int(r.hi-r.lo), vals.Bytes(), int(pos))
			pos += r.hi - r.lo
		}
		out := array.NewData(dt, int(n), []*memory.Buffer{valid, vals}, nil, nulls, 0)
		releaseAll(valid, vals)
		return out
	case *arrow.StringType, *arrow.BinaryType:
		return gatherBinary[int32](mem, d, runs, n, valid, nulls)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return gatherBinary[int64](mem, d, runs, n, valid, nulls)
	case *arrow.ListType:
		return gatherList[int32](mem, d, runs, n, valid, nulls)
	case *arrow.LargeListType:
		return gatherList[int64](mem, d, runs, n, valid, nulls)
	case *arrow.StructType:
		// A struct's children are indexed through the struct's own offset.
		cruns := runs
		if off != 0 {
			cruns = make([]span, len(runs))
			for k, r := range runs {
				cruns[k] = span{off + r.lo, off + r.hi}
			}
		}
		children := make([]arrow.ArrayData, len(d.Children()))
		for k, c := range d.Children() {
			children[k] = gatherSpans(mem, c, cruns, n)
		}
		out := array.NewData(dt, int(n), []*memory.Buffer{valid}, children, nulls, 0)
		for _, c := range children {
			c.Release()
		}
		releaseAll(valid)
		return out
	case arrow.FixedWidthDataType:
		w := int64(t.BitWidth() / 8)
		in := d.Buffers()[1].Bytes()[off*w:]
		vals := newBuf(mem, int(n*w))
		dst := vals.Bytes()
		pos := int64(0)
		for _, r := range runs {
			pos += int64(copy(dst[pos:], in[r.lo*w:r.hi*w]))
		}
		out := array.NewData(dt, int(n), []*memory.Buffer{valid, vals}, nil, nulls, 0)
		releaseAll(valid, vals)
		return out
	}
	panic(fmt.Sprintf("arrowx: gather of %s", dt)) // gatherable said yes
}

// offsets is the type of string and list offsets: 32- or 64-bit.
type offsets interface{ int32 | int64 }

// offsetsOf views a buffer of offsets, from the array's offset on.
func offsetsOf[T offsets](b *memory.Buffer, off int64) []T {
	var zero T
	raw := b.Bytes()
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/int(unsafe.Sizeof(zero)))[off:]
}

// rebase writes the offsets of positions [lo, hi) into o from o[j],
// shifted so that the first starts at pos; it returns the next j.
func rebase[T offsets](o, offs []T, lo, hi int64, j int, pos T) int {
	shift := pos - offs[lo]
	for k := lo; k < hi; k++ {
		o[j] = offs[k] + shift
		j++
	}
	return j
}

// gatherBinary is gatherSpans for strings and binaries: the bytes of a
// span are one copy.
func gatherBinary[T offsets](mem memory.Allocator, d arrow.ArrayData, runs []span, n int64, valid *memory.Buffer, nulls int) arrow.ArrayData {
	var zero T
	offs := offsetsOf[T](d.Buffers()[1], int64(d.Offset()))
	var data []byte
	if b := d.Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	total := 0
	for _, r := range runs {
		total += int(offs[r.hi] - offs[r.lo])
	}
	ob := newBuf(mem, int(n+1)*int(unsafe.Sizeof(zero)))
	db := newBuf(mem, total)
	o := offsetsOf[T](ob, 0)
	dst := db.Bytes()
	j, pos := 0, T(0)
	for _, r := range runs {
		j = rebase(o, offs, r.lo, r.hi, j, pos)
		pos += T(copy(dst[pos:], data[offs[r.lo]:offs[r.hi]]))
	}
	o[n] = pos
	out := array.NewData(d.DataType(), int(n), []*memory.Buffer{valid, ob, db}, nil, nulls, 0)
	releaseAll(valid, ob, db)
	return out
}

// gatherList is gatherSpans for lists: new offsets, and the child array
// gathered as one span per span of lists.
func gatherList[T offsets](mem memory.Allocator, d arrow.ArrayData, runs []span, n int64, valid *memory.Buffer, nulls int) arrow.ArrayData {
	var zero T
	offs := offsetsOf[T](d.Buffers()[1], int64(d.Offset()))
	ob := newBuf(mem, int(n+1)*int(unsafe.Sizeof(zero)))
	o := offsetsOf[T](ob, 0)
	child := make([]span, 0, len(runs))
	j, pos := 0, T(0)
	for _, r := range runs {
		j = rebase(o, offs, r.lo, r.hi, j, pos)
		if lo, hi := int64(offs[r.lo]), int64(offs[r.hi]); hi > lo {
			child = append(child, span{lo, hi})
		}
		pos += offs[r.hi] - offs[r.lo]
	}
	o[n] = pos
	c := gatherSpans(mem, d.Children()[0], child, int64(pos))
	out := array.NewData(d.DataType(), int(n), []*memory.Buffer{valid, ob}, []arrow.ArrayData{c}, nulls, 0)
	c.Release()
	releaseAll(valid, ob)
	return out
}

// releaseAll releases the buffers that are not nil.
func releaseAll(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}
