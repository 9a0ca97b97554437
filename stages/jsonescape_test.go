package stages

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fastjson"
)

func TestInlineEscapes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"none", `{"a":"b"}`, `{"a":"b"}`},
		{"latin and CJK", `{"a":"caf\u00e9 \u4e2d"}`, `{"a":"café 中"}`},
		{"pair", `"\ud83d\ude00"`, `"😀"`},
		{"kept: quote, backslash, control", `"\u0022\u005C\u001f"`, `"\u0022\u005C\u001f"`},
		{"kept: lone surrogates, with what follows", `"\ud800x\ud800\u0041\udc00"`, `"\ud800x\ud800\u0041\udc00"`},
		{"kept: not hex, too short", `"\uzz\u12"`, `"\uzz\u12"`},
		{"escaped backslash before u", `"\\u00e9\\\u00e9"`, `"\\u00e9\\é"`},
		{"other escapes", `"\n\"\/\u00e9\t"`, `"\n\"\/é\t"`},
		{"first escape-u inside a backslash run", `"x\\\\\\u00e9"`, `"x\\\\\\u00e9"`},
		{"odd run", `"x\\\u00e9"`, `"x\\é"`},
		{"final backslash", `"\u00e9\`, `"é\`},
		{"outside strings", `{"a":"\u00e9"} \u00e9 "\u00e9`, `{"a":"é"} \u00e9 "é`},
		{"escaped quote does not end the string", `["\"\u00e9", "\\", "\u00e9"]`, `["\"é", "\\", "é"]`},
		{"no closing quote", `"\u00e9`, `"é`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			if got, _ := inlineEscapes(nil, in); string(got) != tt.want {
				t.Errorf("inlineEscapes(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// canonJSON renders a parsed value with every string decoded, so two
// lines that decode alike render alike.
func canonJSON(v *fastjson.Value) string {
	var b strings.Builder
	var walk func(v *fastjson.Value)
	walk = func(v *fastjson.Value) {
		switch v.Type() {
		case fastjson.TypeObject:
			b.WriteByte('{')
			v.GetObject().Visit(func(k []byte, e *fastjson.Value) {
				b.WriteString(strconv.Quote(string(k)))
				b.WriteByte(':')
				walk(e)
				b.WriteByte(',')
			})
			b.WriteByte('}')
		case fastjson.TypeArray:
			b.WriteByte('[')
			for _, e := range v.GetArray() {
				walk(e)
				b.WriteByte(',')
			}
			b.WriteByte(']')
		case fastjson.TypeString:
			b.WriteString(strconv.Quote(string(v.GetStringBytes())))
		default:
			b.WriteString(v.String())
		}
	}
	walk(v)
	return b.String()
}

// FuzzInlineEscapes checks that a line with its escapes written out
// parses exactly when the line does, to the same strings.
func FuzzInlineEscapes(f *testing.F) {
	for _, s := range []string{
		`{"a":"caf\u00e9","b":["\ud83d\ude00","\ud800\u0041"]}`,
		`{"\u0061":"\u0022\\u0041\\\u0041"}`,
		`{"a":"\udc00\ud800\udc00\u12"}`,
		`["\uD83D\uDE00\uDBFF\uDFFF\u0000\u007f\u0080"]`,
		`{"a":"\u00e9", "b": tru}`,
		`"\\\\\u00e9\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in := []byte(s)
		out, _ := inlineEscapes(nil, in)
		var p1, p2 fastjson.Parser
		v1, err1 := p1.ParseBytes(in)
		v2, err2 := p2.ParseBytes(out)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q parses: %v; written out as %q: %v", s, err1, out, err2)
		}
		if err1 != nil {
			return
		}
		if c1, c2 := canonJSON(v1), canonJSON(v2); c1 != c2 {
			t.Fatalf("%q decodes to %s; written out as %q to %s", s, c1, out, c2)
		}
	})
}

// TestHex4 compares hex4 with strconv.ParseUint over every 4-byte string
// of hex digits and their neighbours in ASCII, and short input.
func TestHex4(t *testing.T) {
	digits := []byte("0123456789abcdefABCDEF/:@G`g \x00\xff")
	var s [4]byte
	for _, a := range digits {
		for _, b := range digits {
			for _, c := range digits {
				for _, d := range digits {
					s = [4]byte{a, b, c, d}
					want, err := strconv.ParseUint(string(s[:]), 16, 16)
					got, ok := hex4(s[:])
					if ok != (err == nil) || ok && got != rune(want) {
						t.Fatalf("hex4(%q) = %#x, %v; strconv: %#x, %v", s, got, ok, want, err)
					}
				}
			}
		}
	}
	if _, ok := hex4([]byte("abc")); ok {
		t.Error("hex4 read three digits")
	}
}

// BenchmarkInlineEscapes writes out the escapes of a line shaped like a
// CrowdRAG-25 response (Python's json escapes every non-ASCII character:
// about 290 \u escapes in 30 KB), against copying the line (the floor).
func BenchmarkInlineEscapes(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"response":"x","references_texts":[`)
	for i := range 20 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('"')
		for j := range 60 {
			sb.WriteString(`Die Caf\u00e9-Kultur \u201ezieht\u201c Leute an; \"Stra\u00dfe\" `)
			if j%7 == 0 {
				sb.WriteString(`\n\/`)
			}
		}
		sb.WriteByte('"')
	}
	sb.WriteString(`]}`)
	line := []byte(sb.String())
	var dst []byte
	var copyNs, escNs float64
	for b.Loop() {
		start := time.Now()
		dst = append(dst[:0], line...)
		copyNs += float64(time.Since(start))
		start = time.Now()
		dst, _ = inlineEscapes(dst[:0], line)
		escNs += float64(time.Since(start))
	}
	n := float64(b.N)
	b.ReportMetric(float64(len(line))/(escNs/n)*1e3, "MB/s")
	b.ReportMetric(escNs/copyNs, "x_copy")
}
