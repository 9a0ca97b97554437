package stages

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fastjson"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

func mustType(t testing.TB, s string) arrow.DataType {
	t.Helper()
	dt, err := config.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

func writeFile(t testing.TB, name string, data []byte, gz bool) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if gz {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(data)
		w.Close()
		data = b.Bytes()
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// decodeAll runs a JSONLines source over a file and returns the batches'
// rows as JSON strings, and the rejects.
func decodeAll(t testing.TB, s *JSONLines) ([]string, []pipeline.Reject, error) {
	t.Helper()
	var rows []string
	var rejects []pipeline.Reject
	err := s.Chunks(context.Background(), func(c pipeline.Chunk) error {
		rej := &pipeline.Rejects{File: c.File}
		b, err := s.Decode(context.Background(), c, rej)
		if err != nil {
			return err
		}
		defer b.Release()
		for i := 0; i < int(b.NumRows()); i++ {
			rows = append(rows, pipeline.RowJSON(b, i))
		}
		rejects = append(rejects, rej.List()...)
		return nil
	})
	return rows, rejects, err
}

func TestJSONLinesDecode(t *testing.T) {
	cols := func(t testing.TB) []JSONColumn {
		return []JSONColumn{
			{Name: "id", Type: mustType(t, "string")},
			{Name: "n", Type: mustType(t, "int64")},
			{Name: "p", Type: mustType(t, "float64")},
			{Name: "tags", Type: mustType(t, "list<string>")},
			{Name: "raw_text", Keys: []string{"raw_text", "text"}, Type: mustType(t, "string")},
			{Name: "st", Type: mustType(t, "list<struct<text:string,citations:list<string>>>")},
		}
	}
	long := strings.Repeat("x", 200<<10) // far over bufio.Scanner's 64 KiB default
	tests := []struct {
		name    string
		input   string
		reject  bool
		want    []string
		rejects []string // rule:line
		err     string
	}{
		{
			name:  "pandas dialect: escaped slash, unicode escapes, surrogate pair, null, missing key",
			input: `{"id":"a\/b","n":1,"p":0.902595571,"tags":["caf\u00e9","\ud83d\ude00"],"raw_text":null}` + "\n",
			want:  []string{`{"id":"a/b","n":1,"p":0.902595571,"raw_text":null,"st":null,"tags":["café","😀"]}`},
		},
		{
			// Both keys with one value are read; two values are not
			// for agora to choose between (raw_text won, silently).
			name: "text accepted for raw_text; both present must agree",
			input: `{"id":"x","text":"old name"}` + "\n" + `{"id":"y","text":"old","raw_text":"new"}` + "\n" + `{"id":"z","raw_text":"same","text":"s\u0061me"}` + "\n" +
				`{"id":"n","raw_text":null,"text":"given"}` + "\n" + `{"id":"r","text":"x","raw_text":"x","text":"x"}` + "\n",
			want: []string{`{"id":"x","n":null,"p":null,"raw_text":"old name","st":null,"tags":null}`, `{"id":"z","n":null,"p":null,"raw_text":"same","st":null,"tags":null}`,
				`{"id":"n","n":null,"p":null,"raw_text":"given","st":null,"tags":null}`},
			rejects: []string{"duplicate_key:2", "duplicate_key:5"},
		},
		{
			name:  "list of structs, CRLF, blank line, integral float as int",
			input: "{\"id\":\"s\",\"n\":2.0,\"st\":[{\"text\":\"\\nfirst\",\"citations\":[\"r1\",\"r2\"]},{\"citations\":[],\"text\":\"t\"}]}\r\n\r\n",
			want:  []string{`{"id":"s","n":2,"p":null,"raw_text":null,"st":[{"citations":["r1","r2"],"text":"\nfirst"},{"citations":[],"text":"t"}],"tags":null}`},
		},
		{
			name:  "blank lines of JSON's white space are passed over",
			input: " \t \n" + `{"id":"a"}` + "\n\t\r\n",
			want:  []string{`{"id":"a","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`},
		},
		{
			// Not JSON's white space: passed over as blank, its row was
			// counted nowhere.
			name:  "a line of no-break spaces is no JSON",
			input: `{"id":"a"}` + "\n\u00a0\u00a0\n",
			err:   "data.jsonl:2: invalid JSON",
		},
		{
			name:  "a line of a form feed is no JSON",
			input: `{"id":"a"}` + "\n\f\n",
			err:   "data.jsonl:2: invalid JSON",
		},
		{
			name:  "a line of 200 KiB",
			input: `{"id":"` + long + `"}` + "\n",
			want:  []string{`{"id":"` + long + `","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`},
		},
		{
			name:    "wrong types are rejected with their line",
			input:   `{"id":"ok"}` + "\n" + `{"id":"a","tags":"not a list"}` + "\n" + `{"id":"b","n":"3"}` + "\n" + `{"id":"c","n":1.5}` + "\n" + `{"id":"d","p":"0.5"}` + "\n" + `{"id":"e"}` + "\n",
			want:    []string{`{"id":"ok","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`, `{"id":"e","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`},
			rejects: []string{"type:2", "type:3", "type:4", "type:5"},
		},
		{
			name:  "bad JSON fails with file and line",
			input: `{"id":"ok"}` + "\n" + `{"id":"ok"}` + "\n" + `{"id": tru` + "\n",
			err:   "data.jsonl:3: invalid JSON",
		},
		{
			name:    "bad JSON rejected when asked",
			input:   `{"id":"ok"}` + "\n" + `[1,2]` + "\n" + `{"id": tru` + "\n",
			reject:  true,
			want:    []string{`{"id":"ok","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`},
			rejects: []string{"decode:2", "decode:3"},
		},
		{
			name:    "an escape outside a string stays bad JSON",
			input:   `{"id":"ok"}` + "\n" + `{"id":"\u00e9"} \u0020` + "\n",
			reject:  true,
			want:    []string{`{"id":"ok","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`},
			rejects: []string{"decode:2"},
		},
		{
			name:    "a number out of float64's range is rejected, not made infinite",
			input:   `{"id":"a","p":1e400}` + "\n" + `{"id":"b","p":-1e400}` + "\n" + `{"id":"c","p":1e308}` + "\n",
			want:    []string{`{"id":"c","n":null,"p":1e+308,"raw_text":null,"st":null,"tags":null}`},
			rejects: []string{"type:1", "type:2"},
		},
		{
			// fastfloat alone read these a unit in the last place off
			// (2.7412500000000002e-05); Python's float() does not.
			name:  "floats with an exponent or many digits are read correctly rounded, and integral floats only under 2^53",
			input: `{"id":"a","p":2.74125e-05}` + "\n" + `{"id":"b","p":6.958329e-01}` + "\n" + `{"id":"c","p":7.02916E-3}` + "\n" + `{"id":"d","p":0.19999999999999996}` + "\n" + `{"id":"e","n":9007199254740993.0}` + "\n" + `{"id":"f","n":9007199254740991.0}` + "\n",
			want: []string{
				`{"id":"a","n":null,"p":0.0000274125,"raw_text":null,"st":null,"tags":null}`,
				`{"id":"b","n":null,"p":0.6958329,"raw_text":null,"st":null,"tags":null}`,
				`{"id":"c","n":null,"p":0.00702916,"raw_text":null,"st":null,"tags":null}`,
				`{"id":"d","n":null,"p":0.19999999999999996,"raw_text":null,"st":null,"tags":null}`,
				`{"id":"f","n":9007199254740991,"p":null,"raw_text":null,"st":null,"tags":null}`,
			},
			rejects: []string{"type:5"},
		},
		{
			name:    "invalid UTF-8 is rejected",
			input:   "{\"id\":\"\xff\xfe\"}\n",
			rejects: []string{"type:1"},
		},
		{
			name: "invalid UTF-8 in a list or a struct is rejected, escapes or not",
			input: "{\"id\":\"a\",\"tags\":[\"ok\",\"\xc3\"]}\n" +
				"{\"id\":\"b\\u00e9\",\"st\":[{\"text\":\"\xed\xa0\x80\"}]}\n" +
				"{\"id\":\"c\\u00e9\",\"tags\":[\"\xc3\xa9\"]}\n",
			want:    []string{`{"id":"cé","n":null,"p":null,"raw_text":null,"st":null,"tags":["é"]}`},
			rejects: []string{"type:1", "type:2"},
		},
		{
			name:  "escapes: quote, backslash, control, escaped backslash, in keys",
			input: `{"i\u0064":"\u0022\u005c\u0001\\u0041\u0041","tags":["\\ud800x","\ud83d\ude00\u00e9","\\\u00e9","\/\b\f\n\r\t"]}` + "\n",
			want:  []string{`{"id":"\"\\\u0001\\u0041A","n":null,"p":null,"raw_text":null,"st":null,"tags":["\\ud800x","😀é","\\é","/\b\f\n\r\t"]}`},
		},
		{
			// fastjson kept them as text; Python's json, DuckDB and pyarrow
			// refuse the line.
			name: "escapes JSON does not have are bad JSON, in any string",
			input: `{"id":"\u12"}` + "\n" + `{"id":"a","tags":["\uzzzz"]}` + "\n" + `{"id":"a\qb"}` + "\n" + `{"id":"\x41"}` + "\n" +
				`{"id":"\'"}` + "\n" + `{"id":"x","st":[{"text":"\é"}]}` + "\n" + `{"id":"ok \\q"}` + "\n",
			reject:  true,
			want:    []string{`{"id":"ok \\q","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`},
			rejects: []string{"decode:1", "decode:2", "decode:3", "decode:4", "decode:5", "decode:6"},
		},
		{
			name:  "a bad escape stops the run at its line",
			input: `{"id":"a"}` + "\n" + `{"id":"a\qb"}` + "\n",
			err:   `data.jsonl:2: invalid JSON: invalid escape \q at byte 9`,
		},
		{
			// Which value the row means is not for agora to guess: Python
			// keeps the last, the decoders here kept the first.
			name:    "a struct field given twice is rejected",
			input:   `{"id":"a","st":[{"text":"x","text":"y"}]}` + "\n" + `{"id":"b","st":[{"text":"x","other":1,"other":2}]}` + "\n",
			want:    []string{`{"id":"b","n":null,"p":null,"raw_text":null,"st":[{"citations":null,"text":"x"}],"tags":null}`},
			rejects: []string{"duplicate_key:1"},
		},
		{
			// Half a surrogate pair is no character: fastjson kept it as the
			// escape's text or made it U+FFFD, silently.
			name: "lone and broken surrogates are rejected, in any string",
			input: `{"id":"a","tags":["\ud800x"]}` + "\n" + `{"id":"b","tags":["\ud800\u0041"]}` + "\n" + `{"id":"c\udc00\ud800"}` + "\n" +
				`{"id":"d\ud83d"}` + "\n" + `{"id":"e","other":"\ude00"}` + "\n" + `{"id":"f\ud83d\ude00"}` + "\n",
			want:    []string{`{"id":"f😀","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`},
			rejects: []string{"type:1", "type:2", "type:3", "type:4", "type:5"},
		},
		{
			// Readers disagree on which value such a row means (most keep the
			// last, agora's fast path kept the first): the row is rejected.
			name: "a declared key given twice is rejected, on either path",
			input: `{"id":"a","n":1,"n":2}` + "\n" + `{"i\u0064":"b","n":1,"n":2}` + "\n" + `{"id":"c","text":"x","text":"y"}` + "\n" +
				`{"id":"d","raw_text":"y","other":1,"other":2}` + "\n",
			want:    []string{`{"id":"d","n":null,"p":null,"raw_text":"y","st":null,"tags":null}`},
			rejects: []string{"duplicate_key:1", "duplicate_key:2", "duplicate_key:3"},
		},
		{
			// fastjson prefixes its error once per level: 14 KB at 300 deep.
			name:  "a line nested too deep fails in one short message",
			input: `{"id":"a","deep":` + strings.Repeat("[", 301) + strings.Repeat("]", 301) + "}\n",
			err:   "data.jsonl:1: invalid JSON: cannot parse JSON: … too big depth",
		},
		{
			name:  "a byte order mark at the start of the file is skipped",
			input: "\xef\xbb\xbf" + `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n",
			want:  []string{`{"id":"a","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`, `{"id":"b","n":null,"p":null,"raw_text":null,"st":null,"tags":null}`},
		},
		{
			name:  "a byte order mark elsewhere is bad JSON",
			input: `{"id":"a"}` + "\n" + "\xef\xbb\xbf" + `{"id":"b"}` + "\n",
			err:   "data.jsonl:2: invalid JSON",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			p := writeFile(t, "data.jsonl", []byte(tt.input), false)
			s := &JSONLines{Path: p, Name: "data.jsonl", Columns: cols(t), BatchRows: 2, RejectBadLines: tt.reject, Mem: mem}
			rows, rejects, err := decodeAll(t, s)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				if len(err.Error()) > 1000 {
					t.Errorf("an error of %d bytes", len(err.Error()))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rows, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(tt.want, "\n"))
			}
			var got []string
			for _, r := range rejects {
				got = append(got, r.Rule+":"+itoa(r.Line))
				if r.File != "data.jsonl" || r.Reason == "" || r.Row == "" {
					t.Errorf("reject %+v lacks file, reason or row", r)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.rejects, ",") {
				t.Errorf("rejects %v, want %v", got, tt.rejects)
			}
		})
	}
}

// TestJSONLinesTimestamps: a timestamp is an RFC 3339 string or epoch
// milliseconds; one outside the years 1 to 9999 (which Spark and Python
// read) is rejected: milliseconds that do not fit in int64 microseconds
// (not wrapped around), microseconds given for milliseconds (year 55970,
// which pyarrow could not hand to Python), a year-0 string.
func TestJSONLinesTimestamps(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	input := `{"ts":"2024-01-01T00:00:00Z"}` + "\n" + `{"ts":1704067200000}` + "\n" + `{"ts":10000000000000000}` + "\n" + `{"ts":-9300000000000000}` + "\n" + `{"ts":253402300799000}` + "\n" +
		`{"ts":1704067200000000}` + "\n" + `{"ts":"0000-12-31T00:00:00Z"}` + "\n" + `{"ts":-62135596800000}` + "\n" + `{"ts":-62135596800001}` + "\n"
	p := writeFile(t, "data.jsonl", []byte(input), false)
	s := &JSONLines{Path: p, Name: "data.jsonl", Columns: []JSONColumn{{Name: "ts", Type: mustType(t, "timestamp")}}, BatchRows: 8, Mem: mem}
	rows, rejects, err := decodeAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"ts":"2024-01-01T00:00:00Z"}`, `{"ts":"2024-01-01T00:00:00Z"}`, `{"ts":"9999-12-31T23:59:59Z"}`, `{"ts":"0001-01-01T00:00:00Z"}`}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	var got []string
	for _, r := range rejects {
		got = append(got, r.Rule+":"+itoa(r.Line))
		if !strings.Contains(r.Reason, "outside the years 1 to 9999") {
			t.Errorf("reason %q", r.Reason)
		}
	}
	if strings.Join(got, ",") != "type:3,type:4,type:6,type:7,type:9" {
		t.Errorf("rejects %v, want type:3,type:4,type:6,type:7,type:9", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

// flipMiddle returns b with two bytes in its middle inverted.
func flipMiddle(b []byte) []byte {
	b = slices.Clone(b)
	b[len(b)/2] ^= 0xFF
	b[len(b)/2+1] ^= 0xFF
	return b
}

func TestJSONLinesFileErrors(t *testing.T) {
	good := []byte(strings.Repeat(`{"id":"abcdefghij"}`+"\n", 5000))
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(good)
	w.Close()
	tests := []struct {
		name     string
		data     []byte
		gzip     bool
		maxLine  int64
		maxBytes int64
		is       error
		want     string
	}{
		{name: "truncated gzip", data: gz.Bytes()[:gz.Len()/2], gzip: true, is: ErrCorrupt, want: "file ends early"},
		{name: "not gzip at all", data: []byte("plain text"), gzip: true, is: ErrCorrupt, want: "not a gzip file, or a damaged one (gzip: invalid header)"},
		{name: "zeros after the gzip data", data: append(slices.Clone(gz.Bytes()), make([]byte, 100)...), gzip: true, is: ErrCorrupt,
			want: "x.jsonl:5001: unreadable input: bytes after the end of the gzip data that are not gzip (a damaged download, or something appended?) (gzip: invalid header)"},
		{name: "damaged deflate data", data: flipMiddle(gz.Bytes()), gzip: true, is: ErrCorrupt, want: "unreadable input: the gzip data is damaged (a damaged download?) (flate: corrupt input"},
		{name: "line over max_line_bytes", data: []byte(`{"id":"` + strings.Repeat("y", 5000) + `"}` + "\n"), maxLine: 1000, is: ErrLineTooLong, want: "x.jsonl:1:"},
		{name: "decompressed size over max_bytes", data: gz.Bytes(), gzip: true, maxBytes: 10000, is: ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			p := writeFile(t, "x.jsonl", tt.data, false)
			s := &JSONLines{Path: p, Name: "x.jsonl", Gzip: tt.gzip, Columns: []JSONColumn{{Name: "id", Type: arrow.BinaryTypes.String}}, MaxLineBytes: tt.maxLine, MaxBytes: tt.maxBytes, Mem: mem}
			_, _, err := decodeAll(t, s)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), "x.jsonl") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %q should name the file and say %q", err, tt.want)
			}
		})
	}
	t.Run("zero-byte gz and empty file have no rows", func(t *testing.T) {
		for _, gzipped := range []bool{true, false} {
			p := writeFile(t, "e.jsonl.gz", nil, false)
			s := &JSONLines{Path: p, Name: "e", Gzip: gzipped, Columns: []JSONColumn{{Name: "id", Type: arrow.BinaryTypes.String}}}
			rows, _, err := decodeAll(t, s)
			if err != nil || len(rows) != 0 {
				t.Fatalf("gzip=%v: rows %d err %v", gzipped, len(rows), err)
			}
		}
	})
	t.Run("gzip round trip keeps every line", func(t *testing.T) {
		p := writeFile(t, "g.jsonl.gz", good, true)
		s := &JSONLines{Path: p, Name: "g", Gzip: true, BatchRows: 333, Columns: []JSONColumn{{Name: "id", Type: arrow.BinaryTypes.String}}}
		rows, _, err := decodeAll(t, s)
		if err != nil || len(rows) != 5000 {
			t.Fatalf("rows %d err %v", len(rows), err)
		}
	})
}

func TestJSONLinesLineNumbersAcrossChunks(t *testing.T) {
	var in strings.Builder
	for i := 1; i <= 100; i++ {
		if i == 50 {
			in.WriteString("\n") // blank lines still count as lines
		}
		in.WriteString(`{"id":"` + fmtInt(int64(i)) + `"}` + "\n")
	}
	p := writeFile(t, "l.jsonl", []byte(in.String()), false)
	s := &JSONLines{Path: p, Name: "l", BatchRows: 7, Columns: []JSONColumn{{Name: "id", Type: arrow.BinaryTypes.String}}}
	var lines []int64
	err := s.Chunks(context.Background(), func(c pipeline.Chunk) error {
		b, err := s.Decode(context.Background(), c, &pipeline.Rejects{})
		if err != nil {
			return err
		}
		defer b.Release()
		lc := b.Column(1).(*array.Int64)
		for i := 0; i < lc.Len(); i++ {
			lines = append(lines, lc.Value(i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 100 || lines[0] != 1 || lines[48] != 49 || lines[49] != 51 || lines[99] != 101 {
		t.Fatalf("lines %v", lines)
	}
}

// TestSizeHintReserves checks that builders sized from the hints of one
// batch hold a like batch without growing: string bytes (top level, in a
// list, in a struct in a list, in a list in that struct) and list values.
func TestSizeHintReserves(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: mustType(t, "string"), Nullable: true},
		{Name: "l", Type: mustType(t, "list<string>"), Nullable: true},
		{Name: "st", Type: mustType(t, "list<struct<text:string,citations:list<string>>>"), Nullable: true},
	}, nil)
	// Values longer than the 64-byte rounding of Arrow buffers, so a short
	// estimate cannot hide in it.
	v := func(c string, n int) string { return strconv.Quote(strings.Repeat(c, n)) }
	data := []byte(`{"s":` + v("a", 320) + `,"l":[` + v("b", 120) + `,` + v("c", 160) + `],"st":[{"text":` + v("d", 240) + `,"citations":[` + v("1", 100) + `,` + v("2", 200) + `,` + v("3", 300) + `]},{"text":` + v("e", 80) + `,"citations":[]}]}
{"s":` + v("f", 120) + `,"l":[` + v("g", 240) + `],"st":[{"text":` + v("h", 440) + `,"citations":[` + v("4", 400) + `]}]}
`)
	s := &JSONLines{Name: "t", Mem: mem}
	for _, f := range schema.Fields() {
		s.Columns = append(s.Columns, JSONColumn{Name: f.Name, Type: f.Type})
	}
	if _, err := s.Schema(); err != nil {
		t.Fatal(err)
	}
	c := pipeline.Chunk{Data: data, Rows: 2, Line: 1}
	b, err := s.decode(&decodeState{}, c, &pipeline.Rejects{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()

	// Decoding observed b; a new builder reserved for the same chunk
	// must already have room for everything b holds.
	rb := array.NewRecordBuilder(mem, s.schema)
	defer rb.Release()
	s.reserve(rb, c)
	listOf := func(a arrow.Array) arrow.Array { return a.(*array.List).ListValues() }
	structField := func(a arrow.Array, i int) arrow.Array { return a.(*array.Struct).Field(i) }
	for _, tc := range []struct {
		name string
		bld  array.Builder
		arr  arrow.Array
	}{
		{"string", rb.Field(0), b.Column(0)},
		{"list values", rb.Field(1).(*array.ListBuilder).ValueBuilder(), listOf(b.Column(1))},
		{"struct text in list", rb.Field(2).(*array.ListBuilder).ValueBuilder().(*array.StructBuilder).FieldBuilder(0), structField(listOf(b.Column(2)), 0)},
		{"list in struct in list", rb.Field(2).(*array.ListBuilder).ValueBuilder().(*array.StructBuilder).FieldBuilder(1).(*array.ListBuilder).ValueBuilder(), listOf(structField(listOf(b.Column(2)), 1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := tc.bld.(*array.StringBuilder)
			sa := tc.arr.(*array.String)
			if got, want := sb.DataCap(), len(sa.ValueBytes()); got < want {
				t.Errorf("reserved %d string bytes, the batch held %d", got, want)
			}
			if got, want := sb.Cap(), sa.Len(); got < want {
				t.Errorf("reserved %d values, the batch held %d", got, want)
			}
		})
	}
}

// TestSizeHintFollowsInputBytes checks that what one chunk teaches the
// hints is scaled to the next chunk's bytes: a chunk of one row with a
// long list must not make a chunk of many short rows reserve the long
// list's length for every row.
func TestSizeHintFollowsInputBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := &JSONLines{Name: "t", Mem: mem, Columns: []JSONColumn{{Name: "l", Type: mustType(t, "list<string>")}}}
	if _, err := s.Schema(); err != nil {
		t.Fatal(err)
	}
	long := `{"l":["x"` + strings.Repeat(`,"x"`, 20000) + "]}\n"
	c := pipeline.Chunk{Data: []byte(long), Rows: 1, Line: 1}
	b, err := s.decode(&decodeState{}, c, &pipeline.Rejects{})
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
	short := pipeline.Chunk{Data: []byte(strings.Repeat(`{"l":["y"]}`+"\n", 1000)), Rows: 1000, Line: 2}
	rb := array.NewRecordBuilder(mem, s.schema)
	defer rb.Release()
	s.reserve(rb, short)
	vb := rb.Field(0).(*array.ListBuilder).ValueBuilder()
	// Each value takes at least a byte of input: the chunk bounds them.
	if got, most := vb.Cap(), len(short.Data)*9/8+64; got > most {
		t.Errorf("reserved %d list values for a chunk of %d bytes (at most %d)", got, len(short.Data), most)
	}
}

// TestChunkBuffersAreReused: a buffer handed back is handed out again,
// empty; a new one has room for a whole chunk; at most maxFreeBufs wait,
// and a buffer grown far past a chunk is not kept.
func TestChunkBuffersAreReused(t *testing.T) {
	s := &JSONLines{BatchBytes: 1024}
	fresh := s.getBuf()
	if len(fresh) != 0 || cap(fresh) < 1024+128 {
		t.Fatalf("new buffer: len %d cap %d, want 0 and at least %d", len(fresh), cap(fresh), 1024+128)
	}
	b := append(fresh, "a line\n"...)
	s.putBuf(b)
	if got := s.getBuf(); len(got) != 0 || cap(got) != cap(b) || &got[:1][0] != &b[0] {
		t.Errorf("handed back buffer not reused: len %d cap %d", len(got), cap(got))
	}
	for i := 0; i < maxFreeBufs+5; i++ {
		s.putBuf(make([]byte, 1, 2048))
	}
	if len(s.bufs) != maxFreeBufs {
		t.Errorf("%d buffers kept, want %d", len(s.bufs), maxFreeBufs)
	}
	s.bufs = nil
	s.putBuf(make([]byte, 1, 5*1024))
	if len(s.bufs) != 0 {
		t.Errorf("a buffer of 5 chunks was kept")
	}
}

// TestErrTypeWording checks a wrong-type reason names the value once.
func TestErrTypeWording(t *testing.T) {
	for _, tt := range []struct{ json, want string }{
		{`true`, "want string, got true"},
		{`null`, "want string, got null"},
		{`12`, "want string, got number 12"},
		{`[1,2]`, "want string, got array [1,2]"},
	} {
		v, err := fastjson.Parse(tt.json)
		if err != nil {
			t.Fatal(err)
		}
		if got := errType("string", v).Error(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.json, got, tt.want)
		}
	}
}

// TestJSONLinesNotesColumnsNeverValued: a declared column that no line
// gives a value (a dotted name for a nested key, a key the file never
// has, a key always null) is noted with the rows read; the note on a
// dotted name says it is no path. They were read as nulls without a word.
func TestJSONLinesNotesColumnsNeverValued(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	input := `{"id":"a","r":{"country":"UK"},"gone":null}` + "\n" + `{"id":"b","r":{"country":"FR"}}` + "\n"
	p := writeFile(t, "data.jsonl", []byte(input), false)
	s := &JSONLines{Path: p, Name: "data.jsonl", Columns: []JSONColumn{
		{Name: "id", Type: mustType(t, "string")},
		{Name: "r.country", Type: mustType(t, "string")},
		{Name: "gone", Type: mustType(t, "int64")},
	}, BatchRows: 1, Mem: mem}
	if notes := s.Notes(); notes != nil {
		t.Errorf("notes before reading: %q", notes)
	}
	if _, _, err := decodeAll(t, s); err != nil {
		t.Fatal(err)
	}
	notes := s.Notes()
	want := "data.jsonl: r.country, gone null in every row read (2 rows: without the key, or null; lines rejected as they were read not counted); a dotted name is one key"
	if len(notes) != 1 || !strings.HasPrefix(notes[0], want) {
		t.Errorf("notes %q, want one starting %q", notes, want)
	}
}

// TestJSONLinesNumberGrammar: a number JSON does not allow (01, .5, 1.,
// +1, 1e, and the words nan, -inf, INF, -NaN) rejects its row, as Python's json, DuckDB and pyarrow refuse
// it; fastjson took them and agora read a guess. The words Python writes
// (NaN, Infinity, -Infinity) and exponents (1e2 as an integer) are read:
// Infinity stopped the run as invalid JSON (fastjson reads Inf only),
// and inside a string it stays as written.
func TestJSONLinesNumberGrammar(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	lines := []string{`{"i":01}`, `{"f":.5}`, `{"f":1.}`, `{"i":+1}`, `{"f":1e}`, `{"f":-0.5e-3,"i":1e2}`, `{"f":-Infinity,"i":-0}`, `{"f":NaN,"i":10}`, `{"f":01.5}`, `{"f":Infinity,"s":"Infinity \" Infinity"}`, `{"f":nan}`, `{"f":-inf}`, `{"f":INF}`, `{"f":-NaN}`}
	p := writeFile(t, "data.jsonl", []byte(strings.Join(lines, "\n")+"\n"), false)
	s := &JSONLines{Path: p, Name: "data.jsonl", Columns: []JSONColumn{{Name: "i", Type: mustType(t, "int64")}, {Name: "f", Type: mustType(t, "float64")}, {Name: "s", Type: mustType(t, "string")}}, BatchRows: 4, Mem: mem}
	rows, rejects, err := decodeAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"f":-0.0005,"i":100,"s":null}`, `{"f":"-Inf","i":0,"s":null}`, `{"f":"NaN","i":10,"s":null}`, `{"f":"+Inf","i":null,"s":"Infinity \" Infinity"}`}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	var got []string
	for _, r := range rejects {
		got = append(got, r.Rule+":"+itoa(r.Line))
	}
	if strings.Join(got, ",") != "type:1,type:2,type:3,type:4,type:5,type:9,type:11,type:12,type:13,type:14" {
		t.Errorf("rejects %v, want lines 1 to 5, 9 and 11 to 14", got)
	}
}

// TestJSONLinesEpochSecondsNoted: a timestamp column whose every value
// lands in 1970-01-01 to 1973-03-03 was most likely written in epoch
// seconds where milliseconds are read (1740819420 read as 1970-01-21):
// the file's notes say so; one value outside that span (milliseconds, a
// date before 1970) says nothing.
func TestJSONLinesEpochSecondsNoted(t *testing.T) {
	for _, tt := range []struct {
		name, lines string
		noted       bool
	}{
		{"seconds", `{"ts":1740819420}` + "\n" + `{"ts":null}` + "\n" + `{"ts":1740819480}` + "\n", true},
		{"milliseconds", `{"ts":1740819420000}` + "\n", false},
		{"seconds and one string of 2025", `{"ts":1740819420}` + "\n" + `{"ts":"2025-03-01T10:00:00Z"}` + "\n", false},
		{"before 1970", `{"ts":"1969-07-20T20:17:00Z"}` + "\n", false},
		{"no values", `{"ts":null}` + "\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			p := writeFile(t, "data.jsonl", []byte(tt.lines), false)
			s := &JSONLines{Path: p, Name: "data.jsonl", Columns: []JSONColumn{{Name: "ts", Type: mustType(t, "timestamp")}}, BatchRows: 1, Mem: mem}
			if _, _, err := decodeAll(t, s); err != nil {
				t.Fatal(err)
			}
			noted := slices.ContainsFunc(s.Notes(), func(n string) bool {
				return strings.Contains(n, "every timestamp of ts is between 1970-01-01 and 1973-03-03")
			})
			if noted != tt.noted {
				t.Errorf("noted %v, want %v: %q", noted, tt.noted, s.Notes())
			}
		})
	}
}

// TestJSONLinesTimestampRejectSaysWhatIsWanted: a timestamp string that is
// not RFC 3339 is rejected with an example of one, not with Go's layout
// string ("2006-01-02T15:04:05.999999999Z07:00").
func TestJSONLinesTimestampRejectSaysWhatIsWanted(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := writeFile(t, "data.jsonl", []byte(`{"ts":"2025-03-01 10:00:00"}`+"\n"), false)
	s := &JSONLines{Path: p, Name: "data.jsonl", Columns: []JSONColumn{{Name: "ts", Type: mustType(t, "timestamp")}}, BatchRows: 1, Mem: mem}
	_, rejects, err := decodeAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rejects) != 1 || !strings.Contains(rejects[0].Reason, `"2025-03-01 10:00:00" is not an RFC 3339 timestamp with its zone (2024-01-02T03:04:05Z`) || strings.Contains(rejects[0].Reason, "2006") {
		t.Errorf("rejects %+v", rejects)
	}
}

