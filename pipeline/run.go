package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/sync/errgroup"
)

// ErrAccounting is returned when rows in ≠ rows written + rows rejected:
// a row was lost or invented, which is a bug, never bad input.
var ErrAccounting = errors.New("row accounting mismatch")

// Table is one table's pipeline: what the runner needs to run it.
type Table struct {
	// Name is used in errors ("table crowdrag25/ratings: ...").
	Name string
	// Source reads and decodes the input.
	Source Source
	// Stages run in order after decoding.
	Stages []Stage
	// Sink receives batches and rejects in input order.
	Sink Sink
	// Workers is the number of goroutines per parallel stage (≥ 1).
	Workers int
	// ChannelDepth is the capacity of each channel between stages.
	ChannelDepth int
	// MaxInFlight bounds the chunks between reading and writing; 0 means
	// 2 × Workers + ChannelDepth + 1.
	MaxInFlight int
	// CountAfter is the number of stages after which a row has the
	// table's grain (after unpivot/explode); rows in are counted there.
	CountAfter int
	// Progress, when set, is updated as the run goes.
	Progress *Progress
}

// Progress holds counters that another goroutine may read while a table
// runs.
type Progress struct {
	// BytesRead is the input bytes consumed so far.
	BytesRead atomic.Int64
	// RowsWritten is the rows the sink has accepted so far.
	RowsWritten atomic.Int64
}

// Stats is what a finished table reports.
type Stats struct {
	// Chunks is the number of chunks read.
	Chunks int64
	// InputRows is the number of input rows (lines) read.
	InputRows int64
	// RowsIn is the number of rows at the table's grain, plus input rows
	// rejected before they reached it.
	RowsIn int64
	// Written is the number of rows given to the sink.
	Written int64
	// Rejected is the number of rows rejected, all stages together.
	Rejected int64
	// Duration is the wall time of the run.
	Duration time.Duration
	// Notes are the source's notes (files passed over, ...), which every
	// table of the input shares.
	Notes []string
	// StageNotes are the stages' notes (explode's empty lists), the
	// table's own.
	StageNotes []string
	// Checks counts flagged (not rejected) check failures by rule (its
	// place among the steps, its kind and column), with the first few
	// examples, in input order. A failure counts for a row its step
	// keeps.
	Checks []CheckStat
}

// MaxCheckExamples is how many failures of a flagged check are kept as
// examples.
const MaxCheckExamples = 10

// CheckStat summarises one flagged check.
type CheckStat struct {
	Rule   string `json:"rule"`
	Column string `json:"column,omitempty"`
	// Check is the rule's place among the table's steps
	// (steps[2].validate[1]).
	Check    string `json:"check,omitempty"`
	Failures int64  `json:"failures"`
	Examples []Flag `json:"examples"`
}

type envelope struct {
	seq   int64
	size  int // input bytes
	chunk Chunk
	batch arrow.RecordBatch
	rej   *Rejects
	// err is the error that stopped the chunk (or the reading, in an
	// envelope of no chunk after the last one read): it travels to the
	// sequencer, which returns it when the chunk's turn comes, so that a
	// run with several bad chunks fails on the first in input order
	// whichever worker fails first. The sequencer returns without giving
	// back the envelope's token, if it holds one (a chunk's does, the
	// reader's own error's does not): nothing waits on tokens then.
	err error
}

// fail records err, the error of e's chunk, in e (its batches let go)
// for the sequencer to return in turn; it returns err itself when the
// run is already cancelled, which ends the worker.
func (e *envelope) fail(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	e.release()
	if ctx.Err() != nil {
		return err
	}
	e.err = err
	return nil
}

func (e *envelope) release() {
	if e.batch != nil {
		e.batch.Release()
		e.batch = nil
	}
	if e.chunk.Batch != nil {
		e.chunk.Batch.Release()
		e.chunk.Batch = nil
	}
}

