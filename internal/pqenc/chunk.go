package pqenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
)

// Parquet's Thrift enum values (parquet.thrift) that the encoder writes.
const (
	pageData       = 0
	pageDictionary = 2

	encPlain   = 0
	encRLE     = 3
	encRLEDict = 8
)

// Chunk is one encoded column chunk: its pages, ready to be written, and
// what the footer says of them. An Encoder's Chunk is valid until the
// Encoder's next Begin.
type Chunk struct {
	// Dict is the dictionary page (header and body), empty without one.
	Dict []byte
	// Data is the data pages, each a header and a body.
	Data []byte

	numValues      int64 // levels written (values and nulls)
	uncompressed   int64 // bytes of the pages before compression, headers included
	dataPages      int32
	hasStats       bool // a Statistics struct (null count)
	hasMinMax      bool // ... with a minimum and maximum ("" is one)
	nullCount      int64
	minVal, maxVal []byte
}

// Encoder encodes the column chunks of one goroutine, one after another,
// reusing its buffers. It is not safe for concurrent use.
type Encoder struct {
	col *Column

	// The current page: levels, values (PLAIN) or dictionary indices.
	def, rep []int16
	idx      []int32
	vals     []byte
	bools    int // values in the page of a boolean column
	pageVals int // non-null values in the page

	raw, frame []byte // a page's body before and after compression
	hdr        *tw

	dict      map[string]int32
	dictPlain []byte // the dictionary's values, PLAIN
	dictN     int32

	minS, maxS string // byte-array statistics (views into the batch)
	minN, maxN uint64 // fixed-width statistics, as bits
	seen       bool   // a non-null value was seen (min and max set)
	nanOnly    bool   // every value seen was NaN

	out Chunk
	err error // a page header's, kept until Finish
}

// NewEncoder returns an encoder with empty buffers.
func NewEncoder() *Encoder {
	return &Encoder{hdr: newTW(), dict: make(map[string]int32)}
}

// Begin starts a chunk of column c.
func (e *Encoder) Begin(c *Column) {
	e.col = c
	e.def, e.rep, e.idx, e.vals = e.def[:0], e.rep[:0], e.idx[:0], e.vals[:0]
	e.bools, e.pageVals = 0, 0
	clear(e.dict)
	e.dictPlain, e.dictN = e.dictPlain[:0], 0
	e.minS, e.maxS, e.minN, e.maxN, e.seen, e.nanOnly = "", "", 0, 0, false, false
	e.err = nil
	e.out = Chunk{Dict: e.out.Dict[:0], Data: e.out.Data[:0], minVal: e.out.minVal[:0], maxVal: e.out.maxVal[:0]}
}

// Abandon lets go of the chunk being encoded (after an error or a panic):
// the views into the caller's values, and the header writer's state, so
// that the encoder can be reused.
func (e *Encoder) Abandon() {
	e.minS, e.maxS = "", ""
	clear(e.dict)
	e.hdr = newTW()
	e.col = nil
}

// pageCheck is how many levels are added to a page between two checks of
// its size, as arrow-go checks after each write batch (agora sets 128).
const pageCheck = 128

