package stages

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// Helpers shared by flatten_test.go, validate_test.go and derive_test.go.
// They carry a "tc" prefix so they do not clash with other test files of
// the package.

// tcSchema builds a schema from "name:type" pairs, with types in the
// config grammar (list<string>, struct<a:int64>, ...). Every field is
// nullable.
func tcSchema(t testing.TB, cols ...string) *arrow.Schema {
	t.Helper()
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		name, typ, ok := strings.Cut(c, ":")
		if !ok {
			t.Fatalf("column %q: want name:type", c)
		}
		dt, err := config.ParseType(typ)
		if err != nil {
			t.Fatalf("column %s: %v", name, err)
		}
		fs[i] = arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

// tcBatch builds a batch from a JSON array of row objects. The caller
// releases it.
func tcBatch(t testing.TB, mem memory.Allocator, s *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	b, _, err := array.RecordFromJSON(mem, s, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("RecordFromJSON(%s): %v", rows, err)
	}
	return b
}

// tcRows renders each row of b with pipeline.RowJSON. When b has the line
// column the row is prefixed with its line, "3:{...}", so tests see that
// lines are carried.
func tcRows(b arrow.RecordBatch) []string {
	if b == nil {
		return nil
	}
	hasLine := colIndex(b.Schema(), pipeline.LineColumn) >= 0
	out := make([]string, b.NumRows())
	for i := range out {
		out[i] = pipeline.RowJSON(b, i)
		if hasLine {
			out[i] = fmt.Sprintf("%d:%s", pipeline.LineOf(b, i), out[i])
		}
	}
	return out
}

// tcNames returns the column names of a schema.
func tcNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}

// tcRejects renders rejects as "rule column line".
func tcRejects(rs []pipeline.Reject) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s %s %d", r.Rule, r.Column, r.Line))
	}
	return out
}

// tcEqualRejects fails the test unless the rejects are want ("rule column
// line"), the i-th reason says reasons[i], and each names its file and
// holds its row.
func tcEqualRejects(t testing.TB, got []pipeline.Reject, want, reasons []string) {
	t.Helper()
	tcEqual(t, "rejects", tcRejects(got), want)
	for i, r := range got {
		if i < len(reasons) && !strings.Contains(r.Reason, reasons[i]) {
			t.Errorf("reject %d: reason %q does not say %q", i, r.Reason, reasons[i])
		}
		if r.File != "in.jsonl" || !strings.HasPrefix(r.Row, "{") {
			t.Errorf("reject %d lacks file or row: %+v", i, r)
		}
	}
}

// tcEqual fails the test when got and want differ, showing both one item
// a line. A nil and an empty slice are equal.
func tcEqual(t testing.TB, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n  got  %s\n  want %s", what, strings.Join(got, "\n       "), strings.Join(want, "\n       "))
	}
}

// tcWantErr checks that err is set and contains every substring.
func tcWantErr(t testing.TB, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want an error containing %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err %q does not contain %q", err, s)
		}
	}
}

// tcProcess runs one batch through st and returns the output rows and the
// rejects. It checks the output schema against st.Schema() when the stage
// has one, and releases the output.
func tcProcess(t testing.TB, st pipeline.Stage, in arrow.RecordBatch) ([]string, []pipeline.Reject) {
	t.Helper()
	rej := &pipeline.Rejects{File: "in.jsonl"}
	out, err := st.Process(t.Context(), in, rej)
	if err != nil {
		t.Fatalf("Process: %v", err)
	}
	if out == nil {
		t.Fatalf("Process returned no batch")
	}
	defer out.Release()
	if ss, ok := st.(interface{ Schema() *arrow.Schema }); ok && !out.Schema().Equal(ss.Schema()) {
		t.Errorf("output schema %s, Schema() says %s", out.Schema(), ss.Schema())
	}
	for i, c := range out.Columns() {
		if int64(c.Len()) != out.NumRows() {
			t.Errorf("column %d has %d rows, batch %d", i, c.Len(), out.NumRows())
		}
	}
	return tcRows(out), rej.List()
}

// jsonBatches cuts JSON rows into batches of size rows (the last may
// hold fewer), each a JSON array for tcBatch.
func jsonBatches(rows []string, size int) []string {
	var out []string
	for at := 0; at < len(rows); at += size {
		out = append(out, "["+strings.Join(rows[at:min(at+size, len(rows))], ",")+"]")
	}
	return out
}

