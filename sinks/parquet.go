package sinks

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/arrowx"
)

// CreatedBy is written into every file's footer. It follows the
// "<app> version <semver>" form that parquet-mr's VersionParser (and so
// Spark) accepts; otherwise readers distrust the statistics.
var CreatedBy = "agora version 0.1.0"

// FileInfo describes one published file.
type FileInfo struct {
	// Path is relative to the dataset folder, with / separators.
	Path string `json:"path"`
	// Partition maps partition columns to their values (null as nil).
	Partition map[string]*string `json:"partition,omitempty"`
	Rows      int64              `json:"rows"`
	Bytes     int64              `json:"bytes"`
	SHA256    string             `json:"sha256"`
}

// writerProps builds the Spark-safe writer properties: data page v1,
// zstd or snappy, statistics on except for the columns listed in
// no_statistics, no dictionary except for the columns listed in
// dictionary (whose dictionary never falls back to plain, because
// arrow-go writes the fallback's encoding stats in random order). The
// columns listed in shared_pages are compressed through the zstd codec's
// page cache (sharedLevel).
func writerProps(w config.Writer, schema *arrow.Schema, mem memory.Allocator) (*parquet.WriterProperties, pqarrow.ArrowWriterProperties) {
	opts := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCreatedBy(CreatedBy),
		parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithVersion(parquet.V2_6),
		parquet.WithMaxRowGroupLength(w.RowGroupRows),
		parquet.WithStats(true),
		parquet.WithDictionaryDefault(false),
		parquet.WithDictionaryPageSizeLimit(1 << 30),
		parquet.WithDataPageSize(w.DataPageBytes),
		// Page size is checked after each batch of values: a small batch keeps
		// the encoder buffer of a column of long texts near the page size.
		parquet.WithBatchSize(128),
	}
	switch w.Compression {
	case "snappy":
		opts = append(opts, parquet.WithCompression(compress.Codecs.Snappy))
	default:
		opts = append(opts, parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(w.CompressionLevel))
	}
	arrowProps := pqarrow.NewArrowWriterProperties(
		pqarrow.WithAllocator(mem),
		pqarrow.WithStoreSchema(),
		pqarrow.WithCoerceTimestamps(arrow.Microsecond),
	)
	// Dictionaries and statistics are set per leaf column: a list
	// column's values are the leaf "name.list.element", not "name".
	if len(w.Dictionary) > 0 || len(w.NoStatistics) > 0 || len(w.SharedPages) > 0 {
		leaves := leafPaths(schema, arrowProps)
		if w.Compression != "snappy" {
			for _, leaf := range leavesOf(w.SharedPages, leaves) {
				opts = append(opts, parquet.WithCompressionLevelFor(leaf, sharedLevel(w.CompressionLevel)))
			}
		}
		for _, leaf := range leavesOf(w.Dictionary, leaves) {
			opts = append(opts, parquet.WithDictionaryFor(leaf, true))
		}
		for _, leaf := range leavesOf(w.NoStatistics, leaves) {
			opts = append(opts, parquet.WithStatsFor(leaf, false))
		}
	}
	return parquet.NewWriterProperties(opts...), arrowProps
}

// fileWriter writes one Parquet file under a hidden temporary name and
// renames it into place when it is complete and synced.
type fileWriter struct {
	dir, name string
	tmp       string
	fs        FS
	f         File
	buf       *bufio.Writer
	sum       hash.Hash
	n         int64
	fw        rowGroupWriter
	schema    *arrow.Schema
	rowGroup  int64 // RowGroupBytes
	rgRows    int64 // RowGroupRows
	mem       memory.Allocator
	held      []arrow.RecordBatch
	heldRows  int64
	rgBytes   int64 // Arrow bytes held for the current row group
	rows      int64
	rowGroups int64 // row groups written
	// written caches size(): pqarrow recomputes it from a snapshot of the
	// whole footer on every call, which cost 5% of the CPU on Habermas
	// when asked after every batch; it changes only when a row group is
	// written.
	written      int64
	writtenValid bool
	// werr is the first error writing the file. countingWriter keeps it
	// and takes every later write as done, so that arrow-go, which stops
	// closing a row group's columns at the first error and then frees
	// none of the rest, closes and frees them all; flushRowGroup and
	// close return it.
	werr error
}

// countingWriter writes to the file's buffer, counting and hashing the
// bytes, and keeps the first error in werr.
type countingWriter struct{ w *fileWriter }

