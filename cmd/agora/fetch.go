package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/sinks"
	"github.com/agora-etl/agora/stages"
)

// ErrChecksum is returned when a download does not match its published
// checksum.
var ErrChecksum = errors.New("checksum mismatch")

// fetchOptions are the settings of one `agora fetch`.
type fetchOptions struct {
	Data    string
	BaseURL string // replaces scheme and host of every URL (tests, mirrors)
	Force   bool
	Client  *http.Client
	Log     *slog.Logger
	// Progress, when set, tracks each download's bytes.
	Progress progressUI
	// Idle is how long a download may receive nothing before it is
	// given up on (default 2 minutes): a server that stops sending
	// mid-body would otherwise hold a nightly job for ever.
	Idle time.Duration
}

func newFetchCmd(stdout io.Writer, g *globalOptions) *cobra.Command {
	var configPath string
	opts := fetchOptions{}
	cmd := &cobra.Command{
		Use:   "fetch [DATASET...]",
		Short: "Download the datasets' official release files into the data root, as `run --data` expects them",
		Long: `fetch downloads each dataset's release files from the locations declared under
fetch: in pipeline.yaml and lays them out under --data at the paths the
dataset's inputs read. A download goes to NAME.part first and is resumed with
an HTTP Range request when that file is there (when a checksum is published to
verify the result; otherwise it starts over); it is renamed into place only
once complete and checked. Where a checksum is published (sha256: or md5: in
pipeline.yaml) it is verified and a mismatch is an error; where none is
published fetch says so and prints the sha256 of what it got, and checks
that a .gz file reads to its gzip trailer and a .parquet file ends in its
footer (a body cut short is an error). Archives
(archive: tar.gz or zip) are extracted with the standard library; only
regular files below extract: are written, never outside --data.

A file already in place is not downloaded again (its checksum is verified
when one is published); --force downloads it anyway. A file with no
published checksum whose server gave an ETag or Last-Modified (kept in
DATA/.agora-fetch/) is asked after with a conditional GET and downloaded
again when it changed upstream; a server that cannot be asked keeps it,
with a warning.

--base-url (or AGORA_FETCH_BASE_URL) replaces the scheme and host of every
URL, for a mirror or a test server.`,
		Example: `  agora fetch --data ~/datasets                 # every dataset
  agora fetch habermas --data ~/datasets
  agora fetch --data ~/datasets && agora run --data ~/datasets --out ~/releases`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(configPath)
			if err != nil {
				return err
			}
			if opts.Data == "" {
				opts.Data = cfg.Data
			}
			if opts.BaseURL == "" {
				opts.BaseURL = os.Getenv("AGORA_FETCH_BASE_URL")
			}
			ids := cfg.DatasetIDs()
			if len(args) > 0 {
				ids = args
			}
			for _, id := range ids {
				if _, ok := cfg.Datasets[id]; !ok {
					return usageError{fmt.Errorf("no dataset %q in %s (have %s)", id, cfg.File(), strings.Join(cfg.DatasetIDs(), ", "))}
				}
			}
			opts.Log = g.logger()
			ui, done := g.progress(cmd.Context(), opts.Log)
			defer done()
			opts.Progress = ui
			return fetchAll(cmd.Context(), cfg, ids, opts, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", "pipeline.yaml", "pipeline file")
	f.StringVar(&opts.Data, "data", "", "data root to download into (default: pipeline.yaml's data)")
	f.StringVar(&opts.BaseURL, "base-url", "", "replace scheme and host of every URL with this (a mirror; env AGORA_FETCH_BASE_URL)")
	f.BoolVar(&opts.Force, "force", false, "download files that are already in place again")
	return cmd
}

// fetchAll downloads every release file of the given datasets.
func fetchAll(ctx context.Context, cfg *config.Config, ids []string, opts fetchOptions, stdout io.Writer) error {
	if opts.Client == nil {
		// No overall timeout (a release file can take long); a server that
		// accepts the connection but never answers is given up on.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = time.Minute
		// The bytes as served: a .gz file that a server labels
		// Content-Encoding: gzip (a common misconfiguration) would
		// otherwise be decompressed by the transport and written, as
		// plain text, under the .gz name. curl and wget keep it as is.
		tr.DisableCompression = true
		opts.Client = &http.Client{Transport: tr}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	// Two fetches into one data root would share their .part and
	// extraction folders.
	// A data root that cannot be written takes no download either, so
	// there is nothing to lock against there; every file in place still
	// says so.
	lock, err := sinks.AcquireLock(filepath.Join(opts.Data, ".agora-fetch"), "fetch")
	switch {
	case errors.Is(err, sinks.ErrLocked):
		return fmt.Errorf("another fetch into %s is running: %w", opts.Data, err)
	case errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission):
		opts.Log.Warn("data root not writable: fetching without a lock", "data", opts.Data, "error", err)
	case err != nil:
		return err
	}
	defer lock.Release()
	// Every file is tried: one that fails (a host down, a checksum that
	// does not match) keeps no other from being fetched; the failures are
	// reported together at the end.
	var failed []error
	for _, id := range ids {
		d := cfg.Datasets[id]
		if len(d.Fetch) == 0 {
			fmt.Fprintf(stdout, "%s: no fetch: locations in %s; download its inputs by hand (see its homepage %s)\n", id, cfg.File(), d.Homepage)
			continue
		}
		for _, f := range d.Fetch {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			msg, err := fetchFile(ctx, f, opts)
			if err != nil {
				var ue usageError
				if errors.As(err, &ue) {
					return err // the same for every file
				}
				fmt.Fprintf(stdout, "%s: failed: %s\n", id, f.To)
				failed = append(failed, fmt.Errorf("fetch %s: %w", id, err))
				continue
			}
			fmt.Fprintf(stdout, "%s: %s\n", id, msg)
			if f.Note != "" {
				fmt.Fprintf(stdout, "%s: note: %s\n", id, f.Note)
			}
		}
	}
	return errors.Join(failed...)
}

// rebase points u at base's scheme and host, keeping u's path and query.
func rebase(u, base string) (string, error) {
	if base == "" {
		return u, nil
	}
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	pb, err := url.Parse(base)
	if err != nil || pb.Host == "" {
		return "", usageError{fmt.Errorf("--base-url %q: want scheme://host[/prefix]", base)}
	}
	pb.Path = strings.TrimSuffix(pb.Path, "/") + pu.Path
	pb.RawQuery = pu.RawQuery
	return pb.String(), nil
}

// fetchFile downloads (or resumes) one release file, verifies it and puts
// it in place; it returns a line for the user.
func fetchFile(ctx context.Context, f *config.FetchFile, opts fetchOptions) (string, error) {
	u, err := rebase(f.URL, opts.BaseURL)
	if err != nil {
		return "", err
	}
	dest := filepath.Join(opts.Data, filepath.FromSlash(f.To))
	pinned := f.SHA256 != "" || f.MD5 != ""
	changed := ""
	if f.Archive != "" {
		restoreAside(dest)
	}
	if !opts.Force {
		done, msg, err := alreadyFetched(f, dest)
		if err != nil {
			return "", err
		}
		rec := readRecord(opts.Data, f.To)
		if done && f.Archive != "" && !sameListing(rec, dest) {
			// Files of the extracted folder removed, added or changed in
			// size since it was extracted: a folder cut short (by hand,
			// or by a run killed before extraction was atomic) is made
			// whole again, pinned or not, rather than converted as it is.
			done, changed = false, "its files changed since it was extracted"
			opts.Log.Warn("extracted folder changed since it was fetched; fetching it again", "path", dest)
		}
		if done && !pinned {
			// No checksum pins the file: ask the server whether it changed.
			var why string
			changed, why = upstreamChange(ctx, opts, u, f, dest, rec)
			if changed == "" {
				if why != "" {
					return why, nil
				}
				return msg, nil
			}
		} else if done {
			return msg, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o777); err != nil {
		return "", err
	}
	part := dest + ".part"
	if f.Archive != "" {
		part = dest + "." + f.Archive + ".part"
	}
	if opts.Force || !pinned {
		// Without a published checksum nothing would tell a resumed file
		// whose start came from another version of it (a release that
		// changes, like a repository's HEAD archive): start over.
		os.Remove(part)
	}
	n, resumed, rec, err := downloadRetrying(ctx, opts, u, part, f.To, pinned)
	if err != nil {
		return "", err
	}
	rec.URL = f.URL
	sums, err := fileSums(part)
	if err != nil {
		return "", err
	}
	if err := verify(f, sums); err != nil {
		if pinned && f.Archive == "" && cutShort(part, f.To) {
			// A body a server cut short without saying its length is
			// not a wrong checksum: kept, to be resumed.
			return "", fmt.Errorf("%s: the download ends early (%s bytes, the start of a %s file without its end); it is kept as %s: run fetch again to resume", u, humanBytes(n), filepath.Ext(f.To), part)
		}
		os.Remove(part)
		return "", fmt.Errorf("%s: %w (the download was removed; run fetch again, or check the published checksum in pipeline.yaml)", u, err)
	}
	check := "sha256 " + sums["sha256"] + " (no checksum published; not verified)"
	if !pinned && f.Archive == "" {
		// Nothing else tells a body cut short where the server sent no
		// length (HTTP/1.0, or a proxy that drops it) from the file.
		format, err := wholeFile(part, f.To)
		if err != nil {
			os.Remove(part)
			return "", fmt.Errorf("%s: %w (the download was removed; run fetch again)", u, err)
		}
		if format != "" {
			check += "; a whole " + format + " file"
		}
	}
	switch {
	case f.SHA256 != "":
		check = "sha256 verified"
	case f.MD5 != "":
		check = "md5 verified (the published checksum); sha256 " + sums["sha256"]
	}
	how := "downloaded"
	if resumed {
		how = "resumed"
	}
	if changed != "" {
		how += " (" + changed + ")"
	}
	if f.Archive == "" {
		if err := os.Rename(part, dest); err != nil {
			return "", err
		}
		keepRecord(opts.Data, f.To, dest, rec, pinned)
		opts.Log.Info("fetched", "url", u, "path", dest, "bytes", n, "resumed", resumed)
		return fmt.Sprintf("%s %s (%s) from %s; %s", how, f.To, humanBytes(n), u, check), nil
	}
	files, err := extract(ctx, part, f, dest)
	if err != nil {
		return "", fmt.Errorf("%s: %w", u, err)
	}
	os.Remove(part)
	keepRecord(opts.Data, f.To, dest, rec, pinned)
	opts.Log.Info("fetched", "url", u, "path", dest, "bytes", n, "files", files, "resumed", resumed)
	return fmt.Sprintf("%s %s (%s, %d files extracted) from %s; %s", how, f.To, humanBytes(n), files, u, check), nil
}

// alreadyFetched reports whether dest is in place (and matches a
// published checksum).
func alreadyFetched(f *config.FetchFile, dest string) (bool, string, error) {
	fi, err := os.Stat(dest)
	if err != nil {
		return false, "", nil
	}
	if f.Archive != "" {
		if !fi.IsDir() {
			return false, "", nil
		}
		entries, _ := os.ReadDir(dest)
		if len(entries) == 0 {
			return false, "", nil
		}
		return true, fmt.Sprintf("%s is in place (%d entries); --force downloads it again", f.To, len(entries)), nil
	}
	if f.SHA256 == "" && f.MD5 == "" {
		return true, fmt.Sprintf("%s is in place (no checksum published to verify it); --force downloads it again", f.To), nil
	}
	sums, err := fileSums(dest)
	if err != nil {
		return false, "", err
	}
	if err := verify(f, sums); err != nil {
		return false, "", fmt.Errorf("%s is in place but %w: it is another file than the one published (a sample, another version?); to fetch the published file beside it, give another --data; to replace it, delete it or run with --force", dest, err)
	}
	return true, fmt.Sprintf("%s is in place, checksum verified", f.To), nil
}

// download GETs u into part, resuming from part's size with a Range
// request. It returns the size of the complete file and whether it
// resumed.
//
// resumable says whether the next fetch resumes a download cut short
// (a checksum is published to verify the result), for its error to say.
func download(ctx context.Context, opts fetchOptions, u, part, name string, resumable bool) (n int64, resumed bool, rec fetchRecord, err error) {
	again := "run fetch again to resume"
	if !resumable {
		again = "run fetch again; with no published checksum to verify a resumed file, it starts over"
	}
	var have int64
	if fi, err := os.Stat(part); err == nil {
		have = fi.Size()
	}
	idle := opts.Idle
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, false, rec, err
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := opts.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, rec, fmt.Errorf("GET %s: %w", u, err)
		}
		return 0, false, rec, &retryable{err: fmt.Errorf("GET %s: %w", u, err)}
	}
	defer resp.Body.Close()
	flags := os.O_CREATE | os.O_WRONLY
	var total int64 = -1
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			return 0, false, rec, fmt.Errorf("GET %s: asked for bytes from %d, got Content-Range %q: the server does not resume it right (fetch --force starts over, or remove %s)", u, have, resp.Header.Get("Content-Range"), part)
		}
		flags |= os.O_APPEND
		total = size
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		// The partial file is as long as the file or longer: start over,
		// once; a partial file that cannot be removed is an error, not a
		// reason to ask again.
		resp.Body.Close()
		if err := os.Remove(part); err != nil {
			return 0, false, rec, fmt.Errorf("GET %s: the server has fewer bytes than %s holds (%d), which cannot be removed to start over: %w", u, part, have, err)
		}
		return download(ctx, opts, u, part, name, resumable)
	case resp.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC
		have = 0
		total = resp.ContentLength
	default:
		err := fmt.Errorf("GET %s: %s", u, resp.Status)
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			// A server busy or failing for a moment: asked again.
			return 0, false, rec, &retryable{err: err, after: retryAfter(resp.Header.Get("Retry-After"))}
		}
		return 0, false, rec, err
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return 0, false, rec, err
	}
	var w io.Writer = out
	if opts.Progress != nil {
		t := opts.Progress.Track(name, total, have, "bytes")
		defer t.Done()
		w = io.MultiWriter(out, t)
	}
	stalled := fmt.Errorf("nothing received for %s: the server stopped sending", idle)
	watchdog := time.AfterFunc(idle, func() { cancel(stalled) })
	n, err = io.Copy(w, &idleReader{r: resp.Body, timer: watchdog, idle: idle})
	watchdog.Stop()
	if errors.Is(context.Cause(rctx), stalled) && ctx.Err() == nil {
		err = stalled
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, false, rec, fmt.Errorf("GET %s: after %d bytes: %w (%s)", u, have+n, err, again)
	}
	if total >= 0 && have+n != total {
		return 0, false, rec, fmt.Errorf("GET %s: got %d of %d bytes (%s)", u, have+n, total, again)
	}
	// What the server says identifies this version of the file, for the
	// next fetch to ask whether it changed.
	rec.ETag, rec.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	return have + n, have > 0, rec, nil
}

