package stages

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// UniqueMemKeys is how many keys a key set (of a unique rule or an
// occurrence derivation) keeps in memory, in a hash table of 16 bytes a
// slot filled to three quarters (about 21 bytes a key), before it moves
// them to a sorted run file on disk (in SpillDir), keeping 2 bytes a key
// in memory. A variable so that tests can make it small.
//
// 196,608 keys fill a table of 2¹⁸ slots (4 MiB). A Go map of 2¹⁸ keys
// (about 28 bytes a key) took 7 MB, and its spill two more sorted copies
// of the keys (8 MB): 15 MB at the peak of every key set past its budget.
// CrowdRAG-25's votes at 50× hold 2.4 million keys; a million keys in a
// map (30 MB) took that run's peak RSS from 478 to 524 MB.
var UniqueMemKeys = 3 << 16

// keyEntryBytes is a run file entry: a key's three words and its value
// (a unique rule's line, an occurrence count), little-endian.
const keyEntryBytes = 16

// wideLine marks a key whose value does not fit below it in 32 bits; the
// value is in keySet.wide.
const wideLine = math.MaxUint32

// keySet records the row keys a unique rule has seen, each with the line
// of its first row; occurrence keeps each key's count in one.
//
// The newest keys are in a keyTable (16-byte slots: a 12-byte hash and a
// 32-bit value). When it holds UniqueMemKeys keys, they are sorted into a
// run file and the table is emptied. Each run counts the spills it holds;
// when the newest run holds as many as the one before it, the two are
// merged into one (as a binary counter carries). So after S spills there
// are at most log₂(S) + 1 runs to look in, and each entry is rewritten
// at most log₂(S) times.
//
// A run holds a key once. A unique rule sets each key once, so its keys
// are in one run each.
// A key set again after it was spilled is also in an older run until a
// merge drops the older entry (the newer wins, in lookups too), so with
// set a key may be in as many runs as there are.
//
// Of a run, only the low 16 bits of each entry's first word stay in
// memory (low, in the run's order), with a directory of where each value
// of the top 16 bits starts: together they are the first word, so a
// lookup reads a run's file only when a first word matches, about once in
// 2³² / run entries lookups for a new key, and for every duplicate.
// Memory is thus 16 bytes a slot of the table (at most 4/3 × UniqueMemKeys
// slots, rounded up to a power of two) + 2 bytes per entry spilled,
// plus 256 KiB of directory per run. (The whole first word took 4 bytes
// an entry for the same lookups: at Habermas 50× rows, millions of keys.)
//
// A keySet is used by one goroutine at a time; after close, get finds
// nothing and set is an error.
type keySet struct {
	mem  keyTable
	wide map[keyHash]int64 // values of 2³²−1 and past, marked wideLine in the table or a run

	runs  []*keyRun // oldest (most spills) first
	entry [keyEntryBytes]byte
}

// keyRun is a sorted run file of keys and the part of it kept in memory.
type keyRun struct {
	f      *os.File
	low    []uint16 // the low 16 bits of the keys' first words, in the run's order
	dir    []uint32 // dir[t] is the index of the first key whose first word's top 16 bits are ≥ t; 65537 entries
	spills int      // how many spills the run holds
}

// maxRunKeys is the most keys a run may hold: its directory indexes them
// in 32 bits.
const maxRunKeys = math.MaxUint32

func newKeySet() *keySet { return &keySet{mem: newKeyTable(UniqueMemKeys)} }

// get returns the value set last for k, if there is one.
func (s *keySet) get(k keyHash) (int64, bool, error) {
	if k == (keyHash{}) {
		k = keyZero
	}
	l, ok := s.mem.get(k)
	for i := len(s.runs) - 1; !ok && i >= 0; i-- {
		var err error
		if l, ok, err = s.runs[i].find(k, &s.entry); err != nil {
			return 0, false, err
		}
	}
	if !ok {
		return 0, false, nil
	}
	if l == wideLine {
		return s.wide[k], true, nil
	}
	return int64(l), true, nil
}

