package stages

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

func tcFloat(f float64) *float64 { return &f }

func TestValidate(t *testing.T) {
	tests := []validateCase{
		{
			name:    "required",
			cols:    []string{"id:string", "label:string", "_line:int64"},
			rules:   []config.Rule{{Required: []string{"id", "label"}}},
			batches: []string{`[{"id":"a","label":"x","_line":1},{"id":"b","label":null,"_line":2},{"id":null,"label":"y","_line":3},{"id":"","label":"","_line":4}]`},
			want:    []string{`1:{"id":"a","label":"x"}`, `4:{"id":"","label":""}`},
			rejects: []string{"required label 2", "required id 3"},
			reasons: []string{"is null", "is null"},
		},
		{
			// Equal infinities and two NaNs are equal (Inf-Inf is NaN, which
			// failed every tolerance); integers compare exactly past 2^53.
			name:  "equal: infinities, NaN, integers past 2^53, tolerance",
			cols:  []string{"a:float64", "b:float64", "i:int64", "j:int64", "_line:int64"},
			rules: []config.Rule{{Equal: &config.EqualRule{Columns: []string{"a", "b"}, Tolerance: 0.01}}, {Equal: &config.EqualRule{Columns: []string{"i", "j"}}}},
			batches: []string{`[{"a":"Inf","b":"Inf","i":1,"j":1,"_line":1},{"a":"-Inf","b":"Inf","i":1,"j":1,"_line":2},{"a":"NaN","b":"NaN","i":1,"j":1,"_line":3},` +
				`{"a":1.0,"b":1.005,"i":9007199254740993,"j":9007199254740992,"_line":4},{"a":1.0,"b":1.005,"i":-9223372036854775808,"j":9223372036854775807,"_line":5},{"a":0.5,"b":0.75,"i":7,"j":7,"_line":6},{"a":"NaN","b":1,"i":7,"j":7,"_line":7}]`},
			want:    []string{`1:{"a":"+Inf","b":"+Inf","i":1,"j":1}`, `3:{"a":"NaN","b":"NaN","i":1,"j":1}`},
			rejects: []string{"equal a 2", "equal i 4", "equal i 5", "equal a 6", "equal a 7"},
			reasons: []string{"a is -Inf, b is +Inf", "i is 9007199254740993, j is 9007199254740992", "i is -9223372036854775808, j is 9223372036854775807", "a is 0.5, b is 0.75", "a is NaN, b is 1"},
		},
		{
			// An integer and a float compare exactly where the float is an
			// integer: 2^53+1 is not the float 2^53, which it equalled as a
			// float64 (the equals derivation said false).
			name:    "equal: an integer and a float",
			cols:    []string{"n:int64", "f:float64", "_line:int64"},
			rules:   []config.Rule{{Equal: &config.EqualRule{Columns: []string{"n", "f"}}}, {Equal: &config.EqualRule{Columns: []string{"f", "n"}}}},
			batches: []string{`[{"n":9007199254740993,"f":9007199254740992,"_line":1},{"n":9007199254740992,"f":9007199254740992,"_line":2},{"n":3,"f":3.5,"_line":3},{"n":-7,"f":-7,"_line":4},{"n":1,"f":"Inf","_line":5}]`},
			want:    []string{`2:{"f":9007199254740992,"n":9007199254740992}`, `4:{"f":-7,"n":-7}`},
			rejects: []string{"equal n 1", "equal n 3", "equal n 5"},
			reasons: []string{"n is 9007199254740993, f is 9.007199254740992e+15", "n is 3, f is 3.5", "n is 1, f is +Inf"},
		},
		{
			// Texts compare byte for byte; null equals only null.
			name:    "equal: texts",
			cols:    []string{"a:string", "b:string", "_line:int64"},
			rules:   []config.Rule{{Equal: &config.EqualRule{Columns: []string{"a", "b"}}}},
			batches: []string{`[{"a":"g1","b":"g1","_line":1},{"a":"g1","b":"g2","_line":2},{"a":"","b":"g1","_line":3},{"a":null,"b":null,"_line":4},{"a":null,"b":"g1","_line":5},{"a":"G1","b":"g1","_line":6}]`},
			want:    []string{`1:{"a":"g1","b":"g1"}`, `4:{"a":null,"b":null}`},
			rejects: []string{"equal a 2", "equal a 3", "equal a 5", "equal a 6"},
			reasons: []string{"a is g1, b is g2", "a is , b is g1", "a is (null), b is g1", "a is G1, b is g1"},
		},
		{
			name:    "enum on a string, null passes",
			cols:    []string{"label:string", "_line:int64"},
			rules:   []config.Rule{{Enum: &config.EnumRule{Column: "label", Values: []string{"a", "b", "tie"}}}},
			batches: []string{`[{"label":"a","_line":1},{"label":"c","_line":2},{"label":null,"_line":3},{"label":"A","_line":4},{"label":"tie","_line":5}]`},
			want:    []string{`1:{"label":"a"}`, `3:{"label":null}`, `5:{"label":"tie"}`},
			rejects: []string{"enum label 2", "enum label 4"},
			reasons: []string{`value "c" is not one of a, b, tie`, `value "A"`},
		},
		{
			name:    "enum ignore_case",
			cols:    []string{"label:string", "_line:int64"},
			rules:   []config.Rule{{Enum: &config.EnumRule{Column: "label", Values: []string{"Yes", "no"}, IgnoreCase: true}}},
			batches: []string{`[{"label":"YES","_line":1},{"label":"No","_line":2},{"label":"maybe","_line":3},{"label":"yes","_line":4}]`},
			want:    []string{`1:{"label":"YES"}`, `2:{"label":"No"}`, `4:{"label":"yes"}`},
			rejects: []string{"enum label 3"},
			reasons: []string{`"maybe"`},
		},
		{
			name:    "enum on list<string> checks every element",
			cols:    []string{"votes:list<string>", "_line:int64"},
			rules:   []config.Rule{{Enum: &config.EnumRule{Column: "votes", Values: []string{"a", "b"}}}},
			batches: []string{`[{"votes":["a","b","a"],"_line":1},{"votes":["a","x","y"],"_line":2},{"votes":[],"_line":3},{"votes":null,"_line":4},{"votes":[null,"b"],"_line":5}]`},
			want:    []string{`1:{"votes":["a","b","a"]}`, `3:{"votes":[]}`, `4:{"votes":null}`, `5:{"votes":[null,"b"]}`},
			rejects: []string{"enum votes 2"},
			reasons: []string{`value "x" is not one of a, b`},
		},
		{
			name:    "range with bounds inclusive, NaN and null",
			cols:    []string{"p:float64", "_line:int64"},
			rules:   []config.Rule{{Range: &config.RangeRule{Column: "p", Min: tcFloat(0), Max: tcFloat(1)}}},
			batches: []string{`[{"p":0,"_line":1},{"p":1,"_line":2},{"p":1.5,"_line":3},{"p":"NaN","_line":4},{"p":null,"_line":5},{"p":-0.25,"_line":6}]`},
			want:    []string{`1:{"p":0}`, `2:{"p":1}`, `5:{"p":null}`},
			rejects: []string{"range p 3", "range p 4", "range p 6"},
			reasons: []string{"value 1.5 is outside [0, 1]", "value NaN is outside [0, 1]", "value -0.25"},
		},
		{
			name:    "range on list<float64> checks every element",
			cols:    []string{"ps:list<float64>", "_line:int64"},
			rules:   []config.Rule{{Range: &config.RangeRule{Column: "ps", Min: tcFloat(0), Max: tcFloat(1)}}},
			batches: []string{`[{"ps":[0.5,0.25],"_line":1},{"ps":[0.5,2,3],"_line":2},{"ps":[null,0.5],"_line":3},{"ps":[0.1,"NaN"],"_line":4},{"ps":null,"_line":5}]`},
			want:    []string{`1:{"ps":[0.5,0.25]}`, `3:{"ps":[null,0.5]}`, `5:{"ps":null}`},
			rejects: []string{"range ps 2", "range ps 4"},
			reasons: []string{"value 2 is outside", "value NaN"},
		},
		{
			name:    "range with only a max on int64 and int32",
			cols:    []string{"n:int64", "m:int32", "_line:int64"},
			rules:   []config.Rule{{Range: &config.RangeRule{Column: "n", Max: tcFloat(5)}}, {Range: &config.RangeRule{Column: "m", Min: tcFloat(-1)}}},
			batches: []string{`[{"n":-100,"m":0,"_line":1},{"n":6,"m":0,"_line":2},{"n":5,"m":-2,"_line":3}]`},
			want:    []string{`1:{"m":0,"n":-100}`},
			rejects: []string{"range n 2", "range m 3"},
			reasons: []string{"value 6 is outside [-Inf, 5]", "value -2 is outside [-1, +Inf]"},
		},
		{
			name:    "equal_lengths",
			cols:    []string{"a:list<string>", "b:list<int64>", "_line:int64"},
			rules:   []config.Rule{{EqualLengths: []string{"a", "b"}}},
			batches: []string{`[{"a":["x","y"],"b":[1,2],"_line":1},{"a":["x"],"b":[1,2],"_line":2},{"a":[],"b":[],"_line":3},{"a":["x"],"b":null,"_line":4}]`},
			want:    []string{`1:{"a":["x","y"],"b":[1,2]}`, `3:{"a":[],"b":[]}`},
			rejects: []string{"equal_lengths a 2", "equal_lengths a 4"},
			reasons: []string{"aligned lists differ in length: a=1, b=2", "a=1, b=null"},
		},
		{
			name:    "list_length, null passes",
			cols:    []string{"votes:list<string>", "_line:int64"},
			rules:   []config.Rule{{ListLength: &config.ListLengthRule{Column: "votes", Length: 3}}},
			batches: []string{`[{"votes":["a","b","c"],"_line":1},{"votes":["a","b"],"_line":2},{"votes":null,"_line":3},{"votes":[null,null,null,null],"_line":4}]`},
			want:    []string{`1:{"votes":["a","b","c"]}`, `3:{"votes":null}`},
			rejects: []string{"list_length votes 2", "list_length votes 4"},
			reasons: []string{"has 2 elements, want 3", "has 4 elements, want 3"},
		},
		{
			name: "sums_to with null counted as 0 and a tolerance",
			cols: []string{"pa:float64", "pb:float64", "pc:int64", "_line:int64"},
			rules: []config.Rule{{SumsTo: &config.SumRule{
				Columns: []string{"pa", "pb", "pc"}, Value: 1, Tolerance: 0.01,
			}}},
			batches: []string{`[{"pa":0.5,"pb":0.5,"pc":0,"_line":1},{"pa":0.5,"pb":0.5,"pc":null,"_line":2},{"pa":0.5,"pb":0.25,"pc":0,"_line":3},{"pa":0.5,"pb":0.495,"pc":0,"_line":4},{"pa":null,"pb":null,"pc":null,"_line":5},{"pa":0,"pb":0,"pc":1,"_line":6},{"pa":0.5,"pb":"NaN","pc":0,"_line":7}]`},
			want:    []string{`1:{"pa":0.5,"pb":0.5,"pc":0}`, `2:{"pa":0.5,"pb":0.5,"pc":null}`, `4:{"pa":0.5,"pb":0.495,"pc":0}`, `6:{"pa":0,"pb":0,"pc":1}`},
			rejects: []string{"sums_to pa+pb+pc 3", "sums_to pa+pb+pc 5", "sums_to pa+pb+pc 7"},
			reasons: []string{"sum is 0.75, want 1 ± 0.01", "sum is 0, want 1", "sum is NaN"},
		},
		{
			name:  "unique across two batches: first occurrence passes",
			cols:  []string{"id:string", "v:int64", "_line:int64"},
			rules: []config.Rule{{Unique: []string{"id"}}},
			batches: []string{
				`[{"id":"a","v":1,"_line":1},{"id":"b","v":2,"_line":2},{"id":"a","v":3,"_line":3}]`,
				`[{"id":"b","v":4,"_line":4},{"id":"c","v":5,"_line":5},{"id":"a","v":6,"_line":6}]`,
			},
			want:    []string{`1:{"id":"a","v":1}`, `2:{"id":"b","v":2}`, `5:{"id":"c","v":5}`},
			rejects: []string{"unique id 3", "unique id 4", "unique id 6"},
			reasons: []string{"first seen at line 1", "first seen at line 2", "first seen at line 1"},
		},
		{
			name:    "unique: -0.0 is the key 0.0",
			cols:    []string{"f:float64", "_line:int64"},
			rules:   []config.Rule{{Unique: []string{"f"}}},
			batches: []string{`[{"f":0.0,"_line":1},{"f":-0.0,"_line":2},{"f":0.5,"_line":3}]`},
			want:    []string{`1:{"f":0}`, `3:{"f":0.5}`},
			rejects: []string{"unique f 2"},
			reasons: []string{"first seen at line 1"},
		},
		{
			name:  "unique on a composite key",
			cols:  []string{"a:string", "b:int64", "_line:int64"},
			rules: []config.Rule{{Unique: []string{"a", "b"}}},
			batches: []string{
				`[{"a":"x","b":1,"_line":1},{"a":"x","b":2,"_line":2},{"a":"y","b":1,"_line":3}]`,
				`[{"a":"x","b":2,"_line":4}]`,
			},
			want:    []string{`1:{"a":"x","b":1}`, `2:{"a":"x","b":2}`, `3:{"a":"y","b":1}`},
			rejects: []string{"unique a,b 4"},
			reasons: []string{"duplicate key (a, b); first seen at line 2"},
		},
		{
			name:  "a row rejected by a rule does not claim its unique key",
			cols:  []string{"id:string", "label:string", "_line:int64"},
			rules: []config.Rule{{Unique: []string{"id"}}, {Enum: &config.EnumRule{Column: "label", Values: []string{"ok"}}}},
			batches: []string{
				`[{"id":"a","label":"bad","_line":1},{"id":"a","label":"ok","_line":2},{"id":"a","label":"ok","_line":3}]`,
			},
			want:    []string{`2:{"id":"a","label":"ok"}`},
			rejects: []string{"enum label 1", "unique id 3"},
			reasons: []string{`"bad"`, "first seen at line 2"},
		},
		{
			name: "a row breaking two rules gets one reject, for the first rule",
			cols: []string{"id:string", "label:string", "_line:int64"},
			rules: []config.Rule{
				{Enum: &config.EnumRule{Column: "label", Values: []string{"ok"}}},
				{Required: []string{"id"}},
			},
			batches: []string{`[{"id":null,"label":"bad","_line":1},{"id":null,"label":"ok","_line":2},{"id":"x","label":"ok","_line":3}]`},
			want:    []string{`3:{"id":"x","label":"ok"}`},
			rejects: []string{"enum label 1", "required id 2"},
			reasons: []string{`"bad"`, "is null"},
		},
		{
			name: "rule order decides which reject a row gets",
			cols: []string{"id:string", "label:string", "_line:int64"},
			rules: []config.Rule{
				{Required: []string{"id"}},
				{Enum: &config.EnumRule{Column: "label", Values: []string{"ok"}}},
			},
			batches: []string{`[{"id":null,"label":"bad","_line":1}]`},
			rejects: []string{"required id 1"},
			reasons: []string{"is null"},
		},
		{
			name: "a passing batch is returned with the same rows",
			cols: []string{"id:string", "p:float64", "tags:list<string>", "_line:int64"},
			rules: []config.Rule{
				{Required: []string{"id"}},
				{Range: &config.RangeRule{Column: "p", Min: tcFloat(0)}},
				{Enum: &config.EnumRule{Column: "tags", Values: []string{"t"}}},
				{Unique: []string{"id"}},
			},
			batches: []string{`[{"id":"a","p":0.5,"tags":["t"],"_line":1},{"id":"b","p":null,"tags":null,"_line":2}]`},
			want:    []string{`1:{"id":"a","p":0.5,"tags":["t"]}`, `2:{"id":"b","p":null,"tags":null}`},
		},
		{
			name:    "every row rejected gives an empty batch",
			cols:    []string{"id:string", "_line:int64"},
			rules:   []config.Rule{{Required: []string{"id"}}},
			batches: []string{`[{"id":null,"_line":1}]`},
			rejects: []string{"required id 1"},
		},
		{
			name:    "empty batch",
			cols:    []string{"id:string", "_line:int64"},
			rules:   []config.Rule{{Required: []string{"id"}}, {Unique: []string{"id"}}},
			batches: []string{`[]`},
		},
	}
	// Every case runs twice: with unique keys in memory, and with each
	// key moved to the key file as soon as it is put.
	for _, memKeys := range []int{UniqueMemKeys, 1} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/memkeys=%d", tt.name, memKeys), func(t *testing.T) {
				testValidateCase(t, tt, memKeys)
			})
		}
	}
}

