package stages

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/pipeline"
)

// ErrMissingColumns is returned when a Parquet input lacks declared columns.
var ErrMissingColumns = errors.New("missing columns")

// ParquetColumn is one declared column of a Parquet input. Its name is
// the file's top-level column name taken whole: a dot is part of the name
// ("candidates.metadata.id"), not a path into a struct.
type ParquetColumn struct {
	Name string
	Type arrow.DataType
	// Optional lets the file lack the column: it is read as nulls and
	// the source notes it.
	Optional bool
	// AsFile takes the column's type from the file (Type is then
	// ignored), made one every reader takes as a carried column's is:
	// for a column whose shape the release does not publish. A file
	// that lacks an optional one gives a string column of nulls.
	AsFile bool
}

// ParquetFile is a Source streaming a Parquet file as Arrow batches of at
// most BatchRows rows, row group after row group, without loading the
// file whole. It accepts what pandas/pyarrow writes: 3-level lists whose
// element is named element or item, a pandas metadata key, timestamps in
// ns/us/ms or ISO 8601 strings (converted to microseconds UTC; digits
// below the microsecond are cut, and Notes counts the values that had
// them), integers where floats are declared and
// integral floats (nullable ints written by pandas) where integers are,
// and lists nested one level more or less than declared where no value is
// lost (reshape.go).
// The reading and decompression happen in Chunks; Decode converts each
// batch to the declared types and runs in parallel.
type ParquetFile struct {
	// Path is the file; Name is how it is shown.
	Path, Name string
	// Columns are read by exact top-level name, in output order.
	Columns []ParquetColumn
	// CarryExtra also passes on the file's undeclared columns, after the
	// declared ones, with their own types made ones every reader takes
	// (carriedType); a column of a type that cannot be is left out, with
	// a note.
	CarryExtra bool
	// BatchRows is the most rows per batch.
	BatchRows int
	// BatchBytes is the Arrow size aimed at per batch (default 1 MiB):
	// rows with long lists of texts get fewer rows per batch, so that the
	// batches in flight stay small.
	BatchBytes int
	// Mem allocates the batches.
	Mem memory.Allocator

	mu     sync.Mutex
	schema *arrow.Schema
	extra  []arrow.Field
	absent []string // optional columns the file lacks, in declared order
	shaped []string // notes of columns read into another shape (reshape)
	// cut counts, by declared column, the timestamps whose digits below
	// the microsecond were cut.
	cut map[string]int64
	// untyped are the file's columns CarryExtra leaves out for their
	// type (see carriedType), with it.
	untyped []string
	// uncarried are the file's columns CarryExtra leaves out: their
	// names start with _, as agora's own columns' do.
	uncarried []string
	// ignored are the file's undeclared columns, without CarryExtra.
	ignored []string
}

// Notes reports the optional columns the file lacks, the columns read
// into another shape than the file's (a list as its one value, a value as
// a list of one) and the file's columns CarryExtra leaves out.
func (s *ParquetFile) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var notes []string
	if len(s.absent) > 0 {
		notes = append(notes, fmt.Sprintf("%s has no %s (declared optional: read as nulls)", s.Name, strings.Join(s.absent, ", ")))
	}
	if len(s.uncarried) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s not carried (a name that starts with _ is agora's own)", s.Name, strings.Join(s.uncarried, ", ")))
	}
	if len(s.untyped) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s not carried (not a type every Parquet reader takes; declare the column to read it)", s.Name, strings.Join(s.untyped, ", ")))
	}
	if len(s.ignored) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d columns not declared, not read: %s (extra_columns: carry keeps them)", s.Name, len(s.ignored), listSome(s.ignored, 12)))
	}
	notes = append(notes, s.shaped...)
	names := make([]string, 0, len(s.Columns)+len(s.extra))
	for _, f := range s.Columns {
		names = append(names, f.Name)
	}
	for _, f := range s.extra {
		names = append(names, f.Name)
	}
	for _, name := range names {
		if n := s.cut[name]; n > 0 {
			notes = append(notes, fmt.Sprintf("%s: column %s: %d timestamps had digits below the microsecond, cut to the microsecond before (agora writes microseconds, which every Parquet reader takes)", s.Name, name, n))
		}
	}
	return notes
}

// listSome joins the first n of names, and says how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// Schema returns the schema of the decoded batches. With CarryExtra it
// opens the file to learn the extra columns.
func (s *ParquetFile) Schema() (*arrow.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.schema != nil {
		return s.schema, nil
	}
	if s.Mem == nil {
		s.Mem = memory.DefaultAllocator
	}
	batchDefaults(&s.BatchRows, &s.BatchBytes)
	var fields []arrow.Field
	var fs *arrow.Schema // the file's, when a column's type or the extra columns come from it
	if s.CarryExtra || slices.ContainsFunc(s.Columns, func(c ParquetColumn) bool { return c.AsFile }) {
		fr, sc, err := s.open()
		if err != nil {
			return nil, err
		}
		fr.ParquetReader().Close()
		fs = sc
	}
	for _, c := range s.Columns {
		t := c.Type
		if c.AsFile {
			t = arrow.BinaryTypes.String // absent: nulls, and noted as such
			if idx := fs.FieldIndices(c.Name); len(idx) == 1 {
				ct, ok := carriedType(fs.Field(idx[0]).Type)
				if !ok {
					return nil, &DecodeError{File: s.Name, Err: fmt.Errorf("column %s: the file has %s, not a type every Parquet reader takes; declare its type", c.Name, fs.Field(idx[0]).Type)}
				}
				t = ct
			}
		}
		fields = append(fields, arrow.Field{Name: c.Name, Type: t, Nullable: true})
	}
	if s.CarryExtra {
		declared := map[string]bool{}
		for _, c := range s.Columns {
			declared[c.Name] = true
		}
		for _, f := range fs.Fields() {
			if strings.HasPrefix(f.Name, "_") {
				// agora's own names (_line): the writers leave such
				// columns out anyway.
				s.uncarried = append(s.uncarried, f.Name)
				continue
			}
			if !declared[f.Name] {
				t, ok := carriedType(f.Type)
				if !ok {
					s.untyped = append(s.untyped, fmt.Sprintf("%s (%s)", f.Name, f.Type))
					continue
				}
				f = arrow.Field{Name: f.Name, Type: t, Nullable: true}
				s.extra = append(s.extra, f)
				fields = append(fields, f)
			}
		}
	}
	fields = append(fields, arrow.Field{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64})
	s.schema = arrow.NewSchema(fields, nil)
	return s.schema, nil
}

