package stages

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/pipeline"
)

// fastTestColumns covers every kind the fast path decodes, nested, with a
// column read from two keys.
func fastTestColumns(t testing.TB) []JSONColumn {
	return []JSONColumn{
		{Name: "s", Keys: []string{"s", "text"}, Type: mustType(t, "string")},
		{Name: "i", Type: mustType(t, "int64")},
		{Name: "i32", Type: mustType(t, "int32")},
		{Name: "f", Type: mustType(t, "float64")},
		{Name: "b", Type: mustType(t, "bool")},
		{Name: "l", Type: mustType(t, "list<string>")},
		{Name: "st", Type: mustType(t, "list<struct<text:string,citations:list<string>>>")},
		{Name: "ll", Type: mustType(t, "list<list<float64>>")},
	}
}

// fastTestLines are lines of every shape, most for the fast path, some
// for the general one; they seed FuzzFastJSON.
var fastTestLines = []string{
	`{"s":"plain","i":1,"i32":-2,"f":1.5,"b":true,"l":["a","b"],"st":[{"text":"x","citations":["1"]}],"ll":[[1,2],[]]}`,
	`{"s":"caf\u00e9 \u2014 \ud83d\ude00","l":["tab\there","quote\"d","back\\slash","sl\/ash","\b\f\n\r"]}`,
	`  {"s" : "spaced" , "i" : 3 }  `,
	`{}`,
	`{"s":null,"i":null,"f":null,"b":null,"l":null,"st":null,"ll":null}`,
	`{"l":[null,"x",null],"st":[null,{"text":null},{"citations":null},{}]}`,
	`{"text":"alias","s":"wins"}`,
	`{"s":"first","s":"second"}`,
	`{"st":[{"text":"one","text":"two","citations":["c"],"other":{"deep":[1,{"x":null}]}}]}`,
	`{"unknown":{"a":[1,2,{"b":"c"}]},"s":"kept"}`,
	`{"i":1.0,"i32":2e3,"f":-0.5e-3,"ll":[[1e308,-1e-308,0]]}`,
	`{"i":1.5}`,
	`{"i32":3000000000}`,
	`{"i":9223372036854775807,"i32":-2147483648}`,
	`{"f":NaN}`,
	`{"f":1.2.3}`,
	`{"f":"1"}`,
	`{"s":1}`,
	`{"b":"true"}`,
	`{"l":"x"}`,
	`{"s":"lone \ud800 surrogate"}`,
	`{"s":"bad \x escape"}`,
	`{"s":"short \u12"}`,
	`{"s":"hex \u0041\u0030"}`,
	`{"s":"control \u0000\u001f"}`,
	`{"s\u0041":"escaped key"}`,
	`{"s":"unterminated}`,
	`{"s":"x",}`,
	`{"s":"x"} trailing`,
	`["not","an","object"]`,
	`{"s":tru}`,
	`{"b":false,"b":true}`,
	`{"i":-}`,
	`{"i":+1}`,
	`{"i":01}`,
	`{"f":.5}`,
	`{"f":1.}`,
	`{"f":1e}`,
	`{"f":01.5}`,
	`{"f":-Infinity,"i":1e2}`,
	"{\"s\":\"raw\ttab\"}",
	`{"s":"\\\"still a string\\\\","i":2}`,
}

