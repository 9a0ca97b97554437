package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/agora-etl/agora/pipeline"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "v", Type: arrow.PrimitiveTypes.Int64},
	{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64},
}, nil)

// counter is a Source of n rows, rows per chunk, value = line number.
type counter struct {
	n, rows int
	mem     memory.Allocator
	failAt  int64 // decode error at this chunk's first line
	panicAt int64
	jitter  bool
	// rejectDiv, when set, rejects at decode the rows whose line divides by it.
	rejectDiv int64
}

func (c *counter) Chunks(ctx context.Context, emit func(pipeline.Chunk) error) error {
	for line := 1; line <= c.n; line += c.rows {
		k := min(c.rows, c.n-line+1)
		if err := emit(pipeline.Chunk{File: "mem", Line: int64(line), Rows: k}); err != nil {
			return err
		}
	}
	return nil
}

func (c *counter) Decode(ctx context.Context, ch pipeline.Chunk, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	if ch.Line == c.failAt {
		return nil, fmt.Errorf("mem:%d: boom", ch.Line)
	}
	if ch.Line == c.panicAt {
		panic("decoder bug")
	}
	if c.jitter {
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	}
	b := array.NewRecordBuilder(c.mem, schema)
	defer b.Release()
	for i := 0; i < ch.Rows; i++ {
		l := ch.Line + int64(i)
		if c.rejectDiv > 0 && l%c.rejectDiv == 0 {
			rej.Add(pipeline.Reject{Rule: "decode", Reason: "divisible", Line: l})
			continue
		}
		b.Field(0).(*array.Int64Builder).Append(l)
		b.Field(1).(*array.Int64Builder).Append(l)
	}
	return b.NewRecordBatch(), nil
}

// rejectOdd rejects odd values and keeps the rest, copying.
type rejectOdd struct{ mem memory.Allocator }

func (r rejectOdd) Process(_ context.Context, in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(r.mem, schema)
	defer b.Release()
	v := in.Column(0).(*array.Int64)
	for i := 0; i < v.Len(); i++ {
		if v.Value(i)%2 == 1 {
			rej.AddRow(in, i, "odd", "v", "is odd")
			continue
		}
		b.Field(0).(*array.Int64Builder).Append(v.Value(i))
		b.Field(1).(*array.Int64Builder).Append(v.Value(i))
	}
	return b.NewRecordBatch(), nil
}

// dropFirst silently loses a row: the accounting check must notice.
type dropFirst struct{}

func (dropFirst) Process(_ context.Context, in arrow.RecordBatch, _ *pipeline.Rejects) (arrow.RecordBatch, error) {
	if in.NumRows() == 0 {
		in.Retain()
		return in, nil
	}
	return in.NewSlice(1, in.NumRows()), nil
}

// failing fails on the batch holding a given value.
type failing struct{ at int64 }

func (f failing) Process(_ context.Context, in arrow.RecordBatch, _ *pipeline.Rejects) (arrow.RecordBatch, error) {
	v := in.Column(0).(*array.Int64)
	for i := 0; i < v.Len(); i++ {
		if v.Value(i) == f.at {
			return nil, errors.New("stage failed on purpose")
		}
	}
	in.Retain()
	return in, nil
}

// orderedSum is an Ordered stage that records the order it sees values.
type orderedSum struct{ seen *[]int64 }

func (o orderedSum) Ordered() bool { return true }
func (o orderedSum) Process(_ context.Context, in arrow.RecordBatch, _ *pipeline.Rejects) (arrow.RecordBatch, error) {
	v := in.Column(0).(*array.Int64)
	for i := 0; i < v.Len(); i++ {
		*o.seen = append(*o.seen, v.Value(i))
	}
	in.Retain()
	return in, nil
}

// collect is a Sink that records values and rejects in arrival order.
type collect struct {
	vals    []int64
	rejects []pipeline.Reject
	failAt  int64
	// rowErr makes the failure at failAt an error about that row, with
	// its line and no file (as sinks.Table reports a partition value).
	rowErr bool
}