type validateCase struct {
	name    string
	cols    []string
	rules   []config.Rule
	batches []string // JSON arrays, processed in order by one stage
	want    []string // output rows of all batches
	rejects []string // "rule column line"
	reasons []string // a substring of each reject's reason, in order
}

func testValidateCase(t *testing.T, tt validateCase, memKeys int) {
	spillKeys(t, memKeys, t.TempDir())
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, tt.cols...)
	v, err := NewValidate(mem, s, tt.rules)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		v.Close()
		spillEmpty(t)
	}()
	if v.Name() != "validate" {
		t.Errorf("Name() = %q", v.Name())
	}
	var rows []string
	var rejects []pipeline.Reject
	for _, js := range tt.batches {
		in := tcBatch(t, mem, s, js)
		rej := &pipeline.Rejects{File: "in.jsonl"}
		out, err := v.Process(t.Context(), in, rej)
		if err != nil {
			in.Release()
			t.Fatal(err)
		}
		if !out.Schema().Equal(s) {
			t.Errorf("output schema %s, want %s", out.Schema(), s)
		}
		if int(out.NumRows())+rej.Len() != int(in.NumRows()) {
			t.Errorf("%d rows in, %d out + %d rejected", in.NumRows(), out.NumRows(), rej.Len())
		}
		rows = append(rows, tcRows(out)...)
		rejects = append(rejects, rej.List()...)
		out.Release()
		in.Release()
	}
	tcEqual(t, "rows", rows, tt.want)
	tcEqualRejects(t, rejects, tt.rejects, tt.reasons)
}

