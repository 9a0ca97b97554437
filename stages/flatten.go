package stages

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// ErrNoColumn is returned when a step names a column its input lacks.
var ErrNoColumn = errors.New("no column")

// Project selects and renames columns; it backs rename, snake_case and
// drop. It never copies data.
type Project struct {
	name   string
	idx    []int
	schema *arrow.Schema
}

// Name returns the step kind.
func (p *Project) Name() string { return p.name }

// Schema returns the output schema.
func (p *Project) Schema() *arrow.Schema { return p.schema }

// Process returns the selected columns under their new names.
func (p *Project) Process(_ context.Context, in arrow.RecordBatch, _ *pipeline.Rejects) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(p.idx))
	for i, j := range p.idx {
		cols[i] = in.Column(j)
	}
	return array.NewRecordBatch(p.schema, cols, in.NumRows()), nil
}

// NewRename renames columns old → new. Renaming onto an existing column
// is an error.
func NewRename(in *arrow.Schema, m map[string]string) (*Project, error) {
	names := make([]string, in.NumFields())
	for i, f := range in.Fields() {
		names[i] = f.Name
	}
	olds := make([]string, 0, len(m))
	for o := range m {
		olds = append(olds, o)
	}
	sort.Strings(olds)
	for _, o := range olds {
		i := colIndex(in, o)
		if i < 0 {
			return nil, fmt.Errorf("rename: %w %q (have %s)", ErrNoColumn, o, columnList(in))
		}
		names[i] = m[o]
	}
	return project("rename", in, names)
}

// NewSnakeCase renames every column to snake_case: dots and other
// separators become _, camelCase is split, and letters are lower case.
func NewSnakeCase(in *arrow.Schema) (*Project, error) {
	names := make([]string, in.NumFields())
	for i, f := range in.Fields() {
		names[i] = f.Name
		if !strings.HasPrefix(f.Name, "_") {
			names[i] = SnakeCase(f.Name)
		}
	}
	return project("snake_case", in, names)
}

// NewDrop removes columns.
func NewDrop(in *arrow.Schema, drop []string) (*Project, error) {
	gone := map[string]bool{}
	for _, d := range drop {
		if colIndex(in, d) < 0 {
			return nil, fmt.Errorf("drop: %w %q (have %s)", ErrNoColumn, d, columnList(in))
		}
		gone[d] = true
	}
	var names []string
	var idx []int
	for i, f := range in.Fields() {
		if !gone[f.Name] {
			names = append(names, f.Name)
			idx = append(idx, i)
		}
	}
	p, err := project("drop", selectSchema(in, idx), names)
	if err != nil {
		return nil, err
	}
	p.idx = idx
	return p, nil
}

func selectSchema(in *arrow.Schema, idx []int) *arrow.Schema {
	fs := make([]arrow.Field, len(idx))
	for i, j := range idx {
		fs[i] = in.Field(j)
	}
	return arrow.NewSchema(fs, nil)
}

func project(name string, in *arrow.Schema, names []string) (*Project, error) {
	seen := map[string]int{} // new name → the input column given it
	fields := make([]arrow.Field, len(names))
	idx := make([]int, len(names))
	for i, n := range names {
		if n == "" {
			return nil, fmt.Errorf("%s: empty column name", name)
		}
		if j, ok := seen[n]; ok {
			return nil, fmt.Errorf("%s: two columns named %q (from %s and %s)", name, n, in.Field(j).Name, in.Field(i).Name)
		}
		seen[n] = i
		fields[i] = in.Field(i)
		fields[i].Name = n
		idx[i] = i
	}
	return &Project{name: name, idx: idx, schema: arrow.NewSchema(fields, nil)}, nil
}

// SnakeCase converts a column name to snake_case: "candidates.metadata.id"
// → "candidates_metadata_id", "reviewerId" → "reviewer_id".
func SnakeCase(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r):
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	return strings.Trim(out, "_")
}

// Unpivot turns a family of columns named by a pattern over a list of
// dimensions ("{dimension}_{field}") into one row per input row and
// dimension, with a column holding the dimension and one column per
// field. A field missing for a dimension is null there. Rows come out in
// input order, dimensions in the declared order.
type Unpivot struct {
	mem     memory.Allocator
	keep    []int
	dims    []string
	fields  []string
	src     [][]int // src[f][d] = input column, or -1
	types   []arrow.DataType
	schema  *arrow.Schema
	dimType arrow.DataType
}

