package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"github.com/agora-etl/agora/pipeline"
)

// runShared decodes src once for len(sinks) tables, each with its stages.
func runShared(ctx context.Context, src pipeline.Source, workers int, stages [][]pipeline.Stage, sinks []pipeline.Sink) ([]pipeline.Stats, error) {
	sh := pipeline.NewShared("ds/in", src, len(sinks), workers, 1)
	defer sh.Close()
	stats := make([]pipeline.Stats, len(sinks))
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return sh.Run(gctx) })
	for i := range sinks {
		g.Go(func() error {
			st, err := pipeline.Run(gctx, pipeline.Table{
				Name: fmt.Sprintf("ds/t%d", i), Source: sh.Consumer(i), Stages: stages[i], Sink: sinks[i],
				Workers: workers, ChannelDepth: 1, MaxInFlight: workers + 1,
			})
			stats[i] = st
			return err
		})
	}
	return stats, g.Wait()
}

func TestSharedInputFeedsEveryTableInOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			all, odd := &collect{}, &collect{}
			src := &counter{n: 1000, rows: 7, mem: mem, jitter: true, rejectDiv: 10}
			stats, err := runShared(t.Context(), src, workers,
				[][]pipeline.Stage{nil, {rejectOdd{mem}}},
				[]pipeline.Sink{all, odd})
			if err != nil {
				t.Fatal(err)
			}
			// Table 0 keeps every row but the 100 rejected at decode.
			if st := stats[0]; st.InputRows != 1000 || st.RowsIn != 1000 || st.Written != 900 || st.Rejected != 100 {
				t.Fatalf("table 0 stats %+v", st)
			}
			// Table 1 also rejects the 500 odd rows (none divisible by 10).
			if st := stats[1]; st.InputRows != 1000 || st.Written != 400 || st.Rejected != 600 {
				t.Fatalf("table 1 stats %+v", st)
			}
			want := int64(0)
			for _, v := range all.vals {
				want++
				if want%10 == 0 {
					want++
				}
				if v != want {
					t.Fatalf("table 0 got %d, want %d: not in input order", v, want)
				}
			}
			decodeRejects := 0
			for _, r := range odd.rejects {
				if r.Rule == "decode" {
					decodeRejects++
					if r.Line%10 != 0 || r.File != "mem" {
						t.Fatalf("decode reject %+v", r)
					}
				}
			}
			if decodeRejects != 100 || len(all.rejects) != 100 {
				t.Fatalf("decode rejects: table 0 %d, table 1 %d; want 100 each", len(all.rejects), decodeRejects)
			}
		})
	}
}

func TestSharedInputFailures(t *testing.T) {
	tests := []struct {
		name   string
		src    func(memory.Allocator) pipeline.Source
		sinks  func() []pipeline.Sink
		stages func(memory.Allocator) [][]pipeline.Stage
		want   string
	}{
		{
			name:   "decode error reaches the run",
			src:    func(m memory.Allocator) pipeline.Source { return &counter{n: 5000, rows: 10, mem: m, failAt: 2501} },
			sinks:  func() []pipeline.Sink { return []pipeline.Sink{&collect{}, &collect{}, &collect{}} },
			stages: func(memory.Allocator) [][]pipeline.Stage { return make([][]pipeline.Stage, 3) },
			want:   "mem:2501: boom",
		},
		{
			name:   "one table's sink fails; the others stop",
			src:    func(m memory.Allocator) pipeline.Source { return &counter{n: 5000, rows: 10, mem: m} },
			sinks:  func() []pipeline.Sink { return []pipeline.Sink{&collect{}, &collect{failAt: 777}} },
			stages: func(memory.Allocator) [][]pipeline.Stage { return make([][]pipeline.Stage, 2) },
			want:   "disk full",
		},
		{
			name:  "one table's stage fails",
			src:   func(m memory.Allocator) pipeline.Source { return &counter{n: 5000, rows: 10, mem: m} },
			sinks: func() []pipeline.Sink { return []pipeline.Sink{&collect{}, &collect{}} },
			stages: func(m memory.Allocator) [][]pipeline.Stage {
				return [][]pipeline.Stage{{failing{at: 3001}}, nil}
			},
			want: "table ds/t0: stage 0: stage failed on purpose",
		},
	}
	for _, tc := range tests {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				_, err := runShared(t.Context(), tc.src(mem), workers, tc.stages(mem), tc.sinks())
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.want)
				}
				if errors.Is(err, pipeline.ErrAccounting) {
					t.Fatalf("a failure must not be reported as an accounting error: %v", err)
				}
			})
		}
	}
}

func TestSharedConsumerReadsOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sh := pipeline.NewShared("ds/in", &counter{n: 10, rows: 5, mem: mem}, 1, 1, 1)
	c := sh.Consumer(0)
	g, ctx := errgroup.WithContext(t.Context())
	g.Go(func() error { return sh.Run(ctx) })
	n := 0
	err := c.Chunks(ctx, func(ch pipeline.Chunk) error {
		n += ch.Rows
		ch.Batch.Release()
		return nil
	})
	if err != nil || n != 10 {
		t.Fatalf("first read: %d rows, %v", n, err)
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := c.Chunks(ctx, func(pipeline.Chunk) error { return nil }); err == nil {
		t.Fatal("a second read of a consumer must fail")
	}
	sh.Close()
}

// slowFailing fails, after a pause, on the batch holding value at: a
// stage whose error comes later in time than the shared decoding's on a
// later row.
type slowFailing struct{ at int64 }

func (f slowFailing) Process(ctx context.Context, in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	v := in.Column(0).(*array.Int64)
	for i := 0; i < v.Len(); i++ {
		if v.Value(i) == f.at {
			time.Sleep(30 * time.Millisecond)
			return nil, errors.New("stage failed on purpose")
		}
	}
	in.Retain()
	return in, nil
}

// TestSharedInputErrorsInInputOrder: a table of a shared input whose
// stage fails on a row before the one the shared decoding fails on
// reports its stage's error, the first in its input order; the shared
// decoding's error came first in time, and won.
func TestSharedInputErrorsInInputOrder(t *testing.T) {
	for range 5 {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		src := &counter{n: 200, rows: 10, mem: mem, failAt: 31}
		_, err := runShared(t.Context(), src, 2, [][]pipeline.Stage{{slowFailing{at: 15}}}, []pipeline.Sink{&collect{}})
		if err == nil || !strings.Contains(err.Error(), "stage failed on purpose") {
			t.Fatalf("err = %v, want the stage's", err)
		}
		// Alone, the decoding's error is the table's.
		_, err = runShared(t.Context(), &counter{n: 200, rows: 10, mem: mem, failAt: 31}, 2, [][]pipeline.Stage{nil}, []pipeline.Sink{&collect{}})
		if err == nil || !strings.Contains(err.Error(), "mem:31: boom") {
			t.Fatalf("err = %v, want the decoding's", err)
		}
		mem.AssertSize(t, 0)
	}
}
