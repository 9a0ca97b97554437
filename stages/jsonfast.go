package stages

import (
	"bytes"
	"math"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The fast JSON path decodes a plain line straight into the builders, in
// one scan of the line and one copy of each string (two of a string with
// escapes, which are written out as the scan meets them), where the general
// path writes the line's \u escapes out into a copy of it, has fastjson
// copy it again and build a tree of it, and then walks the tree. It takes
// only lines it can decode to exactly what the general path gives; for
// any other line it appends nothing and says so, and the general path
// decodes the line (and words its reject, if it has one). It declines:
//
//   - a line that is not valid UTF-8 (the general path checks each string);
//   - anything that is not strict JSON, or nested deeper than fastMaxDepth;
//   - an escape other than \" \\ \/ \b \f \n \r \t and \uXXXX, a \uXXXX of
//     a surrogate that is not the first of a valid pair (fastjson keeps or
//     replaces those in ways of its own), and any escape in a key;
//   - a number that does not start with '-' or a digit (fastjson's NaN,
//     inf and the like), or that the column's type does not take;
//   - a value of the wrong JSON type, a declared key given twice, and a key
//     not declared when unknown keys are rejected.
//
// It decodes the columns the general path can (strings, integers, floats,
// booleans, and lists and structs of them); an input with another column
// type (timestamps, maps) takes the general path for every line.
// FuzzFastJSON holds the two paths to the same batches.

// fastMaxDepth bounds the nesting the fast path follows; deeper lines take
// the general path (fastjson allows 300).
const fastMaxDepth = 64

// fastKind is the shape of a column or a nested field for the fast path.
type fastKind uint8

const (
	fastString fastKind = iota
	fastInt
	fastFloat
	fastBool
	fastList
	fastStruct
)

// fastType is what the fast path knows of a column's Arrow type.
type fastType struct {
	kind   fastKind
	lo, hi int64 // fastInt: the range of the type
	i32    bool  // fastInt: an Int32Builder
	elem   *fastType
	fields []*fastType // fastStruct, in field order
	names  []string
}

// compileFast returns the fast path's view of dt, or false when the fast
// path does not decode that type.
func compileFast(dt arrow.DataType) (*fastType, bool) {
	switch t := dt.(type) {
	case *arrow.StringType:
		return &fastType{kind: fastString}, true
	case *arrow.Int64Type:
		return &fastType{kind: fastInt, lo: -1 << 63, hi: 1<<63 - 1}, true
	case *arrow.Int32Type:
		return &fastType{kind: fastInt, lo: -1 << 31, hi: 1<<31 - 1, i32: true}, true
	case *arrow.Float64Type:
		return &fastType{kind: fastFloat}, true
	case *arrow.BooleanType:
		return &fastType{kind: fastBool}, true
	case *arrow.ListType:
		e, ok := compileFast(t.Elem())
		return &fastType{kind: fastList, elem: e}, ok
	case *arrow.StructType:
		ft := &fastType{kind: fastStruct}
		for _, f := range t.Fields() {
			e, ok := compileFast(f.Type)
			if !ok {
				return nil, false
			}
			ft.fields = append(ft.fields, e)
			ft.names = append(ft.names, f.Name)
		}
		return ft, true
	}
	return nil, false
}

// tokKind is the kind of a JSON value in a tokenized line.
type tokKind uint8

const (
	tokNull tokKind = iota
	tokTrue
	tokFalse
	tokNumber
	tokString    // a string without escapes
	tokEscString // a string with escapes, written out in ubuf
	tokArray
	tokObject
)

// tok is one value of a tokenized line. Arrays are followed by their
// elements' tokens, objects by a key token (a tokString) and the value's
// tokens for each member.
type tok struct {
	kind tokKind
	// lo and hi are the bytes of a number or of a string between its
	// quotes in the line, or those of a tokEscString in ubuf.
	lo, hi int32
	// n is the number of elements or members.
	n int32
	// end is the index of the first token after this value's.
	end int32
	// num is a number's value once check has parsed it for a float
	// column.
	num float64
}

// fastLine is one decoder's state for the fast path, reused line to line.
type fastLine struct {
	toks   []tok
	vals   []int32 // the token chosen for each column, or -1
	prio   []int
	line   []byte
	nextBS int    // index of the next backslash at or after the scan, or len(line)
	ubuf   []byte // the strings with escapes, written out
}

// decodeFast appends line (valid UTF-8, without its newline) to the
// builders as one row and reports true, or appends nothing and reports
// false when the line is for the general path.
func (s *JSONLines) decodeFast(st *fastLine, rb *array.RecordBuilder, line []byte) bool {
	if !st.tokenize(line) || st.toks[0].kind != tokObject {
		return false
	}
	ncol := len(s.fast)
	if cap(st.vals) < ncol {
		st.vals, st.prio = make([]int32, ncol), make([]int, ncol)
	}
	vals, prio := st.vals[:ncol], st.prio[:ncol]
	for i := range vals {
		vals[i] = -1
	}
	// The members in order, as the general path visits them: the first
	// member of a column's highest-priority key wins.
	root := st.toks[0]
	k := int32(1)
	for range root.n {
		kt := st.toks[k]
		ref, ok := s.keys[string(line[kt.lo:kt.hi])]
		switch {
		case !ok:
			if s.RejectUnknownKeys {
				return false
			}
		case vals[ref.col] >= 0:
			// The same key twice, or a column's name beside its alias:
			// the general path rejects the row or reads it.
			return false
		case vals[ref.col] < 0 || ref.prio < prio[ref.col]:
			vals[ref.col], prio[ref.col] = k+1, ref.prio
		}
		k = st.toks[k+1].end
	}
	for i, ft := range s.fast {
		if vals[i] >= 0 && !st.check(vals[i], ft) {
			return false
		}
	}
	for i, ft := range s.fast {
		st.append(rb.Field(i), vals[i], ft)
	}
	return true
}

// tokenize splits line into tokens; false means the line is for the
// general path.
func (st *fastLine) tokenize(line []byte) bool {
	if len(line) > math.MaxInt32 {
		return false // tokens hold 32-bit offsets
	}
	st.toks = st.toks[:0]
	st.ubuf = st.ubuf[:0]
	st.line = line
	st.nextBS = -1
	i, ok := st.value(skipSpace(line, 0), 0)
	return ok && skipSpace(line, i) == len(line)
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// value tokenizes the value at line[i:] and returns the index after it.
func (st *fastLine) value(i, depth int) (int, bool) {
	s := st.line
	if i >= len(s) || depth > fastMaxDepth {
		return 0, false
	}
	t := len(st.toks)
	st.toks = append(st.toks, tok{})
	var ok bool
	switch c := s[i]; {
	case c == '"':
		var hi, u0 int
		if hi, u0, ok = st.str(i + 1); !ok {
			return 0, false
		}
		if u0 >= 0 {
			st.toks[t] = tok{kind: tokEscString, lo: int32(u0), hi: int32(len(st.ubuf))}
		} else {
			st.toks[t] = tok{kind: tokString, lo: int32(i + 1), hi: int32(hi)}
		}
		i = hi + 1
	case c == '[':
		var n int32
		if n, i, ok = st.items(i+1, ']', func(j int) (int, bool) { return st.value(j, depth+1) }); !ok {
			return 0, false
		}
		st.toks[t] = tok{kind: tokArray, n: n}
	case c == '{':
		var n int32
		if n, i, ok = st.items(i+1, '}', func(j int) (int, bool) { return st.pair(j, depth+1) }); !ok {
			return 0, false
		}
		st.toks[t] = tok{kind: tokObject, n: n}
	case c == 't' && bytes.HasPrefix(s[i:], litTrue):
		st.toks[t].kind = tokTrue
		i += len(litTrue)
	case c == 'f' && bytes.HasPrefix(s[i:], litFalse):
		st.toks[t].kind = tokFalse
		i += len(litFalse)
	case c == 'n' && bytes.HasPrefix(s[i:], litNull):
		st.toks[t].kind = tokNull
		i += len(litNull)
	case c == '-' || c >= '0' && c <= '9':
		// The run of number bytes fastjson takes as the number.
		j := i + 1
		for j < len(s) && isNumberByte(s[j]) {
			j++
		}
		if j == i+1 && c == '-' {
			return 0, false // fastjson wants more than a sign
		}
		st.toks[t] = tok{kind: tokNumber, lo: int32(i), hi: int32(j)}
		i = j
	default:
		return 0, false
	}
	st.toks[t].end = int32(len(st.toks))
	return i, true
}

// items tokenizes the elements of an array or the members of an object,
// from just after its opening bracket at line[i-1] to its closing one:
// item reads one and returns the index after it. It returns how many there
// were and the index after the closing bracket.
func (st *fastLine) items(i int, closing byte, item func(int) (int, bool)) (int32, int, bool) {
	s := st.line
	var n int32
	if i = skipSpace(s, i); i < len(s) && s[i] == closing {
		return 0, i + 1, true
	}
	for {
		var ok bool
		if i, ok = item(i); !ok {
			return 0, 0, false
		}
		n++
		if i = skipSpace(s, i); i >= len(s) {
			return 0, 0, false
		}
		if s[i] == closing {
			return n, i + 1, true
		}
		if s[i] != ',' {
			return 0, 0, false
		}
		i = skipSpace(s, i+1)
	}
}

// pair tokenizes an object member at line[i]: its key (a tokString; an
// escaped key is for the general path) and its value.
func (st *fastLine) pair(i, depth int) (int, bool) {
	s := st.line
	if i >= len(s) || s[i] != '"' {
		return 0, false
	}
	hi, u0, ok := st.str(i + 1)
	if !ok || u0 >= 0 {
		return 0, false
	}
	st.toks = append(st.toks, tok{kind: tokString, lo: int32(i + 1), hi: int32(hi), end: int32(len(st.toks) + 1)})
	if i = skipSpace(s, hi+1); i >= len(s) || s[i] != ':' {
		return 0, false
	}
	return st.value(skipSpace(s, i+1), depth)
}

var (
	litTrue  = []byte("true")
	litFalse = []byte("false")
	litNull  = []byte("null")
)

// isNumberByte reports whether c continues a number for fastjson.
func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
}

// str finds the end of the string whose bytes start at line[i] and returns
// the index of its closing quote, or false if it does not end or holds an
// escape the fast path leaves to fastjson. A string with escapes is written
// out to ubuf as it is scanned, and u0 is where it starts there (else -1).
func (st *fastLine) str(i int) (q, u0 int, ok bool) {
	s := st.line
	u0 = -1
	q = bytes.IndexByte(s[i:], '"')
	if q < 0 {
		return 0, 0, false
	}
	q += i
	for {
		// The next backslash is looked for once per backslash, so a line
		// of many strings and few escapes is scanned once for them.
		if st.nextBS < i {
			st.nextBS = len(s)
			if b := bytes.IndexByte(s[i:], '\\'); b >= 0 {
				st.nextBS = i + b
			}
		}
		if st.nextBS > q {
			if u0 >= 0 {
				st.ubuf = append(st.ubuf, s[i:q]...)
			}
			return q, u0, true
		}
		b := st.nextBS
		n := escapeLen(s[b:])
		if n == 0 {
			return 0, 0, false
		}
		if u0 < 0 {
			u0 = len(st.ubuf)
		}
		st.ubuf = appendEscape(append(st.ubuf, s[i:b]...), s[b:b+n])
		i = b + n
		if i > q {
			// The escape was of the quote: the string goes on.
			r := bytes.IndexByte(s[i:], '"')
			if r < 0 {
				return 0, 0, false
			}
			q = i + r
		}
	}
}

// escapeLen returns the length of the escape at the start of s (a
// backslash) when the fast path decodes it the way fastjson does, else 0.
func escapeLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0
		}
		if !utf16.IsSurrogate(r) {
			return 6
		}
		if len(s) < 12 || s[6] != '\\' || s[7] != 'u' {
			return 0
		}
		r2, ok := hex4(s[8:])
		if !ok || utf16.DecodeRune(r, r2) == utf8.RuneError {
			return 0
		}
		return 12
	}
	return 0
}