// set records v for k, replacing what was recorded before: the newest
// value wins in get and when runs are merged. Values past 32 bits stay in
// memory.
func (s *keySet) set(k keyHash, v int64) error {
	if s.mem.slots == nil {
		return fmt.Errorf("key set: set after close")
	}
	if k == (keyHash{}) {
		k = keyZero
	}
	l := uint32(wideLine)
	if v >= 0 && v < wideLine {
		l = uint32(v)
		if s.wide != nil {
			delete(s.wide, k)
		}
	} else {
		if s.wide == nil {
			s.wide = map[keyHash]int64{}
		}
		s.wide[k] = v
	}
	if !s.mem.put(k, l) {
		// Its slot would be past the table's end: spill and set it again.
		if err := s.spill(); err != nil {
			return err
		}
		if !s.mem.put(k, l) { // an empty table has room for any key
			return fmt.Errorf("key set: no room for a key in an empty table")
		}
	}
	if s.mem.n >= UniqueMemKeys {
		return s.spill()
	}
	return nil
}

// find looks k up in the run file, reading an entry into buf.
func (r *keyRun) find(k keyHash, buf *[keyEntryBytes]byte) (uint32, bool, error) {
	top, want := k[0]>>16, uint16(k[0])
	lo, hi := int(r.dir[top]), int(r.dir[top+1])
	// Within a top's keys, sorted by first word, the low bits ascend. A
	// top holds a few keys per 65,536 in the run: a scan of them costs
	// less than a binary search's mispredicted branches.
	i := lo
	if hi-lo > 32 {
		j, _ := slices.BinarySearch(r.low[lo:hi], want)
		i += j
	} else {
		for i < hi && r.low[i] < want {
			i++
		}
	}
	for ; i < hi && r.low[i] == want; i++ {
		if _, err := r.f.ReadAt(buf[:], int64(i)*keyEntryBytes); err != nil {
			return 0, false, fmt.Errorf("key file %s: %w", r.f.Name(), err)
		}
		if e := decodeKeyEntry(buf[:]); e.key == k {
			return e.line, true, nil
		}
	}
	return 0, false, nil
}

// remove closes and deletes the run's file.
func (r *keyRun) remove() {
	r.f.Close()
	os.Remove(r.f.Name())
}

type keyEntry struct {
	key  keyHash
	line uint32
}

// keyLess orders keys by their words, first word first (the run's order):
// slices.Compare's order, compared word by word without its loop (a spill
// sorts 196,608 keys with it).
func keyLess(a, b keyHash) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	if c := cmp.Compare(a[1], b[1]); c != 0 {
		return c
	}
	return cmp.Compare(a[2], b[2])
}

func decodeKeyEntry(b []byte) keyEntry {
	return keyEntry{
		key:  keyHash{binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])},
		line: binary.LittleEndian.Uint32(b[12:]),
	}
}

func appendKeyEntry(b []byte, e keyEntry) []byte {
	b = binary.LittleEndian.AppendUint32(b, e.key[0])
	b = binary.LittleEndian.AppendUint32(b, e.key[1])
	b = binary.LittleEndian.AppendUint32(b, e.key[2])
	return binary.LittleEndian.AppendUint32(b, e.line)
}

// spill writes the table's keys as a new run and empties the table
// (keeping its slots for the next keys); then, while the newest run holds
// as many spills as the one before it, merges the two.
func (s *keySet) spill() error {
	news := s.mem.sorted()
	r, err := writeRun(len(news), &sliceEntries{news}, &sliceEntries{})
	if err != nil {
		return err
	}
	r.spills = 1
	s.runs = append(s.runs, r)
	s.mem.reset()
	for n := len(s.runs); n >= 2 && s.runs[n-1].spills >= s.runs[n-2].spills; n = len(s.runs) {
		a, b := s.runs[n-2], s.runs[n-1]
		total := len(a.low) + len(b.low)
		if int64(total) > maxRunKeys {
			return fmt.Errorf("key file: more than %d keys", int64(maxRunKeys))
		}
		m, err := writeRun(total, a.entries(), b.entries())
		if err != nil {
			return err
		}
		m.spills = a.spills + b.spills
		a.remove()
		b.remove()
		s.runs = append(s.runs[:n-2], m)
	}
	return nil
}

