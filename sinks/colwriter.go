package sinks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/internal/pqenc"
)

// rowGroupWriter writes a Parquet file one row group at a time. A row
// group is the batches given to WriteRowGroup, which keeps no reference
// to them once it returns.
type rowGroupWriter interface {
	// WriteRowGroup writes batches (of the file's schema) as one row group.
	WriteRowGroup(batches []arrow.RecordBatch) error
	// TotalCompressedBytes is the compressed size of the row groups
	// written.
	TotalCompressedBytes() int64
	// Close writes the footer. It does not close the underlying writer.
	Close() error
}

// newRowGroupWriter returns the column-parallel writer for schema, or
// pqarrow's own writer when the schema holds a type the column-parallel
// writer does not walk (dictionary, fixed-size list, extension types):
// both write the same bytes.
//
// With encoder "agora" it returns agora's own encoder (encWriter) where
// that writes every leaf's type, else the column-parallel writer.
func newRowGroupWriter(schema *arrow.Schema, w io.Writer, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties, encoder string) (rowGroupWriter, error) {
	leaves, err := pathsToLeaves(schema)
	if err != nil {
		pw, err := pqarrow.NewFileWriter(schema, w, props, arrowProps)
		if err != nil {
			return nil, err
		}
		return pqarrowWriter{pw, schema}, nil
	}
	if encoder == "agora" {
		ew, err := newEncWriter(schema, leaves, w, props, arrowProps)
		if err == nil {
			return ew, nil
		}
		if !errors.Is(err, pqenc.ErrUnsupported) {
			return nil, err
		}
	}
	return newColumnsWriter(schema, leaves, w, props, arrowProps)
}

// pqarrowWriter writes a row group through pqarrow, column after column.
type pqarrowWriter struct {
	fw     *pqarrow.FileWriter
	schema *arrow.Schema
}

func (p pqarrowWriter) WriteRowGroup(batches []arrow.RecordBatch) error {
	var rows int64
	for _, b := range batches {
		rows += b.NumRows()
	}
	tbl := array.NewTableFromRecords(p.schema, batches)
	defer tbl.Release()
	return p.fw.WriteTable(tbl, max(rows, 1))
}

func (p pqarrowWriter) TotalCompressedBytes() int64 { return p.fw.TotalCompressedBytes() }
func (p pqarrowWriter) Close() error                { return p.fw.Close() }

// columnsWriter encodes the leaf columns of a row group on several
// goroutines, each column into its own buffer (arrow-go's buffered row
// group), and writes them to the file in schema order when the row group
// is complete. It makes the same file as pqarrow.FileWriter: the same
// schema, key-value metadata, levels and calls to the column writers.
//
// arrow-go encodes, compresses and computes statistics for a row group's
// columns one after another, and a table writes its row groups one after
// another, so a table with most of a dataset's bytes (Habermas
// comparisons) kept one core busy while the other waited.
type columnsWriter struct {
	wr         *file.Writer
	leaves     []leafPath
	props      *parquet.WriterProperties
	arrowProps pqarrow.ArrowWriterProperties
	workers    int
	zstd       *pageZstd // the codec, to prime dictionary pages; nil if not ours
}