// Write adds one piece of the column: its leaf values and, for a column
// with them, its definition and repetition levels (nil when the column
// has none, one value per row then). values holds a slot for every level
// at or past the column's SlotDef, nulls included, as
// pqarrow.WriteArrowToColumn takes them; slots past the last the levels
// call for are left. The encoder reads values only until Finish returns.
func (e *Encoder) Write(values arrow.Array, def, rep []int16) error {
	c := e.col
	n := values.Len()
	if c.MaxDef == 0 {
		if def != nil || rep != nil {
			return errors.New("levels given for a required column")
		}
		for lo := 0; lo < n; lo += pageCheck {
			hi := min(lo+pageCheck, n)
			if err := e.addValues(values, lo, hi); err != nil {
				return err
			}
			e.out.numValues += int64(hi - lo)
			e.maybeFlush()
		}
		return nil
	}
	if len(def) == 0 {
		return errors.New("no definition levels for an optional or repeated column")
	}
	if c.MaxRep > 0 && len(rep) != len(def) {
		return fmt.Errorf("%d repetition levels for %d definition levels", len(rep), len(def))
	}
	slotDef := c.SlotDef
	slot := 0
	for lo := 0; lo < len(def); {
		hi := min(lo+pageCheck, len(def))
		if c.MaxRep > 0 {
			// A page starts at a row: extend to the next level of
			// repetition 0.
			for hi < len(def) && rep[hi] != 0 {
				hi++
			}
			e.rep = append(e.rep, rep[lo:hi]...)
		}
		e.def = append(e.def, def[lo:hi]...)
		for k := lo; k < hi; k++ {
			d := def[k]
			if d < c.MaxDef {
				// Every level short of a value counts as a null, an empty
				// or null list too (as parquet-mr counts them): a reader
				// may skip a chunk whose count is 0 for IS NULL.
				e.out.nullCount++
			}
			if d < slotDef {
				continue
			}
			if slot >= n {
				return fmt.Errorf("levels call for more than the %d values given", n)
			}
			if d == c.MaxDef {
				// Consecutive set values are added together.
				j := k + 1
				for j < hi && def[j] == c.MaxDef {
					j++
				}
				if slot+(j-k) > n {
					return fmt.Errorf("levels call for more than the %d values given", n)
				}
				if values.NullN() > 0 && !c.leafRequired {
					for s := slot; s < slot+(j-k); s++ {
						if values.IsNull(s) {
							return fmt.Errorf("value %d is null where its level says it is set", s)
						}
					}
				}
				if err := e.addValues(values, slot, slot+(j-k)); err != nil {
					return err
				}
				slot += j - k
				k = j - 1
				continue
			}
			slot++
		}
		e.out.numValues += int64(hi - lo)
		lo = hi
		e.maybeFlush()
	}
	// Values past the last the levels call for are left, as arrow-go
	// leaves them (the values under a null list at the end of a batch).
	return nil
}

// addValues adds values[lo:hi], none of them null, to the page and the
// statistics.
func (e *Encoder) addValues(values arrow.Array, lo, hi int) error {
	c := e.col
	e.pageVals += hi - lo
	switch a := values.(type) {
	case *array.String:
		for i := lo; i < hi; i++ {
			e.addBytes(a.Value(i))
		}
	case *array.Binary:
		for i := lo; i < hi; i++ {
			b := a.Value(i)
			e.addBytes(unsafe.String(unsafe.SliceData(b), len(b)))
		}
	case *array.Int64:
		addFixed(e, a.Int64Values()[lo:hi], c.Stats, false)
	case *array.Timestamp:
		v := a.TimestampValues()[lo:hi]
		addFixed(e, unsafe.Slice((*int64)(unsafe.SliceData(v)), len(v)), c.Stats, false)
	case *array.Float64:
		v := a.Float64Values()[lo:hi]
		addFixed(e, unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(v))), len(v)), c.Stats, true)
	case *array.Int32:
		addFixed(e, a.Int32Values()[lo:hi], c.Stats, false)
	case *array.Date32:
		v := a.Date32Values()[lo:hi]
		addFixed(e, unsafe.Slice((*int32)(unsafe.SliceData(v)), len(v)), c.Stats, false)
	case *array.Float32:
		v := a.Float32Values()[lo:hi]
		addFixed(e, unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(v))), len(v)), c.Stats, true)
	case *array.Boolean:
		for i := lo; i < hi; i++ {
			v := a.Value(i)
			if e.bools%8 == 0 {
				e.vals = append(e.vals, 0)
			}
			if v {
				e.vals[len(e.vals)-1] |= 1 << (e.bools % 8)
			}
			e.bools++
			if c.Stats {
				b := uint64(0)
				if v {
					b = 1
				}
				if !e.seen {
					e.minN, e.maxN, e.seen = b, b, true
				}
				e.minN, e.maxN = min(e.minN, b), max(e.maxN, b)
			}
		}
	default:
		return fmt.Errorf("arrow type %s not supported", values.DataType())
	}
	return nil
}

// addBytes adds one byte-array value: its dictionary index or its PLAIN
// bytes.
func (e *Encoder) addBytes(v string) {
	if e.col.Stats {
		if !e.seen {
			e.minS, e.maxS, e.seen = v, v, true
		} else if v < e.minS {
			e.minS = v
		} else if v > e.maxS {
			e.maxS = v
		}
	}
	if e.col.Dictionary {
		id, ok := e.dict[v]
		if !ok {
			id = e.dictN
			e.dictN++
			e.dict[v] = id
			e.dictPlain = binary.LittleEndian.AppendUint32(e.dictPlain, uint32(len(v)))
			e.dictPlain = append(e.dictPlain, v...)
		}
		e.idx = append(e.idx, id)
		return
	}
	e.vals = binary.LittleEndian.AppendUint32(e.vals, uint32(len(v)))
	e.vals = append(e.vals, v...)
}

