package stages

import (
	"context"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A Parquet column may be a list in one release of a dataset and a
// scalar in another (Habermas's rankings.metadata.status: per ranking or
// per candidate), or nested one level more or less
// (reward_predictions). Where no value is lost, ParquetFile reads it into
// the declared shape, so that the output's schema does not change with
// the release:
//   - a list where a scalar is declared: each row's list holds one value,
//     maybe repeated, and is read as that value (an empty or null list as
//     null); a row whose list holds values that differ stops the run,
//     naming the row;
//   - a scalar where a list is declared: each value is read as a list of
//     one (null as a null list);
//   - the same inside lists, at any depth.

// shapeDiffers reports whether one of have and want is a list where the
// other is not, at the top or inside lists. A dictionary counts as its
// values; a large or fixed-size list as a list.
func shapeDiffers(have, want arrow.DataType) bool {
	if d, ok := have.(*arrow.DictionaryType); ok {
		have = d.ValueType
	}
	he, hok := listElem(have)
	we, wok := listElem(want)
	if hok && wok {
		return shapeDiffers(he, we)
	}
	return hok != wok
}

// listElem returns the element type of a list, large list or
// fixed-size list.
func listElem(t arrow.DataType) (arrow.DataType, bool) {
	if l, ok := t.(arrow.ListLikeType); ok {
		return l.Elem(), true
	}
	return nil, false
}

// shapeNote describes how a column of type have in the file is read as
// want (shapeDiffers(have, want) is true).
func shapeNote(have, want arrow.DataType) string {
	_, hok := listElem(have)
	_, wok := listElem(want)
	switch {
	case hok && !wok:
		return "each row's list, one value repeated, read as that value"
	case !hok && wok:
		return "each value read as a list of one"
	}
	return "its lists' elements read into the declared shape"
}

// reshape converts a to want where shapeDiffers(a's type, want), as the
// comment above says, converting the values with conform. A row error's
// row is a's. want's lists are plain lists (config types have no other).
func reshape(ctx context.Context, mem memory.Allocator, a arrow.Array, want arrow.DataType) (arrow.Array, error) {
	wl, wantList := want.(*arrow.ListType)
	if e, ok := listElem(a.DataType()); ok {
		if _, plain := a.(*array.List); !plain {
			// A large or fixed-size list: as a plain list first.
			l, err := castSafely(exec.WithAllocator(context.WithoutCancel(ctx), mem), a, arrow.ListOf(e))
			if err != nil {
				return nil, fmt.Errorf("the file has %s, want %s: %w", a.DataType(), want, err)
			}
			defer l.Release()
			return reshape(ctx, mem, l, want)
		}
	}
	l, haveList := a.(*array.List)
	switch {
	case haveList && wantList:
		l := rebased(l)
		defer l.Release()
		vals, err := conform(ctx, mem, l.ListValues(), wl.Elem())
		if err != nil {
			return nil, rowOfValue(l, err)
		}
		defer vals.Release()
		data := array.NewData(want, l.Len(), l.Data().Buffers(), []arrow.ArrayData{vals.Data()}, l.NullN(), l.Data().Offset())
		defer data.Release()
		return array.MakeFromData(data), nil
	case haveList:
		return collapse(ctx, mem, l, want)
	case wantList:
		return wrap(ctx, mem, a, wl)
	}
	return nil, fmt.Errorf("no conversion from %s to %s", a.DataType(), want)
}

// rebased returns l (a new reference) with offsets that start at 0 and
// values cut to what its rows hold, so that nothing outside its rows is
// converted (a slice of a list keeps its parent's values whole).
func rebased(l *array.List) *array.List {
	n := l.Len()
	if n == 0 {
		l.Retain()
		return l
	}
	first, _ := l.ValueOffsets(0)
	_, last := l.ValueOffsets(n - 1)
	if first == 0 && l.Data().Offset() == 0 && last == int64(l.ListValues().Len()) {
		l.Retain()
		return l
	}
	offsets := make([]int32, n+1)
	for i := range n {
		s, e := l.ValueOffsets(i)
		offsets[i], offsets[i+1] = int32(s-first), int32(e-first)
	}
	vals := array.NewSlice(l.ListValues(), first, last)
	defer vals.Release()
	var validity *memory.Buffer
	if l.NullN() > 0 {
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := range n {
			if l.IsValid(i) {
				bitutil.SetBit(bits, i)
			}
		}
		validity = memory.NewBufferBytes(bits)
	}
	data := array.NewData(l.DataType(), n, []*memory.Buffer{validity, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{vals.Data()}, l.NullN(), 0)
	defer data.Release()
	return array.NewListData(data)
}

// collapse reads each row's list as its one value. The values are
// compared as the file has them, before any conversion, so that values
// a conversion would make equal ("01" and "1" read as integers) still
// differ; NaN equals NaN here.
func collapse(ctx context.Context, mem memory.Allocator, l *array.List, want arrow.DataType) (arrow.Array, error) {
	raw := l.ListValues()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.Reserve(l.Len())
	for i := 0; i < l.Len(); i++ {
		s, e := l.ValueOffsets(i)
		if l.IsNull(i) || s == e {
			ib.AppendNull()
			continue
		}
		for j := s + 1; j < e; j++ {
			if !sameValue(raw, int(s), int(j)) {
				return nil, &rowError{row: i, err: fmt.Errorf("the file has %s, want %s: the row's list holds values that differ (%s and %s); declare the column as a list",
					l.DataType(), want, shortValue(raw, int(s)), shortValue(raw, int(j)))}
			}
		}
		ib.UnsafeAppend(s)
	}
	idx := ib.NewArray()
	defer idx.Release()
	firsts, err := compute.TakeArray(exec.WithAllocator(context.WithoutCancel(ctx), mem), raw, idx)
	if err != nil {
		return nil, fmt.Errorf("the file has %s, want %s: %w", l.DataType(), want, err)
	}
	defer firsts.Release()
	return conform(ctx, mem, firsts, want)
}

// sameValue reports whether values i and j of a are equal, a NaN equal to
// a NaN and nulls to nulls.
func sameValue(a arrow.Array, i, j int) bool {
	if a.IsNull(i) || a.IsNull(j) {
		return a.IsNull(i) == a.IsNull(j)
	}
	switch f := a.(type) {
	case *array.Float64:
		x, y := f.Value(i), f.Value(j)
		return x == y || x != x && y != y
	case *array.Float32:
		x, y := f.Value(i), f.Value(j)
		return x == y || x != x && y != y
	}
	return array.SliceEqual(a, int64(i), int64(i+1), a, int64(j), int64(j+1))
}

// wrap reads each value of a as a list of one, a null as a null list.
func wrap(ctx context.Context, mem memory.Allocator, a arrow.Array, want *arrow.ListType) (arrow.Array, error) {
	vals, err := conform(ctx, mem, a, want.Elem())
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	n := vals.Len()
	offsets := make([]int32, n+1)
	var validity []byte
	elems := vals
	if vals.NullN() > 0 {
		validity = make([]byte, bitutil.BytesForBits(int64(n)))
		ib := array.NewInt64Builder(mem)
		defer ib.Release()
		for i := range n {
			if vals.IsValid(i) {
				bitutil.SetBit(validity, i)
				ib.Append(int64(i))
			}
			offsets[i+1] = int32(ib.Len())
		}
		keep := ib.NewArray()
		defer keep.Release()
		if elems, err = compute.TakeArray(exec.WithAllocator(context.WithoutCancel(ctx), mem), vals, keep); err != nil {
			return nil, err
		}
		defer elems.Release()
	} else {
		for i := range n {
			offsets[i+1] = int32(i + 1)
		}
	}
	var vb *memory.Buffer
	if validity != nil {
		vb = memory.NewBufferBytes(validity)
	}
	data := array.NewData(want, n, []*memory.Buffer{vb, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{elems.Data()}, vals.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// rowOfValue turns a row error at an element of l's values into one at
// the row of l holding it.
func rowOfValue(l *array.List, err error) error {
	re, ok := err.(*rowError)
	if !ok {
		return err
	}
	v := int64(re.row)
	row := sort.Search(l.Len(), func(i int) bool { _, e := l.ValueOffsets(i); return e > v })
	return &rowError{row: row, err: re.err}
}

// shortValue is value i of a as text, cut to 40 characters.
func shortValue(a arrow.Array, i int) string {
	s := a.ValueStr(i)
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
