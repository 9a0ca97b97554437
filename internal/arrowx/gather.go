package arrowx

import (
	"fmt"
	"slices"
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
	d := gatherSrcs(mem, a.DataType(), []src{{a.Data(), runs}}, int64(n))
	defer d.Release()
	return array.MakeFromData(d)
}

// src is runs of one array's data: what a gather copies from it.
type src struct {
	d    arrow.ArrayData
	runs []span
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

// newBuf allocates a zeroed buffer of exactly n bytes.
func newBuf(mem memory.Allocator, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(n)
	return b
}

// uninitializer is an allocator that can also hand out buffers without
// clearing them first (mempool.Allocator).
type uninitializer interface {
	Uninitialized() memory.Allocator
}

// newFullBuf allocates a buffer of exactly n bytes that the caller
// overwrites whole before it is read: from an allocator that can skip
// clearing it, uncleared. Bitmaps, whose last byte the gather writes only
// in part, take newBuf.
func newFullBuf(mem memory.Allocator, n int) *memory.Buffer {
	if u, ok := mem.(uninitializer); ok {
		mem = u.Uninitialized()
	}
	return newBuf(mem, n)
}

// shortBits is the longest run of bits copyBits copies one at a time.
const shortBits = 64

// copyBits copies n bits of src from bit s to dst from bit d. A short run
// is copied bit by bit: bitutil.CopyBitmap allocates a word reader and a
// word writer at each call, and a partition split copies many runs of a
// few rows (on CrowdRAG-25 at 10×, some 460,000 calls: 917,000 of the
// run's 3 million allocations).
func copyBits(src []byte, s, n int, dst []byte, d int) {
	if n > shortBits {
		bitutil.CopyBitmap(src, s, n, dst, d)
		return
	}
	for i := 0; i < n; i++ {
		bitutil.SetBitTo(dst, d+i, bitutil.BitIsSet(src, s+i))
	}
}

// gatherValidity returns the validity bitmap of the runs of srcs and the
// null count; a nil bitmap when no gathered position is null.
func gatherValidity(mem memory.Allocator, srcs []src, n int64) (*memory.Buffer, int) {
	valid := 0
	for _, sr := range srcs {
		d := sr.d
		if d.NullN() == 0 || d.Buffers()[0] == nil {
			for _, r := range sr.runs {
				valid += int(r.hi - r.lo)
			}
			continue
		}
		in := d.Buffers()[0].Bytes()
		off := int64(d.Offset())
		for _, r := range sr.runs {
			valid += bitutil.CountSetBits(in, int(off+r.lo), int(r.hi-r.lo))
		}
	}
	if int64(valid) == n {
		return nil, 0
	}
	b := newBuf(mem, int(bitutil.BytesForBits(n)))
	pos := int64(0)
	for _, sr := range srcs {
		d := sr.d
		if d.NullN() == 0 || d.Buffers()[0] == nil {
			for _, r := range sr.runs {
				bitutil.SetBitsTo(b.Bytes(), pos, r.hi-r.lo, true)
				pos += r.hi - r.lo
			}
			continue
		}
		in := d.Buffers()[0].Bytes()
		off := int64(d.Offset())
		for _, r := range sr.runs {
			copyBits(in, int(off+r.lo), int(r.hi-r.lo), b.Bytes(), int(pos))
			pos += r.hi - r.lo
		}
	}
	return b, int(n) - valid
}

// gatherSrcs copies the runs of srcs, one source after another, n
// positions in all, into new array data of type dt; the caller releases
// the result.
func gatherSrcs(mem memory.Allocator, dt arrow.DataType, srcs []src, n int64) arrow.ArrayData {
	// A source with nothing to copy is skipped: an empty array may have
	// no buffers at all (a builder's empty list child).
	empty := func(sr src) bool { return len(sr.runs) == 0 }
	if slices.ContainsFunc(srcs, empty) {
		srcs = slices.DeleteFunc(slices.Clone(srcs), empty)
	}
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
	valid, nulls := gatherValidity(mem, srcs, n)
	switch t := dt.(type) {
	case *arrow.BooleanType:
		vals := newBuf(mem, int(bitutil.BytesForBits(n)))
		pos := int64(0)
		for _, sr := range srcs {
			off := int64(sr.d.Offset())
			for _, r := range sr.runs {
				copyBits(sr.d.Buffers()[1].Bytes(), int(off+r.lo), int(r.hi-r.lo), vals.Bytes(), int(pos))
				pos += r.hi - r.lo
			}
		}
		out := array.NewData(dt, int(n), []*memory.Buffer{valid, vals}, nil, nulls, 0)
		releaseAll(valid, vals)
		return out
	case *arrow.StringType, *arrow.BinaryType:
		return gatherBinary[int32](mem, dt, srcs, n, valid, nulls)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return gatherBinary[int64](mem, dt, srcs, n, valid, nulls)
	case *arrow.ListType:
		return gatherList[int32](mem, dt, srcs, n, valid, nulls)
	case *arrow.LargeListType:
		return gatherList[int64](mem, dt, srcs, n, valid, nulls)
	case *arrow.StructType:
		// A struct's children are indexed through the struct's own offset.
		csrcs := make([]src, len(srcs))
		children := make([]arrow.ArrayData, len(t.Fields()))
		for k, f := range t.Fields() {
			for i, sr := range srcs {
				runs := sr.runs
				if off := int64(sr.d.Offset()); off != 0 {
					runs = make([]span, len(sr.runs))
					for j, r := range sr.runs {
						runs[j] = span{off + r.lo, off + r.hi}
					}
				}
				csrcs[i] = src{sr.d.Children()[k], runs}
			}
			children[k] = gatherSrcs(mem, f.Type, csrcs, n)
		}
		out := array.NewData(dt, int(n), []*memory.Buffer{valid}, children, nulls, 0)
		for _, c := range children {
			c.Release()
		}
		releaseAll(valid)
		return out
	case arrow.FixedWidthDataType:
		w := int64(t.BitWidth() / 8)
		vals := newFullBuf(mem, int(n*w))
		dst := vals.Bytes()
		pos := int64(0)
		for _, sr := range srcs {
			in := sr.d.Buffers()[1].Bytes()[int64(sr.d.Offset())*w:]
			for _, r := range sr.runs {
				pos += int64(copy(dst[pos:], in[r.lo*w:r.hi*w]))
			}
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

// gatherBinary is gatherSrcs for strings and binaries: the bytes of a
// run are one copy.
func gatherBinary[T offsets](mem memory.Allocator, dt arrow.DataType, srcs []src, n int64, valid *memory.Buffer, nulls int) arrow.ArrayData {
	var zero T
	total := 0
	for _, sr := range srcs {
		offs := offsetsOf[T](sr.d.Buffers()[1], int64(sr.d.Offset()))
		for _, r := range sr.runs {
			total += int(offs[r.hi] - offs[r.lo])
		}
	}
	ob := newFullBuf(mem, int(n+1)*int(unsafe.Sizeof(zero)))
	db := newFullBuf(mem, total)
	o := offsetsOf[T](ob, 0)
	dst := db.Bytes()
	j, pos := 0, T(0)
	for _, sr := range srcs {
		offs := offsetsOf[T](sr.d.Buffers()[1], int64(sr.d.Offset()))
		var data []byte
		if b := sr.d.Buffers()[2]; b != nil {
			data = b.Bytes()
		}
		for _, r := range sr.runs {
			j = rebase(o, offs, r.lo, r.hi, j, pos)
			pos += T(copy(dst[pos:], data[offs[r.lo]:offs[r.hi]]))
		}
	}
	o[n] = pos
	out := array.NewData(dt, int(n), []*memory.Buffer{valid, ob, db}, nil, nulls, 0)
	releaseAll(valid, ob, db)
	return out
}

// gatherList is gatherSrcs for lists: new offsets, and the child arrays
// gathered as one run per run of lists.
func gatherList[T offsets](mem memory.Allocator, dt arrow.DataType, srcs []src, n int64, valid *memory.Buffer, nulls int) arrow.ArrayData {
	var zero T
	ob := newFullBuf(mem, int(n+1)*int(unsafe.Sizeof(zero)))
	o := offsetsOf[T](ob, 0)
	csrcs := make([]src, 0, len(srcs))
	j, pos := 0, T(0)
	for _, sr := range srcs {
		offs := offsetsOf[T](sr.d.Buffers()[1], int64(sr.d.Offset()))
		child := make([]span, 0, len(sr.runs))
		for _, r := range sr.runs {
			j = rebase(o, offs, r.lo, r.hi, j, pos)
			if lo, hi := int64(offs[r.lo]), int64(offs[r.hi]); hi > lo {
				child = append(child, span{lo, hi})
			}
			pos += offs[r.hi] - offs[r.lo]
		}
		csrcs = append(csrcs, src{sr.d.Children()[0], child})
	}
	o[n] = pos
	c := gatherSrcs(mem, dt.(arrow.ListLikeType).Elem(), csrcs, int64(pos))
	out := array.NewData(dt, int(n), []*memory.Buffer{valid, ob}, []arrow.ArrayData{c}, nulls, 0)
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
