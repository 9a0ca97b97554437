package stages

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// windowDerive returns a derive step of prev, lag of column lagged, and
// fill, fill_down of column filled, both by column g.
func windowDerive(tb testing.TB, mem memory.Allocator, s *arrow.Schema, lagged, filled string) *Derive {
	tb.Helper()
	d, err := NewDerive(mem, s, []config.Derivation{
		{Name: "prev", Fn: "lag", Args: []string{lagged}, By: []string{"g"}},
		{Name: "fill", Fn: "fill_down", Args: []string{filled}, By: []string{"g"}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// TestDeriveWindow checks lag and fill_down by key across batches: keys
// that come back after many others, null keys and null values, and
// list values, against each row's expected value worked out here.
func TestDeriveWindow(t *testing.T) {
	batches := []string{
		`[{"g":"a","v":1,"l":["x"],"_line":1},{"g":"b","v":null,"l":null,"_line":2},{"g":"a","v":2,"l":null,"_line":3}]`,
		`[]`,
		`[{"g":null,"v":3,"l":["y","z"],"_line":4},{"g":"b","v":4,"l":[],"_line":5},{"g":"a","v":null,"l":null,"_line":6}]`,
		`[{"g":null,"v":null,"l":null,"_line":7},{"g":"c","v":5,"l":null,"_line":8},{"g":"a","v":6,"l":["w"],"_line":9}]`,
	}
	want := []string{
		`1:{"fill":["x"],"g":"a","l":["x"],"prev":null,"v":1}`,
		`2:{"fill":null,"g":"b","l":null,"prev":null,"v":null}`,
		`3:{"fill":["x"],"g":"a","l":null,"prev":1,"v":2}`,
		`4:{"fill":["y","z"],"g":null,"l":["y","z"],"prev":null,"v":3}`,
		`5:{"fill":[],"g":"b","l":[],"prev":null,"v":4}`,
		`6:{"fill":["x"],"g":"a","l":null,"prev":2,"v":null}`,
		`7:{"fill":["y","z"],"g":null,"l":null,"prev":3,"v":null}`,
		`8:{"fill":null,"g":"c","l":null,"prev":null,"v":5}`,
		`9:{"fill":["w"],"g":"a","l":["w"],"prev":null,"v":6}`,
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "v:int64", "l:list<string>", "_line:int64")
	d := windowDerive(t, mem, s, "v", "l")
	defer d.Close()
	var rows []string
	for _, js := range batches {
		in := tcBatch(t, mem, s, js)
		got, _ := tcProcess(t, d, in)
		in.Release()
		rows = append(rows, got...)
	}
	tcEqual(t, "rows", rows, want)
}

// TestDeriveWindowManyKeys runs lag and fill_down over thousands of keys
// in random order, each batch touching a few of them, so that a key's
// carried value is often many batches old, against a row-by-row model.
func TestDeriveWindowManyKeys(t *testing.T) {
	for _, keys := range []int{1, 7, 3000} {
		t.Run(fmt.Sprintf("keys=%d", keys), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(keys)))
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, "g:string", "v:string", "_line:int64")
			d := windowDerive(t, mem, s, "v", "v")
			defer d.Close()
			last := map[string]*string{} // lag: the key's previous value
			seen := map[string]bool{}
			filled := map[string]string{} // fill_down: its last non-null value
			line := 0
			for batch := range 200 {
				n := rng.IntN(40)
				var js, want []string
				for range n {
					line++
					k := fmt.Sprintf("k%d", rng.IntN(keys))
					var v *string
					if rng.IntN(4) > 0 {
						x := fmt.Sprintf("v%d", line)
						v = &x
					}
					row := map[string]any{"g": k, "v": v, "_line": line}
					b, _ := json.Marshal(row)
					js = append(js, string(b))
					exp := map[string]any{"g": k, "v": v, "prev": nil, "fill": nil}
					if seen[k] {
						exp["prev"] = last[k]
					}
					if v != nil {
						filled[k] = *v
					}
					if f, ok := filled[k]; ok {
						exp["fill"] = f
					}
					seen[k], last[k] = true, v
					e, _ := json.Marshal(exp)
					want = append(want, fmt.Sprintf("%d:%s", line, e))
				}
				in := tcBatch(t, mem, s, "["+strings.Join(js, ",")+"]")
				got, _ := tcProcess(t, d, in)
				in.Release()
				if len(got) != len(want) {
					t.Fatalf("batch %d: %d rows, want %d", batch, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("batch %d row %d:\n  got  %s\n  want %s", batch, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// BenchmarkDeriveWindow measures lag and fill_down by key over 100,000
// rows in batches of 1,024, for a few keys and for many (each batch then
// touching keys last seen many batches before), in rows/s. The rate is
// to stay level as the keys grow: it fell with them while every batch
// rebuilt the carry of every key seen.
func BenchmarkDeriveWindow(b *testing.B) {
	for _, keys := range []int{100, 10_000, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			mem := memory.DefaultAllocator
			rng := rand.New(rand.NewPCG(2, uint64(keys)))
			s, in := windowBenchInput(func(i int) (string, bool, int64) {
				line := int64(i + 1)
				return fmt.Sprintf("group-%08d", rng.IntN(keys)), rng.IntN(4) == 0, line
			})
			var d *Derive
			benchFreshStep(b, func() processor {
				if d != nil {
					d.Close()
				}
				d = windowDerive(b, mem, s, "v", "v")
				return d
			}, in)
			d.Close()
			releaseBatches(in)
		})
	}
}

// BenchmarkDeriveWindowGrouped measures lag and fill_down by key over
// 100,000 rows that hold each key's rows together (DeliData's layout:
// runs of 4 or 40 rows), plain and grouped, in rows/s, and reports the
// Arrow bytes the step carries after the last batch (carried_bytes):
// plain, a value per key seen; grouped, the last key's only.
func BenchmarkDeriveWindowGrouped(b *testing.B) {
	for _, run := range []int{4, 40} {
		for _, grouped := range []bool{false, true} {
			b.Run(fmt.Sprintf("run=%d/grouped=%v", run, grouped), func(b *testing.B) {
				s, in := windowBenchInput(func(i int) (string, bool, int64) {
					return fmt.Sprintf("group-%08d", i/run), i%run == 1, int64(i)
				})
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				var d *Derive
				benchFreshStep(b, func() processor {
					if d != nil {
						d.Close()
					}
					d = groupedDerive(b, mem, s, grouped, "lag", "fill_down")
					return d
				}, in)
				b.ReportMetric(float64(mem.CurrentAlloc()), "carried_bytes")
				d.Close()
				releaseBatches(in)
			})
		}
	}
}

// windowBenchInput makes the window benchmarks' input: 100,000 rows in
// batches of 1,024 of g (a key), v (a float, the row's line, or null) and
// the line, row i's given by row.
func windowBenchInput(row func(i int) (key string, null bool, line int64)) (*arrow.Schema, []arrow.RecordBatch) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: arrow.BinaryTypes.String},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	var in []arrow.RecordBatch
	for i := 0; i < 100_000; {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, s)
		for range 1024 {
			key, null, line := row(i)
			rb.Field(0).(*array.StringBuilder).Append(key)
			if null {
				rb.Field(1).AppendNull()
			} else {
				rb.Field(1).(*array.Float64Builder).Append(float64(line))
			}
			rb.Field(2).(*array.Int64Builder).Append(line)
			i++
		}
		in = append(in, rb.NewRecordBatch())
		rb.Release()
	}
	return s, in
}

// groupedDerive returns a derive step of fns (lag or fill_down) of
// column v by column g, named after them, with grouped set or not.
func groupedDerive(tb testing.TB, mem memory.Allocator, s *arrow.Schema, grouped bool, fns ...string) *Derive {
	tb.Helper()
	var specs []config.Derivation
	for _, fn := range fns {
		specs = append(specs, config.Derivation{Name: fn, Fn: fn, Args: []string{"v"}, By: []string{"g"}, Grouped: grouped})
	}
	d, err := NewDerive(mem, s, specs)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// groupedRows returns keys groups of rows held together (runs of 1 to
// 30 rows, the middle key null, a third of the values null), as JSON
// objects with g, v and _line.
func groupedRows(keys int) []string {
	rng := rand.New(rand.NewPCG(7, 7))
	var rows []string
	line := 0
	for k := range keys {
		key := fmt.Sprintf("%q", fmt.Sprintf("k%d", k))
		if k == keys/2 {
			key = "null"
		}
		for range 1 + rng.IntN(30) {
			line++
			v := "null"
			if rng.IntN(3) > 0 {
				v = fmt.Sprintf("%q", fmt.Sprintf("value %d of a key", line))
			}
			rows = append(rows, fmt.Sprintf(`{"g":%s,"v":%s,"_line":%d}`, key, v, line))
		}
	}
	return rows
}

// TestDeriveWindowGrouped runs lag and fill_down with and without
// grouped over input that holds each key's rows together, cut into
// batches of several sizes, with the ended keys spilled to files past 64:
// the rows must be the same, and the plain step must carry a value per
// key where the grouped one lets them go. The spill files must be gone
// after Close.
func TestDeriveWindowGrouped(t *testing.T) {
	const keys = 1000
	rows := groupedRows(keys)
	s := tcSchema(t, "g:string", "v:string", "_line:int64")
	for _, size := range []int{1, 7, 1024} {
		t.Run(fmt.Sprintf("batch=%d", size), func(t *testing.T) {
			dir := t.TempDir()
			spillKeys(t, 64, dir)
			var got [2][]string
			var held [2]int64
			for gi, grouped := range []bool{false, true} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				d := groupedDerive(t, mem, s, grouped, "lag", "fill_down")
				for _, js := range jsonBatches(rows, size) {
					in := tcBatch(t, mem, s, js)
					out, _ := tcProcess(t, d, in)
					in.Release()
					got[gi] = append(got[gi], out...)
				}
				held[gi] = int64(mem.CurrentAlloc())
				d.Close()
				mem.AssertSize(t, 0)
			}
			if len(got[0]) != len(rows) || len(got[1]) != len(rows) {
				t.Fatalf("%d and %d rows out of %d", len(got[0]), len(got[1]), len(rows))
			}
			for i := range got[0] {
				if got[0][i] != got[1][i] {
					t.Fatalf("row %d:\n  grouped %s\n  plain   %s", i, got[1][i], got[0][i])
				}
			}
			// The plain step carries a value for each key (about 20
			// bytes each); grouped, the last key's only.
			if held[0] < keys*16 || held[1] > 4096 {
				t.Errorf("Arrow bytes carried after the last batch: plain %d, grouped %d; want grouped to hold one key's", held[0], held[1])
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("%d spill files left after Close", len(left))
			}
		})
	}
}

// TestWindowGroupedCarriesOneKey looks inside grouped lag and fill_down
// after every batch of groupedRows: at most one value is carried, and
// only for the last row's key (for fill_down, a key whose values so far
// are all null carries none, and the ended key's value must be gone).
func TestWindowGroupedCarriesOneKey(t *testing.T) {
	rows := groupedRows(300)
	s := tcSchema(t, "g:string", "v:string", "_line:int64")
	for _, fill := range []bool{false, true} {
		for _, size := range []int{1, 3, 64} {
			t.Run(fmt.Sprintf("fill=%v/batch=%d", fill, size), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				w := &window{mem: mem, t: arrow.BinaryTypes.String, pos: map[keyHash]slot{}, done: newKeySet()}
				defer w.release()
				for bi, js := range jsonBatches(rows, size) {
					in := tcBatch(t, mem, s, js)
					col, err := w.next(in, 1, []int{0}, fill)
					in.Release()
					if err != nil {
						t.Fatal(err)
					}
					col.Release()
					if len(w.pos) > 1 || w.stored > 1 || len(w.chunks) > 1 {
						t.Fatalf("after batch %d: %d keys, %d values, %d chunks carried; want at most one", bi, len(w.pos), w.stored, len(w.chunks))
					}
					for k := range w.pos {
						if k != w.last {
							t.Fatalf("after batch %d: a value carried for a key whose rows ended", bi)
						}
					}
				}
			})
		}
	}
}

// TestDeriveWindowGroupedKeyComesBack: under grouped, lag or fill_down
// alone fails when a key's rows come again after another key's, within a
// batch or across batches, naming its line and key, whether the ended
// key is in memory or spilled to a file; a key's rows spanning batches,
// an empty batch between them, do not.
func TestDeriveWindowGroupedKeyComesBack(t *testing.T) {
	tests := []struct {
		name    string
		batches []string
		want    string // the error; "" for none
	}{
		{
			name:    "spanning batches",
			batches: []string{`[{"g":"a","v":"1","_line":1}]`, `[]`, `[{"g":"a","v":"2","_line":2},{"g":"b","v":"3","_line":3}]`, `[{"g":"b","v":"4","_line":4}]`},
		},
		{
			name:    "within a batch",
			batches: []string{`[{"g":"a","v":"1","_line":1},{"g":"b","v":"2","_line":2},{"g":"a","v":"3","_line":3}]`},
			want:    "line 3: grouped: the group of g=a comes again after it ended",
		},
		{
			name:    "across batches",
			batches: []string{`[{"g":"a","v":"1","_line":1}]`, `[{"g":"b","v":null,"_line":2}]`, `[{"g":"c","v":"2","_line":3},{"g":"a","v":"3","_line":4}]`},
			want:    "line 4: grouped: the group of g=a comes again after it ended",
		},
		{
			name:    "a null key",
			batches: []string{`[{"g":null,"v":"1","_line":1},{"g":"b","v":"2","_line":2}]`, `[{"g":null,"v":"3","_line":3}]`},
			want:    "line 3: grouped: the group of g=null comes again after it ended",
		},
	}
	s := tcSchema(t, "g:string", "v:string", "_line:int64")
	for _, memKeys := range []int{UniqueMemKeys, 1} {
		for _, fn := range []string{"lag", "fill_down"} {
			for _, tt := range tests {
				t.Run(fmt.Sprintf("%s/keys_in_memory=%d/%s", fn, memKeys, tt.name), func(t *testing.T) {
					spillKeys(t, memKeys, t.TempDir())
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					d := groupedDerive(t, mem, s, true, fn)
					defer d.Close()
					err := tcProcessAll(t, d, mem, s, tt.batches)
					switch {
					case tt.want == "" && err != nil:
						t.Fatalf("unexpected error: %v", err)
					case tt.want != "" && err == nil:
						t.Fatalf("no error, want %q", tt.want)
					case tt.want != "" && !strings.Contains(err.Error(), tt.want):
						t.Fatalf("error %q, want it to contain %q", err, tt.want)
					}
				})
			}
		}
	}
}
