package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/mempool"
	"github.com/agora-etl/agora/pipeline"
	"github.com/agora-etl/agora/sinks"
	"github.com/agora-etl/agora/stages"
)

// Version is agora's version, set at build time with -ldflags.
var Version = "0.1.0"

// runOptions are the command-line settings of run and check.
type runOptions struct {
	ConfigPath string
	Data       string
	Out        string
	Only       []string
	Workers    int
	DryRun     bool // check: decode and validate everything, write nothing
	Mode       string
	Force      bool
	// Mem is what the readers, decoders and steps allocate from; nil
	// means a mempool of poolBytes for each dataset's run.
	Mem memory.Allocator
	// SinkMem is what the table writers allocate their row groups and
	// Parquet pages from; nil means Mem when that is set, else a second
	// mempool of poolBytes for each dataset's run.
	SinkMem memory.Allocator
	// FS is where releases are written; nil means the OS (tests inject
	// faults here).
	FS sinks.FS
	// Progress, when set, tracks each table's input.
	Progress progressUI
}

// poolBytes is how many bytes of freed buffers each of a dataset's two
// pools (one for the readers, decoders and steps, one for the table
// writers) lists for reuse until the next collection (datasets run one
// at a time); main gives arrow-go's own buffers a third pool of the
// same size for the whole run. Batches and row groups of the same sizes
// are built and released over and over; reused, they are not garbage
// for the collector to find. The writers' pool took a CrowdRAG-25 run at 10×
// from 47 collections to 37; the stages' took a Habermas run at 10× rows
// from 180 to 136 (docs/performance.md, What changed).
const poolBytes = 32 << 20

// ErrExists is returned in --mode error when the published release differs
// from what this run produced.
var ErrExists = errors.New("the published release differs from this run")

// rejectsExceeded reports tables whose rejects passed max_reject_ratio.
type rejectsExceeded struct{ tables []string }

func (r *rejectsExceeded) Error() string {
	return "rejected rows above max_reject_ratio in " + strings.Join(r.tables, ", ")
}

func readManifest(out, id string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(out, id, "manifest.json"))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

// releaseDiff says what makes the published release's manifest old
// differ from this run's man: the agora or library versions, the config,
// the inputs by name, or else the outputs alone.
func releaseDiff(old, man Manifest) string {
	var parts []string
	if old.Agora != man.Agora {
		parts = append(parts, fmt.Sprintf("agora %s (this is %s)", old.Agora, man.Agora))
	}
	if !maps.Equal(old.Libraries, man.Libraries) {
		parts = append(parts, "other library versions")
	}
	if old.ConfigSHA256 != man.ConfigSHA256 {
		parts = append(parts, "another config of the dataset (its config_sha256 differs)")
	}
	was := map[string]string{}
	for _, in := range old.Inputs {
		was[in.Path] = in.SHA256
	}
	var changed []string
	for _, in := range man.Inputs {
		if sum, ok := was[in.Path]; !ok || sum != in.SHA256 {
			changed = append(changed, in.Path)
		}
		delete(was, in.Path)
	}
	for p := range was {
		changed = append(changed, p)
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		parts = append(parts, "other inputs ("+strings.Join(changed, ", ")+")")
	}
	if len(parts) == 0 {
		return "the same inputs and config, but its tables differ from this run's"
	}
	return strings.Join(parts, " and ")
}

// TableResult is one table's accounting, as printed and as stored in the
// manifest.
type TableResult struct {
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Input       string           `json:"input"`
	PartitionBy []string         `json:"partition_by,omitempty"`
	InputRows   int64            `json:"input_rows"`
	RowsIn      int64            `json:"rows_in"`
	Written     int64            `json:"rows_written"`
	Rejected    int64            `json:"rows_rejected"`
	Schema      []ColumnInfo     `json:"schema"`
	SchemaHash  string           `json:"schema_sha256"`
	Files       []sinks.FileInfo `json:"files"`
	// Checks are flagged checks that failed (rows kept).
	Checks []pipeline.CheckStat `json:"checks,omitempty"`
	// Notes are things the source passed over.
	Notes   []string          `json:"notes,omitempty"`
	Columns map[string]string `json:"-"`
	Seconds float64           `json:"-"`
}

// ColumnInfo is one output column in the manifest.
type ColumnInfo struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Partition marks a column that is a directory level, not in the files.
	Partition bool `json:"partition,omitempty"`
}

// InputInfo fingerprints one input file or folder. For a folder, SHA256
// hashes the sorted "name sha256" lines of its files, listed in Files.
type InputInfo struct {
	ID     string       `json:"id"`
	Path   string       `json:"path"`
	Bytes  int64        `json:"bytes"`
	SHA256 string       `json:"sha256"`
	Files  []FileDigest `json:"files,omitempty"`
}

