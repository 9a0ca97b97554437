package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/sinks"
)

var errInjected = errors.New("injected fault: disk full")

// faultFS is the real file system with one injected failure: the n-th
// operation of a kind (1-based) fails. With n = 0 it only counts.
type faultFS struct {
	sinks.OS
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
		return fmt.Errorf("%s: %w", kind, errInjected)
	}
	return nil
}

func (f *faultFS) Create(name string) (sinks.File, error) {
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

func (f *faultFS) Exchange(a, b string) error {
	if err := f.hit("exchange"); err != nil {
		return err
	}
	return f.OS.Exchange(a, b)
}

func (f *faultFS) MkdirAll(p string, perm os.FileMode) error {
	if err := f.hit("mkdir"); err != nil {
		return err
	}
	return f.OS.MkdirAll(p, perm)
}

func (f *faultFS) RemoveAll(p string) error {
	if err := f.hit("removeall"); err != nil {
		return err
	}
	return f.OS.RemoveAll(p)
}

func (f *faultFS) SyncDir(dir string) error {
	if err := f.hit("syncdir"); err != nil {
		return err
	}
	return f.OS.SyncDir(dir)
}

type faultFile struct {
	sinks.File
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

// TestOutputFaults fails the output file system at every kind of
// operation, early, midway and last, and checks that the run fails with
// the cause, the previous release still verifies, nothing is left half
// written, and no goroutine or Arrow memory leaks.
func TestOutputFaults(t *testing.T) {
	cfg, base, counter := countedRun(t)
	out := base.Out
	previous, err := os.ReadFile(filepath.Join(out, "crowdrag25", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"create", "write", "sync", "rename", "mkdir", "exchange"} {
		total := counter.seen[kind]
		if total == 0 {
			t.Fatalf("a run makes no %s operation", kind)
		}
		for _, n := range uniq(1, (total+1)/2, total) {
			t.Run(fmt.Sprintf("%s_%d_of_%d", kind, n, total), func(t *testing.T) {
				defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				opts := base
				opts.FS = &faultFS{kind: kind, n: n}
				opts.Mem = mem
				err := runAll(context.Background(), cfg, opts, func(*DatasetResult) {})
				switch {
				case kind == "exchange":
					// No atomic swap: publish falls back to two renames.
					if err != nil {
						t.Fatalf("err = %v; a failed exchange falls back to renames", err)
					}
				case !errors.Is(err, errInjected):
					t.Fatalf("err = %v, want the injected fault", err)
				}
				now, _ := os.ReadFile(filepath.Join(out, "crowdrag25", "manifest.json"))
				if string(now) != string(previous) || !sinks.Published(out, "crowdrag25") {
					t.Fatal("the previous release was disturbed")
				}
				filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
					if err == nil && (strings.HasSuffix(p, ".tmp") || strings.Contains(p, ".agora-staging")) {
						t.Errorf("left behind: %s", p)
					}
					return nil
				})
			})
		}
	}
}

// countedRun publishes CrowdRAG-25's samples once (a previous release),
// then runs over it again counting every operation on the output file
// system; it returns the config, the options of those runs (--force,
// overwrite) and the count.
func countedRun(t *testing.T) (*config.Config, runOptions, *faultFS) {
	t.Helper()
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := runOptions{ConfigPath: "../../pipeline.yaml", Data: crowdData(t), Out: t.TempDir(), Only: []string{"crowdrag25"}, Workers: 2, Mode: "overwrite", Force: true}
	if err := runAll(context.Background(), cfg, base, func(*DatasetResult) {}); err != nil {
		t.Fatal(err)
	}
	counter := &faultFS{}
	opts := base
	opts.FS = counter
	if err := runAll(context.Background(), cfg, opts, func(*DatasetResult) {}); err != nil {
		t.Fatal(err)
	}
	return cfg, base, counter
}

func uniq(xs ...int) []int {
	var out []int
	seen := map[int]bool{}
	for _, x := range xs {
		if x > 0 && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// TestPublishWithPreviousLeftBehind fails the removal of the previous
// release after the new one is swapped in: the run succeeds, published,
// and says which folder was left; the next run clears it.
func TestPublishWithPreviousLeftBehind(t *testing.T) {
	cfg, base, counter := countedRun(t)
	out := base.Out
	opts := base
	last := counter.seen["removeall"] // the previous release's, after the swap
	opts.FS = &faultFS{kind: "removeall", n: last}
	var notes []string
	if err := runAll(context.Background(), cfg, opts, func(r *DatasetResult) { notes = append(notes, r.Notes...) }); err != nil {
		t.Fatalf("err = %v; the release is published, the leftover only noted", err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "previous release") || !strings.Contains(notes[0], ".agora-") {
		t.Fatalf("notes %q, want the folder left behind", notes)
	}
	if !sinks.Published(out, "crowdrag25") {
		t.Fatal("not published")
	}
	if err := runAll(context.Background(), cfg, base, func(*DatasetResult) {}); err != nil {
		t.Fatalf("next run: %v", err)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".agora-staging") || strings.HasPrefix(e.Name(), ".agora-old") {
			t.Errorf("left behind after the next run: %s", e.Name())
		}
	}
}

// TestPublishNotSynced fails the sync of the output folder after the new
// release is swapped in: the release is live, so the run succeeds with a
// note (it used to fail, and its clean-up then removed the previous
// release, which the swap had put in the staging folder); the folder
// sync before the swap still fails the run with the previous release
// intact; the next run clears what was kept.
func TestPublishNotSynced(t *testing.T) {
	cfg, base, counter := countedRun(t)
	out := base.Out
	last := counter.seen["syncdir"]
	if last < 2 {
		t.Fatalf("a run syncs %d folders, want the staging folder and the output folder", last)
	}
	previous, _ := os.ReadFile(filepath.Join(out, "crowdrag25", "manifest.json"))
	opts := base
	opts.FS = &faultFS{kind: "syncdir", n: last - 1} // the staging folder's
	if err := runAll(context.Background(), cfg, opts, func(*DatasetResult) {}); !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected fault", err)
	}
	if now, _ := os.ReadFile(filepath.Join(out, "crowdrag25", "manifest.json")); string(now) != string(previous) {
		t.Fatal("the previous release was disturbed")
	}
	opts.FS = &faultFS{kind: "syncdir", n: last}
	var notes []string
	if err := runAll(context.Background(), cfg, opts, func(r *DatasetResult) { notes = append(notes, r.Notes...) }); err != nil {
		t.Fatalf("err = %v; the release is live, the failed sync only noted", err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "could not be synced") || !strings.Contains(notes[0], ".agora-staging-crowdrag25") {
		t.Fatalf("notes %q", notes)
	}
	if !sinks.Published(out, "crowdrag25") {
		t.Fatal("not published")
	}
	if _, err := os.Stat(filepath.Join(out, ".agora-staging-crowdrag25", "_SUCCESS")); err != nil {
		t.Errorf("the previous release is not kept: %v", err)
	}
	if err := runAll(context.Background(), cfg, base, func(*DatasetResult) {}); err != nil {
		t.Fatalf("next run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, ".agora-staging-crowdrag25")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kept release not cleared by the next run: %v", err)
	}
}

// TestStaleStagingThatWillNotGo: stale staging that cannot be removed is
// set aside under another name, with a note, instead of failing this run
// and every run after it; a later run removes it.
func TestStaleStagingThatWillNotGo(t *testing.T) {
	cfg, base, _ := countedRun(t)
	out := base.Out
	staging := filepath.Join(out, ".agora-staging-crowdrag25")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(staging, "x"), []byte("x"), 0o644)
	opts := base
	opts.FS = &faultFS{kind: "removeall", n: 1}
	var notes []string
	if err := runAll(context.Background(), cfg, opts, func(r *DatasetResult) { notes = append(notes, r.Notes...) }); err != nil {
		t.Fatalf("err = %v; stale staging that will not go is set aside", err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "set aside as") {
		t.Fatalf("notes %q", notes)
	}
	aside, _ := filepath.Glob(filepath.Join(out, ".agora-stale-crowdrag25-*"))
	if len(aside) != 1 {
		t.Fatalf("set aside: %q", aside)
	}
	if err := runAll(context.Background(), cfg, base, func(*DatasetResult) {}); err != nil {
		t.Fatalf("next run: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".agora-stale-*")); len(left) != 0 {
		t.Errorf("not removed by the next run: %q", left)
	}
}