// retryable is an error of a download worth trying again: a server that
// answered 429 or a 5xx, or a connection that failed before an answer.
// after is the wait the server asked for (Retry-After), or 0.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// fetchTries is how many times a download is tried when it fails in a
// way worth trying again; fetchBackoff the first wait between tries,
// doubled after each, and fetchMaxWait the longest wait (a Retry-After
// asking more is given up on). Variables so that tests can make them
// small.
var (
	fetchTries   = 3
	fetchBackoff = 2 * time.Second
	fetchMaxWait = 2 * time.Minute
)

// downloadRetrying is download, tried again after a wait when it fails
// in a way worth trying again (see retryable); a partial file is resumed
// as download resumes it.
func downloadRetrying(ctx context.Context, opts fetchOptions, u, part, name string, resumable bool) (n int64, resumed bool, rec fetchRecord, err error) {
	wait := fetchBackoff
	for try := 1; ; try++ {
		n, resumed, rec, err = download(ctx, opts, u, part, name, resumable)
		var r *retryable
		if err == nil || !errors.As(err, &r) || try >= fetchTries {
			return n, resumed, rec, err
		}
		w := wait
		if r.after > 0 {
			w = r.after
		}
		if w > fetchMaxWait {
			return n, resumed, rec, fmt.Errorf("%w (the server asks to wait %s)", err, r.after)
		}
		opts.Log.Warn("download failed; trying again", "url", u, "error", err.Error(), "wait", w.String(), "try", try+1)
		select {
		case <-ctx.Done():
			return n, resumed, rec, err
		case <-time.After(w):
		}
		wait *= 2
	}
}

