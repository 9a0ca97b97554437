package config

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// ParseType turns a type expression into an Arrow type. The grammar is
//
//	type   = scalar | "list<" type ">" | "map<" type "," type ">" | "struct<" field {"," field} ">"
//	field  = name ":" type
//	scalar = string | int64 | int32 | float64 | bool | timestamp | date
//
// timestamp means microseconds, UTC (what Spark and DuckDB read as an
// instant). Only Spark-safe types exist: no unsigned, no large variants.
func ParseType(s string) (arrow.DataType, error) {
	p := &typeParser{s: strings.ReplaceAll(s, " ", "")}
	t, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", s, err)
	}
	if p.pos != len(p.s) {
		return nil, fmt.Errorf("type %q: unexpected %q", s, p.s[p.pos:])
	}
	return t, nil
}

type typeParser struct {
	s   string
	pos int
}

func (p *typeParser) ident() string {
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '<' || c == '>' || c == ',' || c == ':' {
			break
		}
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *typeParser) expect(c byte) error {
	if p.pos >= len(p.s) || p.s[p.pos] != c {
		return fmt.Errorf("expected %q at offset %d", c, p.pos)
	}
	p.pos++
	return nil
}

func (p *typeParser) parse() (arrow.DataType, error) {
	name := p.ident()
	switch name {
	case "string":
		return arrow.BinaryTypes.String, nil
	case "int64":
		return arrow.PrimitiveTypes.Int64, nil
	case "int32":
		return arrow.PrimitiveTypes.Int32, nil
	case "float64", "double":
		return arrow.PrimitiveTypes.Float64, nil
	case "bool":
		return arrow.FixedWidthTypes.Boolean, nil
	case "timestamp":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case "date":
		return arrow.FixedWidthTypes.Date32, nil
	case "list":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		elem, err := p.parse()
		if err != nil {
			return nil, err
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		return arrow.ListOf(elem), nil
	case "map":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		k, err := p.parse()
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		v, err := p.parse()
		if err != nil {
			return nil, err
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		return arrow.MapOf(k, v), nil
	case "struct":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		var fields []arrow.Field
		for {
			fname := p.ident()
			if fname == "" {
				return nil, fmt.Errorf("expected a field name at offset %d", p.pos)
			}
			if err := p.expect(':'); err != nil {
				return nil, err
			}
			ft, err := p.parse()
			if err != nil {
				return nil, err
			}
			for _, f := range fields {
				if f.Name == fname {
					// Readers refuse or disagree on such a struct
					// (pyarrow will not make it a dict).
					return nil, fmt.Errorf("struct field %q comes twice", fname)
				}
			}
			fields = append(fields, arrow.Field{Name: fname, Type: ft, Nullable: true})
			if p.pos < len(p.s) && p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			break
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		return arrow.StructOf(fields...), nil
	case "":
		return nil, fmt.Errorf("missing type at offset %d", p.pos)
	default:
		return nil, fmt.Errorf("unknown type %q (want string, int64, int32, float64, bool, timestamp, date, list<..>, map<..,..>, struct<..>)", name)
	}
}

// FormatType writes an Arrow type in the grammar ParseType reads, the
// form shown in manifests and dataset cards (list<string>, not
// list<item: utf8, nullable>).
func FormatType(dt arrow.DataType) string {
	switch t := dt.(type) {
	case *arrow.StringType:
		return "string"
	case *arrow.Int64Type:
		return "int64"
	case *arrow.Int32Type:
		return "int32"
	case *arrow.Float64Type:
		return "float64"
	case *arrow.BooleanType:
		return "bool"
	case *arrow.TimestampType:
		return "timestamp"
	case *arrow.Date32Type:
		return "date"
	case *arrow.ListType:
		return "list<" + FormatType(t.Elem()) + ">"
	case *arrow.MapType:
		return "map<" + FormatType(t.KeyType()) + "," + FormatType(t.ItemType()) + ">"
	case *arrow.StructType:
		parts := make([]string, t.NumFields())
		for i, f := range t.Fields() {
			parts[i] = f.Name + ":" + FormatType(f.Type)
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	}
	return dt.String()
}
