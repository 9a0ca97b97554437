package stages

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// ErrHeader is returned when a TSV file's header lacks a declared column.
var ErrHeader = errors.New("bad header")

// TSVColumn is one declared column of a TSV input, found by its header
// name. Types are string, int64, float64 or bool; an empty field is null
// for every type but string (where it is "", since TSV cannot tell them
// apart).
type TSVColumn struct {
	Name string
	Type arrow.DataType
}

// TSVFolder is a Source reading every file of a folder (or one file) as
// tab-separated values with a header line. Files are read in name order.
// Fields are split on tabs only: double quotes are text. A line with the
// wrong number of fields is rejected with its file and line; CRLF is
// accepted. Files matching Skip, and empty files, are passed over with a
// note.
type TSVFolder struct {
	// Path is the folder (or file); Name is how it is shown.
	Path, Name string
	// Columns are read by header name, in output order.
	Columns []TSVColumn
	// FileColumn, if set, adds a string column holding each row's file
	// name (the group id of DeliData).
	FileColumn string
	// Skip lists file-name globs that are not data (e.g. "*.py").
	Skip []string
	// Gzip says every file is gzip-compressed; GzipBySuffix says each
	// file whose name ends in .gz is (compression: auto).
	Gzip, GzipBySuffix bool
	// BatchRows is the most lines per chunk.
	BatchRows int
	// BatchBytes ends a chunk early once it holds this many bytes of
	// input (default 1 MiB).
	BatchBytes int
	// MaxLineBytes and MaxBytes bound a line and a file.
	MaxLineBytes, MaxBytes int64
	// Mem allocates the batches.
	Mem memory.Allocator

	schema *arrow.Schema
	once   sync.Once
	mu     sync.Mutex
	packs  [][]tsvPart // a chunk's parts, until it is decoded
	notes  []string
	// undeclared are the header columns no declared column reads, in the
	// order first met, and undeclaredIn the file the first was in.
	undeclared   []string
	undeclaredIn string
	sums         []FileSum // what the last Chunks listed of a folder (FileSums)
}

// FileSum is one file of an input folder as its source listed it: its
// size and SHA-256, taken while the file was read for conversion.
type FileSum struct {
	// Name is the file's name in its folder.
	Name   string
	Bytes  int64
	SHA256 [sha256.Size]byte
	// Summed is false for a file the source passed over unread (one
	// matching Skip): its size and sum are for the caller to take.
	Summed bool
}

// FileSummer is a Source that hashes the files of a folder input as it
// converts them, so that a run need not read them a second time for its
// manifest. FileSums may be called once Chunks has returned nil: it
// returns, in name order, the files of the folder as Chunks listed it,
// but for folders and hidden files: the ones it converted, summed as
// they were read; empty ones, summed without reading; and the ones it
// passed over unread (Summed false). A run's manifest thus describes the
// files the conversion saw, not a later listing of the folder. It
// returns nil when the input is one file.
type FileSummer interface {
	FileSums() []FileSum
}

// FileSums returns what the last Chunks listed and summed of the folder.
func (s *TSVFolder) FileSums() []FileSum {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sums
}

// tsvPart is the lines of one file inside a chunk; small files are packed
// together so a batch is not one file of a few dozen rows.
type tsvPart struct {
	header *tsvHeader // the file's
	line   int64      // first line
	start  int        // offset of the part in the chunk's data
}

// tsvHeader is what decoding needs of a file: its names and its header's
// columns. Only the chunks not yet decoded hold it (a DeliData folder at
// 50× is 25,000 files).
type tsvHeader struct {
	file string     // shown name
	base string     // file name, for FileColumn
	cols *tsvLayout // shared by the files of one header line
}

// tsvLayout is a header line's columns: where each declared column is.
type tsvLayout struct {
	line   string // the header line
	idx    []int  // header position of each declared column
	fields int    // fields per line
}