// FileDigest is one file of an input folder.
type FileDigest struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Manifest is manifest.json: everything needed to tell whether two
// releases are the same, and nothing that changes from run to run (no
// timestamps, no host names).
type Manifest struct {
	Dataset      string            `json:"dataset"`
	Agora        string            `json:"agora_version"`
	Libraries    map[string]string `json:"libraries"`
	ConfigSHA256 string            `json:"config_sha256"`
	Inputs       []InputInfo       `json:"inputs"`
	Tables       []*TableResult    `json:"tables"`
}

// DatasetResult is the outcome of one dataset.
type DatasetResult struct {
	ID string
	// Failed is why the dataset failed (its previous release kept); the
	// rest is then empty. runAll reports a failed dataset too, so that
	// the summary on stdout shows it.
	Failed   error
	Target   string
	Tables   []*TableResult
	Duration time.Duration
	// Skipped says the published release already matches the inputs and
	// config, so nothing was run; Released are then that release's
	// tables, from its manifest.
	Skipped  bool
	Released []*TableResult
	// Notes are what the run has to say of the dataset beyond its tables.
	Notes []string
}

func loadConfig(path string) (*config.Config, error) {
	cfg, err := config.LoadFile(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// --config names a file that is not there, a folder, or one that
		// cannot be read: the command line's fault (exit 2), as a bad
		// pipeline.yaml is.
		return nil, usageError{err}
	}
	return cfg, err
}

// selectDatasets returns the dataset ids to run, checking --only.
func selectDatasets(cfg *config.Config, only []string) ([]string, error) {
	if only == nil {
		return cfg.DatasetIDs(), nil
	}
	if len(only) == 0 {
		// --only "" (an empty $VAR in a script): not "all of them".
		return nil, usageError{fmt.Errorf("--only names no dataset (have %s)", strings.Join(cfg.DatasetIDs(), ", "))}
	}
	var out []string
	for _, id := range only {
		// "crowdrag25, delidata": the space is not part of the name; a
		// dataset named twice runs once.
		id = strings.TrimSpace(id)
		if slices.Contains(out, id) {
			continue
		}
		if _, ok := cfg.Datasets[id]; !ok {
			return nil, usageError{fmt.Errorf("%s: no such dataset in %s (have %s)", id, cfg.File(), strings.Join(cfg.DatasetIDs(), ", "))}
		}
		out = append(out, id)
	}
	return out, nil
}

// runAll runs (or checks) the selected datasets one after the other.
func runAll(ctx context.Context, cfg *config.Config, opts runOptions, report func(*DatasetResult)) error {
	ids, err := selectDatasets(cfg, opts.Only)
	if err != nil {
		return err
	}
	var (
		over      []string
		failed    []error
		published []string
		columns   = map[string]bool{} // of the tables checked, for the top writer lists
	)
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		res, err := runDataset(ctx, cfg, id, opts)
		if err != nil {
			err = fmt.Errorf("%s: %w", id, err)
			if ctx.Err() != nil {
				return &interrupted{err: err, published: published}
			}
			// The datasets are independent: one that fails (its previous
			// release kept) does not keep the others from running.
			failed = append(failed, err)
			report(&DatasetResult{ID: id, Failed: err})
			continue
		}
		if res.Target != "" && !res.Skipped {
			published = append(published, id)
		}
		for _, t := range res.Tables {
			for _, c := range t.Schema {
				if !c.Partition {
					columns[c.Name] = true
				}
			}
		}
		report(res)
		// An unchanged release is judged as when it was made: a scheduler
		// that runs again after exit 3 gets 3 again, not a quiet 0.
		tables, was := res.Tables, ""
		if res.Skipped {
			tables, was = res.Released, ", in the unchanged release"
		}
		for _, t := range tables {
			tc := cfg.Datasets[id].Tables[t.Name]
			if tc == nil || tc.MaxRejectRatio == nil {
				continue
			}
			if r := *tc.MaxRejectRatio; t.RowsIn > 0 && float64(t.Rejected)/float64(t.RowsIn) > r {
				over = append(over, fmt.Sprintf("%s/%s (%d of %d > %v%s)", id, t.Name, t.Rejected, t.RowsIn, r, was))
			}
		}
	}
	if ctx.Err() != nil {
		return &interrupted{err: context.Cause(ctx), published: published}
	}
	if len(failed) > 0 {
		if len(over) > 0 {
			// Said, though the failure decides the exit code (1).
			failed = append(failed, errors.New("also published, with "+(&rejectsExceeded{over}).Error()))
		}
		return errors.Join(failed...)
	}
	if opts.DryRun && opts.Only == nil {
		// Every table checked: a column the top-level writer lists that no
		// table writes is a typo (a table's own lists are checked as it is
		// built).
		if err := topWriterColumns(cfg, columns); err != nil {
			return err
		}
	}
	if len(over) > 0 {
		return &rejectsExceeded{over}
	}
	return nil
}