func TestValidateRejectCarriesTheRow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "id:string", "label:string", "_line:int64")
	v, err := NewValidate(mem, s, []config.Rule{{Enum: &config.EnumRule{Column: "label", Values: []string{"a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, `[{"id":"r1","label":"a","_line":10},{"id":"r2","label":"zz","_line":11}]`)
	defer in.Release()
	rej := &pipeline.Rejects{File: "f.jsonl"}
	out, err := v.Process(t.Context(), in, rej)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	want := pipeline.Reject{Rule: "enum", Column: "label", Reason: `value "zz" is not one of a`, File: "f.jsonl", Line: 11, Row: `{"id":"r2","label":"zz"}`}
	if rej.Len() != 1 || rej.List()[0] != want {
		t.Fatalf("rejects %+v, want [%+v]", rej.List(), want)
	}
}

// TestValidateFlags: a flagged failure counts only for a row the step
// keeps, whatever the order of the rules, and names its rule, so that
// two rules of one kind on one column are told apart.
func TestValidateFlags(t *testing.T) {
	s := tcSchema(t, "p:float64", "e:string", "_line:int64")
	nonNegative := config.Rule{Range: &config.RangeRule{Column: "p", Min: tcFloat(0)}, OnFail: "flag"}
	unit := config.Rule{Range: &config.RangeRule{Column: "p", Min: tcFloat(0), Max: tcFloat(1)}, OnFail: "flag"}
	required := config.Rule{Required: []string{"e"}}
	rows := `[{"p":-1,"e":null,"_line":1},{"p":-1,"e":"a","_line":2},{"p":2,"e":"b","_line":3},{"p":0.5,"e":null,"_line":4}]`
	for _, tc := range []struct {
		name  string
		rules []config.Rule
		flags string // check:line ...
	}{
		{"flag rule first", []config.Rule{nonNegative, required}, "steps[1].validate[0]:2"},
		{"flag rule last", []config.Rule{required, nonNegative}, "steps[1].validate[1]:2"},
		{"two range rules on one column", []config.Rule{nonNegative, unit}, "steps[1].validate[0]:1 steps[1].validate[1]:1 steps[1].validate[0]:2 steps[1].validate[1]:2 steps[1].validate[1]:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			v, err := NewValidate(mem, s, tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			v.Within("steps[1]")
			in := tcBatch(t, mem, s, rows)
			defer in.Release()
			rej := &pipeline.Rejects{File: "f.jsonl"}
			out, err := v.Process(t.Context(), in, rej)
			if err != nil {
				t.Fatal(err)
			}
			out.Release()
			var got []string
			for _, f := range rej.Flags() {
				got = append(got, fmt.Sprintf("%s:%d", f.Check, f.Line))
			}
			if strings.Join(got, " ") != tc.flags {
				t.Errorf("flags %q, want %q", strings.Join(got, " "), tc.flags)
			}
		})
	}
}

func TestValidatePassingBatchIsShared(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "id:string", "_line:int64")
	v, err := NewValidate(mem, s, []config.Rule{{Required: []string{"id"}}})
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, `[{"id":"a","_line":1},{"id":"b","_line":2}]`)
	before := mem.CurrentAlloc()
	out, err := v.Process(t.Context(), in, &pipeline.Rejects{})
	if err != nil {
		t.Fatal(err)
	}
	if mem.CurrentAlloc() != before {
		t.Errorf("a batch with no rejects was copied (%d bytes)", mem.CurrentAlloc()-before)
	}
	// The caller owns out: releasing in first must leave out readable.
	in.Release()
	tcEqual(t, "rows", tcRows(out), []string{`1:{"id":"a"}`, `2:{"id":"b"}`})
	out.Release()
}

func TestValidateOrdered(t *testing.T) {
	s := tcSchema(t, "id:string")
	tests := []struct {
		name  string
		rules []config.Rule
		want  bool
	}{
		{"no rules", nil, false},
		{"row rules only", []config.Rule{{Required: []string{"id"}}}, false},
		{"a unique rule", []config.Rule{{Required: []string{"id"}}, {Unique: []string{"id"}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewValidate(memory.NewGoAllocator(), s, tt.rules)
			if err != nil {
				t.Fatal(err)
			}
			var st pipeline.Stage = v
			o, ok := st.(pipeline.Ordered)
			if !ok || o.Ordered() != tt.want {
				t.Errorf("Ordered() = %v (implemented %v), want %v", ok && o.Ordered(), ok, tt.want)
			}
		})
	}
}

func TestValidateBuildErrors(t *testing.T) {
	s := tcSchema(t, "id:string", "n:int64", "p:float64", "tags:list<string>", "ns:list<int64>", "flag:bool")
	tests := []struct {
		name  string
		rules []config.Rule
		err   []string
		noCol bool
	}{
		{name: "required: unknown column", rules: []config.Rule{{Required: []string{"id", "nope"}}}, err: []string{"validate[0]", `"nope"`, "have id, n, p"}, noCol: true},
		{name: "enum: unknown column", rules: []config.Rule{{Enum: &config.EnumRule{Column: "nope", Values: []string{"a"}}}}, err: []string{`"nope"`}, noCol: true},
		{name: "enum on an int64 column", rules: []config.Rule{{Enum: &config.EnumRule{Column: "n", Values: []string{"1"}}}}, err: []string{"enum: column n is int64, want string or list<string>"}},
		{name: "enum on list<int64>", rules: []config.Rule{{Enum: &config.EnumRule{Column: "ns", Values: []string{"1"}}}}, err: []string{"enum: column ns"}},
		{name: "range: unknown column", rules: []config.Rule{{Range: &config.RangeRule{Column: "nope", Max: tcFloat(1)}}}, err: []string{`"nope"`}, noCol: true},
		{name: "range on a string column", rules: []config.Rule{{Range: &config.RangeRule{Column: "id", Max: tcFloat(1)}}}, err: []string{"range: column id is string, want a number"}},
		{name: "range on list<string>", rules: []config.Rule{{Range: &config.RangeRule{Column: "tags", Max: tcFloat(1)}}}, err: []string{"range: column tags"}},
		{name: "range on bool", rules: []config.Rule{{Range: &config.RangeRule{Column: "flag", Max: tcFloat(1)}}}, err: []string{"range: column flag"}},
		{name: "equal_lengths on a non-list", rules: []config.Rule{{EqualLengths: []string{"tags", "n"}}}, err: []string{"equal_lengths: column n is int64, not a list"}},
		{name: "equal_lengths: unknown column", rules: []config.Rule{{EqualLengths: []string{"tags", "nope"}}}, err: []string{`"nope"`}, noCol: true},
		{name: "list_length on a non-list", rules: []config.Rule{{ListLength: &config.ListLengthRule{Column: "id", Length: 1}}}, err: []string{"list_length: column id is not a list"}},
		{name: "sums_to on a list", rules: []config.Rule{{SumsTo: &config.SumRule{Columns: []string{"p", "ns"}, Value: 1}}}, err: []string{"sums_to: column ns"}},
		{name: "sums_to on a string", rules: []config.Rule{{SumsTo: &config.SumRule{Columns: []string{"id"}, Value: 1}}}, err: []string{"sums_to: column id"}},
		{name: "unique: unknown column", rules: []config.Rule{{Unique: []string{"nope"}}}, err: []string{`"nope"`}, noCol: true},
		{name: "empty rule", rules: []config.Rule{{}}, err: []string{"empty rule"}},
		{name: "when with no values checks no row", rules: []config.Rule{{Required: []string{"id"}, When: &config.When{Column: "id"}}}, err: []string{"when: list the values in in"}},
		{name: "error names the rule index", rules: []config.Rule{{Required: []string{"id"}}, {Required: []string{"id"}}, {Unique: []string{"zz"}}}, err: []string{"validate[2]"}, noCol: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewValidate(memory.NewGoAllocator(), s, tt.rules)
			if v != nil {
				t.Errorf("got a stage with the error")
			}
			tcWantErr(t, err, tt.err...)
			if tt.noCol != errors.Is(err, ErrNoColumn) {
				t.Errorf("errors.Is(%v, ErrNoColumn) = %v, want %v", err, !tt.noCol, tt.noCol)
			}
		})
	}
}

// With two unique rules, a row that passes the first but is rejected by
// the second still records its key for the first rule, so a later row
// with that key is rejected as a duplicate of a row that was never
// written.
func TestValidateUniqueRejectedRowClaimsKey(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "id:string", "pair:string", "_line:int64")
	v, err := NewValidate(mem, s, []config.Rule{{Unique: []string{"id"}}, {Unique: []string{"pair"}}})
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, `[{"id":"1","pair":"A","_line":1},{"id":"2","pair":"A","_line":2},{"id":"2","pair":"B","_line":3}]`)
	defer in.Release()
	rows, rej := tcProcess(t, v, in)
	// Line 2 is a duplicate pair; line 3 is the first written row with id 2.
	tcEqual(t, "rows", rows, []string{`1:{"id":"1","pair":"A"}`, `3:{"id":"2","pair":"B"}`})
	tcEqual(t, "rejects", tcRejects(rej), []string{"unique pair 2"})
}

