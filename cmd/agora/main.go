// Command agora converts public deliberation and evaluation research
// datasets into flattened, validated, Hive-partitioned Parquet.
//
// Commands: run, check, fetch, inspect, schema, version.
//
// Exit codes: 0 success; 1 the run failed (bad input, I/O error, a failed
// or mismatched download); 2 the command line or pipeline.yaml is wrong;
// 3 published, but a table rejected more rows than its max_reject_ratio;
// 130 interrupted (SIGINT or SIGTERM), with the previous release left in
// place.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/spf13/cobra"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/mempool"
	"github.com/agora-etl/agora/stages"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitRejects     = 3
	exitInterrupted = 130
)

// setMemoryLimit says to apply pipeline.yaml's memory_limit; main sets it
// (tests run commands in-process and keep the test binary's own setting).
var setMemoryLimit bool

func main() {
	setMemoryLimit = true
	Version = stampedVersion(Version)
	// Sampling allocations for a heap profile costs a few percent of the
	// CPU; only the profiling flags need it.
	if !slices.ContainsFunc(os.Args, func(a string) bool {
		return strings.HasPrefix(a, "--memprofile") || strings.HasPrefix(a, "--peakheapprofile")
	}) {
		runtime.MemProfileRate = 0
	}
	// arrow-go makes some buffers of its own with memory.DefaultAllocator:
	// its Parquet encoders' page buffers, grown by doubling for every
	// column chunk. A pool reuses them as it does the stages' and the
	// writers' buffers: at Habermas 10x rows it took the collections from
	// 138 to 124, and to 99 with the pools keeping buffers from 4 KiB
	// (docs/performance.md, the last release). TestPoolsKeepOutput runs
	// the pipeline with a poisoning one.
	memory.DefaultAllocator = mempool.New(poolBytes)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError marks errors that are the user's command line or config.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usageArgs makes a failed check of a command's arguments a usage error
// (exit 2): cobra's own checks return plain errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{fmt.Errorf("%w\nsee '%s --help'", err, c.CommandPath())}
		}
		return nil
	}
}

// datasetArgs is the argument check of run and check: their arguments
// name the datasets to run, as --only does (fetch and schema take
// dataset names as arguments too). Given with --only, they are a usage
// error: which of the two is meant is not clear.
func datasetArgs(only *[]string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		if c.Flags().Changed("only") {
			return fmt.Errorf("name the datasets as arguments or with --only, not both (got %q and --only %s)", args, strings.Join(*only, ","))
		}
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				return fmt.Errorf("%q is not a dataset name (flags start with --)", a)
			}
		}
		*only = args
		return nil
	}
}

// noArgs is the argument check of a command that takes none.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%s takes no arguments, got %q (flags start with --)", c.CommandPath(), args[0])
	}
	return nil
}

// unknownCommand is the root's argument check: the root takes none, so an
// argument is a command that does not exist.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errors.New(msg)
}

// jsonLogsAsked reports whether args ask for --log-format json, for an
// error in parsing the flags before it (an unknown flag) to be JSON too.
func jsonLogsAsked(args []string) bool {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "--log-format=json" || a == "--log-format" && i+1 < len(args) && args[i+1] == "json" {
			return true
		}
	}
	return false
}

// execute runs the command line and returns the exit code.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &stickyWriter{w: stdout}
	root := newRoot(out, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil && out.err != nil {
		// A summary, schema or report that did not reach stdout (a full
		// disk, a closed descriptor) is a failed command.
		err = fmt.Errorf("writing to stdout: %w", out.err)
	}
	if err == nil {
		return exitOK
	}
	// The last word goes out as the log lines did: with --log-format json
	// a scheduler's collector reads every stderr line as JSON.
	report := func(msg string) { fmt.Fprintln(stderr, "agora:", msg) }
	if f := root.PersistentFlags().Lookup("log-format"); f != nil && f.Value.String() == "json" || jsonLogsAsked(args) {
		log := slog.New(slog.NewJSONHandler(stderr, nil))
		report = func(msg string) { log.Error(msg) }
	}
	report(err.Error())
	var fe *config.FieldError
	var ue usageError
	var re *rejectsExceeded
	switch {
	case errors.As(err, &re):
		return exitRejects
	case ctx.Err() != nil:
		if cmd != nil && cmd.Name() == "fetch" {
			report("interrupted; a file not finished is left as NAME.part, and fetch takes it up again (from where it stopped, when a checksum is published)")
		} else {
			report(interruptedNote(err))
		}
		return exitInterrupted
	case errors.As(err, &ue), errors.As(err, &fe):
		return exitUsage
	}
	return exitFailed
}

