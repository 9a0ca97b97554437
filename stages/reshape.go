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
// values.
func shapeDiffers(have, want arrow.DataType) bool {
	if d, ok := have.(*arrow.DictionaryType); ok {
		have = d.ValueType
	}
	hl, hok := have.(*arrow.ListType)
	wl, wok := want.(*arrow.ListType)
	if hok && wok {
		return shapeDiffers(hl.Elem(), wl.Elem())
	}
	return hok != wok
}

// shapeNote describes how a column of type have in the file is read as
// want (shapeDiffers(have, want) is true).
func shapeNote(have, want arrow.DataType) string {
	_, hok := have.(*arrow.ListType)
	_, wok := want.(*arrow.ListType)
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
// row is a's.
func reshape(ctx context.Context, mem memory.Allocator, a arrow.Array, want arrow.DataType) (arrow.Array, error) {
	wl, wantList := want.(*arrow.ListType)
	l, haveList := a.(*array.List)
	switch {
	case haveList && wantList:
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

// collapse reads each row's list as its one value.
func collapse(ctx context.Context, mem memory.Allocator, l *array.List, want arrow.DataType) (arrow.Array, error) {
	vals, err := conform(ctx, mem, l.ListValues(), want)
	if err != nil {
		return nil, rowOfValue(l, err)
	}
	defer vals.Release()
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
			if !array.SliceEqual(vals, s, s+1, vals, j, j+1) {
				return nil, &rowError{row: i, err: fmt.Errorf("the file has %s, want %s: the row's list holds values that differ (%s and %s); declare the column as a list",
					l.DataType(), want, shortValue(vals, int(s)), shortValue(vals, int(j)))}
			}
		}
		ib.UnsafeAppend(s)
	}
	idx := ib.NewArray()
	defer idx.Release()
	return compute.TakeArray(exec.WithAllocator(context.WithoutCancel(ctx), mem), vals, idx)
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
