// Command instr compares two builds of agora by the instructions a run
// executes, counted by valgrind (cachegrind without its cache simulation).
// On a shared machine CPU seconds of one run vary by 10–40% with the
// neighbours' load, which hides a change of a few percent behind many
// repetitions; the instruction count of a run varies by about 0.5%
// (garbage collection and scheduling still differ from run to run). It
// does not see what costs time without instructions: cache misses, page
// faults, system calls. So it tells whether a change does less work, and
// the bench (cmd/compare) whether that shows in seconds.
//
//	cd bench && go run ./cmd/instr --repo .. --base 5e63b27 --sets "crowdrag25:10;habermas:1" --reps 3
//
// The base is built from a detached git worktree of REF, the head from
// the repository as it is (uncommitted changes included); each runs with
// its own pipeline.yaml on the inputs cmd/compare generates under
// WORK/data (package inputs; generated here with the head's agora-gen
// when missing). A run under valgrind takes about 15 times the CPU time
// it takes without, on one core.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agora-etl/agora/bench/inputs"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "instr:", err)
		os.Exit(1)
	}
}

// options is the parsed command line.
type options struct {
	repo, work, base string
	sets             []inputs.Set
	reps, parallel   int
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("instr", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.repo, "repo", "..", "the agora repository (the head build)")
	fs.StringVar(&o.work, "work", "", "work folder (default REPO/bench/.work, shared with cmd/compare)")
	fs.StringVar(&o.base, "base", "", "git revision to build the base from (required)")
	sets := fs.String("sets", "crowdrag25:10;habermas:1", "input sets, as cmd/compare's --sets")
	fs.IntVar(&o.reps, "reps", 3, "runs of each build on each set")
	fs.IntVar(&o.parallel, "parallel", 2, "runs under valgrind at once (each uses one core)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.base == "" {
		return errors.New("--base REF is required")
	}
	if o.reps < 1 || o.parallel < 1 {
		return errors.New("--reps and --parallel must be at least 1")
	}
	var err error
	if o.sets, err = inputs.Parse(*sets); err != nil {
		return err
	}
	if o.repo, err = filepath.Abs(o.repo); err != nil {
		return err
	}
	if o.work == "" {
		o.work = filepath.Join(o.repo, "bench", ".work")
	}
	if o.work, err = filepath.Abs(o.work); err != nil {
		return err
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		return errors.New("valgrind is not installed (Debian: apt-get install valgrind)")
	}
	dir := filepath.Join(o.work, "instr")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	builds, err := buildBoth(o, dir, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "| set | base instructions (median) | head instructions (median) | head / base | base runs | head runs |")
	fmt.Fprintln(stdout, "|---|---:|---:|---:|---|---|")
	for _, in := range o.sets {
		data, err := inputs.Generate(o.work, filepath.Join(dir, "agora-gen"), in, stderr)
		if err != nil {
			return err
		}
		counts, err := countAll(o, builds, in, data, filepath.Join(dir, "out"))
		if err != nil {
			return err
		}
		b, h := median(counts[0]), median(counts[1])
		fmt.Fprintf(stdout, "| %s:%s | %s | %s | %.4f | %s | %s |\n", in.Dataset, in.Label(),
			billions(b), billions(h), float64(h)/float64(b), list(counts[0]), list(counts[1]))
	}
	return nil
}

// build is one agora binary and the pipeline.yaml it runs with.
type build struct{ name, bin, config string }