// TestFastJSONTakesPlainLines checks which lines the fast path decodes
// itself, so a change that sends every line to fastjson fails here.
func TestFastJSONTakesPlainLines(t *testing.T) {
	s := &JSONLines{Name: "t", Columns: fastTestColumns(t)}
	if _, err := s.Schema(); err != nil {
		t.Fatal(err)
	}
	if s.fast == nil {
		t.Fatal("the fast path is off for types it decodes")
	}
	for _, tc := range []struct {
		name string
		line string
		fast bool
	}{
		{"every kind", `{"s":"plain","i":1,"i32":-2,"f":1.5,"b":true,"l":["a","b"],"st":[{"text":"x","citations":["1"]}],"ll":[[1,2],[]]}`, true},
		{"escapes and a surrogate pair", `{"s":"caf\u00e9 \u2014 \ud83d\ude00","l":["tab\there","quote\"d","back\\slash","sl\/ash","\b\f\n\r"]}`, true},
		{"white space", `  {"s" : "spaced" , "i" : 3 }  `, true},
		{"empty object", "{}", true},
		{"nulls", `{"s":null,"i":null,"f":null,"b":null,"l":null,"st":null,"ll":null}`, true},
		{"duplicate keys (the general path rejects the row)", `{"s":"first","s":"second"}`, false},
		{"unknown nested key", `{"unknown":{"a":[1,2,{"b":"c"}]},"s":"kept"}`, true},
		{"integral float for an integer", `{"i":1.0}`, true},
		{"escaped quote and backslash", `{"s":"\\\"still a string\\\\","i":2}`, true},
		{"fraction for an integer", `{"i":1.5}`, false},
		{"out of int32 range", `{"i32":3000000000}`, false},
		{"NaN", `{"f":NaN}`, false},
		{"number that does not parse", `{"f":1.2.3}`, false},
		{"string for a number", `{"f":"1"}`, false},
		{"lone surrogate", `{"s":"lone \ud800 surrogate"}`, false},
		{"unknown escape", `{"s":"bad \x escape"}`, false},
		{"escaped key", `{"s\u0041":"escaped key"}`, false},
		{"trailing comma", `{"s":"x",}`, false},
		{"trailing text", `{"s":"x"} trailing`, false},
		{"array", `["not","an","object"]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rb := array.NewRecordBuilder(memory.DefaultAllocator, s.schema)
			defer rb.Release()
			got := s.decodeFast(&fastLine{}, rb, []byte(tc.line))
			if got != tc.fast {
				t.Fatalf("decodeFast(%s) = %v, want %v", tc.line, got, tc.fast)
			}
			want := 0
			if tc.fast {
				want = 1
			}
			for i := range s.Columns {
				if n := rb.Field(i).Len(); n != want {
					t.Errorf("column %s holds %d values, want %d (a declined line must append nothing)", s.Columns[i].Name, n, want)
				}
			}
		})
	}
}

// TestFastJSONUnknownKeys: with unknown keys rejected, a line holding one
// is left to the general path, which rejects it.
func TestFastJSONUnknownKeys(t *testing.T) {
	s := &JSONLines{Name: "t", Columns: fastTestColumns(t), RejectUnknownKeys: true}
	if _, err := s.Schema(); err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, s.schema)
	defer rb.Release()
	if s.decodeFast(&fastLine{}, rb, []byte(`{"s":"x","extra":1}`)) {
		t.Fatal("the fast path took a line with an unknown key")
	}
	if !s.decodeFast(&fastLine{}, rb, []byte(`{"text":"y","i":1}`)) {
		t.Fatal("the fast path declined a line of declared keys")
	}
	// A column's name beside its alias is for the general path, which
	// reads one value said twice and rejects two.
	if s.decodeFast(&fastLine{}, rb, []byte(`{"s":"x","text":"y"}`)) {
		t.Fatal("the fast path took a column's name beside its alias")
	}
}

// TestFastJSONOffForOtherTypes: an input with a column the fast path does
// not decode takes the general path for every line.
func TestFastJSONOffForOtherTypes(t *testing.T) {
	cols := append(fastTestColumns(t), JSONColumn{Name: "ts", Type: mustType(t, "timestamp")})
	s := &JSONLines{Name: "t", Columns: cols}
	if _, err := s.Schema(); err != nil {
		t.Fatal(err)
	}
	if s.fast != nil {
		t.Fatal("the fast path is on for an input with a timestamp column")
	}
}

// decodeBoth decodes data with and without the fast path and fails unless
// the batches, rejects and errors are the same.
func decodeBoth(t *testing.T, data []byte, rejectUnknown bool) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	run := func(fast bool) (string, []pipeline.Reject, error) {
		s := &JSONLines{Name: "t", Columns: fastTestColumns(t), RejectBadLines: true, RejectUnknownKeys: rejectUnknown, Mem: mem}
		if _, err := s.Schema(); err != nil {
			t.Fatal(err)
		}
		if !fast {
			s.fast = nil
		}
		rej := &pipeline.Rejects{}
		// Each run decodes its own copy, so neither can see the other's
		// writes to the chunk.
		chunk := pipeline.Chunk{Data: append([]byte(nil), data...), Rows: bytes.Count(data, []byte("\n")) + 1, Line: 1}
		b, err := s.decode(&decodeState{}, chunk, rej)
		if err != nil {
			return "", nil, err
		}
		defer b.Release()
		var sb strings.Builder
		for i, c := range b.Columns() {
			fmt.Fprintf(&sb, "%s: %v\n", b.ColumnName(i), c)
		}
		return sb.String(), rej.List(), nil
	}
	gotB, gotR, gotErr := run(true)
	wantB, wantR, wantErr := run(false)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%q: error %v with the fast path, %v without", data, gotErr, wantErr)
	}
	if gotB != wantB {
		t.Fatalf("%q: with the fast path\n%s\nwithout\n%s", data, gotB, wantB)
	}
	if fmt.Sprint(gotR) != fmt.Sprint(wantR) {
		t.Fatalf("%q: rejects with the fast path %v, without %v", data, gotR, wantR)
	}
}

// TestFastJSONSameBatches decodes the seed lines with and without the
// fast path.
func TestFastJSONSameBatches(t *testing.T) {
	for i, ln := range fastTestLines {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			decodeBoth(t, []byte(ln), false)
			decodeBoth(t, []byte(ln), true)
		})
	}
	decodeBoth(t, []byte(strings.Join(fastTestLines, "\n")), false)
}

// FuzzFastJSON: any line decodes to the same batch, rejects and errors
// with the fast path as with fastjson alone.
func FuzzFastJSON(f *testing.F) {
	for _, ln := range fastTestLines {
		f.Add([]byte(ln), false)
	}
	f.Add([]byte(`{"s":"x","extra":1}`), true)
	f.Fuzz(func(t *testing.T, data []byte, rejectUnknown bool) {
		decodeBoth(t, data, rejectUnknown)
	})
}
