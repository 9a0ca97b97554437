package stages

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// rowCheck returns "" when row i passes, or the reason it fails, and the
// column concerned.
type rowCheck func(b arrow.RecordBatch, i int) (column, reason string)

type rule struct {
	name  string
	check rowCheck
	flag  bool // count the failure, keep the row
	when  *config.When
	// item is the rule's place, validate[i] (Within puts its step
	// before it), by which a flagged failure is counted.
	item string
}

// Validate applies declarative rules to each row. A row that breaks a
// rule is rejected with the rule, the reason and its source line, and the
// rest of the batch goes on. A Validate with a unique rule is Ordered:
// the first occurrence of a key passes and later ones are rejected, the
// same way whatever the worker count.
type Validate struct {
	mem    memory.Allocator
	rules  []rule
	unique [][]int
	seen   []*keySet
	names  [][]string
	keyBuf []byte
	items  int // rules added
}

// flagged is a failed flag rule on the row being checked.
type flagged struct {
	r           *rule
	col, reason string
}

// Within names the step the rules belong to (steps[2]), so that a
// flagged failure names its rule as steps[2].validate[1].
func (v *Validate) Within(step string) {
	for i := range v.rules {
		v.rules[i].item = step + "." + v.rules[i].item
	}
}

// Name returns the step kind.
func (v *Validate) Name() string { return "validate" }

// Ordered reports whether the step keeps state across batches.
func (v *Validate) Ordered() bool { return len(v.unique) > 0 }

// Close removes the key files of unique rules that outgrew memory.
func (v *Validate) Close() {
	for _, s := range v.seen {
		s.close()
	}
}

// NewValidate compiles rules against the input schema. Errors name the
// rule by its index.
func NewValidate(mem memory.Allocator, in *arrow.Schema, rules []config.Rule) (*Validate, error) {
	v := &Validate{mem: mem}
	for i, r := range rules {
		if err := v.add(in, r); err != nil {
			return nil, &ItemError{Path: fmt.Sprintf("validate[%d]", i), Err: err}
		}
	}
	return v, nil
}

