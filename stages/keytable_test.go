package stages

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestKeyTable runs random puts and gets against a Go map as the model:
// keys drawn from a small pool (so many repeat), the all-zero key among
// them, through several doublings and a reset.
func TestKeyTable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keys  int // size of the pool keys are drawn from
		ops   int
		dense bool // keys differ only in their first word's low bits: long probe runs
	}{
		{"few keys", 10, 1000, false},
		{"many keys", 50000, 200000, false},
		{"clustered slots", 5000, 50000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(7, uint64(tc.keys)))
			pool := make([]keyHash, tc.keys)
			for i := range pool {
				if tc.dense {
					pool[i] = keyHash{uint32(i % 64), uint32(i), 1}
				} else {
					pool[i] = keyHash{rnd.Uint32(), rnd.Uint32(), rnd.Uint32()}
				}
			}
			pool[0] = keyHash{} // the key that marks empty slots
			var tab keyTable[uint32]
			model := map[keyHash]uint32{}
			check := func(when string) {
				t.Helper()
				if tab.len() != len(model) {
					t.Fatalf("%s: %d keys, want %d", when, tab.len(), len(model))
				}
				seen := 0
				tab.each(func(k keyHash, v uint32) {
					seen++
					if w, ok := model[k]; !ok || w != v {
						t.Fatalf("%s: each gave %v=%d, model has %d (%v)", when, k, v, w, ok)
					}
				})
				if seen != len(model) {
					t.Fatalf("%s: each gave %d keys, want %d", when, seen, len(model))
				}
			}
			for round := range 2 {
				for i := range tc.ops {
					k := pool[rnd.IntN(len(pool))]
					if rnd.IntN(2) == 0 {
						tab.put(k, uint32(i))
						model[k] = uint32(i)
						continue
					}
					v, ok := tab.get(k)
					w, wok := model[k]
					if ok != wok || v != w {
						t.Fatalf("round %d op %d: get(%v) = %d, %v; want %d, %v", round, i, k, v, ok, w, wok)
					}
				}
				check("after the puts")
				if tc.keys > minKeySlots && len(tab.slots) <= minKeySlots {
					t.Errorf("%d keys in %d slots: the table did not grow", tab.len(), len(tab.slots))
				}
				slots := len(tab.slots)
				tab.reset()
				clear(model)
				check("after reset")
				if len(tab.slots) != slots {
					t.Errorf("reset let the slots go: %d, had %d", len(tab.slots), slots)
				}
				if _, ok := tab.get(keyHash{}); ok {
					t.Error("the zero key survived reset")
				}
			}
		})
	}
}

// TestKeyTableEmpty checks a table that was never written to.
func TestKeyTableEmpty(t *testing.T) {
	var tab keyTable[uint32]
	if _, ok := tab.get(keyHash{1, 2, 3}); ok {
		t.Error("an empty table found a key")
	}
	if _, ok := tab.get(keyHash{}); ok {
		t.Error("an empty table found the zero key")
	}
	if tab.len() != 0 {
		t.Errorf("len %d", tab.len())
	}
	tab.each(func(keyHash, uint32) { t.Error("each called on an empty table") })
}

// BenchmarkKeyTable measures what a unique rule does per row (look a key
// up, insert it when new) on 474,000 new keys, against a Go map; the
// ratio is the table's time over the map's.
func BenchmarkKeyTable(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	keys := make([]keyHash, 474000)
	for i := range keys {
		keys[i] = keyHash{rnd.Uint32(), rnd.Uint32(), rnd.Uint32()}
	}
	var mapNs, tableNs int64
	for b.Loop() {
		start := time.Now().UnixNano()
		m := map[keyHash]uint32{}
		for i, k := range keys {
			if _, ok := m[k]; !ok {
				m[k] = uint32(i)
			}
		}
		mid := time.Now().UnixNano()
		var tab keyTable[uint32]
		for i, k := range keys {
			if _, ok := tab.get(k); !ok {
				tab.put(k, uint32(i))
			}
		}
		end := time.Now().UnixNano()
		mapNs += mid - start
		tableNs += end - mid
	}
	b.ReportMetric(float64(tableNs)/float64(mapNs), "table/map")
	b.ReportMetric(float64(len(keys))*float64(b.N)/(float64(tableNs)/1e9), "keys/s")
}
