package stages

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/pipeline"
)

// Deriver computes one new column for a batch.
type Deriver struct {
	// Type is the type of the new column.
	Type arrow.DataType
	// Compute returns the column for b; the caller owns it.
	Compute func(b arrow.RecordBatch) (arrow.Array, error)
	// ComputeRows, when set instead of Compute, may also report rows it
	// cannot derive (bad[i] = reason); those rows are rejected.
	ComputeRows func(b arrow.RecordBatch, bad map[int]string) (arrow.Array, error)
	// Ordered says the column depends on earlier rows (the step then runs
	// in input order).
	Ordered bool
	// Whole says the column depends on every row of the table (the step
	// then holds all rows until the end).
	Whole bool
	// Observe, when set on a Whole derivation, makes it two-pass: Observe
	// sees every batch of the step's input in order, then Compute is
	// called batch by batch with what was observed. The step then need
	// not hold the table in memory: it spills the batches to a temporary
	// file. Uses lists the input columns Observe reads.
	Observe func(b arrow.RecordBatch)
	Uses    []int
	// Close, if set, releases state kept between batches.
	Close func()
}

// DeriveFunc builds a Deriver for an input schema from its YAML
// declaration.
type DeriveFunc func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error)

// DeriveDoc documents one registered derivation.
type DeriveDoc struct {
	Name, Args, Doc string
	fn              DeriveFunc
}

var registry = map[string]DeriveDoc{}

// Register adds a derivation to the registry under name. args documents
// its arguments and keys, "[string column], value: separator, values:
// [left out]": the keys named after the bracketed arguments are the ones
// it reads, and any other key set on it is a config error (keysApply).
// It panics on a duplicate name (a programming error).
func Register(name, args, doc string, fn DeriveFunc) {
	if _, dup := registry[name]; dup {
		panic("stages: derivation registered twice: " + name)
	}
	registry[name] = DeriveDoc{Name: name, Args: args, Doc: doc, fn: fn}
}