// Unique keys join the column values with a NUL byte and spell null as
// "\x01null", so distinct keys can collide.
func TestValidateUniqueKeyCollision(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "a:string", "b:string", "_line:int64")
	v, err := NewValidate(mem, s, []config.Rule{{Unique: []string{"a", "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, `[{"a":"a\u0000b","b":"c","_line":1},{"a":"a","b":"b\u0000c","_line":2},{"a":null,"b":"x","_line":3},{"a":"\u0001null","b":"x","_line":4}]`)
	defer in.Release()
	rows, rej := tcProcess(t, v, in)
	if len(rows) != 4 {
		t.Errorf("distinct keys rejected as duplicates: %v", tcRejects(rej))
	}
}

// equal_lengths uses -1 both for "no length seen yet" and for a null
// list, so a null first list is skipped instead of compared.
func TestValidateEqualLengthsNullFirst(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "a:list<string>", "b:list<int64>", "_line:int64")
	v, err := NewValidate(mem, s, []config.Rule{{EqualLengths: []string{"a", "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, `[{"a":["x"],"b":null,"_line":1},{"a":null,"b":[1],"_line":2}]`)
	defer in.Release()
	rows, rej := tcProcess(t, v, in)
	tcEqual(t, "rows", rows, nil)
	tcEqual(t, "rejects", tcRejects(rej), []string{"equal_lengths a 1", "equal_lengths a 2"})
	if len(rej) == 2 && !strings.Contains(rej[1].Reason, "a=null, b=1") {
		t.Errorf("reason %q", rej[1].Reason)
	}
}

func TestValidateConcurrentProcess(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "id:string", "label:string", "p:float64", "_line:int64")
	v, err := NewValidate(mem, s, []config.Rule{
		{Required: []string{"id"}},
		{Enum: &config.EnumRule{Column: "label", Values: []string{"a", "b"}}},
		{Range: &config.RangeRule{Column: "p", Min: tcFloat(0), Max: tcFloat(1)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, `[{"id":"1","label":"a","p":0.5,"_line":1},{"id":null,"label":"a","p":0.5,"_line":2},{"id":"3","label":"c","p":0.5,"_line":3},{"id":"4","label":"b","p":2,"_line":4},{"id":"5","label":"b","p":1,"_line":5}]`)
	defer in.Release()
	tcConcurrent(t, v, in)
}

func TestCmpIntFloat(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int64
		f    float64
		want int
	}{
		{"equal", 3, 3, 0},
		{"below a fraction", 3, 3.5, -1},
		{"above a fraction", 4, 3.5, 1},
		{"negative fraction", -3, -3.5, 1},
		{"past 2^53, which float64 rounds", 1<<53 + 1, 1 << 53, 1},
		{"largest int64 against 2^63", math.MaxInt64, 1 << 63, -1},
		{"smallest int64 against -2^63", math.MinInt64, -(1 << 63), 0},
		{"against +Inf", math.MaxInt64, math.Inf(1), -1},
		{"against -Inf", math.MinInt64, math.Inf(-1), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cmpIntFloat(tc.n, tc.f); got != tc.want {
				t.Errorf("cmpIntFloat(%d, %v) = %d, want %d", tc.n, tc.f, got, tc.want)
			}
		})
	}
}

// TestValidateRangeIntegersExact: an integer column is held to its
// bounds exactly, past 2^53 too, in lists as well.
func TestValidateRangeIntegersExact(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "i:int64", "l:list<int64>", "_line:int64")
	v, err := NewValidate(mem, s, []config.Rule{
		{Range: &config.RangeRule{Column: "i", Max: tcFloat(1 << 53)}},
		{Range: &config.RangeRule{Column: "l", Min: tcFloat(0.5)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, `[{"i":9007199254740992,"l":[1],"_line":1},{"i":9007199254740993,"l":[1],"_line":2},{"i":1,"l":[1,0],"_line":3}]`)
	defer in.Release()
	rej := &pipeline.Rejects{}
	out, err := v.Process(t.Context(), in, rej)
	if err != nil {
		t.Fatal(err)
	}
	out.Release()
	var got []string
	for _, r := range rej.List() {
		got = append(got, fmt.Sprintf("%d %s", r.Line, r.Reason))
	}
	if want := "2 value 9007199254740993 is outside [-Inf, 9007199254740992]|3 value 0 is outside [0.5, +Inf]"; strings.Join(got, "|") != want {
		t.Errorf("rejects %q, want %q", strings.Join(got, "|"), want)
	}
}