// Schema returns the schema of the decoded batches.
func (s *TSVFolder) Schema() (*arrow.Schema, error) {
	s.once.Do(func() {
		var fields []arrow.Field
		for _, c := range s.Columns {
			fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type, Nullable: true})
		}
		if s.FileColumn != "" {
			fields = append(fields, arrow.Field{Name: s.FileColumn, Type: arrow.BinaryTypes.String})
		}
		fields = append(fields,
			arrow.Field{Name: pipeline.FileColumn, Type: arrow.BinaryTypes.String},
			arrow.Field{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64})
		s.schema = arrow.NewSchema(fields, nil)
		readDefaults(&s.Mem, &s.BatchRows, &s.BatchBytes, &s.MaxLineBytes, &s.MaxBytes)
	})
	for _, c := range s.Columns {
		if why := config.FormatReads("tsv", c.Type); why != "" {
			return nil, fmt.Errorf("column %s: %s", c.Name, why)
		}
	}
	return s.schema, nil
}

// Notes reports the files passed over.
func (s *TSVFolder) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	notes := append([]string(nil), s.notes...)
	if len(s.undeclared) > 0 {
		notes = append(notes, fmt.Sprintf("%s: header columns no declared column reads, passed over: %s (first in %s)", s.Name, strings.Join(s.undeclared, ", "), s.undeclaredIn))
	}
	return notes
}

// emptySum is the SHA-256 of no bytes.
var emptySum = sha256.Sum256(nil)

// list returns the data files the source will read, in order, and the
// ones it passes over with why. For a folder (folder true) the data files
// are names in it, not paths (a folder of 25,000 files held 2 MB of paths
// while it was read), and others are the files passed over that a
// fingerprint of the folder lists (FileSummer): empty ones summed, the
// ones matching Skip not. A single file is its path.
func (s *TSVFolder) list() (files []string, skipped []string, others []FileSum, folder bool, err error) {
	st, err := os.Stat(s.Path)
	if err != nil {
		return nil, nil, nil, false, &DecodeError{File: s.Name, Err: err}
	}
	if !st.IsDir() {
		return []string{s.Path}, nil, nil, false, nil
	}
	names, err := ReadDirNames(s.Path)
	if err != nil {
		return nil, nil, nil, false, &DecodeError{File: s.Name, Err: err}
	}
	for _, n := range names {
		p := filepath.Join(s.Path, n)
		fi, err := os.Stat(p)
		if err != nil {
			return nil, nil, nil, false, &DecodeError{File: path.Join(s.Name, n), Err: err}
		}
		var b []byte // a file of a few bytes, read once to see whether it is blank
		switch {
		case fi.IsDir():
			skipped = append(skipped, n+" (a folder)")
		case !fi.Mode().IsRegular():
			skipped = append(skipped, n+" (not a regular file)") // a FIFO would block the read
		case strings.HasPrefix(n, "."):
			skipped = append(skipped, n+" (hidden)")
		case matchAny(s.Skip, n):
			skipped = append(skipped, n+" (matches skip)")
			others = append(others, FileSum{Name: n})
		case fi.Size() == 0:
			skipped = append(skipped, n+" (empty)")
			others = append(others, FileSum{Name: n, SHA256: emptySum, Summed: true})
		case fi.Size() <= int64(len(utf8BOM))+2 && blankFile(p, &b):
			// Only a byte order mark or a line end: as empty.
			skipped = append(skipped, n+" (empty but for a byte order mark or line end)")
			others = append(others, FileSum{Name: n, SHA256: sha256.Sum256(b), Bytes: int64(len(b)), Summed: true})
		case !utf8.ValidString(n):
			// Only a file that is read: its name goes into the tables.
			return nil, nil, nil, false, &DecodeError{File: path.Join(s.Name, pipeline.ValidText(n)), Err: errors.New("the file name is not valid UTF-8, and file names go into the tables as text: rename the file")}
		default:
			files = append(files, n)
		}
	}
	return files, skipped, others, true, nil
}

// blankFile reads the file p into *b and reports whether it holds
// nothing but a byte order mark and white space (a read error says no:
// reading it will say why).
func blankFile(p string, b *[]byte) bool {
	var err error
	*b, err = os.ReadFile(p)
	return err == nil && len(bytes.TrimSpace(bytes.TrimPrefix(*b, utf8BOM))) == 0
}