func newColumnsWriter(schema *arrow.Schema, leaves []leafPath, w io.Writer, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) (*columnsWriter, error) {
	// As pqarrow.NewFileWriter: the Parquet schema, the Arrow schema's
	// metadata, and the Arrow schema itself (list elements named
	// "element", as in the Parquet schema).
	pqschema, err := pqarrow.ToParquet(schema, props, arrowProps)
	if err != nil {
		return nil, err
	}
	meta := make(metadata.KeyValueMetadata, 0)
	for _, kv := range fileMetadata(schema, props) {
		meta.Append(kv[0], kv[1])
	}
	wr, err := file.NewParquetWriterWithError(w, pqschema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	if wr.NumColumns() != len(leaves) {
		return nil, fmt.Errorf("parquet writer: %d leaf columns, %d paths to them", wr.NumColumns(), len(leaves))
	}
	c := &columnsWriter{wr: wr, leaves: leaves, props: props, arrowProps: arrowProps, workers: max(runtime.GOMAXPROCS(0), 1)}
	if codec, err := compress.GetCodec(compress.Codecs.Zstd); err == nil {
		c.zstd, _ = codec.(*pageZstd)
	}
	return c, nil
}

// WriteRowGroup encodes the row group's columns, at most workers at a
// time, then writes them to the file. An error stops the workers at the
// next column; the file is then to be abandoned.
func (c *columnsWriter) WriteRowGroup(batches []arrow.RecordBatch) error {
	var size int64
	for _, b := range batches {
		size += arrowx.BatchBytes(b)
	}
	if c.workers == 1 || size < parallelMin {
		return c.writeSerial(batches)
	}
	rg, err := c.wr.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	primed := make([]*primedPage, len(c.leaves))
	defer func() {
		// Pages Close did not ask for (it failed part-way) are let go.
		if c.zstd != nil {
			for _, p := range primed {
				c.zstd.primed.forget(p)
			}
		}
	}()
	taken, err := eachColumn(len(c.leaves), c.workers, func() (func(int) error, func()) {
		ctx := pqarrow.NewArrowWriteContext(context.Background(), &c.arrowProps)
		var sc levelScratch
		return func(i int) error {
			p, err := c.writeLeaf(ctx, rg, i, batches, &sc)
			primed[i] = p
			return err
		}, nil
	})
	if err != nil {
		// The row group's close would refuse columns of unequal lengths
		// before closing any; close them here, so that their buffers go
		// back to the allocator with the abandoned file.
		for i := range taken {
			if cw, cerr := rg.Column(i); cerr == nil {
				cw.Close()
			}
		}
		return err
	}
	return rg.Close()
}

// parallelMin is the Arrow bytes below which a row group's columns are
// written one after another, straight to the file: two goroutines and a
// copy of the pages cost more than they save on a row group of CrowdRAG-25
// responses' 96 rows. 1 MiB did better than 4 MiB and 256 KiB on Habermas
// at 1x (the 14 cohort partitions share buffer_bytes, so most row groups
// are 1 to 3 MiB there) and no worse on CrowdRAG-25 at 10x.
var parallelMin int64 = 1 << 20

// writeSerial writes a row group column after column, as pqarrow does.
func (c *columnsWriter) writeSerial(batches []arrow.RecordBatch) (err error) {
	defer recoverColumn(&err)
	rg, err := c.wr.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	ctx := pqarrow.NewArrowWriteContext(context.Background(), &c.arrowProps)
	var sc levelScratch
	for i := range c.leaves {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		if err := c.writeColumn(ctx, cw, i, batches, &sc); err != nil {
			return err
		}
	}
	return rg.Close()
}

// writeColumn writes leaf column i of every batch to cw.
func (c *columnsWriter) writeColumn(ctx context.Context, cw file.ColumnChunkWriter, i int, batches []arrow.RecordBatch, sc *levelScratch) error {
	lp := &c.leaves[i]
	for _, b := range batches {
		if b.NumRows() == 0 {
			continue
		}
		lv, err := lp.levels(b.Column(lp.field), sc)
		if err != nil {
			return fmt.Errorf("column %s: %w", cw.Descr().Path(), err)
		}
		err = pqarrow.WriteArrowToColumn(ctx, cw, lv.values, lv.def, lv.rep, lv.nullable)
		lv.values.Release()
		if err != nil {
			return fmt.Errorf("column %s: %w", cw.Descr().Path(), err)
		}
	}
	return nil
}

// writeLeaf writes leaf column i of every batch, then primes the
// compression of its dictionary page.
func (c *columnsWriter) writeLeaf(ctx context.Context, rg file.BufferedRowGroupWriter, i int, batches []arrow.RecordBatch, sc *levelScratch) (*primedPage, error) {
	cw, err := rg.Column(i)
	if err != nil {
		return nil, err
	}
	if err := c.writeColumn(ctx, cw, i, batches, sc); err != nil {
		return nil, err
	}
	// The last page too is built and compressed here rather than when the
	// row group closes: a row group of a few hundred rows is often one
	// page a column.
	if n, ok := bufferedValues(cw); ok && n > 0 {
		if f, ok := cw.(interface{ FlushCurrentPage() error }); ok {
			if err := f.FlushCurrentPage(); err != nil {
				return nil, fmt.Errorf("column %s: %w", cw.Descr().Path(), err)
			}
		}
	}
	return c.primeDictionary(cw), nil
}

// bufferedValues returns the levels a column writer holds for its next
// page, and whether it could tell. arrow-go does not export the count
// (columnWriter.numBufferedValues), and flushing a page with none would
// write an empty page, so it is read by reflection; should a version
// of arrow-go rename it, the page is left to the row group's close
// (TestBufferedValuesReadable fails first).
func bufferedValues(cw file.ColumnChunkWriter) (int64, bool) {
	v := reflect.ValueOf(cw)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return 0, false
	}
	f := v.Elem().FieldByName("numBufferedValues")
	if !f.IsValid() || f.Kind() != reflect.Int64 {
		return 0, false
	}
	return f.Int(), true
}