// Name returns the step kind.
func (u *Unpivot) Name() string { return "unpivot" }

// Schema returns the output schema.
func (u *Unpivot) Schema() *arrow.Schema { return u.schema }

// NewUnpivot plans an unpivot of in. varName is the placeholder in
// pattern; into is the new dimension column; keep empty means every
// column outside the family (and the line column).
func NewUnpivot(mem memory.Allocator, in *arrow.Schema, varName, pattern string, dims, fields []string, into string, keep []string) (*Unpivot, error) {
	if into == "" {
		into = varName
	}
	u := &Unpivot{mem: mem, dims: dims, fields: fields, dimType: arrow.BinaryTypes.String}
	family := map[int]bool{}
	for _, f := range fields {
		cols := make([]int, len(dims))
		var typ arrow.DataType
		for d, dim := range dims {
			name := strings.ReplaceAll(pattern, "{"+varName+"}", dim)
			name = strings.ReplaceAll(name, "{field}", f)
			cols[d] = colIndex(in, name)
			if cols[d] < 0 {
				continue
			}
			family[cols[d]] = true
			t := in.Field(cols[d]).Type
			if typ == nil {
				typ = t
			} else if !arrow.TypeEqual(typ, t) {
				return nil, fmt.Errorf("unpivot: column %s is %s but other %q columns are %s", name, t, f, typ)
			}
		}
		if typ == nil {
			return nil, fmt.Errorf("unpivot: no column matches %q for field %q (have %s)", pattern, f, columnList(in))
		}
		u.src = append(u.src, cols)
		u.types = append(u.types, typ)
	}
	var outFields []arrow.Field
	if len(keep) == 0 {
		for i, f := range in.Fields() {
			if !family[i] {
				u.keep = append(u.keep, i)
				outFields = append(outFields, f)
			}
		}
	} else {
		idx, err := needColumns(in, keep...)
		if err != nil {
			return nil, fmt.Errorf("unpivot: keep: %w", err)
		}
		// Where each row came from goes on with it, for its reject or
		// error to name: the line, and the file of a folder input.
		for _, c := range []string{pipeline.FileColumn, pipeline.LineColumn} {
			if l := colIndex(in, c); l >= 0 && !slices.Contains(keep, c) {
				idx = append(idx, l)
			}
		}
		for _, i := range idx {
			u.keep = append(u.keep, i)
			outFields = append(outFields, in.Field(i))
		}
	}
	outFields = append(outFields, arrow.Field{Name: into, Type: u.dimType, Nullable: false})
	for i, f := range fields {
		outFields = append(outFields, arrow.Field{Name: f, Type: u.types[i], Nullable: true})
	}
	seen := map[string]bool{}
	for _, f := range outFields {
		if seen[f.Name] {
			return nil, fmt.Errorf("unpivot: output would have two columns named %q", f.Name)
		}
		seen[f.Name] = true
	}
	u.schema = arrow.NewSchema(outFields, nil)
	return u, nil
}