func (c *collect) Write(_ context.Context, b arrow.RecordBatch) error {
	v := b.Column(0).(*array.Int64)
	for i := 0; i < v.Len(); i++ {
		if c.failAt != 0 && v.Value(i) == c.failAt {
			if c.rowErr {
				return &pipeline.RowError{Line: pipeline.LineOf(b, i), Err: errors.New("bad partition value")}
			}
			return errors.New("disk full")
		}
		c.vals = append(c.vals, v.Value(i))
	}
	return nil
}

func (c *collect) Reject(_ context.Context, rs []pipeline.Reject) error {
	c.rejects = append(c.rejects, rs...)
	return nil
}

func TestRunKeepsInputOrderAndAccounts(t *testing.T) {
	for _, workers := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var seen []int64
			sink := &collect{}
			st, err := pipeline.Run(t.Context(), pipeline.Table{
				Name:    "t",
				Source:  &counter{n: 1000, rows: 7, mem: mem, jitter: true},
				Stages:  []pipeline.Stage{rejectOdd{mem}, orderedSum{&seen}},
				Sink:    sink,
				Workers: workers, ChannelDepth: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			if st.InputRows != 1000 || st.RowsIn != 1000 || st.Written != 500 || st.Rejected != 500 {
				t.Fatalf("stats %+v", st)
			}
			for i, v := range sink.vals {
				if v != int64(2*(i+1)) {
					t.Fatalf("row %d = %d: output not in input order", i, v)
				}
			}
			if len(seen) != 500 || seen[0] != 2 || seen[499] != 1000 {
				t.Fatalf("ordered stage saw %d values", len(seen))
			}
			for i, r := range sink.rejects {
				if r.Line != int64(2*i+1) || r.File != "mem" || r.Rule != "odd" || !strings.Contains(r.Row, `"v":`) {
					t.Fatalf("reject %d = %+v", i, r)
				}
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name   string
		src    func(memory.Allocator) pipeline.Source
		stages []pipeline.Stage
		sink   *collect
		want   string
		is     error
	}{
		{
			name: "decode error names the line",
			src:  func(m memory.Allocator) pipeline.Source { return &counter{n: 500, rows: 10, mem: m, failAt: 251} },
			want: "mem:251: boom",
		},
		{
			name: "decoder panic becomes an error",
			src:  func(m memory.Allocator) pipeline.Source { return &counter{n: 500, rows: 10, mem: m, panicAt: 101} },
			want: "internal error: decoder bug",
		},
		{
			name:   "stage error cancels the run",
			src:    func(m memory.Allocator) pipeline.Source { return &counter{n: 5000, rows: 10, mem: m} },
			stages: []pipeline.Stage{failing{at: 777}},
			want:   "stage failed on purpose",
		},
		{
			name: "sink error is the cause",
			src:  func(m memory.Allocator) pipeline.Source { return &counter{n: 5000, rows: 10, mem: m} },
			sink: &collect{failAt: 1234},
			want: "disk full",
		},
		{
			name: "a sink's error about a row names the input file",
			src:  func(m memory.Allocator) pipeline.Source { return &counter{n: 5000, rows: 10, mem: m} },
			sink: &collect{failAt: 1234, rowErr: true},
			want: "table t: mem:1234: bad partition value",
		},
		{
			name:   "a silently dropped row fails the accounting",
			src:    func(m memory.Allocator) pipeline.Source { return &counter{n: 50, rows: 10, mem: m} },
			stages: []pipeline.Stage{dropFirst{}},
			is:     pipeline.ErrAccounting,
		},
	}
	for _, tt := range tests {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", tt.name, workers), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				sink := tt.sink
				if sink == nil {
					sink = &collect{}
				} else {
					sink = &collect{failAt: sink.failAt, rowErr: sink.rowErr}
				}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				_, err := pipeline.Run(ctx, pipeline.Table{Name: "t", Source: tt.src(mem), Stages: tt.stages, Sink: sink, Workers: workers, ChannelDepth: 2})
				if err == nil {
					t.Fatal("want an error")
				}
				if tt.want != "" && !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %q does not contain %q", err, tt.want)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Fatalf("error %q is not %v", err, tt.is)
				}
				if ctx.Err() != nil {
					t.Fatal("run hung until the test timeout")
				}
			})
		}
	}
}

func TestRunCancelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx, cancel := context.WithCancelCause(t.Context())
	cause := errors.New("SIGTERM")
	sink := &cancelAfter{n: 100, cancel: func() { cancel(cause) }}
	_, err := pipeline.Run(ctx, pipeline.Table{Name: "t", Source: &counter{n: 1 << 20, rows: 10, mem: mem}, Sink: sink, Workers: 2})
	if !errors.Is(err, cause) {
		t.Fatalf("err = %v, want the cancellation cause", err)
	}
}

type cancelAfter struct {
	n      int
	cancel func()
}

func (c *cancelAfter) Write(_ context.Context, b arrow.RecordBatch) error {
	c.n -= int(b.NumRows())
	if c.n <= 0 {
		c.cancel()
	}
	return nil
}
func (c *cancelAfter) Reject(context.Context, []pipeline.Reject) error { return nil }

// holder is an ordered Flusher that keeps every batch until the end.
type holder struct {
	mem  memory.Allocator
	held []arrow.RecordBatch
}

func (h *holder) Ordered() bool { return true }
func (h *holder) Process(_ context.Context, in arrow.RecordBatch, _ *pipeline.Rejects) (arrow.RecordBatch, error) {
	in.Retain()
	h.held = append(h.held, in)
	return nil, nil
}
func (h *holder) Flush(context.Context, *pipeline.Rejects) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(h.mem, schema)
	defer b.Release()
	for _, x := range h.held {
		v := x.Column(0).(*array.Int64)
		for i := 0; i < v.Len(); i++ {
			b.Field(0).(*array.Int64Builder).Append(v.Value(i))
			b.Field(1).(*array.Int64Builder).Append(v.Value(i))
		}
		x.Release()
	}
	h.held = nil
	return b.NewRecordBatch(), nil
}