// readProps are the Parquet reader's properties: each column chunk is
// streamed page by page, since a pandas-written file often holds one row
// group for the whole table, and reading its chunks whole would cost
// memory in proportion to the file.
func (s *ParquetFile) readProps() *parquet.ReaderProperties {
	props := parquet.NewReaderProperties(s.Mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	return props
}

// arrowProps are pqarrow's read properties for batches of batch rows:
// binary data is reserved ahead from the row group's sizes.
func (s *ParquetFile) arrowProps(batch int64) pqarrow.ArrowReadProperties {
	return pqarrow.ArrowReadProperties{BatchSize: batch, PreAllocBinaryData: true}
}

// open opens the file and returns its reader and Arrow schema; the caller
// closes the reader's file.
func (s *ParquetFile) open() (*pqarrow.FileReader, *arrow.Schema, error) {
	if _, err := os.Stat(s.Path); err != nil {
		return nil, nil, &DecodeError{File: s.Name, Err: err}
	}
	if why := NotParquet(s.Path); why != "" {
		return nil, nil, &DecodeError{File: s.Name, Err: fmt.Errorf("%w: not a Parquet file: %s", ErrCorrupt, why)}
	}
	rdr, err := file.OpenParquetFile(s.Path, false, file.WithReadProps(s.readProps()))
	if err != nil {
		return nil, nil, &DecodeError{File: s.Name, Err: fmt.Errorf("%w: not a readable Parquet file: %v", ErrCorrupt, err)}
	}
	fr, err := pqarrow.NewFileReader(rdr, s.arrowProps(batchRowsFor(rdr, s.BatchRows, s.BatchBytes)), s.Mem)
	if err != nil {
		rdr.Close()
		if rdr.MetaData().KeyValueMetadata().FindValue("ARROW:schema") != nil {
			// pqarrow decodes the Arrow schema its writer left in the
			// footer; damaged, it fails with a base64 or flatbuffers
			// error. It is to blame when the Parquet schema alone reads.
			if _, serr := pqarrow.NewSchemaManifest(rdr.MetaData().Schema, nil, &pqarrow.ArrowReadProperties{}); serr == nil {
				return nil, nil, &DecodeError{File: s.Name, Err: fmt.Errorf("%w: the Arrow schema in the file's footer (ARROW:schema) is damaged: %v", ErrCorrupt, err)}
			}
		}
		return nil, nil, &DecodeError{File: s.Name, Err: fmt.Errorf("%w: %v", ErrCorrupt, err)}
	}
	sc, err := fr.Schema()
	if err != nil {
		rdr.Close()
		return nil, nil, &DecodeError{File: s.Name, Err: fmt.Errorf("%w: schema: %v", ErrCorrupt, err)}
	}
	return fr, sc, nil
}

// Chunks reads the file row group by row group and emits batches of at
// most BatchRows rows.
func (s *ParquetFile) Chunks(ctx context.Context, emit func(pipeline.Chunk) error) (err error) {
	defer s.recoverCorrupt(&err)
	schema, err := s.Schema()
	if err != nil {
		return err
	}
	fr, fs, err := s.open()
	if err != nil {
		return err
	}
	full := fr.ParquetReader()
	defer func() {
		if full != nil {
			full.Close()
		}
	}()
	// Map each wanted column to its leaf columns in the file.
	var missing, absent, shaped []string
	var leaves []int
	optional := map[string]bool{}
	for _, c := range s.Columns {
		optional[c.Name] = c.Optional
	}
	for _, f := range schema.Fields() {
		if f.Name == pipeline.LineColumn {
			continue
		}
		idx := fs.FieldIndices(f.Name)
		if len(idx) == 0 {
			if optional[f.Name] {
				absent = append(absent, f.Name)
			} else {
				missing = append(missing, f.Name)
			}
			continue
		}
		if len(idx) > 1 {
			// Which of them is the column? Readers disagree.
			return &DecodeError{File: s.Name, Err: fmt.Errorf("the file has %d columns named %s: which one to read is not clear", len(idx), f.Name)}
		}
		leaves = append(leaves, leafColumns(fr.Manifest.Fields[idx[0]])...)
		if have := fs.Field(idx[0]).Type; shapeDiffers(have, f.Type) {
			shaped = append(shaped, fmt.Sprintf("%s: column %s is %s in the file, declared %s: %s", s.Name, f.Name, have, f.Type, shapeNote(have, f.Type)))
		} else if why := kindNote(have, f.Type); why != "" {
			shaped = append(shaped, fmt.Sprintf("%s: column %s is %s in the file, declared %s: %s", s.Name, f.Name, have, f.Type, why))
		}
	}
	var ignored []string
	if !s.CarryExtra {
		for _, f := range fs.Fields() {
			if !slices.ContainsFunc(s.Columns, func(c ParquetColumn) bool { return c.Name == f.Name }) {
				ignored = append(ignored, f.Name)
			}
		}
	}
	if len(missing) > 0 {
		return &DecodeError{File: s.Name, Err: fmt.Errorf("%w: the file has no %s (it has %d columns: %s)%s", ErrMissingColumns, strings.Join(missing, ", "), len(fs.Fields()), strings.Join(arrowx.FieldNames(fs), ", "), structHint(fs, missing))}
	}
	s.mu.Lock()
	s.absent, s.shaped, s.ignored = absent, shaped, ignored
	s.mu.Unlock()
	// The footer's guess bounds the probe's: first rows that are short
	// must not make batches of long ones huge.
	if n := probeBatchRows(ctx, fr, leaves, s.BatchBytes); n > 0 && n < fr.Props.BatchSize {
		fr.Props.BatchSize = n
	}
	md := full.MetaData()
	if md.Size() <= footerPartBytes || md.NumRowGroups() < 2 {
		var row int64 = 1
		return s.emitAll(ctx, fr, leaves, 0, &row, emit)
	}
	// A larger footer is cut into parts of whole row groups, each about
	// footerPartBytes, kept serialized, and the parsed footer is let go:
	// each part is parsed again when its row groups are read.
	parts, err := footerParts(ctx, md, max(md.NumRowGroups()*footerPartBytes/md.Size(), 1))
	if err != nil {
		return &DecodeError{File: s.Name, Err: fmt.Errorf("%w: footer: %v", ErrCorrupt, err)}
	}
	size, batch := md.GetSourceFileSize(), fr.Props.BatchSize
	full.Close()
	full, fr, md = nil, nil, nil
	f, err := os.Open(s.Path)
	if err != nil {
		return &DecodeError{File: s.Name, Err: err}
	}
	defer f.Close()
	var row int64 = 1
	group := 0 // the file's index of the part's first row group
	for _, part := range parts {
		m, err := metadata.NewFileMetaData(part, nil)
		if err != nil {
			return &DecodeError{File: s.Name, Line: row, Err: fmt.Errorf("%w: footer: %v", ErrCorrupt, err)}
		}
		m.SetSourceFileSize(size)
		// Not closed: that would close f, which the next part reads.
		rdr, err := file.NewParquetReader(f, file.WithReadProps(s.readProps()), file.WithMetadata(m))
		if err != nil {
			return &DecodeError{File: s.Name, Line: row, Err: fmt.Errorf("%w: %v", ErrCorrupt, err)}
		}
		pr, err := pqarrow.NewFileReader(rdr, s.arrowProps(batch), s.Mem)
		if err != nil {
			return &DecodeError{File: s.Name, Line: row, Err: fmt.Errorf("%w: %v", ErrCorrupt, err)}
		}
		if err := s.emitAll(ctx, pr, leaves, group, &row, emit); err != nil {
			return err
		}
		group += m.NumRowGroups()
	}
	return nil
}

// footerPartBytes is the most serialized footer a Parquet input is read
// with at once. A parsed footer is many small objects per column chunk
// (statistics, offsets, encodings), about seven times its serialized
// size: 25 MB for the Habermas comparisons at 50× rows (a 3.5 MB footer
// of 400 row groups of 53 columns), all of it scanned by every
// collection for as long as the file is read. A larger footer is read
// in parts of whole row groups, each about this size, kept serialized
// (no pointers) until its turn. At 50× rows that took the run's peak
// from 544 to 440 MB at the same CPU. A batch does not span two parts,
// so a file read in parts has one short batch per part. The real
// release's comparisons file (a 211 KB footer) is read whole. A variable
// so that tests can make it small.
var footerPartBytes = 256 << 10

// footerParts returns md cut into serialized footers of per row groups
// each (the last may hold fewer), in order.
func footerParts(ctx context.Context, md *metadata.FileMetaData, per int) ([][]byte, error) {
	n := md.NumRowGroups()
	parts := make([][]byte, 0, (n+per-1)/per)
	idx := make([]int, 0, per)
	for g := 0; g < n; g += per {
		idx = idx[:0]
		for i := g; i < min(g+per, n); i++ {
			idx = append(idx, i)
		}
		sub, err := md.Subset(idx)
		if err != nil {
			return nil, err
		}
		b, err := sub.Serialize(ctx)
		if err != nil {
			return nil, err
		}
		parts = append(parts, b)
	}
	return parts, nil
}

// emitAll reads the leaves of every row group fr knows as batches and
// emits them, numbering rows from *row on; fr's first row group is the
// file's row group firstGroup (fr may read a part of the footer).
func (s *ParquetFile) emitAll(ctx context.Context, fr *pqarrow.FileReader, leaves []int, firstGroup int, row *int64, emit func(pipeline.Chunk) error) error {
	base := *row
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		// Before the first row, the error is the file's, not a row's.
		line := *row
		if line == 1 {
			line = 0
		}
		return &DecodeError{File: s.Name, Line: line, Err: fmt.Errorf("%w: %v", ErrCorrupt, err)}
	}
	defer rr.Release()
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		b := rr.RecordBatch()
		b.Retain()
		c := pipeline.Chunk{File: s.Name, Line: *row, Rows: int(b.NumRows()), Batch: b}
		*row += b.NumRows()
		if err := emit(c); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return s.locateCorrupt(ctx, fr, leaves, firstGroup, base, *row, err)
	}
	return nil
}

