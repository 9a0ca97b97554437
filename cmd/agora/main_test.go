package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/mempool"
	"github.com/agora-etl/agora/sinks"
	"github.com/agora-etl/agora/stages"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) {
	// Tests that need a real process (a pseudo-terminal) run the test
	// binary itself as agora.
	if os.Getenv("AGORA_TEST_EXEC_MAIN") == "1" {
		main()
	}
	goleak.VerifyTestMain(m)
}

func agora(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := execute(t.Context(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// treeDigest maps every file under dir to its contents.
func treeDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !info.IsDir() && !strings.HasSuffix(p, ".lock") { // lock files name their holder
			rel, _ := filepath.Rel(dir, p)
			b, _ := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out
}

func TestRunSamplesGolden(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := agora(t, "run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"crowdrag25", "ratings", "588", "votes", "2940"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "crowdrag25", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Library versions depend on the build; everything else is fixed.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "libraries")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(m)
	got := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	golden := filepath.Join("testdata", "crowdrag25.manifest.golden.json")
	if *update {
		os.WriteFile(golden, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Errorf("manifest differs from %s (run go test ./cmd/agora -update if the change is intended)", golden)
	}
	if _, err := os.Stat(filepath.Join(out, "crowdrag25", "_SUCCESS")); err != nil {
		t.Error("no _SUCCESS marker")
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("staging left behind: %s", e.Name())
		}
	}
}

func TestOutputIndependentOfWorkers(t *testing.T) {
	one := sampleRelease(t, "../../pipeline.yaml", "1")
	four := sampleRelease(t, "../../pipeline.yaml", "4")
	sameTrees(t, one, four, "--workers 1 and 4")
}

// sampleRelease runs config on the shipped samples with workers and
// returns the digest of the release it writes.
func sampleRelease(t *testing.T, config, workers string) map[string]string {
	t.Helper()
	out := t.TempDir()
	if code, so, se := agora(t, "run", "--config", config, "--data", "../../testdata", "--out", out, "--workers", workers); code != 0 {
		t.Fatalf("%s, workers %s: exit %d\n%s%s", config, workers, code, so, se)
	}
	return treeDigest(t, out)
}

// sameTrees fails the test unless two releases hold the same files with
// the same bytes.
func sameTrees(t *testing.T, a, b map[string]string, between string) {
	t.Helper()
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d vs %d files", len(a), len(b))
	}
	for p, d := range a {
		if b[p] != d {
			t.Errorf("%s differs between %s", p, between)
		}
	}
}

// withSpillMemory runs f with the unique and occurrence key sets keeping
// memKeys keys in memory, aggregates keeping memKeys groups, whole-table
// derivations holding one byte, and their files in dir.
func withSpillMemory(memKeys int, dir string, f func()) {
	oldKeys, oldGroups, oldBytes, oldDir := stages.UniqueMemKeys, stages.AggregateMemGroups, stages.SpillBytes, stages.SpillDir
	stages.UniqueMemKeys, stages.AggregateMemGroups, stages.SpillDir = memKeys, memKeys, dir
	if memKeys < oldKeys {
		stages.SpillBytes = 1
	}
	defer func() {
		stages.UniqueMemKeys, stages.AggregateMemGroups, stages.SpillBytes, stages.SpillDir = oldKeys, oldGroups, oldBytes, oldDir
	}()
	f()
}

// TestOutputIndependentOfSpilling: the shipped pipeline gives the same
// release when its unique rules' and occurrence derivations' keys go to
// run files from the third key on, its aggregates' groups (DeliData
// groups, Habermas round_outcomes) to partition files from the third
// group on, and the rows held by whole-table derivations (lead,
// conflicting_duplicate) to spill files; it leaves no file behind; a run
// file that cannot be made fails the run naming it.
func TestOutputIndependentOfSpilling(t *testing.T) {
	var trees []map[string]string
	for _, memKeys := range []int{stages.UniqueMemKeys, 3} {
		spill := t.TempDir()
		withSpillMemory(memKeys, spill, func() {
			out := t.TempDir()
			if code, so, se := agora(t, "run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", out); code != 0 {
				t.Fatalf("%d keys in memory: exit %d\n%s%s", memKeys, code, so, se)
			}
			trees = append(trees, treeDigest(t, out))
		})
		if left, _ := os.ReadDir(spill); len(left) != 0 {
			t.Errorf("%d keys in memory: %d files left in the spill folder", memKeys, len(left))
		}
	}
	sameTrees(t, trees[0], trees[1], "all keys in memory and 3")
	withSpillMemory(3, filepath.Join(t.TempDir(), "missing"), func() {
		code, _, se := agora(t, "run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", t.TempDir())
		// The run makes its own folder there first, so it stops before
		// any work, naming the folder.
		if code == 0 || !strings.Contains(se, "temporary folder") || !strings.Contains(se, "missing") {
			t.Errorf("spilling into a missing folder: exit %d, want a failure naming the folder; stderr:\n%s", code, se)
		}
	})
}

func TestRerunReplacesRelease(t *testing.T) {
	out := t.TempDir()
	for i := 0; i < 2; i++ {
		if code, so, se := agora(t, "run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", out); code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", i, code, so, se)
		}
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") {
			continue // the datasets' lock files stay, unlocked
		}
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "crowdrag25 delidata habermas" {
		t.Fatalf("out holds %v: staging or an old release left behind", names)
	}
}

func TestCommandErrors(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "pipeline.yaml")
	src, _ := os.ReadFile("../../pipeline.yaml")
	os.WriteFile(typo, bytes.Replace(src, []byte("partition_by: [dimension]"), []byte("partiton_by: [dimension]"), 1), 0o644)
	dictTypo := filepath.Join(dir, "dict.yaml")
	os.WriteFile(dictTypo, bytes.Replace(src, []byte("dictionary: [references_ids, references_texts]"), []byte("dictionary: [references_ids, reference_texts]"), 1), 0o644)
	sharedTypo := filepath.Join(dir, "shared.yaml")
	os.WriteFile(sharedTypo, bytes.Replace(src, []byte("shared_pages: [references_ids, references_texts]"), []byte("shared_pages: [references_ids, references]"), 1), 0o644)
	topDict := filepath.Join(dir, "topdict.yaml")
	os.WriteFile(topDict, bytes.Replace(src, []byte("writer:\n  compression: zstd\n"), []byte("writer:\n  compression: zstd\n  dictionary: [text, nope]\n"), 1), 0o644)
	descTypo := filepath.Join(dir, "desc.yaml")
	os.WriteFile(descTypo, bytes.Replace(src, []byte("          query_id: Topic id of the pair."), []byte("          quey_id: Topic id of the pair."), 1), 0o644)
	partStats := filepath.Join(dir, "stats.yaml")
	os.WriteFile(partStats, bytes.Replace(src, []byte("writer: {no_statistics: [text]}"), []byte("writer: {no_statistics: [text, style]}"), 1), 0o644)
	// A key n_words does not read, on the derive item's own line (not its step's).
	nWords := []byte("{name: n_words, fn: n_words, args: [cleaned_text]}")
	deriveKey := filepath.Join(dir, "derive.yaml")
	os.WriteFile(deriveKey, bytes.Replace(src, nWords, []byte("{name: n_words, fn: n_words, args: [cleaned_text], by: [topic]}"), 1), 0o644)
	nWordsLine := bytes.Count(src[:bytes.Index(src, nWords)], []byte("\n")) + 1
	// An input that is a FIFO: its open would wait for a writer forever,
	// where no signal reaches the run.
	fifoData := filepath.Join(dir, "fifo")
	os.MkdirAll(filepath.Join(fifoData, "crowdrag25"), 0o755)
	fifo := filepath.Join(fifoData, "crowdrag25", "responses.jsonl.gz")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Keys set to their zero are keys all the same.
	zeroKeys := filepath.Join(dir, "zero.yaml")
	os.WriteFile(zeroKeys, bytes.Replace(src, nWords, []byte("{name: n_words, fn: n_words, args: [cleaned_text], min: 0, grouped: false}"), 1), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"typo in pipeline.yaml", []string{"run", "--config", typo, "--data", "../../testdata", "--out", dir}, 2,
			[]string{"pipeline.yaml:", "partiton_by", `did you mean "partition_by"?`}},
		{"writer.dictionary names a column the table does not write", []string{"check", "--config", dictTypo, "--data", "../../testdata"}, 2,
			[]string{"dict.yaml:", "writer.dictionary[1]", `"reference_texts"`, "references_texts"}},
		{"writer.shared_pages names a column the table does not write", []string{"check", "--config", sharedTypo, "--data", "../../testdata"}, 2,
			[]string{"shared.yaml:", "writer.shared_pages[1]", `"references"`, "references_texts"}},
		{"the top writer names a column no table writes", []string{"check", "--config", topDict, "--data", "../../testdata"}, 2,
			[]string{"topdict.yaml:", `writer.dictionary[1]: no table writes a column "nope"`}},
		{"a table's columns describes a column it does not write", []string{"check", "--config", descTypo, "--data", "../../testdata"}, 2,
			[]string{"desc.yaml:201:", `columns.quey_id: no column "quey_id" to describe`}},
		{"writer.no_statistics names a partition column", []string{"check", "--config", partStats, "--data", "../../testdata"}, 2,
			[]string{"stats.yaml:", "writer.no_statistics[1]", `"style" is a partition column`}},
		{"missing input names the path and the data root", []string{"run", "--config", "../../pipeline.yaml", "--data", dir, "--out", dir}, 1,
			[]string{filepath.Join(dir, "crowdrag25", "ratings.jsonl.gz") + " does not exist", "--data"}},
		{"a derive key the function does not read", []string{"check", "--config", deriveKey, "--data", "../../testdata"}, 2,
			[]string{fmt.Sprintf("derive.yaml:%d: ", nWordsLine), ".derive[2]: n_words: by does not apply to n_words (it reads only its args)"}},
		{"a derive key set to its zero", []string{"check", "--config", zeroKeys, "--data", "../../testdata"}, 2,
			[]string{fmt.Sprintf("zero.yaml:%d: ", nWordsLine), ".derive[2]: n_words: min and grouped do not apply to n_words (it reads only its args)"}},
		{"an input that is a FIFO", []string{"check", "--config", "../../pipeline.yaml", "--data", fifoData, "--only", "crowdrag25"}, 1,
			[]string{fifo + " is not a regular file or a folder (p---------)"}},
		{"unknown dataset", []string{"run", "--config", "../../pipeline.yaml", "--only", "nope"}, 2, []string{"no such dataset", "crowdrag25"}},
		{"--only empty, as an unset $VAR gives", []string{"check", "--config", "../../pipeline.yaml", "--only", ""}, 2, []string{"--only names no dataset", "crowdrag25"}},
		{"unknown flag", []string{"run", "--wrokers", "2"}, 2, []string{"unknown flag", "--help"}},
		{"missing config", []string{"check", "--config", filepath.Join(dir, "none.yaml")}, 2, []string{"none.yaml"}},
		{"config that is a folder", []string{"check", "--config", dir}, 2, []string{dir, "is a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := agora(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, stderr)
			}
			if lines := strings.Split(strings.TrimSpace(stdout), "\n"); strings.Contains(stdout, "rows in") && len(lines) < 2 {
				t.Errorf("a run printed a summary table without a table:\n%s", stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestCheckWritesNothing(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	t.Chdir(dir)
	code, stdout, stderr := agora(t, "check", "--config", filepath.Join(wd, "../../pipeline.yaml"), "--data", filepath.Join(wd, "../../testdata"))
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "2940") {
		t.Errorf("check should report rows:\n%s", stdout)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("check wrote %v", entries)
	}
}

// TestDatasetsAsArguments: run and check take dataset names as
// arguments, as fetch and schema do, meaning what --only means; they
// refused any argument.
func TestDatasetsAsArguments(t *testing.T) {
	code, stdout, stderr := agora(t, "check", "delidata", "habermas", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "delidata") || !strings.Contains(stdout, "habermas") || strings.Contains(stdout, "crowdrag25") {
		t.Errorf("check delidata habermas: summary\n%s", stdout)
	}
}

func TestRunReleasesAllArrowMemory(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts := runOptions{ConfigPath: "../../pipeline.yaml", Data: "../../testdata", Out: t.TempDir(), Workers: 3, Mem: mem}
	if err := runAll(context.Background(), cfg, opts, func(*DatasetResult) {}); err != nil {
		t.Fatal(err)
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := agora(t, "version")
	if code != 0 || !strings.Contains(stdout, "agora "+Version) {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	version := stdout
	code, stdout, _ = agora(t, "--version")
	if code != 0 || stdout != version || !strings.Contains(stdout, "github.com/apache/arrow-go/v18 v") {
		t.Fatalf("--version: exit %d: %q, want what version prints, %q", code, stdout, version)
	}
}

func writeGz(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(content))
	zw.Close()
	f.Close()
}

// TestPoolsKeepOutput: the release is the same, and every buffer is
// freed, when agora allocates from its pools instead of Go's allocator:
// the table writers' and the stages' (readers, decoders, steps). Each
// pool lists from 64 bytes up and overwrites a freed buffer with 0xA5
// before handing it out again, so anything that reads a buffer after its
// release, or keeps a view of a released batch past it (in a key set, a
// reject or check example, a partition value), changes the release.
// With FileOf returning a view instead of a copy, the stages case fails
// on DeliData's manifest (its check example's file name).
func TestPoolsKeepOutput(t *testing.T) {
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pool *mempool.Allocator
		use  func(o *runOptions, mem memory.Allocator)
	}{
		{"writers", mempool.NewPoisoning(1<<30, 64), func(o *runOptions, mem memory.Allocator) { o.SinkMem = mem }},
		{"stages", mempool.NewPoisoning(1<<30, 64), func(o *runOptions, mem memory.Allocator) {
			o.Mem, o.SinkMem = mem, memory.NewGoAllocator()
		}},
		// arrow-go's own buffers (its encoders' page buffers), which
		// main hands to a pool through memory.DefaultAllocator. arrow-go
		// drops some of them without Free (a sync.Pool holds them), so
		// the checked allocator's count is not asked of this one.
		// Written through arrow-go's column writers (writer.encoder:
		// arrow-go): agora's own encoder keeps no arrow-go buffers.
		{"arrow-go", mempool.NewPoisoning(1<<30, 64), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.use == nil {
				saved := cfg.Writer.Encoder
				cfg.Writer.Encoder = "arrow-go"
				defer func() { cfg.Writer.Encoder = saved }()
			}
			var trees []map[string]string
			for _, alloc := range []memory.Allocator{memory.NewGoAllocator(), tc.pool} {
				mem := memory.NewCheckedAllocator(alloc)
				out := t.TempDir()
				opts := runOptions{ConfigPath: "../../pipeline.yaml", Data: "../../testdata", Out: out, Workers: 3}
				if tc.use != nil {
					tc.use(&opts, mem)
				} else {
					old := memory.DefaultAllocator
					memory.DefaultAllocator = alloc
					t.Cleanup(func() { memory.DefaultAllocator = old })
				}
				if err := runAll(context.Background(), cfg, opts, func(*DatasetResult) {}); err != nil {
					t.Fatal(err)
				}
				if tc.use != nil {
					mem.AssertSize(t, 0)
				}
				trees = append(trees, treeDigest(t, out))
			}
			sameTrees(t, trees[0], trees[1], "Go's allocator and a poisoning pool")
			if tc.pool.Reused() == 0 {
				t.Fatal("the pool handed out no buffer again: the test shows nothing")
			}
		})
	}
}

// TestGroupsAtOnce checks how many inputs of a dataset are converted at
// once for its inputs_at_once and the workers.
func TestGroupsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		inputsAtOnce, workers int
		want                  int
	}{
		{"default: as many as workers", 0, 4, 4},
		{"one after another", 1, 4, 1},
		{"fewer than workers", 2, 4, 2},
		{"never more than workers", 8, 2, 2},
		{"serial run", 0, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &config.Dataset{InputsAtOnce: tc.inputsAtOnce}
			if got := groupsAtOnce(d, tc.workers); got != tc.want {
				t.Errorf("groupsAtOnce(inputs_at_once %d, workers %d) = %d, want %d", tc.inputsAtOnce, tc.workers, got, tc.want)
			}
		})
	}
}

