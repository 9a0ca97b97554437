package stages

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/internal/arrowx"
)

// takeColumns gathers rows idx of each array, in idx order; the caller
// owns the returned arrays.
func takeColumns(ctx context.Context, mem memory.Allocator, cols []arrow.Array, idx []int64) ([]arrow.Array, error) {
	return arrowx.TakeColumns(ctx, mem, cols, idx)
}

// takeRows returns the rows idx of b as a new batch.
func takeRows(ctx context.Context, mem memory.Allocator, b arrow.RecordBatch, idx []int64) (arrow.RecordBatch, error) {
	cols, err := takeColumns(ctx, mem, b.Columns(), idx)
	if err != nil {
		return nil, err
	}
	defer releaseAll(cols)
	return array.NewRecordBatch(b.Schema(), cols, int64(len(idx))), nil
}

func releaseAll(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// colIndex returns the index of a column, or -1.
func colIndex(s *arrow.Schema, name string) int {
	idx := s.FieldIndices(name)
	if len(idx) == 0 {
		return -1
	}
	return idx[0]
}

// needColumns checks that the columns exist and returns their indexes.
func needColumns(s *arrow.Schema, names ...string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = colIndex(s, n)
		if out[i] < 0 {
			return nil, fmt.Errorf("%w %q (have %s)", ErrNoColumn, n, columnList(s))
		}
	}
	return out, nil
}

func columnList(s *arrow.Schema) string {
	out := ""
	for _, f := range s.Fields() {
		if len(f.Name) > 0 && f.Name[0] == '_' {
			continue
		}
		if out != "" {
			out += ", "
		}
		out += f.Name
	}
	return out
}

// newBatch builds a batch from fields and arrays it takes ownership of.
func newBatch(fields []arrow.Field, cols []arrow.Array, rows int64) arrow.RecordBatch {
	b := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rows)
	releaseAll(cols)
	return b
}
