package sinks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is returned when another run holds a dataset's lock.
var ErrLocked = errors.New("locked by another run")

// Lock is an exclusive lock on one dataset's output, so two runs on the
// same output cannot interleave. It is an flock on a hidden file beside
// the dataset folder: the kernel drops it when the holder exits, even on
// kill -9, so a lock is never stale.
type Lock struct {
	f *os.File
}

// AcquireLock takes the lock of out/<dataset> without waiting. When
// another run holds it, the error names that run (pid, host, start).
func AcquireLock(out, dataset string) (*Lock, error) {
	if err := os.MkdirAll(out, 0o777); err != nil {
		return nil, err
	}
	p := filepath.Join(out, ".agora-"+dataset+".lock")
	f, err := openFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		// A read-only output can still be found unchanged: an flock
		// needs no write access to the lock file, only the file.
		if ro, rerr := openFile(p, os.O_RDONLY, 0); rerr == nil {
			f, err = ro, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(p)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			// Named by the lock file, which exists, rather than by what
			// it guards (a dataset's folder, or fetch's data root).
			return nil, fmt.Errorf("%s: %w (%s); wait for it to finish", p, ErrLocked, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	host, _ := os.Hostname()
	f.Truncate(0)
	fmt.Fprintf(f, "pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	f.Sync()
	return &Lock{f: f}, nil
}

// openFile is os.OpenFile; tests make it fail as a read-only file
// system does.
var openFile = os.OpenFile

// Release drops the lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
