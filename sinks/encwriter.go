package sinks

import (
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/internal/pqenc"
)

// encWriter writes a Parquet file through agora's own column encoder
// (internal/pqenc) instead of arrow-go's column writers: the same levels
// (leafPath), the same schema, key-value metadata and page settings, but
// pages encoded into buffers reused from row group to row group and a
// footer kept as flat records. arrow-go made a column writer, its page
// buffers, encoders and footer objects anew for every column of every
// row group; at Habermas 10x rows those were 5 of the run's 13 GB of
// allocation.
type encWriter struct {
	fw      *pqenc.FileWriter
	cols    []pqenc.Column
	leaves  []leafPath
	workers int // goroutines for a row group of parallelMin or more
}

// encoders are the column encoders of every file, shared, so that what
// they hold (page buffers, a dictionary's map) does not grow with the
// files open. Each goroutine that encodes takes one and gives it back.
var encoders = sync.Pool{New: func() any { return pqenc.NewEncoder() }}

// chunkBufs are the buffers a row group's encoded columns wait in until
// they are written in order.
var chunkBufs = sync.Pool{New: func() any { return new(chunkBuf) }}

type chunkBuf struct{ dict, data []byte }

// newEncWriter returns agora's encoder for schema, or an error wrapping
// pqenc.ErrUnsupported when a leaf is of a type it does not write.
func newEncWriter(schema *arrow.Schema, leaves []leafPath, w io.Writer, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) (*encWriter, error) {
	pqschema, err := pqarrow.ToParquet(schema, props, arrowProps)
	if err != nil {
		return nil, err
	}
	if pqschema.NumColumns() != len(leaves) {
		return nil, fmt.Errorf("parquet writer: %d leaf columns, %d paths to them", pqschema.NumColumns(), len(leaves))
	}
	types := make([]arrow.DataType, len(leaves))
	for i := range leaves {
		types[i] = leaves[i].leafType(schema.Field(leaves[i].field).Type)
	}
	cols, err := pqenc.Columns(pqschema, types, props)
	if err != nil {
		return nil, err
	}
	fw, err := pqenc.NewFileWriter(w, pqschema, cols, fileMetadata(schema, props), props.CreatedBy())
	if err != nil {
		return nil, err
	}
	return &encWriter{fw: fw, cols: cols, leaves: leaves, workers: max(runtime.GOMAXPROCS(0), 1)}, nil
}

// WriteRowGroup encodes the row group's columns, at most workers at a
// time (one goroutine for a row group under parallelMin), then writes
// them in order.
func (e *encWriter) WriteRowGroup(batches []arrow.RecordBatch) error {
	var rows, size int64
	for _, b := range batches {
		rows += b.NumRows()
		size += arrowx.BatchBytes(b)
	}
	if err := e.fw.BeginRowGroup(rows); err != nil {
		return err
	}
	if e.workers > 1 && size >= parallelMin {
		return e.writeParallel(batches, e.workers)
	}
	enc := encoders.Get().(*pqenc.Encoder)
	defer encoders.Put(enc)
	var sc levelScratch
	for i := range e.leaves {
		c, err := e.encode(enc, i, batches, &sc)
		if err != nil {
			return err
		}
		if err := e.fw.WriteChunk(c); err != nil {
			return err
		}
	}
	return e.fw.EndRowGroup()
}

// writeParallel encodes the row group's columns on workers goroutines,
// each with an encoder of the shared pool, keeps each column's pages in a
// pooled buffer, and writes them in order once all are encoded.
func (e *encWriter) writeParallel(batches []arrow.RecordBatch, workers int) error {
	bufs := make([]*chunkBuf, len(e.leaves))
	metas := make([]pqenc.Chunk, len(e.leaves))
	defer func() {
		for _, b := range bufs {
			if b != nil {
				chunkBufs.Put(b)
			}
		}
	}()
	_, err := eachColumn(len(e.leaves), workers, func() (func(int) error, func()) {
		enc := encoders.Get().(*pqenc.Encoder)
		var sc levelScratch
		return func(i int) error {
			c, err := e.encode(enc, i, batches, &sc)
			if err != nil {
				return err
			}
			// The encoder's chunk is reused by its next column: keep a
			// copy of its pages until the row group is written.
			b := chunkBufs.Get().(*chunkBuf)
			b.dict = append(b.dict[:0], c.Dict...)
			b.data = append(b.data[:0], c.Data...)
			bufs[i] = b
			metas[i] = c.WithPages(b.dict, b.data)
			return nil
		}, func() { encoders.Put(enc) }
	})
	if err != nil {
		return err
	}
	for i := range metas {
		if err := e.fw.WriteChunk(&metas[i]); err != nil {
			return err
		}
	}
	return e.fw.EndRowGroup()
}

// encode encodes leaf column i of every batch with enc. A panic is
// returned as an error, and after an error enc lets go of the chunk, so
// that it can go back to the pool.
func (e *encWriter) encode(enc *pqenc.Encoder, i int, batches []arrow.RecordBatch, sc *levelScratch) (c *pqenc.Chunk, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("column %s: internal error encoding it: %v", e.fw.ColumnPath(i), r)
		}
		if err != nil {
			enc.Abandon()
		}
	}()
	lp := &e.leaves[i]
	enc.Begin(&e.cols[i])
	for _, b := range batches {
		if b.NumRows() == 0 {
			continue
		}
		lv, err := lp.levels(b.Column(lp.field), sc)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", e.fw.ColumnPath(i), err)
		}
		err = enc.Write(lv.values, lv.def, lv.rep)
		lv.values.Release()
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", e.fw.ColumnPath(i), err)
		}
	}
	c, err = enc.Finish()
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", e.fw.ColumnPath(i), err)
	}
	return c, nil
}

func (e *encWriter) TotalCompressedBytes() int64 { return e.fw.TotalCompressedBytes() }

func (e *encWriter) Close() error { return e.fw.Close() }
