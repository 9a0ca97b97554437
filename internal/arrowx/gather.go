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
// allocator of a run). It handles the types agora writes: null, boolean,
// fixed-width numbers and temporals, string and binary (32- and 64-bit
// offsets), lists and structs of those. ok is false for any other type,
// and the caller falls back to compute.Take, as it does for an index out
// of range. The caller owns the result; it shares no buffer with a.
func Gather(mem memory.Allocator, a arrow.Array, idx []int64) (out arrow.Array, ok bool) {
	if !gatherable(a.DataType()) {
		return nil, false
	}
	for _, i := range idx {
		if i < 0 || i >= int64(a.Len()) {
			return nil, false // compute.Take reports it
		}
	}
	d := gatherData(mem, a.Data(), idx)
	defer d.Release()
	return array.MakeFromData(d), true
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

// gatherValidity returns the validity bitmap of rows idx of d and the
// null count; a nil bitmap when no gathered row is null.
func gatherValidity(mem memory.Allocator, d arrow.ArrayData, idx []int64) (*memory.Buffer, int) {
	if d.NullN() == 0 || d.Buffers()[0] == nil {
		return nil, 0
	}
	in := d.Buffers()[0].Bytes()
	off := int64(d.Offset())
	nulls := 0
	for _, i := range idx {
		if !bitutil.BitIsSet(in, int(off+i)) {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	b := newBuf(mem, int(bitutil.BytesForBits(int64(len(idx)))))
	bits := b.Bytes()
	for j, i := range idx {
		if bitutil.BitIsSet(in, int(off+i)) {
			bitutil.SetBit(bits, j)
		}
	}
	return b, nulls
}

// gatherData is Gather on array data; the caller releases the result.
func gatherData(mem memory.Allocator, d arrow.ArrayData, idx []int64) arrow.ArrayData {
	n := len(idx)
	dt := d.DataType()
	if n == 0 {
		empty := array.MakeArrayOfNull(mem, dt, 0)
		defer empty.Release()
		out := empty.Data()
		out.Retain()
		return out
	}
	if dt.ID() == arrow.NULL {
		return array.NewData(dt, n, []*memory.Buffer{nil}, nil, n, 0)
	}
	valid, nulls := gatherValidity(mem, d, idx)
	off := int64(d.Offset())
	switch t := dt.(type) {
	case *arrow.BooleanType:
		in := d.Buffers()[1].Bytes()
		vals := newBuf(mem, int(bitutil.BytesForBits(int64(n))))
		bits := vals.Bytes()
		for j, i := range idx {
			if bitutil.BitIsSet(in, int(off+i)) {
				bitutil.SetBit(bits, j)
			}
		}
		out := array.NewData(dt, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
		releaseAll(valid, vals)
		return out
	case *arrow.StringType, *arrow.BinaryType:
		return gatherBinary[int32](mem, d, idx, valid, nulls)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return gatherBinary[int64](mem, d, idx, valid, nulls)
	case *arrow.ListType:
		return gatherList[int32](mem, d, idx, valid, nulls)
	case *arrow.LargeListType:
		return gatherList[int64](mem, d, idx, valid, nulls)
	case *arrow.StructType:
		// A struct's children are indexed through the struct's own offset.
		cidx := idx
		if off != 0 {
			cidx = make([]int64, n)
			for j, i := range idx {
				cidx[j] = off + i
			}
		}
		children := make([]arrow.ArrayData, len(d.Children()))
		for k, c := range d.Children() {
			children[k] = gatherData(mem, c, cidx)
		}
		out := array.NewData(dt, n, []*memory.Buffer{valid}, children, nulls, 0)
		for _, c := range children {
			c.Release()
		}
		releaseAll(valid)
		return out
	case arrow.FixedWidthDataType:
		w := t.BitWidth() / 8
		in := d.Buffers()[1].Bytes()[int(off)*w:]
		vals := newBuf(mem, n*w)
		dst := vals.Bytes()
		switch w {
		case 8:
			s, o := arrow.Int64Traits.CastFromBytes(in), arrow.Int64Traits.CastFromBytes(dst)
			for j, i := range idx {
				o[j] = s[i]
			}
		case 4:
			s, o := arrow.Int32Traits.CastFromBytes(in), arrow.Int32Traits.CastFromBytes(dst)
			for j, i := range idx {
				o[j] = s[i]
			}
		default:
			for j, i := range idx {
				copy(dst[j*w:(j+1)*w], in[int(i)*w:int(i+1)*w])
			}
		}
		out := array.NewData(dt, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
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

// gatherBinary is gatherData for strings and binaries.
func gatherBinary[T offsets](mem memory.Allocator, d arrow.ArrayData, idx []int64, valid *memory.Buffer, nulls int) arrow.ArrayData {
	n := len(idx)
	var zero T
	offs := offsetsOf[T](d.Buffers()[1], int64(d.Offset()))
	var data []byte
	if b := d.Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	total := 0
	for _, i := range idx {
		total += int(offs[i+1] - offs[i])
	}
	ob := newBuf(mem, (n+1)*int(unsafe.Sizeof(zero)))
	db := newBuf(mem, total)
	o := offsetsOf[T](ob, 0)
	dst := db.Bytes()
	pos := T(0)
	for j, i := range idx {
		o[j] = pos
		pos += T(copy(dst[pos:], data[offs[i]:offs[i+1]]))
	}
	o[n] = pos
	out := array.NewData(d.DataType(), n, []*memory.Buffer{valid, ob, db}, nil, nulls, 0)
	releaseAll(valid, ob, db)
	return out
}

// gatherList is gatherData for lists: new offsets, and the child array
// gathered at the positions of the selected lists' values.
func gatherList[T offsets](mem memory.Allocator, d arrow.ArrayData, idx []int64, valid *memory.Buffer, nulls int) arrow.ArrayData {
	n := len(idx)
	var zero T
	offs := offsetsOf[T](d.Buffers()[1], int64(d.Offset()))
	ob := newBuf(mem, (n+1)*int(unsafe.Sizeof(zero)))
	o := offsetsOf[T](ob, 0)
	var child []int64
	pos := T(0)
	for j, i := range idx {
		o[j] = pos
		for k := offs[i]; k < offs[i+1]; k++ {
			child = append(child, int64(k))
		}
		pos += offs[i+1] - offs[i]
	}
	o[n] = pos
	c := gatherData(mem, d.Children()[0], child)
	out := array.NewData(d.DataType(), n, []*memory.Buffer{valid, ob}, []arrow.ArrayData{c}, nulls, 0)
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
