package stages

import "slices"

// keyTable is the part of a keySet kept in memory: a hash table of key
// entries in one slice, which a spill sorts in place.
//
// The keys are hashes already, so a key's home slot is the top bits of
// its first word and a full slot's key is never hashed again. A key that
// is not at home is in the next free slot after it (linear probing),
// never wrapping to the start: past the table's power-of-two slots are
// keyTableSlack more, and a key that would go past those is an overflow
// (the caller spills and sets it again). So the slots, read in order, hold
// the keys almost in their run order (first word first): a spill packs
// them to the front and an insertion sort orders them in place, with no
// second copy of the keys.
//
// The zero key marks a free slot; keySet never passes it (see keyZero).
type keyTable struct {
	slots []keyEntry
	shift uint // 32 − log₂ of the power-of-two slots
	n     int  // keys held
	max   int  // the most slots the table grows to, without the slack
}

// keyTableSlack is how many slots a table has past its power-of-two ones,
// for the keys whose home is near the end.
const keyTableSlack = 256

// keyTableFirst is the power-of-two slots a table starts with; it doubles
// while it is three-quarters full, up to its maximum.
const keyTableFirst = 1 << 10

// keyZero stands for the zero key, which marks a free slot in a
// keyTable: a key set holds a key of three zero words (one in 2⁹⁶) as
// keyZero, which is as likely to be another key as any two keys are to
// share their hash.
var keyZero = keyHash{0, 0, 1}

// newKeyTable returns an empty table that grows to hold maxKeys keys at
// three quarters of its slots.
func newKeyTable(maxKeys int) keyTable {
	limit := 1
	for limit*3 < maxKeys*4 {
		limit *= 2
	}
	t := keyTable{max: limit}
	t.alloc(min(limit, keyTableFirst))
	return t
}

// alloc gives the table size empty power-of-two slots and the slack.
func (t *keyTable) alloc(size int) {
	t.slots = make([]keyEntry, size+keyTableSlack)
	t.shift = 32
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	t.n = 0
}

// size is the table's power-of-two slots.
func (t *keyTable) size() int { return len(t.slots) - keyTableSlack }

// slot returns where k is, or the free slot where it would go (found
// false), or len(t.slots) when that slot would be past the slack.
func (t *keyTable) slot(k keyHash) (i int, found bool) {
	i = int(uint64(k[0]) >> t.shift) // shift 32 (one slot) gives 0
	for ; i < len(t.slots); i++ {
		switch t.slots[i].key {
		case k:
			return i, true
		case keyHash{}:
			return i, false
		}
	}
	// Past the slack, or a table without slots (a closed key set's,
	// where the home is past the end).
	return len(t.slots), false
}

// get returns the value held for k.
func (t *keyTable) get(k keyHash) (uint32, bool) {
	i, ok := t.slot(k)
	if !ok {
		return 0, false
	}
	return t.slots[i].line, true
}

// put holds v for k. It returns false, holding nothing, when k's slot
// would be past the slack: the caller empties the table and puts k again.
func (t *keyTable) put(k keyHash, v uint32) bool {
	i, found := t.slot(k)
	if found {
		t.slots[i].line = v
		return true
	}
	if i == len(t.slots) {
		return false
	}
	t.slots[i] = keyEntry{k, v}
	t.n++
	if t.n*4 >= t.size()*3 && t.size() < t.max {
		t.grow()
	}
	return true
}

// grow doubles the table's slots, setting its keys again.
//
// Every key fits: with linear probing and no wrap, where the last of a
// run of keys lands depends only on their homes, not on the order they
// are put in. A key at home h goes to 2h or 2h+1, so the keys at or past
// 2h are those that were at or past h, which ended by size+slack: in the
// doubled table they end by 2·size+slack−1, inside its slots.
func (t *keyTable) grow() {
	old := t.slots
	t.alloc(2 * t.size())
	for _, e := range old {
		if e.key != (keyHash{}) && !t.put(e.key, e.line) {
			panic("stages: keyTable.grow: a key past the doubled table's end") // see above: cannot happen
		}
	}
}

// sorted packs the table's keys to the front of its slots and returns
// them in key order (the run order). The table is unusable until reset
// (a keySet whose spill fails is not used again: its caller stops).
func (t *keyTable) sorted() []keyEntry {
	es := t.slots[:0]
	for _, e := range t.slots {
		if e.key != (keyHash{}) {
			es = append(es, e) // never ahead of the slot read
		}
	}
	// Almost in order: each key at most its probe distance from its
	// place. Insertion sort, unless the keys moved far (then pdqsort).
	moves, limit := 0, 8*len(es)+64
	for i := 1; i < len(es) && moves <= limit; i++ {
		for j := i; j > 0 && keyLess(es[j].key, es[j-1].key) < 0; j-- {
			es[j], es[j-1] = es[j-1], es[j]
			moves++
		}
	}
	if moves > limit {
		slices.SortFunc(es, func(x, y keyEntry) int { return keyLess(x.key, y.key) })
	}
	return es
}

// reset empties the table, keeping its slots.
func (t *keyTable) reset() {
	clear(t.slots)
	t.n = 0
}