// locateCorrupt is the error for a batch that could not be read from
// row at on (fr's first row being row base, its first row group the
// file's firstGroup): it reads the row groups the batch may span column
// by column, to name the row group and the column that fail. The record
// reader's own error names neither, and its row is where the batch
// starts, which may be in an intact row group before the damaged one.
// When no single column fails, it is cause at row at.
func (s *ParquetFile) locateCorrupt(ctx context.Context, fr *pqarrow.FileReader, leaves []int, firstGroup int, base, at int64, cause error) error {
	md := fr.ParquetReader().MetaData()
	want := map[int]bool{}
	for _, l := range leaves {
		want[l] = true
	}
	var fields []int
	for i, f := range fr.Manifest.Fields {
		if slices.ContainsFunc(leafColumns(f), func(l int) bool { return want[l] }) {
			fields = append(fields, i)
		}
	}
	first := base
	for rg := 0; rg < md.NumRowGroups() && first <= at+fr.Props.BatchSize; rg++ {
		n := md.RowGroup(rg).NumRows()
		if first+n <= at {
			first += n
			continue
		}
		for _, fi := range fields {
			if err := readColumnChunk(ctx, fr, rg, fi); err != nil {
				return &DecodeError{File: s.Name, Line: first, Err: fmt.Errorf("%w: row group %d (rows %d to %d), column %s: %v",
					ErrCorrupt, firstGroup+rg, first, first+n-1, fr.Manifest.Fields[fi].Field.Name, err)}
			}
		}
		first += n
	}
	return &DecodeError{File: s.Name, Line: at, Err: fmt.Errorf("%w: %v", ErrCorrupt, cause)}
}

