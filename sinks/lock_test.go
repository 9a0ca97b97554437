package sinks

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLockOnReadOnlyOutput: where the lock file cannot be opened for
// writing (a read-only file system), an existing one is locked read-only,
// so that a run with nothing to do still succeeds; a second lock is still
// refused. With no lock file to open, the error stays.
func TestLockOnReadOnlyOutput(t *testing.T) {
	out := t.TempDir()
	l, err := AcquireLock(out, "ds")
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	defer func() { openFile = os.OpenFile }()
	openFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		if flag&(os.O_RDWR|os.O_WRONLY|os.O_CREATE) != 0 {
			return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EROFS}
		}
		return os.OpenFile(name, flag, perm)
	}
	l, err = AcquireLock(out, "ds")
	if err != nil {
		t.Fatalf("read-only output: %v", err)
	}
	if _, err := AcquireLock(out, "ds"); !errors.Is(err, ErrLocked) {
		t.Errorf("second lock: err = %v, want ErrLocked", err)
	}
	l.Release()
	if _, err := AcquireLock(out, "other"); !errors.Is(err, syscall.EROFS) {
		t.Errorf("no lock file to open: err = %v, want EROFS", err)
	}
	if _, err := os.Stat(filepath.Join(out, ".agora-other.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file made: %v", err)
	}
}
