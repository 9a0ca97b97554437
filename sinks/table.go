package sinks

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/pipeline"
)

// ErrTooManyPartitions is returned when a table would write more
// partitions than writer.max_partitions allows.
var ErrTooManyPartitions = errors.New("too many partitions")

// Table writes one table's batches as Hive-partitioned Parquet under
// Root/Name, and its rejects under Root/_rejects/Name. It implements
// pipeline.Sink; Write and Reject are called from one goroutine. Close
// commits, Abort discards. Its errors do not name the table: its caller
// does (the pipeline's "table dataset/name: ").
type Table struct {
	// FS is where files are written; nil means the OS.
	FS         FS
	root, name string
	parts      []string
	w          config.Writer
	mem        memory.Allocator

	partIdx []int
	dataIdx []int
	schema  *arrow.Schema // of the written files

	open   map[string]*partWriter
	order  []string // partition paths in first-seen order
	files  []FileInfo
	rejW   *fileWriter
	rejB   *array.RecordBuilder
	nrej   int64
	closed bool
	// failed is the error of a drain that stopped part-way: some of
	// its partitions were written and some not, so the table can no
	// longer be closed into files that hold every row.
	failed error

	partitioner *Partitioner

	// Batches waiting to be split by partition, all together (pending),
	// their Arrow bytes, and the partitions they touch in first-seen order.
	pending     []pendingBatch
	pendBytes   int64
	pendParts   []*Partition
	pendPartIdx map[string]int
	drainAt     int64 // pending bytes that start a drain
	holdAt      int64 // held row-group bytes past which the largest is written
}

// pendingBatch is an input batch's data columns, retained, and the rows
// of each partition it holds (by index into Table.pendParts).
type pendingBatch struct {
	cols []arrow.Array
	rows map[int][]int64
}

type partWriter struct {
	path string
	vals []*string
	seq  int
	fw   *fileWriter
}

