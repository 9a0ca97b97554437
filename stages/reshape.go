package stages

import (
	"context"
	"errors"
	"fmt"
	"github.com/agora-etl/agora/config"
	"math"
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
	l, haveList := a.(*array.List)
	switch {
	case haveList && wantList:
		return relist(ctx, mem, l, wl)
	case haveList:
		return collapse(ctx, mem, l, want)
	case wantList:
		return wrap(ctx, mem, a, wl)
	}
	return nil, fmt.Errorf("no conversion from %s to %s", a.DataType(), want)
}

// relist converts the values of list l to want's element type (conform,
// which reshapes them where their shape differs) under l's offsets and
// validity. Lists are converted here rather than by arrow-go's cast,
// whose list kernels panic on some element types (a list of
// dictionaries) in goroutines no recover reaches.
func relist(ctx context.Context, mem memory.Allocator, l *array.List, want *arrow.ListType) (arrow.Array, error) {
	l, err := plainList(ctx, mem, l)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	vals, err := conform(ctx, mem, l.ListValues(), want.Elem())
	if err != nil {
		return nil, rowOfValue(l, err)
	}
	defer vals.Release()
	data := array.NewData(want, l.Len(), l.Data().Buffers(), []arrow.ArrayData{vals.Data()}, l.NullN(), l.Data().Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}

// plainList returns l as a plain list (32-bit offsets, a new reference)
// whose offsets start at 0 and whose values are only those of its valid
// rows: a large or fixed-size list becomes a plain one, a slice of a list
// (which keeps its parent's values whole) and a null row that still
// spans values (a fixed-size list's do) convert nothing outside their
// rows. A plain list that is all that already is returned as it is.
func plainList(ctx context.Context, mem memory.Allocator, l array.ListLike) (*array.List, error) {
	n := l.Len()
	var first, last int64
	if n > 0 {
		first, _ = l.ValueOffsets(0)
		_, last = l.ValueOffsets(n - 1)
	}
	if last-first > math.MaxInt32 {
		return nil, fmt.Errorf("%s with %d values in one batch: more than a list holds", l.DataType(), last-first)
	}
	offsets := make([]int32, n+1)
	spans := false // a null row spans values
	for i := range n {
		s, e := l.ValueOffsets(i)
		spans = spans || l.IsNull(i) && s != e
		offsets[i], offsets[i+1] = int32(s-first), int32(e-first)
	}
	t := l.DataType()
	if p, ok := l.(*array.List); ok {
		if !spans && first == 0 && p.Data().Offset() == 0 && last == int64(p.ListValues().Len()) {
			p.Retain()
			return p, nil
		}
	} else {
		elem, _ := listElem(t)
		t = arrow.ListOf(elem)
	}
	if !spans {
		return newList(t, l, offsets, array.NewSlice(l.ListValues(), first, last)), nil
	}
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	for i := range n {
		if s, e := l.ValueOffsets(i); l.IsValid(i) {
			for j := s; j < e; j++ {
				ib.Append(j)
			}
		}
		offsets[i+1] = int32(ib.Len())
	}
	idx := ib.NewArray()
	defer idx.Release()
	vals, err := compute.TakeArray(exec.WithAllocator(context.WithoutCancel(ctx), mem), l.ListValues(), idx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.DataType(), err)
	}
	return newList(t, l, offsets, vals), nil
}

