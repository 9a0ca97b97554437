package stages

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fastjson"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// Sentinel errors of the decoders; they arrive wrapped in a *DecodeError.
var (
	// ErrBadJSON is returned for a line that is not a JSON object.
	ErrBadJSON = errors.New("invalid JSON")
	// ErrLineTooLong is returned for a line longer than max_line_bytes.
	ErrLineTooLong = errors.New("line too long")
	// ErrTooLarge is returned when the decompressed input exceeds max_bytes.
	ErrTooLarge = errors.New("input too large")
	// ErrCorrupt is returned when the file cannot be read to its end
	// (truncated or corrupt gzip).
	ErrCorrupt = errors.New("unreadable input")
)

// DecodeError is a problem at a place in an input file: the pipeline's
// RowError, which stages also use for the rows they stop at.
type DecodeError = pipeline.RowError

// JSONColumn is one declared column of a JSON Lines input.
type JSONColumn struct {
	// Name is the output column and the JSON key.
	Name string
	// Keys are the JSON keys read into the column; the first present
	// wins. Empty means just Name.
	Keys []string
	// Type is the Arrow type.
	Type arrow.DataType
}

// JSONLines is a Source reading JSON Lines, optionally gzipped, with one
// object per line (the pandas to_json(orient="records", lines=True)
// dialect: \/ and \uXXXX escapes, null for NaN). Lines may be as long as
// MaxLineBytes. Keys not declared are ignored or rejected; declared keys
// that are absent are null.
type JSONLines struct {
	// Path is the file to read; Name is how it is shown (relative to the
	// data root).
	Path, Name string
	// Gzip says the file is gzip-compressed.
	Gzip bool
	// Columns are the columns to read, in output order.
	Columns []JSONColumn
	// BatchRows is the most lines per chunk.
	BatchRows int
	// BatchBytes ends a chunk early once it holds this many bytes of
	// input (default 1 MiB).
	BatchBytes int
	// MaxLineBytes is the longest line accepted.
	MaxLineBytes int64
	// MaxBytes caps the decompressed bytes read.
	MaxBytes int64
	// RejectBadLines sends lines that are not JSON objects to the rejects
	// instead of failing.
	RejectBadLines bool
	// RejectUnknownKeys rejects rows with keys not declared.
	RejectUnknownKeys bool
	// Mem allocates the batches.
	Mem memory.Allocator

	once    sync.Once
	schema  *arrow.Schema
	hints   []sizeHint // sizes seen in the last batch, to reserve builders
	fns     []valueFn
	fast    []*fastType // the columns for the fast path; nil: every line takes fastjson
	keys    map[string]keyRef
	states  sync.Pool // *decodeState
	bufMu   sync.Mutex
	bufs    [][]byte // chunk buffers handed back by Decode, at most maxFreeBufs
	initErr error
	// valued marks the columns some row read gave a value (not null), and
	// rows counts the rows read (lines rejected as they are read left
	// out), for Notes.
	valued []atomic.Bool
	rows   atomic.Int64
	// early marks the timestamp columns some value is read in, and late
	// those with a value outside 1970-01-01 to 1973-03-03 (epoch
	// milliseconds below 1e11): a column of none but such values was most
	// likely written in epoch seconds.
	early, late []atomic.Bool
}

// secondsTill is 1e11 epoch milliseconds (1973-03-03) in microseconds:
// epoch seconds of any date up to the year 5138 read as milliseconds
// land before it.
const secondsTill = int64(1e11) * 1000

