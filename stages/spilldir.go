package stages

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// runDirPattern names a run's folder of temporary files under the
// temporary directory.
const runDirPattern = "agora-run-*"

// runDirLock is the file in a run's folder that the run holds an flock
// on for as long as it lives.
const runDirLock = ".lock"

// OpenRunSpillDir gives this run a folder of its own for the stages'
// temporary files (spilled batches and key runs), under base ("" is the
// system's temporary directory), and points SpillDir at it. The run
// holds an flock on a file in it, which the kernel drops when the run
// ends however it ends; so first it removes the folders of earlier runs
// whose flock is free: runs killed (kill -9, a crash) before they could
// remove their own. done removes the folder and restores SpillDir.
func OpenRunSpillDir(base string) (done func(), err error) {
	from := ""
	if base == "" {
		base = os.TempDir()
		if os.Getenv("TMPDIR") != "" {
			from = " (from TMPDIR; set it to a folder that exists and can be written)"
		}
	}
	removeDeadRunDirs(base)
	dir, err := os.MkdirTemp(base, runDirPattern)
	if err != nil {
		return nil, fmt.Errorf("temporary folder %s%s: %w", base, from, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, runDirLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		os.RemoveAll(dir)
		return nil, fmt.Errorf("temporary folder %s: %w", dir, err)
	}
	saved := SpillDir
	SpillDir = dir
	return func() {
		SpillDir = saved
		os.RemoveAll(dir)
		f.Close() // the flock goes with it
	}, nil
}

// removeDeadRunDirs removes the run folders under base whose lock file
// no living run holds. A folder without its lock file, or whose lock
// file is younger than runDirGrace, may be a run starting now (between
// making the file and locking it), and is left alone.
func removeDeadRunDirs(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, runDirPattern))
	for _, dir := range dirs {
		f, err := os.OpenFile(filepath.Join(dir, runDirLock), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		// Held (EWOULDBLOCK): a living run's. Any other error (a file
		// system without flock): not ours to judge either.
		fi, err := f.Stat()
		if err == nil && time.Since(fi.ModTime()) > runDirGrace && syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(dir) // its run is gone
		}
		f.Close()
	}
}

// runDirGrace is how old a run folder's lock file must be before a free
// lock means its run is gone.
const runDirGrace = time.Minute