// Run runs the table until its input is exhausted, ctx is cancelled, or a
// stage fails. The first error cancels everything and is returned with
// the table's name; no goroutine outlives Run and every batch is
// released.
func Run(ctx context.Context, t Table) (st Stats, err error) {
	start := time.Now()
	workers := max(t.Workers, 1)
	depth := max(t.ChannelDepth, 0)
	inflight := t.MaxInFlight
	if inflight <= 0 {
		inflight = 2*workers + depth + 1
	}
	nparallel := len(t.Stages)
	for i, s := range t.Stages {
		if o, ok := s.(Ordered); ok && o.Ordered() {
			nparallel = i
			break
		}
	}

	var checks []CheckStat
	addCheck := func(f Flag) {
		for i := range checks {
			if checks[i].Check == f.Check && checks[i].Rule == f.Rule && checks[i].Column == f.Column {
				checks[i].Failures++
				if len(checks[i].Examples) < MaxCheckExamples {
					checks[i].Examples = append(checks[i].Examples, f)
				}
				return
			}
		}
		checks = append(checks, CheckStat{Rule: f.Rule, Column: f.Column, Check: f.Check, Failures: 1, Examples: []Flag{f}})
	}

	g, gctx := errgroup.WithContext(ctx)
	tokens := make(chan struct{}, inflight)
	chunks := make(chan *envelope, depth)
	// chans[i] feeds parallel stage i; chans[nparallel] feeds the sequencer.
	chans := make([]chan *envelope, nparallel+1)
	for i := range chans {
		chans[i] = make(chan *envelope, depth)
	}
	var rowsIn, written, rejected, nchunks, inRows atomic.Int64

	send := func(ch chan<- *envelope, e *envelope) error {
		select {
		case ch <- e:
			return nil
		case <-gctx.Done():
			e.release()
			return context.Cause(gctx)
		}
	}
	count := func(e *envelope) {
		if e.batch != nil {
			rowsIn.Add(e.batch.NumRows())
		}
		rowsIn.Add(int64(e.rej.Len()))
	}

	// Reader: split the input into chunks, each taking a token. Its own
	// error (a file that ends early, a line too long) comes after the
	// chunks read before it, as an envelope of its own.
	g.Go(func() (err error) {
		defer close(chunks)
		defer recoverInto(&err, t.Name, "reader")
		var seq int64
		defer func() {
			if err != nil && gctx.Err() == nil {
				err = send(chunks, &envelope{seq: seq, err: err})
			}
		}()
		return t.Source.Chunks(gctx, func(c Chunk) error {
			select {
			case tokens <- struct{}{}:
			case <-gctx.Done():
				if c.Batch != nil {
					c.Batch.Release()
				}
				return context.Cause(gctx)
			}
			nchunks.Add(1)
			inRows.Add(int64(c.Rows))
			size := len(c.Data) + c.Bytes
			if t.Progress != nil {
				t.Progress.BytesRead.Add(int64(size))
			}
			e := &envelope{seq: seq, size: size, chunk: c, rej: &Rejects{File: c.File}}
			seq++
			return send(chunks, e)
		})
	})

	// Decoders.
	startWorkers(g, workers, chans[0], func() error {
		for e := range chunks {
			// An envelope with an error (the reader's, or its chunk's)
			// goes on as it is, for the sequencer to return in turn.
			if e.err == nil {
				b, err := decode(gctx, t, e)
				e.batch = b // nil with an error
				if err := e.fail(gctx, err); err != nil {
					return err
				}
				if e.err == nil && t.CountAfter == 0 {
					count(e)
				}
			}
			if err := send(chans[0], e); err != nil {
				return err
			}
		}
		return nil
	})

	// Parallel stages.
	for i := 0; i < nparallel; i++ {
		in, out, stage := chans[i], chans[i+1], t.Stages[i]
		name := stageName(stage, i)
		counted := t.CountAfter == i+1
		startWorkers(g, workers, out, func() error {
			for e := range in {
				if e.err == nil {
					if err := e.fail(gctx, process(gctx, t.Name, name, stage, e)); err != nil {
						return err
					}
					if e.err == nil && counted {
						count(e)
					}
				}
				if err := send(out, e); err != nil {
					return err
				}
			}
			return nil
		})
	}

	// Sequencer: restore input order, run the ordered stages, write.
	ordered := t.Stages[nparallel:]
	g.Go(func() (err error) {
		defer recoverInto(&err, t.Name, "sink")
		pending := map[int64]*envelope{}
		defer func() {
			for _, e := range pending {
				e.release()
			}
		}()
		var next int64
		// inputFile is the one file the chunks came from ("" for several):
		// what holding stages emit at the end names it, as their input's
		// rows did.
		var inputFile OneFile
		emit := func(e *envelope, from int) error {
			defer e.release()
			if from > 0 && nparallel+from == t.CountAfter {
				count(e)
			}
			for j := from; j < len(ordered); j++ {
				if e.batch != nil {
					if err := process(gctx, t.Name, stageName(ordered[j], nparallel+j), ordered[j], e); err != nil {
						return err
					}
				}
				if nparallel+j+1 == t.CountAfter {
					count(e)
				}
			}
			if cs, ok := t.Sink.(chunkSink); ok {
				if err := cs.writeChunk(gctx, e); err != nil {
					return fmt.Errorf("table %s: %w", t.Name, err)
				}
				if e.batch != nil {
					written.Add(e.batch.NumRows())
				}
				rejected.Add(int64(e.rej.Len()))
				return nil
			}
			if e.batch != nil && e.batch.NumRows() > 0 {
				if err := t.Sink.Write(gctx, e.batch); err != nil {
					return fmt.Errorf("table %s: %w", t.Name, WithFile(err, e.rej.File))
				}
				written.Add(e.batch.NumRows())
				if t.Progress != nil {
					t.Progress.RowsWritten.Add(e.batch.NumRows())
				}
			}
			if n := e.rej.Len(); n > 0 {
				if err := t.Sink.Reject(gctx, e.rej.List()); err != nil {
					return fmt.Errorf("table %s: rejects: %w", t.Name, err)
				}
				rejected.Add(int64(n))
			}
			for _, f := range e.rej.Flags() {
				addCheck(f)
			}
			return nil
		}
		for e := range chans[nparallel] {
			pending[e.seq] = e
			for {
				e, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				if e.err != nil {
					return e.err // the first error in input order
				}
				inputFile.See(e.rej.File)
				err := emit(e, 0)
				<-tokens
				if err != nil {
					return err
				}
			}
		}
		if err := context.Cause(gctx); err != nil {
			return err
		}
		if len(pending) > 0 {
			return fmt.Errorf("table %s: %d chunks never arrived in order", t.Name, len(pending))
		}
		// End of input: let holding stages emit what they kept, through
		// the stages after them.
		for j, s := range ordered {
			if f, ok := s.(StreamFlusher); ok {
				var emitErr error
				err := f.FlushTo(gctx, func(b arrow.RecordBatch, rej *Rejects) error {
					rej.fillFile(inputFile.File())
					emitErr = emit(&envelope{batch: b, rej: rej}, j+1)
					return emitErr
				})
				if emitErr != nil {
					return emitErr
				}
				if err != nil {
					return fmt.Errorf("table %s: %s: %w", t.Name, stageName(s, nparallel+j), WithFile(err, inputFile.File()))
				}
				continue
			}
			f, ok := s.(Flusher)
			if !ok {
				continue
			}
			rej := &Rejects{File: inputFile.File()}
			b, err := f.Flush(gctx, rej)
			if err != nil {
				return fmt.Errorf("table %s: %s: %w", t.Name, stageName(s, nparallel+j), WithFile(err, inputFile.File()))
			}
			if err := emit(&envelope{batch: b, rej: rej}, j+1); err != nil {
				return err
			}
		}
		return nil
	})

	err = g.Wait()
	for _, s := range t.Stages {
		if c, ok := s.(Closer); ok {
			c.Close()
		}
	}
	// Release whatever is left in the channels after a failure.
	for _, ch := range append([]chan *envelope{chunks}, chans...) {
		drain(ch)
	}
	st = Stats{
		Chunks:    nchunks.Load(),
		InputRows: inRows.Load(),
		RowsIn:    rowsIn.Load(),
		Written:   written.Load(),
		Rejected:  rejected.Load(),
		Duration:  time.Since(start),
		Checks:    checks,
	}
	if n, ok := t.Source.(Noter); ok {
		st.Notes = n.Notes()
	}
	for _, s := range t.Stages {
		if n, ok := s.(Noter); ok {
			st.StageNotes = append(st.StageNotes, n.Notes()...)
		}
	}
	if err != nil {
		return st, err
	}
	if st.RowsIn != st.Written+st.Rejected {
		return st, fmt.Errorf("table %s: %w: %d rows in, %d written + %d rejected", t.Name, ErrAccounting, st.RowsIn, st.Written, st.Rejected)
	}
	return st, nil
}