func (c countingWriter) Write(p []byte) (int, error) {
	if c.w.werr != nil {
		return len(p), nil
	}
	n, err := c.w.buf.Write(p)
	c.w.sum.Write(p[:n])
	c.w.n += int64(n)
	if err != nil {
		c.w.werr = err
	}
	return len(p), nil
}

func newFileWriter(fs FS, dir, name string, schema *arrow.Schema, w config.Writer, mem memory.Allocator) (*fileWriter, error) {
	// Folders 0777 and files 0666 (os.Create), both less the umask: at
	// umask 002 a group shares the release's folders as its files.
	if err := fs.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	fw := &fileWriter{fs: fs, dir: dir, name: name, tmp: filepath.Join(dir, "."+name+".tmp"), sum: sha256.New()}
	f, err := fs.Create(fw.tmp)
	if err != nil {
		return nil, err
	}
	fw.f = f
	// Pages arrive whole from the encoder; a small buffer only joins the
	// small writes (headers, footer). Every open partition has one.
	fw.buf = bufio.NewWriterSize(f, 64<<10)
	props, arrowProps := writerProps(w, schema, mem)
	pw, err := newRowGroupWriter(schema, countingWriter{fw}, props, arrowProps, w.Encoder)
	if err != nil {
		f.Close()
		fs.Remove(fw.tmp)
		return nil, fmt.Errorf("parquet writer: %w", err)
	}
	fw.fw = pw
	fw.mem = mem
	fw.schema = schema
	fw.rowGroup = w.RowGroupBytes
	fw.rgRows = int64(w.RowGroupRows)
	return fw, nil
}