// topWriterColumns reports each column the top-level writer.dictionary,
// no_statistics or shared_pages names that is in none of columns (every
// table's, partition columns left out): a list that applies to the tables
// that have the column applies to none.
func topWriterColumns(cfg *config.Config, columns map[string]bool) error {
	var errs []error
	for _, l := range []struct {
		key  string
		cols []string
	}{{"dictionary", cfg.Writer.Dictionary}, {"no_statistics", cfg.Writer.NoStatistics}, {"shared_pages", cfg.Writer.SharedPages}} {
		for i, c := range l.cols {
			if !columns[c] {
				errs = append(errs, cfg.At(fmt.Sprintf("writer.%s[%d]", l.key, i), fmt.Errorf("no table writes a column %q (a partition column is a folder, not a column of the files)", c)))
			}
		}
	}
	return errors.Join(errs...)
}

// interrupted is the error of a run stopped by a signal: the datasets
// published before it are not rolled back.
type interrupted struct {
	err       error
	published []string
}

func (e *interrupted) Error() string { return e.err.Error() }
func (e *interrupted) Unwrap() error { return e.err }

// runDataset runs every table of one dataset into a staging folder, then
// writes the manifest and publishes.
func runDataset(ctx context.Context, cfg *config.Config, id string, opts runOptions) (*DatasetResult, error) {
	start := time.Now()
	d := cfg.Datasets[id]
	// A pool hands a freed buffer's bytes to the next user, so nothing
	// may keep a view of a released batch: what outlives a batch (reject
	// and check file names, partition values, aggregate sets) is copied
	// out of it (TestPoolsKeepOutput). Each side has its own pool; one
	// shared pool (which would let a released batch's buffers serve the
	// writers) was measured and gained nothing (docs/performance.md,
	// Tried and dropped).
	mem := opts.Mem
	if mem == nil {
		mem = mempool.New(poolBytes)
	}
	sinkMem := opts.SinkMem
	switch {
	case sinkMem != nil:
	case opts.Mem != nil:
		sinkMem = opts.Mem
	default:
		sinkMem = mempool.New(poolBytes)
	}
	workers := cfg.Workers
	if opts.Workers > 0 {
		workers = opts.Workers
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	// Build every table first, so a config problem stops the run before
	// anything is read or written.
	built := map[string]*stages.Built{}
	var errs []error
	for _, name := range d.TableNames() {
		b, err := stages.BuildTable(cfg, id, name, opts.Data, mem)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		built[name] = b
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if !opts.DryRun {
		lock, err := sinks.AcquireLock(opts.Out, id)
		if err != nil {
			return nil, err
		}
		defer lock.Release()
	}
	stats, err := statInputs(d, opts.Data)
	if err != nil {
		return nil, err
	}
	man := Manifest{
		Dataset:      id,
		Agora:        Version,
		Libraries:    libraryVersions(),
		ConfigSHA256: configHash(cfg, id),
	}
	// The inputs' checksums decide whether the run can be skipped, so they
	// come first when it might be; otherwise they are only for the
	// manifest and are computed alongside the conversion: on one large
	// input the hash would keep one core busy while the other waits.
	// A failed hash stops the conversion; a failed or cancelled conversion
	// stops the hash, which is over when this function returns.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	hashed := make(chan error, 1)
	var old Manifest
	var same bool
	if !opts.DryRun && !opts.Force {
		old, same = sameRelease(opts.Out, id, man)
	}
	// Folder inputs whose source hashes each file as it converts it
	// (stages.FileSummer: a DeliData folder of thousands of small files)
	// are fingerprinted from those sums once the tables are written,
	// instead of being read a second time alongside.
	groups := inputGroups(d)
	var late []inputStat
	var summed map[string]stages.FileSummer
	switch {
	case opts.DryRun:
		hashed <- nil
	case same:
		man.Inputs, err = fingerprintInputs(ctx, stats)
		if err != nil {
			return nil, err
		}
		if unchanged(old, man) {
			// Nothing to publish, but a killed run's staging goes all
			// the same, or an unchanged nightly input would keep it.
			notes, err := sinks.Recover(opts.FS, opts.Out, id)
			if err != nil {
				return nil, err
			}
			return &DatasetResult{ID: id, Target: filepath.Join(opts.Out, id), Skipped: true, Released: old.Tables, Notes: notes, Duration: time.Since(start)}, nil
		}
		hashed <- nil
	default:
		var now []inputStat
		summed = summedInputs(d, built, groups)
		for _, st := range stats {
			if summed[st.id] != nil && st.info.IsDir() {
				late = append(late, st)
			} else {
				now = append(now, st)
			}
		}
		go func() {
			var err error
			man.Inputs, err = fingerprintInputs(ctx, now)
			if err != nil {
				stop(err)
			}
			hashed <- err
		}()
	}
	hashDone := sync.OnceValue(func() error { return <-hashed })
	defer func() {
		stop(errors.New("the run ended"))
		hashDone()
	}()

	var rel *sinks.Release
	root := ""
	if !opts.DryRun {
		rel, err = sinks.NewRelease(opts.FS, opts.Out, id)
		if err != nil {
			return nil, err
		}
		root = rel.Dir()
	}
	published := false
	defer func() {
		if rel != nil && !published {
			rel.Abort()
		}
	}()

	trackers := map[string]*tracker{}
	if opts.Progress != nil {
		type size struct {
			total int64
			unit  string
		}
		sizes := map[string]size{} // per input: tables sharing it ask once
		for _, name := range d.TableNames() {
			in := d.Tables[name].Input
			sz, ok := sizes[in]
			if !ok {
				sz.total, sz.unit = inputTotal(d.Inputs[in], built[name].InputPath)
				sizes[in] = sz
			}
			tr := opts.Progress.Track(id+"/"+name, sz.total, 0, sz.unit)
			defer tr.Done()
			trackers[name] = tr
		}
	}

	// Tables that read the same input share one decode of it: they run
	// together, as a group, and at most groupsAtOnce groups run at once.
	results := make([]*TableResult, len(d.TableNames()))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(groupsAtOnce(d, workers))
	for _, group := range groups {
		g.Go(func() error {
			return runGroup(gctx, cfg, id, d, group, built, trackers, results, root, workers, sinkMem, opts.FS)
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			// A failed hash (or the caller) stopped the run: say why.
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	res := &DatasetResult{ID: id, Tables: results}
	if rel != nil {
		res.Notes = rel.Notes
	}
	if opts.DryRun {
		res.Duration = time.Since(start)
		return res, nil
	}
	if err := hashDone(); err != nil {
		return nil, err
	}
	if err := unmoved(stats); err != nil {
		return nil, err
	}
	for _, st := range late {
		// The folder as its source listed it when converting it: a file
		// added since is not in the tables, so not in the manifest either.
		info, err := fingerprintListed(ctx, st.id, st.rel, st.path, summed[st.id].FileSums(), nil)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", st.id, err)
		}
		man.Inputs = append(man.Inputs, info)
	}
	if len(late) > 0 {
		slices.SortFunc(man.Inputs, func(a, b InputInfo) int { return strings.Compare(a.ID, b.ID) })
	}
	man.Tables = results
	if err := rel.WriteStream("manifest.json", func(w io.Writer) error { return writeManifest(w, man) }); err != nil {
		return nil, err
	}
	if err := rel.WriteJSON("datapackage.json", dataPackage(id, d, results)); err != nil {
		return nil, err
	}
	if err := rel.WriteFile("README.md", []byte(datasetCard(id, d, results))); err != nil {
		return nil, err
	}
	if opts.Mode != "overwrite" && sinks.Published(opts.Out, id) {
		if !sameFile(filepath.Join(opts.Out, id, "manifest.json"), filepath.Join(rel.Dir(), "manifest.json")) {
			what := "other inputs, config or agora version"
			if old, err := readManifest(opts.Out, id); err == nil {
				what = releaseDiff(old, man)
			}
			return nil, fmt.Errorf("%w: %s was made from %s; run with --mode overwrite to replace it", ErrExists, filepath.Join(opts.Out, id), what)
		}
	}
	if err := rel.Publish(); err != nil {
		if !errors.Is(err, sinks.ErrLeftover) && !errors.Is(err, sinks.ErrNotSynced) {
			return nil, err
		}
		res.Notes = append(res.Notes, err.Error()) // published all the same
	}
	published = true
	res.Target = rel.Target()
	res.Duration = time.Since(start)
	return res, nil
}

// groupsAtOnce is how many of d's inputs, each with the tables reading it,
// are converted at the same time: the dataset's inputs_at_once, at most
// workers; workers when it is 0.
func groupsAtOnce(d *config.Dataset, workers int) int {
	if d.InputsAtOnce > 0 {
		return min(d.InputsAtOnce, workers)
	}
	return workers
}

// runGroup runs the tables (indexes into d.TableNames()) that read one
// input; with more than one, the input is decoded once for all of them.
func runGroup(ctx context.Context, cfg *config.Config, id string, d *config.Dataset, group []int, built map[string]*stages.Built, trackers map[string]*tracker, results []*TableResult, root string, workers int, sinkMem memory.Allocator, fs sinks.FS) error {
	names := d.TableNames()
	// track wraps a table's source so that its progress is counted, and
	// returns what to call when the table ends.
	track := func(name string, src pipeline.Source) (pipeline.Source, func()) {
		tr := trackers[name]
		if tr == nil {
			return src, func() {}
		}
		return &progressSource{Source: src, t: tr}, tr.Done
	}
	if len(group) == 1 {
		name := names[group[0]]
		src, done := track(name, built[name].Source)
		res, err := runTable(ctx, cfg, id, name, d.Tables[name], built[name], src, 0, root, workers, sinkMem, fs)
		done()
		results[group[0]] = res
		return err
	}
	first := built[names[group[0]]]
	shared := pipeline.NewShared(id+"/"+d.Tables[names[group[0]]].Input, first.Source, len(group), workers, cfg.ChannelDepth)
	defer shared.Close()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		// The input's one decode, shared by the tables: labelled input=<dataset>/<input>.
		pprof.Do(gctx, pprof.Labels("input", id+"/"+d.Tables[names[group[0]]].Input), func(ctx context.Context) {
			err = shared.Run(ctx)
		})
		return err
	})
	for k, i := range group {
		name := names[i]
		g.Go(func() error {
			// A consumer decodes nothing: it needs only enough batches in
			// flight to keep its parallel stages busy.
			src, done := track(name, shared.Consumer(k))
			res, err := runTable(gctx, cfg, id, name, d.Tables[name], built[name], src, workers+1, root, workers, sinkMem, fs)
			done()
			results[i] = res
			return err
		})
	}
	return g.Wait()
}

// runTable runs one table; its goroutines (and any they start) carry the
// profiler label table=<dataset>/<table>, so that a --cpuprofile splits
// by table (go tool pprof -tags, or -tagfocus=table=habermas/comparisons).
func runTable(ctx context.Context, cfg *config.Config, id, name string, t *config.Table, b *stages.Built, src pipeline.Source, inflight int, root string, workers int, sinkMem memory.Allocator, fs sinks.FS) (res *TableResult, err error) {
	pprof.Do(ctx, pprof.Labels("table", id+"/"+name), func(ctx context.Context) {
		res, err = runTableLabelled(ctx, cfg, id, name, t, b, src, inflight, root, workers, sinkMem, fs)
	})
	return res, err
}

// runTableLabelled is runTable under its profiler label.
func runTableLabelled(ctx context.Context, cfg *config.Config, id, name string, t *config.Table, b *stages.Built, src pipeline.Source, inflight int, root string, workers int, sinkMem memory.Allocator, fs sinks.FS) (*TableResult, error) {
	var sink interface {
		pipeline.Sink
	}
	var tsink *sinks.Table
	var tally *rejectTally
	if root != "" {
		s, err := sinks.NewTable(root, name, b.Schema, t.PartitionBy, cfg.WriterFor(t), sinkMem)
		if err != nil {
			return nil, cfg.At(fmt.Sprintf("datasets.%s.tables.%s", id, name), err)
		}
		s.FS = fs
		// The rejects are tallied by rule as check tallies them, so that
		// the run's summary says why rows were rejected, not only how
		// many (the rows themselves are in _rejects).
		tally = &rejectTally{}
		tsink, sink = s, talliedSink{s, tally}
	} else {
		tally = &rejectTally{}
		if len(t.PartitionBy) > 0 {
			w := cfg.WriterFor(t)
			p, err := sinks.NewTablePartitioner(b.Schema, t.PartitionBy, w.MaxPartitions)
			if err != nil {
				return nil, cfg.At(fmt.Sprintf("datasets.%s.tables.%s", id, name), err)
			}
			tally.partitioner, tally.parts, tally.maxPartitions = p, map[string]bool{}, w.MaxPartitions
		}
		sink = tally
	}
	st, err := pipeline.Run(ctx, pipeline.Table{
		Name:         id + "/" + name,
		Source:       src,
		Stages:       b.Stages,
		Sink:         sink,
		Workers:      workers,
		ChannelDepth: cfg.ChannelDepth,
		MaxInFlight:  inflight,
		CountAfter:   b.CountAfter,
	})
	res := &TableResult{
		Name:        name,
		Description: t.Description,
		Input:       t.Input,
		PartitionBy: t.PartitionBy,
		InputRows:   st.InputRows,
		RowsIn:      st.RowsIn,
		Written:     st.Written,
		Rejected:    st.Rejected,
		Columns:     t.Columns,
		Seconds:     st.Duration.Seconds(),
		Checks:      st.Checks,
		Notes:       tableNotes(name, st.Notes, st.StageNotes),
	}
	res.Schema, res.SchemaHash = describeSchema(b.Schema, t.PartitionBy)
	if err == nil && st.RowsIn > 0 && st.Written == 0 {
		// Said where it is seen, not only as a 0 in the summary: a table
		// with no max_reject_ratio still publishes.
		note := fmt.Sprintf("%s: every one of its %d rows was rejected", name, st.RowsIn)
		switch {
		case tsink == nil:
		case len(t.PartitionBy) > 0:
			note += "; it has no files (no partition to put them in)"
		default:
			note += "; it is one file of no rows"
		}
		res.Notes = append(res.Notes, note)
	}
	if err == nil && tally != nil {
		res.Notes = append(res.Notes, tally.notes(name)...)
	}
	if err != nil {
		if tsink != nil {
			tsink.Abort()
		}
		return nil, err
	}
	if tsink != nil {
		files, err := tsink.Close()
		if err != nil {
			return nil, fmt.Errorf("table %s/%s: %w", id, name, err)
		}
		res.Files = files
		if n := nullPartitionRows(files, t.PartitionBy); n > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: %d rows have a null or empty partition value (%s), written to a %s folder, which readers take for null (an empty text too, as Hive and Spark write it) and pyarrow and pandas cannot read together with the other partitions (\"differing dictionaries\"); validate required: [%s] rejects the null ones instead", name, n, strings.Join(t.PartitionBy, ", "), sinks.HiveNull, strings.Join(t.PartitionBy, ", ")))
		}
	}
	return res, nil
}