// readColumnChunk reads column fi of row group rg in batches, letting
// each go, and returns the error (or the reader's panic) it meets.
// (pqarrow's RowGroup(rg).Column(fi).Read would hold the whole column
// chunk, and does not release its reader.)
func readColumnChunk(ctx context.Context, fr *pqarrow.FileReader, rg, fi int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	rr, err := fr.GetRecordReader(ctx, leafColumns(fr.Manifest.Fields[fi]), []int{rg})
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
	}
	return rr.Err()
}

// NotParquet returns why the file at path cannot be Parquet, judged by
// its first four bytes and its last eight (the footer's length, then
// PAR1; PARE ends an encrypted footer), or "" when they are right, or
// when the file cannot be read or is not a regular file (the reader says
// why then; a FIFO is not opened here).
func NotParquet(path string) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	if st.Size() < 12 {
		return fmt.Sprintf("%d bytes, fewer than the 12 of an empty Parquet file (a truncated download?)", st.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var head [4]byte
	var end [8]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return ""
	}
	if _, err := f.ReadAt(end[:], st.Size()-8); err != nil {
		return ""
	}
	tail := end[4:]
	switch footer := int64(binary.LittleEndian.Uint32(end[:4])); {
	case string(tail) == "PARE":
		return "its footer is encrypted, which agora does not read"
	case string(head[:]) != "PAR1":
		return fmt.Sprintf("it does not start with PAR1 but %q (another format?)", head[:])
	case string(tail) != "PAR1":
		return "it starts with PAR1 but does not end with it (a truncated or damaged download?)"
	case footer > st.Size()-12:
		return fmt.Sprintf("its footer would be %d bytes, more than the file holds (%d)", footer, st.Size())
	}
	return ""
}

// probeRows is how many rows probeBatchRows reads to learn a row's size.
const probeRows = 128

// minBatchRows is the fewest rows a batch of a Parquet input holds, however
// long its rows: per-batch work (a record reader step per column, the
// stages' and the sink's bookkeeping) grows as batches shrink. It binds
// only for rows of more than batch_bytes/32 (32 KiB at the default). At
// Habermas 1w10 (rows of ~80 KiB: ten times the candidates' text), 64
// rows made batches of 5 MiB, half the live heap at the peak, and the
// memory limit was raised (352 MB resident); with 32 rows (2.6 MiB) it
// holds (286 MB). At one fixed limit, 32 rows cost 3.5% more CPU than 64
// and 8 rows 7% (medians of 4); under the adaptive limit 32 rows cost
// 3% (8.61 against 8.35 s, medians of 3).
const minBatchRows = 32

// probeBatchRows reads the first rows of the file's first row group to
// learn what a row of the wanted leaves costs in Arrow memory, and
// returns the rows per batch that make about batchBytes, at least
// minBatchRows (the caller bounds it by the footer's guess, itself at
// most BatchRows); 0 when it cannot tell (no rows, or a read error,
// which the real read then reports with its row). The footer's sizes
// cannot tell: a dictionary-encoded text is stored once per distinct
// value and decoded once per row (the Habermas comparisons: 1.5 times
// what the footer gives for the columns agora reads, 2.8 for all of
// them).
func probeBatchRows(ctx context.Context, fr *pqarrow.FileReader, leaves []int, batchBytes int) int64 {
	pr := fr.ParquetReader()
	if pr.NumRowGroups() == 0 || pr.MetaData().RowGroup(0).NumRows() == 0 {
		return 0
	}
	saved := fr.Props.BatchSize
	defer func() { fr.Props.BatchSize = saved }()
	fr.Props.BatchSize = min(probeRows, pr.MetaData().RowGroup(0).NumRows())
	rr, err := fr.GetRecordReader(ctx, leaves, []int{0})
	if err != nil {
		return 0
	}
	defer rr.Release()
	if !rr.Next() {
		return 0
	}
	b := rr.RecordBatch()
	if b.NumRows() == 0 {
		return 0
	}
	perRow := max(arrowx.BatchBytes(b)/b.NumRows(), 1)
	return max(int64(batchBytes)/perRow, minBatchRows)
}

// batchRowsFor returns the rows per batch for a file by the footer's
// sizes: about batchBytes of uncompressed data (all columns), between
// minBatchRows and most rows. It stands when probeBatchRows cannot tell or gives more.
func batchRowsFor(r *file.Reader, most, batchBytes int) int64 {
	most = max(most, 1)
	md := r.MetaData()
	var bytes, rows int64
	for g := 0; g < r.NumRowGroups(); g++ {
		bytes += md.RowGroup(g).TotalByteSize()
		rows += md.RowGroup(g).NumRows()
	}
	if bytes <= 0 || rows <= 0 {
		return int64(most)
	}
	return min(max(int64(batchBytes)*rows/bytes, minBatchRows), int64(most))
}

// recoverCorrupt turns a panic inside the Parquet library (a malformed
// file can trigger one) into an error naming the file.
func (s *ParquetFile) recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = &DecodeError{File: s.Name, Err: fmt.Errorf("%w: the Parquet reader failed: %v", ErrCorrupt, r)}
	}
}

func leafColumns(f pqarrow.SchemaField) []int {
	if len(f.Children) == 0 {
		return []int{f.ColIndex}
	}
	var out []int
	for _, c := range f.Children {
		out = append(out, leafColumns(c)...)
	}
	return out
}

