package pipeline

import (
	"context"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// LineColumn is the name of the int64 column a Source adds to every batch
// with the 1-based line (or row) each row came from. Rejects use it to
// name the line; sinks do not write columns whose name starts with "_".
const LineColumn = "_line"

// FileColumn is the name of the string column a Source adds when one
// batch holds rows of several files; rejects then name each row's file.
const FileColumn = "_file"

// Chunk is a piece of input that can be decoded on its own.
type Chunk struct {
	// File is the input file, as shown in errors and rejects.
	File string
	// Line is the 1-based line (or row) of the chunk's first row.
	Line int64
	// Rows is the number of rows (lines) in the chunk.
	Rows int
	// Data holds the raw bytes; the chunk owns them.
	Data []byte
	// Index is a source-specific position (such as a row group).
	Index int
	// Batch is a batch a source read ahead (a Parquet source reads in
	// Chunks and converts in Decode); the chunk owns it.
	Batch arrow.RecordBatch
	// Bytes is the input size the chunk stands for when Data does not
	// hold it (a chunk of an input decoded once for several tables).
	Bytes int

	rejects []Reject // rows a shared input's decoder rejected (see Shared)
}

// Source splits its input into chunks and decodes them.
type Source interface {
	// Chunks calls emit once per chunk, in input order, and returns when
	// the input is exhausted, emit returns an error, or ctx is done (then
	// it returns context.Cause(ctx)). An unreadable input is an error that
	// names the file and line.
	Chunks(ctx context.Context, emit func(Chunk) error) error
	// Decode turns one chunk into a batch the caller owns. It is called
	// from several goroutines at once. Rows that cannot be decoded are
	// added to rej when the source is set to reject them; otherwise they
	// are an error naming the file and line.
	Decode(ctx context.Context, c Chunk, rej *Rejects) (arrow.RecordBatch, error)
}

// Stage transforms one batch. It borrows in and returns a batch the
// caller owns (Retain in to pass it through). Bad rows go to rej with a
// reason; an error aborts the run. Process is called from several
// goroutines at once unless the stage is Ordered.
type Stage interface {
	Process(ctx context.Context, in arrow.RecordBatch, rej *Rejects) (arrow.RecordBatch, error)
}

// Ordered is implemented by stages that must see batches one at a time
// in input order (uniqueness checks, windows). Every stage after the
// first ordered one also runs in order.
type Ordered interface {
	Ordered() bool
}

// Flusher is implemented by ordered stages that hold rows back (a window
// over the whole table). Flush is called once after the last batch and
// returns the held rows, or nil.
type Flusher interface {
	Flush(ctx context.Context, rej *Rejects) (arrow.RecordBatch, error)
}

// StreamFlusher is implemented by holding stages that give back what they
// held in several batches (a table read back from a spill file) instead of
// Flusher's one. FlushTo calls emit once per batch, in order; emit takes
// the batch and its rejects, and its error stops the flush. The runner
// prefers FlushTo when a stage has both.
type StreamFlusher interface {
	FlushTo(ctx context.Context, emit func(arrow.RecordBatch, *Rejects) error) error
}

// Noter is implemented by sources and stages that have something to
// tell the user that is neither an error nor a reject (a file passed
// over, rows that gave no rows, say). Notes is called after Chunks
// returns, and for a stage after the table's last batch.
type Noter interface {
	Notes() []string
}

// Closer is implemented by stages that keep state between batches; the
// runner calls Close once when the run ends, however it ends.
type Closer interface {
	Close()
}

// Namer is implemented by stages that have a name for error messages.
type Namer interface {
	Name() string
}

// Sink receives the table's batches in input order, from one goroutine.
type Sink interface {
	// Write borrows b. An error about one row of b should be a
	// *RowError, returned unwrapped, with the row's file when b has a
	// FileColumn and its line: the pipeline fills in the file of an
	// input of one file.
	Write(ctx context.Context, b arrow.RecordBatch) error
	// Reject records rejected rows.
	Reject(ctx context.Context, rs []Reject) error
}

func stageName(s Stage, i int) string {
	if n, ok := s.(Namer); ok {
		return n.Name()
	}
	return "stage " + strconv.Itoa(i)
}
