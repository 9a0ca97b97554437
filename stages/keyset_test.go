package stages

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"testing"
)

// TestKeySetMatchesAMap: whatever the keys kept in memory, a keySet
// answers every lookup as a plain map does, including keys that share
// their first word (the run file is then read for each) and lines past
// 32 bits; Close removes the key file.
func TestKeySetMatchesAMap(t *testing.T) {
	for _, memKeys := range []int{1, 2, 7, 1000, 1 << 20} {
		t.Run(fmt.Sprintf("memkeys=%d", memKeys), func(t *testing.T) {
			defer func(n int) { UniqueMemKeys = n }(UniqueMemKeys)
			UniqueMemKeys = memKeys
			SpillDir = t.TempDir()
			defer func() { SpillDir = "" }()
			r := rand.New(rand.NewPCG(1, uint64(memKeys)))
			// A pool of keys to draw from, so that about a third of the
			// draws repeat a key; every fourth shares its first word (and
			// so its top 16 bits) with another.
			pool := make([]keyHash, 600)
			for i := range pool {
				pool[i] = keyHash{r.Uint32(), r.Uint32(), r.Uint32()}
				if i%4 == 3 {
					pool[i][0] = pool[i-1][0]
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
				got, ok, err := s.get(k)
				if err != nil {
					t.Fatal(err)
				}
				want, wantOK := model[k]
				if ok != wantOK || got != want {
					t.Fatalf("draw %d: get(%v) = %d, %v; want %d, %v", i, k, got, ok, want, wantOK)
				}
				if !ok {
					if err := s.put(k, line); err != nil {
						t.Fatal(err)
					}
					model[k] = line
				}
			}
			if memKeys < len(model) && s.spilled() == 0 {
				t.Errorf("%d keys with %d in memory, and nothing spilled", len(model), memKeys)
			}
			if got, want := s.spilled()+len(s.mem), len(model); got != want {
				t.Errorf("%d keys in runs and memory, want %d", got, want)
			}
			// Runs shrink from the oldest to the newest, so there are at
			// most log₂(spilled keys / memKeys) + 1 of them.
			for i := 1; i < len(s.runs); i++ {
				if len(s.runs[i].prefix) >= len(s.runs[i-1].prefix) {
					t.Errorf("run %d holds %d keys, run %d before it %d: they should have been merged", i, len(s.runs[i].prefix), i-1, len(s.runs[i-1].prefix))
				}
			}
			if limit := bits.Len(uint(s.spilled()/memKeys)) + 1; len(s.runs) > limit {
				t.Errorf("%d runs for %d spilled keys, want at most %d", len(s.runs), s.spilled(), limit)
			}
			if len(s.mem) > memKeys {
				t.Errorf("%d keys in memory, want at most %d", len(s.mem), memKeys)
			}
			s.close()
			if left, _ := os.ReadDir(SpillDir); len(left) != 0 {
				t.Errorf("close left %d files", len(left))
			}
		})
	}
}

const math32 = 1<<32 - 1

// TestKeySetSpillError: a key file that cannot be made is an error naming
// it, not a lost key.
func TestKeySetSpillError(t *testing.T) {
	defer func(n int) { UniqueMemKeys = n }(UniqueMemKeys)
	UniqueMemKeys = 1
	SpillDir = t.TempDir() + "/missing"
	defer func() { SpillDir = "" }()
	s := newKeySet()
	defer s.close()
	if err := s.put(keyHash{1, 2, 3}, 1); err == nil {
		t.Fatal("put spilled into a missing folder without an error")
	}
}

// BenchmarkKeySetSpills: a unique rule's key set far past its memory
// budget: 2²² new keys, each looked up and then put, with 2¹⁶ kept in
// memory (64 spills).
func BenchmarkKeySetSpills(b *testing.B) {
	defer func(n int) { UniqueMemKeys = n }(UniqueMemKeys)
	UniqueMemKeys = 1 << 16
	SpillDir = b.TempDir()
	defer func() { SpillDir = "" }()
	const n = 1 << 22
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]keyHash, n)
	for i := range keys {
		keys[i] = keyHash{r.Uint32(), r.Uint32(), r.Uint32()}
	}
	for b.Loop() {
		s := newKeySet()
		for i, k := range keys {
			if _, ok, err := s.get(k); err != nil || ok {
				b.Fatalf("key %d: found %v, %v", i, ok, err)
			}
			if err := s.put(k, int64(i+1)); err != nil {
				b.Fatal(err)
			}
		}
		s.close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// TestKeySetSetMatchesAMap: counting with get and set, as occurrence does,
// gives a plain map's counts whatever the keys kept in memory: the newest
// value of a key wins over the ones in older runs, in lookups and merges.
func TestKeySetSetMatchesAMap(t *testing.T) {
	for _, memKeys := range []int{1, 2, 7, 1000} {
		t.Run(fmt.Sprintf("memkeys=%d", memKeys), func(t *testing.T) {
			defer func(n int) { UniqueMemKeys = n }(UniqueMemKeys)
			UniqueMemKeys = memKeys
			SpillDir = t.TempDir()
			defer func() { SpillDir = "" }()
			r := rand.New(rand.NewPCG(2, uint64(memKeys)))
			pool := make([]keyHash, 200)
			for i := range pool {
				pool[i] = keyHash{r.Uint32(), r.Uint32(), r.Uint32()}
			}
			s := newKeySet()
			model := map[keyHash]int64{}
			for i := 0; i < 1500; i++ {
				k := pool[r.IntN(len(pool))]
				n, ok, err := s.get(k)
				if err != nil {
					t.Fatal(err)
				}
				want, wantOK := model[k]
				if ok != wantOK || n != want {
					t.Fatalf("draw %d: get(%v) = %d, %v; want %d, %v", i, k, n, ok, want, wantOK)
				}
				next := n + 1
				if i%211 == 0 {
					next = 1<<32 + int64(i) // a value past 32 bits, then counted on
				}
				if err := s.set(k, next); err != nil {
					t.Fatal(err)
				}
				model[k] = next
			}
			if memKeys < len(model) && s.spilled() == 0 {
				t.Errorf("%d keys with %d in memory, and nothing spilled", len(model), memKeys)
			}
			// A merge keeps one entry of a key set again.
			for i, run := range s.runs {
				if len(run.prefix) > len(model) {
					t.Errorf("run %d holds %d entries for %d keys", i, len(run.prefix), len(model))
				}
			}
			s.close()
			if left, _ := os.ReadDir(SpillDir); len(left) != 0 {
				t.Errorf("close left %d files", len(left))
			}
		})
	}
}
