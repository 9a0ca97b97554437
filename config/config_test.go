package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestLoadGood(t *testing.T) {
	cfg, err := LoadFile("testdata/minimal.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Defaults survive an absent section.
	if cfg.Data != DefaultData || cfg.Out != DefaultOut || cfg.BatchRows != DefaultBatchRows || cfg.BatchBytes != DefaultBatchBytes || cfg.ChannelDepth != DefaultChannelDepth {
		t.Errorf("run defaults not applied: %+v", cfg)
	}
	if cfg.Writer.Compression != "zstd" || cfg.Writer.RowGroupRows != DefaultWriter.RowGroupRows || cfg.Writer.MaxPartitions != DefaultWriter.MaxPartitions {
		t.Errorf("writer defaults not applied: %+v", cfg.Writer)
	}
	in := cfg.Datasets["d"].Inputs["in"]
	if in.Compression != "gzip" || in.OnBadLine != "fail" || in.UnknownKeys != "ignore" || in.MaxLineBytes != DefaultMaxLineBytes {
		t.Errorf("input defaults not applied: %+v", in)
	}
}

func TestLoadShippedPipeline(t *testing.T) {
	cfg, err := LoadFile("../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Datasets["crowdrag25"]
	if d == nil {
		t.Fatal("no crowdrag25 dataset")
	}
	want := []string{"responses", "statements", "ratings", "votes", "llm_ratings", "grades"}
	if got := strings.Join(d.TableNames(), ","); got != strings.Join(want, ",") {
		t.Errorf("tables in file order: %s", got)
	}
	// {dimension}_* columns expand over the 7 dimensions.
	n := 0
	for _, c := range d.Inputs["ratings"].Columns {
		if strings.HasSuffix(c.Name, "_p_n") {
			n++
		}
	}
	if n != 7 {
		t.Errorf("%d _p_n columns after expansion, want 7", n)
	}
}

func TestLoadBad(t *testing.T) {
	tests := []struct {
		file string
		want []string // fragments, each must appear
		not  []string // fragments that must not
		is   error
	}{
		{
			file: "unknown_key.bad.yaml",
			want: []string{`unknown_key.bad.yaml:2: wokers: unknown key "wokers" (did you mean "workers"?)`, `unknown_key.bad.yaml:14: datasets.d.tables.t.partiton_by: unknown key "partiton_by" (did you mean "partition_by"?)`},
			is:   ErrUnknownKey,
		},
		{
			// A column written once with a {var} placeholder is one error at
			// its own line, where it was one per value at the lines of the
			// columns whose places the expanded ones took.
			file: "placeholder_column.bad.yaml",
			want: []string{
				`placeholder_column.bad.yaml:12: datasets.d.inputs.in.columns[1].type: invalid value: type "float65"`,
				`placeholder_column.bad.yaml:13: datasets.d.inputs.in.columns[2].type: invalid value: type "strin"`,
			},
			not: []string{"columns[3]", "columns[4]", ":11:"},
			is:  ErrInvalid,
		},
		{
			file: "unknown_anchor.bad.yaml",
			want: []string{`unknown_anchor.bad.yaml:6: invalid yaml: unknown anchor 'nosuch' referenced`},
			is:   ErrSyntax,
		},
		{
			file: "tsv_keys.bad.yaml",
			want: []string{
				"tsv_keys.bad.yaml:8: datasets.d.inputs.in.skip: invalid value: skip applies to tsv inputs only (this one's format is jsonl)",
				"tsv_keys.bad.yaml:9: datasets.d.inputs.in.file_column: invalid value: file_column applies to tsv inputs only",
			},
			not: []string{":7:"},
			is:  ErrInvalid,
		},
		{
			file: "equal_tolerance.bad.yaml",
			want: []string{"equal_tolerance.bad.yaml:14: datasets.d.tables.t.steps[0].validate[0].equal.tolerance: invalid value: must be ≥ 0"},
			is:   ErrInvalid,
		},
		{
			file: "paths.bad.yaml",
			want: []string{
				`paths.bad.yaml:5: datasets.d.inputs.up.path: invalid value: "../../../../etc/passwd" leads out of the data root`,
				`paths.bad.yaml:6: datasets.d.inputs.back.path: invalid value: "d/../../x.jsonl" leads out of the data root`,
			},
			not: []string{"inputs.fine"},
			is:  ErrInvalid,
		},
		{
			// The decoder leaves null list items out: each would vanish.
			file: "null_items.bad.yaml",
			want: []string{
				"null_items.bad.yaml:10: datasets.d.inputs.in.columns[1]: invalid value: an empty list item",
				"null_items.bad.yaml:17: datasets.d.tables.t.steps[1]: invalid value: an empty list item",
				"null_items.bad.yaml:20: datasets.d.tables.t.steps[2].validate[1]: invalid value: an empty list item",
				"null_items.bad.yaml:21: datasets.d.tables.t.steps[2].validate[2].enum.values[1]: invalid value: an empty list item",
				`null_items.bad.yaml:21: datasets.d.tables.t.steps[2].validate[2].enum.values[2]: invalid value: an empty list item (a dash with nothing after it, ~ or null): remove it or give it its value (for the text NULL, quote it: "NULL")`,
			},
			is: ErrInvalid,
		},
		{
			file: "many_errors.bad.yaml",
			want: []string{
				"many_errors.bad.yaml:1: version: invalid value: must be 1, got 2",
				"many_errors.bad.yaml:2: batch_rows: invalid value: must be ≥ 1",
				"many_errors.bad.yaml:29: batch_bytes: invalid value: must be ≥ 4096",
				"many_errors.bad.yaml:28: datasets.nothing: required: empty dataset",
				"many_errors.bad.yaml:3: memory_limit: invalid value: must be -1 (the runtime's own) or at least 33554432",
				"many_errors.bad.yaml:5: writer.compression: invalid value",
				"many_errors.bad.yaml:12: datasets.d.inputs.in.path: required",
				"many_errors.bad.yaml:13: datasets.d.inputs.in.format: invalid value",
				`many_errors.bad.yaml:15: datasets.d.inputs.in.columns[0].type: invalid value: type "strng"`,
				`datasets.d.inputs.in.columns[1].name: unknown reference: var "nope"`,
				`many_errors.bad.yaml:19: datasets.d.tables.t.input: unknown reference: no input "missing"`,
				`many_errors.bad.yaml:20: datasets.d.tables.t.partition_by[1]: invalid value: x is partition_by[0] already`,
				"datasets.d.tables.t.steps[0]: invalid value: a step has exactly one of",
				"datasets.d.tables.t.steps[1].unpivot.pattern: invalid value",
				"datasets.d.tables.t.steps[2].validate[0].range: invalid value: min 5 is greater than max 1",
				"datasets.d.tables.t.steps[2].validate[1].range.max: invalid value: NaN bounds nothing",
			},
			is: ErrInvalid,
		},
		{
			file: "column_mistakes.bad.yaml",
			want: []string{
				`column_mistakes.bad.yaml:9: datasets.d.inputs.in.columns[0].aliases[0]: invalid value: "submitted_ms" is a declared column too`,
				`column_mistakes.bad.yaml:11: datasets.d.inputs.in.columns[2].aliases[2]: invalid value: "old2" is listed twice`,
				`column_mistakes.bad.yaml:12: datasets.d.inputs.in.columns[3].aliases[0]: invalid value: "old" is column a's alias too`,
				`column_mistakes.bad.yaml:12: datasets.d.inputs.in.columns[3].aliases[1]: invalid value: "b" is the column's own name`,
				`column_mistakes.bad.yaml:13: datasets.d.inputs.in.columns[4].type: invalid value: type "struct<country:string,country:string>": struct field "country" comes twice`,
				`column_mistakes.bad.yaml:14: datasets.d.inputs.in.columns[5].type: invalid value: a JSON object's keys are strings: declare map<string,string>`,
				`column_mistakes.bad.yaml:19: datasets.d.tables.t.steps[0].snake_case: invalid value: only true makes the step`,
				`column_mistakes.bad.yaml:24: datasets.e.inputs.csv.format: invalid value: must be jsonl, tsv or parquet, got "csv"`,
				`column_mistakes.bad.yaml:23: datasets.e.inputs.chats.columns[0].type: invalid value: a TSV column is string, int64, float64, bool or timestamp, not date`,
				`column_mistakes.bad.yaml:22: datasets.e.inputs.abs.path: invalid value: "/data/d/in.jsonl": input paths are relative to the data root`,
				`column_mistakes.bad.yaml:25: datasets.e.inputs.globs.skip[0]: invalid value: "[abc" is not a file-name glob: syntax error in pattern`,
				`column_mistakes.bad.yaml:25: datasets.e.inputs.globs.skip[1]: invalid value: "sub/*.py" names a folder`,
				`column_mistakes.bad.yaml:26: datasets.e.inputs.pq.compression: invalid value: compression applies to jsonl and tsv inputs only; a Parquet file has no lines, and its own codecs`,
				`column_mistakes.bad.yaml:26: datasets.e.inputs.pq.max_bytes: invalid value: max_bytes applies to jsonl and tsv inputs only`,
				`column_mistakes.bad.yaml:26: datasets.e.inputs.pq.on_bad_line: invalid value: on_bad_line applies to jsonl inputs only`,
				`column_mistakes.bad.yaml:26: datasets.e.inputs.pq.columns[0].aliases: invalid value: aliases apply to jsonl inputs only: a parquet column is found by its name`,
				`column_mistakes.bad.yaml:27: datasets.e.inputs.tsvkeys.on_bad_line: invalid value: on_bad_line applies to jsonl inputs only; a tsv line of the wrong field count is always rejected (rule fields)`,
				`column_mistakes.bad.yaml:27: datasets.e.inputs.tsvkeys.unknown_keys: invalid value: unknown_keys applies to jsonl inputs only`,
			},
			// An unknown format is said once, not again as TSV-only keys.
			not: []string{"applies to tsv inputs only"},
			is:  ErrInvalid,
		},
		{
			file: "shared_snappy.bad.yaml",
			want: []string{"shared_snappy.bad.yaml:17: datasets.d.tables.t.writer.shared_pages: invalid value: works with zstd only"},
			is:   ErrInvalid,
		},
		{
			file: "inputs_at_once.bad.yaml",
			want: []string{"inputs_at_once.bad.yaml:4: datasets.d.inputs_at_once: invalid value: must be 0 (as many as workers) or more, got -1"},
			is:   ErrInvalid,
		},
		{
			file: "grouped_sort.bad.yaml",
			want: []string{"grouped_sort.bad.yaml:18: datasets.d.tables.t.steps[0].aggregate.grouped: invalid value: grouped emits groups as they end"},
			is:   ErrInvalid,
		},
		{
			file: "reserved_names.bad.yaml",
			want: []string{
				`reserved_names.bad.yaml:10: datasets.d.inputs.in.columns[1].name: invalid value: "_line" is the name of agora's own column of each row's source`,
				`reserved_names.bad.yaml:14: datasets.d.inputs.chats.file_column: invalid value: "id" is a declared column too`,
				`reserved_names.bad.yaml:20: datasets.d.inputs.more.file_column: invalid value: "_file" is the name of agora's own column`,
				`reserved_names.bad.yaml:28: datasets.d.tables.t.steps[0].derive[0].name: invalid value: "_line" is the name of agora's own column`,
			},
			is: ErrInvalid,
		},
		{
			file: "grouped_derive.bad.yaml",
			want: []string{
				"grouped_derive.bad.yaml:16: datasets.d.tables.t.steps[0].derive[0].grouped: invalid value: grouped applies to lag and fill_down, not occurrence",
				"grouped_derive.bad.yaml:17: datasets.d.tables.t.steps[0].derive[1].grouped: invalid value: grouped needs the key columns in by",
				"grouped_derive.bad.yaml:18: datasets.d.tables.t.steps[0].derive[2].digits: invalid value: must be -1 (no rounding) or 0 or more decimals, got -2",
			},
			is: ErrInvalid,
		},
		{
			file: "file_type.bad.yaml",
			want: []string{"file_type.bad.yaml:9: datasets.d.inputs.in.columns[0].type: invalid value: type file (the file's own type) applies to parquet inputs"},
			not:  []string{"inputs.pq"},
			is:   ErrInvalid,
		},
		{
			file: "fill_nulls.bad.yaml",
			want: []string{
				"fill_nulls.bad.yaml:15: datasets.d.tables.t.steps[0].explode.fill_nulls[1]: invalid value: c is not one of the exploded columns",
				"fill_nulls.bad.yaml:19: datasets.d.tables.u.steps[0].explode.fill_nulls: invalid value: names every exploded column",
			},
			is: ErrInvalid,
		},
		{
			// A list item that is a mapping has the line of its own dash, not
			// the list's first item's.
			file: "step_line.bad.yaml",
			want: []string{"step_line.bad.yaml:16: datasets.d.tables.t.steps[2]: invalid value: a step has exactly one of"},
			is:   ErrInvalid,
		},
		{
			file: "rule_when.bad.yaml",
			want: []string{`rule_when.bad.yaml:16: datasets.d.tables.t.steps[0].validate[0].enum.when: unknown key "when" (when belongs to the rule: put it beside the rule's key`},
			is:   ErrUnknownKey,
		},
		{
			file: "optional_jsonl.bad.yaml",
			want: []string{"optional_jsonl.bad.yaml:9: datasets.d.inputs.in.columns[0].optional: invalid value: optional applies to parquet inputs"},
			is:   ErrInvalid,
		},
		{file: "syntax.bad.yaml", want: []string{"syntax.bad.yaml:", "invalid yaml"}, is: ErrSyntax},
		{file: "wrong_type.bad.yaml", want: []string{"wrong_type.bad.yaml:2: workers: wrong type"}, is: ErrType},
		{file: "when_values.bad.yaml", want: []string{`when_values.bad.yaml:11: datasets.d.tables.t.steps[0].derive[0].when.values: unknown key "values" (did you mean "in"?`}, is: ErrUnknownKey},
		// In a flow mapping the key whose value yaml quotes, not the line's first.
		{file: "flow_type.bad.yaml", want: []string{"flow_type.bad.yaml:11: datasets.d.tables.t.steps[0].derive[0].args: wrong type: cannot unmarshal !!str `answer_...`", "flow_type.bad.yaml:12: datasets.d.tables.t.steps[0].derive[1].args: wrong type: cannot unmarshal !!str `tags`"}, is: ErrType},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := LoadFile(filepath.Join("testdata", tt.file))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error has %q:\n%v", w, err)
				}
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("error is not %v: %v", tt.is, err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("error is not a *FieldError: %T", err)
			}
		})
	}
}