// newList builds a list of type t with the validity of like, the given
// offsets and vals (whose reference it takes).
func newList(t arrow.DataType, like arrow.Array, offsets []int32, vals arrow.Array) *array.List {
	defer vals.Release()
	n := like.Len()
	var validity *memory.Buffer
	if like.NullN() > 0 {
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := range n {
			if like.IsValid(i) {
				bitutil.SetBit(bits, i)
			}
		}
		validity = memory.NewBufferBytes(bits)
	}
	data := array.NewData(t, n, []*memory.Buffer{validity, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{vals.Data()}, like.NullN(), 0)
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

// sameValue reports whether values i and j of a are equal: nulls to
// nulls, NaN to NaN and -0.0 to 0.0 (as numbers), inside lists too.
func sameValue(a arrow.Array, i, j int) bool {
	return array.SliceApproxEqual(a, int64(i), int64(i+1), a, int64(j), int64(j+1), array.WithNaNsEqual(true), array.WithAbsTolerance(0))
}

// wrap reads each value of a as a list of one, a null as a null list.
func wrap(ctx context.Context, mem memory.Allocator, a arrow.Array, want *arrow.ListType) (arrow.Array, error) {
	vals, err := conform(ctx, mem, a, want.Elem())
	if err != nil {
		return nil, err
	}
	offsets := make([]int32, vals.Len()+1)
	for i := range vals.Len() {
		offsets[i+1] = int32(i + 1)
	}
	l := newList(want, vals, offsets, vals) // a null spans its null value
	if l.NullN() == 0 {
		return l, nil
	}
	defer l.Release()
	return plainList(ctx, mem, l) // which leaves out what null rows span
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
	start, _ := l.ValueOffsets(row)
	return &rowError{row: row, err: fmt.Errorf("element %d of its %s: %w", v-start, config.FormatType(l.DataType()), re.err)}
}

// shortValue is value i of a as text, cut to 40 characters.
func shortValue(a arrow.Array, i int) string {
	s := a.ValueStr(i)
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// sameFieldNames reports whether two struct types have the same field
// names, in any order, each once.
func sameFieldNames(a, b *arrow.StructType) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for _, f := range b.Fields() {
		if len(a.FieldIndices(f.Name)) != 1 {
			return false
		}
	}
	return true
}

// restruct converts a struct array field by field to want (the same
// field names, in want's order), with conform: arrow-go's struct cast
// refuses what conform does itself (timestamps cut to the microsecond, floats as text, lists
// of other lists). Only the struct's own rows of each field are
// converted (a slice's parent may hold values that do not); a field's
// error names the struct's row.
func restruct(ctx context.Context, mem memory.Allocator, s *array.Struct, want *arrow.StructType) (arrow.Array, error) {
	d := s.Data()
	off, n := d.Offset(), d.Len()
	children := make([]arrow.ArrayData, len(d.Children()))
	var validity *memory.Buffer
	defer func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
		if validity != nil {
			validity.Release()
		}
	}()
	st := s.DataType().(*arrow.StructType)
	for i, wf := range want.Fields() {
		// The file's field of that name: a writer may order them
		// otherwise than pipeline.yaml declares them.
		// arrow-go slices it to the struct's rows.
		out, err := conform(ctx, mem, s.Field(st.FieldIndices(wf.Name)[0]), wf.Type)
		if err != nil {
			var re *rowError
			if errors.As(err, &re) {
				return nil, &rowError{row: re.row, err: fmt.Errorf("field %s: %w", wf.Name, re.err)}
			}
			return nil, fmt.Errorf("field %s: %w", wf.Name, err)
		}
		children[i] = out.Data()
		children[i].Retain()
		out.Release()
	}
	nulls := s.NullN() // counted: a slice's data says -1, unknown
	if b := d.Buffers()[0]; b != nil && nulls > 0 {
		// The struct's validity from its offset on, as the new struct
		// starts at 0.
		validity = memory.NewResizableBuffer(mem)
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(b.Bytes(), off, n, validity.Bytes(), 0)
	}
	if validity == nil {
		nulls = 0
	}
	data := array.NewData(want, n, []*memory.Buffer{validity}, children, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// remap converts a map array to want, its entries (key and value
// structs) with restruct, keeping its offsets and validity. arrow-go
// cannot cast maps, so a carried map<uint8,string> or map<string,
// large_string> stopped the run.
func remap(ctx context.Context, mem memory.Allocator, m *array.Map, want *arrow.MapType) (arrow.Array, error) {
	// Its entries as a plain list, offsets from 0 and only its own rows'
	// entries.
	l, err := plainList(ctx, mem, m)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	st, ok := l.ListValues().(*array.Struct)
	if !ok {
		return nil, fmt.Errorf("the file has %s: its entries are %s, not a struct", m.DataType(), l.ListValues().DataType())
	}
	// Map entries are key and value by position, whatever they are named.
	have, wantEntries := st.DataType().(*arrow.StructType), want.Elem().(*arrow.StructType)
	named := arrow.StructOf(arrow.Field{Name: have.Field(0).Name, Type: wantEntries.Field(0).Type, Nullable: wantEntries.Field(0).Nullable},
		arrow.Field{Name: have.Field(1).Name, Type: wantEntries.Field(1).Type, Nullable: wantEntries.Field(1).Nullable})
	conv, err := restruct(ctx, mem, st, named)
	if err != nil {
		return nil, rowOfValue(l, err)
	}
	defer conv.Release()
	cd := retype(conv.Data(), wantEntries)
	defer cd.Release()
	ld := l.Data()
	data := array.NewData(want, ld.Len(), ld.Buffers(), []arrow.ArrayData{cd}, l.NullN(), ld.Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}