// dictWriter is what arrow-go's dictionary encoders offer to build the
// dictionary page.
type dictWriter interface {
	DictEncodedSize() int
	WriteDict(out []byte)
}

// primeMin is the smallest dictionary page worth compressing ahead.
const primeMin = 16 << 10

// primeDictionary compresses the dictionary page column cw will write
// when the row group closes, as the column writer will build it, so that
// the codec finds the frame then instead of compressing on the goroutine
// that closes the row group's columns one after another. The page is
// built in a buffer of the writer's allocator, which the codec lets go
// of once it has the frame.
func (c *columnsWriter) primeDictionary(cw file.ColumnChunkWriter) *primedPage {
	if c.zstd == nil {
		return nil
	}
	path := cw.Descr().Path()
	if c.props.CompressionFor(path) != compress.Codecs.Zstd {
		return nil
	}
	dw, ok := cw.CurrentEncoder().(dictWriter)
	if !ok || dw.DictEncodedSize() < primeMin {
		return nil
	}
	mem := c.props.Allocator()
	page := mem.Allocate(dw.DictEncodedSize())
	defer mem.Free(page)
	dw.WriteDict(page)
	return c.zstd.prime(page, c.props.CompressionLevelFor(path), mem)
}

func (c *columnsWriter) TotalCompressedBytes() int64 { return c.wr.TotalCompressedBytes() }

func (c *columnsWriter) Close() error { return c.wr.Close() }

// elementNames returns schema with every list's element field named
// "element", as pqarrow stores it.
func elementNames(schema *arrow.Schema) *arrow.Schema {
	fields := make([]arrow.Field, schema.NumFields())
	for i, f := range schema.Fields() {
		fields[i] = elementName(f)
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

func elementName(f arrow.Field) arrow.Field {
	switch t := f.Type.(type) {
	case *arrow.ListType:
		e := elementName(t.ElemField())
		e.Name = "element"
		f.Type = arrow.ListOfField(e)
	case *arrow.LargeListType:
		e := elementName(t.ElemField())
		e.Name = "element"
		f.Type = arrow.LargeListOfField(e)
	case *arrow.StructType:
		fs := make([]arrow.Field, t.NumFields())
		for i, c := range t.Fields() {
			fs[i] = elementName(c)
		}
		f.Type = arrow.StructOf(fs...)
	case *arrow.MapType:
		f.Type = arrow.MapOfFields(elementName(t.KeyField()), elementName(t.ItemField()))
	}
	return f
}

// fileMetadata returns a file's key-value metadata as pqarrow.FileWriter
// writes it: the Arrow schema's own metadata, then the Arrow schema
// itself (list elements named "element", as in the Parquet schema).
func fileMetadata(schema *arrow.Schema, props *parquet.WriterProperties) [][2]string {
	var kv [][2]string
	md := schema.Metadata()
	for i := 0; i < md.Len(); i++ {
		kv = append(kv, [2]string{md.Keys()[i], md.Values()[i]})
	}
	return append(kv, [2]string{"ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(elementNames(schema), props.Allocator()))})
}
