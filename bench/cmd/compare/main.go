// Command compare times agora against DuckDB, polars and pyarrow on the
// same conversions of scaled, generated inputs, in the same run, and prints
// a Markdown table of median wall time, throughput, peak RSS and ratios.
//
//	cd bench && go run ./cmd/compare --repo .. [--work DIR] [--sets crowdrag25:10,50;delidata:10;habermas:1]
//	    [--engines agora,duckdb,polars,pyarrow] [--reps 3] [--threads 2] [--verify] [--quick]
//	cd bench && go run ./cmd/compare --repo .. --sets habermas:10 --per-table
//
// With --per-table each table of a dataset's DuckDB script is timed on its
// own, agora with pipeline.yaml pruned to that table and DuckDB with only
// that table's statement, to show where the two part.
//
// Every engine runs as a child process (DuckDB by re-executing this binary
// with a hidden subcommand), so the peak RSS reported is the child's. The
// DuckDB SQL is in bench/sql, the Python conversions in bench/py.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agora-etl/agora/bench/inputs"
)

// duckdbChild is the hidden subcommand that runs one SQL file in DuckDB.
const duckdbChild = "__duckdb"

// verifyChild is the hidden subcommand of --verify. It runs in a child so
// that DuckDB's memory never enters the parent: on Linux a child's peak
// RSS starts at its parent's RSS at fork (exec keeps the old high-water
// mark), so the parent must stay small.
const verifyChild = "__verify"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line of a comparison.
type options struct {
	repo    string
	work    string
	sets    []inputs.Set
	engines []string
	reps    int
	threads int
	python  string
	build   bool
	keep    bool
	quick   bool
	verify  bool
	// perTable times each table of the DuckDB scripts alone (agora and
	// DuckDB only).
	perTable bool
}

// defaultSets is the set compared without --sets.
const defaultSets = "crowdrag25:10,50;delidata:10,50;habermas:1,1w10,10"

// quickSets is the smoke-test set of --quick: tiny inputs, one repetition.
const quickSets = "crowdrag25:0.2;delidata:0.2;habermas:0.02"

// run parses the command line and runs the comparison or the hidden
// DuckDB child; it returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == duckdbChild {
		if err := runDuckDBChild(args[1:], stdout); err != nil {
			fmt.Fprintf(stderr, "compare %s: %v\n", duckdbChild, err)
			return 1
		}
		return 0
	}
	if len(args) > 0 && args[0] == verifyChild {
		if err := runVerifyChild(args[1:], stdout); err != nil {
			fmt.Fprintf(stderr, "compare %s: %v\n", verifyChild, err)
			return 1
		}
		return 0
	}
	opts, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "compare: %v\n", err)
		return 2
	}
	if err := compare(opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "compare: %v\n", err)
		return 1
	}
	return 0
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", "..", "the agora repository (holds pipeline.yaml, cmd/agora, bench/sql, bench/py)")
	work := fs.String("work", "", "work folder for inputs, outputs and results.json (default REPO/bench/.work)")
	sets := fs.String("sets", "", "datasets and generator scales, e.g. \""+defaultSets+"\"")
	engines := fs.String("engines", "agora,agora-same,duckdb,polars,pyarrow", "engines to time, comma-separated (agora-same: agora with only the tables the DuckDB script writes; left out where that is every table)")
	reps := fs.Int("reps", 3, "repetitions per engine and input (the median is reported)")
	threads := fs.Int("threads", 2, "threads for every engine (GOMAXPROCS for agora, SET threads for DuckDB, POLARS_MAX_THREADS, pyarrow's CPU pool)")
	python := fs.String("python", "", "Python with polars and pyarrow (default REPO/.venv/bin/python, made by make interop's venv target)")
	noBuild := fs.Bool("no-build", false, "use REPO/bin/agora and REPO/bin/agora-gen as they are")
	keep := fs.Bool("keep", false, "keep each engine's last output under WORK/out")
	verify := fs.Bool("verify", false, "after the last repetition, compare every table with agora's by value (DuckDB EXCEPT ALL)")
	quick := fs.Bool("quick", false, "smoke test: tiny inputs ("+quickSets+") and one repetition unless --sets/--reps are given")
	perTable := fs.Bool("per-table", false, "time each table of the DuckDB script alone: agora with pipeline.yaml pruned to it, DuckDB with its statement only (engines agora and duckdb)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: compare [flags]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	o := options{reps: *reps, threads: *threads, build: !*noBuild, keep: *keep, quick: *quick, verify: *verify, perTable: *perTable}
	var err error
	if o.repo, err = filepath.Abs(*repo); err != nil {
		return options{}, fmt.Errorf("--repo: %w", err)
	}
	if _, err := os.Stat(filepath.Join(o.repo, "pipeline.yaml")); err != nil {
		return options{}, fmt.Errorf("--repo %s: no pipeline.yaml: %w", o.repo, err)
	}
	o.work = *work
	if o.work == "" {
		o.work = filepath.Join(o.repo, "bench", ".work")
	}
	if o.work, err = filepath.Abs(o.work); err != nil {
		return options{}, fmt.Errorf("--work: %w", err)
	}
	o.python = *python
	if o.python == "" {
		o.python = filepath.Join(o.repo, ".venv", "bin", "python")
	}
	spec := *sets
	if spec == "" {
		spec = defaultSets
		if o.quick {
			spec = quickSets
		}
	}
	if o.sets, err = inputs.Parse(spec); err != nil {
		return options{}, err
	}
	if o.quick && !set["reps"] {
		o.reps = 1
	}
	if o.reps < 1 {
		return options{}, fmt.Errorf("--reps must be at least 1, got %d", o.reps)
	}
	if o.threads < 1 {
		return options{}, fmt.Errorf("--threads must be at least 1, got %d", o.threads)
	}
	engineList := *engines
	if o.perTable && !set["engines"] {
		engineList = "agora,duckdb"
	}
	for _, e := range strings.Split(engineList, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !knownEngine(e) {
			return options{}, fmt.Errorf("--engines: unknown engine %q (want agora, agora-same, duckdb, polars, pyarrow)", e)
		}
		o.engines = append(o.engines, e)
	}
	if len(o.engines) == 0 {
		return options{}, errors.New("--engines: no engine given")
	}
	if o.perTable {
		for _, e := range o.engines {
			if e != "agora" && e != "duckdb" {
				return options{}, fmt.Errorf("--per-table: engine %s cannot write one table alone (want agora, duckdb)", e)
			}
		}
	}
	return o, nil
}