// RejectSchema is the schema of _rejects files. The table column names
// the output table the row was meant for, so that a dataset's rejects can
// be read as one table.
var RejectSchema = arrow.NewSchema([]arrow.Field{
	{Name: "table", Type: arrow.BinaryTypes.String},
	{Name: "rule", Type: arrow.BinaryTypes.String},
	{Name: "column", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "reason", Type: arrow.BinaryTypes.String},
	{Name: "source_file", Type: arrow.BinaryTypes.String},
	{Name: "source_line", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "row", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// PartitionColumn returns the index in schema in of the partition column
// col, or an error when there is none or its type cannot name a folder
// (only strings, integers and booleans can: a float's text is not one
// value, a list's is many).
func PartitionColumn(in *arrow.Schema, col string) (int, error) {
	i := in.FieldIndices(col)
	if len(i) == 0 {
		return -1, fmt.Errorf("no column %q", col)
	}
	switch in.Field(i[0]).Type.ID() {
	case arrow.STRING, arrow.INT64, arrow.INT32, arrow.BOOL:
		return i[0], nil
	}
	return -1, fmt.Errorf("column %q is %s; partition on a string, integer or boolean", col, config.FormatType(in.Field(i[0]).Type))
}

// NewTable prepares a sink for batches of the given schema. Columns whose
// names start with "_" are not written; partition columns become
// directories.
func NewTable(root, name string, in *arrow.Schema, partitionBy []string, w config.Writer, mem memory.Allocator) (*Table, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	t := &Table{root: root, name: name, parts: partitionBy, w: w, mem: mem, open: map[string]*partWriter{}}
	var err error
	if t.partitioner, err = NewTablePartitioner(in, partitionBy, w.MaxPartitions); err != nil {
		return nil, err
	}
	t.partIdx = t.partitioner.idx
	isPart := map[int]bool{}
	for _, i := range t.partIdx {
		isPart[i] = true
	}
	var fields []arrow.Field
	for i, f := range in.Fields() {
		if isPart[i] || strings.HasPrefix(f.Name, "_") {
			continue
		}
		t.dataIdx = append(t.dataIdx, i)
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("table %s has no columns to write", name)
	}
	t.schema = arrow.NewSchema(fields, nil)
	t.drainAt = w.BufferBytes / pendingShare
	t.holdAt = w.BufferBytes - t.drainAt
	return t, nil
}

// Schema returns the schema of the written files.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// Write holds b (its columns retained) until the held batches come to a
// quarter of buffer_bytes, then splits them by partition together and
// appends each partition's rows to its current file, keeping row order
// within a partition. Close writes what is still held; Abort lets it go.
// A partition beyond max_partitions is an error at once, and the table
// stays usable; after any other error (a partition's file could not be
// written) Write and Close fail too, since the partitions before it were
// written and the ones after not.
func (t *Table) Write(ctx context.Context, b arrow.RecordBatch) error {
	if t.failed != nil {
		return fmt.Errorf("an earlier write failed: %w", t.failed)
	}
	n := int(b.NumRows())
	var (
		seen   []*Partition // in first-seen order
		groups [][]int64    // rows of seen[k]
		at     = map[string]int{}
		none   = &Partition{} // of every row when the table has no partitions
		last   *Partition     // of row i-1
		cur    int            // its index in seen
	)
	for i := 0; i < n; i++ {
		pk := none
		if len(t.partIdx) > 0 {
			var err error
			if pk, err = t.partitioner.Of(b, i); err != nil {
				// A batch without file or line columns (written by hand,
				// not by a pipeline) can only name its row.
				f, line := pipeline.FileOf(b, i), pipeline.LineOf(b, i)
				if f == "" && line <= 0 {
					return fmt.Errorf("row %d: %w", i+1, err)
				}
				return &pipeline.RowError{File: f, Line: line, Err: err}
			}
		}
		// A run of rows of one partition gets one *Partition: the row
		// joins the group of the row before without a lookup.
		if pk != last {
			k := -1
			if len(seen) <= 16 { // a few partitions: no hash of the path
				k = slices.Index(seen, pk)
			}
			if k < 0 {
				var ok bool
				if k, ok = at[pk.Path]; !ok {
					k = len(seen)
					at[pk.Path] = k
					seen = append(seen, pk)
					groups = append(groups, nil)
				}
			}
			last, cur = pk, k
		}
		groups[cur] = append(groups[cur], int64(i))
	}
	cols := make([]arrow.Array, len(t.dataIdx))
	for i, c := range t.dataIdx {
		cols[i] = b.Column(c)
	}
	// The batch waits with the ones before it until they are a quarter of
	// buffer_bytes; then each partition's rows of them all are gathered
	// into one batch (drain).
	if t.pendPartIdx == nil {
		t.pendPartIdx = map[string]int{}
	}
	// A batch that would open too many partitions is refused whole,
	// before any of it is registered.
	parts := len(t.open) // partitions open or to be: open, pending, then this batch's new ones
	for _, pk := range t.pendParts {
		if t.open[pk.Path] == nil {
			parts++
		}
	}
	for k, pk := range seen {
		if _, ok := t.pendPartIdx[pk.Path]; ok || t.open[pk.Path] != nil {
			continue
		}
		if parts++; parts > t.w.MaxPartitions {
			return TooManyPartitionsAt(t.w.MaxPartitions, b, int(groups[k][0]), pk.Path)
		}
	}
	pb := pendingBatch{cols: make([]arrow.Array, len(cols)), rows: make(map[int][]int64, len(seen))}
	for k, pk := range seen {
		j, ok := t.pendPartIdx[pk.Path]
		if !ok {
			j = len(t.pendParts)
			t.pendPartIdx[pk.Path] = j
			t.pendParts = append(t.pendParts, pk)
		}
		pb.rows[j] = groups[k]
	}
	for i, c := range cols {
		c.Retain()
		pb.cols[i] = c
	}
	t.pending = append(t.pending, pb)
	t.pendBytes += arrowx.BatchBytes(b)
	if t.pendBytes >= t.drainAt {
		if err := t.drain(ctx); err != nil {
			t.failed = err
			return err
		}
	}
	return nil
}

// pendingShare is the share of buffer_bytes that batches wait in before
// they are split by partition together; row groups keep the rest, so a
// table holds no more than before. Splitting several batches at once
// makes a partition's part of them one gathered batch instead of one per
// input batch: fewer, larger pieces for pqarrow to write and to join.
// The sink benchmark (7 partitions) writes 9% faster; whole runs use
// less CPU (CrowdRAG-25 2% at 10x and 9% at 50x, Habermas 11% at 1x,
// level at 10x). A quarter of 16 MiB is four batches of the default
// batch_bytes (1 MiB).
const pendingShare = 4

// drain splits the pending batches by partition, all together: each
// partition's rows of them are gathered into one batch, with one copy,
// and written. The pending batches are let go however it ends.
func (t *Table) drain(ctx context.Context) error {
	defer t.releasePending()
	for j, pk := range t.pendParts {
		var sels []arrowx.Rows
		var n int64
		for _, pb := range t.pending {
			if idx, ok := pb.rows[j]; ok {
				sels = append(sels, arrowx.Rows{Cols: pb.cols, Idx: idx})
				n += int64(len(idx))
			}
		}
		var taken []arrow.Array
		var err error
		if len(sels) == 1 {
			taken, err = arrowx.TakeColumns(ctx, t.mem, sels[0].Cols, sels[0].Idx)
		} else {
			taken, err = arrowx.TakeFrom(ctx, t.mem, sels)
		}
		if err != nil {
			return err
		}
		part := array.NewRecordBatch(t.schema, taken, n)
		for _, a := range taken {
			a.Release()
		}
		err = t.writePart(pk.Path, pk.Values, part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// releasePending lets the pending batches go.
func (t *Table) releasePending() {
	for _, pb := range t.pending {
		for _, c := range pb.cols {
			c.Release()
		}
	}
	t.pending, t.pendBytes, t.pendParts = t.pending[:0], 0, t.pendParts[:0]
	clear(t.pendPartIdx)
}

func (t *Table) writePart(key string, vals []*string, b arrow.RecordBatch) error {
	pw := t.open[key]
	if pw == nil {
		if len(t.open) >= t.w.MaxPartitions {
			return TooManyPartitions(t.w.MaxPartitions)
		}
		pw = &partWriter{path: key, vals: vals}
		t.open[key] = pw
		t.order = append(t.order, key)
	}
	// Split the batch so that no file holds more than FileRows rows.
	for off := int64(0); off < b.NumRows(); {
		if pw.fw != nil && pw.fw.full(t.w) {
			// Its last row group was written out by capBuffers.
			if err := t.finish(pw); err != nil {
				return err
			}
		}
		if pw.fw == nil {
			dir := filepath.Join(t.root, t.name, filepath.FromSlash(key))
			fw, err := newFileWriter(fsOrOS(t.FS), dir, fmt.Sprintf("part-%05d.parquet", pw.seq), t.schema, t.w, t.mem)
			if err != nil {
				return err
			}
			pw.fw = fw
		}
		// At most the rest of the row group in one write, so that the file's
		// limits are checked at each row group.
		n := min(b.NumRows()-off, t.w.FileRows-pw.fw.rows, max(pw.fw.rgRows-pw.fw.heldRows, 1))
		part := b
		if off != 0 || n != b.NumRows() {
			part = b.NewSlice(off, off+n)
		}
		err := pw.fw.write(part)
		if part != b {
			part.Release()
		}
		if err != nil {
			return err
		}
		off += n
		if pw.fw.full(t.w) {
			if err := t.finish(pw); err != nil {
				return err
			}
		}
	}
	return t.capBuffers()
}

// capBuffers writes out the largest buffered row group while the row
// groups buffered over all open partitions exceed their share of
// BufferBytes (what the pending batches leave). The choice
// depends only on the rows written so far, so output stays deterministic.
func (t *Table) capBuffers() error {
	for {
		var total int64
		var big *partWriter
		for _, key := range t.order {
			pw := t.open[key]
			if pw.fw == nil {
				continue
			}
			total += pw.fw.rgBytes
			if big == nil || pw.fw.rgBytes > big.fw.rgBytes {
				big = pw
			}
		}
		if total <= t.holdAt || big == nil || big.fw.rgBytes == 0 {
			return nil
		}
		if err := big.fw.flushRowGroup(); err != nil {
			return err
		}
	}
}

// finish closes a partition's current file and records it.
func (t *Table) finish(pw *partWriter) error {
	fi, err := t.closeFile(pw)
	if err != nil {
		return err
	}
	t.files = append(t.files, fi)
	return nil
}

// closeFile closes a partition's current file (last row group, footer,
// fsync, read-back, rename) and describes it. It touches nothing of t but
// pw, so several partitions can close at once.
func (t *Table) closeFile(pw *partWriter) (FileInfo, error) {
	fw := pw.fw
	pw.fw = nil
	pw.seq++
	_, n, sum, err := fw.close()
	if err != nil {
		return FileInfo{}, err
	}
	rel := path.Join(t.name, pw.path, fw.name)
	var part map[string]*string
	if len(t.parts) > 0 {
		part = map[string]*string{}
		for i, c := range t.parts {
			part[c] = pw.vals[i]
		}
	}
	return FileInfo{Path: rel, Partition: part, Rows: fw.rows, Bytes: n, SHA256: sum}, nil
}

// Reject records rejected rows in the table's _rejects file.
func (t *Table) Reject(_ context.Context, rs []pipeline.Reject) error {
	if t.rejB == nil {
		t.rejB = array.NewRecordBuilder(t.mem, RejectSchema)
	}
	for _, r := range rs {
		t.rejB.Field(0).(*array.StringBuilder).Append(t.name)
		t.rejB.Field(1).(*array.StringBuilder).Append(r.Rule)
		if r.Column == "" {
			t.rejB.Field(2).AppendNull()
		} else {
			t.rejB.Field(2).(*array.StringBuilder).Append(r.Column)
		}
		t.rejB.Field(3).(*array.StringBuilder).Append(r.Reason)
		t.rejB.Field(4).(*array.StringBuilder).Append(r.File)
		if r.Line > 0 {
			t.rejB.Field(5).(*array.Int64Builder).Append(r.Line)
		} else {
			t.rejB.Field(5).AppendNull()
		}
		t.rejB.Field(6).(*array.StringBuilder).Append(r.Row)
		t.nrej++
	}
	if t.rejB.Field(0).Len() >= 4096 {
		return t.flushRejects()
	}
	return nil
}

func (t *Table) flushRejects() error {
	if t.rejB == nil || t.rejB.Field(0).Len() == 0 {
		return nil
	}
	if t.rejW == nil {
		fw, err := newFileWriter(fsOrOS(t.FS), filepath.Join(t.root, "_rejects", t.name), "part-00000.parquet", RejectSchema, t.w, t.mem)
		if err != nil {
			return fmt.Errorf("rejects: %w", err)
		}
		t.rejW = fw
	}
	b := t.rejB.NewRecordBatch()
	defer b.Release()
	return t.rejW.write(b)
}

// Close finishes every open file (footers, fsync, rename) and returns
// the files written, sorted by path. Rejects, if any, come last. After a
// failed Write it aborts instead and returns that failure.
func (t *Table) Close() ([]FileInfo, error) {
	if t.closed {
		return nil, errors.New("sink closed twice")
	}
	t.closed = true
	if t.failed != nil {
		t.Abort()
		return nil, fmt.Errorf("not closed after a failed write: %w", t.failed)
	}
	if err := t.drain(context.Background()); err != nil {
		t.Abort()
		return nil, err
	}
	if len(t.parts) == 0 && len(t.open) == 0 {
		// No row to write (every row rejected, or an empty input): the
		// table still gets its file, with the schema and no rows, so that
		// a reader globbing its folder gets no rows instead of "no files
		// found", and the schema stays readable.
		fw, err := newFileWriter(fsOrOS(t.FS), filepath.Join(t.root, t.name), "part-00000.parquet", t.schema, t.w, t.mem)
		if err != nil {
			t.Abort()
			return nil, err
		}
		t.open[""] = &partWriter{fw: fw}
		t.order = append(t.order, "")
	}
	// The partitions' last row groups are compressed and their files
	// synced and read back in parallel: the end of a table is otherwise a
	// serial tail of as many files as it has partitions.
	var open []*partWriter
	for _, key := range t.order {
		if pw := t.open[key]; pw.fw != nil {
			open = append(open, pw)
		}
	}
	infos := make([]FileInfo, len(open))
	errs := make([]error, len(open))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	for i, pw := range open {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("closing %s: internal error: %v", pw.path, r)
				}
			}()
			infos[i], errs[i] = t.closeFile(pw)
		}()
	}
	wg.Wait()
	for i := range open {
		if errs[i] == nil {
			t.files = append(t.files, infos[i])
		}
	}
	if err := t.flushRejects(); err != nil {
		errs = append(errs, err)
	}
	if t.rejB != nil {
		t.rejB.Release()
		t.rejB = nil
	}
	files := t.files
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	if t.rejW != nil {
		_, n, sum, err := t.rejW.close()
		if err != nil {
			errs = append(errs, err)
		} else {
			files = append(files, FileInfo{Path: path.Join("_rejects", t.name, t.rejW.name), Rows: t.nrej, Bytes: n, SHA256: sum})
		}
		t.rejW = nil
	}
	if err := errors.Join(errs...); err != nil {
		t.Abort()
		return nil, err
	}
	return files, nil
}

// Abort discards every file still open; finished files are left for the
// caller to remove with the staging folder.
func (t *Table) Abort() {
	t.releasePending()
	for _, pw := range t.open {
		if pw.fw != nil {
			pw.fw.abort()
			pw.fw = nil
		}
	}
	if t.rejW != nil {
		t.rejW.abort()
		t.rejW = nil
	}
	if t.rejB != nil {
		t.rejB.Release()
		t.rejB = nil
	}
	t.closed = true
}

// TooManyPartitionsAt is TooManyPartitions for row i of b, whose
// partition (path) is the first past the limit: a pipeline.RowError
// naming the row's file and line where b has them, so that the value can
// be looked up. The table's sink and check's tally both say it so.
func TooManyPartitionsAt(maxPartitions int, b arrow.RecordBatch, i int, path string) error {
	err := fmt.Errorf("%w (the first past it: %s)", TooManyPartitions(maxPartitions), path)
	if file, line := pipeline.FileOf(b, i), pipeline.LineOf(b, i); file != "" || line > 0 {
		return &pipeline.RowError{File: file, Line: line, Err: err}
	}
	return err
}