// retryAfter reads a Retry-After header (seconds, or an HTTP date), or
// returns 0.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// idleReader restarts timer at every read that brings bytes.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (i *idleReader) Read(p []byte) (int, error) {
	n, err := i.r.Read(p)
	if n > 0 {
		i.timer.Reset(i.idle)
	}
	return n, err
}

// wholeFile checks, for the formats that can tell (by the name to), that
// the file at p ends where its format says it ends: a gzip stream reads
// to its last member's trailer (length and CRC), a Parquet file starts
// and ends with PAR1 around a footer that fits. It returns the format
// checked, or "" for a file whose format cannot tell.
func wholeFile(p, to string) (format string, err error) {
	switch strings.ToLower(filepath.Ext(to)) {
	case ".gz":
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		defer f.Close()
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err == nil {
			_, err = io.Copy(io.Discard, zr)
		}
		if err != nil {
			return "", fmt.Errorf("%s is not a whole gzip file: %w", to, err)
		}
		return "gzip", nil
	case ".parquet":
		if why := stages.NotParquet(p); why != "" {
			return "", fmt.Errorf("%s is not a whole Parquet file: %s", to, why)
		}
		return "Parquet", nil
	}
	return "", nil
}

// cutShort reports whether the file at p is, by its format (the name
// to), the start of a whole file without its end: a gzip stream that
// ends inside a member, a Parquet file that starts with PAR1 but does
// not end with its footer. Anything else that fails (an HTML page
// instead of the file) is not taken for a start to resume.
func cutShort(p, to string) bool {
	_, err := wholeFile(p, to)
	switch strings.ToLower(filepath.Ext(to)) {
	case ".gz":
		return errors.Is(err, io.ErrUnexpectedEOF)
	case ".parquet":
		f, ferr := os.Open(p)
		if ferr != nil {
			return false
		}
		defer f.Close()
		var head [4]byte
		_, ferr = f.ReadAt(head[:], 0)
		return err != nil && ferr == nil && string(head[:]) == "PAR1"
	}
	return false
}