// sameJSON reports whether two JSON values are equal: numbers by value
// (1 and 1.0), objects whatever their keys' order, arrays element by
// element, strings by their text (escapes undone).
func sameJSON(a, b *fastjson.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Type() {
	case fastjson.TypeNumber:
		if x, err := a.Int64(); err == nil {
			if y, err := b.Int64(); err == nil {
				return x == y
			}
		}
		x, errx := a.Float64()
		y, erry := b.Float64()
		if errx == nil && erry == nil && x == y {
			return true
		}
	case fastjson.TypeString:
		x, _ := a.StringBytes()
		y, _ := b.StringBytes()
		return string(x) == string(y)
	case fastjson.TypeArray:
		x, _ := a.Array()
		y, _ := b.Array()
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case fastjson.TypeObject:
		x, _ := a.Object()
		y, _ := b.Object()
		if x.Len() != y.Len() {
			return false
		}
		same := true
		x.Visit(func(k []byte, v *fastjson.Value) {
			if w := y.Get(string(k)); same && (w == nil || !sameJSON(v, w)) {
				same = false
			}
		})
		return same
	}
	return string(a.MarshalTo(nil)) == string(b.MarshalTo(nil))
}

// keyOf returns the key of column col with priority prio: its name, or
// an alias.
func (s *JSONLines) keyOf(col, prio int) string {
	if keys := s.Columns[col].Keys; prio < len(keys) {
		return keys[prio]
	}
	return s.Columns[col].Name
}

// Notes reports the declared columns null in every row read from the
// file (lines rejected as they are read not counted): null or left out
// on every line, as a key spelled otherwise in the file would be
// (r.country for a key nested as {"r": {"country": …}}), or a field the
// release never fills.
func (s *JSONLines) Notes() []string {
	n := s.rows.Load()
	if n == 0 {
		return nil
	}
	var never, seconds []string
	for i := range s.valued {
		if !s.valued[i].Load() {
			never = append(never, s.Columns[i].Name)
		}
		if s.early[i].Load() && !s.late[i].Load() {
			seconds = append(seconds, s.Columns[i].Name)
		}
	}
	var notes []string
	if len(never) > 0 {
		note := fmt.Sprintf("%s: %s null in every row read (%d rows: without the key, or null; lines rejected as they were read not counted)", s.Name, strings.Join(never, ", "), n)
		if slices.ContainsFunc(never, func(c string) bool { return strings.Contains(c, ".") }) {
			note += "; a dotted name is one key, not a path into a nested object: declare the object as a struct<…> column, and take its fields out with derive's field function"
		}
		notes = append(notes, note)
	}
	if len(seconds) > 0 {
		notes = append(notes, fmt.Sprintf("%s: every timestamp of %s is between 1970-01-01 and 1973-03-03: epoch seconds where milliseconds are read? (write them in milliseconds, or as RFC 3339 strings)", s.Name, strings.Join(seconds, ", ")))
	}
	return notes
}

// parsePrefixes is a run of fastjson's error prefixes, one per level of
// nesting it went down before the error.
var parsePrefixes = regexp.MustCompile(`(?:cannot parse (?:JSON|object|object value|array|array value): )+`)

// jsonErrorText is fastjson's error with a long run of its prefixes cut
// to the first and "…": a line nested 300 deep made an error of 14 KB.
func jsonErrorText(err error) string {
	return parsePrefixes.ReplaceAllStringFunc(err.Error(), func(run string) string {
		if strings.Count(run, "cannot parse") <= 3 {
			return run
		}
		return run[:strings.Index(run, ": ")+2] + "… "
	})
}

// utf8BOM is the UTF-8 byte order mark, which may start a text file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

type keyRef struct {
	col, prio int
	idx       int // the key's own number, for a row's set of keys seen
}

// Schema returns the schema of the decoded batches (the columns, then the
// line column).
func (s *JSONLines) Schema() (*arrow.Schema, error) {
	s.once.Do(s.init)
	return s.schema, s.initErr
}

