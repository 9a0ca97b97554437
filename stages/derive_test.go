package stages

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

func TestDerive(t *testing.T) {
	tests := []struct {
		name    string
		cols    []string
		batches []string // processed in order by one stage
		slice   []int64  // process in.NewSlice(slice[0], slice[1]) of each batch
		specs   []config.Derivation
		names   []string
		ordered bool
		want    []string // rows of all batches
	}{
		{
			// As SQL's CASE WHEN k = 'x' THEN upper(s) ELSE s END: the rows
			// when leaves out keep their value, where they became null.
			name:    "replace with when keeps the other rows' values",
			cols:    []string{"s:string", "k:string", "_line:int64"},
			batches: []string{`[{"s":"Hello","k":"x","_line":1},{"s":"World","k":"y","_line":2},{"s":"Null","k":null,"_line":3},{"s":null,"k":"x","_line":4},{"s":"Big","k":"X","_line":5}]`},
			specs:   []config.Derivation{{Name: "s", Fn: "upper", Args: []string{"s"}, Replace: true, When: &config.When{Column: "k", In: []string{"x"}}}},
			names:   []string{"s", "k", "_line"},
			want: []string{
				`1:{"k":"x","s":"HELLO"}`,
				`2:{"k":"y","s":"World"}`,
				`3:{"k":null,"s":"Null"}`,
				`4:{"k":"x","s":null}`,
				`5:{"k":"X","s":"Big"}`,
			},
		},
		{
			name:    "lower on a string, nulls stay null",
			cols:    []string{"s:string", "_line:int64"},
			batches: []string{`[{"s":"MiXed Case","_line":1},{"s":null,"_line":2},{"s":"ÀÉÎ","_line":3},{"s":"","_line":4}]`},
			specs:   []config.Derivation{{Name: "s_lower", Fn: "lower", Args: []string{"s"}}},
			names:   []string{"s", "_line", "s_lower"},
			want: []string{
				`1:{"s":"MiXed Case","s_lower":"mixed case"}`,
				`2:{"s":null,"s_lower":null}`,
				`3:{"s":"ÀÉÎ","s_lower":"àéî"}`,
				`4:{"s":"","s_lower":""}`,
			},
		},
		{
			// Ranks matched to candidates by id: a null id or key matches
			// nothing (it matched "" and so each other).
			name:    "align_by_key: by id, null where nothing matches",
			cols:    []string{"ids:list<string>", "keys:list<string>", "ranks:list<int64>"},
			batches: []string{`[{"ids":["c1","c2","c3"],"keys":["c3","c1"],"ranks":[0,1]},{"ids":["c1",null],"keys":[null,"c1"],"ranks":[7,8]},{"ids":null,"keys":["a"],"ranks":[1]},{"ids":[""],"keys":[null],"ranks":[5]}]`},
			specs:   []config.Derivation{{Name: "r", Fn: "align_by_key", Args: []string{"ids", "keys", "ranks"}}},
			names:   []string{"ids", "keys", "ranks", "r"},
			want: []string{
				`{"ids":["c1","c2","c3"],"keys":["c3","c1"],"r":[1,null,0],"ranks":[0,1]}`,
				`{"ids":["c1",null],"keys":[null,"c1"],"r":[8,null],"ranks":[7,8]}`,
				`{"ids":null,"keys":["a"],"r":null,"ranks":[1]}`,
				`{"ids":[""],"keys":[null],"r":[null],"ranks":[5]}`,
			},
		},
		{
			name:    "upper on list<string> with a null list and a null element",
			cols:    []string{"v:list<string>"},
			batches: []string{`[{"v":["a","B"]},{"v":null},{"v":[null,"c"]},{"v":[]}]`},
			specs:   []config.Derivation{{Name: "v_up", Fn: "upper", Args: []string{"v"}}},
			names:   []string{"v", "v_up"},
			want: []string{
				`{"v":["a","B"],"v_up":["A","B"]}`,
				`{"v":null,"v_up":null}`,
				`{"v":[null,"c"],"v_up":[null,"C"]}`,
				`{"v":[],"v_up":[]}`,
			},
		},
		{
			name:    "lower on a sliced list<string> batch",
			cols:    []string{"v:list<string>"},
			batches: []string{`[{"v":["A"]},{"v":["B","C"]},{"v":null},{"v":["D"]}]`},
			slice:   []int64{1, 3},
			specs:   []config.Derivation{{Name: "v", Fn: "lower", Args: []string{"v"}, Replace: true}},
			names:   []string{"v"},
			want:    []string{`{"v":["b","c"]}`, `{"v":null}`},
		},
		{
			name:    "replace overwrites the column in place",
			cols:    []string{"a:string", "label:string", "z:int64"},
			batches: []string{`[{"a":"x","label":"YES","z":1},{"a":"y","label":null,"z":2}]`},
			specs:   []config.Derivation{{Name: "label", Fn: "lower", Args: []string{"label"}, Replace: true}},
			names:   []string{"a", "label", "z"},
			want:    []string{`{"a":"x","label":"yes","z":1}`, `{"a":"y","label":null,"z":2}`},
		},
		{
			name:    "replace may change the column's type",
			cols:    []string{"text:string"},
			batches: []string{`[{"text":"two words"}]`},
			specs:   []config.Derivation{{Name: "text", Fn: "n_words", Args: []string{"text"}, Replace: true}},
			names:   []string{"text"},
			want:    []string{`{"text":2}`},
		},
		{
			name:    "count_equal",
			cols:    []string{"votes:list<string>"},
			batches: []string{`[{"votes":["a","b","a"]},{"votes":null},{"votes":[]},{"votes":[null,"a","A"]},{"votes":["b"]}]`},
			specs:   []config.Derivation{{Name: "n_a", Fn: "count_equal", Args: []string{"votes"}, Value: "a"}},
			names:   []string{"votes", "n_a"},
			want: []string{
				`{"n_a":2,"votes":["a","b","a"]}`,
				`{"n_a":null,"votes":null}`,
				`{"n_a":0,"votes":[]}`,
				`{"n_a":1,"votes":[null,"a","A"]}`,
				`{"n_a":0,"votes":["b"]}`,
			},
		},
		{
			name:    "majority with min 3",
			cols:    []string{"votes:list<string>"},
			batches: []string{`[{"votes":["a","a","b","b",null]},{"votes":["a","a","a","b",null]},{"votes":null},{"votes":[]},{"votes":[null,null,null]},{"votes":["b","a","b","a","b"]}]`},
			specs:   []config.Derivation{{Name: "has_majority", Fn: "majority", Args: []string{"votes"}, Min: 3}},
			names:   []string{"votes", "has_majority"},
			want: []string{
				`{"has_majority":false,"votes":["a","a","b","b",null]}`,
				`{"has_majority":true,"votes":["a","a","a","b",null]}`,
				`{"has_majority":null,"votes":null}`,
				`{"has_majority":false,"votes":[]}`,
				`{"has_majority":false,"votes":[null,null,null]}`,
				`{"has_majority":true,"votes":["b","a","b","a","b"]}`,
			},
		},
		{
			name:    "pair_key is order-free",
			cols:    []string{"x:string", "y:string"},
			batches: []string{`[{"x":"m1","y":"m2"},{"x":"m2","y":"m1"},{"x":"a","y":"a"},{"x":null,"y":"b"},{"x":"b","y":null},{"x":"B","y":"a"}]`},
			specs:   []config.Derivation{{Name: "pair", Fn: "pair_key", Args: []string{"x", "y"}}},
			names:   []string{"x", "y", "pair"},
			want: []string{
				`{"pair":"m1|m2","x":"m1","y":"m2"}`,
				`{"pair":"m1|m2","x":"m2","y":"m1"}`,
				`{"pair":"a|a","x":"a","y":"a"}`,
				`{"pair":null,"x":null,"y":"b"}`,
				`{"pair":null,"x":"b","y":null}`,
				`{"pair":"B|a","x":"B","y":"a"}`,
			},
		},
		{
			// (a|b, c) and (a, b|c) were both a|b|c.
			name:    "pair_key escapes | and \\ inside ids",
			cols:    []string{"x:string", "y:string"},
			batches: []string{`[{"x":"a|b","y":"c"},{"x":"a","y":"b|c"},{"x":"a\\","y":"|b"}]`},
			specs:   []config.Derivation{{Name: "pair", Fn: "pair_key", Args: []string{"x", "y"}}},
			names:   []string{"x", "y", "pair"},
			want: []string{
				`{"pair":"a\\|b|c","x":"a|b","y":"c"}`,
				`{"pair":"a|b\\|c","x":"a","y":"b|c"}`,
				`{"pair":"a\\\\|\\|b","x":"a\\","y":"|b"}`,
			},
		},
		{
			name: "n_words with unicode spaces and newlines",
			cols: []string{"t:string"},
			batches: []string{`[
				{"t":"hello world"},
				{"t":"  lead\u00a0nbsp\u2003em\nnew\r\nline\ttab  "},
				{"t":"ideographic\u3000space and NEL\u0085here"},
				{"t":"日本語 テキスト"},
				{"t":"zero\u200bwidth is not a space"},
				{"t":""},
				{"t":" \n\t\u00a0"},
				{"t":null}
			]`},
			specs: []config.Derivation{{Name: "n", Fn: "n_words", Args: []string{"t"}}},
			names: []string{"t", "n"},
			want: []string{
				`{"n":2,"t":"hello world"}`,
				"{\"n\":6,\"t\":\"  lead\u00a0nbsp\u2003em\\nnew\\r\\nline\\ttab  \"}",
				"{\"n\":5,\"t\":\"ideographic\u3000space and NEL\u0085here\"}",
				`{"n":2,"t":"日本語 テキスト"}`,
				"{\"n\":5,\"t\":\"zero\u200bwidth is not a space\"}",
				`{"n":0,"t":""}`,
				"{\"n\":0,\"t\":\" \\n\\t\u00a0\"}",
				`{"n":null,"t":null}`,
			},
		},
		{
			name:    "list_length",
			cols:    []string{"l:list<int64>"},
			batches: []string{`[{"l":[1,2,3]},{"l":[]},{"l":null},{"l":[null]}]`},
			specs:   []config.Derivation{{Name: "n", Fn: "list_length", Args: []string{"l"}}},
			names:   []string{"l", "n"},
			want:    []string{`{"l":[1,2,3],"n":3}`, `{"l":[],"n":0}`, `{"l":null,"n":null}`, `{"l":[null],"n":1}`},
		},
		{
			name: "total_length over list<struct<text,citations>>",
			cols: []string{"st:list<struct<text:string,citations:list<string>>>"},
			batches: []string{`[
				{"st":[{"text":"a","citations":["r1","r2"]},{"text":"b","citations":[]},{"text":"c","citations":null}]},
				{"st":[{"text":"a","citations":["r1"]},{"text":"b","citations":["r2","r3"]}]},
				{"st":[]},
				{"st":null},
				{"st":[null,{"text":"x","citations":["r4"]}]}
			]`},
			specs: []config.Derivation{{Name: "n_citations", Fn: "total_length", Args: []string{"st"}, Value: "citations"}},
			names: []string{"st", "n_citations"},
			want: []string{
				`{"n_citations":2,"st":[{"citations":["r1","r2"],"text":"a"},{"citations":[],"text":"b"},{"citations":null,"text":"c"}]}`,
				`{"n_citations":3,"st":[{"citations":["r1"],"text":"a"},{"citations":["r2","r3"],"text":"b"}]}`,
				`{"n_citations":0,"st":[]}`,
				`{"n_citations":null,"st":null}`,
				`{"n_citations":1,"st":[null,{"citations":["r4"],"text":"x"}]}`,
			},
		},
		{
			name:    "coalesce takes the first non-null",
			cols:    []string{"raw_text:string", "text:string", "other:string"},
			batches: []string{`[{"raw_text":null,"text":"t","other":"o"},{"raw_text":"r","text":"t","other":"o"},{"raw_text":null,"text":null,"other":"o"},{"raw_text":null,"text":null,"other":null},{"raw_text":"","text":"t","other":null}]`},
			specs:   []config.Derivation{{Name: "body", Fn: "coalesce", Args: []string{"raw_text", "text", "other"}}},
			names:   []string{"raw_text", "text", "other", "body"},
			want: []string{
				`{"body":"t","other":"o","raw_text":null,"text":"t"}`,
				`{"body":"r","other":"o","raw_text":"r","text":"t"}`,
				`{"body":"o","other":"o","raw_text":null,"text":null}`,
				`{"body":null,"other":null,"raw_text":null,"text":null}`,
				`{"body":"","other":null,"raw_text":"","text":"t"}`,
			},
		},
		{
			name: "occurrence counts across batches in order",
			cols: []string{"k:string", "n:int64", "_line:int64"},
			batches: []string{
				`[{"k":"a","n":1,"_line":1},{"k":"b","n":1,"_line":2},{"k":"a","n":1,"_line":3}]`,
				`[{"k":"a","n":1,"_line":4},{"k":"c","n":1,"_line":5},{"k":"b","n":2,"_line":6},{"k":null,"n":1,"_line":7},{"k":null,"n":1,"_line":8}]`,
			},
			specs:   []config.Derivation{{Name: "occ", Fn: "occurrence", Args: []string{"k"}}, {Name: "occ_kn", Fn: "occurrence", Args: []string{"k", "n"}}},
			names:   []string{"k", "n", "_line", "occ", "occ_kn"},
			ordered: true,
			want: []string{
				`1:{"k":"a","n":1,"occ":0,"occ_kn":0}`,
				`2:{"k":"b","n":1,"occ":0,"occ_kn":0}`,
				`3:{"k":"a","n":1,"occ":1,"occ_kn":1}`,
				`4:{"k":"a","n":1,"occ":2,"occ_kn":2}`,
				`5:{"k":"c","n":1,"occ":0,"occ_kn":0}`,
				`6:{"k":"b","n":2,"occ":1,"occ_kn":0}`,
				`7:{"k":null,"n":1,"occ":0,"occ_kn":0}`,
				`8:{"k":null,"n":1,"occ":1,"occ_kn":1}`,
			},
		},
		{
			name:    "a derivation may use an earlier one's column",
			cols:    []string{"x:string", "y:string"},
			batches: []string{`[{"x":"B","y":"a"}]`},
			specs: []config.Derivation{
				{Name: "x", Fn: "lower", Args: []string{"x"}, Replace: true},
				{Name: "pair", Fn: "pair_key", Args: []string{"x", "y"}},
				{Name: "pair_up", Fn: "upper", Args: []string{"pair"}},
			},
			names: []string{"x", "y", "pair", "pair_up"},
			want:  []string{`{"pair":"a|b","pair_up":"A|B","x":"b","y":"a"}`},
		},
		{
			name:    "empty batch",
			cols:    []string{"s:string", "v:list<string>"},
			batches: []string{`[]`},
			specs:   []config.Derivation{{Name: "s2", Fn: "upper", Args: []string{"s"}}, {Name: "v2", Fn: "lower", Args: []string{"v"}}, {Name: "m", Fn: "majority", Args: []string{"v"}, Min: 1}},
			names:   []string{"s", "v", "s2", "v2", "m"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, tt.cols...)
			d, err := NewDerive(mem, s, tt.specs)
			if err != nil {
				t.Fatal(err)
			}
			if d.Name() != "derive" {
				t.Errorf("Name() = %q", d.Name())
			}
			if d.Ordered() != tt.ordered {
				t.Errorf("Ordered() = %v, want %v", d.Ordered(), tt.ordered)
			}
			tcEqual(t, "names", tcNames(d.Schema()), tt.names)
			var rows []string
			for _, js := range tt.batches {
				in := tcBatch(t, mem, s, js)
				if tt.slice != nil {
					sl := in.NewSlice(tt.slice[0], tt.slice[1])
					in.Release()
					in = sl
				}
				r, rej := tcProcess(t, d, in)
				in.Release()
				if len(rej) != 0 {
					t.Errorf("unexpected rejects %v", tcRejects(rej))
				}
				rows = append(rows, r...)
			}
			tcEqual(t, "rows", rows, tt.want)
			// A stage without a whole-table derivation holds nothing.
			out, err := d.Flush(t.Context(), &pipeline.Rejects{})
			if out != nil || err != nil {
				t.Errorf("Flush = %v, %v; want nil, nil", out, err)
			}
		})
	}
}