// Decode converts a batch read by Chunks to the declared types and adds
// the row numbers.
func (s *ParquetFile) Decode(ctx context.Context, c pipeline.Chunk, _ *pipeline.Rejects) (_ arrow.RecordBatch, err error) {
	defer s.recoverCorrupt(&err)
	schema, err := s.Schema()
	if err != nil {
		return nil, err
	}
	in := c.Batch
	if in == nil {
		return nil, fmt.Errorf("%s: chunk without a batch", s.Name)
	}
	cols := make([]arrow.Array, 0, schema.NumFields())
	// One count of timestamps cut for the batch, read and reset column by
	// column.
	cctx, cutp := withCutCount(ctx)
	for _, f := range schema.Fields() {
		if f.Name == pipeline.LineColumn {
			continue
		}
		i := in.Schema().FieldIndices(f.Name)
		if len(i) == 0 {
			s.mu.Lock()
			absent := slices.Contains(s.absent, f.Name)
			s.mu.Unlock()
			if absent {
				cols = append(cols, array.MakeArrayOfNull(s.Mem, f.Type, int(in.NumRows())))
				continue
			}
			releaseAll(cols)
			return nil, fmt.Errorf("%s: no column %s in the batch read", s.Name, f.Name)
		}
		*cutp = 0
		a, err := conform(cctx, s.Mem, in.Column(i[0]), f.Type)
		if err == nil {
			if err = timestampsInRange(a); err == nil {
				err = validText(a)
			}
			if err != nil {
				a.Release()
			}
		}
		if cut := *cutp; cut > 0 {
			s.mu.Lock()
			if s.cut == nil {
				s.cut = map[string]int64{}
			}
			s.cut[f.Name] += cut
			s.mu.Unlock()
		}
		if err != nil {
			releaseAll(cols)
			line := c.Line // the batch's first row, unless the error names its own
			var re *rowError
			if errors.As(err, &re) {
				line += int64(re.row)
			}
			return nil, &DecodeError{File: s.Name, Line: line, Err: fmt.Errorf("column %s: %w", f.Name, err)}
		}
		cols = append(cols, a)
	}
	lb := array.NewInt64Builder(s.Mem)
	for r := int64(0); r < in.NumRows(); r++ {
		lb.Append(c.Line + r)
	}
	cols = append(cols, lb.NewArray())
	lb.Release()
	return newBatch(schema.Fields(), cols, in.NumRows()), nil
}

// structHint explains missing dotted names that the file holds as fields
// of struct columns (a release read into nested records and written
// again): agora reads the flat names, with the dot part of the name. It
// returns "" when no missing name is such a field.
func structHint(fs *arrow.Schema, missing []string) string {
	var nested []string
	for _, name := range missing {
		if structField(fs.Fields(), name) {
			nested = append(nested, name)
		}
	}
	if len(nested) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s %s inside struct columns, but a dot is part of a declared name: flatten the file's structs into dotted columns first (pyarrow's Table.flatten, once per level of nesting), as the release itself has them", strings.Join(nested, ", "), map[bool]string{true: "is", false: "are"}[len(nested) == 1])
}

// structField reports whether the dotted name is a path of field names
// through struct columns of fields (a top-level name may hold dots).
func structField(fields []arrow.Field, name string) bool {
	for _, f := range fields {
		rest, ok := strings.CutPrefix(name, f.Name+".")
		if !ok {
			continue
		}
		if st, ok := f.Type.(*arrow.StructType); ok {
			for _, c := range st.Fields() {
				if c.Name == rest || structField([]arrow.Field{c}, rest) {
					return true
				}
			}
		}
	}
	return false
}

// timestampsInRange returns a row error at the first value of a
// timestamp column a (top level) outside the years 1 to 9999, the years
// Spark and Python read (pyarrow's to_pylist fails past them), as a JSON
// or TSV timestamp outside them is rejected; nil for any other column.
func timestampsInRange(a arrow.Array) error {
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return nil
	}
	for i, v := range ts.TimestampValues() {
		if (int64(v) < minTimestamp || int64(v) > maxTimestamp) && ts.IsValid(i) {
			return &rowError{row: i, err: fmt.Errorf("%d µs since 1970 is outside the years 1 to 9999 that Spark and Python read", int64(v))}
		}
	}
	return nil
}

// validText returns a rowError for the first row of a whose strings,
// nested ones (lists, structs, maps) included, are not valid UTF-8. A
// Parquet writer that does not check (pyarrow's from_buffers, a C
// program) can store such bytes in a STRING column; written on, they
// make DuckDB refuse the whole table and pyarrow the partition folder
// they name.
func validText(a arrow.Array) error {
	switch x := a.(type) {
	case *array.String:
		return validStrings(x)
	case *array.Struct:
		for i := range x.NumField() {
			if err := validText(x.Field(i)); err != nil {
				return err
			}
		}
	case array.ListLike:
		if x.Len() == 0 {
			return nil
		}
		lo, _ := x.ValueOffsets(0)
		_, hi := x.ValueOffsets(x.Len() - 1)
		vals := array.NewSlice(x.ListValues(), lo, hi)
		defer vals.Release()
		err := validText(vals)
		var re *rowError
		if errors.As(err, &re) {
			// The element's row: the last list starting at or before it.
			j := lo + int64(re.row)
			row := sort.Search(x.Len(), func(i int) bool { s, _ := x.ValueOffsets(i); return s > j }) - 1
			return &rowError{row: row, err: fmt.Errorf("element %d: %w", j-firstOffset(x, row), re.err)}
		}
		return err
	}
	return nil
}

// firstOffset is where row i of l starts among its values.
func firstOffset(l array.ListLike, i int) int64 {
	s, _ := l.ValueOffsets(i)
	return s
}

