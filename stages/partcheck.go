package stages

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/pipeline"
	"github.com/agora-etl/agora/sinks"
)

// PartitionCheck rejects rows whose partition value cannot be a directory
// name (too long once escaped), so one hostile value costs a row, not the
// run. BuildTable adds it as the last step of a partitioned table.
type PartitionCheck struct {
	mem  memory.Allocator
	cols []string
	idx  []int
}

// maxSeen caps the values whose outcome one Process call remembers.
const maxSeen = 4096

// Name returns the step kind.
func (p *PartitionCheck) Name() string { return "partition" }

// NewPartitionCheck plans the check for the partition columns of in.
func NewPartitionCheck(mem memory.Allocator, in *arrow.Schema, cols []string) (*PartitionCheck, error) {
	idx, err := needColumns(in, cols...)
	if err != nil {
		return nil, fmt.Errorf("partition_by: %w", err)
	}
	// The sink's own test of the types, so that check and schema refuse
	// what run would.
	for _, c := range cols {
		if _, err := sinks.PartitionColumn(in, c); err != nil {
			return nil, err
		}
	}
	return &PartitionCheck{mem: mem, cols: cols, idx: idx}, nil
}

// Process passes the rows whose partition path can be written, worked
// out by the sink's own sinks.Partitioner, so a row passes exactly when
// the sink can place it. Each distinct value is escaped once per batch,
// not once per row. It keeps no state between calls, so workers may call
// it concurrently.
func (p *PartitionCheck) Process(ctx context.Context, in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	parts := sinks.NewPartitioner(p.cols, p.idx, maxSeen)
	n := int(in.NumRows())
	keep := make([]int64, 0, n)
	for i := 0; i < n; i++ {
		if _, err := parts.Of(in, i); err != nil {
			rej.AddRow(in, i, "partition", "", err.Error())
			continue
		}
		keep = append(keep, int64(i))
	}
	if len(keep) == n {
		in.Retain()
		return in, nil
	}
	return takeRows(ctx, p.mem, in, keep)
}