func (s *JSONLines) init() {
	s.valued = make([]atomic.Bool, len(s.Columns))
	s.early, s.late = make([]atomic.Bool, len(s.Columns)), make([]atomic.Bool, len(s.Columns))
	fields := make([]arrow.Field, 0, len(s.Columns)+1)
	s.keys = map[string]keyRef{}
	for i, c := range s.Columns {
		fn, err := compileValue(c.Type)
		if err != nil {
			s.initErr = fmt.Errorf("column %s: %w", c.Name, err)
			return
		}
		s.fns = append(s.fns, fn)
		fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type, Nullable: true})
		keys := c.Keys
		if len(keys) == 0 {
			keys = []string{c.Name}
		}
		for p, k := range keys {
			if _, ok := s.keys[k]; !ok { // a key listed twice keeps its first place
				s.keys[k] = keyRef{col: i, prio: p, idx: len(s.keys)}
			}
		}
	}
	for _, c := range s.Columns {
		ft, ok := compileFast(c.Type)
		if !ok {
			s.fast = nil
			break
		}
		s.fast = append(s.fast, ft)
	}
	fields = append(fields, arrow.Field{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64})
	s.schema = arrow.NewSchema(fields, nil)
	s.hints = make([]sizeHint, len(s.Columns))
	for i := range s.Columns {
		s.hints[i].init(fields[i].Type)
	}
	readDefaults(&s.Mem, &s.BatchRows, &s.BatchBytes, &s.MaxLineBytes, &s.MaxBytes)
}

// batchDefaults fills a source's unset batch sizes with pipeline.yaml's
// defaults (config.DefaultBatchRows rows, config.DefaultBatchBytes bytes).
func batchDefaults(batchRows, batchBytes *int) {
	if *batchRows <= 0 {
		*batchRows = config.DefaultBatchRows
	}
	if *batchBytes <= 0 {
		*batchBytes = config.DefaultBatchBytes
	}
}

// readDefaults fills the line readers' unset settings: the default
// allocator, the default batch sizes, 256 MiB lines, no size limit.
func readDefaults(mem *memory.Allocator, batchRows, batchBytes *int, maxLine, maxBytes *int64) {
	if *mem == nil {
		*mem = memory.DefaultAllocator
	}
	batchDefaults(batchRows, batchBytes)
	if *maxLine <= 0 {
		*maxLine = 256 << 20
	}
	if *maxBytes <= 0 {
		*maxBytes = 1 << 62
	}
}

func (s *JSONLines) errAt(line int64, err error) error {
	return &DecodeError{File: s.Name, Line: line, Err: err}
}

// openGzip starts reading the gzip stream r. It returns nil and no error
// for an empty stream (a zero-byte .gz holds no lines), and an error
// wrapping ErrCorrupt for one that is not gzip.
func openGzip(r io.Reader) (*gzip.Reader, error) {
	zr, err := gzip.NewReader(r)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		// klauspost's errors say gzip already ("gzip: invalid header");
		// say what it means for the file.
		return nil, fmt.Errorf("%w: not a gzip file, or a damaged one (%v)", ErrCorrupt, err)
	}
	return zr, nil
}

