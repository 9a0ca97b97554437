package stages

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/valyala/fastjson"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// SQLUnquote undoes SQL-style quoting: a value wrapped in single quotes
// whose inner quotes are all doubled ('isn”t') becomes the inner text
// with single quotes (isn't). Anything else is returned as it is.
func SQLUnquote(s string) string {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return s
	}
	inner := s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		if inner[i] != '\'' {
			b.WriteByte(inner[i])
			continue
		}
		if i+1 < len(inner) && inner[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return s // a lone quote inside: not SQL quoting
	}
	return b.String()
}

// pyRound rounds like Python's round(x, digits): to the nearest decimal
// of the exact binary value, ties to even.
func pyRound(x float64, digits int) float64 {
	if digits < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	return v
}

// WasonCorrect returns the cards that must be turned in the Wason
// selection task: vowels and odd digits, in the order given.
func WasonCorrect(cards []string) []string {
	out := []string{}
	for _, c := range cards {
		if isWasonCorrect(c) {
			out = append(out, c)
		}
	}
	return out
}

func isWasonCorrect(c string) bool {
	switch strings.ToUpper(c) {
	case "A", "E", "I", "O", "U", "1", "3", "5", "7", "9":
		return true
	}
	return false
}

// WasonScore is a participant's score: the share of the cards whose
// selected or not-selected state is right.
func WasonScore(cards, selected []string) float64 {
	if len(cards) == 0 {
		return 0
	}
	sel := map[string]bool{}
	for _, s := range selected {
		sel[s] = true
	}
	right := 0
	for _, c := range cards {
		if sel[c] == isWasonCorrect(c) {
			right++
		}
	}
	return float64(right) / float64(len(cards))
}

// stringList returns row i's list of strings (null elements as ""), or
// nil for a null list.
func stringList(l *array.List, i int) []string { return listStrings(l, i, false) }

// stringListValid is stringList without the list's null elements.
func stringListValid(l *array.List, i int) []string { return listStrings(l, i, true) }

func listStrings(l *array.List, i int, skipNull bool) []string {
	if l.IsNull(i) {
		return nil
	}
	s, e := l.ValueOffsets(i)
	vals := l.ListValues().(*array.String)
	out := make([]string, 0, e-s)
	for j := s; j < e; j++ {
		if skipNull && vals.IsNull(int(j)) {
			continue
		}
		out = append(out, vals.Value(int(j)))
	}
	return out
}

// hasNullElement reports whether row i's list holds a null element.
func hasNullElement(l *array.List, i int) bool {
	if l.IsNull(i) {
		return false
	}
	s, e := l.ValueOffsets(i)
	vals := l.ListValues()
	for j := s; j < e; j++ {
		if vals.IsNull(int(j)) {
			return true
		}
	}
	return false
}

func digitsOf(d config.Derivation) int {
	if d.Digits == nil {
		return -1
	}
	return *d.Digits
}

func float64Of(mem memory.Allocator, n int, f func(i int) (float64, bool)) arrow.Array {
	fb := array.NewFloat64Builder(mem)
	defer fb.Release()
	for i := 0; i < n; i++ {
		if v, ok := f(i); ok {
			fb.Append(v)
		} else {
			fb.AppendNull()
		}
	}
	return fb.NewArray()
}

func stringOf(mem memory.Allocator, n int, f func(i int) (string, bool)) arrow.Array {
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	for i := 0; i < n; i++ {
		if v, ok := f(i); ok {
			sb.Append(v)
		} else {
			sb.AppendNull()
		}
	}
	return sb.NewArray()
}