func TestEveryErrorHasALine(t *testing.T) {
	_, err := LoadFile("testdata/many_errors.bad.yaml")
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("want joined errors, got %T", err)
	}
	for _, e := range joined.Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) || fe.Line == 0 {
			t.Errorf("no line for %v", e)
		}
	}
}

func TestParseType(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{in: "string", want: "utf8"},
		{in: "list<float64>", want: "list<item: float64, nullable>"},
		{in: "list<struct<text:string, citations:list<string>>>", want: "list<item: struct<text: utf8 nullable, citations: list<item: utf8, nullable> nullable>, nullable>"},
		{in: "map<string,list<string>>", want: "map<utf8, list<item: utf8, nullable>, items_nullable>"},
		{in: "timestamp", want: "timestamp[us, tz=UTC]"},
		{in: "uint64", err: true},
		{in: "list<string", err: true},
		{in: "struct<>", err: true},
		{in: "map<int64,string>", want: "map<int64, utf8, items_nullable>"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			dt, err := ParseType(tt.in)
			if tt.err {
				if err == nil {
					t.Fatalf("want an error, got %s", dt)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dt.String() != tt.want {
				t.Errorf("got %s, want %s", dt, tt.want)
			}
			if back := FormatType(dt); back != strings.ReplaceAll(tt.in, " ", "") && tt.in != "double" {
				t.Errorf("FormatType gives %q", back)
			}
			if dt.ID() == arrow.LARGE_LIST || dt.ID() == arrow.LARGE_STRING {
				t.Error("large types are not Spark-safe")
			}
		})
	}
}