// write holds b (retained) for the current row group, and writes the row
// group out once it has RowGroupRows rows or RowGroupBytes Arrow bytes.
// A row group below parallelMin is written column after column straight
// to the file, so what a file costs in memory is the Arrow batches it
// holds, counted exactly, plus one column's page; a larger one is
// encoded a column per goroutine, each into its own buffer of compressed
// pages, which the file then takes in order (columnsWriter).
func (f *fileWriter) write(b arrow.RecordBatch) error {
	for off := int64(0); off < b.NumRows(); {
		n := min(b.NumRows()-off, f.rgRows-f.heldRows)
		part := b
		if off == 0 && n == b.NumRows() {
			b.Retain()
		} else {
			part = b.NewSlice(off, off+n)
		}
		f.held = append(f.held, part)
		f.heldRows += n
		f.rows += n
		f.rgBytes += arrowx.BatchBytes(part)
		off += n
		if f.heldRows >= f.rgRows || f.rgBytes >= f.rowGroup {
			if err := f.flushRowGroup(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flushRowGroup writes the held batches as one row group and lets them go.
//
// Held batches that are small for their number of columns (a partition's
// share of several input batches) are first joined into one: pqarrow pays
// per piece and per column (a level builder, slices, a write call). On
// Habermas (3 to 5 pieces a row group, 45 columns, about 5 KiB a column
// piece) the copy costs less than the pieces did: 4% less CPU at 1×, 9% at
// 10× rows. On CrowdRAG-25 (about 70 KiB a column piece) the copy costs
// more (5%), so large pieces are written as they are.
func (f *fileWriter) flushRowGroup() error {
	if len(f.held) == 0 {
		return nil
	}
	if len(f.held) > 1 && f.rgBytes < joinBelow*int64(len(f.held)*f.schema.NumFields()) {
		one, err := arrowx.ConcatBatches(f.mem, f.schema, f.held)
		if err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(f.dir, f.name), err)
		}
		rows := f.heldRows
		f.release()
		f.held, f.heldRows = append(f.held, one), rows
	}
	f.writtenValid = false
	f.rowGroups++
	err := f.fw.WriteRowGroup(f.held)
	f.release()
	if err == nil {
		err = f.werr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(f.dir, f.name), err)
	}
	return nil
}

// joinBelow is the Arrow bytes per column of a held batch below which a
// row group's batches are joined before they are written.
const joinBelow = 16 << 10

// release lets the held batches go.
func (f *fileWriter) release() {
	for _, b := range f.held {
		b.Release()
	}
	f.held, f.heldRows, f.rgBytes = f.held[:0], 0, 0
}

// size estimates the file's bytes so far: the compressed bytes of the row
// groups written.
func (f *fileWriter) size() int64 {
	if !f.writtenValid {
		f.written, f.writtenValid = f.fw.TotalCompressedBytes(), true
	}
	return f.written
}

// full reports whether the file has reached one of w's file limits:
// FileRows rows, FileBytes bytes written or FileRowGroups row groups
// written (the row groups arrow-go keeps the metadata of until the footer).
func (f *fileWriter) full(w config.Writer) bool {
	return f.rows >= w.FileRows || f.rowGroups >= w.FileRowGroups || f.size() >= w.FileBytes
}

// close finishes the file: footer, flush, fsync, rename to its final name.
func (f *fileWriter) close() (path string, bytes int64, sum string, err error) {
	if err := f.flushRowGroup(); err != nil {
		f.abort()
		return "", 0, "", err
	}
	if err := f.fw.Close(); err != nil || f.werr != nil {
		if err == nil {
			err = f.werr
		}
		f.abort()
		return "", 0, "", fmt.Errorf("close %s: %w", filepath.Join(f.dir, f.name), err)
	}
	if err := f.buf.Flush(); err != nil {
		f.abort()
		return "", 0, "", fmt.Errorf("flush %s: %w", filepath.Join(f.dir, f.name), err)
	}
	if err := f.f.Sync(); err != nil {
		f.abort()
		return "", 0, "", fmt.Errorf("sync %s: %w", filepath.Join(f.dir, f.name), err)
	}
	if err := f.f.Close(); err != nil {
		f.fs.Remove(f.tmp)
		return "", 0, "", fmt.Errorf("close %s: %w", filepath.Join(f.dir, f.name), err)
	}
	if err := verify(f.tmp, f.rows); err != nil {
		f.fs.Remove(f.tmp)
		return "", 0, "", fmt.Errorf("verify %s: %w", filepath.Join(f.dir, f.name), err)
	}
	final := filepath.Join(f.dir, f.name)
	if err := f.fs.Rename(f.tmp, final); err != nil {
		f.fs.Remove(f.tmp)
		return "", 0, "", fmt.Errorf("rename %s: %w", filepath.Join(f.dir, f.name), err)
	}
	return final, f.n, hex.EncodeToString(f.sum.Sum(nil)), nil
}

// ErrVerify is returned when a file read back does not hold what was
// written.
var ErrVerify = errors.New("read-back check failed")

// verify reopens a written file and checks its footer: the row count, and
// that every column chunk of every row group holds at least as many values
// as the row group has rows (a chunk with fewer is the signature of
// silently dropped values).
func verify(path string, rows int64) error {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("%w: reopen: %v", ErrVerify, err)
	}
	defer rdr.Close()
	md := rdr.MetaData()
	if md.NumRows != rows {
		return fmt.Errorf("%w: footer says %d rows, %d were written", ErrVerify, md.NumRows, rows)
	}
	var sum int64
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := md.RowGroup(g)
		sum += rg.NumRows()
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("%w: row group %d column %d: %v", ErrVerify, g, c, err)
			}
			if cc.NumValues() < rg.NumRows() {
				return fmt.Errorf("%w: row group %d column %s holds %d values for %d rows", ErrVerify, g, cc.PathInSchema(), cc.NumValues(), rg.NumRows())
			}
		}
	}
	if sum != rows {
		return fmt.Errorf("%w: row groups hold %d rows, %d were written", ErrVerify, sum, rows)
	}
	return nil
}

// abort discards the file.
func (f *fileWriter) abort() {
	f.release()
	f.fw.Close()
	f.f.Close()
	f.fs.Remove(f.tmp)
}

// leafPaths returns the paths of the file's leaf columns.
func leafPaths(schema *arrow.Schema, arrowProps pqarrow.ArrowWriterProperties) []string {
	sc, err := pqarrow.ToParquet(schema, parquet.NewWriterProperties(), arrowProps)
	if err != nil {
		return nil // the writer reports the schema error itself
	}
	paths := make([]string, sc.NumColumns())
	for i := range paths {
		paths[i] = sc.Column(i).Path()
	}
	return paths
}

// leavesOf returns the leaves of cols: a column itself, or every leaf
// below a list or struct column.
func leavesOf(cols, leaves []string) []string {
	var out []string
	for _, leaf := range leaves {
		for _, c := range cols {
			if leaf == c || strings.HasPrefix(leaf, c+".") {
				out = append(out, leaf)
				break
			}
		}
	}
	return out
}