// startWorkers runs n copies of loop in g and closes out when all have
// returned, whatever they returned, so the next stage never waits on a
// channel nobody will close.
func startWorkers(g *errgroup.Group, n int, out chan *envelope, loop func() error) {
	var wg sync.WaitGroup
	wg.Add(n)
	for range n {
		g.Go(func() (err error) {
			defer wg.Done()
			defer recoverInto(&err, "", "worker")
			return loop()
		})
	}
	g.Go(func() error {
		wg.Wait()
		close(out)
		return nil
	})
}

func decode(ctx context.Context, t Table, e *envelope) (b arrow.RecordBatch, err error) {
	defer recoverInto(&err, t.Name, "decode")
	b, err = t.Source.Decode(ctx, e.chunk, e.rej)
	e.chunk.Data = nil
	if e.chunk.Batch != nil {
		e.chunk.Batch.Release()
		e.chunk.Batch = nil
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return b, nil
}

func process(ctx context.Context, table, name string, s Stage, e *envelope) (err error) {
	defer recoverInto(&err, table, name)
	if e.batch == nil {
		return nil
	}
	out, err := s.Process(ctx, e.batch, e.rej)
	if err != nil {
		return fmt.Errorf("table %s: %s: %w", table, name, WithFile(err, e.rej.File))
	}
	e.batch.Release()
	e.batch = out
	return nil
}

func recoverInto(err *error, table, where string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("table %s: %s: internal error: %v\n%s", table, where, r, debug.Stack())
	}
}

func drain(ch chan *envelope) {
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return
			}
			e.release()
		default:
			return
		}
	}
}
