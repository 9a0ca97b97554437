package stages

import (
	"strconv"
	"strings"
	"testing"

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
			if got := string(inlineEscapes(nil, in)); got != tt.want {
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
		out := inlineEscapes(nil, in)
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