// Derivations lists the registered derivations by name.
func Derivations() []DeriveDoc {
	out := make([]DeriveDoc, 0, len(registry))
	for _, d := range registry {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Derive adds (or replaces) columns computed by named derivations, in
// declaration order, so a derivation may use an earlier one's column.
type Derive struct {
	mem     memory.Allocator
	specs   []config.Derivation
	ders    []*Deriver
	replace []int // index of the column replaced, or -1
	schemas []*arrow.Schema
	ordered bool
	whole   bool
	twoPass bool // every whole derivation observes; spill what is held
	held    []arrow.RecordBatch
	heldB   int64
	// heldFile learns the input file of the held batches (their
	// Rejects' File).
	heldFile pipeline.OneFile
	spill    *spillFile
}

// SpillBytes is how many Arrow bytes a two-pass whole-table derive holds
// in memory before it moves the held rows to a temporary file.
var SpillBytes int64 = 16 << 20

// Name returns the step kind.
func (d *Derive) Name() string { return "derive" }

// Schema returns the output schema.
func (d *Derive) Schema() *arrow.Schema { return d.schemas[len(d.schemas)-1] }

// Ordered reports whether a derivation depends on earlier rows.
func (d *Derive) Ordered() bool { return d.ordered || d.whole }

// NewDerive compiles derivations against the input schema.
func NewDerive(mem memory.Allocator, in *arrow.Schema, specs []config.Derivation) (*Derive, error) {
	d := &Derive{mem: mem, specs: specs, schemas: []*arrow.Schema{in}}
	cur := in
	for i, s := range specs {
		reg, ok := registry[s.Fn]
		if !ok {
			names := make([]string, 0, len(registry))
			for n := range registry {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, &ItemError{Path: fmt.Sprintf("derive[%d]", i), Err: fmt.Errorf("unknown derivation %q (have %s)", s.Fn, strings.Join(names, ", "))}
		}
		if err := keysApply(s, reg.Args); err != nil {
			return nil, &ItemError{Path: fmt.Sprintf("derive[%d]", i), Err: fmt.Errorf("%s: %w", s.Fn, err)}
		}
		der, err := reg.fn(mem, cur, s)
		if err != nil {
			return nil, &ItemError{Path: fmt.Sprintf("derive[%d]", i), Err: fmt.Errorf("%s: %w", s.Fn, err)}
		}
		if s.When != nil {
			if colIndex(cur, s.When.Column) < 0 {
				return nil, &ItemError{Path: fmt.Sprintf("derive[%d].when", i), Err: fmt.Errorf("%w %q", ErrNoColumn, s.When.Column)}
			}
			if len(s.When.In) == 0 {
				return nil, &ItemError{Path: fmt.Sprintf("derive[%d].when", i), Err: errors.New("list the values in in")}
			}
		}
		fields := append([]arrow.Field(nil), cur.Fields()...)
		at := colIndex(cur, s.Name)
		if at >= 0 && !s.Replace {
			return nil, &ItemError{Path: fmt.Sprintf("derive[%d]", i), Err: fmt.Errorf("column %q exists; set replace: true to overwrite it", s.Name)}
		}
		f := arrow.Field{Name: s.Name, Type: der.Type, Nullable: true}
		if at >= 0 && s.When != nil && !arrow.TypeEqual(cur.Field(at).Type, der.Type) {
			// The rows when leaves out keep the column's value, which a
			// column of another type cannot hold: they would be null.
			return nil, &ItemError{Path: fmt.Sprintf("derive[%d]", i), Err: fmt.Errorf("%s: replace with when keeps the other rows' %s, but %s makes %s of %s: derive a new column instead", s.Fn, s.Name, s.Fn, config.FormatType(der.Type), config.FormatType(cur.Field(at).Type))}
		}
		if at >= 0 {
			fields[at] = f
		} else {
			fields = append(fields, f)
		}
		cur = arrow.NewSchema(fields, nil)
		d.schemas = append(d.schemas, cur)
		d.ders = append(d.ders, der)
		d.replace = append(d.replace, at)
		d.ordered = d.ordered || der.Ordered
		d.whole = d.whole || der.Whole
	}
	// A derivation that rejects rows and one that reads other rows (the
	// previous, the next, every row of a key) in one step: the second
	// would still see the rows the first rejects (a lead naming a
	// rejected row's value), since a step's rows go only once all its
	// columns are made.
	if rj, rd := slices.IndexFunc(d.ders, func(x *Deriver) bool { return x.ComputeRows != nil }), slices.IndexFunc(d.ders, func(x *Deriver) bool { return x.Ordered || x.Whole }); rj >= 0 && rd >= 0 {
		d.Close()
		return nil, &ItemError{Path: fmt.Sprintf("derive[%d]", rd), Err: fmt.Errorf("%s reads other rows, and %s (derive[%d]) rejects rows in the same step, which %s would still see: put them in derive steps of their own (the one that rejects first, as a rule)", specs[rd].Fn, specs[rj].Fn, rj, specs[rd].Fn)}
	}
	d.twoPass = d.whole
	for i, der := range d.ders {
		if !der.Whole {
			continue
		}
		// Observe reads the step's input: its columns must be where an
		// earlier derivation of the step has not replaced them.
		ok := der.Observe != nil
		for _, c := range der.Uses {
			ok = ok && c < in.NumFields()
		}
		for _, at := range d.replace[:i] {
			ok = ok && at < 0
		}
		d.twoPass = d.twoPass && ok
	}
	return d, nil
}

// Process adds the derived columns, or holds the batch when a derivation
// needs the whole table (observing it first when the derivations are
// two-pass, and spilling what is held past SpillBytes).
func (d *Derive) Process(_ context.Context, in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	if !d.whole {
		return d.apply(in, rej)
	}
	if d.twoPass {
		for _, der := range d.ders {
			if der.Observe != nil {
				der.Observe(in)
			}
		}
	}
	d.heldFile.See(rej.File)
	in.Retain()
	d.held = append(d.held, in)
	d.heldB += arrowx.BatchBytes(in)
	if d.twoPass && (d.spill != nil || d.heldB > SpillBytes) {
		return nil, d.spillHeld()
	}
	return nil, nil
}

// spillHeld moves the held batches to the spill file.
func (d *Derive) spillHeld() error {
	if d.spill == nil {
		sp, err := newSpillFile(d.schemas[0], d.mem)
		if err != nil {
			return err
		}
		d.spill = sp
	}
	err := d.spill.write(d.held)
	d.releaseHeld()
	return err
}

func (d *Derive) releaseHeld() {
	for _, b := range d.held {
		b.Release()
	}
	d.held, d.heldB = nil, 0
}

// Close releases the derivations' state, any held batches and the spill
// file.
func (d *Derive) Close() {
	for _, der := range d.ders {
		if der.Close != nil {
			der.Close()
		}
	}
	d.releaseHeld()
	if d.spill != nil {
		d.spill.remove()
		d.spill = nil
	}
}

// FlushTo derives over the held rows and emits them: batch by batch (from
// memory or the spill file) when the derivations are two-pass, else as one
// batch of the whole table.
func (d *Derive) FlushTo(ctx context.Context, emit func(arrow.RecordBatch, *pipeline.Rejects) error) error {
	if !d.whole {
		return nil
	}
	defer d.Close()
	if !d.twoPass {
		if len(d.held) == 0 {
			return nil
		}
		all, err := arrowx.ConcatBatches(d.mem, d.schemas[0], d.held)
		d.releaseHeld()
		if err != nil {
			return err
		}
		defer all.Release()
		rej := &pipeline.Rejects{File: d.heldFile.File()} // an input of one file: rows and errors name it
		out, err := d.apply(all, rej)
		if err != nil {
			return err
		}
		return emit(out, rej)
	}
	one := func(b arrow.RecordBatch) error {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		rej := &pipeline.Rejects{File: d.heldFile.File()} // an input of one file: rows and errors name it
		out, err := d.apply(b, rej)
		if err != nil {
			return err
		}
		return emit(out, rej)
	}
	if d.spill != nil {
		if err := d.spillHeld(); err != nil {
			return err
		}
		return d.spill.each(one)
	}
	for _, b := range d.held {
		if err := one(b); err != nil {
			return err
		}
	}
	return nil
}

// Flush derives over every held row and returns them as one batch (what
// FlushTo emits, joined).
func (d *Derive) Flush(ctx context.Context, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	return joinFlush(ctx, d.mem, d.Schema(), rej, d.FlushTo)
}

// joinFlush runs a StreamFlusher's FlushTo and returns what it emits as
// one batch of schema s (nil for nothing), with the rejects merged into
// rej: a Flusher's Flush.
func joinFlush(ctx context.Context, mem memory.Allocator, s *arrow.Schema, rej *pipeline.Rejects,
	flushTo func(context.Context, func(arrow.RecordBatch, *pipeline.Rejects) error) error) (arrow.RecordBatch, error) {
	var outs []arrow.RecordBatch
	defer func() {
		for _, b := range outs {
			b.Release()
		}
	}()
	err := flushTo(ctx, func(b arrow.RecordBatch, r *pipeline.Rejects) error {
		if rej != nil && r != nil {
			rej.Merge(r)
		}
		outs = append(outs, b)
		return nil
	})
	if err != nil || len(outs) == 0 {
		return nil, err
	}
	if len(outs) == 1 {
		outs[0].Retain()
		return outs[0], nil
	}
	return arrowx.ConcatBatches(mem, s, outs)
}

func (d *Derive) apply(in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	cur := in
	cur.Retain()
	bad := map[int]string{}
	badRule := map[int]string{}
	badCol := map[int]string{} // the one column a derivation reads (parse_json's text)
	for i, der := range d.ders {
		spec := d.specs[i]
		var col arrow.Array
		var err error
		if der.ComputeRows != nil {
			rowBad := map[int]string{}
			col, err = der.ComputeRows(cur, rowBad)
			for r, why := range rowBad {
				if _, seen := bad[r]; !seen && matches(cur, spec.When, r) {
					bad[r] = spec.Name + ": " + why
					badRule[r] = spec.Fn
					if len(spec.Args) == 1 {
						badCol[r] = spec.Args[0]
					}
				}
			}
		} else {
			if der.Observe != nil && !d.twoPass {
				der.Observe(cur) // the whole table, held in memory
			}
			col, err = der.Compute(cur)
		}
		if err != nil {
			cur.Release()
			return nil, fmt.Errorf("%s: %w", spec.Name, pipeline.WithFile(err, rej.File))
		}
		if spec.When != nil {
			var keep arrow.Array // replace: the rows when leaves out keep their value
			if at := d.replace[i]; at >= 0 {
				keep = cur.Column(at)
			}
			masked, err := maskRows(d.mem, cur, col, keep, spec.When)
			col.Release()
			if err != nil {
				cur.Release()
				return nil, fmt.Errorf("%s: %w", spec.Name, err)
			}
			col = masked
		}
		cols := append([]arrow.Array(nil), cur.Columns()...)
		if at := d.replace[i]; at >= 0 {
			cols[at] = col
		} else {
			cols = append(cols, col)
		}
		next := array.NewRecordBatch(d.schemas[i+1], cols, cur.NumRows())
		col.Release()
		cur.Release()
		cur = next
	}
	if len(bad) == 0 {
		return cur, nil
	}
	defer cur.Release()
	keep := make([]int64, 0, cur.NumRows())
	for r := 0; r < int(cur.NumRows()); r++ {
		if why, ok := bad[r]; ok {
			rej.AddRow(in, r, badRule[r], badCol[r], why)
			continue
		}
		keep = append(keep, int64(r))
	}
	return takeRows(context.Background(), d.mem, cur, keep)
}

// matches reports whether row i passes a when condition (nil passes).
func matches(b arrow.RecordBatch, w *config.When, i int) bool {
	if w == nil {
		return true
	}
	c := colIndex(b.Schema(), w.Column)
	if c < 0 || b.Column(c).IsNull(i) {
		return false
	}
	v := valueString(b.Column(c), i)
	for _, x := range w.In {
		if v == x {
			return true
		}
	}
	return false
}

// maskRows returns col with the rows not matching w set to null, or,
// with keep (of col's type) not nil, to keep's values: a replaced
// column's rows that when leaves out keep what they held, as SQL's CASE
// WHEN w THEN col ELSE keep END.
func maskRows(mem memory.Allocator, b arrow.RecordBatch, col, keep arrow.Array, w *config.When) (arrow.Array, error) {
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	n := int64(b.NumRows())
	for i := int64(0); i < n; i++ {
		switch {
		case matches(b, w, int(i)):
			ib.Append(i)
		case keep != nil:
			ib.Append(n + i) // row i of keep, after col in the concatenation
		default:
			ib.AppendNull()
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	from := col
	if keep != nil {
		both, err := array.Concatenate([]arrow.Array{col, keep}, mem)
		if err != nil {
			return nil, err
		}
		defer both.Release()
		from = both
	}
	return compute.TakeArray(exec.WithAllocator(context.Background(), mem), from, idx)
}

func argColumns(in *arrow.Schema, d config.Derivation, n int) ([]int, error) {
	if n >= 0 && len(d.Args) != n {
		return nil, fmt.Errorf("takes %d args, got %d", n, len(d.Args))
	}
	if len(d.Args) == 0 {
		return nil, fmt.Errorf("needs at least one arg")
	}
	return needColumns(in, d.Args...)
}

func wantType(in *arrow.Schema, c int, ok func(arrow.DataType) bool, want string) error {
	if t := in.Field(c).Type; !ok(t) {
		return fmt.Errorf("column %s is %s, want %s", in.Field(c).Name, config.FormatType(t), want)
	}
	return nil
}

func isString(t arrow.DataType) bool { return t.ID() == arrow.STRING }

// isTextual reports whether t's values compare as text (valueString):
// strings, integers, floats and bools, or a list of them.
func isTextual(t arrow.DataType) bool {
	if l, ok := t.(*arrow.ListType); ok {
		t = l.Elem()
	}
	switch t.ID() {
	case arrow.STRING, arrow.INT64, arrow.INT32, arrow.FLOAT64, arrow.BOOL:
		return true
	}
	return false
}
func isStringList(t arrow.DataType) bool {
	lt, ok := t.(*arrow.ListType)
	return ok && lt.Elem().ID() == arrow.STRING
}

func init() {
	for _, c := range []struct {
		name string
		fn   func(dst []byte, s string) []byte
	}{{"lower", appendCase(strings.ToLower, 'A', 'Z')}, {"upper", appendCase(strings.ToUpper, 'a', 'z')}} {
		Register(c.name, "[column]", "Case-normalises a string or list<string> column ("+c.name+" case).", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
			idx, err := argColumns(in, d, 1)
			if err != nil {
				return nil, err
			}
			col := idx[0]
			t := in.Field(col).Type
			if err := wantType(in, col, func(t arrow.DataType) bool { return isString(t) || isStringList(t) }, "string or list<string>"); err != nil {
				return nil, err
			}
			return &Deriver{Type: t, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
				return mapStrings(mem, b.Column(col), c.fn), nil
			}}, nil
		})
	}

	Register("count_equal", "[list column], value", "Counts the elements of a list<string> equal to value (e.g. votes for \"a\"); null for a null list.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isStringList, "list<string>"); err != nil {
			return nil, err
		}
		if !hasKey(d, "value") {
			// Left out, it counted empty strings: 0 on every row.
			return nil, fmt.Errorf("value must be the value to count (value: \"\" counts empty strings)")
		}
		col := idx[0]
		return &Deriver{Type: arrow.PrimitiveTypes.Int64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			return int64Of(mem, b, func(i int) (int64, bool) {
				if b.Column(col).IsNull(i) {
					return 0, false
				}
				var n int64
				eachString(b.Column(col), i, func(s string) bool {
					if s == d.Value {
						n++
					}
					return true
				})
				return n, true
			}), nil
		}}, nil
	})

	Register("majority", "[list column], min", "True when at least min elements of a list<string> are the same value (has_majority: min 3 of 5 votes); null for a null list.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isStringList, "list<string>"); err != nil {
			return nil, err
		}
		if d.Min < 1 {
			return nil, fmt.Errorf("min must be ≥ 1")
		}
		col := idx[0]
		return &Deriver{Type: arrow.FixedWidthTypes.Boolean, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			bb := array.NewBooleanBuilder(mem)
			defer bb.Release()
			counts := map[string]int{}
			for i := 0; i < int(b.NumRows()); i++ {
				if b.Column(col).IsNull(i) {
					bb.AppendNull()
					continue
				}
				clear(counts)
				best := 0
				eachString(b.Column(col), i, func(s string) bool {
					counts[s]++
					best = max(best, counts[s])
					return true
				})
				bb.Append(best >= d.Min)
			}
			return bb.NewArray(), nil
		}}, nil
	})

	Register("pair_key", "[column a, column b]", "An order-free id for a pair: the two strings sorted and joined by \"|\", so (x, y) and (y, x) get the same key; a | or \\ inside an id is escaped with \\, so (a|b, c) and (a, b|c) differ.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 2)
		if err != nil {
			return nil, err
		}
		for _, c := range idx {
			if err := wantType(in, c, isString, "string"); err != nil {
				return nil, err
			}
		}
		return &Deriver{Type: arrow.BinaryTypes.String, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			x, y := b.Column(idx[0]).(*array.String), b.Column(idx[1]).(*array.String)
			sb := array.NewStringBuilder(mem)
			defer sb.Release()
			// Room for every key at once (the values and a "|" each), so
			// the builder does not grow by doubling, each time copying
			// and zeroing.
			sb.Reserve(x.Len())
			sb.ReserveData(len(x.ValueBytes()) + len(y.ValueBytes()) + x.Len())
			var key []byte
			for i := 0; i < x.Len(); i++ {
				if x.IsNull(i) || y.IsNull(i) {
					sb.AppendNull()
					continue
				}
				p, q := x.Value(i), y.Value(i)
				if q < p {
					p, q = q, p
				}
				key = appendPairPart(append(appendPairPart(key[:0], p), '|'), q)
				sb.BinaryBuilder.Append(key)
			}
			return sb.NewArray(), nil
		}}, nil
	})

	Register("n_words", "[string column]", "Number of words: runs of non-space characters (Unicode white space separates).", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isString, "string"); err != nil {
			return nil, err
		}
		col := idx[0]
		return &Deriver{Type: arrow.PrimitiveTypes.Int64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			s := b.Column(col).(*array.String)
			return int64Of(mem, b, func(i int) (int64, bool) {
				if s.IsNull(i) {
					return 0, false
				}
				return countWords(s.Value(i)), true
			}), nil
		}}, nil
	})

	Register("list_length", "[list column]", "Number of elements of a list (n_statements); null for a null list.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isList, "a list"); err != nil {
			return nil, err
		}
		col := idx[0]
		return &Deriver{Type: arrow.PrimitiveTypes.Int64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			return int64Of(mem, b, func(i int) (int64, bool) {
				l := listLen(b.Column(col), i)
				return int64(l), l >= 0
			}), nil
		}}, nil
	})

	Register("total_length", "[list<struct> column], value: field", "Sum over a list of structs of the length of each element's list field (n_citations of a response: the citations of all its statements).", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		col := idx[0]
		lt, ok := in.Field(col).Type.(*arrow.ListType)
		var st *arrow.StructType
		if ok {
			st, ok = lt.Elem().(*arrow.StructType)
		}
		if !ok {
			return nil, fmt.Errorf("column %s is %s, want list<struct<...>>", d.Args[0], config.FormatType(in.Field(col).Type))
		}
		fi, ok := st.FieldIdx(d.Value)
		if !ok || !isList(st.Field(fi).Type) {
			return nil, fmt.Errorf("value must name a list field of %s, got %q", st, d.Value)
		}
		return &Deriver{Type: arrow.PrimitiveTypes.Int64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			l := b.Column(col).(*array.List)
			inner := l.ListValues().(*array.Struct).Field(fi)
			return int64Of(mem, b, func(i int) (int64, bool) {
				if l.IsNull(i) {
					return 0, false
				}
				s, e := l.ValueOffsets(i)
				var n int64
				for j := s; j < e; j++ {
					if k := listLen(inner, int(j)); k > 0 {
						n += int64(k)
					}
				}
				return n, true
			}), nil
		}}, nil
	})

	Register("coalesce", "[string columns...]", "The first non-null of the columns (e.g. raw_text, then text, for releases that renamed the field).", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, -1)
		if err != nil {
			return nil, err
		}
		for _, c := range idx {
			if err := wantType(in, c, isString, "string"); err != nil {
				return nil, err
			}
		}
		return &Deriver{Type: arrow.BinaryTypes.String, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			sb := array.NewStringBuilder(mem)
			defer sb.Release()
			for i := 0; i < int(b.NumRows()); i++ {
				done := false
				for _, c := range idx {
					if s := b.Column(c).(*array.String); s.IsValid(i) {
						sb.Append(s.Value(i))
						done = true
						break
					}
				}
				if !done {
					sb.AppendNull()
				}
			}
			return sb.NewArray(), nil
		}}, nil
	})

	Register("occurrence", "[key columns...]", "0 for the first row with a key, 1 for the second, ... in input order; keeps duplicates apart without dropping them.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, -1)
		if err != nil {
			return nil, err
		}
		// Each key's count: the newest UniqueMemKeys keys in memory, the
		// others in run files, as for unique.
		seen := newKeySet()
		var scratch []byte
		return &Deriver{Type: arrow.PrimitiveTypes.Int64, Ordered: true, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			var err error
			a := int64Of(mem, b, func(i int) (int64, bool) {
				if err != nil {
					return 0, false
				}
				k := hashRowKey(&scratch, b, idx, i)
				var n int64
				if n, _, err = seen.get(k); err == nil {
					err = seen.set(k, n+1)
				}
				return n, true
			})
			if err != nil {
				a.Release()
				return nil, fmt.Errorf("occurrence: %w", err)
			}
			return a, nil
		}, Close: seen.close}, nil
	})

	Register("line_index", "(no args), value: first line (default 1)", "The row's place in its input file, from 0 at the line value names (1 by default; 2 for the first row under a TSV header): a rejected row keeps its place, so the rows after it keep theirs, where occurrence counts only the rows that reach it. A Parquet row's line is its row number from 1.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		if len(d.Args) != 0 {
			return nil, fmt.Errorf("takes no args (it reads each row's line in its file), got %d", len(d.Args))
		}
		lc := colIndex(in, pipeline.LineColumn)
		if lc < 0 {
			return nil, fmt.Errorf("the rows carry no line numbers here (after an aggregate?)")
		}
		first := int64(1)
		if d.Value != "" {
			n, err := strconv.ParseInt(d.Value, 10, 64)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("value: %q is not a line number (1 or more)", d.Value)
			}
			first = n
		}
		return &Deriver{Type: arrow.PrimitiveTypes.Int64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			lines := b.Column(lc).(*array.Int64)
			return int64Of(mem, b, func(i int) (int64, bool) { return lines.Value(i) - first, true }), nil
		}}, nil
	})

	Register("conflicting_duplicate", "[key columns...], value: column", "True when the key occurs more than once in the table and its rows disagree on the value column (null counts as a value). Two-pass: the rows wait in a temporary file past 16 MiB, only a 12-byte hash per key (and one of its first value) stays in memory.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, -1)
		if err != nil {
			return nil, err
		}
		vc := colIndex(in, d.Value)
		if vc < 0 {
			return nil, fmt.Errorf("value: %w %q", ErrNoColumn, d.Value)
		}
		// Per key: the first value seen, and whether another differed. Held
		// by value, so the map holds no pointers for the collector to scan.
		type state struct {
			first    keyHash
			conflict bool
		}
		values := map[keyHash]state{}
		vcol := []int{vc}
		var scratch []byte
		return &Deriver{Type: arrow.FixedWidthTypes.Boolean, Whole: true, Uses: append(append([]int(nil), idx...), vc),
			Observe: func(b arrow.RecordBatch) {
				for i := 0; i < int(b.NumRows()); i++ {
					k := hashRowKey(&scratch, b, idx, i)
					v := hashRowKey(&scratch, b, vcol, i)
					st, ok := values[k]
					if !ok {
						values[k] = state{first: v}
					} else if !st.conflict && st.first != v {
						st.conflict = true
						values[k] = st
					}
				}
			},
			Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
				bb := array.NewBooleanBuilder(mem)
				defer bb.Release()
				for i := 0; i < int(b.NumRows()); i++ {
					st, ok := values[hashRowKey(&scratch, b, idx, i)]
					if !ok {
						return nil, fmt.Errorf("row %d: key not observed (internal error)", i)
					}
					bb.Append(st.conflict)
				}
				return bb.NewArray(), nil
			},
			Close: func() { clear(values) },
		}, nil
	})
}

