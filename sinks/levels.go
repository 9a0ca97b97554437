package sinks

import (
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// A leafPath leads from a top-level column of a batch to one of its
// Parquet leaf columns, through lists, maps and structs. levels walks it
// to give the leaf's values with their definition and repetition levels,
// which is what arrow-go's pqarrow.WriteArrowToColumn takes: the same
// levels pqarrow computes for itself, so that columns can be written one
// per goroutine (pqarrow writes a row group's columns one after another).
type leafPath struct {
	field int        // the batch column
	steps []pathStep // root first, the leaf last
	// lists is how many list steps the path has (its maximum repetition
	// level); last is the index of the last of them, -1 for none.
	lists, last int
}

// pathStep is one node on a leafPath.
type pathStep struct {
	kind     stepKind
	nullable bool  // an OPTIONAL node: its nulls are a definition level
	child    int   // stepStruct: the field taken
	rep      int16 // stepList: the repetition level of its elements after the first
}

type stepKind uint8

const (
	stepLeaf   stepKind = iota
	stepList            // list, large list or map: its values
	stepStruct          // one field of a struct
)

// errNestedType is returned by pathsToLeaves for a type levels cannot walk;
// the caller writes such a schema through pqarrow as a whole.
var errNestedType = errors.New("type not supported by the column-parallel writer")

// pathsToLeaves returns the paths to the leaves of schema, in the order of
// the Parquet schema's columns (depth first, fields in order).
func pathsToLeaves(schema *arrow.Schema) ([]leafPath, error) {
	var out []leafPath
	for i, f := range schema.Fields() {
		paths, err := pathsOf(f.Type, f.Nullable, nil, 0)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		for _, steps := range paths {
			lp := leafPath{field: i, steps: steps, last: -1}
			for k, s := range steps {
				if s.kind == stepList {
					lp.lists++
					lp.last = k
				}
			}
			out = append(out, lp)
		}
	}
	return out, nil
}

// pathsOf returns the step lists below a node of type dt, prefix being
// the steps above it and rep the repetition level reached there.
func pathsOf(dt arrow.DataType, nullable bool, prefix []pathStep, rep int16) ([][]pathStep, error) {
	with := func(s pathStep) []pathStep {
		return append(append([]pathStep(nil), prefix...), s)
	}
	switch t := dt.(type) {
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		e := t.(arrow.ListLikeType).ElemField()
		return pathsOf(e.Type, e.Nullable, with(pathStep{kind: stepList, nullable: nullable, rep: rep + 1}), rep+1)
	case *arrow.StructType:
		var out [][]pathStep
		for i, f := range t.Fields() {
			p, err := pathsOf(f.Type, f.Nullable, with(pathStep{kind: stepStruct, nullable: nullable, child: i}), rep)
			if err != nil {
				return nil, err
			}
			out = append(out, p...)
		}
		return out, nil
	case arrow.NestedType, *arrow.DictionaryType, arrow.ExtensionType:
		return nil, fmt.Errorf("%w: %s", errNestedType, dt)
	}
	return [][]pathStep{with(pathStep{kind: stepLeaf, nullable: nullable})}, nil
}

// levelScratch holds the level buffers of one goroutine, reused from
// leaf to leaf: the column writer encodes the levels it is given before
// it returns.
type levelScratch struct {
	def, rep []int16
	lo, hi   int64 // the leaf values visited
	seen     bool  // a leaf value was visited (lo and hi are set)
	gap      bool  // the values visited are not one run
}

// visited records that the leaf values [lo, hi) were visited: they
// extend the run seen so far, or leave a gap.
func (sc *levelScratch) visited(lo, hi int64) {
	switch {
	case !sc.seen:
		sc.lo, sc.hi, sc.seen = lo, hi, true
	case lo == sc.hi:
		sc.hi = hi
	default:
		sc.gap = true
	}
}

// leafLevels is one leaf of one batch, ready for WriteArrowToColumn.
type leafLevels struct {
	values   arrow.Array // the leaf's values visited (the caller releases it)
	def, rep []int16     // nil when the leaf has none
	nullable bool        // WriteArrowToColumn's leafFieldNullable
}

// levels computes the leaf's levels over every row of col (the batch's
// column p.field).
func (p *leafPath) levels(col arrow.Array, sc *levelScratch) (leafLevels, error) {
	// The leaf array: the struct fields and list values on the way down.
	leaf := col
	for _, s := range p.steps {
		switch s.kind {
		case stepList:
			leaf = leaf.(array.ListLike).ListValues()
		case stepStruct:
			leaf = leaf.(*array.Struct).Field(s.child)
		}
	}
	last := p.steps[len(p.steps)-1]
	// pqarrow calls a leaf without nulls not nullable, whatever its field.
	out := leafLevels{nullable: last.nullable && leaf.NullN() > 0}
	if p.lists == 0 && !p.anyNullable() {
		out.values = sliceOf(leaf, 0, int64(leaf.Len()))
		return out, nil
	}
	sc.def, sc.rep = sc.def[:0], sc.rep[:0]
	sc.lo, sc.hi, sc.seen, sc.gap = 0, 0, false, false
	if p.lists == 0 && len(p.steps) == 1 {
		// A top-level optional column: one level per row.
		sc.def = flatLevels(col, sc.def)
		out.def = sc.def
		out.values = sliceOf(leaf, 0, int64(leaf.Len()))
		return out, nil
	}
	switch l := col.(type) {
	case *array.List:
		if p.isListOfLeaf() {
			listLevels(p, l, l.Offsets()[l.Data().Offset():], l.ListValues(), sc)
			break
		}
		if in, ok := l.ListValues().(*array.List); ok && p.isListOfListOfLeaf() {
			listListLevels(p, l, l.Offsets()[l.Data().Offset():], in, in.Offsets()[in.Data().Offset():], in.ListValues(), sc)
			break
		}
		p.visitRows(col, sc)
	case *array.LargeList:
		if p.isListOfLeaf() {
			listLevels(p, l, l.Offsets()[l.Data().Offset():], l.ListValues(), sc)
			break
		}
		p.visitRows(col, sc)
	default:
		p.visitRows(col, sc)
	}
	out.def = sc.def
	if p.lists == 0 {
		out.values = sliceOf(leaf, 0, int64(leaf.Len()))
		return out, nil
	}
	if sc.gap {
		return leafLevels{}, errors.New("lists with non-zero length null components are not supported")
	}
	out.rep = sc.rep
	out.values = sliceOf(leaf, sc.lo, sc.hi)
	return out, nil
}

// sliceOf returns a's rows lo to hi with a reference the caller releases:
// a itself, retained, when that is all of it (a new slice costs a new
// array, once per column and row group), else a new slice.
func sliceOf(a arrow.Array, lo, hi int64) arrow.Array {
	if lo == 0 && hi == int64(a.Len()) {
		a.Retain()
		return a
	}
	return array.NewSlice(a, lo, hi)
}

// anyNullable reports whether a step of the path is OPTIONAL.
func (p *leafPath) anyNullable() bool {
	for _, s := range p.steps {
		if s.nullable {
			return true
		}
	}
	return false
}

// flatLevels appends a top-level optional column's definition levels: 1
// for a value, 0 for a null.
func flatLevels(a arrow.Array, def []int16) []int16 {
	n := a.Len()
	def = slices.Grow(def, n)[:len(def)+n]
	lv := def[len(def)-n:]
	if a.NullN() == 0 {
		for i := range lv {
			lv[i] = 1
		}
		return def
	}
	for i := range lv {
		lv[i] = 0
		if a.IsValid(i) {
			lv[i] = 1
		}
	}
	return def
}

// visitRows appends the levels of every row of col.
func (p *leafPath) visitRows(col arrow.Array, sc *levelScratch) {
	for i := range col.Len() {
		p.visit(0, col, i, 0, 0, sc)
	}
}

// isListOfLeaf reports whether the path is a top-level list of leaves
// (list<int64>, list<string>), the nested shape most tables have.
func (p *leafPath) isListOfLeaf() bool {
	return len(p.steps) == 2 && p.steps[0].kind == stepList && p.steps[1].kind == stepLeaf
}

// isListOfListOfLeaf reports whether the path is a top-level list of
// lists of leaves (list<list<float64>>).
func (p *leafPath) isListOfListOfLeaf() bool {
	return len(p.steps) == 3 && p.steps[0].kind == stepList && p.steps[1].kind == stepList && p.steps[2].kind == stepLeaf
}

// listListLevels is listLevels for a list of lists of leaves: col, whose
// offsets into inner are outer, inner's offsets into vals being innerOffs
// (each from its array's first row).
func listListLevels(p *leafPath, col arrow.Array, outer []int32, inner arrow.Array, innerOffs []int32, vals arrow.Array, sc *levelScratch) {
	l0, l1, leaf := p.steps[0], p.steps[1], p.steps[2]
	var empty0 int16 // the definition level of an empty outer list
	if l0.nullable {
		empty0 = 1
	}
	null1, empty1 := empty0+1, empty0+1 // of a null and of an empty inner list
	if l1.nullable {
		empty1++
	}
	valued, nulled := leafDefs(empty1, leaf)
	innerBits, innerOff := inner.NullBitmapBytes(), inner.Data().Offset()
	innerNulls := l1.nullable && inner.NullN() > 0 && innerBits != nil
	valBits, valOff := vals.NullBitmapBytes(), vals.Data().Offset()
	valueNulls := vals.NullN() > 0 && valBits != nil
	for i := range col.Len() {
		if l0.nullable && col.IsNull(i) {
			p.emit(sc, 0, 0)
			continue
		}
		s0, e0 := int64(outer[i]), int64(outer[i+1])
		if s0 == e0 {
			p.emit(sc, empty0, 0)
			continue
		}
		for j := s0; j < e0; j++ {
			rj := l0.rep
			if j == s0 {
				rj = 0
			}
			if innerNulls && !bitutil.BitIsSet(innerBits, innerOff+int(j)) {
				p.emit(sc, null1, rj)
				continue
			}
			s1, e1 := int64(innerOffs[j]), int64(innerOffs[j+1])
			if s1 == e1 {
				p.emit(sc, empty1, rj)
				continue
			}
			sc.visited(s1, e1)
			for m := s1; m < e1; m++ {
				r := l1.rep
				if m == s1 {
					r = rj
				}
				d := valued
				if valueNulls && !bitutil.BitIsSet(valBits, valOff+int(m)) {
					d = nulled
				}
				p.emit(sc, d, r)
			}
		}
	}
}

// leafDefs returns the definition levels of a value of leaf and of a
// null value, under lists whose empty list has the definition level
// empty: one lower for the null when the values are required (as visit
// does, pqarrow writes it so).
func leafDefs(empty int16, leaf pathStep) (valued, nulled int16) {
	valued, nulled = empty+1, empty+1
	if leaf.nullable {
		valued++
	} else {
		nulled--
	}
	return valued, nulled
}

// listLevels appends what visit would for every row of a list of leaves,
// col, whose offsets from its first row are offs and whose values are
// vals: one loop, without visit's call, type assertion and interface
// calls per element (2.5% of a Habermas run's instructions went to visit).
func listLevels[O int32 | int64](p *leafPath, col arrow.Array, offs []O, vals arrow.Array, sc *levelScratch) {
	list, leaf := p.steps[0], p.steps[1]
	var present int16 // the definition level of an empty list
	if list.nullable {
		present = 1
	}
	n := col.Len()
	if n == 0 {
		return
	}
	// At most a slot per value and one per empty or null list.
	slots := int(offs[n]-offs[0]) + n
	sc.def, sc.rep = slices.Grow(sc.def, slots), slices.Grow(sc.rep, slots)
	valued, nulled := leafDefs(present, leaf)
	bitmap, voff := vals.NullBitmapBytes(), vals.Data().Offset()
	valueNulls := vals.NullN() > 0 && bitmap != nil
	for i := range n {
		if list.nullable && col.IsNull(i) {
			sc.def, sc.rep = append(sc.def, 0), append(sc.rep, 0)
			continue
		}
		start, end := int64(offs[i]), int64(offs[i+1])
		if start == end {
			sc.def, sc.rep = append(sc.def, present), append(sc.rep, 0)
			continue
		}
		sc.visited(start, end)
		sc.rep = append(sc.rep, 0)
		for j := start + 1; j < end; j++ {
			sc.rep = append(sc.rep, list.rep)
		}
		if !valueNulls {
			for j := start; j < end; j++ {
				sc.def = append(sc.def, valued)
			}
			continue
		}
		for j := start; j < end; j++ {
			d := valued
			if !bitutil.BitIsSet(bitmap, voff+int(j)) {
				d = nulled
			}
			sc.def = append(sc.def, d)
		}
	}
}

// visit appends the levels of element i of a, the array at step k, whose
// definition level so far is d and whose repetition level is r. It
// records which values of the last list it reaches.
func (p *leafPath) visit(k int, a arrow.Array, i int, d, r int16, sc *levelScratch) {
	if k == p.last+1 && p.last >= 0 {
		// One element of the last list's values: a slot in the leaf.
		sc.visited(int64(i), int64(i)+1)
	}
	s := &p.steps[k]
	if s.nullable {
		if a.IsNull(i) {
			p.emit(sc, d, r)
			return
		}
		d++
	}
	switch s.kind {
	case stepLeaf:
		if !s.nullable && a.IsNull(i) {
			// A null where the schema allows none: pqarrow writes it one
			// level lower, as a null (the data is wrong; the file is what
			// pqarrow would make of it).
			d--
		}
		p.emit(sc, d, r)
	case stepStruct:
		p.visit(k+1, a.(*array.Struct).Field(s.child), i, d, r, sc)
	case stepList:
		l := a.(array.ListLike)
		start, end := l.ValueOffsets(i)
		if start == end {
			p.emit(sc, d, r)
			return
		}
		vals := l.ListValues()
		for j := start; j < end; j++ {
			rr := r
			if j > start {
				rr = s.rep
			}
			p.visit(k+1, vals, int(j), d+1, rr, sc)
		}
	}
}

// emit appends one slot's definition level d and, when the path has
// lists, its repetition level r.
func (p *leafPath) emit(sc *levelScratch, d, r int16) {
	sc.def = append(sc.def, d)
	if p.lists > 0 {
		sc.rep = append(sc.rep, r)
	}
}

// leafType returns the Arrow type of the leaf the path leads to, dt being
// the type of its batch column.
func (p *leafPath) leafType(dt arrow.DataType) arrow.DataType {
	for _, s := range p.steps {
		switch s.kind {
		case stepList:
			dt = dt.(arrow.ListLikeType).ElemField().Type
		case stepStruct:
			dt = dt.(*arrow.StructType).Field(s.child).Type
		}
	}
	return dt
}