// appendEscape appends what escape e (one escapeLen takes) stands for.
func appendEscape(dst, e []byte) []byte {
	switch e[1] {
	case 'u':
		r, _ := hex4(e[2:])
		if utf16.IsSurrogate(r) {
			r2, _ := hex4(e[8:])
			r = utf16.DecodeRune(r, r2)
		}
		return utf8.AppendRune(dst, r)
	case 'b':
		return append(dst, '\b')
	case 'f':
		return append(dst, '\f')
	case 'n':
		return append(dst, '\n')
	case 'r':
		return append(dst, '\r')
	case 't':
		return append(dst, '\t')
	}
	return append(dst, e[1]) // the quote, backslash or slash itself
}

// member returns the token of the value of the member of object token t
// named name, -1 when there is none, or, when all is set, dupMember when
// there are several (which the general path rejects). Without all it
// returns the first, for a row whose check has ruled duplicates out.
func (st *fastLine) member(t int32, name string, all bool) int32 {
	o := st.toks[t]
	k := t + 1
	found := int32(-1)
	for range o.n {
		kt := st.toks[k]
		if string(st.line[kt.lo:kt.hi]) == name {
			if !all {
				return k + 1
			}
			if found >= 0 {
				return dupMember
			}
			found = k + 1
		}
		k = st.toks[k+1].end
	}
	return found
}

