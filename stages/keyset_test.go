package stages

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestKeySetMatchesAMap: whatever the keys kept in memory, a keySet
// answers every lookup as a plain map does, including keys that share
// their first word (the run file is then read for each) and lines past
// 32 bits; Close removes the key file.
func TestKeySetMatchesAMap(t *testing.T) {
	for _, memKeys := range []int{1, 2, 7, 1000, 1 << 20} {
		t.Run(fmt.Sprintf("memkeys=%d", memKeys), func(t *testing.T) {
			spillKeys(t, memKeys, t.TempDir())
			r := rand.New(rand.NewPCG(1, uint64(memKeys)))
			// A pool of keys to draw from, so that about a third of the
			// draws repeat a key; every fourth shares its first word (and
			// so its top 16 bits) with another, and the one after it only
			// the low 16 bits (kept in memory; the top ones are the
			// directory's).
			pool := keyPool(r, 600)
			for i := 3; i < len(pool); i += 4 {
				pool[i][0] = pool[i-1][0]
				if i+1 < len(pool) {
					pool[i+1][0] = pool[i+1][0]&^0xffff | pool[i][0]&0xffff
				}
			}
			pool[5][0], pool[6][0] = 0, math32 // the ends of the directory
			s := newKeySet()
			model := map[keyHash]int64{}
			for i := 0; i < 1500; i++ {
				k := pool[r.IntN(len(pool))]
				line := int64(i + 1)
				if i%97 == 0 {
					line = 1<<32 + int64(i) // past 32 bits
				}
				if _, ok := getAsModel(t, s, model, i, k); !ok {
					if err := s.set(k, line); err != nil {
						t.Fatal(err)
					}
					model[k] = line
				}
			}
			if memKeys < len(model) && spilled(s) == 0 {
				t.Errorf("%d keys with %d in memory, and nothing spilled", len(model), memKeys)
			}
			if got, want := spilled(s)+s.mem.n, len(model); got != want {
				t.Errorf("%d keys in runs and memory, want %d", got, want)
			}
			// Each key set once: every spill adds memKeys keys to the runs.
			if got, want := checkRunSpills(t, s), spilled(s)/memKeys; got != want {
				t.Errorf("runs hold %d spills, want %d", got, want)
			}
			if s.mem.n > memKeys {
				t.Errorf("%d keys in memory, want at most %d", s.mem.n, memKeys)
			}
			closeEmpty(t, s)
		})
	}
}

const math32 = 1<<32 - 1

// checkRunSpills checks that the runs hold fewer spills from the oldest
// to the newest, so that there are at most log₂(spills) + 1 of them, and
// returns how many spills they hold.
func checkRunSpills(t *testing.T, s *keySet) int {
	t.Helper()
	total := 0
	for i, r := range s.runs {
		total += r.spills
		if i > 0 && r.spills >= s.runs[i-1].spills {
			t.Errorf("run %d holds %d spills, run %d before it %d: they should have been merged", i, r.spills, i-1, s.runs[i-1].spills)
		}
	}
	if limit := bits.Len(uint(total)) + 1; len(s.runs) > limit {
		t.Errorf("%d runs for %d spills, want at most %d", len(s.runs), total, limit)
	}
	return total
}

// spilled returns how many entries the run files hold (a key set again
// after it was spilled is in more than one until they are merged).
func spilled(s *keySet) int {
	n := 0
	for _, r := range s.runs {
		n += len(r.low)
	}
	return n
}

// keyPool returns n random keys.
func keyPool(r *rand.Rand, n int) []keyHash {
	keys := make([]keyHash, n)
	for i := range keys {
		keys[i] = keyHash{r.Uint32(), r.Uint32(), r.Uint32()}
	}
	return keys
}

// getAsModel looks k up in s at draw i and fails the test unless the
// answer is model's.
func getAsModel(t *testing.T, s *keySet, model map[keyHash]int64, i int, k keyHash) (int64, bool) {
	t.Helper()
	got, ok, err := s.get(k)
	if err != nil {
		t.Fatal(err)
	}
	if want, wantOK := model[k]; ok != wantOK || got != want {
		t.Fatalf("draw %d: get(%v) = %d, %v; want %d, %v", i, k, got, ok, want, wantOK)
	}
	return got, ok
}

// closeEmpty closes s and checks that no run file is left in SpillDir.
func closeEmpty(t *testing.T, s *keySet) {
	t.Helper()
	s.close()
	spillEmpty(t)
}