func TestDeriveConflictingDuplicate(t *testing.T) {
	// The same rows whether held in memory, spilled after the first
	// batch, or spilled from the start.
	for _, spill := range []int64{1 << 40, 100, 1} {
		t.Run(fmt.Sprintf("spill=%d", spill), func(t *testing.T) {
			setForTest(t, &SpillBytes, spill)
			setForTest(t, &SpillDir, t.TempDir())
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, "pair:string", "turn:int64", "label:string", "_line:int64")
			d, err := NewDerive(mem, s, []config.Derivation{
				{Name: "occ", Fn: "occurrence", Args: []string{"pair"}},
				{Name: "conflict", Fn: "conflicting_duplicate", Args: []string{"pair", "turn"}, Value: "label"},
			})
			if err != nil {
				t.Fatal(err)
			}
			var st pipeline.Stage = d
			if o, ok := st.(pipeline.Ordered); !ok || !o.Ordered() {
				t.Fatal("a whole-table derive must be Ordered")
			}
			if _, ok := st.(pipeline.Flusher); !ok {
				t.Fatal("Derive must be a Flusher")
			}
			batches := []string{
				`[{"pair":"p1","turn":1,"label":"a","_line":1},{"pair":"p2","turn":1,"label":"a","_line":2},{"pair":"p3","turn":1,"label":null,"_line":3}]`,
				`[]`,
				`[{"pair":"p1","turn":1,"label":"a","_line":4},{"pair":"p2","turn":1,"label":"b","_line":5},{"pair":"p3","turn":1,"label":"a","_line":6},{"pair":"p4","turn":1,"label":null,"_line":7}]`,
				`[{"pair":"p4","turn":1,"label":null,"_line":8},{"pair":"p1","turn":2,"label":"b","_line":9},{"pair":"p5","turn":1,"label":"a","_line":10}]`,
			}
			for i, js := range batches {
				in := tcBatch(t, mem, s, js)
				out, err := d.Process(t.Context(), in, &pipeline.Rejects{})
				in.Release() // the stage must have kept its own reference
				if err != nil {
					t.Fatal(err)
				}
				if out != nil {
					out.Release()
					t.Fatalf("batch %d: Process returned a batch; a whole-table derive holds rows until Flush", i)
				}
			}
			rej := &pipeline.Rejects{}
			out, err := d.Flush(t.Context(), rej)
			if err != nil {
				t.Fatal(err)
			}
			if out == nil {
				t.Fatal("Flush returned no batch")
			}
			if !out.Schema().Equal(d.Schema()) {
				t.Errorf("schema %s, want %s", out.Schema(), d.Schema())
			}
			tcEqual(t, "rows", tcRows(out), []string{
				`1:{"conflict":false,"label":"a","occ":0,"pair":"p1","turn":1}`,
				`2:{"conflict":true,"label":"a","occ":0,"pair":"p2","turn":1}`,
				`3:{"conflict":true,"label":null,"occ":0,"pair":"p3","turn":1}`,
				`4:{"conflict":false,"label":"a","occ":1,"pair":"p1","turn":1}`,
				`5:{"conflict":true,"label":"b","occ":1,"pair":"p2","turn":1}`,
				`6:{"conflict":true,"label":"a","occ":1,"pair":"p3","turn":1}`,
				`7:{"conflict":false,"label":null,"occ":0,"pair":"p4","turn":1}`,
				`8:{"conflict":false,"label":null,"occ":1,"pair":"p4","turn":1}`,
				`9:{"conflict":false,"label":"b","occ":2,"pair":"p1","turn":2}`,
				`10:{"conflict":false,"label":"a","occ":0,"pair":"p5","turn":1}`,
			})
			out.Release()
			if rej.Len() != 0 {
				t.Errorf("unexpected rejects %v", tcRejects(rej.List()))
			}
			again, err := d.Flush(t.Context(), &pipeline.Rejects{})
			if again != nil || err != nil {
				t.Errorf("second Flush = %v, %v; want nil, nil", again, err)
			}
			spillEmpty(t)
		})
	}
}