// TestSameJSON: a column's name and its alias agree when their values
// are equal as JSON, not only as text.
func TestSameJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`1`, `1.0`, true},
		{`100`, `1e2`, true},
		{`9007199254740993`, `9007199254740992`, false},
		{`"\u00e9"`, `"é"`, true},
		{`{"a":1,"b":[2,"x"]}`, `{"b":[2.0,"x"],"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`true`, `true`, true},
		{`"1"`, `1`, false},
	} {
		a, b := fastjson.MustParse(tc.a), fastjson.MustParse(tc.b)
		if got := sameJSON(a, b); got != tc.same {
			t.Errorf("sameJSON(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

// TestJSONLinesAliasListedTwice: an alias listed twice (which the config
// does not refuse) neither panics nor changes what is read.
func TestJSONLinesAliasListedTwice(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	p := filepath.Join(t.TempDir(), "data.jsonl")
	os.WriteFile(p, []byte(`{"id":"a","text":"x"}`+"\n"+`{"id":"b","raw_text":"y","text":"y"}`+"\n"), 0o644)
	s := &JSONLines{Path: p, Name: "data.jsonl", Mem: mem, Columns: []JSONColumn{
		{Name: "id", Type: mustType(t, "string")},
		{Name: "raw_text", Keys: []string{"raw_text", "text", "text"}, Type: mustType(t, "string")},
	}}
	rows, rejects, err := decodeAll(t, s)
	if err != nil || len(rejects) != 0 || strings.Join(rows, "\n") != `{"id":"a","raw_text":"x"}`+"\n"+`{"id":"b","raw_text":"y"}` {
		t.Errorf("rows %q, rejects %v, err %v", rows, rejects, err)
	}
}