// entrySource gives sorted entries one at a time; ok is false at the end.
type entrySource interface {
	next() (e keyEntry, ok bool, err error)
}

// sliceEntries gives the entries of a sorted slice.
type sliceEntries struct{ es []keyEntry }

func (s *sliceEntries) next() (keyEntry, bool, error) {
	if len(s.es) == 0 {
		return keyEntry{}, false, nil
	}
	e := s.es[0]
	s.es = s.es[1:]
	return e, true, nil
}

// fileEntries reads the entries of a run file in order.
type fileEntries struct {
	r   *bufio.Reader
	buf [keyEntryBytes]byte
}

func (r *keyRun) entries() *fileEntries {
	size := int64(len(r.low)) * keyEntryBytes
	return &fileEntries{r: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, size), ioBufBytes(size))}
}

func (f *fileEntries) next() (keyEntry, bool, error) {
	if _, err := io.ReadFull(f.r, f.buf[:]); err != nil {
		if err == io.EOF {
			return keyEntry{}, false, nil
		}
		return keyEntry{}, false, err
	}
	return decodeKeyEntry(f.buf[:]), true, nil
}

// ioBufBytes sizes a run file's read or write buffer: 1 MiB, or less
// for a small run.
func ioBufBytes(size int64) int { return int(min(max(size, 4096), 1<<20)) }

// writeRun merges two sorted sources of at most n keys in all into a new
// run file in SpillDir; of a key in both, b's entry is kept.
func writeRun(n int, a, b entrySource) (*keyRun, error) {
	f, err := os.CreateTemp(SpillDir, "agora-keys-*.keys")
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	fail := func(err error) (*keyRun, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("key file %s: %w", f.Name(), err)
	}
	w := bufio.NewWriterSize(f, ioBufBytes(int64(n)*keyEntryBytes))
	r := &keyRun{f: f, low: make([]uint16, 0, n), dir: make([]uint32, 1<<16+1)}
	buf := make([]byte, 0, keyEntryBytes)
	t := 0 // the directory is filled up to top t
	emit := func(e keyEntry) error {
		for top := int(e.key[0] >> 16); t <= top; t++ {
			r.dir[t] = uint32(len(r.low))
		}
		r.low = append(r.low, uint16(e.key[0]))
		_, err := w.Write(appendKeyEntry(buf[:0], e))
		return err
	}
	ea, okA, err := a.next()
	if err != nil {
		return fail(err)
	}
	eb, okB, err := b.next()
	if err != nil {
		return fail(err)
	}
	for okA || okB {
		if okA && okB && ea.key == eb.key {
			// Set again since a's run was written: b, the newer, wins.
			if ea, okA, err = a.next(); err != nil {
				return fail(err)
			}
			continue
		}
		if okA && (!okB || keyLess(ea.key, eb.key) < 0) {
			if err := emit(ea); err != nil {
				return fail(err)
			}
			if ea, okA, err = a.next(); err != nil {
				return fail(err)
			}
			continue
		}
		if err := emit(eb); err != nil {
			return fail(err)
		}
		if eb, okB, err = b.next(); err != nil {
			return fail(err)
		}
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	for ; t < len(r.dir); t++ {
		r.dir[t] = uint32(len(r.low))
	}
	return r, nil
}

// close removes the run files.
func (s *keySet) close() {
	for _, r := range s.runs {
		r.remove()
	}
	s.runs = nil
	s.mem = keyTable{}
	clear(s.wide)
}