func TestDeriveFlushWithNothingHeld(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "k:string", "v:string")
	d, err := NewDerive(mem, s, []config.Derivation{{Name: "c", Fn: "conflicting_duplicate", Args: []string{"k"}, Value: "v"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Flush(t.Context(), &pipeline.Rejects{})
	if out != nil || err != nil {
		t.Errorf("Flush = %v, %v; want nil, nil", out, err)
	}
}

func TestDeriveBuildErrors(t *testing.T) {
	s := tcSchema(t, "s:string", "n:int64", "v:list<string>", "l:list<int64>", "st:list<struct<text:string,citations:list<string>>>", "_line:int64")
	names := make([]string, 0)
	for _, d := range Derivations() {
		names = append(names, d.Name)
	}
	tests := []struct {
		name  string
		specs []config.Derivation
		err   []string
		noCol bool
	}{
		{name: "name collision without replace", specs: []config.Derivation{{Name: "n", Fn: "n_words", Args: []string{"s"}}}, err: []string{"derive[0]", `column "n" exists`, "replace: true"}},
		{name: "collision with an earlier derived column", specs: []config.Derivation{{Name: "x", Fn: "lower", Args: []string{"s"}}, {Name: "x", Fn: "upper", Args: []string{"s"}}}, err: []string{"derive[1]", `column "x" exists`}},
		{name: "unknown fn lists the registered names", specs: []config.Derivation{{Name: "x", Fn: "nope", Args: []string{"s"}}}, err: []string{"derive[0]", `unknown derivation "nope"`, "(have " + strings.Join(names, ", ") + ")"}},
		{name: "unknown arg column", specs: []config.Derivation{{Name: "x", Fn: "lower", Args: []string{"gone"}}}, err: []string{"derive[0]: lower", `"gone"`}, noCol: true},
		{name: "by on upper", specs: []config.Derivation{{Name: "x", Fn: "upper", Args: []string{"s"}, By: []string{"n"}}}, err: []string{"derive[0]: upper: by does not apply to upper (it reads only its args)"}},
		{name: "min and by on n_words", specs: []config.Derivation{{Name: "x", Fn: "n_words", Args: []string{"s"}, Min: 3, By: []string{"n"}}}, err: []string{"min and by do not apply to n_words"}},
		{name: "digits on majority", specs: []config.Derivation{{Name: "x", Fn: "majority", Args: []string{"v"}, Min: 2, Digits: new(int)}}, err: []string{"digits does not apply to majority (it reads args, min)"}},
		{name: "grouped on lead", specs: []config.Derivation{{Name: "x", Fn: "lead", Args: []string{"s"}, By: []string{"n"}, Grouped: true}}, err: []string{"grouped does not apply to lead (it reads args, by)"}},
		{name: "index on split", specs: []config.Derivation{{Name: "x", Fn: "split", Args: []string{"s"}, Value: ",", Index: 1}}, err: []string{"index does not apply to split (it reads args, value, values)"}},
		{name: "no args", specs: []config.Derivation{{Name: "x", Fn: "coalesce"}}, err: []string{"coalesce", "at least one arg"}},
		{name: "nullif without values", specs: []config.Derivation{{Name: "x", Fn: "nullif", Args: []string{"s"}}}, err: []string{"derive[0]: nullif: values: list the texts that mean null"}},
		{name: "replace with when to another type", specs: []config.Derivation{{Name: "s", Fn: "split", Args: []string{"s"}, Value: ",", Replace: true, When: &config.When{Column: "n", In: []string{"1"}}}},
			err: []string{"derive[0]: split: replace with when keeps the other rows' s, but split makes list<string> of string: derive a new column instead"}},
		{name: "too many args", specs: []config.Derivation{{Name: "x", Fn: "lower", Args: []string{"s", "s"}}}, err: []string{"takes 1 args, got 2"}},
		{name: "pair_key takes two", specs: []config.Derivation{{Name: "x", Fn: "pair_key", Args: []string{"s"}}}, err: []string{"takes 2 args, got 1"}},
		{name: "lower on int64", specs: []config.Derivation{{Name: "x", Fn: "lower", Args: []string{"n"}}}, err: []string{"column n is int64, want string or list<string>"}},
		{name: "upper on list<int64>", specs: []config.Derivation{{Name: "x", Fn: "upper", Args: []string{"l"}}}, err: []string{"column l"}},
		{name: "count_equal on a string", specs: []config.Derivation{{Name: "x", Fn: "count_equal", Args: []string{"s"}, Value: "a"}}, err: []string{"want list<string>"}},
		{name: "count_equal without a value", specs: []config.Derivation{{Name: "x", Fn: "count_equal", Args: []string{"v"}}}, err: []string{"count_equal: value must be the value to count"}},
		{name: "lead beside a derivation that rejects rows", specs: []config.Derivation{{Name: "p", Fn: "parse_json", Args: []string{"s"}, Type: "int64"}, {Name: "x", Fn: "lead", Args: []string{"s"}, By: []string{"n"}}}, err: []string{"derive[1]: lead reads other rows, and parse_json (derive[0]) rejects rows in the same step"}},
		{name: "lag before a derivation that rejects rows", specs: []config.Derivation{{Name: "x", Fn: "lag", Args: []string{"s"}}, {Name: "p", Fn: "parse_json", Args: []string{"s"}, Type: "int64"}}, err: []string{"derive[0]: lag reads other rows, and parse_json (derive[1])"}},
		{name: "majority with min 0", specs: []config.Derivation{{Name: "x", Fn: "majority", Args: []string{"v"}}}, err: []string{"min must be"}},
		{name: "majority on list<int64>", specs: []config.Derivation{{Name: "x", Fn: "majority", Args: []string{"l"}, Min: 2}}, err: []string{"want list<string>"}},
		{name: "pair_key on int64", specs: []config.Derivation{{Name: "x", Fn: "pair_key", Args: []string{"s", "n"}}}, err: []string{"column n is int64, want string"}},
		{name: "n_words on a list", specs: []config.Derivation{{Name: "x", Fn: "n_words", Args: []string{"v"}}}, err: []string{"want string"}},
		{name: "list_length on a string", specs: []config.Derivation{{Name: "x", Fn: "list_length", Args: []string{"s"}}}, err: []string{"want a list"}},
		{name: "total_length on a list of strings", specs: []config.Derivation{{Name: "x", Fn: "total_length", Args: []string{"v"}, Value: "citations"}}, err: []string{"want list<struct<...>>"}},
		{name: "total_length on a non-list field", specs: []config.Derivation{{Name: "x", Fn: "total_length", Args: []string{"st"}, Value: "text"}}, err: []string{"value must name a list field", `"text"`}},
		{name: "total_length on a missing field", specs: []config.Derivation{{Name: "x", Fn: "total_length", Args: []string{"st"}, Value: "nope"}}, err: []string{`"nope"`}},
		{name: "coalesce on a list", specs: []config.Derivation{{Name: "x", Fn: "coalesce", Args: []string{"s", "v"}}}, err: []string{"column v"}},
		{name: "conflicting_duplicate without a value column", specs: []config.Derivation{{Name: "x", Fn: "conflicting_duplicate", Args: []string{"s"}, Value: "gone"}}, err: []string{"value", `"gone"`}, noCol: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDerive(memory.NewGoAllocator(), s, tt.specs)
			if d != nil {
				t.Errorf("got a stage with the error")
			}
			tcWantErr(t, err, tt.err...)
			if tt.noCol != errors.Is(err, ErrNoColumn) {
				t.Errorf("errors.Is(%v, ErrNoColumn) = %v, want %v", err, !tt.noCol, tt.noCol)
			}
		})
	}
}

func TestDerivations(t *testing.T) {
	want := []string{"coalesce", "conflicting_duplicate", "count_equal", "list_length", "lower", "majority", "n_words", "occurrence", "pair_key", "total_length", "upper"}
	ds := Derivations()
	var got []string
	for _, d := range ds {
		got = append(got, d.Name)
		if d.Args == "" || d.Doc == "" {
			t.Errorf("%s is not documented: args %q doc %q", d.Name, d.Args, d.Doc)
		}
		if d.fn == nil {
			t.Errorf("%s has no function", d.Name)
		}
	}
	if !sort.StringsAreSorted(got) {
		t.Errorf("not sorted: %v", got)
	}
	// Other files may register more; the documented ones must be there.
	have := map[string]bool{}
	for _, n := range got {
		have[n] = true
	}
	for _, n := range want {
		if !have[n] {
			t.Errorf("%s is not registered (have %v)", n, got)
		}
	}
	// The result is a copy: changing it does not change the registry.
	ds[0].Name = "changed"
	if Derivations()[0].Name == "changed" {
		t.Error("Derivations returns the registry's own entries")
	}
	t.Run("registering a name twice panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		Register("lower", "", "", nil)
	})
}