// Process unpivots one batch.
func (u *Unpivot) Process(ctx context.Context, in arrow.RecordBatch, _ *pipeline.Rejects) (arrow.RecordBatch, error) {
	n := int(in.NumRows())
	k := len(u.dims)
	// Output row r*k+d comes from input row r, dimension d.
	rowIdx := make([]int64, n*k)
	for r := 0; r < n; r++ {
		for d := 0; d < k; d++ {
			rowIdx[r*k+d] = int64(r)
		}
	}
	keepCols := make([]arrow.Array, len(u.keep))
	for i, j := range u.keep {
		keepCols[i] = in.Column(j)
	}
	out, err := takeColumns(ctx, u.mem, keepCols, rowIdx)
	if err != nil {
		return nil, err
	}
	db := array.NewStringBuilder(u.mem)
	db.Reserve(n * k)
	for r := 0; r < n; r++ {
		for _, d := range u.dims {
			db.Append(d)
		}
	}
	out = append(out, db.NewArray())
	db.Release()
	// Field f: concatenate its per-dimension columns (d*n+r) and gather
	// them into r*k+d order.
	gather := make([]int64, n*k)
	for r := 0; r < n; r++ {
		for d := 0; d < k; d++ {
			gather[r*k+d] = int64(d*n + r)
		}
	}
	for f := range u.fields {
		parts := make([]arrow.Array, k)
		for d, c := range u.src[f] {
			if c < 0 {
				parts[d] = array.MakeArrayOfNull(u.mem, u.types[f], n)
			} else {
				parts[d] = in.Column(c)
				parts[d].Retain()
			}
		}
		all, err := array.Concatenate(parts, u.mem)
		releaseAll(parts)
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("unpivot: %w", err)
		}
		col, err := takeColumns(ctx, u.mem, []arrow.Array{all}, gather)
		all.Release()
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, col[0])
	}
	b := array.NewRecordBatch(u.schema, out, int64(n*k))
	releaseAll(out)
	return b, nil
}

// Explode turns aligned list columns into child rows: one row per list
// element, the other columns repeated. A list of structs becomes one
// column per struct field. A row whose lists differ in length, or whose
// lists are null, is rejected with the lengths; an empty list gives no
// child rows. Lists named by FillNulls may be null where the others are
// not: their elements come out null.
type Explode struct {
	mem      memory.Allocator
	lists    []int
	fill     []bool // per list: a null one reads as nulls (FillNulls)
	keep     []int
	index    string
	structOf []bool
	in       *arrow.Schema
	schema   *arrow.Schema
	// empty counts the rows whose lists were empty, which give no rows
	// (Process runs on several batches at once).
	empty atomic.Int64
}

// Notes reports the rows whose lists were all empty: they give no child
// row and no reject, so no count of the table's shows them.
func (e *Explode) Notes() []string {
	n := e.empty.Load()
	if n == 0 {
		return nil
	}
	names := make([]string, len(e.lists))
	for i, c := range e.lists {
		names[i] = e.in.Field(c).Name
	}
	return []string{fmt.Sprintf("explode: %d rows had empty lists (%s) and gave no rows (an empty list, or a null one fill_nulls takes for empty, is no rejected row; the table's rows in count the list elements)", n, strings.Join(names, ", "))}
}

// Name returns the step kind.
func (e *Explode) Name() string { return "explode" }

// Schema returns the output schema.
func (e *Explode) Schema() *arrow.Schema { return e.schema }

// NewExplode plans an explode of in.
func NewExplode(mem memory.Allocator, in *arrow.Schema, columns, as []string, index string, keep []string, prefix string) (*Explode, error) {
	lists, err := needColumns(in, columns...)
	if err != nil {
		return nil, fmt.Errorf("explode: %w", err)
	}
	e := &Explode{mem: mem, in: in, lists: lists, index: index}
	isList := map[int]bool{}
	for i, c := range lists {
		lt, ok := in.Field(c).Type.(*arrow.ListType)
		if !ok {
			return nil, fmt.Errorf("explode: column %s is %s, not a list", columns[i], config.FormatType(in.Field(c).Type))
		}
		_, isStruct := lt.Elem().(*arrow.StructType)
		e.structOf = append(e.structOf, isStruct)
		isList[c] = true
	}
	var fields []arrow.Field
	if len(keep) == 0 {
		for i, f := range in.Fields() {
			if !isList[i] {
				e.keep = append(e.keep, i)
				fields = append(fields, f)
			}
		}
	} else {
		idx, err := needColumns(in, keep...)
		if err != nil {
			return nil, fmt.Errorf("explode: keep: %w", err)
		}
		// Where each row came from goes on with it, for its reject or
		// error to name: the line, and the file of a folder input.
		for _, c := range []string{pipeline.FileColumn, pipeline.LineColumn} {
			if l := colIndex(in, c); l >= 0 && !slices.Contains(keep, c) {
				idx = append(idx, l)
			}
		}
		for _, i := range idx {
			e.keep = append(e.keep, i)
			fields = append(fields, in.Field(i))
		}
	}
	if index != "" {
		fields = append(fields, arrow.Field{Name: index, Type: arrow.PrimitiveTypes.Int64})
	}
	if prefix != "" && !slices.ContainsFunc(lists, func(c int) bool {
		_, ok := in.Field(c).Type.(*arrow.ListType).Elem().(*arrow.StructType)
		return ok
	}) {
		return nil, fmt.Errorf("explode: prefix names the columns of a list of structs' fields, and %s holds no structs; use as to name an element column", strings.Join(columns, ", "))
	}
	for i, c := range lists {
		elem := in.Field(c).Type.(*arrow.ListType).ElemField()
		if st, ok := elem.Type.(*arrow.StructType); ok {
			if len(as) > 0 {
				return nil, fmt.Errorf("explode: %s is a list of structs whose fields become columns; use prefix, not as", columns[i])
			}
			for _, sf := range st.Fields() {
				sf.Name = prefix + sf.Name
				sf.Nullable = true
				fields = append(fields, sf)
			}
			continue
		}
		name := columns[i]
		if len(as) > 0 {
			name = as[i]
		}
		fields = append(fields, arrow.Field{Name: name, Type: elem.Type, Nullable: true})
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("explode: output would have two columns named %q (use as, prefix or keep)", f.Name)
		}
		seen[f.Name] = true
	}
	e.schema = arrow.NewSchema(fields, nil)
	return e, nil
}

