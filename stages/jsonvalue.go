package stages

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/valyala/fastjson"
	"github.com/valyala/fastjson/fastfloat"
)

// valueFn appends one JSON value (nil means absent → null) to a builder.
// check reports whether the value fits the type without appending;
// validUTF8 says the text the value was parsed from is known to be valid
// UTF-8, so its strings need no check of their own (fastjson's unescaping
// turns valid UTF-8 into valid UTF-8).
type valueFn struct {
	check  func(v *fastjson.Value, validUTF8 bool) error
	append func(b array.Builder, v *fastjson.Value)
}

// errType describes a value of the wrong JSON type.
func errType(want string, v *fastjson.Value) error {
	got := v.Type().String()
	s := v.String()
	if s == got { // true, false, null: the value is its type's name
		return fmt.Errorf("want %s, got %s", want, got)
	}
	return fmt.Errorf("want %s, got %s %s", want, got, clip(s))
}

var errInvalidUTF8 = errors.New("invalid UTF-8 in string")

// dupKeyError is a key given twice in one JSON object that a struct field
// or a map takes: which value the row means is not for agora to guess
// (Python's json keeps the last, the decoders here the first, and DuckDB
// refuses a map whose keys repeat).
type dupKeyError struct{ key string }

func (e *dupKeyError) Error() string {
	return fmt.Sprintf("key %q appears more than once in the object", e.key)
}

// repeatedKey returns a key that o holds more than once, if any of keys
// (all of o's keys when keys is nil) does. Small objects, as most are,
// are compared pair by pair without allocating; larger ones through a set.
func repeatedKey(o *fastjson.Object, keys []string) (string, bool) {
	n := o.Len()
	if n < 2 {
		return "", false
	}
	var small [16][]byte
	seen := small[:0]
	var set map[string]struct{}
	if n > len(small) {
		set = make(map[string]struct{}, n)
	}
	var dup string
	var found bool
	o.Visit(func(k []byte, _ *fastjson.Value) {
		if found || keys != nil && !slices.Contains(keys, string(k)) {
			return
		}
		if set != nil {
			_, found = set[string(k)]
			set[string(k)] = struct{}{}
		} else {
			found = slices.ContainsFunc(seen, func(s []byte) bool { return string(s) == string(k) })
			seen = append(seen, k)
		}
		if found {
			dup = string(k)
		}
	})
	return dup, found
}

func isNull(v *fastjson.Value) bool { return v == nil || v.Type() == fastjson.TypeNull }

// minTimestamp and maxTimestamp bound the timestamps read from JSON, in
// microseconds: 0001-01-01 to 9999-12-31, the years Spark, Python's
// datetime and pyarrow's to_pylist read (a number in microseconds or
// nanoseconds taken as the milliseconds it is read as lands far past them).
var (
	minTimestamp = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	maxTimestamp = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
)

// rfc3339Micros reads an RFC 3339 timestamp with its zone (2024-01-02T03:04:05.5Z,
// …+01:00) as microseconds since 1970 UTC, digits below the microsecond
// cut to the microsecond before; one outside the years 1 to 9999 is an
// error.
func rfc3339Micros(b []byte) (int64, error) {
	tm, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		// Go's own words name its layout string (2006-01-02T15:04:05…),
		// which is no help to a reader of _rejects.
		return 0, fmt.Errorf("timestamp: %q is not an RFC 3339 timestamp with its zone (2024-01-02T03:04:05Z, or epoch milliseconds)", b)
	}
	us := tm.UnixMicro()
	if us < minTimestamp || us > maxTimestamp {
		return 0, fmt.Errorf("timestamp: %s is outside the years 1 to 9999 that Spark and Python read", b)
	}
	return us, nil
}