func TestRunFlushesHoldingStages(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sink := &collect{}
	st, err := pipeline.Run(t.Context(), pipeline.Table{Name: "t", Source: &counter{n: 95, rows: 10, mem: mem}, Stages: []pipeline.Stage{&holder{mem: mem}}, Sink: sink, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.Written != 95 || len(sink.vals) != 95 || sink.vals[94] != 95 {
		t.Fatalf("stats %+v, %d values", st, len(sink.vals))
	}
}

// TestRunFlushedRowsNameTheFile: rows a holding stage emits at the end
// of an input of one file, and the rejects of the stages after it, name
// that file, as the input's own rows do.
func TestRunFlushedRowsNameTheFile(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sink := &collect{}
	st, err := pipeline.Run(t.Context(), pipeline.Table{Name: "t", Source: &counter{n: 20, rows: 10, mem: mem}, Stages: []pipeline.Stage{&holder{mem: mem}, rejectOdd{mem: mem}}, Sink: sink, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rejected != 10 || len(sink.rejects) != 10 {
		t.Fatalf("stats %+v, %d rejects", st, len(sink.rejects))
	}
	for _, r := range sink.rejects {
		if r.File != "mem" || r.Line == 0 {
			t.Errorf("reject %+v does not name file mem and its line", r)
		}
	}
}

// flagTwice flags every row under two checks of one rule and column.
type flagTwice struct{}

func (flagTwice) Process(_ context.Context, in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	for i := range int(in.NumRows()) {
		rej.Flag(in, i, "steps[0].validate[0]", "range", "v", "below")
		if i%2 == 0 {
			rej.Flag(in, i, "steps[0].validate[1]", "range", "v", "above")
		}
	}
	in.Retain()
	return in, nil
}

// TestRunCountsChecksApart: two checks of one rule on one column are
// counted apart, by the rule's place.
func TestRunCountsChecksApart(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	st, err := pipeline.Run(t.Context(), pipeline.Table{Name: "t", Source: &counter{n: 20, rows: 10, mem: mem}, Stages: []pipeline.Stage{flagTwice{}}, Sink: &collect{}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range st.Checks {
		got = append(got, fmt.Sprintf("%s %s %s %d", c.Check, c.Rule, c.Column, c.Failures))
	}
	if want := "steps[0].validate[0] range v 20, steps[0].validate[1] range v 10"; strings.Join(got, ", ") != want {
		t.Errorf("checks %q, want %q", strings.Join(got, ", "), want)
	}
}

func TestWithFile(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"a row error without a file gets it", func() error { return &pipeline.RowError{Line: 3, Err: errors.New("bad")} }, "in.jsonl:3: bad"},
		{"a row error's own file is kept", func() error { return &pipeline.RowError{File: "a/b.tsv", Line: 3, Err: errors.New("bad")} }, "a/b.tsv:3: bad"},
		// fmt.Errorf has fixed its text: setting the file under it would
		// change nothing that is shown, so it is left as it is.
		{"a wrapped row error is not changed", func() error { return fmt.Errorf("x: %w", &pipeline.RowError{Line: 3, Err: errors.New("bad")}) }, "x: line 3: bad"},
		{"another error passes", func() error { return errors.New("bad") }, "bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pipeline.WithFile(tt.err(), "in.jsonl").Error(); got != tt.want {
				t.Errorf("WithFile(...).Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

// orderedFails is a Source of n rows in chunks of rows: decoding the
// chunks whose first line is in fail fails, the one at slow after a
// pause (so that later chunks fail first on other workers), and reading
// fails after the chunk at readFail, when set.
type orderedFails struct {
	n, rows  int
	mem      memory.Allocator
	fail     map[int64]bool
	slow     int64
	readFail int64
}

func (c *orderedFails) Chunks(ctx context.Context, emit func(pipeline.Chunk) error) error {
	for line := 1; line <= c.n; line += c.rows {
		if err := emit(pipeline.Chunk{File: "mem", Line: int64(line), Rows: min(c.rows, c.n-line+1)}); err != nil {
			return err
		}
		if int64(line) == c.readFail {
			return fmt.Errorf("mem:%d: read error", line+c.rows)
		}
	}
	return nil
}

func (c *orderedFails) Decode(ctx context.Context, ch pipeline.Chunk, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	if ch.Line == c.slow {
		time.Sleep(30 * time.Millisecond)
	}
	if c.fail[ch.Line] {
		return nil, fmt.Errorf("mem:%d: decode error", ch.Line)
	}
	b := array.NewRecordBuilder(c.mem, schema)
	defer b.Release()
	for i := 0; i < ch.Rows; i++ {
		b.Field(0).(*array.Int64Builder).Append(ch.Line + int64(i))
		b.Field(1).(*array.Int64Builder).Append(ch.Line + int64(i))
	}
	return b.NewRecordBatch(), nil
}

// TestRunFailsOnFirstErrorInInputOrder: with several bad chunks, the run
// fails on the first in input order, however the workers race, and a
// reading error after them does not overtake them; the error named the
// chunk a worker happened to fail on first, so that two runs of the same
// input could name different rows.
func TestRunFailsOnFirstErrorInInputOrder(t *testing.T) {
	tests := []struct {
		name   string
		src    orderedFails
		stages []pipeline.Stage
		want   string
	}{
		{"two bad chunks, the first one slow", orderedFails{n: 400, rows: 10, fail: map[int64]bool{101: true, 151: true}, slow: 101}, nil, "mem:101: decode error"},
		{"a bad chunk, then a reading error", orderedFails{n: 400, rows: 10, fail: map[int64]bool{101: true}, slow: 101, readFail: 121}, nil, "mem:101: decode error"},
		{"a reading error alone", orderedFails{n: 400, rows: 10, readFail: 121}, nil, "mem:131: read error"},
		{"a stage's error, then a decode error", orderedFails{n: 400, rows: 10, fail: map[int64]bool{151: true}, slow: 101}, []pipeline.Stage{failing{at: 105}}, "stage failed on purpose"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 5 {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				src := tt.src
				src.mem = mem
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				_, err := pipeline.Run(ctx, pipeline.Table{Name: "t", Source: &src, Stages: tt.stages, Sink: &collect{}, Workers: 4, ChannelDepth: 2})
				cancel()
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				mem.AssertSize(t, 0)
			}
		})
	}
}