// FillNulls names list columns, of those exploded, that may be null (or
// empty) in a row whose other lists are not: each of their elements is
// then null, as many as the other lists hold, instead of the row being
// rejected.
// At least one exploded column must be left out, to give the length.
func (e *Explode) FillNulls(columns []string) error {
	if len(columns) == 0 {
		return nil
	}
	idx, err := needColumns(e.in, columns...)
	if err != nil {
		return fmt.Errorf("explode: fill_nulls: %w", err)
	}
	e.fill = make([]bool, len(e.lists))
	for k, c := range idx {
		i := slices.Index(e.lists, c)
		if i < 0 {
			return fmt.Errorf("explode: fill_nulls: %s is not one of the exploded columns", columns[k])
		}
		e.fill[i] = true
	}
	if !slices.Contains(e.fill, false) {
		return fmt.Errorf("explode: fill_nulls names every exploded column; leave out at least one, whose length the filled ones take")
	}
	return nil
}

// filled reports whether list i reads as nulls where it is null or
// empty (as a writer may store a list it has nothing for).
func (e *Explode) filled(i int) bool { return e.fill != nil && e.fill[i] }

// Process explodes one batch.
func (e *Explode) Process(ctx context.Context, in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	n := int(in.NumRows())
	lists := make([]*array.List, len(e.lists))
	for i, c := range e.lists {
		lists[i] = in.Column(c).(*array.List)
	}
	// The rows out are at most the elements of the first list column
	// (rows whose lists disagree in length are rejected), so the index
	// slices are made once at that size instead of grown.
	total := 0
	if n > 0 && len(lists) > 0 {
		// ValueOffsets, not Offsets: the buffer's offsets start at the
		// array's offset only when the batch is not a slice.
		first, _ := lists[0].ValueOffsets(0)
		_, last := lists[0].ValueOffsets(n - 1)
		total = int(last - first)
	}
	parent, index := make([]int64, 0, total), make([]int64, 0, total)
	elemIdx := make([][]int64, len(lists))
	for i := range elemIdx {
		elemIdx[i] = make([]int64, 0, total)
	}
	filledAny := make([]bool, len(lists)) // a list with a -1 (null) element index
	// starts holds row r's first element in each list, or -1 for a filled
	// list (FillNulls) that gives the row no values: null or empty.
	starts := make([]int64, len(lists))
	var empty int64
	defer func() { e.empty.Add(empty) }()
	for r := 0; r < n; r++ {
		l0 := -1
		ok := true
		for i, l := range lists {
			if l.IsNull(r) {
				if e.filled(i) {
					starts[i] = -1
					continue
				}
				ok = false
				break
			}
			s, t := l.ValueOffsets(r)
			if s == t && e.filled(i) {
				starts[i] = -1
				continue
			}
			if l0 >= 0 && int(t-s) != l0 {
				ok = false
				break
			}
			l0, starts[i] = int(t-s), s
		}
		if !ok {
			rej.AddRow(in, r, "explode", in.ColumnName(e.lists[0]), e.lengths(in, lists, r))
			continue
		}
		if l0 <= 0 {
			// No elements: lists empty, or null where fill_nulls lets
			// them be (l0 stays -1 when every list is such a one).
			empty++
		}
		for j := 0; j < l0; j++ {
			parent = append(parent, int64(r))
			index = append(index, int64(j))
			for i, s := range starts {
				if s < 0 {
					elemIdx[i] = append(elemIdx[i], -1)
					filledAny[i] = true
					continue
				}
				elemIdx[i] = append(elemIdx[i], s+int64(j))
			}
		}
	}
	keepCols := make([]arrow.Array, len(e.keep))
	for i, j := range e.keep {
		keepCols[i] = in.Column(j)
	}
	out, err := takeColumns(ctx, e.mem, keepCols, parent)
	if err != nil {
		return nil, err
	}
	if e.index != "" {
		ib := array.NewInt64Builder(e.mem)
		ib.AppendValues(index, nil)
		out = append(out, ib.NewArray())
		ib.Release()
	}
	for i, l := range lists {
		vals := l.ListValues()
		var src []arrow.Array
		if e.structOf[i] {
			st := vals.(*array.Struct)
			for f := 0; f < st.NumField(); f++ {
				src = append(src, st.Field(f))
			}
		} else {
			src = []arrow.Array{vals}
		}
		if filledAny[i] {
			cols, err := takeFilled(ctx, e.mem, src, elemIdx[i])
			if err != nil {
				releaseAll(out)
				return nil, err
			}
			out = append(out, cols...)
			continue
		}
		// Elements usually come out in the order they are stored: then
		// the new column is a slice of the list's values, not a copy.
		if a, ok := runOf(elemIdx[i]); ok {
			for _, c := range src {
				out = append(out, array.NewSlice(c, a, a+int64(len(elemIdx[i]))))
			}
			continue
		}
		cols, err := takeColumns(ctx, e.mem, src, elemIdx[i])
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, cols...)
	}
	b := array.NewRecordBatch(e.schema, out, int64(len(parent)))
	releaseAll(out)
	return b, nil
}