func TestDeriveConcurrentProcess(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "x:string", "y:string", "votes:list<string>", "st:list<struct<text:string,citations:list<string>>>")
	d, err := NewDerive(mem, s, []config.Derivation{
		{Name: "votes", Fn: "lower", Args: []string{"votes"}, Replace: true},
		{Name: "n_a", Fn: "count_equal", Args: []string{"votes"}, Value: "a"},
		{Name: "maj", Fn: "majority", Args: []string{"votes"}, Min: 2},
		{Name: "pair", Fn: "pair_key", Args: []string{"x", "y"}},
		{Name: "words", Fn: "n_words", Args: []string{"x"}},
		{Name: "n_st", Fn: "list_length", Args: []string{"st"}},
		{Name: "n_cit", Fn: "total_length", Args: []string{"st"}, Value: "citations"},
		{Name: "first", Fn: "coalesce", Args: []string{"y", "x"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Ordered() {
		t.Fatal("row-wise derivations must not be Ordered")
	}
	in := tcBatch(t, mem, s, `[{"x":"b c","y":"a","votes":["A","a","B"],"st":[{"text":"t","citations":["r"]}]},{"x":null,"y":null,"votes":null,"st":null}]`)
	defer in.Release()
	tcConcurrent(t, d, in)
}

// TestDeriveOccurrenceSpills: occurrence numbers the rows of a key the same
// way when its counts are moved to run files as soon as they are set, and
// Close removes the files.
func TestDeriveOccurrenceSpills(t *testing.T) {
	for _, memKeys := range []int{1, 3, 1 << 20} {
		t.Run(fmt.Sprintf("memkeys=%d", memKeys), func(t *testing.T) {
			spillKeys(t, memKeys, t.TempDir())
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, "k:string")
			d, err := NewDerive(mem, s, []config.Derivation{{Name: "occ", Fn: "occurrence", Args: []string{"k"}}})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, 4))
			counts := map[string]int{}
			var got, want []string
			for batch := 0; batch < 4; batch++ {
				var rows []string
				for i := 0; i < 50; i++ {
					k := fmt.Sprintf("k%d", r.IntN(20))
					rows = append(rows, fmt.Sprintf(`{"k":%q}`, k))
					want = append(want, fmt.Sprintf(`{"k":%q,"occ":%d}`, k, counts[k]))
					counts[k]++
				}
				in := tcBatch(t, mem, s, "["+strings.Join(rows, ",")+"]")
				out, rej := tcProcess(t, d, in)
				in.Release()
				if len(rej) != 0 {
					t.Fatalf("unexpected rejects %v", tcRejects(rej))
				}
				got = append(got, out...)
			}
			tcEqual(t, "rows", got, want)
			d.Close()
			spillEmpty(t)
		})
	}
}