// compileValue builds the check and append functions for an Arrow type.
func compileValue(dt arrow.DataType) (valueFn, error) {
	switch t := dt.(type) {
	case *arrow.StringType:
		return valueFn{
			check: func(v *fastjson.Value, validUTF8 bool) error {
				if isNull(v) {
					return nil
				}
				if v.Type() != fastjson.TypeString {
					return errType("string", v)
				}
				if !validUTF8 && !utf8.Valid(v.GetStringBytes()) {
					return errInvalidUTF8
				}
				return nil
			},
			append: func(b array.Builder, v *fastjson.Value) {
				if isNull(v) {
					b.AppendNull()
					return
				}
				b.(*array.StringBuilder).BinaryBuilder.Append(v.GetStringBytes())
			},
		}, nil
	case *arrow.Int64Type, *arrow.Int32Type:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if dt.ID() == arrow.INT32 {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		return valueFn{
			check: func(v *fastjson.Value, validUTF8 bool) error {
				if isNull(v) {
					return nil
				}
				if v.Type() != fastjson.TypeNumber {
					return errType("integer", v)
				}
				n, err := intOf(v)
				if err != nil {
					return err
				}
				if n < lo || n > hi {
					return fmt.Errorf("integer %d out of range for %s", n, dt)
				}
				return nil
			},
			append: func(b array.Builder, v *fastjson.Value) {
				if isNull(v) {
					b.AppendNull()
					return
				}
				n, _ := intOf(v)
				if ib, ok := b.(*array.Int64Builder); ok {
					ib.Append(n)
				} else {
					b.(*array.Int32Builder).Append(int32(n))
				}
			},
		}, nil
	case *arrow.Float64Type:
		return valueFn{
			check: func(v *fastjson.Value, validUTF8 bool) error {
				if isNull(v) {
					return nil
				}
				if v.Type() != fastjson.TypeNumber {
					return errType("number", v)
				}
				// fastjson takes any run of digits, signs, dots and
				// exponents as a number; one that does not parse would
				// otherwise be stored as 0.
				f, err := parseFloat(v.String())
				if err != nil {
					return fmt.Errorf("want number, got %s", v.String())
				}
				if math.IsInf(f, 0) && digitLiteral(v.String()) {
					// 1e400: a number float64 cannot hold (an Infinity
					// literal stays infinite).
					return fmt.Errorf("%s is out of float64's range", v.String())
				}
				return nil
			},
			append: func(b array.Builder, v *fastjson.Value) {
				if isNull(v) {
					b.AppendNull()
					return
				}
				f, _ := parseFloat(v.String())
				b.(*array.Float64Builder).Append(f)
			},
		}, nil
	case *arrow.BooleanType:
		return valueFn{
			check: func(v *fastjson.Value, validUTF8 bool) error {
				if isNull(v) || v.Type() == fastjson.TypeTrue || v.Type() == fastjson.TypeFalse {
					return nil
				}
				return errType("boolean", v)
			},
			append: func(b array.Builder, v *fastjson.Value) {
				if isNull(v) {
					b.AppendNull()
					return
				}
				b.(*array.BooleanBuilder).Append(v.Type() == fastjson.TypeTrue)
			},
		}, nil
	case *arrow.TimestampType:
		parse := func(v *fastjson.Value) (int64, error) {
			switch v.Type() {
			case fastjson.TypeString:
				return rfc3339Micros(v.GetStringBytes())
			case fastjson.TypeNumber:
				// Epoch milliseconds, as pandas writes datetimes by default.
				n, err := intOf(v)
				if err != nil {
					return 0, err
				}
				if n > maxTimestamp/1000 || n < minTimestamp/1000 {
					// Most often microseconds or nanoseconds given for
					// milliseconds.
					return 0, fmt.Errorf("timestamp: %d epoch milliseconds is outside the years 1 to 9999 that Spark and Python read (microseconds or nanoseconds?)", n)
				}
				return n * 1000, nil
			}
			return 0, errType("timestamp (RFC 3339 string or epoch milliseconds)", v)
		}
		return valueFn{
			check: func(v *fastjson.Value, validUTF8 bool) error {
				if isNull(v) {
					return nil
				}
				_, err := parse(v)
				return err
			},
			append: func(b array.Builder, v *fastjson.Value) {
				if isNull(v) {
					b.AppendNull()
					return
				}
				n, _ := parse(v)
				b.(*array.TimestampBuilder).Append(arrow.Timestamp(n))
			},
		}, nil
	case *arrow.ListType:
		elem, err := compileValue(t.Elem())
		if err != nil {
			return valueFn{}, err
		}
		return valueFn{
			check: func(v *fastjson.Value, validUTF8 bool) error {
				if isNull(v) {
					return nil
				}
				if v.Type() != fastjson.TypeArray {
					return errType("array", v)
				}
				for i, e := range v.GetArray() {
					if err := elem.check(e, validUTF8); err != nil {
						return fmt.Errorf("[%d]: %w", i, err)
					}
				}
				return nil
			},
			append: func(b array.Builder, v *fastjson.Value) {
				lb := b.(*array.ListBuilder)
				if isNull(v) {
					lb.AppendNull()
					return
				}
				lb.Append(true)
				vb := lb.ValueBuilder()
				for _, e := range v.GetArray() {
					elem.append(vb, e)
				}
			},
		}, nil
	case *arrow.StructType:
		// The names once: StructType.Fields copies the fields at each call,
		// which the closures below would pay per value.
		fields := make([]valueFn, t.NumFields())
		names := make([]string, t.NumFields())
		for i, f := range t.Fields() {
			fn, err := compileValue(f.Type)
			if err != nil {
				return valueFn{}, err
			}
			fields[i], names[i] = fn, f.Name
		}
		return valueFn{
			check: func(v *fastjson.Value, validUTF8 bool) error {
				if isNull(v) {
					return nil
				}
				if v.Type() != fastjson.TypeObject {
					return errType("object", v)
				}
				if k, ok := repeatedKey(v.GetObject(), names); ok {
					return &dupKeyError{k}
				}
				for i, name := range names {
					if err := fields[i].check(v.Get(name), validUTF8); err != nil {
						return fmt.Errorf(".%s: %w", name, err)
					}
				}
				return nil
			},
			append: func(b array.Builder, v *fastjson.Value) {
				sb := b.(*array.StructBuilder)
				if isNull(v) {
					sb.AppendNull()
					return
				}
				sb.Append(true)
				for i, name := range names {
					fields[i].append(sb.FieldBuilder(i), v.Get(name))
				}
			},
		}, nil
	case *arrow.MapType:
		if t.KeyType().ID() != arrow.STRING {
			return valueFn{}, fmt.Errorf("map keys must be strings, got %s", t.KeyType())
		}
		item, err := compileValue(t.ItemType())
		if err != nil {
			return valueFn{}, err
		}
		return valueFn{
			check: func(v *fastjson.Value, validUTF8 bool) error {
				if isNull(v) {
					return nil
				}
				o, err := v.Object()
				if err != nil {
					return errType("object", v)
				}
				if k, ok := repeatedKey(o, nil); ok {
					return &dupKeyError{k}
				}
				var ferr error
				o.Visit(func(k []byte, e *fastjson.Value) {
					if ferr == nil {
						if !validUTF8 && !utf8.Valid(k) {
							ferr = errInvalidUTF8
						} else if err := item.check(e, validUTF8); err != nil {
							ferr = fmt.Errorf(".%s: %w", k, err)
						}
					}
				})
				return ferr
			},
			append: func(b array.Builder, v *fastjson.Value) {
				mb := b.(*array.MapBuilder)
				if isNull(v) {
					mb.AppendNull()
					return
				}
				mb.Append(true)
				kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder()
				o, _ := v.Object()
				o.Visit(func(k []byte, e *fastjson.Value) {
					kb.BinaryBuilder.Append(k)
					item.append(ib, e)
				})
			},
		}, nil
	}
	return valueFn{}, fmt.Errorf("type %s is not supported by the JSON decoder", dt)
}

// intOf reads an integer; a float with an integral value (1.0) is accepted
// because pandas writes nullable integer columns as floats.
func intOf(v *fastjson.Value) (int64, error) {
	return intOfRaw(v.String())
}

// jsonNumber reports whether s is a number as JSON writes one (RFC 8259:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) or one of the words
// Python's json writes: NaN, Infinity and -Infinity (which reach here as
// Inf and -Inf, the words fastjson reads; see pythonInfinity). fastjson
// and fastfloat also take 01, .5, 1., +1, nan, inf, INF and -NaN, which
// Python's json, DuckDB and pyarrow refuse: a row holding one is
// rejected, not read as a guess.
func jsonNumber(s string) bool {
	switch s {
	case "NaN", "Inf", "-Inf":
		return true
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// intOfRaw is intOf of a number's text, as the fast JSON path has it.
func intOfRaw(s string) (int64, error) {
	if !jsonNumber(s) {
		return 0, fmt.Errorf("%s is not a JSON number", s)
	}
	if n, err := fastfloat.ParseInt64(s); err == nil {
		return n, nil
	}
	f, err := parseFloat(s)
	if err != nil {
		return 0, err
	}
	return integral(f)
}

// parseFloat reads a JSON number's text as Python's float() and
// strconv.ParseFloat do: correctly rounded. fastfloat.Parse is that only
// for a short plain decimal (its digits under 2^53, divided once by a
// power of ten); with an exponent (2.74125e-05) or more digits it can be
// a unit in the last place off, so those go through strconv. A number
// past float64's range is ±Inf (the check rejects it), as fastfloat gives
// it.
func parseFloat(s string) (float64, error) {
	if !jsonNumber(s) {
		return 0, fmt.Errorf("%s is not a JSON number", s)
	}
	if len(s) <= 15 && strings.IndexAny(s, "eE") < 0 {
		return fastfloat.Parse(s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
		return f, nil
	}
	if err != nil {
		return fastfloat.Parse(s) // its own error, or a word as it reads one
	}
	return f, nil
}

// integral returns f as an integer when it is a whole number under 2⁵³
// in magnitude, else an error: from 2⁵³ on, the float may be the rounding
// of another integer (9007199254740993.0 reads as 2⁵³).
func integral(f float64) (int64, error) {
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) >= 1<<53 {
		return 0, fmt.Errorf("want integer, got %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return int64(f), nil
}

// digitLiteral reports whether a JSON number's text is digits (after an
// optional minus), not a word such as NaN or Infinity.
func digitLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}
