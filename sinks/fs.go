package sinks

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// FS is the small file system the sinks write through. OS is the real
// one; tests inject faults through their own. Every method behaves like
// its os package namesake.
type FS interface {
	MkdirAll(path string, perm os.FileMode) error
	Create(name string) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	RemoveAll(path string) error
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes a folder's entries (new and renamed files) durable.
	SyncDir(path string) error
	// Exchange swaps two folders in one step; it returns an error when
	// the file system cannot, and the caller falls back to two renames.
	Exchange(a, b string) error
}

// File is a file open for writing.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// OS is the operating system's file system.
type OS struct{}

// MkdirAll is os.MkdirAll.
func (OS) MkdirAll(p string, perm os.FileMode) error { return os.MkdirAll(p, perm) }

// Create is os.Create.
func (OS) Create(name string) (File, error) { return os.Create(name) }

// Rename is os.Rename.
func (OS) Rename(a, b string) error { return os.Rename(a, b) }

// Remove is os.Remove.
func (OS) Remove(name string) error { return os.Remove(name) }

// RemoveAll is os.RemoveAll.
func (OS) RemoveAll(p string) error { return os.RemoveAll(p) }

// Stat is os.Stat.
func (OS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

// SyncDir fsyncs a folder.
func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Exchange swaps two paths atomically with renameat2(RENAME_EXCHANGE).
func (OS) Exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

func fsOrOS(fs FS) FS {
	if fs == nil {
		return OS{}
	}
	return fs
}
