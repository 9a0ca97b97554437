package sinks

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Release stages one dataset's output in a hidden folder beside its
// target (out/.agora-staging-<dataset>) and swaps it in only when every
// file is written: the previous release stays complete and readable
// until then.
type Release struct {
	fs           FS
	out, dataset string
	staging      string
	// Notes say what the tidying before the release left: a stale
	// folder that could not be removed, set aside under another name.
	Notes []string
	// lock is held beside the folder a symbolic link at out/<dataset>
	// points to, which other outputs may link to too; Publish and Abort
	// drop it.
	lock *Lock
}

// NewRelease does what Recover does, then makes an empty staging folder.
func NewRelease(fs FS, out, dataset string) (*Release, error) {
	r, err := recoverRelease(fs, out, dataset)
	if err != nil {
		return nil, err
	}
	if err := replaceable(r.fs, r.Target()); err != nil {
		return nil, err
	}
	if err := r.fs.MkdirAll(r.staging, 0o777); err != nil {
		return nil, fmt.Errorf("create staging: %w", err)
	}
	return r, nil
}

// Recover tidies what a killed run of dataset left in out: it puts back
// a previous release set aside by a swap that did not finish, and
// removes stale staging. NewRelease does it first; a run that has
// nothing to publish calls it alone. The caller holds the dataset's lock.
// The notes say what could not be removed and was set aside instead.
func Recover(fs FS, out, dataset string) ([]string, error) {
	r, err := recoverRelease(fs, out, dataset)
	if err != nil {
		return nil, err
	}
	r.lock.Release()
	return r.Notes, nil
}

func recoverRelease(fs FS, out, dataset string) (r *Release, rerr error) {
	fs = fsOrOS(fs)
	var linkLock *Lock
	// A symlink at out/<dataset> (a release kept on another disk) is
	// followed: the release is staged and swapped beside what it points
	// to, which a swap of the link itself would leave behind, stale.
	link := filepath.Join(out, dataset)
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(link)
		if errors.Is(err, os.ErrNotExist) {
			// A link to a release not made yet: the folder it names.
			if t, rerr := os.Readlink(link); rerr == nil {
				if !filepath.IsAbs(t) {
					t = filepath.Join(out, t)
				}
				if dir, derr := filepath.EvalSymlinks(filepath.Dir(t)); derr == nil {
					real, err = filepath.Join(dir, filepath.Base(t)), nil
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s is a symbolic link agora cannot follow (%v): point it at a folder, or remove it", link, err)
		}
		if mountPoint(real) {
			return nil, fmt.Errorf("%s links to %s, a mount point: a release is swapped in beside the folder it replaces, which a mount point's parent, on another file system, cannot take; link to a folder inside the mount", link, real)
		}
		out, dataset = filepath.Dir(real), filepath.Base(real)
		// Other outputs may link to the same folder: their runs must not
		// share its staging.
		lock, err := AcquireLock(out, dataset)
		if err != nil {
			return nil, fmt.Errorf("%s links to %s: %w", link, real, err)
		}
		defer func() {
			if r == nil || rerr != nil {
				lock.Release()
			}
		}()
		linkLock = lock
	}
	r = &Release{fs: fs, out: out, dataset: dataset, staging: filepath.Join(out, ".agora-staging-"+dataset), lock: linkLock}
	// A run killed between the two renames of a non-atomic swap left the
	// previous release aside: put it back.
	old := filepath.Join(out, ".agora-old-"+dataset)
	if _, err := r.fs.Stat(old); err == nil {
		_, err := r.fs.Stat(r.Target())
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := r.fs.Rename(old, r.Target()); err != nil {
				return nil, fmt.Errorf("restore the previous release: %w", err)
			}
		case err == nil && Published(out, dataset):
			// The swap finished but the release before it was left
			// behind (its removal failed, or the run was killed then).
			if err := r.fs.RemoveAll(old); err != nil {
				return nil, fmt.Errorf("%w: %s could not be removed: %v", ErrLeftover, old, err)
			}
		}
	}
	// Folders set aside by earlier runs (below) go when they can.
	for _, p := range staleAside(out, dataset) {
		if err := r.fs.RemoveAll(p); err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("%s, left by an earlier run, could not be removed (%v); remove it by hand", p, err))
		}
	}
	if err := r.fs.RemoveAll(r.staging); err != nil {
		// Set it aside, so that this run (and the next) can stage
		// again: a folder that will not go must not stop every run.
		aside := filepath.Join(out, fmt.Sprintf(".agora-stale-%s-%d", dataset, time.Now().UnixNano()))
		if rerr := r.fs.Rename(r.staging, aside); rerr != nil {
			return nil, fmt.Errorf("remove stale staging %s (left by an earlier run; remove it by hand): %w", r.staging, err)
		}
		r.Notes = append(r.Notes, fmt.Sprintf("stale staging %s could not be removed (%v); set aside as %s, which later runs try to remove", r.staging, err, aside))
	}
	return r, nil
}

// staleAside lists the folders earlier runs set aside for dataset in out:
// .agora-stale-<dataset>-<digits>, and no other dataset's.
func staleAside(out, dataset string) []string {
	entries, _ := os.ReadDir(out)
	var paths []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), ".agora-stale-"+dataset+"-")
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			paths = append(paths, filepath.Join(out, e.Name()))
		}
	}
	return paths
}

// Dir is the staging folder to write the dataset's tables into.
func (r *Release) Dir() string { return r.staging }

// Target is the folder the release is published to.
func (r *Release) Target() string { return filepath.Join(r.out, r.dataset) }

// WriteJSON writes v as indented JSON (two spaces, HTML left unescaped)
// into the staging folder and syncs it.
func (r *Release) WriteJSON(name string, v any) error {
	return r.WriteStream(name, func(w io.Writer) error { return EncodeJSON(w, v) })
}

