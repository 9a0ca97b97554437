package stages

import (
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSpillFileReadOnce: a spill file gives back what was written, once;
// writing or reading it again after that is an error naming the file,
// not a crash, and remove deletes it.
func TestSpillFileReadOnce(t *testing.T) {
	setForTest(t, &SpillDir, t.TempDir())
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := tcSchema(t, "g:string", "_line:int64")
	f, err := newSpillFileSize(s, mem, 4096)
	if err != nil {
		t.Fatal(err)
	}
	in := tcBatch(t, mem, s, `[{"g":"a","_line":1},{"g":"b","_line":2}]`)
	defer in.Release()
	if err := f.write([]arrow.RecordBatch{in, in}); err != nil {
		t.Fatal(err)
	}
	var rows []string
	if err := f.each(func(b arrow.RecordBatch) error { rows = append(rows, tcRows(b)...); return nil }); err != nil {
		t.Fatal(err)
	}
	tcEqual(t, "rows", rows, append(tcRows(in), tcRows(in)...))
	name := f.f.Name()
	if err := f.write([]arrow.RecordBatch{in}); err == nil {
		t.Error("a write after the file was read gave no error")
	}
	if err := f.each(func(arrow.RecordBatch) error { return nil }); err == nil {
		t.Error("a second read gave no error")
	}
	f.remove()
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("remove left %s: %v", name, err)
	}
}
