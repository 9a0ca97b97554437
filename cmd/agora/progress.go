package main

// Progress display. On a terminal, run and fetch draw one live bar per
// table (or download) with github.com/vbauerster/mpb/v8: it is maintained,
// pure Go, draws several bars at once from many goroutines, and prints log
// lines above the bars instead of through them. When stderr is not a
// terminal (cron, systemd, CI) the same counters go out as a slog line
// every few seconds instead, and --quiet turns both off. Terminal
// detection is golang.org/x/term.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// globalOptions are the persistent flags every command shares.
type globalOptions struct {
	LogFormat string
	Quiet     bool
	// ProgressInterval is how often progress is logged when stderr is not
	// a terminal (a hidden flag, for tests).
	ProgressInterval time.Duration
	stderr           io.Writer
	out              *switchWriter
}

// switchWriter is stderr, or the progress display while bars are drawn
// (so log lines print above them).
type switchWriter struct {
	mu   sync.Mutex
	w    io.Writer
	base io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	if errors.Is(err, mpb.ErrDone) && s.base != nil {
		// The display was shut down (an interrupt): write straight out.
		return s.base.Write(p)
	}
	return n, err
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

func (g *globalOptions) validate() error {
	if g.LogFormat != "text" && g.LogFormat != "json" {
		return usageError{fmt.Errorf("--log-format must be text or json, got %q", g.LogFormat)}
	}
	return nil
}

// logger returns the slog logger on stderr in the chosen format.
func (g *globalOptions) logger() *slog.Logger {
	if g.out == nil {
		g.out = &switchWriter{w: g.stderr, base: g.stderr}
	}
	if g.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(g.out, nil))
	}
	return slog.New(slog.NewTextHandler(g.out, nil))
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress returns the progress display for this command (nil with
// --quiet) and a function to call when the command is done.
func (g *globalOptions) progress(ctx context.Context, log *slog.Logger) (progressUI, func()) {
	if g.Quiet {
		return nil, func() {}
	}
	if isTerminal(g.stderr) {
		p := mpb.NewWithContext(ctx, mpb.WithOutput(g.stderr), mpb.WithWidth(32), mpb.WithRefreshRate(150*time.Millisecond))
		g.out.set(p)
		ui := &barUI{p: p}
		return ui, func() {
			ui.finish()
			p.Wait()
			g.out.set(g.stderr)
		}
	}
	ui := &logUI{log: log}
	every := g.ProgressInterval
	if every <= 0 {
		every = 5 * time.Second
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				ui.report()
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	})
	return ui, func() { close(stop); wg.Wait() }
}

// progressUI hands out trackers, one per table or download.
type progressUI interface {
	// Track starts tracking name: total units (0 if unknown), start of
	// them already done (a resumed download), unit "bytes" or "rows".
	Track(name string, total, start int64, unit string) *tracker
}

// tracker counts one table's (or download's) progress. It is safe for
// concurrent use.
type tracker struct {
	name  string
	unit  string
	total int64
	start int64
	began time.Time
	cur   atomic.Int64
	rows  atomic.Int64
	done  atomic.Bool
	ended atomic.Int64 // UnixNano when Done was called
	bar   *mpb.Bar
}

// elapsed is the time from Track to Done (or to now while running).
func (t *tracker) elapsed() time.Duration {
	if e := t.ended.Load(); e != 0 {
		return time.Unix(0, e).Sub(t.began)
	}
	return time.Since(t.began)
}

func newTracker(name string, total, start int64, unit string) *tracker {
	t := &tracker{name: name, unit: unit, total: total, start: start, began: time.Now()}
	t.cur.Store(start)
	return t
}

// Write counts downloaded bytes.
func (t *tracker) Write(p []byte) (int, error) {
	t.add(int64(len(p)), 0)
	return len(p), nil
}

// Chunk counts one chunk a source emitted: its bytes and rows.
func (t *tracker) Chunk(bytes int64, rows int) {
	if t.unit == "rows" {
		bytes = int64(rows)
	}
	t.add(bytes, int64(rows))
}

func (t *tracker) add(n, rows int64) {
	cur := t.cur.Add(n)
	t.rows.Add(rows)
	if t.bar != nil {
		t.bar.SetCurrent(cur)
	}
}

// Done marks the tracker finished.
func (t *tracker) Done() {
	if t.done.Swap(true) {
		return
	}
	t.ended.Store(time.Now().UnixNano())
	if t.bar != nil {
		t.bar.SetTotal(-1, true)
	}
}

func (t *tracker) amount(n int64) string {
	if t.unit == "rows" {
		return fmt.Sprintf("%d rows", n)
	}
	return humanBytes(n)
}