// spillEmpty fails the test if a file is left in SpillDir (after a
// stage's or key set's Close).
func spillEmpty(t testing.TB) {
	t.Helper()
	if left, _ := os.ReadDir(SpillDir); len(left) != 0 {
		t.Errorf("close left %d files in the spill folder", len(left))
	}
}

// setForTest sets *p to v for a test or benchmark and puts the old value
// back when it ends (the package's budgets and SpillDir are variables).
func setForTest[T any](t testing.TB, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// spillKeys sets UniqueMemKeys and SpillDir for a test and puts them back
// when it ends.
func spillKeys(t testing.TB, memKeys int, dir string) {
	setForTest(t, &UniqueMemKeys, memKeys)
	setForTest(t, &SpillDir, dir)
}

// TestKeySetSpillError: a key file that cannot be made is an error naming
// it, not a lost key.
func TestKeySetSpillError(t *testing.T) {
	spillKeys(t, 1, t.TempDir()+"/missing")
	s := newKeySet()
	defer s.close()
	if err := s.set(keyHash{1, 2, 3}, 1); err == nil {
		t.Fatal("set spilled into a missing folder without an error")
	}
}

// BenchmarkKeySetSpills: a unique rule's key set far past its memory
// budget: 2²² new keys, each looked up and then set, with 2¹⁶ kept in
// memory (64 spills).
func BenchmarkKeySetSpills(b *testing.B) {
	spillKeys(b, 1<<16, b.TempDir())
	const n = 1 << 22
	r := rand.New(rand.NewPCG(1, 2))
	keys := keyPool(r, n)
	for b.Loop() {
		s := setNewKeys(b, keys)
		s.close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// TestKeySetSetMatchesAMap: counting with get and set, as occurrence does,
// gives a plain map's counts whatever the keys kept in memory: the newest
// value of a key wins over the ones in older runs, in lookups and merges,
// also when it moves past 32 bits (or to exactly 2³²−1) and back.
func TestKeySetSetMatchesAMap(t *testing.T) {
	for _, memKeys := range []int{1, 2, 7, 50} {
		t.Run(fmt.Sprintf("memkeys=%d", memKeys), func(t *testing.T) {
			spillKeys(t, memKeys, t.TempDir())
			r := rand.New(rand.NewPCG(2, uint64(memKeys)))
			pool := keyPool(r, 200)
			s := newKeySet()
			model := map[keyHash]int64{}
			for i := 0; i < 1500; i++ {
				k := pool[r.IntN(len(pool))]
				n, _ := getAsModel(t, s, model, i, k)
				next := n + 1
				switch {
				case i%211 == 0:
					next = 1<<32 + int64(i) // a value past 32 bits, then counted on
				case i%223 == 0:
					next = math32 // the largest 32-bit value, kept past 32 bits
				case i%227 == 0:
					next = 3 // back under 32 bits
				}
				if err := s.set(k, next); err != nil {
					t.Fatal(err)
				}
				model[k] = next
			}
			if memKeys < len(model) && spilled(s) == 0 {
				t.Errorf("%d keys with %d in memory, and nothing spilled", len(model), memKeys)
			}
			// A merge keeps one entry of a key set again.
			for i, run := range s.runs {
				if len(run.low) > len(model) {
					t.Errorf("run %d holds %d entries for %d keys", i, len(run.low), len(model))
				}
			}
			checkRunSpills(t, s)
			closeEmpty(t, s)
		})
	}
}

// failingEntries gives n entries and then an error, as a run file that
// cannot be read would.
type failingEntries struct{ n int }

func (f *failingEntries) next() (keyEntry, bool, error) {
	if f.n == 0 {
		return keyEntry{}, false, errors.New("read failed")
	}
	f.n--
	return keyEntry{key: keyHash{uint32(f.n), 0, 0}}, true, nil
}

// TestWriteRunFailure: a merge that fails part-way returns the error with
// the file's name and leaves no file behind.
func TestWriteRunFailure(t *testing.T) {
	spillKeys(t, 1, t.TempDir())
	for _, n := range []int{0, 3} {
		_, err := writeRun(n+1, &failingEntries{n}, &sliceEntries{[]keyEntry{{key: keyHash{9, 9, 9}}}})
		if err == nil || !strings.Contains(err.Error(), "read failed") || !strings.Contains(err.Error(), "agora-keys-") {
			t.Errorf("after %d entries: err = %v, want the read error naming the key file", n, err)
		}
		if left, _ := os.ReadDir(SpillDir); len(left) != 0 {
			t.Errorf("after %d entries: %d files left", n, len(left))
		}
	}
}

// TestKeyTableSorted: a key table gives back the keys put in it, in the
// order sorting by keyLess gives, for random keys, keys that share their
// first word's top bits or the whole first word (too far from sorted for
// the insertion sort), keys whose home is the table's end (past its
// slack: put says so and holds nothing), and none. Each key put is found
// with its value before the sort; a key not put is not.
func TestKeyTableSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	random := func(n int, mask uint32, word uint32) []keyEntry {
		es := make([]keyEntry, n)
		for i := range es {
			es[i] = keyEntry{keyHash{word | r.Uint32()&mask, r.Uint32(), r.Uint32() | 1}, uint32(i)}
		}
		return es
	}
	for _, tc := range []struct {
		name     string
		es       []keyEntry
		maxKeys  int
		overflow bool // some keys do not fit
	}{
		{"none", nil, 10, false},
		{"one", random(1, ^uint32(0), 0), 10, false},
		{"random", random(300_000, ^uint32(0), 0), 300_000, false},
		{"random, grown", random(5_000, ^uint32(0), 0), 300_000, false},
		// Keys this far from spread fill one run of slots, which goes
		// past the end unless it starts early enough.
		{"one bucket", random(2_000, 0xffff, 0xabcd0000), 2_000, true},
		{"one first word", random(500, 0, 0x12345678), 500, false},
		{"few words", random(5_000, 0x3, 0x77770000), 5_000, true},
		{"few words, early", random(800, 0x3, 0x07770000), 800, false},
		{"at the end", random(1_000, 0xff, 0xffffff00), 100_000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newKeyTable(tc.maxKeys)
			var want []keyEntry
			for _, e := range tc.es {
				if tb.put(e.key, e.line) {
					want = append(want, e)
				}
			}
			if got := len(want) < len(tc.es); got != tc.overflow {
				t.Fatalf("%d of %d keys put; overflow %v, want %v", len(want), len(tc.es), got, tc.overflow)
			}
			if tb.n != len(want) {
				t.Fatalf("table holds %d keys, want %d", tb.n, len(want))
			}
			for _, e := range want {
				if l, ok := tb.get(e.key); !ok || l != e.line {
					t.Fatalf("key %x: got %d, %v, want %d", e.key, l, ok, e.line)
				}
			}
			if _, ok := tb.get(keyHash{1, 2, 2}); ok { // keys here have an odd third word
				t.Fatal("found a key never put")
			}
			slices.SortStableFunc(want, func(a, b keyEntry) int { return keyLess(a.key, b.key) })
			got := tb.sorted()
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("entry %d: %x, want %x", i, got[i], want[i])
				}
			}
			tb.reset()
			for _, e := range want {
				if _, ok := tb.get(e.key); ok {
					t.Fatalf("key %x found after reset", e.key)
				}
			}
		})
	}
}