// tcProcessAll runs st's Process on each batch of JSON rows in turn,
// letting its output go, and returns the first error (nil if none).
func tcProcessAll(t testing.TB, st pipeline.Stage, mem memory.Allocator, s *arrow.Schema, batches []string) error {
	t.Helper()
	for _, js := range batches {
		in := tcBatch(t, mem, s, js)
		out, err := st.Process(t.Context(), in, &pipeline.Rejects{})
		in.Release()
		if out != nil {
			out.Release()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tcConcurrent runs Process on the same batch from several goroutines at
// once, as the runner does for stages that are not Ordered, and checks
// every result (run with -race).
func tcConcurrent(t *testing.T, st pipeline.Stage, in arrow.RecordBatch) {
	t.Helper()
	want, _ := tcProcess(t, st, in)
	const n = 8
	got := make([][]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			out, err := st.Process(t.Context(), in, &pipeline.Rejects{})
			if err != nil {
				errs[g] = err
				return
			}
			got[g] = tcRows(out)
			out.Release()
		})
	}
	wg.Wait()
	for g := range n {
		if errs[g] != nil {
			t.Fatalf("goroutine %d: %v", g, errs[g])
		}
		tcEqual(t, fmt.Sprintf("goroutine %d rows", g), got[g], want)
	}
}

func TestSnakeCaseFunc(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"dotted path", "candidates.metadata.id", "candidates_metadata_id"},
		{"camel case", "reviewerId", "reviewer_id"},
		{"acronym then word", "HTTPServer", "http_server"},
		{"acronym inside", "getHTTPResponse", "get_http_response"},
		{"acronym at end", "userID", "user_id"},
		{"double dot", "a..b", "a_b"},
		{"already snake", "already_snake_case", "already_snake_case"},
		{"pascal case", "PascalCase", "pascal_case"},
		{"digit before upper", "v2Score", "v2_score"},
		{"digits kept", "p95", "p95"},
		{"space and hyphen", "first name-last", "first_name_last"},
		{"upper after separator", "Foo.Bar", "foo_bar"},
		{"leading and trailing separators", ".x.", "x"},
		{"all upper", "ID", "id"},
		{"non-ASCII letters", "ÉtéTemps", "été_temps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SnakeCase(tt.in); got != tt.want {
				t.Errorf("SnakeCase(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestProject(t *testing.T) {
	base := []string{"a:string", "b:int64", "c:list<string>", "_line:int64"}
	rows := `[{"a":"x","b":1,"c":["p"],"_line":1},{"a":null,"b":2,"c":null,"_line":2}]`
	tests := []struct {
		name  string
		cols  []string
		build func(*arrow.Schema) (*Project, error)
		kind  string
		names []string
		rows  []string
		err   []string // substrings of the build error
		noCol bool     // the error wraps ErrNoColumn
	}{
		{
			name:  "rename one column",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewRename(s, map[string]string{"a": "alpha"}) },
			kind:  "rename",
			names: []string{"alpha", "b", "c", "_line"},
			rows:  []string{`1:{"alpha":"x","b":1,"c":["p"]}`, `2:{"alpha":null,"b":2,"c":null}`},
		},
		{
			name:  "rename swaps two columns",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewRename(s, map[string]string{"a": "b", "b": "a"}) },
			kind:  "rename",
			names: []string{"b", "a", "c", "_line"},
			rows:  []string{`1:{"a":1,"b":"x","c":["p"]}`, `2:{"a":2,"b":null,"c":null}`},
		},
		{
			name:  "rename onto an existing column",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewRename(s, map[string]string{"a": "b"}) },
			err:   []string{"rename", `two columns named "b"`},
		},
		{
			name:  "rename two columns to one name",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewRename(s, map[string]string{"a": "z", "b": "z"}) },
			err:   []string{`two columns named "z"`},
		},
		{
			name:  "rename an unknown column",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewRename(s, map[string]string{"nope": "x"}) },
			err:   []string{"rename", `"nope"`, "have a, b, c"},
			noCol: true,
		},
		{
			name:  "rename to an empty name",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewRename(s, map[string]string{"a": ""}) },
			err:   []string{"empty column name"},
		},
		{
			name:  "snake_case leaves internal columns alone",
			cols:  []string{"candidates.metadata.id:string", "reviewerId:int64", "HTTPServer:string", "a..b:string", "_x:string", "_line:int64"},
			build: NewSnakeCase,
			kind:  "snake_case",
			names: []string{"candidates_metadata_id", "reviewer_id", "http_server", "a_b", "_x", "_line"},
		},
		{
			name:  "snake_case collision",
			cols:  []string{"a.b:string", "a_b:string"},
			build: NewSnakeCase,
			err:   []string{"snake_case", `two columns named "a_b" (from a.b and a_b)`},
		},
		{
			name:  "drop columns",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewDrop(s, []string{"b", "c"}) },
			kind:  "drop",
			names: []string{"a", "_line"},
			rows:  []string{`1:{"a":"x"}`, `2:{"a":null}`},
		},
		{
			name:  "drop the first column keeps the right data",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewDrop(s, []string{"a"}) },
			kind:  "drop",
			names: []string{"b", "c", "_line"},
			rows:  []string{`1:{"b":1,"c":["p"]}`, `2:{"b":2,"c":null}`},
		},
		{
			name:  "drop an unknown column",
			cols:  base,
			build: func(s *arrow.Schema) (*Project, error) { return NewDrop(s, []string{"a", "nope"}) },
			err:   []string{"drop", `"nope"`},
			noCol: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, tt.cols...)
			p, err := tt.build(s)
			if tt.err != nil {
				tcWantErr(t, err, tt.err...)
				if tt.noCol && !errors.Is(err, ErrNoColumn) {
					t.Errorf("err %v does not wrap ErrNoColumn", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != tt.kind {
				t.Errorf("Name() = %q, want %q", p.Name(), tt.kind)
			}
			tcEqual(t, "names", tcNames(p.Schema()), tt.names)
			if tt.rows == nil {
				return
			}
			in := tcBatch(t, mem, s, rows)
			defer in.Release()
			before := mem.CurrentAlloc()
			out, err := p.Process(t.Context(), in, &pipeline.Rejects{})
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if mem.CurrentAlloc() != before {
				t.Errorf("Process allocated %d bytes; a projection never copies data", mem.CurrentAlloc()-before)
			}
			// Every output column is an input column, shared.
			for i, c := range out.Columns() {
				shared := false
				for _, ic := range in.Columns() {
					shared = shared || c.Data() == ic.Data()
				}
				if !shared {
					t.Errorf("output column %d (%s) is a copy", i, out.ColumnName(i))
				}
			}
			tcEqual(t, "rows", tcRows(out), tt.rows)
		})
	}
}