// fetchRecord is what fetch keeps of a file it downloaded with no
// published checksum (in DATA/.agora-fetch/TO.json, outside every input
// folder): its URL, the server's validators, and the size and time of the
// file it wrote, so that the next fetch asks the server whether the file
// changed (a release that moves, like a repository's HEAD archive)
// instead of taking the copy in place for current.
type fetchRecord struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// Listing is, for an extracted archive, the sha256 of its files'
	// paths and sizes as extracted (kept pinned or not): a file removed
	// from the folder since is seen.
	Listing string `json:"listing,omitempty"`
	// Size and ModTime are the file's as written (a folder's are not
	// kept): a file changed since is not the one the validators name.
	Size    int64 `json:"size,omitempty"`
	ModTime int64 `json:"mod_time_ns,omitempty"`
}

// recordPath is where fetch keeps the fetchRecord of the file fetched to
// to (a path under data).
func recordPath(data, to string) string {
	return filepath.Join(data, ".agora-fetch", filepath.FromSlash(to)+".json")
}

// keepRecord writes dest's fetchRecord when the file is not pinned by a
// checksum and the server gave a validator, and removes a stale one
// otherwise. A record that cannot be written only means the next fetch
// keeps the file in place without asking, as before records.
func keepRecord(data, to, dest string, rec fetchRecord, pinned bool) {
	p := recordPath(data, to)
	rec.Listing = listing(dest)
	if pinned {
		rec.ETag, rec.LastModified = "", "" // the checksum says which version
	}
	if rec.ETag == "" && rec.LastModified == "" && rec.Listing == "" {
		os.Remove(p)
		return
	}
	if fi, err := os.Stat(dest); err == nil && fi.Mode().IsRegular() {
		rec.Size, rec.ModTime = fi.Size(), fi.ModTime().UnixNano()
	}
	if b, err := json.MarshalIndent(rec, "", "  "); err == nil && os.MkdirAll(filepath.Dir(p), 0o777) == nil {
		os.WriteFile(p, append(b, '\n'), 0o644)
	}
}