// stringListOf builds a list<string> column of n rows; f returns a row's
// elements, or false for a null row.
func stringListOf(mem memory.Allocator, n int, f func(i int) ([]string, bool)) arrow.Array {
	lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	defer lb.Release()
	vb := lb.ValueBuilder().(*array.StringBuilder)
	for i := 0; i < n; i++ {
		vals, ok := f(i)
		if !ok {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for _, v := range vals {
			vb.Append(v)
		}
	}
	return lb.NewArray()
}

func isMapStringList(t arrow.DataType) bool {
	m, ok := t.(*arrow.MapType)
	return ok && m.KeyType().ID() == arrow.STRING && isStringList(m.ItemType())
}

// orderedByKey builds per-key state for derivations over earlier rows.
func keyIndexes(in *arrow.Schema, d config.Derivation) ([]int, error) {
	if len(d.By) == 0 {
		return nil, nil
	}
	return needColumns(in, d.By...)
}

func init() {
	Register("split", "[string column], value: separator, values: [left out]", "Splits a string into a list<string> on the separator, leaving out elements listed in values; an empty string gives an empty list.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isString, "string"); err != nil {
			return nil, err
		}
		if d.Value == "" {
			return nil, fmt.Errorf("value must be the separator")
		}
		drop := map[string]bool{}
		for _, v := range d.Values {
			drop[v] = true
		}
		return &Deriver{Type: arrow.ListOf(arrow.BinaryTypes.String), Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			s := b.Column(idx[0]).(*array.String)
			return stringListOf(mem, s.Len(), func(i int) ([]string, bool) {
				if s.IsNull(i) {
					return nil, false
				}
				var out []string
				if v := s.Value(i); v != "" {
					for _, p := range strings.Split(v, d.Value) {
						if !drop[p] {
							out = append(out, p)
						}
					}
				}
				return out, true
			}), nil
		}}, nil
	})

	Register("split_part", "[string column], value: separator, index", "The index-th (0-based) part of a string split on the separator; null when there is no such part.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isString, "string"); err != nil {
			return nil, err
		}
		if d.Value == "" || d.Index < 0 {
			return nil, fmt.Errorf("value must be the separator and index ≥ 0")
		}
		return &Deriver{Type: arrow.BinaryTypes.String, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			s := b.Column(idx[0]).(*array.String)
			return stringOf(mem, s.Len(), func(i int) (string, bool) {
				if s.IsNull(i) {
					return "", false
				}
				parts := strings.Split(s.Value(i), d.Value)
				if d.Index >= len(parts) {
					return "", false
				}
				return parts[d.Index], true
			}), nil
		}}, nil
	})

	Register("nullif", "[string column], values", "The string, or null when it is one of values (e.g. the literal None, 0 or an empty field).", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isString, "string"); err != nil {
			return nil, err
		}
		if len(d.Values) == 0 {
			return nil, fmt.Errorf("values: list the texts that mean null (it would change nothing)")
		}
		null := map[string]bool{}
		for _, v := range d.Values {
			null[v] = true
		}
		return &Deriver{Type: arrow.BinaryTypes.String, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			s := b.Column(idx[0]).(*array.String)
			return stringOf(mem, s.Len(), func(i int) (string, bool) {
				if s.IsNull(i) || null[s.Value(i)] {
					return "", false
				}
				return s.Value(i), true
			}), nil
		}}, nil
	})

	Register("sql_unquote", "[string column]", "Undoes SQL-style quoting: 'isn''t' becomes isn't; text that is not wrapped that way is kept.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isString, "string"); err != nil {
			return nil, err
		}
		return &Deriver{Type: arrow.BinaryTypes.String, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			return mapStrings(mem, b.Column(idx[0]), func(dst []byte, s string) []byte { return append(dst, SQLUnquote(s)...) }), nil
		}}, nil
	})

	Register("parse_json", "[string column], type", "Parses JSON text into the given type (e.g. map<string,list<string>>); a row whose text is not valid JSON of that type is rejected.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isString, "string"); err != nil {
			return nil, err
		}
		t, err := config.ParseType(d.Type)
		if err != nil {
			return nil, err
		}
		fn, err := compileValue(t)
		if err != nil {
			return nil, err
		}
		return &Deriver{Type: t, ComputeRows: func(b arrow.RecordBatch, bad map[int]string) (arrow.Array, error) {
			s := b.Column(idx[0]).(*array.String)
			bld := array.NewBuilder(mem, t)
			defer bld.Release()
			var p fastjson.Parser
			var esc []byte
			for i := 0; i < s.Len(); i++ {
				if s.IsNull(i) || s.Value(i) == "" {
					bld.AppendNull()
					continue
				}
				v, err := p.Parse(s.Value(i))
				if err == nil && strings.IndexByte(s.Value(i), '\\') >= 0 {
					// As a JSON line's: escapes JSON does not have, and
					// halves of surrogate pairs, which are no character.
					raw := []byte(s.Value(i))
					var lone bool
					var bad int
					switch esc, lone, bad = inlineEscapesChecked(esc[:0], raw); {
					case bad >= 0:
						err = escapeError(raw, bad)
					case lone:
						err = errLoneSurrogate
					}
				}
				if err == nil {
					err = fn.check(v, false)
				}
				if err != nil {
					bad[i] = fmt.Sprintf("invalid JSON for %s: %s", d.Type, jsonErrorText(err))
					bld.AppendNull()
					continue
				}
				fn.append(bld, v)
			}
			return bld.NewArray(), nil
		}}, nil
	})

	Register("field", "[struct column], value: field name", "One field of a struct column (a nested JSON object declared struct<…>), as a column of its own: null where the struct is null. How a nested object's keys become columns to validate, partition or aggregate on.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		st, ok := in.Field(idx[0]).Type.(*arrow.StructType)
		if !ok {
			return nil, fmt.Errorf("column %s is %s, want a struct", d.Args[0], config.FormatType(in.Field(idx[0]).Type))
		}
		k, ok := st.FieldIdx(d.Value)
		if !ok {
			var names []string
			for _, f := range st.Fields() {
				names = append(names, f.Name)
			}
			return nil, fmt.Errorf("value: struct %s has no field %q (have %s)", d.Args[0], d.Value, strings.Join(names, ", "))
		}
		return &Deriver{Type: st.Field(k).Type, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			return structFieldArray(mem, b.Column(idx[0]).(*array.Struct), k), nil
		}}, nil
	})

	Register("map_keys", "[map column]", "The keys of a map, as a list<string>.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		mt, ok := in.Field(idx[0]).Type.(*arrow.MapType)
		if !ok || mt.KeyType().ID() != arrow.STRING {
			return nil, fmt.Errorf("column %s is %s, want map<string,...>", d.Args[0], config.FormatType(in.Field(idx[0]).Type))
		}
		return &Deriver{Type: arrow.ListOf(arrow.BinaryTypes.String), Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			m := b.Column(idx[0]).(*array.Map)
			keys := m.Keys().(*array.String)
			return stringListOf(mem, m.Len(), func(i int) ([]string, bool) {
				if m.IsNull(i) {
					return nil, false
				}
				s, e := m.ValueOffsets(i)
				out := make([]string, 0, e-s)
				for j := s; j < e; j++ {
					out = append(out, keys.Value(int(j)))
				}
				return out, true
			}), nil
		}}, nil
	})

	Register("wason_correct", "[list<string> cards]", "The cards to turn in the Wason selection task: the vowels and the odd digits, in card order.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isStringList, "list<string>"); err != nil {
			return nil, err
		}
		return &Deriver{Type: arrow.ListOf(arrow.BinaryTypes.String), Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			l := b.Column(idx[0]).(*array.List)
			return stringListOf(mem, l.Len(), func(i int) ([]string, bool) {
				if l.IsNull(i) {
					return nil, false
				}
				return WasonCorrect(stringList(l, i)), true
			}), nil
		}}, nil
	})

	Register("wason_team_performance", "[map<string,list<string>> selections, list<string> cards], digits", "The mean over participants (the map's keys) of the share of the 4 cards each has right (selected exactly when it is a vowel or an odd digit); null without cards.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 2)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], isMapStringList, "map<string,list<string>>"); err != nil {
			return nil, err
		}
		if err := wantType(in, idx[1], isStringList, "list<string>"); err != nil {
			return nil, err
		}
		digits := digitsOf(d)
		return &Deriver{Type: arrow.PrimitiveTypes.Float64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			m := b.Column(idx[0]).(*array.Map)
			cards := b.Column(idx[1]).(*array.List)
			items := m.Items().(*array.List)
			return float64Of(mem, int(b.NumRows()), func(i int) (float64, bool) {
				if m.IsNull(i) || cards.IsNull(i) {
					return 0, false
				}
				cs := stringList(cards, i)
				s, e := m.ValueOffsets(i)
				if e == s {
					return 0, false
				}
				sum := 0.0
				for j := s; j < e; j++ {
					sum += WasonScore(cs, stringList(items, int(j)))
				}
				return pyRound(sum/float64(e-s), digits), true
			}), nil
		}}, nil
	})

	Register("difference", "[number a, number b], digits", "a − b: of two integer columns an int64, exactly (a difference past int64 stops the run, naming the row); else a float64 rounded to digits like Python's round. Null if either is null.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 2)
		if err != nil {
			return nil, err
		}
		for _, c := range idx {
			if err := wantType(in, c, func(t arrow.DataType) bool { return isNumeric(t) && !isList(t) }, "a number"); err != nil {
				return nil, err
			}
		}
		if isIntegerType(in.Field(idx[0]).Type) && isIntegerType(in.Field(idx[1]).Type) {
			// Exactly, where float64s of integers past 2^53 would round.
			return &Deriver{Type: arrow.PrimitiveTypes.Int64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
				x, y := b.Column(idx[0]), b.Column(idx[1])
				var overflow error
				out := int64Of(mem, b, func(i int) (int64, bool) {
					if x.IsNull(i) || y.IsNull(i) {
						return 0, false
					}
					p, q := intValue(x, i), intValue(y, i)
					r := p - q
					if (p >= 0) != (q >= 0) && (r >= 0) != (p >= 0) && overflow == nil {
						// Past int64: the run stops, naming the row (a
						// derivation that rejects rows could not share a
						// step with lag, as this one often does).
						overflow = &pipeline.RowError{File: pipeline.FileOf(b, i), Line: pipeline.LineOf(b, i),
							Err: fmt.Errorf("difference: %d − %d does not fit an int64", p, q)}
					}
					return r, true
				})
				if overflow != nil {
					out.Release()
					return nil, overflow
				}
				return out, nil
			}}, nil
		}
		digits := digitsOf(d)
		return &Deriver{Type: arrow.PrimitiveTypes.Float64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			x, y := b.Column(idx[0]), b.Column(idx[1])
			return float64Of(mem, int(b.NumRows()), func(i int) (float64, bool) {
				if x.IsNull(i) || y.IsNull(i) {
					return 0, false
				}
				var p, q float64
				eachNumber(x, i, func(f float64) bool { p = f; return true })
				eachNumber(y, i, func(f float64) bool { q = f; return true })
				return pyRound(p-q, digits), true
			}), nil
		}}, nil
	})

	Register("lag", "[column], by: [key columns], grouped", "The value of the previous row with the same key (input order); null on a key's first row.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		keys, err := keyIndexes(in, d)
		if err != nil {
			return nil, err
		}
		return windowTake(mem, in, idx[0], keys, false, d.Grouped)
	})

	Register("fill_down", "[column], by: [key columns], grouped", "The last non-null value so far among rows with the same key, this row included (input order): spreads a group's INITIAL-row value to its later rows.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		keys, err := keyIndexes(in, d)
		if err != nil {
			return nil, err
		}
		return windowTake(mem, in, idx[0], keys, true, d.Grouped)
	})
}

// structFieldArray returns field k of s as an array of its own (a new
// reference): the field's values, null where s is null.
func structFieldArray(mem memory.Allocator, s *array.Struct, k int) arrow.Array {
	child := s.Field(k) // arrow-go slices it to the struct's rows
	if s.NullN() == 0 {
		child.Retain()
		return child
	}
	cd, sd := child.Data(), s.Data()
	n := int64(s.Len())
	sv := sd.Buffers()[0].Bytes()
	cv := sv
	cOff := int64(sd.Offset())
	if b := cd.Buffers()[0]; b != nil {
		cv, cOff = b.Bytes(), int64(cd.Offset())
	}
	// The struct's validity and the field's, aligned at the field's
	// offset, where its values are.
	validity := bitutil.BitmapAndAlloc(mem, sv, cv, int64(sd.Offset()), cOff, n, int64(cd.Offset()))
	defer validity.Release()
	bufs := append([]*memory.Buffer{validity}, cd.Buffers()[1:]...)
	data := array.NewData(cd.DataType(), int(n), bufs, cd.Children(), array.UnknownNullCount, cd.Offset())
	defer data.Release()
	return array.MakeFromData(data)
}