// addFixed adds 4- or 8-byte values (their PLAIN bytes) and their
// statistics, as floats when float is set (float32 or float64 bits).
func addFixed[T int32 | int64](e *Encoder, v []T, stats, float bool) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	e.vals = append(e.vals, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*size)...)
	if !stats {
		return
	}
	for _, x := range v {
		if float {
			if size == 4 {
				e.floatStat(float64(math.Float32frombits(uint32(x))))
			} else {
				e.floatStat(math.Float64frombits(uint64(x)))
			}
			continue
		}
		n := int64(x)
		if !e.seen {
			e.minN, e.maxN, e.seen = uint64(n), uint64(n), true
			continue
		}
		if n < int64(e.minN) {
			e.minN = uint64(n)
		}
		if n > int64(e.maxN) {
			e.maxN = uint64(n)
		}
	}
}

// floatStat adds x to a float column's statistics, kept as float64 bits:
// NaN is left out (a chunk of NaNs alone has no minimum or maximum), and
// a zero minimum is -0.0 and a zero maximum +0.0, as the format asks.
func (e *Encoder) floatStat(x float64) {
	if math.IsNaN(x) {
		if !e.seen {
			e.nanOnly = true
		}
		return
	}
	lo, hi := x, x
	if x == 0 {
		lo, hi = math.Copysign(0, -1), 0
	}
	if !e.seen || e.nanOnly {
		e.minN, e.maxN, e.seen, e.nanOnly = math.Float64bits(lo), math.Float64bits(hi), true, false
		return
	}
	if lo < math.Float64frombits(e.minN) {
		e.minN = math.Float64bits(lo)
	}
	if hi > math.Float64frombits(e.maxN) {
		e.maxN = math.Float64bits(hi)
	}
}

// pageBytes estimates the current page's encoded size.
func (e *Encoder) pageBytes() int {
	n := len(e.vals) + 2*(len(e.def)+len(e.rep))/8
	if e.col.Dictionary {
		n += len(e.idx)*bits.Len32(uint32(max(e.dictN, 1)))/8 + 1
	}
	return n
}

func (e *Encoder) maybeFlush() {
	if e.pageBytes() >= e.col.PageBytes {
		e.flushPage()
	}
}

// flushPage encodes the current page, compresses it and appends it, its
// header first, to the chunk's data pages.
func (e *Encoder) flushPage() {
	c := e.col
	levels := len(e.def)
	if c.MaxDef == 0 {
		levels = e.pageVals
	}
	if levels == 0 {
		return
	}
	raw := e.raw[:0]
	if c.MaxRep > 0 {
		raw = appendLevels(raw, e.rep, c.MaxRep)
	}
	if c.MaxDef > 0 {
		raw = appendLevels(raw, e.def, c.MaxDef)
	}
	if c.Dictionary {
		w := max(bits.Len32(uint32(max(e.dictN-1, 0))), 1)
		raw = append(raw, byte(w))
		raw = appendRLE(raw, e.idx, w)
	} else {
		raw = append(raw, e.vals...)
	}
	e.raw = raw
	if len(raw) > math.MaxInt32 && e.err == nil {
		e.err = fmt.Errorf("a page of %d bytes, past Parquet's 2 GiB: lower data_page_bytes", len(raw))
	}
	body := e.compress(raw)
	enc := int32(encPlain)
	if c.Dictionary {
		enc = encRLEDict
	}
	h := e.hdr
	h.reset()
	h.begin()
	h.i32(1, pageData)
	h.i32(2, int32(len(raw)))
	h.i32(3, int32(len(body)))
	h.structField(5)
	h.i32(1, int32(levels))
	h.i32(2, enc)
	h.i32(3, encRLE)
	h.i32(4, encRLE)
	h.end()
	h.end()
	if h.err != nil && e.err == nil {
		e.err = h.err
	}
	e.out.Data = append(e.out.Data, h.bytes()...)
	e.out.Data = append(e.out.Data, body...)
	e.out.uncompressed += int64(len(h.bytes()) + len(raw))
	e.out.dataPages++
	e.def, e.rep, e.idx, e.vals = e.def[:0], e.rep[:0], e.idx[:0], e.vals[:0]
	e.bools, e.pageVals = 0, 0
}