// rowKey encodes the values of columns idx at row i so that different
// tuples never share a key: each value is length-prefixed and null has a
// tag of its own.
func rowKey(b arrow.RecordBatch, idx []int, i int) string {
	return string(appendRowKey(nil, b, idx, i))
}

// keyHash is a 96-bit hash of a row key. Sets that live as long as a
// table (unique, occurrence, conflicting_duplicate) keep these 12 bytes
// per key instead of the key itself, so their memory does not grow with
// the length of the values; two different keys share a hash with
// probability about n²/2⁹⁷ (below 10⁻¹⁵ for ten million keys), far below
// any hardware error rate. 96 bits rather than 128 make a map slot of a
// key and a 32-bit value 16 bytes instead of 24.
type keyHash [3]uint32

var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// hashRowKey hashes the values of columns idx at row i, using *scratch as
// the encoding buffer.
func hashRowKey(scratch *[]byte, b arrow.RecordBatch, idx []int, i int) keyHash {
	*scratch = appendRowKey((*scratch)[:0], b, idx, i)
	h0, h1 := maphash.Bytes(keySeeds[0], *scratch), maphash.Bytes(keySeeds[1], *scratch)
	return keyHash{uint32(h0), uint32(h0 >> 32), uint32(h1)}
}

// appendRowKey appends rowKey's encoding to buf.
func appendRowKey(buf []byte, b arrow.RecordBatch, idx []int, i int) []byte {
	for _, c := range idx {
		a := b.Column(c)
		if a.IsNull(i) {
			buf = append(buf, 0)
			continue
		}
		v := valueString(a, i)
		if isNegativeZero(a, i) {
			v = "0" // -0.0 is 0.0 as a key, as SQL's GROUP BY and = have it
		}
		buf = append(buf, 1)
		buf = binary.AppendUvarint(buf, uint64(len(v)))
		buf = append(buf, v...)
	}
	return buf
}