// nullPartitionRows counts the rows of files in a partition with a null
// value (Hive's default partition), rejects' files left out.
func nullPartitionRows(files []sinks.FileInfo, partitionBy []string) int64 {
	var n int64
	for _, f := range files {
		for _, c := range partitionBy {
			if v, ok := f.Partition[c]; ok && v == nil {
				n += f.Rows
				break
			}
		}
	}
	return n
}

// tableNotes returns a table's notes: its input's, said once for the
// tables that read it, then its stages', named by the table as its other
// notes are ("messages: explode: 3 rows had empty lists").
func tableNotes(table string, input, stages []string) []string {
	out := append([]string(nil), input...)
	for _, n := range stages {
		out = append(out, table+": "+n)
	}
	return out
}

// talliedSink is a table's sink whose rejects a rejectTally counts too.
type talliedSink struct {
	pipeline.Sink
	tally *rejectTally
}

// Reject tallies rs, then hands them to the sink.
func (s talliedSink) Reject(ctx context.Context, rs []pipeline.Reject) error {
	s.tally.Reject(ctx, rs)
	return s.Sink.Reject(ctx, rs)
}

// rejectTally is the sink of a dry run (check): it writes nothing, and
// counts the rejected rows by rule and column with the first of each, so
// that check says why rows were rejected, not only how many.
type rejectTally struct {
	order []rejectKey
	seen  map[rejectKey]*rejectCount
	// The partitions the rows would open, found as the table's sink finds
	// them, so that check fails where run would: past max_partitions, or
	// at a value no folder can be named after.
	partitioner   *sinks.Partitioner
	parts         map[string]bool
	maxPartitions int
}