// TestOutputIndependentOfInputsAtOnce runs the shipped pipeline with
// every dataset's inputs converted one after another and compares the
// release, manifests included, with the shipped config's (where some
// datasets convert theirs together) at --workers 4:
// the order of inputs changes no byte, and inputs_at_once is not part of
// the config hash.
func TestOutputIndependentOfInputsAtOnce(t *testing.T) {
	src, err := os.ReadFile("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	serial := regexp.MustCompile(`(?m)^    inputs_at_once: [0-9]+\n`).ReplaceAll(src, nil)
	serial = regexp.MustCompile(`(?m)^  ([a-z0-9_]+):\n`).ReplaceAll(serial, []byte("  $1:\n    inputs_at_once: 1\n"))
	if n := strings.Count(string(serial), "inputs_at_once: 1"); n < 3 {
		t.Fatalf("set inputs_at_once on %d datasets, want every one (3 or more)", n)
	}
	cfg := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(cfg, serial, 0o644); err != nil {
		t.Fatal(err)
	}
	shipped := sampleRelease(t, "../../pipeline.yaml", "4")
	sameTrees(t, shipped, sampleRelease(t, cfg, "4"), "the shipped inputs_at_once and 1 everywhere")
}

// TestRunGoesOnPastAFailedDataset checks that one dataset's failure (its
// previous release kept) does not keep the datasets after it from
// running, and that the run still fails, naming it.
func TestRunGoesOnPastAFailedDataset(t *testing.T) {
	data, out := t.TempDir(), t.TempDir()
	if err := os.CopyFS(data, os.DirFS("../../testdata")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(data, "crowdrag25", "grades.jsonl.gz"))
	code, stdout, stderr := agora(t, "run", "--config", "../../pipeline.yaml", "--data", data, "--out", out, "--quiet")
	if code != exitFailed || !strings.Contains(stderr, "crowdrag25:") || !strings.Contains(stderr, "grades.jsonl.gz") {
		t.Fatalf("exit %d, want 1 naming crowdrag25's missing input:\n%s", code, stderr)
	}
	// The summary on stdout shows it too, where it left the dataset out.
	if !regexp.MustCompile(`crowdrag25 +FAILED`).MatchString(stdout) || !strings.Contains(stdout, "note: crowdrag25: FAILED, its previous release kept: ") || !strings.Contains(stdout, "grades.jsonl.gz") {
		t.Errorf("stdout does not show crowdrag25's failure:\n%s", stdout)
	}
	for id, want := range map[string]bool{"crowdrag25": false, "delidata": true, "habermas": true} {
		if got := sinks.Published(out, id); got != want {
			t.Errorf("%s published: %v, want %v", id, got, want)
		}
	}
}

// TestInterruptNamesWhatWasPublished checks that a run stopped between
// datasets returns the ones it published, and that the message says so.
func TestInterruptNamesWhatWasPublished(t *testing.T) {
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	opts := runOptions{ConfigPath: "../../pipeline.yaml", Data: "../../testdata", Out: t.TempDir()}
	err = runAll(ctx, cfg, opts, func(*DatasetResult) { cancel() }) // a signal after the first dataset
	var ie *interrupted
	if !errors.As(err, &ie) || !slices.Equal(ie.published, []string{"crowdrag25"}) {
		t.Fatalf("err = %v (%T), want an interrupt after crowdrag25", err, err)
	}
	if sinks.Published(opts.Out, "delidata") {
		t.Error("delidata was published after the interrupt")
	}
	if got := interruptedNote(err); !strings.Contains(got, "published before the interrupt: crowdrag25") {
		t.Errorf("note %q", got)
	}
	if got := interruptedNote(context.Canceled); got != "interrupted; the previous releases are unchanged" {
		t.Errorf("note without a published dataset: %q", got)
	}
}

// TestJSONErrorWhateverTheOrder: --log-format json after an unknown flag
// still makes the error a JSON line (it was text, cobra stopping at the
// unknown flag before it read --log-format).
func TestJSONErrorWhateverTheOrder(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--bogus", "--log-format", "json"},
		{"run", "--log-format", "json", "--bogus"},
		{"run", "--bogus", "--log-format=json"},
	} {
		code, _, stderr := agora(t, args...)
		var line map[string]any
		if code != exitUsage || json.Unmarshal([]byte(strings.TrimSpace(stderr)), &line) != nil || !strings.Contains(fmt.Sprint(line["msg"]), "unknown flag: --bogus") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}
