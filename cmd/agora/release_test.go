package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
	"github.com/agora-etl/agora/sinks"
	"github.com/agora-etl/agora/stages"
)

// crowdData copies testdata/crowdrag25 into a fresh data root.
func crowdData(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "crowdrag25"), 0o755)
	for _, f := range []string{"responses", "ratings", "llm_ratings", "grades"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/crowdrag25", f+".jsonl.gz"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(data, "crowdrag25", f+".jsonl.gz"), b, 0o644)
	}
	return data
}

func runCrowd(t *testing.T, data, out string, extra ...string) (int, string, string) {
	t.Helper()
	return agora(t, append([]string{"run", "--config", "../../pipeline.yaml", "--data", data, "--out", out, "--only", "crowdrag25"}, extra...)...)
}

func TestManifestMatchesFilesAndMetadataDescribesTables(t *testing.T) {
	data, out := crowdData(t), t.TempDir()
	if code, so, se := runCrowd(t, data, out); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	ds := filepath.Join(out, "crowdrag25")
	m, err := readManifest(out, "crowdrag25")
	if err != nil {
		t.Fatal(err)
	}
	// The inputs are hashed alongside the conversion on a first run.
	if len(m.Inputs) != 4 {
		t.Fatalf("manifest lists %d inputs, want 4", len(m.Inputs))
	}
	for _, in := range m.Inputs {
		b, err := os.ReadFile(filepath.Join(data, filepath.FromSlash(in.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != in.SHA256 || int64(len(b)) != in.Bytes {
			t.Errorf("input %s: manifest checksum or size does not match the file", in.ID)
		}
	}
	for _, tb := range m.Tables {
		for _, f := range tb.Files {
			b, err := os.ReadFile(filepath.Join(ds, filepath.FromSlash(f.Path)))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if hex.EncodeToString(sum[:]) != f.SHA256 || int64(len(b)) != f.Bytes {
				t.Errorf("%s: manifest checksum or size does not match the file", f.Path)
			}
		}
	}
	var pkg struct {
		Resources []struct {
			Name   string   `json:"name"`
			Path   []string `json:"path"`
			Hash   string   `json:"hash"`
			Schema struct {
				Fields []struct{ Name, Type string } `json:"fields"`
			} `json:"schema"`
			Partitioning struct {
				Columns []string                      `json:"columns"`
				Fields  []struct{ Name, Type string } `json:"fields"`
			} `json:"partitioning"`
		} `json:"resources"`
		Licenses []struct{ Name string } `json:"licenses"`
	}
	raw, err := os.ReadFile(filepath.Join(ds, "datapackage.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	card, err := os.ReadFile(filepath.Join(ds, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Resources) != len(m.Tables) || len(pkg.Licenses) != 1 || pkg.Licenses[0].Name != "CC-BY-4.0" {
		t.Fatalf("datapackage: %d resources for %d tables, licenses %v", len(pkg.Resources), len(m.Tables), pkg.Licenses)
	}
	for i, r := range pkg.Resources {
		tb := m.Tables[i]
		// The fields are the files' columns; the partition columns, in the
		// folder names, are under partitioning.
		var inFiles, inFolders []string
		for _, c := range tb.Schema {
			if c.Partition {
				inFolders = append(inFolders, c.Name)
			} else {
				inFiles = append(inFiles, c.Name)
			}
		}
		var fields, parts []string
		for _, f := range r.Schema.Fields {
			fields = append(fields, f.Name)
		}
		for _, f := range r.Partitioning.Fields {
			parts = append(parts, f.Name)
		}
		if r.Name != tb.Name || !slices.Equal(fields, inFiles) || !slices.Equal(parts, inFolders) || !slices.Equal(r.Partitioning.Columns, tb.PartitionBy) || len(r.Path) == 0 {
			t.Errorf("resource %s does not describe table %s: fields %v, partitioning %v %v", r.Name, tb.Name, fields, r.Partitioning.Columns, parts)
		}
		// A resource's hash is its data's: one file's sha256, or none.
		if len(r.Path) == 1 {
			b, _ := os.ReadFile(filepath.Join(ds, filepath.FromSlash(r.Path[0])))
			if sum := sha256.Sum256(b); r.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
				t.Errorf("resource %s: hash %s is not its file's", r.Name, r.Hash)
			}
		} else if r.Hash != "" {
			t.Errorf("resource %s of %d files has a hash, %s", r.Name, len(r.Path), r.Hash)
		}
		if !strings.Contains(string(card), "### "+tb.Name) {
			t.Errorf("dataset card lacks table %s", tb.Name)
		}
		for _, c := range tb.Schema {
			if !strings.Contains(string(card), "`"+c.Name+"`") {
				t.Errorf("dataset card lacks column %s.%s", tb.Name, c.Name)
			}
		}
	}
	for _, want := range []string{"Gienapp", "CC-BY-4.0", "read_parquet(", "spark.read.parquet", "pd.read_parquet", "p_n"} {
		if !strings.Contains(string(card), want) {
			t.Errorf("dataset card lacks %q", want)
		}
	}
}

func TestUnchangedInputsSkipAndModes(t *testing.T) {
	data, out := crowdData(t), t.TempDir()
	if code, so, se := runCrowd(t, data, out); code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, so, se)
	}
	manifest := filepath.Join(out, "crowdrag25", "manifest.json")
	before, _ := os.Stat(manifest)

	// A run killed mid-write left its staging.
	staging := filepath.Join(out, ".agora-staging-crowdrag25")
	os.MkdirAll(filepath.Join(staging, "ratings"), 0o755)
	os.WriteFile(filepath.Join(staging, "ratings", "part-00000.parquet.tmp"), []byte("PAR1"), 0o644)

	// Same inputs and config: nothing to do, but the stale staging goes.
	code, stdout, _ := runCrowd(t, data, out)
	if code != 0 || !strings.Contains(stdout, "unchanged") {
		t.Fatalf("rerun: exit %d, want a skip:\n%s", code, stdout)
	}
	if after, _ := os.Stat(manifest); !after.ModTime().Equal(before.ModTime()) {
		t.Error("the skipped run rewrote the release")
	}
	if _, err := os.Stat(staging); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the skipped run left a killed run's staging (%v)", err)
	}
	// --force runs again and, with the same inputs, publishes the same bytes.
	if code, so, se := runCrowd(t, data, out, "--force"); code != 0 {
		t.Fatalf("--force: exit %d\n%s%s", code, so, se)
	}

	// Changed input: --mode error (the default) keeps the old release.
	grades := filepath.Join(data, "crowdrag25", "grades.jsonl.gz")
	b, _ := os.ReadFile(grades)
	os.WriteFile(grades, append(b, b...), 0o644) // a second gzip member: twice the rows
	old, _ := os.ReadFile(manifest)
	code, _, stderr := runCrowd(t, data, out)
	// It says what changed: the one input, by its path.
	if code != 1 || !strings.Contains(stderr, "--mode overwrite") || !strings.Contains(stderr, "was made from other inputs (crowdrag25/grades.jsonl.gz)") {
		t.Fatalf("changed input, --mode error: exit %d\n%s", code, stderr)
	}
	if now, _ := os.ReadFile(manifest); string(now) != string(old) {
		t.Fatal("--mode error replaced the release")
	}
	if entries, _ := os.ReadDir(out); len(entries) != 2 { // crowdrag25 and its lock file
		t.Errorf("out holds %d entries; staging left behind?", len(entries))
	}
	code, _, stderr = runCrowd(t, data, out, "--mode", "overwrite")
	if code != 0 {
		t.Fatalf("--mode overwrite: exit %d\n%s", code, stderr)
	}
	if now, _ := os.ReadFile(manifest); string(now) == string(old) {
		t.Fatal("--mode overwrite kept the old release")
	}
}