// validStrings is validText for a string array: one check of all its
// bytes, and of each string's start, for the common case; string by
// string only to find the row at fault.
func validStrings(s *array.String) error {
	if s.Len() == 0 {
		return nil
	}
	// The offsets count from the start of the values buffer; ValueBytes
	// starts at the array's first string (a slice's too).
	offs := s.ValueOffsets()
	data := s.ValueBytes()
	base := offs[0]
	whole := utf8.Valid(data)
	if whole {
		// Valid as a whole, each string is valid when each starts on a
		// character: a continuation byte there means a character split
		// between two strings.
		for _, o := range offs[1 : len(offs)-1] {
			if o -= base; int(o) < len(data) && data[o]&0xC0 == 0x80 {
				whole = false
				break
			}
		}
	}
	if whole {
		return nil
	}
	for i := range s.Len() {
		if s.IsValid(i) && !utf8.ValidString(s.Value(i)) {
			return &rowError{row: i, err: fmt.Errorf("%q is not valid UTF-8 text (a Parquet STRING column must hold UTF-8; the file needs mending)", clip(s.Value(i)))}
		}
	}
	return nil
}

// clip shortens a value for an error message.
func clip(v string) string {
	if len(v) > 60 {
		n := 60
		for n > 0 && !utf8.RuneStart(v[n]) {
			n-- // not in the middle of a character
		}
		return v[:n] + "…"
	}
	return v
}

// cutKey is the context key of the count conform adds timestamps to
// whose digits below the microsecond it cut (see withCutCount).
type cutKey struct{}

// withCutCount returns ctx carrying a count that conform adds every
// timestamp it cuts to the microsecond to, nested ones (in lists,
// structs, maps) included, and the count.
func withCutCount(ctx context.Context) (context.Context, *int64) {
	n := new(int64)
	return context.WithValue(ctx, cutKey{}, n), n
}

// addCut adds n to ctx's cut count, if it carries one.
func addCut(ctx context.Context, n int64) {
	if c, ok := ctx.Value(cutKey{}).(*int64); ok {
		*c += n
	}
}

// conform returns a converted to type want (a new reference the caller
// owns): the same data when only field names differ, a safe cast
// otherwise. Timestamps in nanoseconds or ISO strings are cut to the
// microsecond before, as pyarrow's allow_truncated_timestamps and JSON
// lines' RFC 3339 strings are (the declared timestamp is microseconds,
// the unit Spark reads), and counted in ctx (withCutCount). Structs and
// maps are converted field by field.
func conform(ctx context.Context, mem memory.Allocator, a arrow.Array, want arrow.DataType) (arrow.Array, error) {
	if wt, ok := want.(*arrow.TimestampType); ok && wt.Unit == arrow.Microsecond {
		switch at := a.DataType().(type) {
		case *arrow.StringType:
			out, cut, err := isoTimestamps(mem, a.(*array.String))
			addCut(ctx, cut)
			return out, err
		case *arrow.TimestampType:
			if at.Unit == arrow.Nanosecond {
				out, cut := nanosToMicros(mem, a.(*array.Timestamp), wt)
				addCut(ctx, cut)
				return out, nil
			}
		}
	}
	if arrow.TypeEqual(a.DataType(), want) {
		a.Retain()
		return a, nil
	}
	if sameLayout(a.DataType(), want) {
		data := retype(a.Data(), want)
		defer data.Release()
		return array.MakeFromData(data), nil
	}
	cctx := exec.WithAllocator(context.WithoutCancel(ctx), mem) // see arrowx.TakeColumns
	if want.ID() == arrow.STRING && (a.DataType().ID() == arrow.FLOAT64 || a.DataType().ID() == arrow.FLOAT32) {
		return floatTexts(mem, a)
	}
	if want.ID() == arrow.TIMESTAMP && arrow.IsInteger(a.DataType().ID()) {
		// arrow-go's cast would take the integers as the declared unit
		// (microseconds): seconds or milliseconds would land in 1970.
		return nil, fmt.Errorf("the file has %s, want %s: an integer does not say its unit (seconds, milliseconds or microseconds since 1970); declare the column %s, or store it as a timestamp or an ISO 8601 string", a.DataType(), want, a.DataType())
	}
	if id := a.DataType().ID(); id == arrow.LARGE_LIST || id == arrow.FIXED_SIZE_LIST {
		l, err := plainList(ctx, mem, a.(array.ListLike))
		if err != nil {
			return nil, err
		}
		defer l.Release()
		return conform(ctx, mem, l, want)
	}
	if l, ok := a.(*array.List); ok {
		if d, ok := l.ListValues().(*array.Dictionary); ok {
			// A list of dictionary values (a pandas categorical in a
			// list): arrow-go's list cast cannot take it (it panicked);
			// decode the values, then convert the plain list.
			vals, err := compute.TakeArray(cctx, d.Dictionary(), d.Indices())
			if err != nil {
				return nil, fmt.Errorf("the file has %s: decoding its dictionary: %w", a.DataType(), err)
			}
			defer vals.Release()
			data := array.NewData(arrow.ListOfField(arrow.Field{Name: "element", Type: vals.DataType(), Nullable: true}), l.Len(), l.Data().Buffers(), []arrow.ArrayData{vals.Data()}, l.NullN(), l.Data().Offset())
			defer data.Release()
			plain := array.MakeFromData(data)
			defer plain.Release()
			return conform(ctx, mem, plain, want)
		}
	}
	if shapeDiffers(a.DataType(), want) {
		return reshape(ctx, mem, a, want)
	}
	if l, ok := a.(*array.List); ok {
		if wl, ok := want.(*arrow.ListType); ok {
			return relist(ctx, mem, l, wl)
		}
	}
	if st, ok := a.(*array.Struct); ok {
		if wt, ok := want.(*arrow.StructType); ok && sameFieldNames(st.DataType().(*arrow.StructType), wt) {
			return restruct(ctx, mem, st, wt)
		}
	}
	if m, ok := a.(*array.Map); ok {
		if wm, ok := want.(*arrow.MapType); ok {
			return remap(ctx, mem, m, wm)
		}
	}
	if err := exactCast(a, want); err != nil {
		return nil, err
	}
	out, err := castSafely(cctx, a, want)
	if err != nil {
		// The cast names no row: find the first that does not convert, by
		// halves (the error path only).
		lo, hi := 0, a.Len()
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			part := array.NewSlice(a, int64(lo), int64(mid))
			o, perr := castSafely(cctx, part, want)
			part.Release()
			if perr != nil {
				hi = mid
				continue
			}
			o.Release()
			lo = mid
		}
		return nil, &rowError{row: lo, err: fmt.Errorf("the file has %s, want %s: %w%s", a.DataType(), want, err, castHint(a.DataType(), want))}
	}
	return out, nil
}