func TestUnpivot(t *testing.T) {
	// quality has no p_n column: its p_n is null.
	wide := []string{"id:string", "helpfulness_mean:float64", "helpfulness_p_n:int64", "quality_mean:float64", "safety_mean:float64", "safety_p_n:int64", "note:string", "_line:int64"}
	wideRows := `[
		{"id":"a","helpfulness_mean":1.5,"helpfulness_p_n":3,"quality_mean":2.5,"safety_mean":null,"safety_p_n":4,"note":"n1","_line":7},
		{"id":"b","helpfulness_mean":0.5,"helpfulness_p_n":null,"quality_mean":3,"safety_mean":4,"safety_p_n":5,"note":null,"_line":8}
	]`
	dims := []string{"helpfulness", "quality", "safety"}
	tests := []struct {
		name    string
		cols    []string
		rows    string
		slice   []int64 // process in.NewSlice(slice[0], slice[1])
		varName string
		pattern string
		dims    []string
		fields  []string
		into    string
		keep    []string
		names   []string
		want    []string
	}{
		{
			name:    "family over three dims, missing field is null, row-major order",
			cols:    wide,
			rows:    wideRows,
			varName: "dimension",
			pattern: "{dimension}_{field}",
			dims:    dims,
			fields:  []string{"mean", "p_n"},
			names:   []string{"id", "note", "_line", "dimension", "mean", "p_n"},
			want: []string{
				`7:{"dimension":"helpfulness","id":"a","mean":1.5,"note":"n1","p_n":3}`,
				`7:{"dimension":"quality","id":"a","mean":2.5,"note":"n1","p_n":null}`,
				`7:{"dimension":"safety","id":"a","mean":null,"note":"n1","p_n":4}`,
				`8:{"dimension":"helpfulness","id":"b","mean":0.5,"note":null,"p_n":null}`,
				`8:{"dimension":"quality","id":"b","mean":3,"note":null,"p_n":null}`,
				`8:{"dimension":"safety","id":"b","mean":4,"note":null,"p_n":5}`,
			},
		},
		{
			name:    "declared dimension order, not column order",
			cols:    wide,
			rows:    wideRows,
			varName: "dimension",
			pattern: "{dimension}_{field}",
			dims:    []string{"safety", "helpfulness"},
			fields:  []string{"p_n"},
			into:    "aspect",
			keep:    []string{"id"},
			names:   []string{"id", "_line", "aspect", "p_n"},
			want: []string{
				`7:{"aspect":"safety","id":"a","p_n":4}`,
				`7:{"aspect":"helpfulness","id":"a","p_n":3}`,
				`8:{"aspect":"safety","id":"b","p_n":5}`,
				`8:{"aspect":"helpfulness","id":"b","p_n":null}`,
			},
		},
		{
			name:    "keep carries a folder input's file and line",
			cols:    []string{"id:string", "safety_p_n:int64", "_file:string", "_line:int64"},
			rows:    `[{"id":"a","safety_p_n":4,"_file":"f/g1","_line":7}]`,
			varName: "dimension",
			pattern: "{dimension}_{field}",
			dims:    []string{"safety"},
			fields:  []string{"p_n"},
			into:    "aspect",
			keep:    []string{"id"},
			names:   []string{"id", "_file", "_line", "aspect", "p_n"},
			want:    []string{`7:{"aspect":"safety","id":"a","p_n":4}`},
		},
		{
			name:    "keep repeats only the named columns, line carried",
			cols:    wide,
			rows:    wideRows,
			varName: "dimension",
			pattern: "{dimension}_{field}",
			dims:    dims,
			fields:  []string{"mean"},
			keep:    []string{"note", "id"},
			names:   []string{"note", "id", "_line", "dimension", "mean"},
			want: []string{
				`7:{"dimension":"helpfulness","id":"a","mean":1.5,"note":"n1"}`,
				`7:{"dimension":"quality","id":"a","mean":2.5,"note":"n1"}`,
				`7:{"dimension":"safety","id":"a","mean":null,"note":"n1"}`,
				`8:{"dimension":"helpfulness","id":"b","mean":0.5,"note":null}`,
				`8:{"dimension":"quality","id":"b","mean":3,"note":null}`,
				`8:{"dimension":"safety","id":"b","mean":4,"note":null}`,
			},
		},
		{
			name:    "pattern of the dimension alone with a single field",
			cols:    []string{"id:string", "helpfulness:list<string>", "quality:list<string>", "_line:int64"},
			rows:    `[{"id":"a","helpfulness":["x","y"],"quality":null,"_line":1},{"id":"b","helpfulness":[],"quality":["z"],"_line":2}]`,
			varName: "dimension",
			pattern: "{dimension}",
			dims:    []string{"helpfulness", "quality"},
			fields:  []string{"votes"},
			names:   []string{"id", "_line", "dimension", "votes"},
			want: []string{
				`1:{"dimension":"helpfulness","id":"a","votes":["x","y"]}`,
				`1:{"dimension":"quality","id":"a","votes":null}`,
				`2:{"dimension":"helpfulness","id":"b","votes":[]}`,
				`2:{"dimension":"quality","id":"b","votes":["z"]}`,
			},
		},
		{
			name:    "other var name, into defaults to it",
			cols:    []string{"k:int64", "score_x:int32", "score_y:int32"},
			rows:    `[{"k":1,"score_x":10,"score_y":20}]`,
			varName: "axis",
			pattern: "score_{axis}",
			dims:    []string{"x", "y"},
			fields:  []string{"score"},
			names:   []string{"k", "axis", "score"},
			want:    []string{`{"axis":"x","k":1,"score":10}`, `{"axis":"y","k":1,"score":20}`},
		},
		{
			name:    "one dimension",
			cols:    wide,
			rows:    wideRows,
			varName: "dimension",
			pattern: "{dimension}_{field}",
			dims:    []string{"safety"},
			fields:  []string{"mean", "p_n"},
			keep:    []string{"id"},
			names:   []string{"id", "_line", "dimension", "mean", "p_n"},
			want:    []string{`7:{"dimension":"safety","id":"a","mean":null,"p_n":4}`, `8:{"dimension":"safety","id":"b","mean":4,"p_n":5}`},
		},
		{
			name:    "sliced input batch",
			cols:    wide,
			rows:    wideRows,
			slice:   []int64{1, 2},
			varName: "dimension",
			pattern: "{dimension}_{field}",
			dims:    dims,
			fields:  []string{"mean", "p_n"},
			keep:    []string{"id"},
			names:   []string{"id", "_line", "dimension", "mean", "p_n"},
			want: []string{
				`8:{"dimension":"helpfulness","id":"b","mean":0.5,"p_n":null}`,
				`8:{"dimension":"quality","id":"b","mean":3,"p_n":null}`,
				`8:{"dimension":"safety","id":"b","mean":4,"p_n":5}`,
			},
		},
		{
			name:    "empty batch gives an empty batch",
			cols:    wide,
			rows:    `[]`,
			varName: "dimension",
			pattern: "{dimension}_{field}",
			dims:    dims,
			fields:  []string{"mean", "p_n"},
			names:   []string{"id", "note", "_line", "dimension", "mean", "p_n"},
			want:    nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, tt.cols...)
			u, err := NewUnpivot(mem, s, tt.varName, tt.pattern, tt.dims, tt.fields, tt.into, tt.keep)
			if err != nil {
				t.Fatal(err)
			}
			if u.Name() != "unpivot" {
				t.Errorf("Name() = %q", u.Name())
			}
			tcEqual(t, "names", tcNames(u.Schema()), tt.names)
			in := tcBatch(t, mem, s, tt.rows)
			defer in.Release()
			if tt.slice != nil {
				sl := in.NewSlice(tt.slice[0], tt.slice[1])
				defer sl.Release()
				in = sl
			}
			rows, rej := tcProcess(t, u, in)
			tcEqual(t, "rows", rows, tt.want)
			if len(rej) != 0 {
				t.Errorf("unexpected rejects %v", tcRejects(rej))
			}
		})
	}
}