func TestLockNamesTheHolder(t *testing.T) {
	data, out := crowdData(t), t.TempDir()
	lock, err := sinks.AcquireLock(out, "crowdrag25")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	code, _, stderr := runCrowd(t, data, out)
	if code != 1 || !strings.Contains(stderr, filepath.Join(out, ".agora-crowdrag25.lock")+": locked by another run") || !strings.Contains(stderr, "pid ") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lock.Release()
	if code, _, stderr := runCrowd(t, data, out); code != 0 {
		t.Fatalf("after release: exit %d\n%s", code, stderr)
	}
}

func TestRejectRatioExitCode(t *testing.T) {
	data, out := crowdData(t), t.TempDir()
	src, _ := os.ReadFile("../../pipeline.yaml")
	cfg := strings.Replace(string(src), "      grades:\n        input: grades\n", "      grades:\n        input: grades\n        max_reject_ratio: 0\n", 1)
	cfgPath := filepath.Join(t.TempDir(), "pipeline.yaml")
	os.WriteFile(cfgPath, []byte(cfg), 0o644)
	if code, so, se := agora(t, "run", "--config", cfgPath, "--data", data, "--out", out, "--only", "crowdrag25"); code != 0 {
		t.Fatalf("clean input: exit %d\n%s%s", code, so, se)
	}
	// A grade of 9 is out of range: rejected, and over a ratio of 0.
	gz := filepath.Join(data, "crowdrag25", "grades.jsonl.gz")
	writeGz(t, gz, `{"response":"x","correctness_topical":9,"coherence_logical":1,"coherence_stylistic":1,"coverage_broad":1,"coverage_deep":1,"consistency_internal":1,"quality_overall":1}`+"\n")
	code, stdout, stderr := agora(t, "run", "--config", cfgPath, "--data", data, "--out", out, "--only", "crowdrag25", "--mode", "overwrite")
	if code != exitRejects || !strings.Contains(stderr, "crowdrag25/grades") || strings.Contains(stdout+stderr, "nothing to do") {
		t.Fatalf("exit %d, want %d\n%s", code, exitRejects, stderr)
	}
	if !sinks.Published(out, "crowdrag25") {
		t.Fatal("the release must still be published")
	}
	// Run again on the same input: nothing to do, but the release still
	// rejected too many rows, so the exit is 3 again (it was 0).
	code, stdout, stderr = agora(t, "run", "--config", cfgPath, "--data", data, "--out", out, "--only", "crowdrag25", "--mode", "overwrite")
	if code != exitRejects || !strings.Contains(stderr, "in the unchanged release") || !strings.Contains(stdout+stderr, "nothing to do") {
		t.Fatalf("unchanged release: exit %d, want %d\n%s%s", code, exitRejects, stdout, stderr)
	}
	// With another dataset failing (its input missing) the exit is 1,
	// and the rejects are still said (they were not, until the next night).
	code, stdout, stderr = agora(t, "run", "--config", cfgPath, "--data", data, "--out", out, "--only", "crowdrag25,delidata", "--mode", "overwrite")
	if code != exitFailed || !strings.Contains(stderr, "also published, with rejected rows above max_reject_ratio in crowdrag25/grades") {
		t.Fatalf("with a failed dataset: exit %d, want %d\n%s%s", code, exitFailed, stdout, stderr)
	}
}