// ReadDirNames returns the names in the folder p, sorted: the order a
// folder input's files are read and fingerprinted in. Names only: each
// file is stat-ed or opened after anyway, and os.ReadDir's entries cost
// about 100 bytes more a file (DeliData at 50x has 25,000).
func ReadDirNames(p string) ([]string, error) {
	dir, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Chunks reads each file's header, then emits its lines in chunks.
func (s *TSVFolder) Chunks(ctx context.Context, emit func(pipeline.Chunk) error) error {
	if _, err := s.Schema(); err != nil {
		return err
	}
	files, skipped, others, folder, err := s.list()
	if err != nil {
		return err
	}
	s.mu.Lock()
	for _, sk := range skipped {
		s.notes = append(s.notes, fmt.Sprintf("passed over %s/%s", s.Name, sk))
	}
	s.mu.Unlock()
	if len(files) == 0 {
		return &DecodeError{File: s.Name, Err: errors.New("no data files")}
	}
	var pack pipeline.Chunk
	var parts []tsvPart
	flush := func() error {
		if pack.Rows == 0 {
			return nil
		}
		s.mu.Lock()
		s.packs = append(s.packs, parts)
		pack.Index = len(s.packs) - 1
		s.mu.Unlock()
		pack.File = s.Name
		err := emit(pack)
		pack, parts = pipeline.Chunk{}, nil
		return err
	}
	var layout *tsvLayout // the last file's, kept for the next (most share it)
	// The folder's listing for FileSums: the files passed over now, the
	// ones read as each is read to its end, sorted by name at the end.
	var sum hash.Hash
	var sums []FileSum
	if folder {
		sum = sha256.New()
		sums = slices.Grow(others, len(files))
	}
	s.mu.Lock()
	s.sums = sums
	s.mu.Unlock()
	for _, n := range files {
		p, base := n, filepath.Base(n)
		if folder { // n is a name in it
			p, base = filepath.Join(s.Path, n), n
		}
		err := s.readFile(ctx, p, base, &layout, sum, func(c pipeline.Chunk, h *tsvHeader) error {
			// A file's chunk that would take the pack past BatchBytes
			// starts a new one.
			if len(pack.Data) > 0 && len(pack.Data)+len(c.Data) > s.BatchBytes {
				if err := flush(); err != nil {
					return err
				}
			}
			parts = append(parts, tsvPart{header: h, line: c.Line, start: len(pack.Data)})
			pack.Data = append(pack.Data, c.Data...)
			pack.Rows += c.Rows
			if pack.Rows >= s.BatchRows || len(pack.Data) >= s.BatchBytes {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	s.mu.Lock()
	slices.SortFunc(s.sums, func(a, b FileSum) int { return strings.Compare(a.Name, b.Name) })
	s.mu.Unlock()
	return nil
}

// readFile emits the lines of file p, named base, in chunks, each with
// the file's header. *layout is the previous file's header layout,
// reused when this file's header line is the same, and set to this
// file's. With sum non-nil, the file's bytes are hashed as they are
// read, and once the whole file is read its FileSum joins s.sums.
func (s *TSVFolder) readFile(ctx context.Context, p, base string, layout **tsvLayout, sum hash.Hash, emit func(pipeline.Chunk, *tsvHeader) error) (err error) {
	name := s.Name
	if p != s.Path {
		name = path.Join(s.Name, base)
	}
	f, err := os.Open(p)
	if err != nil {
		return &DecodeError{File: name, Err: err}
	}
	defer f.Close()
	bufSize := 1 << 20
	if st, err := f.Stat(); err == nil {
		bufSize = int(min(max(st.Size()+1, 4096), 1<<20)) // most group files are a few KB
	}
	var r io.Reader = f
	if sum != nil {
		sum.Reset()
		hr := &hashingReader{r: f, h: sum}
		r = hr
		defer func() {
			if err == nil { // splitLines returns nil only at the file's end
				fs := FileSum{Name: base, Bytes: hr.n, Summed: true}
				sum.Sum(fs.SHA256[:0])
				s.mu.Lock()
				s.sums = append(s.sums, fs)
				s.mu.Unlock()
			}
		}()
	}
	if s.Gzip || s.GzipBySuffix && strings.HasSuffix(base, ".gz") {
		zr, err := openGzip(bufio.NewReaderSize(r, bufSize))
		if err != nil {
			return &DecodeError{File: name, Err: err}
		}
		if zr == nil {
			return nil // a zero-byte .gz holds no lines
		}
		defer zr.Close()
		r, bufSize = zr, 1<<20
	}
	lim := &limitReader{r: r, left: s.MaxBytes}
	var hdr *tsvHeader
	return splitLines(ctx, lim, bufSize, s.MaxLineBytes, s.BatchRows, s.BatchBytes, nil, func(c pipeline.Chunk) error {
		c.File = name
		if hdr == nil {
			// The first chunk starts with the header line.
			i := bytes.IndexByte(c.Data, '\n')
			// A byte order mark (editors and spreadsheets on Windows write
			// one) is not part of the first column's name.
			line := bytes.TrimPrefix(bytes.TrimRight(c.Data[:i], "\r"), utf8BOM)
			if *layout == nil || (*layout).line != string(line) {
				l, err := s.layout(name, line)
				if err != nil {
					return err
				}
				*layout = l
			}
			hdr = &tsvHeader{file: name, base: base, cols: *layout}
			c.Data = c.Data[i+1:]
			c.Line++
			c.Rows--
			if c.Rows == 0 {
				return nil
			}
		}
		return emit(c, hdr)
	}, func(line int64, err error) error {
		return readError(name, line, err, s.MaxBytes, s.MaxLineBytes)
	})
}

// layout finds the declared columns in the header line of file name.
func (s *TSVFolder) layout(name string, line []byte) (*tsvLayout, error) {
	if !utf8.Valid(line) {
		return nil, &DecodeError{File: name, Line: 1, Err: fmt.Errorf("%w: not UTF-8 (is this a data file?)", ErrHeader)}
	}
	cols := strings.Split(string(line), "\t")
	pos := map[string]int{}
	twice := map[string]bool{}
	for i, c := range cols {
		if _, ok := pos[c]; ok {
			twice[c] = true
		}
		pos[c] = i
	}
	h := &tsvLayout{line: string(line), fields: len(cols)}
	var missing []string
	for _, c := range s.Columns {
		i, ok := pos[c.Name]
		if !ok {
			missing = append(missing, c.Name)
		}
		if twice[c.Name] {
			// Which of the two is the column? Readers disagree.
			return nil, &DecodeError{File: name, Line: 1, Err: fmt.Errorf("%w: column %s comes twice", ErrHeader, c.Name)}
		}
		h.idx = append(h.idx, i)
	}
	if len(missing) > 0 {
		hint := ""
		if bytes.IndexByte(line, '\r') >= 0 {
			hint = "; its line holds carriage returns: a file whose lines end in CR alone reads as one line"
		}
		return nil, &DecodeError{File: name, Line: 1, Err: fmt.Errorf("%w: no column %s (header has %d fields: %s)%s", ErrHeader, strings.Join(missing, ", "), len(cols), headerExcerpt(cols), hint)}
	}
	// Header columns no declared column reads are passed over, as a
	// JSON line's undeclared keys are; said once, with the first file.
	s.mu.Lock()
	for _, c := range cols {
		if !slices.ContainsFunc(s.Columns, func(d TSVColumn) bool { return d.Name == c }) && !slices.Contains(s.undeclared, c) {
			if len(s.undeclared) == 0 {
				s.undeclaredIn = name
			}
			s.undeclared = append(s.undeclared, c)
		}
	}
	s.mu.Unlock()
	return h, nil
}

// Decode parses a chunk (the lines of one or more files).
func (s *TSVFolder) Decode(_ context.Context, c pipeline.Chunk, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	if _, err := s.Schema(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	parts := s.packs[c.Index]
	s.packs[c.Index] = nil
	s.mu.Unlock()
	rb := array.NewRecordBuilder(s.Mem, s.schema)
	defer rb.Release()
	rb.Reserve(c.Rows)
	ncol := len(s.Columns)
	next := ncol
	var fileB *array.StringBuilder
	if s.FileColumn != "" {
		fileB = rb.Field(next).(*array.StringBuilder)
		next++
	}
	srcB := rb.Field(next).(*array.StringBuilder)
	lineB := rb.Field(next + 1).(*array.Int64Builder)
	var fields [][]byte
	for k, part := range parts {
		h := part.header
		end := len(c.Data)
		if k+1 < len(parts) {
			end = parts[k+1].start
		}
		data := c.Data[part.start:end]
		line := part.line
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
			if len(ln) == 0 {
				continue
			}
			fields = fields[:0]
			for {
				j := bytes.IndexByte(ln, '\t')
				if j < 0 {
					fields = append(fields, ln)
					break
				}
				fields = append(fields, ln[:j])
				ln = ln[j+1:]
			}
			raw := func() string { return string(bytes.Join(fields, []byte{'\t'})) }
			if len(fields) != h.cols.fields {
				rej.Add(pipeline.Reject{Rule: "fields", Reason: fmt.Sprintf("%d fields, the header has %d", len(fields), h.cols.fields), File: h.file, Line: n, Row: raw()})
				continue
			}
			if col, err := s.checkFields(h.cols.idx, fields); err != nil {
				rej.Add(pipeline.Reject{Rule: "type", Column: s.Columns[col].Name, Reason: fmt.Sprintf("%s: %v", s.Columns[col].Name, err), File: h.file, Line: n, Row: raw()})
				continue
			}
			for k, col := range s.Columns {
				appendField(rb.Field(k), col.Type, fields[h.cols.idx[k]])
			}
			if fileB != nil {
				fileB.Append(h.base)
			}
			srcB.Append(h.file)
			lineB.Append(n)
		}
	}
	return rb.NewRecordBatch(), nil
}

// checkFields checks the declared columns' fields of a line (idx: where
// each is), returning the first bad one's column.
func (s *TSVFolder) checkFields(idx []int, fields [][]byte) (int, error) {
	for k, col := range s.Columns {
		f := fields[idx[k]]
		if !utf8.Valid(f) {
			return k, errInvalidUTF8
		}
		if len(f) == 0 {
			continue
		}
		var err error
		switch col.Type.ID() {
		case arrow.INT64:
			_, err = strconv.ParseInt(string(f), 10, 64)
		case arrow.FLOAT64:
			_, err = strconv.ParseFloat(string(f), 64)
			if err == nil && goOnlyNumber(string(f)) {
				// Go's syntax (1_000, 0x1p4), not a number as Python
				// or a spreadsheet writes it.
				err = strconv.ErrSyntax
			}
		case arrow.BOOL:
			_, err = strconv.ParseBool(string(f))
		case arrow.TIMESTAMP:
			if _, terr := rfc3339Micros(f); terr != nil {
				return k, fmt.Errorf("%q is not an RFC 3339 timestamp with its zone in the years 1 to 9999 (2024-01-02T03:04:05Z)", f)
			}
		}
		if err != nil {
			return k, fmt.Errorf("%q is not %s", f, config.FormatType(col.Type))
		}
	}
	return 0, nil
}

func appendField(b array.Builder, t arrow.DataType, f []byte) {
	switch t.ID() {
	case arrow.STRING:
		b.(*array.StringBuilder).BinaryBuilder.Append(f)
		return
	}
	if len(f) == 0 {
		b.AppendNull()
		return
	}
	switch t.ID() {
	case arrow.INT64:
		v, _ := strconv.ParseInt(string(f), 10, 64)
		b.(*array.Int64Builder).Append(v)
	case arrow.FLOAT64:
		v, _ := strconv.ParseFloat(string(f), 64)
		b.(*array.Float64Builder).Append(v)
	case arrow.BOOL:
		v, _ := strconv.ParseBool(string(f))
		b.(*array.BooleanBuilder).Append(v)
	case arrow.TIMESTAMP:
		v, _ := rfc3339Micros(f)
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
	}
}

var _ io.Reader = (*limitReader)(nil)

// hashingReader hashes and counts the bytes read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// headerExcerptFields is the most header fields an error lists.
const headerExcerptFields = 20

// headerExcerpt lists a header's fields for an error: at most
// headerExcerptFields of them, each clipped, so that a data file read as
// a header (a line of megabytes) does not fill the terminal.
func headerExcerpt(cols []string) string {
	n := min(len(cols), headerExcerptFields)
	parts := make([]string, 0, n+1)
	for _, c := range cols[:n] {
		parts = append(parts, strconv.Quote(clip(c)))
	}
	if len(cols) > n {
		parts = append(parts, fmt.Sprintf("… %d more", len(cols)-n))
	}
	return strings.Join(parts, ", ")
}