func TestUnpivotErrors(t *testing.T) {
	tests := []struct {
		name    string
		cols    []string
		pattern string
		fields  []string
		into    string
		keep    []string
		err     []string
		noCol   bool
	}{
		{
			name:    "type differs across dimensions",
			cols:    []string{"id:string", "a_mean:float64", "b_mean:int64", "c_mean:float64"},
			pattern: "{dimension}_{field}",
			fields:  []string{"mean"},
			err:     []string{"unpivot", "b_mean", "int64", "float64", `"mean"`},
		},
		{
			name:    "no column matches a field",
			cols:    []string{"id:string", "a_mean:float64"},
			pattern: "{dimension}_{field}",
			fields:  []string{"mean", "p_n"},
			err:     []string{"unpivot", "no column matches", `"p_n"`, "have id, a_mean"},
		},
		{
			name:    "no column matches the pattern at all",
			cols:    []string{"id:string"},
			pattern: "{dimension}",
			fields:  []string{"v"},
			err:     []string{"no column matches", `"{dimension}"`},
		},
		{
			name:    "keep names a missing column",
			cols:    []string{"id:string", "a_mean:float64"},
			pattern: "{dimension}_{field}",
			fields:  []string{"mean"},
			keep:    []string{"id", "gone"},
			err:     []string{"unpivot: keep", `"gone"`},
			noCol:   true,
		},
		{
			name:    "into clashes with a kept column",
			cols:    []string{"id:string", "a_mean:float64"},
			pattern: "{dimension}_{field}",
			fields:  []string{"mean"},
			into:    "id",
			err:     []string{`two columns named "id"`},
		},
		{
			name:    "field clashes with a kept column",
			cols:    []string{"mean:string", "a_mean:float64"},
			pattern: "{dimension}_{field}",
			fields:  []string{"mean"},
			err:     []string{`two columns named "mean"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			u, err := NewUnpivot(mem, tcSchema(t, tt.cols...), "dimension", tt.pattern, []string{"a", "b", "c"}, tt.fields, tt.into, tt.keep)
			if u != nil {
				t.Errorf("got a stage with the error")
			}
			tcWantErr(t, err, tt.err...)
			if tt.noCol && !errors.Is(err, ErrNoColumn) {
				t.Errorf("err %v does not wrap ErrNoColumn", err)
			}
		})
	}
}

func TestExplode(t *testing.T) {
	aligned := []string{"id:string", "a:list<string>", "b:list<int64>", "_line:int64"}
	statements := []string{"id:string", "st:list<struct<text:string,citations:list<string>>>", "_line:int64"}
	stRows := `[
		{"id":"r1","st":[{"text":"one","citations":["c1","c2"]},{"text":null,"citations":[]}],"_line":1},
		{"id":"r2","st":[],"_line":2},
		{"id":"r3","st":[{"text":"three","citations":null}],"_line":3}
	]`
	tests := []struct {
		name    string
		cols    []string
		rows    string
		slice   []int64
		columns []string
		as      []string
		index   string
		keep    []string
		prefix  string
		fill    []string
		names   []string
		want    []string
		rejects []string // "rule column line"
		reasons []string // substrings of each reject's reason, in order
	}{
		{
			// A participant who ranked but left no ratings keeps the rows.
			name:    "fill_nulls reads a null list as nulls, the others give the length",
			cols:    aligned,
			rows:    `[{"id":"x","a":["p","q"],"b":null,"_line":1},{"id":"y","a":["r"],"b":[5],"_line":2},{"id":"z","a":null,"b":[6],"_line":3},{"id":"w","a":null,"b":null,"_line":4}]`,
			columns: []string{"a", "b"},
			fill:    []string{"b"},
			index:   "i",
			names:   []string{"id", "_line", "i", "a", "b"},
			want: []string{
				`1:{"a":"p","b":null,"i":0,"id":"x"}`,
				`1:{"a":"q","b":null,"i":1,"id":"x"}`,
				`2:{"a":"r","b":5,"i":0,"id":"y"}`,
			},
			rejects: []string{"explode a 3", "explode a 4"},
			reasons: []string{"a is null, b has 1", "the lists are null"},
		},
		{
			// A writer may store "no ratings" as [] rather than null.
			name:    "fill_nulls reads an empty list beside others as nulls too",
			cols:    aligned,
			rows:    `[{"id":"x","a":["p","q"],"b":[],"_line":1},{"id":"y","a":[],"b":[],"_line":2}]`,
			columns: []string{"a", "b"},
			fill:    []string{"b"},
			names:   []string{"id", "_line", "a", "b"},
			want:    []string{`1:{"a":"p","b":null,"id":"x"}`, `1:{"a":"q","b":null,"id":"x"}`},
		},
		{
			name:    "fill_nulls in a slice, lengths still compared",
			cols:    aligned,
			rows:    `[{"id":"v","a":["o"],"b":[0],"_line":1},{"id":"x","a":["p","q"],"b":[7],"_line":2},{"id":"y","a":["r"],"b":null,"_line":3}]`,
			slice:   []int64{1, 3},
			columns: []string{"a", "b"},
			fill:    []string{"b"},
			names:   []string{"id", "_line", "a", "b"},
			want:    []string{`3:{"a":"r","b":null,"id":"y"}`},
			rejects: []string{"explode a 2"},
			reasons: []string{"a has 2, b has 1"},
		},
		{
			name:    "fill_nulls on a list of structs gives null fields",
			cols:    []string{"id:string", "a:list<string>", "st:list<struct<text:string,citations:list<string>>>", "_line:int64"},
			rows:    `[{"id":"r1","a":["p"],"st":null,"_line":1},{"id":"r2","a":["q"],"st":[{"text":"t","citations":["c"]}],"_line":2}]`,
			columns: []string{"a", "st"},
			fill:    []string{"st"},
			names:   []string{"id", "_line", "a", "text", "citations"},
			want: []string{
				`1:{"a":"p","citations":null,"id":"r1","text":null}`,
				`2:{"a":"q","citations":["c"],"id":"r2","text":"t"}`,
			},
		},
		{
			name:    "aligned lists of equal length with an index",
			cols:    aligned,
			rows:    `[{"id":"x","a":["p","q"],"b":[1,2],"_line":1},{"id":"y","a":["r"],"b":[null],"_line":2}]`,
			columns: []string{"a", "b"},
			index:   "i",
			names:   []string{"id", "_line", "i", "a", "b"},
			want: []string{
				`1:{"a":"p","b":1,"i":0,"id":"x"}`,
				`1:{"a":"q","b":2,"i":1,"id":"x"}`,
				`2:{"a":"r","b":null,"i":0,"id":"y"}`,
			},
		},
		{
			name:    "unequal lengths reject the row, the others still explode",
			cols:    aligned,
			rows:    `[{"id":"x","a":["p"],"b":[1],"_line":4},{"id":"y","a":["r","s"],"b":[3],"_line":5},{"id":"z","a":["t"],"b":[6],"_line":6}]`,
			columns: []string{"a", "b"},
			names:   []string{"id", "_line", "a", "b"},
			want:    []string{`4:{"a":"p","b":1,"id":"x"}`, `6:{"a":"t","b":6,"id":"z"}`},
			rejects: []string{"explode a 5"},
			reasons: []string{"a has 2, b has 1"},
		},
		{
			name:    "a null list rejects the row",
			cols:    aligned,
			rows:    `[{"id":"x","a":["p"],"b":null,"_line":1},{"id":"y","a":null,"b":null,"_line":2},{"id":"z","a":["t"],"b":[6],"_line":3}]`,
			columns: []string{"a", "b"},
			names:   []string{"id", "_line", "a", "b"},
			want:    []string{`3:{"a":"t","b":6,"id":"z"}`},
			rejects: []string{"explode a 1", "explode a 2"},
			reasons: []string{"b is null", "a is null"},
		},
		{
			name:    "a single null list",
			cols:    aligned,
			rows:    `[{"id":"x","a":null,"b":[1],"_line":9}]`,
			columns: []string{"a"},
			names:   []string{"id", "b", "_line", "a"},
			rejects: []string{"explode a 9"},
			reasons: []string{"a is null"},
		},
		{
			name:    "empty lists give no rows and no reject",
			cols:    aligned,
			rows:    `[{"id":"x","a":[],"b":[],"_line":1},{"id":"y","a":["r"],"b":[3],"_line":2}]`,
			columns: []string{"a", "b"},
			index:   "i",
			names:   []string{"id", "_line", "i", "a", "b"},
			want:    []string{`2:{"a":"r","b":3,"i":0,"id":"y"}`},
		},
		{
			// A folder input's rows carry their file too; keep dropped it,
			// and rejects after the step named the folder.
			name:    "keep carries the file and line",
			cols:    []string{"id:string", "a:list<string>", "_file:string", "_line:int64"},
			rows:    `[{"id":"x","a":["p","q"],"_file":"f/g1","_line":3}]`,
			columns: []string{"a"},
			keep:    []string{"id"},
			names:   []string{"id", "_file", "_line", "a"},
			want:    []string{`3:{"a":"p","id":"x"}`, `3:{"a":"q","id":"x"}`},
		},
		{
			name:    "as renames the element columns",
			cols:    aligned,
			rows:    `[{"id":"x","a":["p","q"],"b":[1,2],"_line":1}]`,
			columns: []string{"a", "b"},
			as:      []string{"answer", "score"},
			keep:    []string{"id"},
			names:   []string{"id", "_line", "answer", "score"},
			want:    []string{`1:{"answer":"p","id":"x","score":1}`, `1:{"answer":"q","id":"x","score":2}`},
		},
		{
			name:    "list of structs becomes one column per field",
			cols:    statements,
			rows:    stRows,
			columns: []string{"st"},
			index:   "statement_index",
			names:   []string{"id", "_line", "statement_index", "text", "citations"},
			want: []string{
				`1:{"citations":["c1","c2"],"id":"r1","statement_index":0,"text":"one"}`,
				`1:{"citations":[],"id":"r1","statement_index":1,"text":null}`,
				`3:{"citations":null,"id":"r3","statement_index":0,"text":"three"}`,
			},
		},
		{
			name:    "list of structs with a prefix",
			cols:    statements,
			rows:    stRows,
			columns: []string{"st"},
			prefix:  "statement_",
			keep:    []string{"id"},
			names:   []string{"id", "_line", "statement_text", "statement_citations"},
			want: []string{
				`1:{"id":"r1","statement_citations":["c1","c2"],"statement_text":"one"}`,
				`1:{"id":"r1","statement_citations":[],"statement_text":null}`,
				`3:{"id":"r3","statement_citations":null,"statement_text":"three"}`,
			},
		},
		{
			name:    "sliced input batch",
			cols:    aligned,
			rows:    `[{"id":"w","a":["o"],"b":[0],"_line":1},{"id":"x","a":["p","q"],"b":[1,2],"_line":2},{"id":"y","a":["r"],"b":[3,4],"_line":3},{"id":"z","a":["s"],"b":[5],"_line":4}]`,
			slice:   []int64{1, 3},
			columns: []string{"a", "b"},
			index:   "i",
			names:   []string{"id", "_line", "i", "a", "b"},
			want:    []string{`2:{"a":"p","b":1,"i":0,"id":"x"}`, `2:{"a":"q","b":2,"i":1,"id":"x"}`},
			rejects: []string{"explode a 3"},
			reasons: []string{"a has 1, b has 2"},
		},
		{
			name:    "every row rejected",
			cols:    aligned,
			rows:    `[{"id":"x","a":["p"],"b":[],"_line":1}]`,
			columns: []string{"a", "b"},
			names:   []string{"id", "_line", "a", "b"},
			rejects: []string{"explode a 1"},
			reasons: []string{"a has 1, b has 0"},
		},
		{
			// Both null is not a length mismatch; one null is named as such.
			name:    "null lists are rejected, saying which",
			cols:    aligned,
			rows:    `[{"id":"x","a":null,"b":null,"_line":1},{"id":"y","a":["r"],"b":null,"_line":2},{"id":"z","a":[],"b":[],"_line":3}]`,
			columns: []string{"a", "b"},
			names:   []string{"id", "_line", "a", "b"},
			rejects: []string{"explode a 1", "explode a 2"},
			reasons: []string{"the lists are null: a is null, b is null", "a list is null: a has 1, b is null"},
		},
		{
			name:    "empty batch",
			cols:    aligned,
			rows:    `[]`,
			columns: []string{"a", "b"},
			names:   []string{"id", "_line", "a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, tt.cols...)
			e, err := NewExplode(mem, s, tt.columns, tt.as, tt.index, tt.keep, tt.prefix)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.FillNulls(tt.fill); err != nil {
				t.Fatal(err)
			}
			if e.Name() != "explode" {
				t.Errorf("Name() = %q", e.Name())
			}
			tcEqual(t, "names", tcNames(e.Schema()), tt.names)
			in := tcBatch(t, mem, s, tt.rows)
			defer in.Release()
			if tt.slice != nil {
				sl := in.NewSlice(tt.slice[0], tt.slice[1])
				defer sl.Release()
				in = sl
			}
			rows, rej := tcProcess(t, e, in)
			tcEqual(t, "rows", rows, tt.want)
			tcEqualRejects(t, rej, tt.rejects, tt.reasons)
		})
	}
}

func TestExplodeErrors(t *testing.T) {
	cols := []string{"id:string", "a:list<string>", "n:int64", "st:list<struct<id:string,text:string>>", "_line:int64"}
	tests := []struct {
		name    string
		columns []string
		as      []string
		index   string
		keep    []string
		prefix  string
		err     []string
		noCol   bool
	}{
		{name: "unknown column", columns: []string{"nope"}, err: []string{"explode", `"nope"`}, noCol: true},
		{name: "not a list", columns: []string{"n"}, err: []string{"explode", "column n is int64, not a list"}},
		{name: "keep names a missing column", columns: []string{"a"}, keep: []string{"gone"}, err: []string{"explode: keep", `"gone"`}, noCol: true},
		{name: "struct field clashes with a kept column", columns: []string{"st"}, err: []string{`two columns named "id"`}},
		{name: "as clashes with a kept column", columns: []string{"a"}, as: []string{"n"}, err: []string{`two columns named "n"`}},
		{name: "index clashes with a kept column", columns: []string{"a"}, index: "id", err: []string{`two columns named "id"`}},
		{name: "index clashes with an element column", columns: []string{"a"}, index: "a", keep: []string{"id"}, err: []string{`two columns named "a"`}},
		{name: "prefix on a list that holds no structs", columns: []string{"a"}, prefix: "p_", keep: []string{"id"}, err: []string{"explode: prefix names the columns of a list of structs' fields, and a holds no structs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			e, err := NewExplode(mem, tcSchema(t, cols...), tt.columns, tt.as, tt.index, tt.keep, tt.prefix)
			if e != nil {
				t.Errorf("got a stage with the error")
			}
			tcWantErr(t, err, tt.err...)
			if tt.noCol && !errors.Is(err, ErrNoColumn) {
				t.Errorf("err %v does not wrap ErrNoColumn", err)
			}
		})
	}
	t.Run("prefix resolves the struct clash", func(t *testing.T) {
		e, err := NewExplode(memory.NewGoAllocator(), tcSchema(t, cols...), []string{"st"}, nil, "", nil, "st_")
		if err != nil {
			t.Fatal(err)
		}
		tcEqual(t, "names", tcNames(e.Schema()), []string{"id", "a", "n", "_line", "st_id", "st_text"})
	})
}

func TestFlattenConcurrentProcess(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "id:string", "a_v:int64", "b_v:int64", "xs:list<string>", "_line:int64")
	in := tcBatch(t, mem, s, `[{"id":"r1","a_v":1,"b_v":2,"xs":["p","q"],"_line":1},{"id":"r2","a_v":3,"b_v":null,"xs":["s"],"_line":2},{"id":"r3","a_v":5,"b_v":6,"xs":null,"_line":3}]`)
	defer in.Release()
	rename, err := NewRename(s, map[string]string{"id": "ID"})
	if err != nil {
		t.Fatal(err)
	}
	unpivot, err := NewUnpivot(mem, s, "d", "{d}_{field}", []string{"a", "b"}, []string{"v"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	explode, err := NewExplode(mem, s, []string{"xs"}, []string{"x"}, "i", []string{"id"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []interface {
		pipeline.Stage
		Name() string
	}{rename, unpivot, explode} {
		t.Run(st.Name(), func(t *testing.T) { tcConcurrent(t, st, in) })
	}
}

// TestExplodeNotesEmptyLists: rows whose lists are empty give no row and
// no reject; Notes counts them, so the table's counts are not the only
// word on them.
func TestExplodeNotesEmptyLists(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "id:string", "a:list<string>", "b:list<int64>", "_line:int64")
	e, err := NewExplode(mem, s, []string{"a", "b"}, nil, "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.FillNulls([]string{"b"}); err != nil {
		t.Fatal(err)
	}
	if n := e.Notes(); n != nil {
		t.Errorf("notes before any row: %q", n)
	}
	for range 2 {
		// w: an empty list beside a filled null one gives no rows either,
		// and is counted (it left no trace).
		in := tcBatch(t, mem, s, `[{"id":"x","a":[],"b":[],"_line":1},{"id":"y","a":["r"],"b":[3],"_line":2},{"id":"z","a":[],"b":[],"_line":3},{"id":"w","a":[],"b":null,"_line":4}]`)
		tcProcess(t, e, in)
		in.Release()
	}
	if n := e.Notes(); len(n) != 1 || !strings.HasPrefix(n[0], "explode: 6 rows had empty lists (a, b) and gave no rows") {
		t.Errorf("notes %q", n)
	}
}
