package stages

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/pipeline"
)

// TestPartitionCheck rejects rows whose partition folder name would be too
// long, across batches (the outcome of a value is cached after its first
// row, so the second batch checks the cache), and passes nulls, empty
// strings and integers.
func TestPartitionCheck(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name    string
		cols    []string
		by      []string
		batches []string
		want    []string
		rejects []string
	}{
		{
			name: "string values, a long one twice in each batch",
			cols: []string{"style:string", "_line:int64"},
			by:   []string{"style"},
			batches: []string{
				fmt.Sprintf(`[{"style":"a","_line":1},{"style":%q,"_line":2},{"style":null,"_line":3},{"style":%q,"_line":4}]`, long, long),
				fmt.Sprintf(`[{"style":%q,"_line":5},{"style":"a","_line":6},{"style":"","_line":7}]`, long),
			},
			want:    []string{`1:{"style":"a"}`, `3:{"style":null}`, `6:{"style":"a"}`, `7:{"style":""}`},
			rejects: []string{"partition  2", "partition  4", "partition  5"},
		},
		{
			name:    "two columns, one long value fails the row",
			cols:    []string{"year:int64", "topic:string", "_line:int64"},
			by:      []string{"year", "topic"},
			batches: []string{fmt.Sprintf(`[{"year":2024,"topic":"t","_line":1},{"year":2024,"topic":%q,"_line":2},{"year":null,"topic":"t","_line":3}]`, long)},
			want:    []string{`1:{"topic":"t","year":2024}`, `3:{"topic":"t","year":null}`},
			rejects: []string{"partition  2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := tcSchema(t, tt.cols...)
			pc, err := NewPartitionCheck(mem, s, tt.by)
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			var rejects []pipeline.Reject
			for _, js := range tt.batches {
				in := tcBatch(t, mem, s, js)
				r, rej := tcProcess(t, pc, in)
				in.Release()
				rows = append(rows, r...)
				rejects = append(rejects, rej...)
			}
			tcEqual(t, "rows", rows, tt.want)
			tcEqual(t, "rejects", tcRejects(rejects), tt.rejects)
			for _, r := range rejects {
				if !strings.Contains(r.Reason, "bytes escaped") {
					t.Errorf("reason %q does not give the escaped size", r.Reason)
				}
			}
		})
	}
	if _, err := NewPartitionCheck(memory.NewGoAllocator(), tcSchema(t, "a:string"), []string{"b"}); err == nil {
		t.Error("a missing partition column is accepted")
	}
}

// TestPartitionCheckConcurrent: workers call Process of one stage at
// once (run with -race).
func TestPartitionCheckConcurrent(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "style:string", "_line:int64")
	pc, err := NewPartitionCheck(mem, s, []string{"style"})
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, fmt.Sprintf(`[{"style":"a","_line":1},{"style":%q,"_line":2},{"style":"b","_line":3}]`, strings.Repeat("y", 300)))
	defer in.Release()
	rows, rej := tcProcess(t, pc, in)
	if len(rows) != 2 || len(rej) != 1 {
		t.Fatalf("%d rows out, %d rejected; want 2 and 1", len(rows), len(rej))
	}
	tcConcurrent(t, pc, in)
}