// status is "12.0 MiB of 40.0 MiB, 1520 rows/s, ETA 3s".
func (t *tracker) status() string {
	cur, rows := t.cur.Load(), t.rows.Load()
	el := t.elapsed().Seconds()
	var b strings.Builder
	b.WriteString(t.amount(cur))
	if t.total > 0 && cur <= t.total {
		fmt.Fprintf(&b, " of %s", t.amount(t.total))
	}
	if el > 0 && rows > 0 {
		fmt.Fprintf(&b, ", %.0f rows/s", float64(rows)/el)
	}
	if eta, ok := t.eta(); ok {
		fmt.Fprintf(&b, ", ETA %s", eta)
	}
	return b.String()
}

// eta estimates the time left from the average rate so far.
func (t *tracker) eta() (time.Duration, bool) {
	cur := t.cur.Load()
	el := t.elapsed()
	if t.done.Load() || t.total <= 0 || cur <= t.start || cur >= t.total || el <= 0 {
		return 0, false
	}
	rate := float64(cur-t.start) / el.Seconds()
	return time.Duration(float64(t.total-cur) / rate * float64(time.Second)).Round(time.Second), true
}

// barUI draws a live bar per tracker.
type barUI struct {
	p        *mpb.Progress
	mu       sync.Mutex
	trackers []*tracker
}

func (u *barUI) Track(name string, total, start int64, unit string) *tracker {
	t := newTracker(name, total, start, unit)
	// A bar made with total 0 completes only when Done says so (a total
	// estimated from a gzip trailer may be off); the total is then set
	// for display.
	bar, err := u.p.Add(0, mpb.BarStyle().Build(),
		mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return t.status() })),
	)
	if err != nil {
		return t // the display is shut down (an interrupt): count without a bar
	}
	t.bar = bar
	if total > 0 {
		bar.SetTotal(total, false)
	}
	if start > 0 {
		bar.SetCurrent(start)
	}
	u.mu.Lock()
	u.trackers = append(u.trackers, t)
	u.mu.Unlock()
	return t
}

// finish completes bars whose table never finished (a failed run), so
// Wait returns.
func (u *barUI) finish() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, t := range u.trackers {
		t.Done()
	}
}

// logUI logs every unfinished tracker at each tick.
type logUI struct {
	log      *slog.Logger
	mu       sync.Mutex
	trackers []*tracker
}

func (u *logUI) Track(name string, total, start int64, unit string) *tracker {
	t := newTracker(name, total, start, unit)
	u.mu.Lock()
	u.trackers = append(u.trackers, t)
	u.mu.Unlock()
	return t
}

func (u *logUI) report() {
	u.mu.Lock()
	ts := append([]*tracker(nil), u.trackers...)
	u.mu.Unlock()
	for _, t := range ts {
		if t.done.Load() {
			continue
		}
		attrs := []any{"name", t.name, "unit", t.unit, "done", t.cur.Load(), "total", t.total, "rows", t.rows.Load(),
			"seconds", roundTo(t.elapsed().Seconds(), 1), "status", t.status()}
		u.log.Info("progress", attrs...)
	}
}

// progressSource tells a tracker about every chunk a table's source
// emits; it wraps the source in cmd/agora so the engine needs no hook.
type progressSource struct {
	pipeline.Source
	t *tracker
}

func (s *progressSource) Chunks(ctx context.Context, emit func(pipeline.Chunk) error) error {
	return s.Source.Chunks(ctx, func(c pipeline.Chunk) error {
		s.t.Chunk(int64(len(c.Data)+c.Bytes), c.Rows)
		return emit(c)
	})
}

// Notes passes on the source's notes.
func (s *progressSource) Notes() []string {
	if n, ok := s.Source.(pipeline.Noter); ok {
		return n.Notes()
	}
	return nil
}

// inputTotal is what a table's progress counts up to: the bytes the
// source will hand on (file sizes; for gzip, the uncompressed size from
// the gzip trailer, exact below 4 GiB), or for Parquet the rows in its
// footer. 0 means unknown.
func inputTotal(in *config.Input, p string) (int64, string) {
	switch {
	case in.Format == "parquet":
		r, err := file.OpenParquetFile(p, false)
		if err != nil {
			return 0, "rows"
		}
		defer r.Close()
		return r.NumRows(), "rows"
	case in.Compression == "gzip":
		f, err := os.Open(p)
		if err != nil {
			return 0, "bytes"
		}
		defer f.Close()
		var b [4]byte
		if st, err := f.Stat(); err != nil || st.Size() < 18 {
			return 0, "bytes"
		} else if _, err := f.ReadAt(b[:], st.Size()-4); err != nil {
			return 0, "bytes"
		}
		return int64(binary.LittleEndian.Uint32(b[:])), "bytes"
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0, "bytes"
	}
	if !st.IsDir() {
		return st.Size(), "bytes"
	}
	var total int64
	entries, _ := os.ReadDir(p)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			total += fi.Size()
		}
	}
	return total, "bytes"
}
