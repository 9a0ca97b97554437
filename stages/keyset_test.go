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
			if got, want := spilled(s)+len(s.mem), len(model); got != want {
				t.Errorf("%d keys in runs and memory, want %d", got, want)
			}
			// Each key set once: every spill adds memKeys keys to the runs.
			if got, want := checkRunSpills(t, s), spilled(s)/memKeys; got != want {
				t.Errorf("runs hold %d spills, want %d", got, want)
			}
			if len(s.mem) > memKeys {
				t.Errorf("%d keys in memory, want at most %d", len(s.mem), memKeys)
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
		s := newKeySet()
		for i, k := range keys {
			if _, ok, err := s.get(k); err != nil || ok {
				b.Fatalf("key %d: found %v, %v", i, ok, err)
			}
			if err := s.set(k, int64(i+1)); err != nil {
				b.Fatal(err)
			}
		}
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

// TestSortEntries: the bucket sort orders entries as sorting by keyLess
// does, for random keys, keys that share their first word's top bits or
// the whole first word, and none.
func TestSortEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	random := func(n int, mask uint32, word uint32) []keyEntry {
		es := make([]keyEntry, n)
		for i := range es {
			es[i] = keyEntry{keyHash{word | r.Uint32()&mask, r.Uint32(), r.Uint32()}, uint32(i)}
		}
		return es
	}
	for _, tc := range []struct {
		name string
		es   []keyEntry
	}{
		{"none", nil},
		{"one", random(1, ^uint32(0), 0)},
		{"random", random(300_000, ^uint32(0), 0)},
		{"one bucket", random(2_000, 0xffff, 0xabcd0000)},
		{"one first word", random(500, 0, 0x12345678)},
		{"few words", random(5_000, 0x3, 0x77770000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Clone(tc.es)
			slices.SortStableFunc(want, func(a, b keyEntry) int { return keyLess(a.key, b.key) })
			got := sortEntries(slices.Clone(tc.es))
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].key != want[i].key {
					t.Fatalf("entry %d: key %x, want %x", i, got[i].key, want[i].key)
				}
			}
		})
	}
}