// castHint says what to declare when a value of the file's type have
// does not convert to want exactly.
func castHint(have, want arrow.DataType) string {
	switch {
	case arrow.IsSignedInteger(have.ID()) && arrow.IsFloating(want.ID()):
		return fmt.Sprintf(" (a float64 holds integers exactly only up to 2^53); declare the column %s to keep every digit", have)
	case arrow.IsFloating(have.ID()) && arrow.IsInteger(want.ID()):
		return "; declare the column float64 to keep fractions, NaN and infinities"
	}
	return ""
}

// exactCast returns a rowError for the first value of a that arrow-go's
// safe cast to want would change without an error: a number other than 0
// or 1 read as a boolean (it takes any other as true), a string that is
// a number only in Go's syntax (0x1p4, 1_0) read as a float, and a
// decimal with more digits than a float64 holds (the float read back at
// the decimal's scale is another number).
func exactCast(a arrow.Array, want arrow.DataType) error {
	switch {
	case want.ID() == arrow.BOOL && (arrow.IsInteger(a.DataType().ID()) || arrow.IsFloating(a.DataType().ID())):
		for i := range a.Len() {
			if a.IsValid(i) {
				if v := a.ValueStr(i); v != "0" && v != "1" && v != "-0" {
					return &rowError{row: i, err: fmt.Errorf("the file has %s %s, want a boolean: only 0 and 1 read as one", a.DataType(), v)}
				}
			}
		}
	case arrow.IsFloating(want.ID()) && (a.DataType().ID() == arrow.STRING || a.DataType().ID() == arrow.LARGE_STRING):
		for i := range a.Len() {
			if v := a.ValueStr(i); a.IsValid(i) && goOnlyNumber(v) {
				return &rowError{row: i, err: fmt.Errorf("the file has %q, want %s: a number only in Go's syntax, not as Python or a spreadsheet writes one", v, want)}
			}
		}
	case arrow.IsFloating(want.ID()) && (a.DataType().ID() == arrow.DECIMAL128 || a.DataType().ID() == arrow.DECIMAL256):
		for i := range a.Len() {
			if a.IsValid(i) && !decimalFitsFloat(a, i) {
				return &rowError{row: i, err: fmt.Errorf("the file has %s %s, which %s does not hold: declare the column string to keep every digit", a.DataType(), a.ValueStr(i), want)}
			}
		}
	}
	return nil
}

// goOnlyNumber reports whether s, a number strconv.ParseFloat takes, is
// one only in Go's syntax (1_000, 0x1p4), not as Python or a spreadsheet
// writes one.
func goOnlyNumber(s string) bool { return strings.ContainsAny(s, "_xXpP") }

// decimalFitsFloat reports whether row i of decimal array a reads back as
// itself from the float64 it converts to.
func decimalFitsFloat(a arrow.Array, i int) bool {
	switch d := a.(type) {
	case *array.Decimal128:
		t := d.DataType().(*arrow.Decimal128Type)
		v := d.Value(i)
		back, err := decimal128.FromFloat64(v.ToFloat64(t.Scale), t.Precision, t.Scale)
		return err == nil && back == v
	case *array.Decimal256:
		t := d.DataType().(*arrow.Decimal256Type)
		v := d.Value(i)
		back, err := decimal256.FromFloat64(v.ToFloat64(t.Scale), t.Precision, t.Scale)
		return err == nil && back == v
	}
	return true
}

// castSafely is compute.CastArray with arrow-go's panics (kernels that
// do not handle a type) made errors.
func castSafely(ctx context.Context, a arrow.Array, want arrow.DataType) (out arrow.Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("no conversion from %s to %s: %v", a.DataType(), want, r)
		}
	}()
	return compute.CastArray(ctx, a, compute.SafeCastOptions(want))
}

// floorDiv is a / b rounded down (b > 0): a time before 1970 is cut to
// the microsecond before it, as one after 1970 is.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// rowError is a conversion's error at row row (0-based) of the batch.
type rowError struct {
	row int
	err error
}

func (e *rowError) Error() string { return e.err.Error() }
func (e *rowError) Unwrap() error { return e.err }

// sameLayout reports whether two types differ only in field names (a
// list's element called element or item) and nullability.
func sameLayout(a, b arrow.DataType) bool {
	switch x := a.(type) {
	case *arrow.ListType:
		y, ok := b.(*arrow.ListType)
		return ok && sameLayout(x.Elem(), y.Elem())
	case *arrow.StructType:
		y, ok := b.(*arrow.StructType)
		if !ok || x.NumFields() != y.NumFields() {
			return false
		}
		for i := range x.Fields() {
			if x.Field(i).Name != y.Field(i).Name || !sameLayout(x.Field(i).Type, y.Field(i).Type) {
				return false
			}
		}
		return true
	case *arrow.MapType:
		y, ok := b.(*arrow.MapType)
		return ok && sameLayout(x.KeyType(), y.KeyType()) && sameLayout(x.ItemType(), y.ItemType())
	}
	return arrow.TypeEqual(a, b)
}