// appendLevels appends levels RLE-encoded with their 4-byte length, as
// data page v1 holds them.
func appendLevels(dst []byte, levels []int16, maxLevel int16) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = appendRLE(dst, levels, bits.Len16(uint16(maxLevel)))
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// compress returns raw compressed with the column's codec, in the
// encoder's frame buffer (or raw itself, uncompressed).
func (e *Encoder) compress(raw []byte) []byte {
	if e.col.Compress == nil {
		return raw
	}
	e.frame = e.col.Compress(e.frame[:0], raw)
	return e.frame
}

// Finish ends the chunk: the last data page, the dictionary page and the
// statistics. The Chunk returned is valid until the next Begin.
func (e *Encoder) Finish() (*Chunk, error) {
	e.flushPage()
	if e.err != nil {
		return nil, e.err
	}
	c := e.col
	if c.Dictionary {
		if len(e.dictPlain) > math.MaxInt32 {
			return nil, fmt.Errorf("a dictionary page of %d bytes, past Parquet's 2 GiB: lower row_group_bytes or leave the column out of dictionary", len(e.dictPlain))
		}
		body := e.compress(e.dictPlain)
		h := e.hdr
		h.reset()
		h.begin()
		h.i32(1, pageDictionary)
		h.i32(2, int32(len(e.dictPlain)))
		h.i32(3, int32(len(body)))
		h.structField(7)
		h.i32(1, e.dictN)
		h.i32(2, encPlain)
		h.end()
		h.end()
		if h.err != nil {
			return nil, h.err
		}
		e.out.Dict = append(append(e.out.Dict, h.bytes()...), body...)
		e.out.uncompressed += int64(len(h.bytes()) + len(e.dictPlain))
	}
	// A chunk of no levels has no statistics, as arrow-go writes it.
	e.out.hasStats = c.Stats && e.out.numValues > 0
	e.out.minVal, e.out.maxVal = e.out.minVal[:0], e.out.maxVal[:0]
	e.out.hasMinMax = e.out.hasStats && e.seen && !e.nanOnly
	if e.out.hasMinMax {
		switch c.ptype {
		case parquet.Types.ByteArray:
			// A minimum or maximum past MaxStatsSize drops both: arrow-go
			// keeps the other, which pyarrow ignores and arrow-go's own
			// reader reads with an empty maximum.
			if len(e.minS) <= c.MaxStatsSize && len(e.maxS) <= c.MaxStatsSize {
				e.out.minVal = append(e.out.minVal, e.minS...)
				e.out.maxVal = append(e.out.maxVal, e.maxS...)
			} else {
				e.out.hasMinMax = false
			}
		case parquet.Types.Int32:
			e.out.minVal = binary.LittleEndian.AppendUint32(e.out.minVal, uint32(e.minN))
			e.out.maxVal = binary.LittleEndian.AppendUint32(e.out.maxVal, uint32(e.maxN))
		case parquet.Types.Float:
			e.out.minVal = binary.LittleEndian.AppendUint32(e.out.minVal, math.Float32bits(float32(math.Float64frombits(e.minN))))
			e.out.maxVal = binary.LittleEndian.AppendUint32(e.out.maxVal, math.Float32bits(float32(math.Float64frombits(e.maxN))))
		case parquet.Types.Int64, parquet.Types.Double:
			e.out.minVal = binary.LittleEndian.AppendUint64(e.out.minVal, e.minN)
			e.out.maxVal = binary.LittleEndian.AppendUint64(e.out.maxVal, e.maxN)
		case parquet.Types.Boolean:
			e.out.minVal = append(e.out.minVal, byte(e.minN))
			e.out.maxVal = append(e.out.maxVal, byte(e.maxN))
		}
	}
	// The views into the batches go: the caller releases them next.
	e.minS, e.maxS = "", ""
	clear(e.dict)
	return &e.out, nil
}

// WithPages returns a copy of c whose pages are dict and data (copies of
// c's own, kept past the encoder's next Begin).
func (c *Chunk) WithPages(dict, data []byte) Chunk {
	out := *c
	out.Dict, out.Data = dict, data
	out.minVal = append([]byte(nil), c.minVal...)
	out.maxVal = append([]byte(nil), c.maxVal...)
	return out
}