// stickyWriter passes writes on to w and keeps the first error, which
// the commands' many small writes would otherwise drop.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// interruptedNote says what an interrupted run left published: datasets
// run one after another, each published when it is done, and those
// published before the signal stay.
func interruptedNote(err error) string {
	var ie *interrupted
	if errors.As(err, &ie) && len(ie.published) > 0 {
		return fmt.Sprintf("interrupted; published before the interrupt: %s; the other datasets' previous releases are unchanged", strings.Join(ie.published, ", "))
	}
	return "interrupted; the previous releases are unchanged"
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "agora",
		Short: "Convert deliberation and evaluation research datasets to validated, Hive-partitioned Parquet",
		Long: `agora converts public research datasets (CrowdRAG-25, DeliData, Habermas Machine
comparisons) into flattened, validated, Hive-partitioned Parquet for DuckDB,
Spark, pandas and polars. Datasets are declared in pipeline.yaml.

Exit codes: 0 success (also: nothing changed, nothing to do), 1 a dataset
failed (it keeps its previous release; the others still run) or a download
failed or did not match its published checksum, 2 bad command line or
pipeline.yaml, 3 a table rejected more rows than its max_reject_ratio (run:
published all the same, or unchanged since such a release; check: nothing is
written), 130 interrupted (the dataset being run keeps its previous
release; those published before the signal stay).

On a terminal, run, check and fetch show a live progress bar per table or
download; otherwise a progress log line every 5 seconds (--quiet: neither).
Logs go to stderr (--log-format json for schedulers), summaries to stdout.`,
		Example: `  agora fetch --data ~/datasets                      # download the official releases
  agora run --data ~/datasets --out ~/releases        # convert and publish
  agora inspect ~/releases/crowdrag25/ratings         # look at a table
  agora schema crowdrag25 --format markdown           # the output schema, from pipeline.yaml`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
		// Runnable, so that an unknown command reaches Args (a usage
		// error) instead of cobra's plain error; alone, it shows the help.
		Args:                       usageArgs(unknownCommand),
		SuggestionsMinimumDistance: 2,
		RunE:                       func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nsee '%s --help'", err, c.CommandPath())}
	})
	g := &globalOptions{stderr: stderr}
	pf := root.PersistentFlags()
	pf.StringVar(&g.LogFormat, "log-format", "text", "log lines on stderr as text or json (for schedulers)")
	pf.BoolVarP(&g.Quiet, "quiet", "q", false, "no progress display or progress log lines")
	pf.DurationVar(&g.ProgressInterval, "progress-interval", 5*time.Second, "how often progress is logged when stderr is not a terminal")
	pf.MarkHidden("progress-interval")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return g.validate() }
	// --version prints what the version command does (cobra's own says
	// "agora version X" alone). The template is text/template: braces in
	// the text are escaped.
	root.SetVersionTemplate(strings.NewReplacer("{{", `{{"{{"}}`).Replace(versionText()))
	root.AddCommand(newRunCmd(stdout, g, false), newRunCmd(stdout, g, true), newVersionCmd(stdout),
		newInspectCmd(stdout), newSchemaCmd(stdout), newFetchCmd(stdout, g))
	return root
}