func TestNearest(t *testing.T) {
	keys := yamlKeys(structTypes()["Table"])
	for in, want := range map[string]string{"partiton_by": "partition_by", "inptu": "input", "stpes": "steps", "zzzzzzzz": ""} {
		if got := nearest(in, keys); got != want {
			t.Errorf("nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEmptyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty.yaml")
	os.WriteFile(p, nil, 0o644)
	if _, err := LoadFile(p); !errors.Is(err, ErrRequired) {
		t.Fatalf("err = %v", err)
	}
}

// TestWriterFor: a table's writer settings override the config's one by
// one, and its column lists add to the config's instead of replacing them.
func TestWriterFor(t *testing.T) {
	c := &Config{Writer: DefaultWriter}
	c.Writer.Dictionary = []string{"a"}
	c.Writer.NoStatistics = []string{"b"}
	c.Writer.SharedPages = []string{"c"}
	for _, tc := range []struct {
		name   string
		table  *Writer
		rgRows int64
		dict   []string
		nostat []string
		shared []string
	}{
		{"no writer of its own", nil, DefaultWriter.RowGroupRows, []string{"a"}, []string{"b"}, []string{"c"}},
		{"a number", &Writer{RowGroupRows: 96}, 96, []string{"a"}, []string{"b"}, []string{"c"}},
		{"lists add up", &Writer{Dictionary: []string{"x"}, NoStatistics: []string{"y"}, SharedPages: []string{"z"}},
			DefaultWriter.RowGroupRows, []string{"a", "x"}, []string{"b", "y"}, []string{"c", "z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := c.WriterFor(&Table{Writer: tc.table})
			if w.RowGroupRows != tc.rgRows || w.Compression != DefaultWriter.Compression {
				t.Errorf("row_group_rows %d, compression %q", w.RowGroupRows, w.Compression)
			}
			for _, l := range []struct {
				key       string
				got, want []string
			}{{"dictionary", w.Dictionary, tc.dict}, {"no_statistics", w.NoStatistics, tc.nostat}, {"shared_pages", w.SharedPages, tc.shared}} {
				if strings.Join(l.got, ",") != strings.Join(l.want, ",") {
					t.Errorf("%s %v, want %v", l.key, l.got, l.want)
				}
			}
		})
	}
	if strings.Join(c.Writer.SharedPages, ",") != "c" {
		t.Errorf("a table's list changed the config's: %v", c.Writer.SharedPages)
	}
}

// TestWriterErrorsOnce checks that a bad value of the config's writer is
// reported once, at its own line, and a table's writer block only for
// what it sets itself or takes part in.
func TestWriterErrorsOnce(t *testing.T) {
	_, err := LoadFile("testdata/writer_once.bad.yaml")
	if err == nil {
		t.Fatal("want an error")
	}
	got := strings.Split(err.Error(), "\n") // one error a line
	want := []string{
		`testdata/writer_once.bad.yaml:3: writer.compression: invalid value`,
		`testdata/writer_once.bad.yaml:4: writer.row_group_rows: invalid value: must be ≥ 1, got -5`,
		`testdata/writer_once.bad.yaml:19: datasets.d.tables.u.writer.row_group_rows: invalid value: must be ≥ 1, got -1`,
		`testdata/writer_once.bad.yaml:22: datasets.d.tables.v.writer.shared_pages: invalid value: works with zstd only`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d errors, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("error %d: %q, want it to start with %q", i, got[i], w)
		}
	}
}
