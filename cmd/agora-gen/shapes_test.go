package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
	"github.com/agora-etl/agora/stages"
)

// The release's rankings.metadata.status may be a list per candidate
// instead of a string per row. The shipped pipeline must read a file of
// either shape into the same rows, noting the list.
func TestPipelineReadsEitherStatusShape(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cfg, err := config.LoadFile("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := cfg.Datasets["habermas"].Inputs["comparisons"]
	if in == nil {
		t.Fatal("pipeline.yaml has no habermas input comparisons")
	}
	read := func(list bool) ([]string, []string) {
		root := t.TempDir()
		hcfg, err := resolveHMConfig(filepath.Join(root, filepath.Dir(in.Path)), 300, 0, 0, hmDefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		hcfg.mem, hcfg.ListStatus = mem, list
		if _, err := generateHabermas(hcfg); err != nil {
			t.Fatal(err)
		}
		src, _, err := stages.NewSource(cfg, in, root, mem)
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		err = src.Chunks(t.Context(), func(c pipeline.Chunk) error {
			defer c.Batch.Release()
			b, err := src.Decode(t.Context(), c, &pipeline.Rejects{})
			if err != nil {
				return err
			}
			defer b.Release()
			for i := range int(b.NumRows()) {
				rows = append(rows, rowText(b, i))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return rows, src.(interface{ Notes() []string }).Notes()
	}
	plain, plainNotes := read(false)
	listed, listedNotes := read(true)
	if len(plain) != 300 || !slices.Equal(plain, listed) {
		t.Errorf("%d rows from the string status, %d from the list; equal: %v", len(plain), len(listed), slices.Equal(plain, listed))
	}
	if strings.Contains(strings.Join(plainNotes, "\n"), "rankings.metadata.status") {
		t.Errorf("a note on the string status: %q", plainNotes)
	}
	if n := strings.Join(listedNotes, "\n"); !strings.Contains(n, "column rankings.metadata.status is list<") || !strings.Contains(n, "read as that value") {
		t.Errorf("no note on the list status: %q", listedNotes)
	}
	if !slices.ContainsFunc(plain, func(r string) bool { return strings.Contains(r, "COMPLETED") }) {
		t.Errorf("no COMPLETED status read")
	}
}

// rowText renders row i of b, column by column.
func rowText(b arrow.RecordBatch, i int) string {
	var sb strings.Builder
	for c, col := range b.Columns() {
		sb.WriteString(b.Schema().Field(c).Name)
		sb.WriteByte('=')
		sb.WriteString(col.ValueStr(i))
		sb.WriteByte(';')
	}
	return sb.String()
}