// TestDeriveLead: the next row's value of the same key (a null key is a
// key too; a null value is a value), null on a key's last row, the same
// whether the rows are held in memory, spilled after a batch or from the
// start (lead on input columns is two-pass), or the whole table is held
// (lead on a column an earlier derivation makes).
func TestDeriveLead(t *testing.T) {
	batches := []string{
		`[{"r":"a","v":"A1","_line":1},{"r":"b","v":"B1","_line":2},{"r":"a","v":null,"_line":3}]`,
		`[]`,
		`[{"r":null,"v":"N1","_line":4},{"r":"a","v":"A3","_line":5}]`,
		`[{"r":"b","v":"B2","_line":6},{"r":null,"v":"N2","_line":7}]`,
	}
	want := []string{
		`1:{"lv":"a1","next":null,"r":"a","v":"A1"}`,
		`2:{"lv":"b1","next":"b2","r":"b","v":"B1"}`,
		`3:{"lv":null,"next":"a3","r":"a","v":null}`,
		`4:{"lv":"n1","next":"n2","r":null,"v":"N1"}`,
		`5:{"lv":"a3","next":null,"r":"a","v":"A3"}`,
		`6:{"lv":"b2","next":null,"r":"b","v":"B2"}`,
		`7:{"lv":"n2","next":null,"r":null,"v":"N2"}`,
	}
	for _, spill := range []int64{1 << 40, 100, 1} {
		for _, derived := range []bool{false, true} {
			t.Run(fmt.Sprintf("spill=%d,derived=%v", spill, derived), func(t *testing.T) {
				setForTest(t, &SpillBytes, spill)
				setForTest(t, &SpillDir, t.TempDir())
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				s := tcSchema(t, "r:string", "v:string", "_line:int64")
				specs := []config.Derivation{
					{Name: "lv", Fn: "lower", Args: []string{"v"}},
					{Name: "next", Fn: "lead", Args: []string{"v"}, By: []string{"r"}},
					{Name: "next", Fn: "lower", Args: []string{"next"}, Replace: true},
				}
				if derived {
					specs = []config.Derivation{
						{Name: "lv", Fn: "lower", Args: []string{"v"}},
						{Name: "next", Fn: "lead", Args: []string{"lv"}, By: []string{"r"}},
					}
				}
				d, err := NewDerive(mem, s, specs)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				if d.twoPass == derived {
					t.Fatalf("two-pass %v for lead on a derived column %v", d.twoPass, derived)
				}
				for _, js := range batches {
					in := tcBatch(t, mem, s, js)
					out, err := d.Process(t.Context(), in, &pipeline.Rejects{})
					in.Release()
					if err != nil || out != nil {
						t.Fatalf("Process = %v, %v; want nil, nil", out, err)
					}
				}
				if files, _ := os.ReadDir(SpillDir); d.twoPass && spill == 1 && len(files) == 0 {
					t.Error("held rows past SpillBytes are not in a spill file")
				}
				var rows []string
				err = d.FlushTo(t.Context(), func(b arrow.RecordBatch, _ *pipeline.Rejects) error {
					defer b.Release()
					rows = append(rows, tcRows(b)...)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				tcEqual(t, "rows", rows, want)
				spillEmpty(t)
			})
		}
	}
}

// TestCountWords checks n_words's counter against strings.FieldsFunc with
// unicode.IsSpace: every byte alone and between words (invalid UTF-8
// included), and the Unicode spaces past ASCII.
func TestCountWords(t *testing.T) {
	cases := []string{"", " ", "a", " a ", "a b", "a\u00a0b", "a\u0085b", "a\u2003b\u3000c", "\xff", "a\xffb", "a\xe2\x80", "é è", "\t\n\v\f\r"}
	for b := range 256 {
		cases = append(cases, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"b")
	}
	for _, s := range cases {
		if got, want := countWords(s), int64(len(strings.FieldsFunc(s, unicode.IsSpace))); got != want {
			t.Errorf("countWords(%q) = %d, want %d", s, got, want)
		}
	}
}

// FuzzCountWords compares countWords with strings.FieldsFunc.
func FuzzCountWords(f *testing.F) {
	f.Add("a b\u00a0c\xffd")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := countWords(s), int64(len(strings.FieldsFunc(s, unicode.IsSpace))); got != want {
			t.Fatalf("countWords(%q) = %d, want %d", s, got, want)
		}
	})
}