type rejectKey struct{ rule, column string }

type rejectCount struct {
	n     int64
	first pipeline.Reject
}

// Write finds the partition of each row of b, as the table's sink would.
func (r *rejectTally) Write(_ context.Context, b arrow.RecordBatch) error {
	if r.partitioner == nil {
		return nil
	}
	for i := range int(b.NumRows()) {
		pk, err := r.partitioner.Of(b, i)
		if err != nil {
			return &pipeline.RowError{File: pipeline.FileOf(b, i), Line: pipeline.LineOf(b, i), Err: err}
		}
		if !r.parts[pk.Path] {
			if len(r.parts) >= r.maxPartitions {
				return sinks.TooManyPartitionsAt(r.maxPartitions, b, i, pk.Path)
			}
			r.parts[pk.Path] = true
		}
	}
	return nil
}

// Reject counts rs; the sink's calls come from one goroutine, in input
// order, so the first of each is the same from run to run.
func (r *rejectTally) Reject(_ context.Context, rs []pipeline.Reject) error {
	if r.seen == nil {
		r.seen = map[rejectKey]*rejectCount{}
	}
	for _, x := range rs {
		k := rejectKey{x.Rule, x.Column}
		c := r.seen[k]
		if c == nil {
			c = &rejectCount{first: x}
			r.seen[k] = c
			r.order = append(r.order, k)
		}
		c.n++
	}
	return nil
}