// retype rebuilds array data under a type that differs only in field
// names, recursively, sharing the buffers.
func retype(d arrow.ArrayData, want arrow.DataType) arrow.ArrayData {
	var children []arrow.ArrayData
	switch t := want.(type) {
	case *arrow.ListType:
		children = []arrow.ArrayData{retype(d.Children()[0], t.Elem())}
	case *arrow.MapType:
		children = []arrow.ArrayData{retype(d.Children()[0], t.Elem())}
	case *arrow.StructType:
		for i, c := range d.Children() {
			children = append(children, retype(c, t.Field(i).Type))
		}
	}
	out := array.NewData(want, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	return out
}

// floatTexts writes floats (pandas stores an integer id column with
// missing values as float64) as text the way the same number stored as an
// integer or a string reads: digits without an exponent up to 1e21
// (123456789012, not arrow-go's 1.23456789012e+11), the shortest
// representation that reads back, and NaN and Inf as words.
func floatTexts(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(a.Len())
	bits := 64
	if a.DataType().ID() == arrow.FLOAT32 {
		bits = 32
	}
	var buf []byte
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		var f float64
		if bits == 32 {
			f = float64(a.(*array.Float32).Value(i))
		} else {
			f = a.(*array.Float64).Value(i)
		}
		buf = appendDecimal(buf[:0], f, bits)
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}

// appendDecimal appends f (of bits 32 or 64) as the text a number is
// compared and converted as: digits without an exponent from 1e-6 up to
// 1e21 (1000000, not Go's 1e+06; 0.00001, not 1e-05), as JavaScript
// writes them, the shortest representation that reads back, and NaN and
// ±Inf as words.
func appendDecimal(dst []byte, f float64, bits int) []byte {
	format := byte('f')
	if math.Abs(f) >= 1e21 || (f != 0 && math.Abs(f) < 1e-6) {
		format = 'g'
	}
	return strconv.AppendFloat(dst, f, format, -1, bits)
}

// isoTimestamps parses ISO 8601 strings into microseconds UTC, cutting
// digits below the microsecond to the microsecond before; cut is how many
// strings had them.
func isoTimestamps(mem memory.Allocator, s *array.String) (out arrow.Array, cut int64, err error) {
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	defer tb.Release()
	for i := 0; i < s.Len(); i++ {
		if s.IsNull(i) || s.Value(i) == "" {
			tb.AppendNull()
			continue
		}
		ts, err := arrow.TimestampFromString(s.Value(i), arrow.Microsecond)
		if err != nil {
			// More than microseconds (a nanosecond pandas str(), protobuf
			// JSON): the digits past the sixth dropped, which is the
			// microsecond before in any year (a fraction adds time). Read
			// at nanoseconds instead, years before 1678 and after 2262 did
			// not parse.
			short, dropped := microFraction(s.Value(i))
			ts, err = arrow.TimestampFromString(short, arrow.Microsecond)
			if err != nil {
				return nil, 0, &rowError{row: i, err: fmt.Errorf("%q is not an ISO 8601 timestamp", s.Value(i))}
			}
			if dropped {
				cut++
			}
		}
		tb.Append(ts)
	}
	return tb.NewArray(), cut, nil
}

// microFraction returns v with the digits of its seconds' fraction past
// the sixth left out, and whether any of them was not 0.
func microFraction(v string) (string, bool) {
	dot := strings.IndexByte(v, '.')
	if dot < 0 {
		return v, false
	}
	end := dot + 1
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	if end-dot-1 <= 6 {
		return v, false
	}
	extra := v[dot+7 : end]
	return v[:dot+7] + v[end:], strings.Trim(extra, "0") != ""
}

// nanosToMicros converts nanosecond timestamps to type want
// (microseconds), cutting the digits below the microsecond to the
// microsecond before; cut is how many values had them. arrow-go's safe
// cast refuses them instead, which stopped the run where the same instant
// written as an ISO string was read.
func nanosToMicros(mem memory.Allocator, a *array.Timestamp, want *arrow.TimestampType) (out arrow.Array, cut int64) {
	tb := array.NewTimestampBuilder(mem, want)
	defer tb.Release()
	tb.Reserve(a.Len())
	for i, v := range a.TimestampValues() {
		if a.IsNull(i) {
			tb.UnsafeAppendBoolToBitmap(false)
			continue
		}
		if int64(v)%1000 != 0 {
			cut++
		}
		tb.UnsafeAppend(arrow.Timestamp(floorDiv(int64(v), 1000)))
	}
	return tb.NewArray(), cut
}

// kindNote says how numbers, times or booleans in the file are read as
// the text a column declares, the innermost values of lists and maps
// compared; "" otherwise. Every such value converts, so nothing else
// would say that a release wrote a column of another type: an id column
// of integers where the last release had strings, say. Text read as
// numbers or times is parsed, and a value that does not parse stops the
// run, naming its row; kinds that do not convert stop it too.
func kindNote(have, want arrow.DataType) string {
	h, w := leafKind(have), leafKind(want)
	if h == "" || h == "text" || w != "text" {
		return ""
	}
	return fmt.Sprintf("its %s read as text", h)
}

// leafKind names the kind of t's values (through dictionaries, lists and
// maps' values), or "" for a struct or another type.
func leafKind(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.DictionaryType:
		return leafKind(t.ValueType)
	case *arrow.MapType:
		return leafKind(t.ItemType())
	case arrow.ListLikeType:
		return leafKind(t.Elem())
	case *arrow.StructType:
		return "" // its fields are compared where they are read
	}
	switch {
	case arrow.IsInteger(t.ID()), arrow.IsFloating(t.ID()), arrow.IsDecimal(t.ID()):
		return "numbers"
	case t.ID() == arrow.STRING, t.ID() == arrow.LARGE_STRING, t.ID() == arrow.STRING_VIEW:
		return "text"
	case t.ID() == arrow.TIMESTAMP, t.ID() == arrow.DATE32, t.ID() == arrow.DATE64:
		return "times"
	case t.ID() == arrow.BOOL:
		return "booleans"
	}
	return ""
}
