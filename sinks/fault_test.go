package sinks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// errDiskFull is the fault faultFS injects.
var errDiskFull = errors.New("injected: no space left on device")

// faultFS is the real file system with one injected failure: the n-th
// operation of a kind (1-based) fails; with n = 0 it only counts.
type faultFS struct {
	OS
	kind string
	n    int
	mu   sync.Mutex
	seen map[string]int
}

func (f *faultFS) hit(kind string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[string]int{}
	}
	f.seen[kind]++
	if kind == f.kind && f.seen[kind] == f.n {
		return errDiskFull
	}
	return nil
}

// Create fails when its turn comes.
func (f *faultFS) Create(name string) (File, error) {
	if err := f.hit("create"); err != nil {
		return nil, err
	}
	file, err := f.OS.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}
func (f *faultFS) Rename(a, b string) error {
	if err := f.hit("rename"); err != nil {
		return err
	}
	return f.OS.Rename(a, b)
}

type faultFile struct {
	File
	fs *faultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.hit("write"); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}
func (f *faultFile) Sync() error {
	if err := f.fs.hit("sync"); err != nil {
		return err
	}
	return f.File.Sync()
}
func (f *faultFile) Close() error {
	if err := f.fs.hit("close"); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}

// faultRun writes 3 partitions of rows with long strings (row groups
// large enough for the column-parallel writer when parallel), plus
// rejects, then closes; it returns the error.
func faultRun(t *testing.T, root string, mem memory.Allocator, fs FS, parallel bool) (err error) {
	w := config.DefaultWriter
	w.RowGroupRows = 200
	w.Dictionary = []string{"dim"}
	sink, err := NewTable(root, "t", testSchema, []string{"dim"}, w, mem)
	if err != nil {
		t.Fatal(err)
	}
	sink.FS = fs
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	long := strings.Repeat("x", 300)
	rnd := uint64(1)
	word := func() string {
		var b strings.Builder
		for j := 0; j < 40; j++ {
			rnd = rnd*6364136223846793005 + 1442695040888963407
			fmt.Fprintf(&b, "%08x", rnd>>32)
		}
		return b.String()
	}
	for k := 0; k < 4; k++ {
		var sb strings.Builder
		sb.WriteString("[")
		for i := 0; i < 400; i++ {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `{"id":"%s%d","dim":"%c","votes":["a","%d"],"_line":%d}`, word(), i, 'x'+rune(i%3), i, k*400+i+1)
		}
		sb.WriteString("]")
		b := batch(t, mem, sb.String())
		werr := sink.Write(t.Context(), b)
		b.Release()
		if werr != nil {
			sink.Abort()
			return werr
		}
		rs := make([]pipeline.Reject, 500)
		for i := range rs {
			rs[i] = pipeline.Reject{Rule: "r", Reason: "bad " + long, File: "f", Line: int64(i)}
		}
		if rerr := sink.Reject(t.Context(), rs); rerr != nil {
			sink.Abort()
			return rerr
		}
	}
	_, err = sink.Close()
	return err
}

// TestTableFaultsReleaseMemory fails every create, write, sync, rename
// and close of a table's files in turn: the table returns the fault,
// leaves no temporary file, and releases every Arrow buffer. A failed
// write in a column-parallel row group's close left arrow-go's column
// writers unreleased, until the file writer kept the first error and let
// arrow-go close the rest.
func TestTableFaultsReleaseMemory(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		old := parallelMin
		if parallel {
			parallelMin = 0
		} else {
			parallelMin = 1 << 40
		}
		counter := &faultFS{}
		if err := faultRun(t, t.TempDir(), memory.NewGoAllocator(), counter, parallel); err != nil {
			t.Fatal(err)
		}
		t.Logf("parallel=%v ops %v", parallel, counter.seen)
		for _, kind := range []string{"create", "write", "sync", "rename", "close"} {
			total := counter.seen[kind]
			seen := map[int]bool{}
			for _, n := range []int{1, 2, total / 2, total - 1, total} {
				if n < 1 || seen[n] {
					continue
				}
				seen[n] = true
				t.Run(fmt.Sprintf("parallel=%v/%s_%d", parallel, kind, n), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					root := t.TempDir()
					err := faultRun(t, root, mem, &faultFS{kind: kind, n: n}, parallel)
					if err == nil || strings.Contains(err.Error(), "PANIC") || !errors.Is(err, errDiskFull) {
						t.Errorf("err = %v, want the injected fault", err)
					}
					filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
						if err == nil && strings.HasSuffix(p, ".tmp") {
							t.Errorf("left behind: %s", p)
						}
						return nil
					})
				})
			}
		}
		parallelMin = old
	}
}
