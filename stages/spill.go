package stages

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SpillDir is where stages put their temporary files ("" is the system's
// temporary directory, $TMPDIR).
var SpillDir = ""

// spillFile keeps batches in a temporary Arrow IPC stream file and reads
// them back in the order written. The file is removed by remove.
type spillFile struct {
	f      *os.File
	buf    *bufio.Writer // the IPC writer's many small writes, joined
	size   int           // of buf, and of the reader's buffer
	w      *ipc.Writer
	mem    memory.Allocator
	schema *arrow.Schema
}

// newSpillFile makes a spill file with 1 MiB buffers.
func newSpillFile(schema *arrow.Schema, mem memory.Allocator) (*spillFile, error) {
	return newSpillFileSize(schema, mem, 1<<20)
}

// newSpillFileSize makes a spill file whose writes and reads go through
// buffers of size bytes.
func newSpillFileSize(schema *arrow.Schema, mem memory.Allocator, size int) (*spillFile, error) {
	f, err := os.CreateTemp(SpillDir, "agora-spill-*.arrows")
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	buf := bufio.NewWriterSize(f, size)
	return &spillFile{f: f, buf: buf, size: size, mem: mem, schema: schema, w: ipc.NewWriter(buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))}, nil
}

// write appends batches; the caller keeps its references.
func (s *spillFile) write(bs []arrow.RecordBatch) error {
	if s.w == nil {
		return fmt.Errorf("spill %s: written after it was read", s.f.Name())
	}
	for _, b := range bs {
		if err := s.w.Write(b); err != nil {
			return fmt.Errorf("spill %s: %w", s.f.Name(), err)
		}
	}
	return nil
}

// each reads the batches back in order and calls fn with each; fn borrows
// the batch.
func (s *spillFile) each(fn func(arrow.RecordBatch) error) error {
	r, err := s.open()
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
		if err := fn(r.RecordBatch()); err != nil {
			return err
		}
	}
	return s.readErr(r)
}

// open ends the writing, lets the write buffer go and returns a reader
// of the batches from the start; the caller releases it. A batch the
// reader returns is valid until its next call to Next. The file can be
// opened once.
func (s *spillFile) open() (*ipc.Reader, error) {
	if s.w == nil {
		return nil, fmt.Errorf("spill %s: read twice", s.f.Name())
	}
	if err := s.w.Close(); err != nil {
		return nil, fmt.Errorf("spill %s: %w", s.f.Name(), err)
	}
	if err := s.buf.Flush(); err != nil {
		return nil, fmt.Errorf("spill %s: %w", s.f.Name(), err)
	}
	s.w, s.buf = nil, nil // the write buffer need not stay while the file is read
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spill %s: %w", s.f.Name(), err)
	}
	r, err := ipc.NewReader(bufio.NewReaderSize(s.f, s.size), ipc.WithAllocator(s.mem), ipc.WithSchema(s.schema))
	if err != nil {
		return nil, fmt.Errorf("spill %s: %w", s.f.Name(), err)
	}
	return r, nil
}

// readErr is the error that ended r's batches, naming the file, or nil
// at the end of the file.
func (s *spillFile) readErr(r *ipc.Reader) error {
	if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("spill %s: %w", s.f.Name(), err)
	}
	return nil
}

// remove closes and deletes the file.
func (s *spillFile) remove() {
	if s.w != nil {
		s.w.Close()
	}
	s.f.Close()
	os.Remove(s.f.Name())
}
