package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// Shared reads and decodes one input once for several tables. Each table
// gets a Source from Consumer; Run decodes the input (in parallel, like a
// table's own decoders) and hands every decoded batch, with the chunk's
// rejected rows, to each consumer in input order.
//
// Run must run concurrently with every consumer's table: a consumer that
// does not read holds the others back (the hand-over channels are
// bounded, which is what bounds memory). Run the Shared and its tables in
// one errgroup, so that the first error cancels them all; call Close once
// all have returned to release what was left in flight.
type Shared struct {
	name    string
	src     Source
	workers int
	depth   int
	outs    []chan Chunk // a decoded chunk: Batch (one reference per consumer) and rejects
	err     error        // set before outs are closed
}

// NewShared prepares to decode src once for n consumers. name is used in
// errors (dataset/input); workers and depth are as in Table.
func NewShared(name string, src Source, n, workers, depth int) *Shared {
	s := &Shared{name: name, src: src, workers: workers, depth: depth}
	for range n {
		s.outs = append(s.outs, make(chan Chunk, max(depth, 1)))
	}
	return s
}

// Consumer returns the Source of consumer i (0 ≤ i < n). Each consumer's
// Chunks may be called once.
func (s *Shared) Consumer(i int) Source { return &sharedSource{s: s, i: i} }

// Run decodes the input and hands it out until the input is exhausted,
// ctx is done, or decoding fails; it then closes every consumer's feed.
// A decoding error is not returned: every consumer's Chunks returns it
// after the chunks before it, so that each table fails on the first
// error in its own input order (a stage's error on an earlier row
// first); Run returns the error only when ctx was done.
func (s *Shared) Run(ctx context.Context) error {
	_, err := Run(ctx, Table{
		Name:         s.name,
		Source:       s.src,
		Sink:         fanout{s},
		Workers:      s.workers,
		ChannelDepth: s.depth,
	})
	s.err = err
	for _, ch := range s.outs {
		close(ch)
	}
	if ctx.Err() != nil {
		return err
	}
	return nil
}

// Close releases the batches no consumer took (after a failure).
func (s *Shared) Close() {
	for _, ch := range s.outs {
		for c := range ch {
			if c.Batch != nil {
				c.Batch.Release()
			}
		}
	}
}

// fanout is the Sink of the shared decode; it receives whole chunks
// through chunkSink.
type fanout struct{ s *Shared }

func (fanout) Write(context.Context, arrow.RecordBatch) error {
	return errors.New("pipeline: shared input: Write outside a chunk")
}
func (fanout) Reject(context.Context, []Reject) error {
	return errors.New("pipeline: shared input: Reject outside a chunk")
}

// writeChunk hands one chunk (its batch, which it borrows, and its
// rejects) to every consumer.
func (f fanout) writeChunk(ctx context.Context, e *envelope) error {
	c := Chunk{File: e.chunk.File, Line: e.chunk.Line, Rows: e.chunk.Rows, Bytes: e.size, rejects: e.rej.List()}
	for _, ch := range f.s.outs {
		c.Batch = e.batch
		if c.Batch != nil {
			c.Batch.Retain()
		}
		select {
		case ch <- c:
		case <-ctx.Done():
			if c.Batch != nil {
				c.Batch.Release()
			}
			return context.Cause(ctx)
		}
	}
	return nil
}

// chunkSink is implemented by sinks that take a decoded chunk whole
// (batch and rejects together), in input order.
type chunkSink interface {
	writeChunk(ctx context.Context, e *envelope) error
}

// sharedSource is one consumer's view of a Shared input.
type sharedSource struct {
	s    *Shared
	i    int
	once sync.Once
}

// Chunks emits the shared chunks, each carrying its decoded batch.
func (c *sharedSource) Chunks(ctx context.Context, emit func(Chunk) error) error {
	first := false
	c.once.Do(func() { first = true })
	if !first {
		return fmt.Errorf("pipeline: shared input %s: consumer %d read twice", c.s.name, c.i)
	}
	for ch := range c.s.outs[c.i] {
		if err := emit(ch); err != nil {
			return err
		}
	}
	if c.s.err != nil {
		return c.s.err
	}
	return context.Cause(ctx)
}

// Decode returns the chunk's batch and records its rejected rows.
func (c *sharedSource) Decode(_ context.Context, ch Chunk, rej *Rejects) (arrow.RecordBatch, error) {
	for _, r := range ch.rejects {
		rej.Add(r)
	}
	if ch.Batch == nil {
		return nil, nil
	}
	ch.Batch.Retain()
	return ch.Batch, nil
}

// Notes passes on the input's notes.
func (c *sharedSource) Notes() []string {
	if n, ok := c.s.src.(Noter); ok {
		return n.Notes()
	}
	return nil
}