func newRunCmd(stdout io.Writer, g *globalOptions, check bool) *cobra.Command {
	opts := runOptions{}
	cmd := &cobra.Command{
		Use:   "run [DATASET...]",
		Short: "Run the pipeline and publish the datasets' releases",
		Example: `  agora run                                  # shipped samples in testdata/ → out/
  agora run --data ~/datasets crowdrag25     # one dataset (as --only crowdrag25)
  agora run --workers 1                      # serial, same output bytes`,
		Args: usageArgs(datasetArgs(&opts.Only)),
	}
	if check {
		cmd.Use = "check [DATASET...]"
		cmd.Short = "Validate pipeline.yaml and decode every input, writing nothing"
		cmd.Example = `  agora check
  agora check --data ~/datasets crowdrag25`
	}
	f := cmd.Flags()
	f.StringVarP(&opts.ConfigPath, "config", "c", "pipeline.yaml", "pipeline file")
	f.StringVar(&opts.Data, "data", "", "data root holding the input files (default: pipeline.yaml's data, testdata/)")
	if !check {
		f.StringVar(&opts.Out, "out", "", "output root (default: pipeline.yaml's out, out/)")
		f.StringVar(&opts.Mode, "mode", "error", "when the published release differs from this run: error (keep it, fail) or overwrite (replace it)")
		f.BoolVar(&opts.Force, "force", false, "run even when inputs, config and agora version match the published release")
	}
	verb := "run"
	if check {
		verb = "check"
	}
	f.StringSliceVar(&opts.Only, "only", nil, verb+" only these datasets (comma-separated; or name them as arguments)")
	f.IntVar(&opts.Workers, "workers", 0, "goroutines per stage (default: pipeline.yaml's workers, else one per CPU)")
	var cpuProfile, memProfile, peakProfile, traceFile string
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) to this file")
	f.StringVar(&memProfile, "memprofile", "", "write a heap profile (pprof, allocations) to this file at the end")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
	f.StringVar(&peakProfile, "peakheapprofile", "", "write a heap profile (pprof, in use) taken at the largest live heap seen")
	f.MarkHidden("peakheapprofile")
	f.StringVar(&traceFile, "trace", "", "write an execution trace (go tool trace) to this file")
	f.MarkHidden("trace")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		log := g.logger()
		stopTrace, err := startRecording(traceFile, trace.Start, trace.Stop)
		if err != nil {
			return err
		}
		defer stopTrace()
		stopCPU, err := startRecording(cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile)
		if err != nil {
			return err
		}
		defer stopCPU()
		if peakProfile != "" {
			stop := watchPeakHeap(peakProfile)
			defer stop()
		}
		if memProfile != "" {
			defer func() {
				if pf, err := os.Create(memProfile); err == nil {
					pprof.Lookup("allocs").WriteTo(pf, 0)
					pf.Close()
				}
			}()
		}
		cfg, err := loadConfig(opts.ConfigPath)
		if err != nil {
			return err
		}
		// Spilled batches and key runs go to a folder of this run's, which
		// also clears what runs killed with kill -9 left in $TMPDIR.
		closeSpill, err := stages.OpenRunSpillDir(stages.SpillDir)
		if err != nil {
			return err
		}
		defer closeSpill()
		if setMemoryLimit && cfg.MemoryLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
			ceiling, from := memoryCeiling("/")
			if ceiling > 0 && cfg.MemoryLimit > ceiling {
				log.Warn("memory limit lowered to its ceiling", "memory_limit", ceiling, "configured", cfg.MemoryLimit, "ceiling", from)
			}
			defer adaptiveMemoryLimit(cfg.MemoryLimit, ceiling, 250*time.Millisecond, func(limit int64, share float64, atCeiling bool) {
				if atCeiling {
					log.Warn("memory limit not raised: it is at its ceiling, and the collector will work harder", "memory_limit", limit, "ceiling", from, "gc_and_scavenge_cpu_share", roundTo(share, 2))
					return
				}
				log.Info("memory limit raised: the live data does not fit under it", "memory_limit", limit, "gc_and_scavenge_cpu_share", roundTo(share, 2))
			})()
		}
		if opts.Data == "" {
			opts.Data = cfg.Data
		}
		if opts.Out == "" {
			opts.Out = cfg.Out
		}
		if opts.Mode != "error" && opts.Mode != "overwrite" && !check {
			return usageError{fmt.Errorf("--mode must be error or overwrite, got %q", opts.Mode)}
		}
		if opts.Workers < 0 {
			return usageError{fmt.Errorf("--workers must be ≥ 0, got %d", opts.Workers)}
		}
		opts.DryRun = check
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
		written := "written"
		if check {
			written = "would write" // check writes nothing
		}
		// The header goes out with the first table's line: a run that
		// fails before any table is done prints no empty table.
		header := sync.OnceFunc(func() {
			fmt.Fprintf(tw, "dataset\ttable\trows in\t%s\trejected\tfiles\tseconds\t\n", written)
		})
		var notes []string
		ui, progressDone := g.progress(cmd.Context(), log)
		opts.Progress = ui
		err = runAll(cmd.Context(), cfg, opts, func(r *DatasetResult) {
			if r.Failed != nil {
				// Said on stdout too, where a summary kept in a file
				// would otherwise not show the dataset at all.
				header()
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.ID, "FAILED", "-", "-", "-", "-", "-")
				keeps := "its previous release kept"
				if check {
					keeps = "nothing written"
				}
				cause := r.Failed
				if u := errors.Unwrap(cause); u != nil {
					cause = u // runAll's error begins with the dataset's id
				}
				notes = append(notes, fmt.Sprintf("%s: FAILED, %s: %v", r.ID, keeps, cause))
				return
			}
			for _, t := range r.Tables {
				files, bytes := 0, int64(0)
				for _, f := range t.Files {
					if len(f.Path) < 9 || f.Path[:9] != "_rejects/" {
						files++
						bytes += f.Bytes
					}
				}
				header()
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.2f\t\n", r.ID, t.Name, t.RowsIn, t.Written, t.Rejected, files, t.Seconds)
				if check {
					log.Info("table checked", "dataset", r.ID, "table", t.Name, "rows_in", t.RowsIn, "would_write", t.Written, "rejected", t.Rejected, "seconds", roundTo(t.Seconds, 2))
				} else {
					log.Info("table done", "dataset", r.ID, "table", t.Name, "rows_in", t.RowsIn, "written", t.Written, "rejected", t.Rejected, "files", files, "bytes", bytes, "seconds", roundTo(t.Seconds, 2))
				}
				for _, c := range t.Checks {
					ex := ""
					if len(c.Examples) > 0 {
						ex = fmt.Sprintf(", first at %s:%d: %s", c.Examples[0].File, c.Examples[0].Line, c.Examples[0].Reason)
					}
					at := ""
					if c.Check != "" {
						at = " (" + c.Check + ")"
					}
					where := "flagged in manifest.json"
					if check {
						where = "run flags them in manifest.json"
					}
					notes = append(notes, fmt.Sprintf("%s/%s: check %s on %s%s failed on %d rows (kept, %s)%s", r.ID, t.Name, c.Rule, c.Column, at, c.Failures, where, ex))
					log.Warn("check failed", "dataset", r.ID, "table", t.Name, "rule", c.Rule, "column", c.Column, "check", c.Check, "rows", c.Failures)
				}
				for _, n := range t.Notes {
					line := r.ID + ": " + n
					if strings.HasPrefix(n, t.Name+": ") {
						// The table's own note: dataset/table, as a check's.
						line = r.ID + "/" + n
					}
					if !slices.Contains(notes, line) {
						notes = append(notes, line)
						// The notes on stdout are for a person; the log,
						// which a scheduler keeps, gets them too, as
						// information (a file a skip glob passes over is a
						// note too, and no cause to alert).
						log.Info(n, "dataset", r.ID, "table", t.Name, "note", true)
					}
				}
			}
			for _, n := range r.Notes {
				notes = append(notes, r.ID+": "+n)
				log.Warn(n, "dataset", r.ID)
			}
			if r.Skipped {
				notes = append(notes, fmt.Sprintf("%s: unchanged since the release in %s (inputs, config and agora version match its manifest.json); nothing to do (--force runs anyway)", r.ID, r.Target))
				log.Info("unchanged", "dataset", r.ID, "path", r.Target)
			} else if r.Target != "" {
				log.Info("published", "dataset", r.ID, "path", r.Target, "seconds", roundTo(r.Duration.Seconds(), 2))
			}
		})
		progressDone()
		tw.Flush()
		for _, n := range notes {
			fmt.Fprintln(stdout, "note:", n)
		}
		return err
	}
	return cmd
}

// roundTo rounds x to digits decimals, for log attributes that stay
// numbers in JSON logs.
func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print agora's version and the versions of the libraries that shape its output",
		Example: `  agora version
  agora --version`,
		Args: usageArgs(noArgs),
		RunE: func(*cobra.Command, []string) error {
			io.WriteString(stdout, versionText()) // a failed write is execute's to report
			return nil
		},
	}
}

// versionText is what `agora version` and `agora --version` print:
// agora's version, then the libraries that shape the output.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agora %s\n", Version)
	libs := libraryVersions()
	for _, k := range slices.Sorted(maps.Keys(libs)) {
		fmt.Fprintf(&b, "  %s %s\n", k, libs[k])
	}
	return b.String()
}