// notes says, for each rule and column that rejected rows of table, how
// many and the first, in the order first met.
func (r *rejectTally) notes(table string) []string {
	var out []string
	for _, k := range r.order {
		c := r.seen[k]
		on := ""
		if k.column != "" {
			on = " on " + k.column
		}
		rows := "rows"
		if c.n == 1 {
			rows = "row"
		}
		out = append(out, fmt.Sprintf("%s: %d %s rejected by %s%s, first at %s:%d: %s", table, c.n, rows, k.rule, on, c.first.File, c.first.Line, c.first.Reason))
	}
	return out
}

// describeSchema lists the output columns (file columns, then partition
// columns) and hashes that list.
func describeSchema(s *arrow.Schema, partitionBy []string) ([]ColumnInfo, string) {
	isPart := map[string]bool{}
	for _, p := range partitionBy {
		isPart[p] = true
	}
	var cols, parts []ColumnInfo
	for _, f := range s.Fields() {
		if strings.HasPrefix(f.Name, "_") {
			continue
		}
		ci := ColumnInfo{Name: f.Name, Type: config.FormatType(f.Type)}
		if isPart[f.Name] {
			ci.Partition = true
			parts = append(parts, ci)
			continue
		}
		cols = append(cols, ci)
	}
	cols = append(cols, parts...)
	h := sha256.New()
	for _, c := range cols {
		fmt.Fprintf(h, "%s\t%s\t%v\n", c.Name, c.Type, c.Partition)
	}
	return cols, hex.EncodeToString(h.Sum(nil))
}