func (v *Validate) add(in *arrow.Schema, r config.Rule) error {
	if r.When != nil {
		if colIndex(in, r.When.Column) < 0 {
			return fmt.Errorf("when: %w %q", ErrNoColumn, r.When.Column)
		}
		if r.Unique != nil {
			return fmt.Errorf("when does not apply to unique")
		}
		if len(r.When.In) == 0 {
			// It would check no row.
			return fmt.Errorf("when: list the values in in")
		}
	}
	n := len(v.rules)
	item := fmt.Sprintf("validate[%d]", v.items)
	v.items++
	defer func() {
		for i := n; i < len(v.rules); i++ {
			v.rules[i].flag = r.OnFail == "flag"
			v.rules[i].when = r.When
			v.rules[i].item = item
		}
	}()
	switch {
	case r.Equal != nil:
		idx, err := needColumns(in, r.Equal.Columns...)
		if err != nil {
			return err
		}
		a, b := in.Field(idx[0]).Type, in.Field(idx[1]).Type
		numeric := isNumeric(a) && isNumeric(b) && !isList(a) && !isList(b)
		if !numeric && !arrow.TypeEqual(a, b) {
			return fmt.Errorf("equal: columns %s (%s) and %s (%s) cannot be compared", r.Equal.Columns[0], config.FormatType(a), r.Equal.Columns[1], config.FormatType(b))
		}
		tol := r.Equal.Tolerance
		aInt, bInt := isIntegerType(a), isIntegerType(b)
		integers := aInt && bInt
		v.rules = append(v.rules, rule{name: "equal", check: func(b arrow.RecordBatch, i int) (string, string) {
			x, y := b.Column(idx[0]), b.Column(idx[1])
			if x.IsNull(i) || y.IsNull(i) {
				if x.IsNull(i) != y.IsNull(i) {
					return r.Equal.Columns[0], fmt.Sprintf("%s is %s, %s is %s", r.Equal.Columns[0], x.ValueStr(i), r.Equal.Columns[1], y.ValueStr(i))
				}
				return "", ""
			}
			if numeric && integers {
				// Exactly, past 2^53 too, where float64s of two integers
				// can be equal.
				p, q := intValue(x, i), intValue(y, i)
				d := uint64(p) - uint64(q) // |p-q| fits in a uint64
				if p < q {
					d = uint64(q) - uint64(p)
				}
				if p != q && !(float64(d) <= tol) {
					return r.Equal.Columns[0], fmt.Sprintf("%s is %d, %s is %d", r.Equal.Columns[0], p, r.Equal.Columns[1], q)
				}
				return "", ""
			}
			if numeric && (aInt || bInt) {
				// An integer and a float: exactly where the float is an
				// integer an int64 holds (an int64 past 2^53 is no float64,
				// and would equal its neighbour), else as floats.
				ix, fy, swapped := x, y, false
				if !aInt {
					ix, fy, swapped = y, x, true
				}
				p := intValue(ix, i)
				var q float64
				eachNumber(fy, i, func(f float64) bool { q = f; return true })
				if q == math.Trunc(q) && q >= -(1<<63) && q < 1<<63 {
					qi := int64(q)
					d := uint64(p) - uint64(qi)
					if p < qi {
						d = uint64(qi) - uint64(p)
					}
					if p != qi && !(float64(d) <= tol) {
						if swapped {
							return r.Equal.Columns[0], fmt.Sprintf("%s is %s, %s is %d", r.Equal.Columns[0], fmtNum(q), r.Equal.Columns[1], p)
						}
						return r.Equal.Columns[0], fmt.Sprintf("%s is %d, %s is %s", r.Equal.Columns[0], p, r.Equal.Columns[1], fmtNum(q))
					}
					return "", ""
				}
			}
			if numeric {
				var p, q float64
				eachNumber(x, i, func(f float64) bool { p = f; return true })
				eachNumber(y, i, func(f float64) bool { q = f; return true })
				// Equal infinities (Inf-Inf is NaN) and two NaNs (as
				// equals, unique and aggregate keys take them) are equal.
				if p != q && !(math.Abs(p-q) <= tol) && !(math.IsNaN(p) && math.IsNaN(q)) {
					return r.Equal.Columns[0], fmt.Sprintf("%s is %s, %s is %s", r.Equal.Columns[0], fmtNum(p), r.Equal.Columns[1], fmtNum(q))
				}
				return "", ""
			}
			if xs, ok := x.(*array.String); ok {
				// Two texts (the columns' types are equal): compared in
				// place, where rowKey builds a key of each.
				if ys, ok := y.(*array.String); ok {
					if xs.Value(i) != ys.Value(i) {
						return r.Equal.Columns[0], fmt.Sprintf("%s is %s, %s is %s", r.Equal.Columns[0], x.ValueStr(i), r.Equal.Columns[1], y.ValueStr(i))
					}
					return "", ""
				}
			}
			if rowKey(b, idx[:1], i) != rowKey(b, idx[1:], i) {
				return r.Equal.Columns[0], fmt.Sprintf("%s is %s, %s is %s", r.Equal.Columns[0], x.ValueStr(i), r.Equal.Columns[1], y.ValueStr(i))
			}
			return "", ""
		}})
	case r.Required != nil:
		idx, err := needColumns(in, r.Required...)
		if err != nil {
			return err
		}
		v.rules = append(v.rules, rule{name: "required", check: func(b arrow.RecordBatch, i int) (string, string) {
			for k, c := range idx {
				if b.Column(c).IsNull(i) {
					return r.Required[k], "is null"
				}
			}
			return "", ""
		}})
	case r.Enum != nil:
		idx, err := needColumns(in, r.Enum.Column)
		if err != nil {
			return err
		}
		if !isStringish(in.Field(idx[0]).Type) {
			return fmt.Errorf("enum: column %s is %s, want string or list<string>", r.Enum.Column, config.FormatType(in.Field(idx[0]).Type))
		}
		allowed := map[string]bool{}
		for _, val := range r.Enum.Values {
			if r.Enum.IgnoreCase {
				val = strings.ToLower(val)
			}
			allowed[val] = true
		}
		c, col := idx[0], r.Enum.Column
		v.rules = append(v.rules, rule{name: "enum", check: func(b arrow.RecordBatch, i int) (string, string) {
			bad, found := "", false
			eachString(b.Column(c), i, func(s string) bool {
				k := s
				if r.Enum.IgnoreCase {
					k = strings.ToLower(s)
				}
				if !allowed[k] {
					bad, found = s, true
					return false
				}
				return true
			})
			if found {
				return col, fmt.Sprintf("value %q is not one of %s", bad, strings.Join(r.Enum.Values, ", "))
			}
			return "", ""
		}})
	case r.Range != nil:
		idx, err := needColumns(in, r.Range.Column)
		if err != nil {
			return err
		}
		if !isNumeric(in.Field(idx[0]).Type) {
			return fmt.Errorf("range: column %s is %s, want a number or a list of numbers", r.Range.Column, config.FormatType(in.Field(idx[0]).Type))
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		if r.Range.Min != nil {
			lo = *r.Range.Min
		}
		if r.Range.Max != nil {
			hi = *r.Range.Max
		}
		c, col := idx[0], r.Range.Column
		if isIntegral(in.Field(c).Type) {
			// Compared exactly: as float64, 2^53+1 would pass a max of 2^53.
			v.rules = append(v.rules, rule{name: "range", check: func(b arrow.RecordBatch, i int) (string, string) {
				var bad int64
				found := false
				eachInt(b.Column(c), i, func(n int64) bool {
					if cmpIntFloat(n, lo) < 0 || cmpIntFloat(n, hi) > 0 {
						bad, found = n, true
						return false
					}
					return true
				})
				if found {
					return col, fmt.Sprintf("value %d is outside [%s, %s]", bad, fmtBound(lo), fmtBound(hi))
				}
				return "", ""
			}})
			break
		}
		v.rules = append(v.rules, rule{name: "range", check: func(b arrow.RecordBatch, i int) (string, string) {
			var bad float64
			found := false
			eachNumber(b.Column(c), i, func(f float64) bool {
				if !(f >= lo && f <= hi) {
					bad, found = f, true
					return false
				}
				return true
			})
			if found {
				return col, fmt.Sprintf("value %s is outside [%s, %s]", fmtNum(bad), fmtNum(lo), fmtNum(hi))
			}
			return "", ""
		}})
	case r.EqualLengths != nil:
		idx, err := needColumns(in, r.EqualLengths...)
		if err != nil {
			return err
		}
		for k, c := range idx {
			if _, ok := in.Field(c).Type.(*arrow.ListType); !ok {
				return fmt.Errorf("equal_lengths: column %s is %s, not a list", r.EqualLengths[k], config.FormatType(in.Field(c).Type))
			}
		}
		v.rules = append(v.rules, rule{name: "equal_lengths", check: func(b arrow.RecordBatch, i int) (string, string) {
			first := listLen(b.Column(idx[0]), i) // -1 for a null list
			same := true
			for _, c := range idx[1:] {
				if listLen(b.Column(c), i) != first {
					same = false
					break
				}
			}
			if same {
				return "", ""
			}
			// The reason is built only for a rejected row.
			lens := make([]string, len(idx))
			for k, c := range idx {
				if l := listLen(b.Column(c), i); l < 0 {
					lens[k] = r.EqualLengths[k] + "=null"
				} else {
					lens[k] = fmt.Sprintf("%s=%d", r.EqualLengths[k], l)
				}
			}
			return r.EqualLengths[0], "aligned lists differ in length: " + strings.Join(lens, ", ")
		}})
	case r.ListLength != nil:
		idx, err := needColumns(in, r.ListLength.Column)
		if err != nil {
			return err
		}
		if _, ok := in.Field(idx[0]).Type.(*arrow.ListType); !ok {
			return fmt.Errorf("list_length: column %s is not a list", r.ListLength.Column)
		}
		c, want := idx[0], r.ListLength.Length
		v.rules = append(v.rules, rule{name: "list_length", check: func(b arrow.RecordBatch, i int) (string, string) {
			if l := listLen(b.Column(c), i); l >= 0 && l != want {
				return r.ListLength.Column, fmt.Sprintf("has %d elements, want %d", l, want)
			}
			return "", ""
		}})
	case r.SumsTo != nil:
		idx, err := needColumns(in, r.SumsTo.Columns...)
		if err != nil {
			return err
		}
		for k, c := range idx {
			if !isNumeric(in.Field(c).Type) || isList(in.Field(c).Type) {
				return fmt.Errorf("sums_to: column %s is %s, want a number", r.SumsTo.Columns[k], config.FormatType(in.Field(c).Type))
			}
		}
		want, tol := r.SumsTo.Value, r.SumsTo.Tolerance
		v.rules = append(v.rules, rule{name: "sums_to", check: func(b arrow.RecordBatch, i int) (string, string) {
			sum := 0.0
			for _, c := range idx {
				eachNumber(b.Column(c), i, func(f float64) bool { sum += f; return true })
			}
			if !(math.Abs(sum-want) <= tol) {
				return strings.Join(r.SumsTo.Columns, "+"), fmt.Sprintf("sum is %s, want %s ± %s", fmtNum(sum), fmtNum(want), fmtNum(tol))
			}
			return "", ""
		}})
	case r.Unique != nil:
		idx, err := needColumns(in, r.Unique...)
		if err != nil {
			return err
		}
		v.unique = append(v.unique, idx)
		v.seen = append(v.seen, newKeySet())
		v.names = append(v.names, r.Unique)
	default:
		return fmt.Errorf("empty rule")
	}
	return nil
}

// Process rejects the rows that break a rule and returns the others.
func (v *Validate) Process(ctx context.Context, in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	n := int(in.NumRows())
	keep := make([]int64, 0, n)
	keys := make([]keyHash, len(v.unique))
	has := make([]bool, len(v.unique))
	var lines *array.Int64
	if len(v.unique) > 0 {
		lines = pipeline.Lines(in)
	}
	var flags []flagged // the row's flagged failures, until it is kept
rows:
	for i := 0; i < n; i++ {
		// A flagged failure counts once the row is kept: a rule after it
		// may reject the row, and a rejected row is not a kept one.
		flags = flags[:0]
		for k := range v.rules {
			r := &v.rules[k]
			if r.when != nil && !matches(in, r.when, i) {
				continue
			}
			if col, reason := r.check(in, i); reason != "" {
				if r.flag {
					flags = append(flags, flagged{r, col, reason})
					continue
				}
				rej.AddRow(in, i, r.name, col, reason)
				continue rows
			}
		}
		// Check every key before recording any, so a rejected row claims none.
		for u, idx := range v.unique {
			has[u] = false
			if anyNull(in, idx, i) {
				continue // nulls are distinct
			}
			keys[u], has[u] = hashRowKey(&v.keyBuf, in, idx, i), true
			first, dup, err := v.seen[u].get(keys[u])
			if err != nil {
				return nil, fmt.Errorf("unique %s: %w", strings.Join(v.names[u], ","), err)
			}
			if dup {
				rej.AddRow(in, i, "unique", strings.Join(v.names[u], ","), fmt.Sprintf("duplicate key (%s); first seen at line %d", strings.Join(v.names[u], ", "), first))
				continue rows
			}
		}
		for u := range v.unique {
			if has[u] {
				if err := v.seen[u].set(keys[u], pipeline.LineAt(lines, i)); err != nil {
					return nil, fmt.Errorf("unique %s: %w", strings.Join(v.names[u], ","), err)
				}
			}
		}
		for _, f := range flags {
			rej.Flag(in, i, f.r.item, f.r.name, f.col, f.reason)
		}
		keep = append(keep, int64(i))
	}
	if len(keep) == n {
		in.Retain()
		return in, nil
	}
	return takeRows(ctx, v.mem, in, keep)
}

func anyNull(b arrow.RecordBatch, idx []int, i int) bool {
	for _, c := range idx {
		if b.Column(c).IsNull(i) {
			return true
		}
	}
	return false
}

func isList(t arrow.DataType) bool { _, ok := t.(*arrow.ListType); return ok }

func isStringish(t arrow.DataType) bool {
	if lt, ok := t.(*arrow.ListType); ok {
		t = lt.Elem()
	}
	return t.ID() == arrow.STRING
}

func isNumeric(t arrow.DataType) bool {
	if lt, ok := t.(*arrow.ListType); ok {
		t = lt.Elem()
	}
	switch t.ID() {
	case arrow.INT64, arrow.INT32, arrow.FLOAT64:
		return true
	}
	return false
}

// eachString calls f on the string at row i, or on each element when the
// column is a list; nulls are skipped. f returns false to stop.
func eachString(a arrow.Array, i int, f func(string) bool) {
	if a.IsNull(i) {
		return
	}
	switch c := a.(type) {
	case *array.String:
		f(c.Value(i))
	case *array.List:
		s, e := c.ValueOffsets(i)
		vals := c.ListValues().(*array.String)
		for j := s; j < e; j++ {
			if vals.IsValid(int(j)) && !f(vals.Value(int(j))) {
				return
			}
		}
	}
}

// isIntegerType reports whether t is int32 or int64.
func isIntegerType(t arrow.DataType) bool { return t.ID() == arrow.INT64 || t.ID() == arrow.INT32 }

// intValue is row i of an int32, int64 or timestamp array.
func intValue(a arrow.Array, i int) int64 {
	switch c := a.(type) {
	case *array.Int32:
		return int64(c.Value(i))
	case *array.Timestamp:
		return int64(c.Value(i))
	}
	return a.(*array.Int64).Value(i)
}

// eachNumber is eachString for numbers.
func eachNumber(a arrow.Array, i int, f func(float64) bool) {
	eachValue(a, i, func(a arrow.Array, j int) float64 {
		switch c := a.(type) {
		case *array.Int64:
			return float64(c.Value(j))
		case *array.Int32:
			return float64(c.Value(j))
		case *array.Float64:
			return c.Value(j)
		}
		return math.NaN()
	}, f)
}

// isIntegral reports whether t is an integer type or a list of one.
func isIntegral(t arrow.DataType) bool {
	if l, ok := t.(*arrow.ListType); ok {
		t = l.Elem()
	}
	return isIntegerType(t)
}

// eachInt is eachNumber for an integer column (isIntegral): it calls f
// with the value, or with each value of the list, exactly.
func eachInt(a arrow.Array, i int, f func(int64) bool) {
	eachValue(a, i, intValue, f)
}

// eachValue calls f with row i's value of a, read by num, or with each
// non-null value of its list, until f returns false; a null row has
// none.
func eachValue[T any](a arrow.Array, i int, num func(arrow.Array, int) T, f func(T) bool) {
	if a.IsNull(i) {
		return
	}
	if l, ok := a.(*array.List); ok {
		s, e := l.ValueOffsets(i)
		vals := l.ListValues()
		for j := s; j < e; j++ {
			if vals.IsValid(int(j)) && !f(num(vals, int(j))) {
				return
			}
		}
		return
	}
	f(num(a, i))
}

// cmpIntFloat compares n with f exactly: -1 if n < f, 0 if equal, +1 if
// n > f (f is not NaN; ±Inf bound nothing).
func cmpIntFloat(n int64, f float64) int {
	switch {
	case f >= 1<<63:
		return -1
	case f < -(1 << 63):
		return 1
	}
	t := math.Trunc(f)
	switch ti := int64(t); {
	case n < ti:
		return -1
	case n > ti:
		return 1
	case f > t:
		return -1
	case f < t:
		return 1
	}
	return 0
}

// listLen returns the length of the list at row i, or -1 for null.
func listLen(a arrow.Array, i int) int {
	l := a.(*array.List)
	if l.IsNull(i) {
		return -1
	}
	s, e := l.ValueOffsets(i)
	return int(e - s)
}

// valueString renders a scalar for keys, comparisons as text and
// partition values.
func valueString(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "\x01null"
	}
	switch c := a.(type) {
	case *array.String:
		return c.Value(i)
	case *array.Int64:
		return strconv.FormatInt(c.Value(i), 10)
	case *array.Int32:
		return strconv.FormatInt(int64(c.Value(i)), 10)
	case *array.Float64:
		// 1000000 as an integer column writes it, not 1e+06: equals,
		// any_in and when compare this text. -0.0 is 0, as in keys (and
		// SQL's =): when: {in: ["0"]} takes it.
		if c.Value(i) == 0 {
			return "0"
		}
		return string(appendDecimal(nil, c.Value(i), 64))
	case *array.Boolean:
		return strconv.FormatBool(c.Value(i))
	}
	return a.ValueStr(i)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// fmtBound is fmtNum for a bound an integer is held to: a whole number
// is written out in digits (9007199254740992, not 9.007199254740992e+15,
// which beside an integer reads as another number).
func fmtBound(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmtNum(f)
}
