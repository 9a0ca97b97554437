package sinks

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
)

// TestEncoderEmptyStringStats: a string chunk whose only values are ""
// (and nulls) has a minimum and a maximum, "" both, as arrow-go writes
// them: an empty statistic is a value, not a missing one.
func TestEncoderEmptyStringStats(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "sd", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "r", Type: arrow.BinaryTypes.String},
		{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	col := func(dt arrow.DataType, s string) arrow.Array {
		a, _, err := array.FromJSON(mem, dt, strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	cols := []arrow.Array{
		col(arrow.BinaryTypes.String, `["", null, ""]`),
		col(arrow.BinaryTypes.String, `["", null, ""]`),
		col(arrow.BinaryTypes.String, `["", "", ""]`),
		col(arrow.ListOf(arrow.BinaryTypes.String), `[[""], null, ["", null]]`),
	}
	b := array.NewRecordBatch(schema, cols, 3)
	for _, c := range cols {
		c.Release()
	}
	groups := [][]arrow.RecordBatch{{b}}
	defer releaseGroups(groups)
	w := config.DefaultWriter
	w.Dictionary = []string{"sd"}
	props, arrowProps := writerProps(w, schema, mem)
	var want, got bytes.Buffer
	aw, err := newRowGroupWriter(schema, &want, props, arrowProps, "arrow-go")
	if err != nil {
		t.Fatal(err)
	}
	writeGroups(t, aw, groups)
	ew, err := newRowGroupWriter(schema, &got, props, arrowProps, "agora")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ew.(*encWriter); !ok {
		t.Fatalf("agora gave %T", ew)
	}
	writeGroups(t, ew, groups)
	sameParquet(t, mem, want.Bytes(), got.Bytes())
}