// inputStat is an input that exists: where it is and what it is.
type inputStat struct {
	id, rel, path string
	info          os.FileInfo
}

// unmoved checks that no input file was replaced or written to since
// stats were taken: its hash and its conversion read it apart, and the
// manifest would otherwise record one version of it beside tables made
// from another. Folder inputs are summed as they are converted.
func unmoved(stats []inputStat) error {
	for _, st := range stats {
		if st.info.IsDir() {
			continue
		}
		now, err := os.Stat(st.path)
		if err != nil || !os.SameFile(now, st.info) || now.Size() != st.info.Size() || !now.ModTime().Equal(st.info.ModTime()) {
			return fmt.Errorf("input %s: %s changed while it was read (replaced, or written to): run again once it is complete", st.id, st.rel)
		}
	}
	return nil
}

// statInputs checks every input exists, naming each one that does not.
func statInputs(d *config.Dataset, dataRoot string) ([]inputStat, error) {
	var out []inputStat
	var errs []error
	for _, id := range d.InputIDs() {
		in := d.Inputs[id]
		p := filepath.Join(dataRoot, filepath.FromSlash(in.Path))
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			root := dataRoot
			if abs, err := filepath.Abs(dataRoot); err == nil && abs != dataRoot {
				root = fmt.Sprintf("%s, that is %s", dataRoot, abs)
			}
			errs = append(errs, fmt.Errorf("input %s: %s does not exist (data root %s; set --data to the folder holding %s, or download it with agora fetch --data %s)", id, p, root, in.Path, dataRoot))
		case err != nil:
			errs = append(errs, fmt.Errorf("input %s: %w", id, err))
		case !fi.Mode().IsRegular() && !fi.IsDir():
			// A FIFO or a device would block the open, where no signal
			// reaches the run.
			errs = append(errs, fmt.Errorf("input %s: %s is not a regular file or a folder (%s)", id, p, fi.Mode().Type()))
		default:
			out = append(out, inputStat{id: id, rel: in.Path, path: p, info: fi})
		}
	}
	return out, errors.Join(errs...)
}

// inputGroups returns the tables of d (indexes into d.TableNames()) by
// the input they read, in the order the inputs first appear: each group
// shares one decode of its input, read by its first table's source
// (runGroup).
func inputGroups(d *config.Dataset) [][]int {
	var groups [][]int
	byInput := map[string]int{}
	for i, name := range d.TableNames() {
		in := d.Tables[name].Input
		if g, ok := byInput[in]; ok {
			groups[g] = append(groups[g], i)
			continue
		}
		byInput[in] = len(groups)
		groups = append(groups, []int{i})
	}
	return groups
}

// summedInputs returns, by input id, the sources that hash the files they
// convert (stages.FileSummer): of each group's input, the source that
// reads it, its first table's.
func summedInputs(d *config.Dataset, built map[string]*stages.Built, groups [][]int) map[string]stages.FileSummer {
	out := map[string]stages.FileSummer{}
	names := d.TableNames()
	for _, group := range groups {
		first := names[group[0]]
		if fs, ok := built[first].Source.(stages.FileSummer); ok {
			out[d.Tables[first].Input] = fs
		}
	}
	return out
}

// fingerprintInputs hashes the inputs, each on its own goroutine, and
// returns them sorted by id. It stops early when ctx is done.
func fingerprintInputs(ctx context.Context, stats []inputStat) ([]InputInfo, error) {
	out := make([]InputInfo, len(stats))
	errs := make([]error, len(stats))
	var g errgroup.Group
	for i, st := range stats {
		g.Go(func() error {
			out[i], errs[i] = fingerprint(ctx, st.id, st.rel, st.path, st.info)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("input %s: %w", st.id, errs[i])
			}
			return nil
		})
	}
	g.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// fingerprint hashes an input file, or every file of an input folder.