// dupMember is member's answer for a name given twice in one object.
const dupMember = -2

// check reports whether token t (or -1, absent) fits ft as the general
// path would take it.
func (st *fastLine) check(t int32, ft *fastType) bool {
	if t < 0 {
		return true
	}
	v := st.toks[t]
	if v.kind == tokNull {
		return true
	}
	switch ft.kind {
	case fastString:
		return v.kind == tokString || v.kind == tokEscString
	case fastInt:
		if v.kind != tokNumber {
			return false
		}
		n, err := intOfRaw(st.text(v))
		return err == nil && n >= ft.lo && n <= ft.hi
	case fastFloat:
		if v.kind != tokNumber {
			return false
		}
		f, err := parseFloat(st.text(v))
		st.toks[t].num = f
		return err == nil && !math.IsInf(f, 0) // 1e400: the general path rejects it
	case fastBool:
		return v.kind == tokTrue || v.kind == tokFalse
	case fastList:
		if v.kind != tokArray {
			return false
		}
		e := t + 1
		for range v.n {
			if !st.check(e, ft.elem) {
				return false
			}
			e = st.toks[e].end
		}
		return true
	case fastStruct:
		if v.kind != tokObject {
			return false
		}
		for i, name := range ft.names {
			m := st.member(t, name, true)
			if m == dupMember || !st.check(m, ft.fields[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// text returns the bytes of a number token (never empty) as a string that
// shares the line's memory: the parsers it is handed to do not keep it.
func (st *fastLine) text(v tok) string { return unsafe.String(&st.line[v.lo], v.hi-v.lo) }

// append appends token t (checked; -1 is absent, null) to b.
func (st *fastLine) append(b array.Builder, t int32, ft *fastType) {
	if t < 0 || st.toks[t].kind == tokNull {
		b.AppendNull()
		return
	}
	v := st.toks[t]
	switch ft.kind {
	case fastString:
		sb := b.(*array.StringBuilder).BinaryBuilder
		if v.kind == tokString {
			sb.Append(st.line[v.lo:v.hi])
		} else {
			sb.Append(st.ubuf[v.lo:v.hi])
		}
	case fastInt:
		n, _ := intOfRaw(st.text(v))
		if ft.i32 {
			b.(*array.Int32Builder).Append(int32(n))
		} else {
			b.(*array.Int64Builder).Append(n)
		}
	case fastFloat:
		b.(*array.Float64Builder).Append(v.num)
	case fastBool:
		b.(*array.BooleanBuilder).Append(v.kind == tokTrue)
	case fastList:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder()
		e := t + 1
		for range v.n {
			st.append(vb, e, ft.elem)
			e = st.toks[e].end
		}
	case fastStruct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		for i, name := range ft.names {
			st.append(sb.FieldBuilder(i), st.member(t, name, false), ft.fields[i])
		}
	}
}
