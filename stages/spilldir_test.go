package stages

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunSpillDir checks that a run's temporary files go to a folder of
// its own, removed when it closes; that the folders of dead runs (their
// lock free) are removed when the next run opens; and that a living
// run's folder, and a folder without its lock file yet or with a lock
// file made just now, are left alone.
func TestRunSpillDir(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, lock bool) string {
		dir := filepath.Join(base, name)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "agora-spill-1.arrows"), []byte("x"), 0o644)
		if lock {
			os.WriteFile(filepath.Join(dir, runDirLock), nil, 0o600)
			old := time.Now().Add(-2 * runDirGrace)
			os.Chtimes(filepath.Join(dir, runDirLock), old, old)
		}
		return dir
	}
	dead := mk("agora-run-dead", true)
	young := mk("agora-run-young", true) // a run between making its lock file and locking it
	now := time.Now()
	os.Chtimes(filepath.Join(young, runDirLock), now, now)
	starting := mk("agora-run-starting", false)
	alive := mk("agora-run-alive", true)
	f, err := os.OpenFile(filepath.Join(alive, runDirLock), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	other := mk("not-agora", true)

	saved := SpillDir
	closeDir, err := OpenRunSpillDir(base)
	if err != nil {
		t.Fatal(err)
	}
	mine := SpillDir
	if filepath.Dir(mine) != base || mine == saved {
		t.Fatalf("SpillDir %q, want a new folder in %s", mine, base)
	}
	sf, err := newSpillFile(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(sf.f.Name()) != mine {
		t.Errorf("spill file %s is not in the run's folder %s", sf.f.Name(), mine)
	}
	sf.f.Close()
	for dir, want := range map[string]bool{dead: false, young: true, starting: true, alive: true, other: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
	closeDir()
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Errorf("the run's folder is still there after close: %v", err)
	}
	if SpillDir != saved {
		t.Errorf("SpillDir %q after close, want %q back", SpillDir, saved)
	}
}

// TestRunSpillDirNamesTMPDIR: a TMPDIR that does not exist is named as
// such, where the error said only "temporary folder: stat …".
func TestRunSpillDirNamesTMPDIR(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	t.Setenv("TMPDIR", missing)
	_, err := OpenRunSpillDir("")
	if err == nil || !strings.Contains(err.Error(), "temporary folder "+missing+" (from TMPDIR") {
		t.Errorf("err = %v", err)
	}
}