// takeFilled is takeColumns where an index of -1 gives a null: each of
// cols is taken from a copy with one null added at its end.
func takeFilled(ctx context.Context, mem memory.Allocator, cols []arrow.Array, idx []int64) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(cols))
	at := make([]int64, len(idx))
	for _, c := range cols {
		null := array.MakeArrayOfNull(mem, c.DataType(), 1)
		padded, err := array.Concatenate([]arrow.Array{c, null}, mem)
		null.Release()
		if err != nil {
			releaseAll(out)
			return nil, fmt.Errorf("explode: %w", err)
		}
		for k, v := range idx {
			at[k] = v
			if v < 0 {
				at[k] = int64(c.Len())
			}
		}
		taken, err := takeColumns(ctx, mem, []arrow.Array{padded}, at)
		padded.Release()
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, taken...)
	}
	return out, nil
}

func (e *Explode) lengths(in arrow.RecordBatch, lists []*array.List, r int) string {
	parts := make([]string, len(lists))
	nulls := 0
	for i, l := range lists {
		if l.IsNull(r) {
			parts[i] = in.ColumnName(e.lists[i]) + " is null"
			nulls++
			continue
		}
		s, t := l.ValueOffsets(r)
		parts[i] = fmt.Sprintf("%s has %d", in.ColumnName(e.lists[i]), t-s)
	}
	switch {
	case len(lists) == 1:
		return "list is null: " + parts[0]
	case nulls == len(lists):
		return "the lists are null: " + strings.Join(parts, ", ")
	case nulls > 0:
		return "a list is null: " + strings.Join(parts, ", ")
	}
	return "aligned lists differ in length: " + strings.Join(parts, ", ")
}

// runOf reports whether idx is a run of consecutive indexes, and where it
// starts.
func runOf(idx []int64) (int64, bool) {
	if len(idx) == 0 {
		return 0, true
	}
	for k, v := range idx {
		if v != idx[0]+int64(k) {
			return 0, false
		}
	}
	return idx[0], true
}