// upstreamChange asks the server whether the file dest was fetched from
// has changed since (a conditional GET with the validators of rec, its
// fetchRecord). It says why the file is to be fetched again, or "" to
// keep it, with the message for a file kept ("" for fetch's usual one).
// Without a record (a file put there by hand, or a server that gave no
// validator), or with a file changed since it was fetched, the file is
// kept. A server that cannot be asked keeps it too, with a warning: an
// outage upstream is no reason to stop a nightly run on the copy in hand.
func upstreamChange(ctx context.Context, opts fetchOptions, u string, f *config.FetchFile, dest string, rec fetchRecord) (changed, kept string) {
	if rec.ETag == "" && rec.LastModified == "" {
		return "", "" // no validator (a listing alone, or no record): kept
	}
	if rec.URL != f.URL {
		return "its URL in pipeline.yaml changed", ""
	}
	if fi, err := os.Stat(dest); err == nil && fi.Mode().IsRegular() && rec.Size != 0 && (fi.Size() != rec.Size || fi.ModTime().UnixNano() != rec.ModTime) {
		return "", fmt.Sprintf("%s is in place, changed since it was fetched (no checksum is published); --force downloads it again", f.To)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", ""
	}
	if rec.ETag != "" {
		req.Header.Set("If-None-Match", rec.ETag)
	}
	if rec.LastModified != "" {
		req.Header.Set("If-Modified-Since", rec.LastModified)
	}
	cannot := func(why string) (string, string) {
		opts.Log.Warn("could not ask whether a file changed upstream; the copy in place is kept", "url", u, "path", dest, "error", why)
		return "", fmt.Sprintf("%s is in place; whether it changed upstream is not known (GET %s: %s), so it is kept", f.To, u, why)
	}
	resp, err := opts.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", "" // interrupted: fetchAll stops at the next file
		}
		return cannot(err.Error())
	}
	resp.Body.Close() // the body, if any, is fetched again into NAME.part
	switch resp.StatusCode {
	case http.StatusNotModified:
		return "", fmt.Sprintf("%s is in place, and the server says it has not changed since it was fetched (no checksum is published); --force downloads it again", f.To)
	case http.StatusOK:
		return "changed upstream", ""
	}
	return cannot(resp.Status)
}