// isNegativeZero reports whether row i of a is a floating-point -0.0.
func isNegativeZero(a arrow.Array, i int) bool {
	c, ok := a.(*array.Float64)
	return ok && c.Value(i) == 0 && math.Signbit(c.Value(i))
}

// appendPairPart appends one id of a pair_key to dst, its | and \
// escaped with \ (ids without them, all the datasets' ids, as they are).
func appendPairPart(dst []byte, id string) []byte {
	if !strings.ContainsAny(id, "|\\") {
		return append(dst, id...)
	}
	for i := 0; i < len(id); i++ {
		if id[i] == '|' || id[i] == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, id[i])
	}
	return dst
}

func int64Of(mem memory.Allocator, b arrow.RecordBatch, f func(i int) (int64, bool)) arrow.Array {
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	n := int(b.NumRows())
	ib.Reserve(n)
	for i := 0; i < n; i++ {
		if v, ok := f(i); ok {
			ib.UnsafeAppend(v)
		} else {
			ib.UnsafeAppendBoolToBitmap(false)
		}
	}
	return ib.NewArray()
}

func mapStrings(mem memory.Allocator, a arrow.Array, f func(dst []byte, s string) []byte) arrow.Array {
	switch c := a.(type) {
	case *array.String:
		sb := array.NewStringBuilder(mem)
		defer sb.Release()
		// f keeps most strings' length (lower, trim): room for the input's.
		sb.Reserve(c.Len())
		sb.ReserveData(len(c.ValueBytes()))
		var buf []byte
		for i := 0; i < c.Len(); i++ {
			if c.IsNull(i) {
				sb.AppendNull()
			} else {
				buf = f(buf[:0], c.Value(i))
				sb.BinaryBuilder.Append(buf)
			}
		}
		return sb.NewArray()
	case *array.List:
		inner := mapStrings(mem, c.ListValues(), f)
		defer inner.Release()
		data := array.NewData(c.DataType(), c.Len(), c.Data().Buffers(), []arrow.ArrayData{inner.Data()}, c.NullN(), c.Data().Offset())
		defer data.Release()
		return array.MakeFromData(data)
	}
	panic("stages: mapStrings on " + a.DataType().String())
}

// appendCase returns a case mapping that appends its result to dst: an
// ASCII string byte by byte, flipping the case of the bytes from lo to hi,
// and any other string through full (strings.ToLower or ToUpper, which
// know Unicode's cases). strings.ToLower allocates a new string for every
// value with a capital, such as each of CrowdRAG-25's votes ("A", "B").
func appendCase(full func(string) string, lo, hi byte) func(dst []byte, s string) []byte {
	return func(dst []byte, s string) []byte {
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return append(dst, full(s)...)
			}
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if lo <= c && c <= hi {
				c ^= 'a' - 'A'
			}
			dst = append(dst, c)
		}
		return dst
	}
}

// asciiSpace marks the ASCII bytes unicode.IsSpace calls space.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// countWords counts runs of characters that are not unicode.IsSpace. ASCII
// bytes are looked up in a table; only the rest are decoded as runes.
func countWords(s string) int64 {
	var n int64
	in := false
	for i := 0; i < len(s); {
		var space bool
		if c := s[i]; c < utf8.RuneSelf {
			space = asciiSpace[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if space {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}
