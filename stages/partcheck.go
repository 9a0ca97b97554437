package stages

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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
	// seen caches the outcome by raw values (null marked apart from ""),
	// so a value is escaped once, not once per row; it holds at most
	// maxSeen values, past which values are checked row by row.
	seen map[string]error
	key  []byte
}

const maxSeen = 4096

// Name returns the step kind.
func (p *PartitionCheck) Name() string { return "partition" }

// NewPartitionCheck plans the check for the partition columns of in.
func NewPartitionCheck(mem memory.Allocator, in *arrow.Schema, cols []string) (*PartitionCheck, error) {
	idx, err := needColumns(in, cols...)
	if err != nil {
		return nil, fmt.Errorf("partition_by: %w", err)
	}
	return &PartitionCheck{mem: mem, cols: cols, idx: idx}, nil
}

// Process passes the rows whose partition path can be written.
func (p *PartitionCheck) Process(ctx context.Context, in arrow.RecordBatch, rej *pipeline.Rejects) (arrow.RecordBatch, error) {
	n := int(in.NumRows())
	keep := make([]int64, 0, n)
	vals := make([]*string, len(p.idx))
	for i := 0; i < n; i++ {
		key := p.key[:0]
		for k, c := range p.idx {
			vals[k] = nil
			if col := in.Column(c); col.IsValid(i) {
				var v string
				if s, ok := col.(*array.String); ok {
					v = s.Value(i)
				} else {
					v = col.ValueStr(i)
				}
				vals[k] = &v
				key = append(key, 1)
				key = binary.AppendUvarint(key, uint64(len(v)))
				key = append(key, v...)
			} else {
				key = append(key, 0)
			}
		}
		p.key = key
		err, ok := p.seen[string(key)]
		if !ok {
			_, err = sinks.PartitionPath(p.cols, vals)
			if len(p.seen) < maxSeen {
				if p.seen == nil {
					p.seen = map[string]error{}
				}
				p.seen[string(key)] = err
			}
		}
		if err != nil {
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