// listing returns the sha256 of the paths and sizes of the files under
// dir, in name order, or "" when dir is not a folder.
func listing(dir string) string {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\t%d\n", filepath.ToSlash(rel), fi.Size())
		return nil
	})
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sameListing reports whether the folder dest, extracted from an archive,
// holds the files it held when extracted; true without a record of them.
func sameListing(rec fetchRecord, dest string) bool {
	return rec.Listing == "" || listing(dest) == rec.Listing
}

// readRecord returns the fetchRecord kept of the file fetched to to, or
// the zero record when none is kept (or it cannot be read).
func readRecord(data, to string) fetchRecord {
	var rec fetchRecord
	if b, err := os.ReadFile(recordPath(data, to)); err == nil {
		if json.Unmarshal(b, &rec) != nil {
			return fetchRecord{}
		}
	}
	return rec
}

// parseContentRange parses "bytes START-END/SIZE" (SIZE may be *).
func parseContentRange(s string) (start, size int64, ok bool) {
	s, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, sz, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	a, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	size = -1
	if sz != "*" {
		if size, err = strconv.ParseInt(sz, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, size, true
}

// fileSums hashes a file with sha256 and md5.
func fileSums(p string) (map[string]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hs := map[string]hash.Hash{"sha256": sha256.New(), "md5": md5.New()}
	if _, err := io.Copy(io.MultiWriter(hs["sha256"], hs["md5"]), f); err != nil {
		return nil, fmt.Errorf("hash %s: %w", p, err)
	}
	out := map[string]string{}
	for k, h := range hs {
		out[k] = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}

// verify compares the sums with the published ones.
func verify(f *config.FetchFile, sums map[string]string) error {
	if f.SHA256 != "" && sums["sha256"] != f.SHA256 {
		return fmt.Errorf("%w: sha256 is %s, published %s", ErrChecksum, sums["sha256"], f.SHA256)
	}
	if f.MD5 != "" && sums["md5"] != f.MD5 {
		return fmt.Errorf("%w: md5 is %s, published %s", ErrChecksum, sums["md5"], f.MD5)
	}
	return nil
}

// extract writes the regular files of an archive below f.Extract into a
// staging folder, then swaps it in for dest. It returns the file count.
func extract(ctx context.Context, archive string, f *config.FetchFile, dest string) (int, error) {
	stage := dest + ".extracting"
	os.RemoveAll(stage)
	defer os.RemoveAll(stage)
	n := 0
	var size int64
	if fi, err := os.Stat(archive); err == nil {
		size = fi.Size()
	}
	limit := &extractLimit{ctx: ctx, left: max(maxExtractBytes, extractRatio*size), ratio: extractRatio, floor: maxExtractBytes}
	put := func(name string, r io.Reader) error {
		r = &limitedExtract{r: r, l: limit}
		rel, ok := archivePath(name, f.Extract)
		if !ok {
			return nil
		}
		p := filepath.Join(stage, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		out, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, r); err != nil {
			out.Close()
			return fmt.Errorf("extract %s: %w", name, err)
		}
		n++
		return out.Close()
	}
	var err error
	switch f.Archive {
	case "tar.gz":
		err = extractTarGz(archive, put)
	case "zip":
		err = extractZip(archive, put)
	default:
		err = fmt.Errorf("unknown archive %q", f.Archive)
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("the archive has no files under %q", f.Extract)
	}
	if err := ctx.Err(); err != nil {
		return 0, context.Cause(ctx) // interrupted: the old folder stays
	}
	return n, swapIn(stage, dest)
}

// maxExtractBytes and extractRatio bound what an archive may extract to:
// extractRatio times its own size, or maxExtractBytes when that is more.
// Text compresses some 3 to 10 times; an archive that extracts to a
// hundred times its size is damaged or hostile (a gzip bomb), and would
// fill the data root's disk before anything said so. Variables so that
// tests can make them small.
var (
	maxExtractBytes int64 = 1 << 30
	extractRatio    int64 = 100
)

// extractLimit is what an extraction may still write, and the context
// that stops it.
type extractLimit struct {
	ctx          context.Context
	left         int64
	ratio, floor int64
}

// limitedExtract reads an archive member, stopping when the context is
// done or the extraction passes its limit.
type limitedExtract struct {
	r io.Reader
	l *extractLimit
}

func (e *limitedExtract) Read(p []byte) (int, error) {
	if err := e.l.ctx.Err(); err != nil {
		return 0, context.Cause(e.l.ctx)
	}
	n, err := e.r.Read(p)
	e.l.left -= int64(n)
	if e.l.left < 0 {
		return n, fmt.Errorf("the archive extracts to more than %d times its size (or %s): damaged, or a gzip bomb? Extract it by hand under --data if it is genuine", e.l.ratio, humanBytes(e.l.floor))
	}
	return n, err
}

// swapIn puts the folder stage in place of dest in one step where the
// kernel can (renameat2 exchange), then removes what dest held: a fetch
// killed at any point leaves dest whole, the old folder or the new one,
// never a half-removed one. Elsewhere the old folder is renamed aside
// first, and restoreAside puts it back if the second rename never came.
func swapIn(stage, dest string) error {
	if _, err := os.Stat(dest); err == nil {
		if err := (sinks.OS{}).Exchange(stage, dest); err == nil {
			// stage is now the old folder: the new one is in place
			// whether or not it goes (the next fetch removes it).
			os.RemoveAll(stage)
			return nil
		}
		aside := dest + ".old"
		if err := os.RemoveAll(aside); err != nil {
			return err
		}
		if err := os.Rename(dest, aside); err != nil {
			return err
		}
		if err := os.Rename(stage, dest); err != nil {
			os.Rename(aside, dest)
			return err
		}
		os.RemoveAll(aside) // as above: restoreAside tries again
		return nil
	}
	return os.Rename(stage, dest)
}

// restoreAside tidies what a fetch killed during swapIn left beside
// dest: the old folder set aside goes back where dest is missing, and is
// removed where dest is there; a stale extraction folder is removed.
func restoreAside(dest string) {
	aside := dest + ".old"
	if _, err := os.Stat(aside); err == nil {
		if _, err := os.Stat(dest); errors.Is(err, os.ErrNotExist) {
			os.Rename(aside, dest)
		} else {
			os.RemoveAll(aside)
		}
	}
	os.RemoveAll(dest + ".extracting")
}

// archivePath maps an archive member to its path below the extract
// folder, after the archive's top folder; ok is false for members outside
// it or with an unsafe name.
func archivePath(name, under string) (string, bool) {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	_, rest, found := strings.Cut(name, "/") // the top folder
	if !found {
		return "", false
	}
	if under != "" {
		r, ok := strings.CutPrefix(rest, strings.Trim(under, "/")+"/")
		if !ok {
			return "", false
		}
		rest = r
	}
	return rest, rest != "" && filepath.IsLocal(filepath.FromSlash(rest))
}

func extractTarGz(p string, put func(string, io.Reader) error) error {
	fh, err := os.Open(p)
	if err != nil {
		return err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return fmt.Errorf("not a tar.gz: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tar.gz: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := put(h.Name, tr); err != nil {
			return err
		}
	}
}

func extractZip(p string, put func(string, io.Reader) error) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return fmt.Errorf("not a zip: %w", err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if !zf.Mode().IsRegular() {
			continue
		}
		r, err := zf.Open()
		if err != nil {
			return fmt.Errorf("read zip %s: %w", zf.Name, err)
		}
		err = put(zf.Name, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