// TestFingerprintStopsWhenCancelled checks that hashing an input ends at
// once when its context is done (a failed run does not wait for a large
// input's checksum) and otherwise gives the file's sha256.
func TestFingerprintStopsWhenCancelled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "input.bin")
	data := bytes.Repeat([]byte("agora "), 1<<20)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(data)
	stopped := errors.New("the run failed")
	for _, tc := range []struct {
		name    string
		cancel  bool
		wantErr error
	}{
		{"live", false, nil},
		{"cancelled", true, stopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			if tc.cancel {
				cancel(stopped)
			}
			got, err := fingerprintInputs(ctx, []inputStat{{id: "in", rel: "input.bin", path: p, info: fi}})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && (len(got) != 1 || got[0].SHA256 != hex.EncodeToString(want[:]) || got[0].Bytes != int64(len(data))) {
				t.Errorf("got %+v, want the file's sha256 and size", got)
			}
		})
	}
}

// TestFingerprintFolderAllocates checks that hashing a folder input of
// many small files (DeliData has thousands) reuses one read buffer: a
// buffer per file cost gigabytes of allocation on DeliData at 10×.
func TestFingerprintFolderAllocates(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 100; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.tsv", i)), []byte("a\tb\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	info, err := fingerprint(t.Context(), "in", "dir", dir, fi)
	runtime.ReadMemStats(&after)
	if err != nil || len(info.Files) != 100 {
		t.Fatalf("fingerprint: %d files, err %v", len(info.Files), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("hashing 100 small files allocated %d MB", got>>20)
	}
}

// TestFingerprintFolder checks what a folder input's fingerprint lists:
// its files in name order with their sizes and sums, and not its dot
// files, folders or links to folders; and that the folder's sum is over
// the "name sum" lines of those files.
func TestFingerprintFolder(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"b.tsv": "b\tb\n", "a.tsv": "a\n", "c": "", ".hidden": "x"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	// A FIFO is no member either: its open would wait forever.
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	info := fingerprintDir(t, "in", "dir", dir)
	checkFolderInfo(t, info, map[string]string{"a.tsv": files["a.tsv"], "b.tsv": files["b.tsv"], "c": files["c"]})
}

// fingerprintDir fingerprints the input folder dir, failing t on error.
func fingerprintDir(t *testing.T, id, rel, dir string) InputInfo {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := fingerprint(t.Context(), id, rel, dir, fi)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// checkFolderInfo checks a folder's fingerprint against the files it
// should list, by name and content.
func checkFolderInfo(t *testing.T, info InputInfo, want map[string]string) {
	t.Helper()
	var names, wantNames []string
	var lines strings.Builder
	var size int64
	for _, f := range info.Files {
		names = append(names, f.Name)
		body := want[f.Name]
		sum := fmt.Sprintf("%x", sha256.Sum256([]byte(body)))
		if f.SHA256 != sum || f.Bytes != int64(len(body)) {
			t.Errorf("%s: sha256 %s, %d bytes; want %s, %d", f.Name, f.SHA256, f.Bytes, sum, len(body))
		}
		fmt.Fprintf(&lines, "%s %s\n", f.Name, sum)
		size += int64(len(body))
	}
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	if got, want := strings.Join(names, " "), strings.Join(wantNames, " "); got != want {
		t.Errorf("files %q, want %q", got, want)
	}
	if want := fmt.Sprintf("%x", sha256.Sum256([]byte(lines.String()))); info.SHA256 != want || info.Bytes != size {
		t.Errorf("folder sha256 %s, %d bytes; want %s, %d", info.SHA256, info.Bytes, want, size)
	}
}

// TestFingerprintListed checks a folder's fingerprint from its source's
// listing: summed files are taken as summed (what the conversion read,
// not what the file holds now), the others hashed, a name that is a
// folder now left out, a file not in the listing not listed, and a listed
// file that is gone an error naming it.
func TestFingerprintListed(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"a.tsv": "a\n", "b.tsv": "b now\n", "skip.py": "x = 1\n", "new.tsv": "n\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	summed := func(name, body string) stages.FileSum {
		return stages.FileSum{Name: name, Bytes: int64(len(body)), SHA256: sha256.Sum256([]byte(body)), Summed: true}
	}
	listed := []stages.FileSum{summed("a.tsv", "a\n"), summed("b.tsv", "b then\n"), {Name: "c"}, summed("empty", ""), {Name: "skip.py"}}
	info, err := fingerprintListed(t.Context(), "in", "dir", dir, listed, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFolderInfo(t, info, map[string]string{"a.tsv": "a\n", "b.tsv": "b then\n", "empty": "", "skip.py": "x = 1\n"})
	_, err = fingerprintListed(t.Context(), "in", "dir", dir, append(listed, stages.FileSum{Name: "zz-gone"}), nil)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "zz-gone") {
		t.Errorf("a listed file that is gone: err = %v", err)
	}
}

// folderChangingFS changes an input folder at the run's first rename of
// an output file, after the (small) input has been read: it adds a file
// and rewrites one the conversion has read.
type folderChangingFS struct {
	sinks.OS
	once         sync.Once
	dir, rewrite string
}

func (f *folderChangingFS) Rename(a, b string) error {
	f.once.Do(func() {
		os.WriteFile(filepath.Join(f.dir, "ffffffff-added-during-the-run"), []byte("group_id\n"), 0o644)
		os.WriteFile(filepath.Join(f.dir, f.rewrite), []byte("changed after it was read\n"), 0o644)
	})
	return f.OS.Rename(a, b)
}

// TestRunFingerprintsFolderFromConversion runs DeliData, whose folder
// input is hashed while it is converted, and checks that the manifest's
// fingerprint of it describes the files as the conversion read them: a
// file rewritten after it was read keeps the sum of what was converted,
// a file added during the run is not listed (its rows are in no table),
// and the file the conversion passes over (__init__.py) is listed with
// its sum; the rest equals a separate hash of every file.
func TestRunFingerprintsFolderFromConversion(t *testing.T) {
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	dir := filepath.Join(data, "delidata")
	if err := os.CopyFS(dir, os.DirFS("../../testdata/delidata")); err != nil {
		t.Fatal(err)
	}
	before := fingerprintDir(t, "chats", "delidata", dir)
	rewrite := before.Files[0].Name
	out := t.TempDir()
	opts := runOptions{ConfigPath: "../../pipeline.yaml", Data: data, Out: out, Only: []string{"delidata"}, Workers: 2, Mode: "overwrite", Force: true,
		FS: &folderChangingFS{dir: dir, rewrite: rewrite}}
	if err := runAll(t.Context(), cfg, opts, func(*DatasetResult) {}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "delidata", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Inputs) != 1 {
		t.Fatalf("manifest inputs %+v, want chats alone", m.Inputs)
	}
	got := m.Inputs[0]
	if got.ID != before.ID || got.SHA256 != before.SHA256 || got.Bytes != before.Bytes || !slices.Equal(got.Files, before.Files) {
		t.Errorf("manifest fingerprint %s (%d bytes, %d files), want the folder as it was read: %s (%d bytes, %d files)", got.SHA256, got.Bytes, len(got.Files), before.SHA256, before.Bytes, len(before.Files))
	}
	if !slices.ContainsFunc(got.Files, func(f FileDigest) bool { return f.Name == "__init__.py" }) {
		t.Error("the file the conversion passes over is not in the fingerprint")
	}
}

// labelSource records the profiler labels its Chunks runs under.
type labelSource struct {
	pipeline.Source
	table, input string
}

func (s *labelSource) Chunks(ctx context.Context, emit func(pipeline.Chunk) error) error {
	s.table, _ = pprof.Label(ctx, "table")
	s.input, _ = pprof.Label(ctx, "input")
	return s.Source.Chunks(ctx, emit)
}

// TestRunTableLabels checks that a table's goroutines carry the profiler
// label that splits a CPU profile by table.
func TestRunTableLabels(t *testing.T) {
	cfg, err := config.LoadFile("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := stages.BuildTable(cfg, "crowdrag25", "grades", "../../testdata", nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &labelSource{Source: b.Source}
	res, err := runTable(t.Context(), cfg, "crowdrag25", "grades", cfg.Datasets["crowdrag25"].Tables["grades"], b, src, 0, "", 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Written == 0 {
		t.Error("no rows went through the table")
	}
	if src.table != "crowdrag25/grades" || src.input != "" {
		t.Errorf("labels table=%q input=%q, want table=crowdrag25/grades alone", src.table, src.input)
	}
}

// TestSummedInputs checks which inputs a run fingerprints from their
// source's own sums: DeliData's folder of TSV files, and none of
// CrowdRAG-25's JSON Lines files.
func TestSummedInputs(t *testing.T) {
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dataset, want string }{{"delidata", "chats"}, {"crowdrag25", ""}} {
		t.Run(tc.dataset, func(t *testing.T) {
			d := cfg.Datasets[tc.dataset]
			built := map[string]*stages.Built{}
			for _, name := range d.TableNames() {
				b, err := stages.BuildTable(cfg, tc.dataset, name, "../../testdata", nil)
				if err != nil {
					t.Fatal(err)
				}
				built[name] = b
			}
			var got []string
			for id := range summedInputs(d, built, inputGroups(d)) {
				got = append(got, id)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("summed inputs %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOtherBuildRunsAgain checks that a release made by another agora
// build (version with its commit) or with other library versions is not
// taken for this one's: the run converts again instead of "nothing to do".
func TestOtherBuildRunsAgain(t *testing.T) {
	data, out := crowdData(t), t.TempDir()
	if code, so, se := runCrowd(t, data, out); code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, so, se)
	}
	manifest := filepath.Join(out, "crowdrag25", "manifest.json")

	saved := Version
	Version = "0.1.0+0123456789ab"
	code, stdout, stderr := runCrowd(t, data, out, "--mode", "overwrite")
	Version = saved
	if code != 0 || strings.Contains(stdout, "unchanged") {
		t.Fatalf("another build: exit %d, want a run:\n%s%s", code, stdout, stderr)
	}
	if m, err := readManifest(out, "crowdrag25"); err != nil || m.Agora != "0.1.0+0123456789ab" {
		t.Fatalf("manifest agora_version %q, %v", m.Agora, err)
	}

	// Back to this build: other version, so it runs; then, the same
	// build with other library versions recorded, it runs again.
	if code, so, se := runCrowd(t, data, out, "--mode", "overwrite"); code != 0 || strings.Contains(so, "unchanged") {
		t.Fatalf("this build again: exit %d\n%s%s", code, so, se)
	}
	if code, so, _ := runCrowd(t, data, out); code != 0 || !strings.Contains(so, "unchanged") {
		t.Fatalf("same build, same inputs: exit %d, want a skip:\n%s", code, so)
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["libraries"].(map[string]any)["go"] = "go1.0"
	b, _ = json.Marshal(m)
	os.WriteFile(manifest, b, 0o644)
	if code, so, se := runCrowd(t, data, out, "--mode", "overwrite"); code != 0 || strings.Contains(so, "unchanged") {
		t.Fatalf("other libraries: exit %d, want a run:\n%s%s", code, so, se)
	}
}

func TestStampedVersion(t *testing.T) {
	saved := buildRev
	defer func() { buildRev = saved }()
	buildRev = "1a2b3c4d5e6f-dirty"
	if got := stampedVersion("0.1.0"); got != "0.1.0+1a2b3c4d5e6f-dirty" {
		t.Errorf("with the Makefile's revision: %q", got)
	}
	buildRev = ""
	if got := stampedVersion("0.1.0"); got != "0.1.0" { // go test records no commit
		t.Errorf("without: %q", got)
	}
}

// TestDataPackageHashOfOneFile: a one-file resource's hash is its file's
// sha256, as the manifest has it; rejects files are not the resource's.
func TestDataPackageHashOfOneFile(t *testing.T) {
	tables := []*TableResult{{Name: "groups", Schema: []ColumnInfo{{Name: "id", Type: "string"}}, Files: []sinks.FileInfo{
		{Path: "groups/part-00000.parquet", Bytes: 10, SHA256: "ab12"},
		{Path: "_rejects/groups/part-00000.parquet", Bytes: 5, SHA256: "cd34"},
	}}}
	pkg := dataPackage("d", &config.Dataset{}, tables)
	r := pkg["resources"].([]any)[0].(map[string]any)
	if r["hash"] != "sha256:ab12" || r["bytes"] != int64(10) || len(r["path"].([]string)) != 1 {
		t.Errorf("resource %v", r)
	}
}

// TestAllRowsRejected: a table whose every row is rejected publishes one
// file of no rows with its schema (unpartitioned), and says so in a note
// in the manifest; it wrote no file and said nothing beyond a 0.
func TestAllRowsRejected(t *testing.T) {
	dir, cfg := allRejectedConfig(t)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := agora(t, "run", "--config", cfg, "--data", filepath.Join(dir, "data"), "--out", out)
	if code != 0 || !strings.Contains(stdout+stderr, "t: every one of its 2 rows was rejected; it is one file of no rows") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	man, err := readManifest(out, "d")
	if err != nil {
		t.Fatal(err)
	}
	tr := man.Tables[0]
	// Then why, as check says it: by rule, with the first row.
	if len(tr.Notes) != 2 || !strings.Contains(tr.Notes[0], "every one of its 2 rows was rejected") ||
		!strings.Contains(tr.Notes[1], "t: 2 rows rejected by range on n, first at d/in.jsonl:1: value 5 is outside") {
		t.Errorf("notes %q", tr.Notes)
	}
	var data []sinks.FileInfo
	for _, f := range tr.Files {
		if !strings.HasPrefix(f.Path, "_rejects/") {
			data = append(data, f)
		}
	}
	if len(data) != 1 || data[0].Path != "t/part-00000.parquet" || data[0].Rows != 0 {
		t.Errorf("files %+v, want t/part-00000.parquet of 0 rows", data)
	}
}

// allRejectedConfig writes a config and data whose table t rejects both
// its rows (n above its max of 1), and returns the folder and the config.
func allRejectedConfig(t *testing.T) (dir, cfg string) {
	dir = t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data", "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "d", "in.jsonl"), []byte(`{"id":"a","n":5}`+"\n"+`{"id":"b","n":7}`+"\n"), 0o644)
	cfg = filepath.Join(dir, "p.yaml")
	os.WriteFile(cfg, []byte(`version: 1
datasets:
  d:
    inputs:
      in: {path: d/in.jsonl, format: jsonl, compression: none, columns: [{name: id, type: string}, {name: n, type: int64}]}
    tables:
      t:
        input: in
        steps:
          - validate: [{range: {column: n, max: 1}}]
`), 0o644)
	return dir, cfg
}

// TestCheckSaysWhyRowsAreRejected: check, which writes no _rejects, says
// for each rule and column how many rows it rejected and the first, with
// its file, line and reason; it gave only the count.
func TestCheckSaysWhyRowsAreRejected(t *testing.T) {
	dir, cfg := allRejectedConfig(t)
	code, stdout, stderr := agora(t, "check", "--config", cfg, "--data", filepath.Join(dir, "data"))
	if want := "t: 2 rows rejected by range on n, first at d/in.jsonl:1: "; code != 0 || !strings.Contains(stdout+stderr, want) {
		t.Errorf("exit %d, want 0 and %q\n%s%s", code, want, stdout, stderr)
	}
}

// TestRunKeepsWhatIsNotARelease: --out naming the data folder made
// out/<dataset> the inputs' folder, which the run swapped out and removed
// with exit 0. It now stops before writing, names the folder, and leaves
// the inputs as they were.
func TestRunKeepsWhatIsNotARelease(t *testing.T) {
	data := t.TempDir()
	if err := os.CopyFS(filepath.Join(data, "crowdrag25"), os.DirFS("../../testdata/crowdrag25")); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadDir(filepath.Join(data, "crowdrag25"))
	if err != nil || len(before) == 0 {
		t.Fatal(before, err)
	}
	code, stdout, stderr := agora(t, "run", "--config", "../../pipeline.yaml", "--data", data, "--out", data, "--only", "crowdrag25", "--quiet")
	if code != 1 || !strings.Contains(stderr, filepath.Join(data, "crowdrag25")+" holds files but no _SUCCESS or agora manifest.json") || !strings.Contains(stderr, "is --out the data folder?") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	after, err := os.ReadDir(filepath.Join(data, "crowdrag25"))
	if err != nil || len(after) != len(before) {
		t.Errorf("the inputs: %d entries before, %d after (%v)", len(before), len(after), err)
	}
	if _, err := os.Stat(filepath.Join(data, ".agora-staging-crowdrag25")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staging left: %v", err)
	}
}

// TestCheckFailsWhereRunFails: check finds the partitions as run's sink
// does, so a table past max_partitions fails check too; it passed, and
// the nightly run failed.
func TestCheckFailsWhereRunFails(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(`{"id":"1","k":"a"}`+"\n"+`{"id":"2","k":"b"}`+"\n"+`{"id":"3","k":"c"}`+"\n"), 0o644)
	cfg := filepath.Join(dir, "pipeline.yaml")
	for _, tt := range []struct {
		max  int
		code int
	}{{3, 0}, {2, 1}} {
		os.WriteFile(cfg, []byte(fmt.Sprintf(`version: 1
datasets:
  d:
    inputs:
      in: {path: in.jsonl, format: jsonl, columns: [{name: id, type: string}, {name: k, type: string}]}
    tables:
      t: {input: in, partition_by: [k], writer: {max_partitions: %d}}
`, tt.max)), 0o644)
		for _, cmd := range []string{"check", "run"} {
			args := []string{cmd, "--config", cfg, "--data", dir, "--quiet"}
			if cmd == "run" {
				args = append(args, "--out", filepath.Join(dir, "out"), "--mode", "overwrite")
			}
			code, stdout, stderr := agora(t, args...)
			if code != tt.code || tt.code != 0 && !strings.Contains(stderr, "more than writer.max_partitions (2)") {
				t.Errorf("%s with max_partitions %d: exit %d, want %d\n%s%s", cmd, tt.max, code, tt.code, stdout, stderr)
			}
		}
	}
}

// TestOnlyListAsWritten: --only "a, b" (a space after the comma, as in
// prose) names a and b, and a dataset named twice runs once.
func TestOnlyListAsWritten(t *testing.T) {
	code, stdout, stderr := agora(t, "check", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--only", "delidata, delidata", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if n := len(regexp.MustCompile(`(?m)^\s*delidata\s+messages\s`).FindAllString(stdout, -1)); n != 1 {
		t.Errorf("delidata's messages reported %d times:\n%s", n, stdout)
	}
}

// TestRerunMendsACutRelease: a release with a file gone (a table's
// folder, the dataset card or the data package removed by hand) is made
// again, not found unchanged.
func TestRerunMendsACutRelease(t *testing.T) {
	for _, cut := range []string{"votes", "README.md", "datapackage.json"} {
		t.Run(cut, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", out, "--only", "crowdrag25", "--quiet"}
			if code, stdout, stderr := agora(t, args...); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			if code, stdout, _ := agora(t, args...); code != 0 || !strings.Contains(stdout, "nothing to do") {
				t.Fatalf("an untouched release is not found unchanged: exit %d\n%s", code, stdout)
			}
			os.RemoveAll(filepath.Join(out, "crowdrag25", cut))
			code, stdout, stderr := agora(t, args...)
			if code != 0 || strings.Contains(stdout, "nothing to do") {
				t.Errorf("exit %d\n%s%s", code, stdout, stderr)
			}
			if _, err := os.Stat(filepath.Join(out, "crowdrag25", cut)); err != nil {
				t.Errorf("%s not written again: %v", cut, err)
			}
		})
	}
}

// TestNullPartitionIsNoted: rows with a null partition value go to Hive's
// null folder, which pyarrow and pandas cannot read with the others; the
// run says so, with the rule that would reject them, where it said nothing.
func TestNullPartitionIsNoted(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(`{"id":"1","k":"a"}`+"\n"+`{"id":"2","k":null}`+"\n"+`{"id":"3"}`+"\n"), 0o644)
	cfg := filepath.Join(dir, "pipeline.yaml")
	os.WriteFile(cfg, []byte(`version: 1
datasets:
  d:
    inputs:
      in: {path: in.jsonl, format: jsonl, columns: [{name: id, type: string}, {name: k, type: string}]}
    tables:
      t: {input: in, partition_by: [k]}
      u: {input: in}
`), 0o644)
	code, stdout, stderr := agora(t, "run", "--config", cfg, "--data", dir, "--out", filepath.Join(dir, "out"), "--quiet")
	if code != 0 || !strings.Contains(stdout, "t: 2 rows have a null or empty partition value (k), written to a __HIVE_DEFAULT_PARTITION__ folder") || !strings.Contains(stdout, "required: [k]") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.Count(stdout, "null or empty partition value") != 1 {
		t.Errorf("the note is not for t alone:\n%s", stdout)
	}
}

// TestReleaseDiffSaysWhatChanged: "release differs" names what differs,
// where it said "other inputs, config or agora version" whatever it was.
func TestReleaseDiffSaysWhatChanged(t *testing.T) {
	base := Manifest{Agora: "0.1.0", ConfigSHA256: "c1", Libraries: map[string]string{"arrow": "18"},
		Inputs: []InputInfo{{ID: "a", Path: "d/a.jsonl", SHA256: "x"}, {ID: "b", Path: "d/b.jsonl", SHA256: "y"}}}
	tests := []struct {
		name string
		edit func(m *Manifest)
		want string
	}{
		{"config", func(m *Manifest) { m.ConfigSHA256 = "c2" }, "another config of the dataset (its config_sha256 differs)"},
		{"an input", func(m *Manifest) {
			m.Inputs = []InputInfo{{ID: "a", Path: "d/a.jsonl", SHA256: "x"}, {ID: "b", Path: "d/b.jsonl", SHA256: "z"}}
		}, "other inputs (d/b.jsonl)"},
		{"an input gone", func(m *Manifest) { m.Inputs = m.Inputs[:1] }, "other inputs (d/b.jsonl)"},
		{"agora and config", func(m *Manifest) { m.Agora, m.ConfigSHA256 = "0.2.0", "c2" }, "agora 0.1.0 (this is 0.2.0) and another config"},
		{"nothing but the tables", func(m *Manifest) {}, "the same inputs and config, but its tables differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			man := base
			man.Inputs = slices.Clone(base.Inputs)
			tt.edit(&man)
			if got := releaseDiff(base, man); !strings.Contains(got, tt.want) {
				t.Errorf("releaseDiff = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestUnmovedInputs: an input file replaced or written to after the run
// took its stat is found, so that the manifest never pairs one version's
// checksum with tables made from another.
func TestUnmovedInputs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(p string)
		moved  bool
	}{
		{"untouched", func(string) {}, false},
		{"replaced by rename", func(p string) {
			os.WriteFile(p+".tmp", []byte(`{"x":2}`+"\n"), 0o644)
			os.Rename(p+".tmp", p)
		}, true},
		{"appended to", func(p string) {
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(`{"x":3}` + "\n")
			f.Close()
		}, true},
		{"removed", func(p string) { os.Remove(p) }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "a.jsonl")
			os.WriteFile(p, []byte(`{"x":1}`+"\n"), 0o644)
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			stats := []inputStat{{id: "a", rel: "a.jsonl", path: p, info: fi}}
			tt.change(p)
			err = unmoved(stats)
			if (err != nil) != tt.moved || (err != nil && !strings.Contains(err.Error(), "input a: a.jsonl changed while it was read")) {
				t.Errorf("err = %v, moved %v", err, tt.moved)
			}
		})
	}
}

// TestReleaseModesFollowTheUmask: a release's folders take the umask as
// its files do (at umask 002, 775 and 664); the folders were 755 at any
// umask, so a group that may write the files could not add to a folder.
func TestReleaseModesFollowTheUmask(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	out := t.TempDir()
	if code, _, stderr := agora(t, "run", "delidata", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dir := filepath.Join(out, "delidata", "messages", "message_type=MESSAGE")
	file := filepath.Join(dir, "part-00000.parquet")
	for p, want := range map[string]os.FileMode{filepath.Join(out, "delidata"): 0o775, dir: 0o775, file: 0o664} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
	}
}