// TestKeySetEdgeKeys: the zero key (the table's free-slot mark) is a key
// like any other, held as keyZero, and keys whose home is the table's end,
// past its slack, are spilled, not lost.
func TestKeySetEdgeKeys(t *testing.T) {
	spillKeys(t, 1000, t.TempDir())
	s := newKeySet()
	if err := s.set(keyHash{}, 5); err != nil {
		t.Fatal(err)
	}
	for _, k := range []keyHash{{}, keyZero} {
		if l, ok, err := s.get(k); err != nil || !ok || l != 5 {
			t.Fatalf("get(%v) = %d, %v, %v after setting the zero key; want 5", k, l, ok, err)
		}
	}
	model := map[keyHash]int64{keyZero: 5}
	keys := []keyHash{keyZero}
	for i := range 600 {
		keys = append(keys, keyHash{math32 - uint32(i), uint32(i), 7})
	}
	for i, k := range keys {
		if _, ok := getAsModel(t, s, model, i, k); !ok {
			if err := s.set(k, int64(i+1)); err != nil {
				t.Fatal(err)
			}
			model[k] = int64(i + 1)
		}
	}
	if spilled(s) == 0 {
		t.Error("600 keys at the table's end, and nothing spilled")
	}
	for i, k := range keys {
		getAsModel(t, s, model, i, k)
	}
	if l, ok, err := s.get(keyHash{}); err != nil || !ok || l != 5 {
		t.Fatalf("get(zero key) = %d, %v, %v after the spills; want 5", l, ok, err)
	}
	closeEmpty(t, s)
}