// Chunks reads the file and emits chunks of whole lines.
func (s *JSONLines) Chunks(ctx context.Context, emit func(pipeline.Chunk) error) error {
	if _, err := s.Schema(); err != nil {
		return err
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return &DecodeError{File: s.Name, Err: err}
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if s.Gzip {
		zr, err := openGzip(r)
		if err != nil {
			return s.errAt(0, err)
		}
		if zr == nil {
			return nil // a zero-byte .gz holds no lines
		}
		defer zr.Close()
		r = zr
	}
	lim := &limitReader{r: r, left: s.MaxBytes}
	return splitLines(ctx, lim, 1<<20, s.MaxLineBytes, s.BatchRows, s.BatchBytes, s.getBuf, func(c pipeline.Chunk) error {
		c.File = s.Name
		return emit(c)
	}, func(line int64, err error) error {
		return readError(s.Name, line, err, s.MaxBytes, s.MaxLineBytes)
	})
}

// readError names what stopped reading a file at a line: the size limit,
// a line over the length limit, a file that ends early, or another error.
func readError(name string, line int64, err error, maxBytes, maxLine int64) error {
	switch {
	case errors.Is(err, errLimit):
		err = fmt.Errorf("%w: more than %d bytes after decompression (raise max_bytes if the file is genuine)", ErrTooLarge, maxBytes)
	case errors.Is(err, ErrLineTooLong):
		err = fmt.Errorf("%w: longer than max_line_bytes (%d)", ErrLineTooLong, maxLine)
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("%w: file ends early, or has bytes after its end (truncated or damaged download?)", ErrCorrupt)
	case errors.Is(err, gzip.ErrHeader):
		// The first member read; what follows it is not another.
		err = fmt.Errorf("%w: bytes after the end of the gzip data that are not gzip (a damaged download, or something appended?) (%v)", ErrCorrupt, err)
	case errors.Is(err, gzip.ErrChecksum):
		err = fmt.Errorf("%w: the decompressed data does not match the gzip checksum (a damaged download?) (%v)", ErrCorrupt, err)
	case errors.As(err, new(flate.CorruptInputError)):
		err = fmt.Errorf("%w: the gzip data is damaged (a damaged download?) (%v)", ErrCorrupt, err)
	default:
		err = fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return &DecodeError{File: name, Line: line, Err: err}
}

var errLimit = errors.New("read limit reached")

type limitReader struct {
	r    io.Reader
	left int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// Allow reading to EOF exactly at the limit.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, errLimit
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// getBuf returns an empty chunk buffer, reusing one a decoder finished
// with: a chunk's bytes are copied into builders by Decode, so its buffer
// can carry the next chunk. A new buffer has room for BatchBytes and an
// eighth more, since a chunk ends with the line that crosses BatchBytes.
//
// The buffers are kept in a short free list rather than a sync.Pool: the
// collector empties a pool every other cycle, and on CrowdRAG-25 it cycles
// often enough that most chunks then started in a fresh 1 MiB buffer and
// doubled it (a copy and a zeroed allocation): 2% of the run's CPU.
func (s *JSONLines) getBuf() []byte {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	if n := len(s.bufs); n > 0 {
		b := s.bufs[n-1]
		s.bufs[n-1] = nil
		s.bufs = s.bufs[:n-1]
		return b[:0]
	}
	return make([]byte, 0, s.BatchBytes+s.BatchBytes/8)
}

// maxFreeBufs bounds the chunk buffers kept for reuse (at most 16 idle,
// about 18 MiB at the default batch_bytes). The chunks in flight per input are 2 × workers +
// channel_depth + 1, so with the default channel_depth this keeps every
// buffer a run needs on up to 6 workers; beyond that, some chunks start
// in a new buffer.
const maxFreeBufs = 16

// putBuf hands a decoded chunk's buffer back for reuse.
func (s *JSONLines) putBuf(b []byte) {
	if cap(b) == 0 || cap(b) > 4*s.BatchBytes {
		return // a chunk of very long lines: let the collector have it
	}
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	if len(s.bufs) < maxFreeBufs {
		s.bufs = append(s.bufs, b[:0])
	}
}

// jsonSpace is JSON's white space, bar the newline that ends a line.
const jsonSpace = " \t\r"

// splitLines cuts r into chunks of at most rows lines or about maxBytes
// bytes, never splitting a line. Each chunk's Data is a fresh slice.
func splitLines(ctx context.Context, r io.Reader, bufSize int, maxLine int64, rows, maxBytes int, getBuf func() []byte, emit func(pipeline.Chunk) error, fail func(line int64, err error) error) error {
	br := bufio.NewReaderSize(r, bufSize)
	var (
		line  int64 = 1 // number of the next line
		cur         = pipeline.Chunk{Line: 1}
		buf   []byte
		long  []byte
		start = true
	)
	flush := func() error {
		if cur.Rows == 0 {
			return nil
		}
		cur.Data = buf
		if err := emit(cur); err != nil {
			return err
		}
		cur = pipeline.Chunk{Line: line}
		buf = nil
		return nil
	}
	for {
		if start {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
		}
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, frag...)
			if int64(len(long)) > maxLine {
				return fail(line, ErrLineTooLong)
			}
			start = false
			continue
		}
		if len(long) > 0 {
			long = append(long, frag...)
			frag = long
		}
		if int64(len(frag)) > maxLine+1 {
			return fail(line, ErrLineTooLong)
		}
		if len(frag) > 0 {
			if buf == nil && getBuf != nil {
				buf = getBuf()
			}
			if buf == nil {
				buf = make([]byte, 0, max(min(maxBytes, 1<<20, bufSize), len(frag)))
			}
			buf = append(buf, frag...)
			if frag[len(frag)-1] != '\n' {
				buf = append(buf, '\n')
			}
			cur.Rows++
			line++
		}
		long = long[:0]
		start = true
		if err != nil {
			if errors.Is(err, io.EOF) {
				return flush()
			}
			return fail(line, err)
		}
		if cur.Rows >= rows || len(buf) >= maxBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// Decode parses a chunk into a batch. Bad lines either fail the run or are
// rejected; rows with values of the wrong type are rejected.
func (s *JSONLines) Decode(ctx context.Context, c pipeline.Chunk, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	if _, err := s.Schema(); err != nil {
		return nil, err
	}
	st, _ := s.states.Get().(*decodeState)
	if st == nil {
		st = &decodeState{}
	}
	b, err := s.decode(st, c, rej)
	if err == nil && b != nil && b.NumRows() > 0 {
		s.rows.Add(b.NumRows())
		for i := range s.valued {
			if !s.valued[i].Load() && b.Column(i).NullN() < int(b.NumRows()) {
				s.valued[i].Store(true)
			}
			if ts, ok := b.Column(i).(*array.Timestamp); ok && !s.late[i].Load() {
				for j, v := range ts.TimestampValues() {
					if ts.IsValid(j) {
						s.early[i].Store(true)
						if int64(v) < 0 || int64(v) >= secondsTill {
							s.late[i].Store(true)
							break
						}
					}
				}
			}
		}
	}
	st.fast.line = nil // the chunk's buffer goes back to the free list
	s.states.Put(st)
	s.putBuf(c.Data) // decode copied what it kept (builders, rejects)
	return b, err
}

// decodeState is what a decoder reuses from chunk to chunk.
type decodeState struct {
	parser fastjson.Parser
	fast   fastLine
}

// decode type-checks each row before appending it, so a bad row never
// leaves a partial row in the builders.
func (s *JSONLines) decode(st *decodeState, c pipeline.Chunk, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	p := &st.parser
	rb := array.NewRecordBuilder(s.Mem, s.schema)
	defer rb.Release()
	s.reserve(rb, c)
	ncol := len(s.Columns)
	lineB := rb.Field(ncol).(*array.Int64Builder)
	vals := make([]*fastjson.Value, ncol)
	prio := make([]int, ncol)
	seen := make([]bool, len(s.keys))
	data := c.Data
	line := c.Line
	if line == 1 {
		// A file's byte order mark (editors and spreadsheets on Windows
		// write one) is not JSON.
		data = bytes.TrimPrefix(data, utf8BOM)
	}
	var esc, words []byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var ln []byte
		if i < 0 {
			ln, data = data, nil
		} else {
			ln, data = data[:i], data[i+1:]
		}
		n := line
		line++
		ln = bytes.TrimRight(ln, "\r")
		if len(bytes.Trim(ln, jsonSpace)) == 0 {
			// A blank line holds no row. Blank as JSON has it: a line of
			// other white space (U+00A0, U+2028, a form feed) is no JSON
			// and is said, not passed over.
			continue
		}
		// A line of valid UTF-8 holds only valid strings, so checking it
		// once replaces a check of each string: with the ASCII fast path,
		// at a fraction of the cost. Escapes of printable characters are
		// written out as UTF-8 first, where fastjson would decode each with
		// strconv (the same strings, in fewer steps); a line that then
		// fails to parse is parsed as written, so the error quotes it.
		validUTF8 := utf8.Valid(ln)
		// Plain lines take the fast path (jsonfast.go); the rest, and every
		// line of an input with a column it does not decode, come here.
		if validUTF8 && s.fast != nil && s.decodeFast(&st.fast, rb, ln) {
			lineB.Append(n)
			continue
		}
		src := ln
		lone := false // a string holds half a surrogate pair
		badAt := -1   // where an escape JSON does not have starts
		checked := false
		if bytes.Contains(ln, escU) {
			esc, lone, badAt = inlineEscapesChecked(esc[:0], ln)
			src, checked = esc, true
		}
		v, err := p.ParseBytes(src)
		if err != nil && len(src) != len(ln) {
			v, err = p.ParseBytes(ln)
		}
		if err != nil && bytes.Contains(ln, infinityWord) {
			// Python's Infinity, which fastjson does not read: as Inf.
			var changed bool
			if words, changed = pythonInfinity(words[:0], src); changed {
				if wv, werr := p.ParseBytes(words); werr == nil {
					v, err = wv, nil
				}
			}
		}
		if err == nil && v.Type() != fastjson.TypeObject {
			err = fmt.Errorf("want a JSON object, got %s", v.Type())
		}
		switch {
		case err != nil:
		case badAt >= 0:
			err = escapeError(ln, badAt)
		case !checked && bytes.IndexByte(ln, '\\') >= 0:
			err = badEscape(ln)
		}
		if err != nil {
			msg := jsonErrorText(err)
			if !s.RejectBadLines {
				return nil, s.errAt(n, fmt.Errorf("%w: %s", ErrBadJSON, msg))
			}
			rej.Add(pipeline.Reject{Rule: "decode", Reason: "invalid JSON: " + msg, Line: n, Row: string(ln)})
			continue
		}
		if lone {
			rej.Add(pipeline.Reject{Rule: "type", Reason: errLoneSurrogate.Error(), Line: n, Row: string(ln)})
			continue
		}
		clear(vals)
		clear(seen)
		var unknown, dup, clash string
		dupCol := -1
		v.GetObject().Visit(func(k []byte, e *fastjson.Value) {
			ref, ok := s.keys[string(k)]
			if !ok {
				if unknown == "" {
					unknown = string(k)
				}
				return
			}
			switch {
			case seen[ref.idx]:
				// The same key again: which value the row means is not
				// for agora to guess (most readers keep the last).
				if dup == "" {
					dup, dupCol, clash = string(k), ref.col, ""
				}
			case vals[ref.col] != nil:
				// A column's name and its alias, or two aliases: the
				// same value said twice is read, a null beside a value
				// is the value, two values are not for agora to choose.
				old := vals[ref.col]
				switch {
				case isNull(e):
				case isNull(old):
					vals[ref.col], prio[ref.col] = e, ref.prio
				case !sameJSON(old, e):
					if dup == "" {
						dupCol = ref.col
						dup = s.keyOf(ref.col, prio[ref.col])
						clash = string(k)
					}
				case ref.prio < prio[ref.col]:
					vals[ref.col], prio[ref.col] = e, ref.prio
				}
			default:
				vals[ref.col], prio[ref.col] = e, ref.prio
			}
			seen[ref.idx] = true
		})
		if dup != "" {
			reason := fmt.Sprintf("key %q appears more than once in the object", dup)
			if clash != "" {
				reason = fmt.Sprintf("keys %q and %q both give column %s, with different values", dup, clash, s.Columns[dupCol].Name)
			}
			rej.Add(pipeline.Reject{Rule: "duplicate_key", Column: s.Columns[dupCol].Name, Reason: reason, Line: n, Row: string(ln)})
			continue
		}
		if unknown != "" && s.RejectUnknownKeys {
			rej.Add(pipeline.Reject{Rule: "unknown_key", Column: unknown, Reason: fmt.Sprintf("key %q is not declared in the input's columns", unknown), Line: n, Row: string(ln)})
			continue
		}
		if col, err := s.checkRow(vals, validUTF8); err != nil {
			rule := "type"
			if dk := (*dupKeyError)(nil); errors.As(err, &dk) {
				rule = "duplicate_key"
			}
			rej.Add(pipeline.Reject{Rule: rule, Column: s.Columns[col].Name, Reason: fmt.Sprintf("%s: %v", s.Columns[col].Name, err), Line: n, Row: string(ln)})
			continue
		}
		for i, fn := range s.fns {
			fn.append(rb.Field(i), vals[i])
		}
		lineB.Append(n)
	}
	b := rb.NewRecordBatch()
	for i := range s.Columns {
		s.hints[i].observe(b.Column(i), len(c.Data))
	}
	return b, nil
}

// sizeHint remembers, from the last batch, how many list values and
// string bytes a column held per byte of input, so the next batch's
// builders are sized once instead of doubling as they grow (a doubling
// copies the whole buffer into a new, zeroed one). Both follow the chunk's
// input bytes, not its rows: rows vary in length, and a per-row estimate
// learnt from a chunk of one long row would reserve for every row of a
// chunk of short ones. Each JSON value takes at least a byte of input, so
// an estimate never exceeds the chunk. Both get hintSlack of headroom.
// Concurrent decoders race on the hints harmlessly: they only size
// buffers.
type sizeHint struct {
	perMValues atomic.Int64 // list values per MiB of input
	perMByte   atomic.Int64 // string bytes per MiB of input
	// fields holds the hints of a struct's (or a list of structs')
	// fields, by field index.
	fields []sizeHint
}

// hintSlack is the headroom added to an estimate, as a shift: 1/8.
const hintSlack = 3

// init makes room for the hints of dt's struct fields, if it has any.
func (h *sizeHint) init(dt arrow.DataType) {
	if l, ok := dt.(*arrow.ListType); ok {
		dt = l.Elem()
	}
	if st, ok := dt.(*arrow.StructType); ok {
		h.fields = make([]sizeHint, st.NumFields())
		for i, f := range st.Fields() {
			h.fields[i].init(f.Type)
		}
	}
}

// observe records the sizes of a decoded column from a chunk of in bytes.
func (h *sizeHint) observe(a arrow.Array, in int) {
	if in <= 0 {
		return
	}
	if l, ok := a.(*array.List); ok {
		a = l.ListValues()
		h.perMValues.Store(int64(a.Len()) << 20 / int64(in))
	}
	switch c := a.(type) {
	case *array.String:
		h.perMByte.Store(int64(len(c.ValueBytes())) << 20 / int64(in))
	case *array.Struct:
		for i := range h.fields {
			h.fields[i].observe(c.Field(i), in)
		}
	}
}

// reserve sizes b for what in bytes of input decode to.
func (h *sizeHint) reserve(b array.Builder, in int) {
	if lb, ok := b.(*array.ListBuilder); ok {
		v := h.perMValues.Load() * int64(in) >> 20
		if v == 0 {
			return
		}
		b = lb.ValueBuilder()
		b.Reserve(int(v + v>>hintSlack)) // a struct reserves its fields' values too
	}
	switch c := b.(type) {
	case *array.StringBuilder:
		if n := h.perMByte.Load() * int64(in) >> 20; n > 0 {
			c.ReserveData(int(n + n>>hintSlack))
		}
	case *array.StructBuilder:
		for i := range h.fields {
			h.fields[i].reserve(c.FieldBuilder(i), in)
		}
	}
}

// reserve sizes a new batch's builders for chunk c from the hints.
func (s *JSONLines) reserve(rb *array.RecordBuilder, c pipeline.Chunk) {
	rb.Reserve(c.Rows)
	for i := range s.Columns {
		s.hints[i].reserve(rb.Field(i), len(c.Data))
	}
}

// checkRow type-checks a row; on failure it returns the column index.
func (s *JSONLines) checkRow(vals []*fastjson.Value, validUTF8 bool) (int, error) {
	for i, fn := range s.fns {
		if err := fn.check(vals[i], validUTF8); err != nil {
			return i, err
		}
	}
	return 0, nil
}