func fingerprint(ctx context.Context, id, rel, p string, fi os.FileInfo) (InputInfo, error) {
	// One read buffer for all the files of an input: a DeliData folder
	// holds thousands of small ones.
	buf := make([]byte, 256<<10)
	if !fi.IsDir() {
		sum, err := fileSHA256(ctx, p, buf)
		return InputInfo{ID: id, Path: rel, Bytes: fi.Size(), SHA256: hex.EncodeToString(sum[:])}, err
	}
	names, err := stages.ReadDirNames(p)
	if err != nil {
		return InputInfo{}, err
	}
	listed := make([]stages.FileSum, 0, len(names))
	for _, name := range names {
		if !strings.HasPrefix(name, ".") {
			listed = append(listed, stages.FileSum{Name: name})
		}
	}
	return fingerprintListed(ctx, id, rel, p, listed, buf)
}

// fingerprintListed fingerprints a folder input from a listing of its
// files in name order: the ones summed already (stages.FileSummer: while
// they were converted) as they are, the others hashed now, a name that
// is a folder now left out. buf is the read buffer; nil makes one.
func fingerprintListed(ctx context.Context, id, rel, p string, listed []stages.FileSum, buf []byte) (InputInfo, error) {
	if buf == nil {
		buf = make([]byte, 256<<10)
	}
	info := InputInfo{ID: id, Path: rel, Files: make([]FileDigest, 0, len(listed))}
	h := sha256.New()
	line := make([]byte, 0, 256)
	for _, f := range listed {
		if !f.Summed {
			var err error
			f.SHA256, f.Bytes, err = folderFileSHA256(ctx, filepath.Join(p, f.Name), buf)
			if errors.Is(err, errNotFile) {
				continue
			}
			if err != nil {
				return InputInfo{}, err
			}
		}
		hexSum := hex.EncodeToString(f.SHA256[:])
		info.Files = append(info.Files, FileDigest{Name: f.Name, Bytes: f.Bytes, SHA256: hexSum})
		info.Bytes += f.Bytes
		line = append(append(append(line[:0], f.Name...), ' '), hexSum...)
		h.Write(append(line, '\n'))
	}
	info.SHA256 = hex.EncodeToString(h.Sum(nil))
	return info, nil
}

// errNotFile is folderFileSHA256's answer for a name in the folder that
// is not a regular file.
var errNotFile = errors.New("not a regular file")

// folderFileSHA256 hashes a file of an input folder and returns its size,
// or errNotFile when the name is a folder, a FIFO or a device, or a link
// to one (which the conversion passes over too; a FIFO's open would wait
// for a writer forever).
func folderFileSHA256(ctx context.Context, p string, buf []byte) ([sha256.Size]byte, int64, error) {
	if st, err := os.Stat(p); err != nil {
		return [sha256.Size]byte{}, 0, err
	} else if !st.Mode().IsRegular() {
		return [sha256.Size]byte{}, 0, errNotFile
	}
	f, err := os.Open(p)
	if err != nil {
		return [sha256.Size]byte{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return [sha256.Size]byte{}, 0, err
	}
	sum, err := readerSHA256(ctx, f, buf)
	return sum, st.Size(), err
}

// fileSHA256 hashes a file, reading it into buf and checking ctx between
// reads.
func fileSHA256(ctx context.Context, p string, buf []byte) ([sha256.Size]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	defer f.Close()
	return readerSHA256(ctx, f, buf)
}

// readerSHA256 hashes what r holds, reading it into buf and checking ctx
// between reads.
func readerSHA256(ctx context.Context, r io.Reader, buf []byte) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	h := sha256.New()
	if _, err := io.CopyBuffer(h, ctxReader{ctx, r}, buf); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}

// ctxReader reads from r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

// buildRev is the commit the Makefile builds from ("1a2b3c4d5e6f", with
// "-dirty" for uncommitted changes), set with -ldflags -X: go build's own
// record of it is off where GOFLAGS has -buildvcs=false.
var buildRev string

// stampedVersion is v with the commit agora was built from, as go build
// records it in a git checkout ("0.1.0+1a2b3c4d5e6f", "+…-dirty" for
// uncommitted changes), so that a binary built from other code does not
// take a release made by another for its own (the skip check compares
// it). v alone where the build recorded none (go test, go run).
func stampedVersion(v string) string {
	if buildRev != "" {
		return v + "+" + buildRev
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	v += "+" + rev[:min(12, len(rev))]
	if dirty {
		v += "-dirty"
	}
	return v
}

// libraryVersions reports the versions of the libraries that shape the
// output bytes.
func libraryVersions() map[string]string {
	out := map[string]string{"go": runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, dep := range bi.Deps {
		switch dep.Path {
		case "github.com/apache/arrow-go/v18", "github.com/klauspost/compress", "github.com/valyala/fastjson":
			out[dep.Path] = dep.Version
		}
	}
	return out
}