// setNewKeys sets keys in a new key set, each looked up first (and not
// found), with its position + 1 as its value, as a unique rule does.
func setNewKeys(b *testing.B, keys []keyHash) *keySet {
	s := newKeySet()
	for i, k := range keys {
		if _, ok, err := s.get(k); err != nil || ok {
			b.Fatalf("key %d: found %v, %v", i, ok, err)
		}
		if err := s.set(k, int64(i+1)); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkKeySetInMemory: a unique rule's key set within its memory
// budget (no spill): 2¹⁷ new keys, each looked up and then set, then
// every key looked up again as a duplicate.
func BenchmarkKeySetInMemory(b *testing.B) {
	const n = 1 << 17
	if n >= UniqueMemKeys {
		b.Fatalf("%d keys would spill at UniqueMemKeys %d", n, UniqueMemKeys)
	}
	r := rand.New(rand.NewPCG(3, 4))
	keys := keyPool(r, n)
	for b.Loop() {
		s := setNewKeys(b, keys)
		for i, k := range keys {
			if l, ok, err := s.get(k); err != nil || !ok || l != int64(i+1) {
				b.Fatalf("key %d: got %d, %v, %v", i, l, ok, err)
			}
		}
		s.close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// TestKeySetGrows: a key set whose table starts small and doubles on its
// way to its budget (1,024 slots, then 2,048 and 4,096 for 3,000 keys)
// answers as a plain map does through the doublings, the spills after
// them, and keys set again with new values, some past 32 bits; after
// close, get finds nothing and set is an error.
func TestKeySetGrows(t *testing.T) {
	spillKeys(t, 3000, t.TempDir())
	r := rand.New(rand.NewPCG(7, 8))
	pool := keyPool(r, 8000)
	s := newKeySet()
	if got := s.mem.size(); got != keyTableFirst {
		t.Fatalf("a new table has %d slots, want %d", got, keyTableFirst)
	}
	model := map[keyHash]int64{}
	sizes := map[int]bool{}
	for i := range 30_000 {
		k := pool[r.IntN(len(pool))]
		n, _ := getAsModel(t, s, model, i, k)
		next := n + 1
		if i%101 == 0 {
			next = 1<<32 + int64(i)
		}
		if err := s.set(k, next); err != nil {
			t.Fatal(err)
		}
		model[k] = next
		sizes[s.mem.size()] = true
	}
	for _, size := range []int{1024, 2048, 4096} {
		if !sizes[size] {
			t.Errorf("the table never had %d slots (had %v)", size, sizes)
		}
	}
	if spilled(s) == 0 {
		t.Error("8,000 keys with 3,000 in memory, and nothing spilled")
	}
	for i, k := range pool {
		getAsModel(t, s, model, i, k)
	}
	closeEmpty(t, s)
	if _, ok, err := s.get(pool[0]); ok || err != nil {
		t.Errorf("get after close: found %v, %v", ok, err)
	}
	if err := s.set(pool[0], 1); err == nil {
		t.Error("set after close: no error")
	}
}

// TestKeySetCrowdedTop: run lookups find keys among many that share the
// top 16 bits of their first word (searched, where a few are scanned),
// some sharing the whole first word, and do not find keys never set.
func TestKeySetCrowdedTop(t *testing.T) {
	spillKeys(t, 16, t.TempDir())
	r := rand.New(rand.NewPCG(9, 10))
	s := newKeySet()
	model := map[keyHash]int64{}
	pool := make([]keyHash, 400)
	for i := range pool {
		pool[i] = keyHash{0xabcd0000 | r.Uint32()&0xffff, r.Uint32(), r.Uint32()}
		if i%5 == 4 {
			pool[i][0] = pool[i-1][0] // the same first word
		}
	}
	for i, k := range pool[:300] {
		getAsModel(t, s, model, i, k)
		if err := s.set(k, int64(i+1)); err != nil {
			t.Fatal(err)
		}
		model[k] = int64(i + 1)
	}
	if big := slices.ContainsFunc(s.runs, func(run *keyRun) bool { return run.dir[0xabcd+1]-run.dir[0xabcd] > 32 }); !big {
		t.Fatal("no run holds more than 32 keys of one top")
	}
	for i, k := range pool { // the last 100 were never set
		getAsModel(t, s, model, i, k)
	}
	closeEmpty(t, s)
}