// TestAppendCase holds the lower and upper derivations' byte-by-byte
// ASCII path to strings.ToLower and ToUpper, on named cases and on random
// strings mixing ASCII, accented letters and invalid UTF-8, appended after
// existing bytes.
func TestAppendCase(t *testing.T) {
	lower, upper := appendCase(strings.ToLower, 'A', 'Z'), appendCase(strings.ToUpper, 'a', 'z')
	check := func(t *testing.T, s string) {
		t.Helper()
		if got, want := string(lower([]byte("x"), s)), "x"+strings.ToLower(s); got != want {
			t.Errorf("lower(%q) = %q, want %q", s, got[1:], want[1:])
		}
		if got, want := string(upper([]byte("x"), s)), "x"+strings.ToUpper(s); got != want {
			t.Errorf("upper(%q) = %q, want %q", s, got[1:], want[1:])
		}
	}
	for _, s := range []string{"", "A", "b", "MiXed Case 09 @[`{", "ÀÉÎ", "straße", "ǅ", "\xff\xfeAb", "İstanbul"} {
		check(t, s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "Z", "m", "Q", " ", "@", "[", "`", "{", "é", "Ö", "ß", "\xc3", "0"}
	for i := 0; i < 2000; i++ {
		var sb strings.Builder
		for k := r.IntN(12); k > 0; k-- {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		check(t, sb.String())
	}
}

// TestAlignByKeyRejectsMisalignedRows: keys and values of different
// lengths reject the row whatever ids holds, a null list too; null keys
// or values give a null for each id.
func TestAlignByKeyRejectsMisalignedRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "ids:list<string>", "keys:list<string>", "vals:list<int64>", "_line:int64")
	d, err := NewDerive(mem, s, []config.Derivation{{Name: "al", Fn: "align_by_key", Args: []string{"ids", "keys", "vals"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := tcBatch(t, mem, s, `[{"ids":["c1"],"keys":["c1"],"vals":[1,2],"_line":1},{"ids":null,"keys":["c1"],"vals":[1,2],"_line":2},{"ids":null,"keys":["c1"],"vals":[1],"_line":3},{"ids":["c1"],"keys":null,"vals":[1,2],"_line":4},{"ids":["c1","c2"],"keys":null,"vals":null,"_line":5}]`)
	defer in.Release()
	rej := &pipeline.Rejects{}
	out, err := d.Process(t.Context(), in, rej)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	// Null keys or values match no id: each candidate stays, with a null.
	tcEqual(t, "rows", tcRows(out), []string{`3:{"al":null,"ids":null,"keys":["c1"],"vals":[1]}`, `4:{"al":[null],"ids":["c1"],"keys":null,"vals":[1,2]}`, `5:{"al":[null,null],"ids":["c1","c2"],"keys":null,"vals":null}`})
	tcEqual(t, "rejects", tcRejects(rej.List()), []string{"align_by_key  1", "align_by_key  2"})
}

// TestParseJSONRejectNamesColumn: a row parse_json rejects names the
// column it read in _rejects (it was null there).
func TestParseJSONRejectNamesColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "raw:string", "_line:int64")
	d, err := NewDerive(mem, s, []config.Derivation{{Name: "n", Fn: "parse_json", Args: []string{"raw"}, Type: "int64"}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := tcBatch(t, mem, s, `[{"raw":"1","_line":1},{"raw":"{bad","_line":2}]`)
	defer in.Release()
	rej := &pipeline.Rejects{}
	out, err := d.Process(t.Context(), in, rej)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	tcEqual(t, "rejects", tcRejects(rej.List()), []string{"parse_json raw 2"})
}

// TestParseJSONStrict: parse_json reads text as a JSON line is read:
// escapes JSON does not have, halves of surrogate pairs and a map key or
// struct field given twice reject the row (fastjson kept the escapes as
// text, and a map with a repeated key is one DuckDB refuses to read).
func TestParseJSONStrict(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "raw:string", "_line:int64")
	d, err := NewDerive(mem, s, []config.Derivation{
		{Name: "m", Fn: "parse_json", Args: []string{"raw"}, Type: "map<string,list<string>>"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows := []string{
		`{"k":["1"],"j":["2"]}`, // 1: fine
		`{"k":["1"],"k":["2"]}`, // 2: a key twice
		`{"k":["\ud800"]}`,      // 3: half a pair
		`{"\udc00":["x"]}`,      // 4: in a key
		`{"k":["\q"]}`,          // 5: no such escape
		`{"k":["\u00e9\n"]}`,    // 6: fine
		`{"k":["\\q"]}`,         // 7: an escaped backslash, then q: fine
	}
	var js []string
	for i, r := range rows {
		js = append(js, fmt.Sprintf(`{"raw":%q,"_line":%d}`, r, i+1))
	}
	in := tcBatch(t, mem, s, "["+strings.Join(js, ",")+"]")
	defer in.Release()
	rej := &pipeline.Rejects{}
	out, err := d.Process(t.Context(), in, rej)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	tcEqual(t, "rejects", tcRejects(rej.List()), []string{"parse_json raw 2", "parse_json raw 3", "parse_json raw 4", "parse_json raw 5"})
	var got []string
	for _, r := range rej.List() {
		got = append(got, r.Reason)
	}
	if len(got) != 4 {
		t.FailNow()
	}
	for i, want := range []string{`key "k" appears more than once`, "surrogate without its pair", "surrogate without its pair", `invalid escape \q`} {
		if !strings.Contains(got[i], want) {
			t.Errorf("reject %d: reason %q lacks %q", i, got[i], want)
		}
	}
	m := out.Column(out.Schema().FieldIndices("m")[0]).(*array.Map)
	if m.Len() != 3 || m.Keys().(*array.String).Value(m.Keys().Len()-1) != "k" {
		t.Errorf("kept %d rows: %v", m.Len(), m)
	}
	if v := m.Items().(*array.List).ListValues().(*array.String); v.Value(v.Len()-2) != "é\n" || v.Value(v.Len()-1) != `\q` {
		t.Errorf("values %v", v)
	}
}

// TestLineIndex: line_index is each row's place in its file from the line
// value names, so a row rejected before it (line 4 here) leaves a gap
// where occurrence would close up; config mistakes are errors.
func TestLineIndex(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "_line:int64")
	tests := []struct {
		name string
		d    config.Derivation
		want []string
		err  string
	}{
		{"from the first line", config.Derivation{Name: "i", Fn: "line_index"}, []string{`2:{"g":"a","i":1}`, `3:{"g":"a","i":2}`, `5:{"g":"a","i":4}`}, ""},
		{"under a header", config.Derivation{Name: "i", Fn: "line_index", Value: "2"}, []string{`2:{"g":"a","i":0}`, `3:{"g":"a","i":1}`, `5:{"g":"a","i":3}`}, ""},
		{"args", config.Derivation{Name: "i", Fn: "line_index", Args: []string{"g"}}, nil, "takes no args"},
		{"line 0", config.Derivation{Name: "i", Fn: "line_index", Value: "0"}, nil, `value: "0" is not a line number`},
		{"not a number", config.Derivation{Name: "i", Fn: "line_index", Value: "x"}, nil, `value: "x" is not a line number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err != "" {
				if _, err := NewDerive(mem, s, []config.Derivation{tt.d}); err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			tcEqual(t, "rows", deriveRows(t, mem, s, []config.Derivation{tt.d}, `[{"g":"a","_line":2},{"g":"a","_line":3},{"g":"a","_line":5}]`), tt.want)
		})
	}
}

// TestEqualsAcrossTypes: equals compares the values as text, so columns
// of two types compare (5 as int32, int64 and "5" are equal); a check
// refusing two types stopped such configs for a while.
func TestEqualsAcrossTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "a:int32", "b:int64", "s:string", "_line:int64")
	d, err := NewDerive(mem, s, []config.Derivation{{Name: "ab", Fn: "equals", Args: []string{"a", "b"}}, {Name: "bs", Fn: "equals", Args: []string{"b", "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := tcBatch(t, mem, s, `[{"a":5,"b":5,"s":"5","_line":1},{"a":5,"b":6,"s":"x","_line":2},{"a":null,"b":6,"s":null,"_line":3}]`)
	defer in.Release()
	out, err := d.Process(t.Context(), in, &pipeline.Rejects{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	tcEqual(t, "rows", tcRows(out), []string{
		`1:{"a":5,"ab":true,"b":5,"bs":true,"s":"5"}`,
		`2:{"a":5,"ab":false,"b":6,"bs":false,"s":"x"}`,
		`3:{"a":null,"ab":null,"b":6,"bs":null,"s":null}`,
	})
}

// TestNumbersAsTextHaveNoExponent: a float compares as text as the same
// number written as an integer or in a config's values does: 1000000,
// not Go's 1e+06, and 0.00001, not 1e-05 (equals, any_in and when all
// missed those).
func TestNumbersAsTextHaveNoExponent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "i:int64", "f:float64", "s:string", "_line:int64")
	specs := []config.Derivation{
		{Name: "if", Fn: "equals", Args: []string{"i", "f"}},
		{Name: "fs", Fn: "equals", Args: []string{"f", "s"}},
		{Name: "in", Fn: "any_in", Args: []string{"f"}, Values: []string{"1000000", "0.00001"}},
		{Name: "w", Fn: "coalesce", Args: []string{"s"}, When: &config.When{Column: "f", In: []string{"1000000"}}},
	}
	tcEqual(t, "rows", deriveRows(t, mem, s, specs, `[{"i":1000000,"f":1000000.0,"s":"1000000","_line":1},{"i":0,"f":0.00001,"s":"0.00001","_line":2},{"i":5,"f":5.5,"s":"5.5","_line":3}]`), []string{
		`1:{"f":1000000,"fs":true,"i":1000000,"if":true,"in":true,"s":"1000000","w":"1000000"}`,
		`2:{"f":0.00001,"fs":true,"i":0,"if":false,"in":true,"s":"0.00001","w":null}`,
		`3:{"f":5.5,"fs":true,"i":5,"if":false,"in":false,"s":"5.5","w":null}`,
	})
}

// TestNegativeZeroIsZero: -0.0 is 0 to when, any_in and enum_index, as
// it is to equals, unique and keys (when: {in: ["0"]} missed it, and
// "-0" took it).
func TestNegativeZeroIsZero(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "f:float64", "_line:int64")
	specs := []config.Derivation{
		{Name: "in", Fn: "any_in", Args: []string{"f"}, Values: []string{"0"}},
		{Name: "neg", Fn: "any_in", Args: []string{"f"}, Values: []string{"-0"}},
		{Name: "pos", Fn: "enum_index", Args: []string{"f"}, Values: []string{"1", "0"}},
		{Name: "w", Fn: "equals", Args: []string{"f", "f"}, When: &config.When{Column: "f", In: []string{"0"}}},
	}
	tcEqual(t, "rows", deriveRows(t, mem, s, specs, `[{"f":-0.0,"_line":1},{"f":0.0,"_line":2},{"f":1.0,"_line":3}]`), []string{
		`1:{"f":-0,"in":true,"neg":false,"pos":2,"w":true}`,
		`2:{"f":0,"in":true,"neg":false,"pos":2,"w":true}`,
		`3:{"f":1,"in":false,"neg":false,"pos":1,"w":null}`,
	})
}

// TestAnyInNumberLists: any_in over a list of numbers compares each
// element as text (it stopped the run with a Go panic on list<int64>), and
// a column of another shape is an error at build.
func TestAnyInNumberLists(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "r:list<int64>", "f:list<float64>", "m:map<string,string>", "_line:int64")
	specs := []config.Derivation{
		{Name: "mock", Fn: "any_in", Args: []string{"r"}, Values: []string{"-1"}},
		{Name: "big", Fn: "any_in", Args: []string{"f"}, Values: []string{"1000000"}},
	}
	tcEqual(t, "rows", deriveRows(t, mem, s, specs, `[{"r":[0,-1],"f":[1000000.0],"_line":1},{"r":[0,1],"f":[null,2.5],"_line":2},{"r":null,"f":[],"_line":3}]`), []string{
		`1:{"big":true,"f":[1000000],"m":null,"mock":true,"r":[0,-1]}`,
		`2:{"big":false,"f":[null,2.5],"m":null,"mock":false,"r":[0,1]}`,
		`3:{"big":false,"f":[],"m":null,"mock":false,"r":null}`,
	})
	if _, err := NewDerive(mem, s, []config.Derivation{{Name: "x", Fn: "any_in", Args: []string{"m"}, Values: []string{"a"}}}); err == nil || !strings.Contains(err.Error(), "column m is map<string,string>, want a string, number or bool, or a list of them") {
		t.Errorf("any_in over a map: err = %v", err)
	}
}

// TestEnumIndex: the 1-based place of the value in values, its first
// place when it is listed twice (the last won); null for a value not
// listed and for null.
func TestEnumIndex(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "v:string", "_line:int64")
	specs := []config.Derivation{{Name: "i", Fn: "enum_index", Args: []string{"v"}, Values: []string{"A", "B", "A", "C"}}}
	tcEqual(t, "rows", deriveRows(t, mem, s, specs, `[{"v":"A","_line":1},{"v":"B","_line":2},{"v":"C","_line":3},{"v":"MOCK","_line":4},{"v":null,"_line":5}]`),
		[]string{`1:{"i":1,"v":"A"}`, `2:{"i":2,"v":"B"}`, `3:{"i":4,"v":"C"}`, `4:{"i":null,"v":"MOCK"}`, `5:{"i":null,"v":null}`})
	// A number column compares by its text, as any_in does (it was refused).
	n := tcSchema(t, "score:int64", "_line:int64")
	tcEqual(t, "numbers", deriveRows(t, mem, n, []config.Derivation{{Name: "i", Fn: "enum_index", Args: []string{"score"}, Values: []string{"1", "3", "5"}}}, `[{"score":3,"_line":1},{"score":4,"_line":2}]`),
		[]string{`1:{"i":2,"score":3}`, `2:{"i":null,"score":4}`})
}

// deriveRows runs specs over one batch of rows (JSON) and returns the
// rows out, as tcRows gives them.
func deriveRows(t *testing.T, mem memory.Allocator, s *arrow.Schema, specs []config.Derivation, rows string) []string {
	t.Helper()
	d, err := NewDerive(mem, s, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := tcBatch(t, mem, s, rows)
	defer in.Release()
	out, err := d.Process(t.Context(), in, &pipeline.Rejects{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	return tcRows(out)
}

// TestFieldDerivation: field takes one field of a struct column out as a
// column, null where the struct is null or the field is; on slices too,
// and with fields that have no validity of their own; config mistakes are
// errors at build.
func TestFieldDerivation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "a:struct<id:string,tags:list<string>,n:int64>", "_line:int64")
	specs := []config.Derivation{
		{Name: "a_id", Fn: "field", Args: []string{"a"}, Value: "id"},
		{Name: "a_tags", Fn: "field", Args: []string{"a"}, Value: "tags"},
		{Name: "a_n", Fn: "field", Args: []string{"a"}, Value: "n"},
	}
	rows := `[{"a":{"id":"x","tags":["p"],"n":1},"_line":1},{"a":null,"_line":2},{"a":{"id":null,"tags":[],"n":3},"_line":3},{"a":{"id":"z","tags":null,"n":null},"_line":4}]`
	tcEqual(t, "rows", deriveRows(t, mem, s, specs, rows), []string{
		`1:{"a":{"id":"x","n":1,"tags":["p"]},"a_id":"x","a_n":1,"a_tags":["p"]}`,
		`2:{"a":null,"a_id":null,"a_n":null,"a_tags":null}`,
		`3:{"a":{"id":null,"n":3,"tags":[]},"a_id":null,"a_n":3,"a_tags":[]}`,
		`4:{"a":{"id":"z","n":null,"tags":null},"a_id":"z","a_n":null,"a_tags":null}`,
	})
	// A slice of a struct whose field has no validity bitmap of its own.
	ids, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(`["a","b","c","d"]`))
	if err != nil {
		t.Fatal(err)
	}
	defer ids.Release()
	valid := memory.NewBufferBytes([]byte{0b1011}) // row 2 null
	st, err := array.NewStructArrayWithNulls([]arrow.Array{ids}, []string{"id"}, valid, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	sl := array.NewSlice(st, 1, 4).(*array.Struct)
	defer sl.Release()
	out := structFieldArray(mem, sl, 0)
	defer out.Release()
	if got := fmt.Sprint(out); got != `["b" (null) "d"]` {
		t.Errorf("slice: %s", got)
	}
	for _, tt := range []struct {
		d   config.Derivation
		err string
	}{
		{config.Derivation{Name: "x", Fn: "field", Args: []string{"a"}, Value: "nope"}, `value: struct a has no field "nope" (have id, tags, n)`},
		{config.Derivation{Name: "x", Fn: "field", Args: []string{"_line"}, Value: "id"}, "column _line is int64, want a struct"},
	} {
		if _, err := NewDerive(mem, s, []config.Derivation{tt.d}); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("err = %v, want %q", err, tt.err)
		}
	}
}

// TestDifferenceOfIntegers: of two integer columns, difference is an
// int64, exact past 2^53 (it was a float64: 19.0, and rounded there);
// one that does not fit an int64 stops the run.
func TestDifferenceOfIntegers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "a:int64", "b:int32", "_line:int64")
	specs := []config.Derivation{{Name: "d", Fn: "difference", Args: []string{"a", "b"}}}
	tcEqual(t, "rows", deriveRows(t, mem, s, specs, `[{"a":25,"b":6,"_line":1},{"a":9007199254740993,"b":0,"_line":2},{"a":null,"b":1,"_line":3}]`),
		[]string{`1:{"a":25,"b":6,"d":19}`, `2:{"a":9007199254740993,"b":0,"d":9007199254740993}`, `3:{"a":null,"b":1,"d":null}`})
	d, err := NewDerive(mem, s, specs)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if typ := d.Schema().Field(d.Schema().FieldIndices("d")[0]).Type; typ.ID() != arrow.INT64 {
		t.Errorf("type %s, want int64", typ)
	}
	in := tcBatch(t, mem, s, `[{"a":5,"b":1,"_line":1},{"a":-9223372036854775808,"b":1,"_line":2}]`)
	defer in.Release()
	if out, err := d.Process(t.Context(), in, &pipeline.Rejects{}); err == nil || !strings.Contains(err.Error(), "line 2: difference: -9223372036854775808 − 1 does not fit an int64") {
		if out != nil {
			out.Release()
		}
		t.Errorf("overflow: err = %v", err)
	}
}
