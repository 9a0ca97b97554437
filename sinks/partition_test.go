package sinks

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func sp(s string) *string { return &s }

func TestEscapePartitionValue(t *testing.T) {
	tests := []struct {
		name string
		in   *string
		want string
	}{
		{"plain", sp("quality_overall"), "quality_overall"},
		{"null", nil, HiveNull},
		{"empty reads as null in Spark and DuckDB", sp(""), HiveNull},
		{"slash", sp("a/b"), "a%2Fb"},
		{"dot dot", sp(".."), "%2E%2E"},
		{"dot dot slash", sp("../x"), "..%2Fx"},
		{"equals", sp("x=y"), "x%3Dy"},
		{"percent", sp("100%"), "100%25"},
		{"space", sp("Guinea pig"), "Guinea%20pig"},
		{"non-ASCII kept", sp("café ’"), "café%20’"},
		{"literal sentinel stays distinct from null", sp(HiveNull), "%5F_HIVE_DEFAULT_PARTITION__"},
		{"the word NULL", sp("NULL"), "%4EULL"},
		{"the word null", sp("null"), "%6Eull"},
		{"control characters", sp("a\nb\tc"), "a%0Ab%09c"},
		{"hive specials", sp(`"#'*:?\{[]^`), "%22%23%27%2A%3A%3F%5C%7B%5B%5D%5E"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EscapePartitionValue(tt.in)
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			back, err := UnescapePartitionValue(got)
			if err != nil {
				t.Fatal(err)
			}
			if tt.in == nil || *tt.in == "" {
				if back != nil {
					t.Fatalf("null came back as %q", *back)
				}
				return
			}
			if back == nil || *back != *tt.in {
				t.Fatalf("round trip gave %v", back)
			}
		})
	}
}

func TestPartitionPathTooLong(t *testing.T) {
	if _, err := PartitionPath([]string{"c"}, []*string{sp(strings.Repeat("é", 200))}); err == nil {
		t.Fatal("a 400-byte directory name must be refused")
	}
	// Twenty folders of 240 bytes each: each fits, together they pass
	// what a path may hold.
	var cols []string
	var vals []*string
	for i := range 20 {
		cols = append(cols, fmt.Sprintf("c%02d", i))
		vals = append(vals, sp(strings.Repeat("x", 240)))
	}
	_, err := PartitionPath(cols, vals)
	if !errors.Is(err, ErrPartitionValue) || !strings.Contains(err.Error(), "together they hold at most 2048") {
		t.Fatalf("err = %v", err)
	}
	if p, err := PartitionPath(cols[:8], vals[:8]); err != nil || len(p) > maxPartitionPath {
		t.Fatalf("eight folders: %d bytes, %v", len(p), err)
	}
}

// FuzzPartitionEscape: escape then unescape is the identity, and the
// path never leaves its root.
func FuzzPartitionEscape(f *testing.F) {
	for _, s := range []string{"a/b", "..", "x=y", "100%", " ", "", HiveNull, "é", "%2F", "../../etc/passwd", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seg := EscapePartitionValue(&s)
		if strings.ContainsAny(seg, "/\\\x00") || seg == "." || seg == ".." {
			t.Fatalf("segment %q of %q can leave its directory", seg, s)
		}
		back, err := UnescapePartitionValue(seg)
		if err != nil {
			t.Fatal(err)
		}
		if s == "" {
			if back != nil {
				t.Fatalf("empty came back as %q", *back)
			}
			return
		}
		if back == nil || *back != s {
			t.Fatalf("round trip of %q gave %v", s, back)
		}
		p, err := PartitionPath([]string{"col"}, []*string{&s})
		if err != nil {
			return // too long: refused, which is fine
		}
		root := "/out/t"
		full := filepath.Join(root, filepath.FromSlash(p))
		if !strings.HasPrefix(full, root+"/") || strings.Count(filepath.ToSlash(p), "/") != 0 {
			t.Fatalf("path %q escapes %s", full, root)
		}
		if utf8.ValidString(s) && !utf8.ValidString(seg) {
			t.Fatalf("escaping broke UTF-8: %q", seg)
		}
	})
}