// buildBoth builds the base from a worktree of o.base and the head from
// the repository.
func buildBoth(o options, dir string, stderr io.Writer) ([2]build, error) {
	var out [2]build
	src := filepath.Join(dir, "base-src")
	_ = exec.Command("git", "-C", o.repo, "worktree", "remove", "--force", src).Run()
	if err := os.RemoveAll(src); err != nil {
		return out, err
	}
	if err := cmdRun(stderr, o.repo, "git", "worktree", "add", "--detach", src, o.base); err != nil {
		return out, fmt.Errorf("worktree of %s: %w", o.base, err)
	}
	defer exec.Command("git", "-C", o.repo, "worktree", "remove", "--force", src).Run()
	if err := cmdRun(stderr, o.repo, "go", "build", "-o", filepath.Join(dir, "agora-gen"), "./cmd/agora-gen"); err != nil {
		return out, fmt.Errorf("build agora-gen: %w", err)
	}
	for i, b := range []struct{ name, src string }{{"base", src}, {"head", o.repo}} {
		bin := filepath.Join(dir, "agora-"+b.name)
		if err := cmdRun(stderr, b.src, "go", "build", "-o", bin, "./cmd/agora"); err != nil {
			return out, fmt.Errorf("build %s: %w", b.name, err)
		}
		cfg := filepath.Join(dir, "pipeline-"+b.name+".yaml")
		y, err := os.ReadFile(filepath.Join(b.src, "pipeline.yaml"))
		if err != nil {
			return out, err
		}
		if err := os.WriteFile(cfg, y, 0o644); err != nil {
			return out, err
		}
		out[i] = build{name: b.name, bin: bin, config: cfg}
	}
	return out, nil
}

// countAll runs each build o.reps times on one input set, the two builds
// taking turns, o.parallel runs at once, and returns the counts of the
// base and of the head.
func countAll(o options, builds [2]build, in inputs.Set, data, outRoot string) ([2][]int64, error) {
	type job struct{ b, rep int }
	var jobs []job
	for r := 0; r < o.reps; r++ {
		jobs = append(jobs, job{0, r}, job{1, r})
	}
	var (
		mu     sync.Mutex
		counts [2][]int64
		errs   []error
		wg     sync.WaitGroup
		slots  = make(chan struct{}, o.parallel)
	)
	for i, j := range jobs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			out := filepath.Join(outRoot, strconv.Itoa(i))
			n, err := count(builds[j.b], in.Dataset, data, out)
			os.RemoveAll(out)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s on %s:%s: %w", builds[j.b].name, in.Dataset, in.Label(), err))
				return
			}
			counts[j.b] = append(counts[j.b], n)
		})
	}
	wg.Wait()
	return counts, errors.Join(errs...)
}

// count runs one agora run under valgrind and returns the instructions
// it executed.
func count(b build, dataset, data, out string) (int64, error) {
	cmd := exec.Command("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
		b.bin, "run", "--config", b.config, "--data", data, "--only", dataset, "--out", out, "--mode", "overwrite", "--force")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%w: %s", err, lastLines(stderr.String(), 5))
	}
	return parseRefs(stderr.String())
}

// refsLine is cachegrind's summary line: "==123== I   refs:      34,087,472,182".
var refsLine = regexp.MustCompile(`(?m)^==\d+==\s+I\s+refs:\s+([\d,]+)\s*$`)

// parseRefs returns the instruction count of cachegrind's summary.
func parseRefs(s string) (int64, error) {
	m := refsLine.FindAllStringSubmatch(s, -1)
	if len(m) != 1 {
		return 0, fmt.Errorf("want one instruction count in valgrind's output, found %d", len(m))
	}
	return strconv.ParseInt(strings.ReplaceAll(m[0][1], ",", ""), 10, 64)
}

// median of counts (the lower middle of an even number).
func median(c []int64) int64 {
	s := slices.Clone(c)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func billions(n int64) string { return fmt.Sprintf("%.3f G", float64(n)/1e9) }

func list(c []int64) string {
	p := make([]string, len(c))
	for i, n := range c {
		p[i] = fmt.Sprintf("%.3f", float64(n)/1e9)
	}
	return strings.Join(p, " ")
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(len(l)-n, 0):], "\n")
}

// cmdRun runs a command in dir, its output to w.
func cmdRun(w io.Writer, dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = w, w
	return cmd.Run()
}