// EncodeJSON writes v to w as WriteJSON lays it out: indented by two
// spaces, HTML left unescaped, a newline at the end.
func EncodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteFile writes a file into the staging folder and syncs it.
func (r *Release) WriteFile(name string, data []byte) error {
	return r.WriteStream(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteStream creates a file in the staging folder, lets write fill it
// through a buffer, and syncs it: a file written in pieces (a manifest
// listing thousands of files) is never held whole in memory.
func (r *Release) WriteStream(name string, write func(w io.Writer) error) error {
	p := filepath.Join(r.staging, name)
	f, err := r.fs.Create(p)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Publish writes _SUCCESS last, then swaps the staging folder in place of
// the previous release.
func (r *Release) Publish() error {
	defer r.lock.Release()
	if err := r.WriteFile("_SUCCESS", nil); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	// Every folder of the release, not only its top: a Parquet file is
	// synced before it is renamed into its partition folder, and the
	// rename is durable only once that folder is synced too.
	if err := syncTree(r.fs, r.staging); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	target := r.Target()
	if err := replaceable(r.fs, target); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	old := filepath.Join(r.out, ".agora-old-"+r.dataset)
	if err := r.fs.RemoveAll(old); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	// Where the kernel can, swap the two folders in one step: readers see
	// the old release or the new one, never neither.
	if _, err := r.fs.Stat(target); err == nil {
		if err := r.fs.Exchange(r.staging, target); err == nil {
			if err := r.fs.SyncDir(r.out); err != nil {
				// The new release is in place: this is no failure to
				// undo, and the previous one stays until the next run.
				return fmt.Errorf("%w (%v): the previous release is kept in %s until the next run", ErrNotSynced, err, r.staging)
			}
			if err := r.fs.RemoveAll(r.staging); err != nil { // now the previous release
				return fmt.Errorf("%w: the previous release, now in %s, could not be removed: %v", ErrLeftover, r.staging, err)
			}
			return nil
		}
	}
	hadOld := false
	if _, err := r.fs.Stat(target); err == nil {
		if err := r.fs.Rename(target, old); err != nil {
			return fmt.Errorf("publish: move previous release aside: %w", err)
		}
		hadOld = true
	}
	if err := r.fs.Rename(r.staging, target); err != nil {
		if hadOld {
			r.fs.Rename(old, target)
		}
		return fmt.Errorf("publish: %w", err)
	}
	if err := r.fs.SyncDir(r.out); err != nil {
		if !hadOld {
			return fmt.Errorf("%w (%v)", ErrNotSynced, err)
		}
		return fmt.Errorf("%w (%v): the previous release is kept in %s until the next run", ErrNotSynced, err, old)
	}
	if hadOld {
		if err := r.fs.RemoveAll(old); err != nil {
			return fmt.Errorf("%w: the previous release, now in %s, could not be removed: %v", ErrLeftover, old, err)
		}
	}
	return nil
}

// syncTree syncs every folder under root, root last.
func syncTree(fs FS, root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := fs.SyncDir(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

// ErrNotRelease is returned by NewRelease and Publish when the folder a
// release would replace holds something else: a release is swapped in
// whole, and the folder it replaces removed.
var ErrNotRelease = errors.New("not an agora release, so agora will not replace it")

// replaceable returns ErrNotRelease, wrapped with what to do, unless
// target is absent, empty, or a release (it holds _SUCCESS, or a
// manifest.json agora wrote, as every release agora published does).
// Whatever else is there (the inputs, when --out names the data folder;
// a user's own files) is not agora's to remove.
func replaceable(fs FS, target string) error {
	fi, err := fs.Stat(target)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is a file, %w: move it, or choose another --out", target, ErrNotRelease)
	}
	if _, err := fs.Stat(filepath.Join(target, "_SUCCESS")); err == nil {
		return nil
	}
	// A release whose _SUCCESS is gone still has agora's manifest; a
	// manifest.json of another's (a dataset's own) is not agora's.
	if b, err := os.ReadFile(filepath.Join(target, "manifest.json")); err == nil {
		var m struct {
			Agora string `json:"agora_version"`
		}
		if json.Unmarshal(b, &m) == nil && m.Agora != "" {
			return nil
		}
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return fmt.Errorf("%s: %w; agora replaces a release only once it sees it is one", target, err)
	}
	if len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("%s holds files but no _SUCCESS or agora manifest.json: it is %w; move it aside, or choose another --out (is --out the data folder?)", target, ErrNotRelease)
}

// ErrLeftover is returned by Publish when the new release is in place
// but the previous one, moved aside, could not be removed: the run
// succeeded, and the folder named in the error is left to remove (the
// next run tries again).
var ErrLeftover = errors.New("published, but the previous release was left behind")

// ErrNotSynced is returned by Publish when the new release is in place
// but the folder holding it could not be synced to disk: readers see the
// new release, which a crash of the machine before the disk catches up
// could undo. The run succeeded; the previous release is kept until the
// next run.
var ErrNotSynced = errors.New("published, but the output folder could not be synced to disk")

// Published reports whether out/<dataset> holds a complete release
// (its _SUCCESS marker is there).
func Published(out, dataset string) bool {
	_, err := os.Stat(filepath.Join(out, dataset, "_SUCCESS"))
	return err == nil
}

// Abort removes the staging folder.
func (r *Release) Abort() {
	r.fs.RemoveAll(r.staging)
	r.lock.Release()
}

// mountPoint reports whether the folder p is on another file system than
// its parent.
func mountPoint(p string) bool {
	var a, b syscall.Stat_t
	if syscall.Stat(p, &a) != nil || syscall.Stat(filepath.Dir(p), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}