// TestPartitionerOf: rows with the same partition values share a
// partition, and a run of them the same *Partition even when the cache is
// full; null and "" name the same folder; any difference in any column
// gives another folder.
func TestPartitionerOf(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "j", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[
		{"s":"a","i":1,"j":1,"b":true},
		{"s":"a","i":1,"j":1,"b":true},
		{"s":"b","i":2,"j":2,"b":false},
		{"s":null,"i":null,"j":null,"b":null},
		{"s":null,"i":null,"j":null,"b":null},
		{"s":"","i":0,"j":0,"b":false}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	names := []string{"s", "i", "j", "b"}
	tests := []struct {
		name   string
		cols   []int
		i, j   int
		folder bool // the same folder
		same   bool // the same raw values: the same *Partition
	}{
		{"equal strings", []int{0}, 0, 1, true, true},
		{"different strings", []int{0}, 1, 2, false, false},
		{"equal int64", []int{1}, 0, 1, true, true},
		{"different int64", []int{1}, 1, 2, false, false},
		{"different int32", []int{2}, 1, 2, false, false},
		{"different booleans", []int{3}, 1, 2, false, false},
		{"both null", []int{0, 1, 2, 3}, 3, 4, true, true},
		{"null and empty string", []int{0}, 4, 5, true, false},
		{"null and zero", []int{1}, 4, 5, false, false},
		{"one column differs of several", []int{0, 1, 2, 3}, 1, 2, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols := make([]string, len(tt.cols))
			for k, c := range tt.cols {
				cols[k] = names[c]
			}
			for _, limit := range []int{0, 16} {
				p := NewPartitioner(cols, tt.cols, limit)
				pi, err := p.Of(b, tt.i)
				if err != nil {
					t.Fatal(err)
				}
				pj, err := p.Of(b, tt.j)
				if err != nil {
					t.Fatal(err)
				}
				if got := pi.Path == pj.Path; got != tt.folder {
					t.Errorf("limit %d: rows %d and %d in %q and %q; same folder %v, want %v", limit, tt.i, tt.j, pi.Path, pj.Path, got, tt.folder)
				}
				if tt.same && pi != pj {
					t.Errorf("limit %d: rows %d and %d, a run of equal values, got two *Partition", limit, tt.i, tt.j)
				}
			}
		})
	}
}

// TestPartitionerInTurns: rows whose partitions come in turns, as an
// unpivot's rows on a partition by name do, each get their own value's
// folder, with fewer values than the Partitioner remembers ahead of its
// map and with more, with the map and without it (limit 0); equal values
// in turns of up to recentKeys share one *Partition even without the map.
func TestPartitionerInTurns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		name          string
		values, limit int
	}{
		{"7 in turns", 7, 256},
		{"7 in turns, no map", 7, 0},
		{"as many as remembered, no map", recentKeys, 0},
		{"12 in turns", 12, 256},
		{"12 in turns, no map", 12, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := array.NewStringBuilder(mem)
			for range 5 {
				for v := range tc.values {
					sb.Append(fmt.Sprintf("dim%02d", v))
				}
			}
			col := sb.NewArray()
			sb.Release()
			schema := arrow.NewSchema([]arrow.Field{{Name: "dimension", Type: arrow.BinaryTypes.String}}, nil)
			b := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
			col.Release()
			defer b.Release()
			p := NewPartitioner([]string{"dimension"}, []int{0}, tc.limit)
			first := map[string]*Partition{}
			for i := range int(b.NumRows()) {
				pk, err := p.Of(b, i)
				if err != nil {
					t.Fatal(err)
				}
				v := fmt.Sprintf("dim%02d", i%tc.values)
				if want := "dimension=" + v; pk.Path != want {
					t.Fatalf("row %d in %q, want %q", i, pk.Path, want)
				}
				if f, ok := first[v]; !ok {
					first[v] = pk
				} else if f != pk && (tc.limit > 0 || tc.values <= recentKeys) {
					t.Fatalf("row %d: a second *Partition for %s", i, v)
				}
			}
		})
	}
}
