// Package pipeline runs one output table: a Source split into chunks and
// decoded into Arrow record batches, a list of Stages, and a Sink, joined
// by small bounded channels and run as errgroup workers.
//
// # Batch ownership
//
// One rule, everywhere: whoever holds a batch releases it.
//
//   - Source.Decode returns a batch the caller owns.
//   - Stage.Process borrows its input for the duration of the call and
//     returns a new batch the caller owns. A stage that passes its input
//     through unchanged calls Retain on it first. The runner releases
//     the input after Process returns.
//   - Sink.Write borrows the batch; the runner releases it afterwards. A
//     sink that keeps a batch beyond the call retains it.
//   - A batch sent on a channel belongs to the receiver. On cancellation
//     the runner drains every channel and releases what it finds.
//
// # Cancellation and errors
//
// All goroutines share one context. An error decoding or processing a
// chunk, or reading past the last chunk read, travels with the chunk to
// the sequencer, which returns it when the chunk's turn comes: a run with
// several bad chunks fails on the first in input order, whichever worker
// fails first. With a Shared input, each table fails on the first error in
// its own order (the shared decoding's included); which of several
// failing tables stops the others is the first to fail. That error (or a panic, or the sink's) cancels the
// context, and Run returns it (the cause), not "context canceled". A row that is
// merely bad is not an error: stages add it to the batch's Rejects with a
// reason and go on. An error means the run cannot continue.
//
// # Order and memory
//
// Each chunk gets a sequence number. Parallel stages may finish chunks out
// of order; the sequencer restores input order before the ordered stages
// (those whose Ordered method reports true, such as uniqueness checks) and
// the sink, so output is the same whatever the worker count. A chunk takes
// one of MaxInFlight tokens before it is read and gives it back when the
// sink has written it, so at most MaxInFlight batches exist at once:
// memory is bounded by MaxInFlight × the size of one batch.
// With Workers = 1 the same code runs with one goroutine per stage.
package pipeline
