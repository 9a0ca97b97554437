package stages

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
)

// UniqueMemKeys is how many keys a unique rule keeps in a Go map (about
// 28 bytes a key) before it moves them to a sorted run file on disk (in
// SpillDir), keeping 4 bytes a key in memory. A variable so that tests
// can make it small.
var UniqueMemKeys = 1 << 20

// keyEntryBytes is a run file entry: a key's three words and its line,
// little-endian.
const keyEntryBytes = 16

// wideLine marks a key whose line does not fit in 32 bits; its line is
// in keySet.wide.
const wideLine = math.MaxUint32

// keySet records the row keys a unique rule has seen, each with the line
// of its first row.
//
// The newest keys are in a map (16-byte slots: a 12-byte hash and a
// 32-bit line). When it holds UniqueMemKeys keys, they are sorted and
// merged with the run file (every key spilled so far, sorted) into a new
// run file, and the map is emptied. Of the run, only each key's first
// word stays in memory (prefix, in the run's order) with a directory of
// where each value of its top 16 bits starts, so a lookup reads the file
// only when a first word matches: about once in 2³² / run keys lookups
// for a new key, and for every duplicate. Memory is thus about
// 28 × UniqueMemKeys + 4 bytes per key spilled, and each spill rewrites
// the run (16 bytes a key, sequentially).
//
// A keySet is used by one goroutine at a time.
type keySet struct {
	mem  map[keyHash]uint32
	wide map[keyHash]int64 // lines past 32 bits, in the map or the run

	run    *os.File
	prefix []uint32 // run keys' first words, ascending
	dir    []uint32 // dir[t] is the first index of prefix with top 16 bits ≥ t; 65537 entries
	entry  [keyEntryBytes]byte
}

func newKeySet() *keySet { return &keySet{mem: map[keyHash]uint32{}} }

// get returns the line of k's first row, if k was put before.
func (s *keySet) get(k keyHash) (int64, bool, error) {
	l, ok := s.mem[k]
	if !ok && len(s.prefix) > 0 {
		var err error
		l, ok, err = s.find(k)
		if err != nil {
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

// put records k, not yet seen, with the line of its row.
func (s *keySet) put(k keyHash, line int64) error {
	if line >= 0 && line < wideLine {
		s.mem[k] = uint32(line)
	} else {
		if s.wide == nil {
			s.wide = map[keyHash]int64{}
		}
		s.mem[k], s.wide[k] = wideLine, line
	}
	if len(s.mem) >= UniqueMemKeys {
		return s.spill()
	}
	return nil
}

// find looks k up in the run file.
func (s *keySet) find(k keyHash) (uint32, bool, error) {
	top := k[0] >> 16
	lo, hi := int(s.dir[top]), int(s.dir[top+1])
	i := lo + sort.Search(hi-lo, func(j int) bool { return s.prefix[lo+j] >= k[0] })
	for ; i < hi && s.prefix[i] == k[0]; i++ {
		if _, err := s.run.ReadAt(s.entry[:], int64(i)*keyEntryBytes); err != nil {
			return 0, false, fmt.Errorf("unique key file %s: %w", s.run.Name(), err)
		}
		if e := decodeKeyEntry(s.entry[:]); e.key == k {
			return e.line, true, nil
		}
	}
	return 0, false, nil
}

type keyEntry struct {
	key  keyHash
	line uint32
}

// keyLess orders keys by their words, first word first (the run's order).
func keyLess(a, b keyHash) int { return slices.Compare(a[:], b[:]) }

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

// spill merges the map's keys into a new run file and empties the map
// (keeping its room for the next keys).
func (s *keySet) spill() error {
	news := make([]keyEntry, 0, len(s.mem))
	for k, l := range s.mem {
		news = append(news, keyEntry{k, l})
	}
	slices.SortFunc(news, func(a, b keyEntry) int { return keyLess(a.key, b.key) })

	f, err := os.CreateTemp(SpillDir, "agora-unique-*.keys")
	if err != nil {
		return fmt.Errorf("unique key file: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("unique key file %s: %w", f.Name(), err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	prefix := make([]uint32, 0, len(s.prefix)+len(news))
	var old *bufio.Reader
	if s.run != nil {
		old = bufio.NewReaderSize(io.NewSectionReader(s.run, 0, int64(len(s.prefix))*keyEntryBytes), 1<<20)
	}
	var ob [keyEntryBytes]byte
	nextOld := func() (keyEntry, bool, error) {
		if old == nil {
			return keyEntry{}, false, nil
		}
		if _, err := io.ReadFull(old, ob[:]); err != nil {
			if err == io.EOF {
				return keyEntry{}, false, nil
			}
			return keyEntry{}, false, err
		}
		return decodeKeyEntry(ob[:]), true, nil
	}
	o, haveOld, err := nextOld()
	if err != nil {
		return fail(err)
	}
	buf := make([]byte, 0, keyEntryBytes)
	emit := func(e keyEntry) error {
		prefix = append(prefix, e.key[0])
		_, err := w.Write(appendKeyEntry(buf[:0], e))
		return err
	}
	for _, n := range news {
		for haveOld && keyLess(o.key, n.key) < 0 {
			if err := emit(o); err != nil {
				return fail(err)
			}
			if o, haveOld, err = nextOld(); err != nil {
				return fail(err)
			}
		}
		if err := emit(n); err != nil {
			return fail(err)
		}
	}
	for haveOld {
		if err := emit(o); err != nil {
			return fail(err)
		}
		if o, haveOld, err = nextOld(); err != nil {
			return fail(err)
		}
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if s.run != nil {
		s.run.Close()
		os.Remove(s.run.Name())
	}
	s.run, s.prefix = f, prefix
	if s.dir == nil {
		s.dir = make([]uint32, 1<<16+1)
	}
	t := 0
	for i, p := range prefix {
		for ; t <= int(p>>16); t++ {
			s.dir[t] = uint32(i)
		}
	}
	for ; t < len(s.dir); t++ {
		s.dir[t] = uint32(len(prefix))
	}
	clear(s.mem)
	return nil
}

// close removes the run file.
func (s *keySet) close() {
	if s.run != nil {
		s.run.Close()
		os.Remove(s.run.Name())
		s.run = nil
	}
	s.prefix, s.dir = nil, nil
	clear(s.mem)
	clear(s.wide)
}
