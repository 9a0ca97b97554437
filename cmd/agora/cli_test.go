package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"
	"github.com/vbauerster/mpb/v8"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/sinks"
)

// norm collapses runs of spaces, so tests do not depend on column widths.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// runSamples runs the pipeline on the shipped samples into a temp dir.
func runSamples(t *testing.T, extra ...string) string {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", out, "--quiet"}, extra...)
	if code, stdout, stderr := agora(t, args...); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	return out
}

func TestInspect(t *testing.T) {
	out := runSamples(t, "--only", "crowdrag25,delidata")
	ratings := filepath.Join(out, "crowdrag25", "ratings")
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"partitioned folder", []string{"inspect", ratings},
			[]string{"rows            588", "row groups      7", "ZSTD", "pair_key", "BYTE_ARRAY String", "list<string>", "dimension=coherence_logical", "first 5 rows:", "partitioned by  dimension (7 partitions)"}, nil},
		{"no rows", []string{"inspect", ratings, "--head", "0"}, []string{"rows            588"}, []string{"first"}},
		{"one file", []string{"inspect", filepath.Join(out, "delidata", "groups", "part-00000.parquet"), "-n", "2"},
			[]string{"rows            12", "files           1", "first 2 rows:", "group_id"}, []string{"partitioned by"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := agora(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(norm(stdout), norm(w)) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(norm(stdout), norm(w)) {
					t.Errorf("output has %q:\n%s", w, stdout)
				}
			}
		})
	}
}

func TestInspectJSONMatchesManifest(t *testing.T) {
	out := runSamples(t, "--only", "crowdrag25")
	code, stdout, stderr := agora(t, "inspect", filepath.Join(out, "crowdrag25", "votes"), "--format", "json", "--head", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep InspectReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(out, "crowdrag25")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range m.Tables {
		if tr.Name != "votes" {
			continue
		}
		if rep.Rows != tr.Written {
			t.Errorf("inspect counts %d rows, manifest %d", rep.Rows, tr.Written)
		}
		if len(rep.Schema) != len(tr.Schema) {
			t.Fatalf("inspect has %d columns, manifest %d", len(rep.Schema), len(tr.Schema))
		}
		for i, c := range tr.Schema {
			if rep.Schema[i].Name != c.Name || rep.Schema[i].Type != c.Type || rep.Schema[i].Partition != c.Partition {
				t.Errorf("column %d: inspect %+v, manifest %+v", i, rep.Schema[i], c)
			}
		}
	}
	if len(rep.Head) != 3 || rep.Head[0]["dimension"] == nil {
		t.Errorf("head: %v", rep.Head)
	}
}

func TestInspectUnescapesPartitionValues(t *testing.T) {
	out := runSamples(t, "--only", "crowdrag25")
	src := filepath.Join(out, "crowdrag25", "grades")
	dir := t.TempDir()
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name(), "part-00000.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		// An escaped value, Hive's default partition (null) and the string
		// "null", which readers tell apart; and a % that escapes nothing
		// (another tool's folder), read as it stands, as pyarrow does.
		for _, f := range []string{"k=a%2Fb c", "k=__HIVE_DEFAULT_PARTITION__", "k=null", "k=%ZZ"} {
			os.MkdirAll(filepath.Join(dir, f), 0o755)
			os.WriteFile(filepath.Join(dir, f, "part-00000.parquet"), b, 0o644)
		}
		break
	}
	code, stdout, stderr := agora(t, "inspect", dir, "--format", "json", "--head", "1000")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep InspectReport
	json.Unmarshal([]byte(stdout), &rep)
	got := map[string]string{}
	for _, p := range rep.Partitions {
		v := "<null>"
		if p.Values["k"] != nil {
			v = *p.Values["k"]
		}
		got[p.Dir] = v
	}
	want := map[string]string{"k=a%2Fb c": "a/b c", "k=__HIVE_DEFAULT_PARTITION__": "<null>", "k=null": "null", "k=%ZZ": "%ZZ"}
	if !maps.Equal(got, want) {
		t.Errorf("partition values %v, want %v", got, want)
	}
	nulls := 0
	for _, r := range rep.Head {
		if v, ok := r["k"]; ok && v == nil {
			nulls++
		}
	}
	if nulls == 0 || !strings.Contains(stdout, `"k": null`) {
		t.Errorf("the default partition's rows do not have k null (%d rows)", nulls)
	}
	_, text, _ := agora(t, "inspect", dir)
	if !strings.Contains(text, "k=null ") && !strings.Contains(text, "k=null\t") || !strings.Contains(text, `k="null"`) {
		t.Errorf("text output does not tell null from \"null\":\n%s", text)
	}
}

func TestInspectErrors(t *testing.T) {
	multi := runSamples(t, "--only", "crowdrag25")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.parquet"), []byte("not parquet at all"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing path", []string{"inspect", filepath.Join(dir, "none")}, 1, "none"},
		{"no parquet files", []string{"inspect", t.TempDir()}, 1, "no *.parquet files"},
		{"not parquet", []string{"inspect", filepath.Join(dir, "x.parquet")}, 1, `x.parquet: not a Parquet file: it does not start with PAR1 but "not " (another format?)`},
		{"bad format", []string{"inspect", dir, "--format", "xml"}, 2, "--format"},
		{"no path", []string{"inspect"}, 2, "accepts 1 arg"},
		{"a folder of several tables", []string{"inspect", filepath.Join(multi, "crowdrag25")}, 1, "is a dataset's release, of the tables grades, llm_ratings, ratings, responses, statements, votes: inspect one table's folder at a time, such as " + filepath.Join(multi, "crowdrag25", "grades")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := agora(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want %d; stderr lacks %q?\n%s", code, tt.code, tt.want, stderr)
			}
		})
	}
}

// TestInspectHeadLayout: the first rows show a struct's fields in the
// file's order (not sorted, as encoding/json sorts a Go map), and the
// columns after a CJK or emoji value stay aligned in terminal columns.
func TestInspectHeadLayout(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "s", Type: arrow.StructOf(
			arrow.Field{Name: "zeta", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "alpha", Type: arrow.ListOf(arrow.StructOf(
				arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true},
				arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})), Nullable: true}), Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(`[
		{"text": "共通の基盤を見つける", "s": {"zeta": 1, "alpha": [{"y": "1", "b": "2"}]}, "n": 7},
		{"text": "plain", "s": null, "n": 8},
		{"text": "🙂🙂 ok", "s": {"zeta": null, "alpha": []}, "n": 9}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	p := filepath.Join(t.TempDir(), "x.parquet")
	writeBatchParquet(t, p, b)
	code, text, stderr := agora(t, "inspect", p)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	// Each leaf of the struct, with its path, in the schema's Parquet types.
	if !strings.Contains(text, "s.zeta: INT64") || !strings.Contains(text, "s.alpha.list.element.b: BYTE_ARRAY String") {
		t.Errorf("the struct's leaves are not all shown:\n%s", text)
	}
	if !strings.Contains(text, `{"zeta":null,"alpha":[]}`) {
		t.Errorf("struct not shown in the file's field order:\n%s", text)
	}
	_, js, _ := agora(t, "inspect", p, "--format", "json")
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(js)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(compact.String(), `{"zeta":1,"alpha":[{"y":"1","b":"2"}]}`) {
		t.Errorf("JSON head not in the file's field order:\n%s", js)
	}
	_, head, _ := strings.Cut(text, "first 3 rows:\n")
	lines := strings.Split(strings.TrimRight(head, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("head has %d lines, want a header and 3 rows:\n%s", len(lines), head)
	}
	// Where the last column (n) starts, in terminal columns, on each line.
	var at []int
	for _, l := range lines {
		i := strings.LastIndex(l, "  ")
		at = append(at, runewidth.StringWidth(l[:i]))
	}
	if at[0] != at[1] || at[1] != at[2] || at[2] != at[3] {
		t.Errorf("column n starts at terminal columns %v:\n%s", at, head)
	}
}

func TestSchema(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"one table, text", []string{"crowdrag25.ratings"}, []string{"crowdrag25.ratings (partitioned by dimension)", "spam_probabilities  list<float64>", "[partition folder]"}, []string{"crowdrag25.votes"}},
		{"a dataset", []string{"delidata"}, []string{"delidata.messages", "delidata.groups", "sol_tracker_all"}, []string{"crowdrag25"}},
		{"markdown", []string{"habermas.round_outcomes", "--format", "markdown"}, []string{"### habermas.round_outcomes", "| `schulze_winner` | `string` |", "Partitioned by `metadata_version`."}, nil},
		{"every table", nil, []string{"crowdrag25.responses", "delidata.groups", "habermas.position_ratings"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := agora(t, append([]string{"schema", "--config", "../../pipeline.yaml", "--data", "../../testdata"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(norm(stdout), norm(w)) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(stdout, w) {
					t.Errorf("output has %q", w)
				}
			}
		})
	}
}

// The schema printed without data is the schema the run records.
func TestSchemaMatchesManifest(t *testing.T) {
	code, stdout, stderr := agora(t, "schema", "crowdrag25", "--config", "../../pipeline.yaml", "--data", t.TempDir(), "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d (schema must not need the inputs)\n%s", code, stderr)
	}
	var tables []TableSchema
	if err := json.Unmarshal([]byte(stdout), &tables); err != nil {
		t.Fatal(err)
	}
	out := runSamples(t, "--only", "crowdrag25")
	m, err := readManifest(out, "crowdrag25")
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != len(m.Tables) {
		t.Fatalf("schema lists %d tables, the manifest %d", len(tables), len(m.Tables))
	}
	for i, tr := range m.Tables {
		if tables[i].Table != tr.Name || tables[i].SchemaHash != tr.SchemaHash {
			t.Errorf("%s: schema hash %s, manifest %s", tr.Name, tables[i].SchemaHash, tr.SchemaHash)
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	tests := []struct {
		name, sel, want string
	}{
		{"unknown dataset", "nope", `no dataset "nope"`},
		{"unknown table", "crowdrag25.nope", `no table "nope" in dataset crowdrag25`},
		{"a table without its dataset", ".ratings", `".ratings": name a table as dataset.table`},
		{"a dataset and a dot", "crowdrag25.", `"crowdrag25.": name a table as dataset.table`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := agora(t, "schema", tt.sel, "--config", "../../pipeline.yaml")
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d; stderr %q lacks %q", code, stderr, tt.want)
			}
		})
	}
}

// fetchServer serves files by path, honouring Range requests (through
// http.ServeContent), and counts the requests with a Range header.
type fetchServer struct {
	files  map[string][]byte
	mu     sync.Mutex
	ranges []string
}

func (s *fetchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if rg := r.Header.Get("Range"); rg != "" {
		s.mu.Lock()
		s.ranges = append(s.ranges, rg)
		s.mu.Unlock()
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// tarGz builds a GitHub-style archive: one top folder holding files.
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "repo-abc123/", Typeflag: tar.TypeDir, Mode: 0o755})
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "repo-abc123/" + name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(content))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// fetchConfig writes a pipeline.yaml with one dataset whose fetch list
// is given, and returns its path.
func fetchConfig(t *testing.T, fetch string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pipeline.yaml")
	y := `version: 1
datasets:
  demo:
    fetch:
` + fetch + `
    inputs:
      a: {path: demo/a.jsonl, format: jsonl, columns: [{name: x, type: int64}]}
    tables:
      t: {input: a}
`
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFetch(t *testing.T) {
	data := bytes.Repeat([]byte(`{"x":1}`+"\n"), 5000)
	archive := tarGz(t, map[string]string{"corpus/g1": "h\n1\n", "corpus/g2": "h\n2\n", "README.md": "not data", "corpus/../../evil": "x"})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	pq, err := os.ReadFile("../../testdata/habermas/hm_all_position_statement_ratings.parquet")
	if err != nil {
		t.Fatal(err)
	}
	// Files cut short as a server that sends no length, or closes early
	// over HTTP/1.0, would leave them: nothing but their format tells.
	srv := &fetchServer{files: map[string][]byte{"/rel/a.jsonl": data, "/rel/corpus.tar.gz": archive,
		"/rel/a.jsonl.gz": gz.Bytes(), "/rel/cut.jsonl.gz": gz.Bytes()[:gz.Len()-3],
		"/rel/a.parquet": pq, "/rel/cut.parquet": pq[:len(pq)-100], "/rel/page.parquet": []byte("<html>not found</html>\n")}}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	tests := []struct {
		name    string
		fetch   string
		partial int // bytes of the file already in demo/a.jsonl.part
		code    int
		want    []string
		files   map[string]string // path under data → sha256 of content, or "" to require absence
		ranges  int
	}{
		{"full download, sha256 verified", fmt.Sprintf("      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl, sha256: %s}", sha(data)), 0, 0,
			[]string{"downloaded demo/a.jsonl", "sha256 verified", ts.URL + "/rel/a.jsonl"}, map[string]string{"demo/a.jsonl": sha(data), "demo/a.jsonl.part": ""}, 0},
		{"sha256 published in upper case", fmt.Sprintf("      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl, sha256: %s}", strings.ToUpper(sha(data))), 0, 0,
			[]string{"downloaded demo/a.jsonl", "sha256 verified"}, map[string]string{"demo/a.jsonl": sha(data)}, 0},
		{"resume from a partial file", fmt.Sprintf("      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl, sha256: %s}", sha(data)), 12345, 0,
			[]string{"resumed demo/a.jsonl"}, map[string]string{"demo/a.jsonl": sha(data)}, 1},
		{"no checksum published", "      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl}", 0, 0,
			[]string{"no checksum published", sha(data)}, map[string]string{"demo/a.jsonl": sha(data)}, 0},
		// Nothing could tell a resumed file whose start came from another
		// version of it: it is downloaded whole.
		{"no checksum published: a partial file is not resumed", "      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl}", 12345, 0,
			[]string{"downloaded demo/a.jsonl"}, map[string]string{"demo/a.jsonl": sha(data), "demo/a.jsonl.part": ""}, 0},
		{"a failed file keeps no other from being fetched", "      - {url: https://example.org/rel/gone.jsonl, to: demo/b.jsonl}\n" +
			fmt.Sprintf("      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl, sha256: %s}", sha(data)), 0, 1,
			[]string{"demo: failed: demo/b.jsonl", "404 Not Found", "downloaded demo/a.jsonl"}, map[string]string{"demo/a.jsonl": sha(data), "demo/b.jsonl": ""}, 0},
		{"checksum mismatch", "      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl, sha256: " + strings.Repeat("0", 64) + "}", 0, 1,
			[]string{"checksum mismatch", "sha256 is " + sha(data), ts.URL + "/rel/a.jsonl"}, map[string]string{"demo/a.jsonl": "", "demo/a.jsonl.part": ""}, 0},
		{"md5 mismatch", "      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl, md5: " + strings.Repeat("0", 32) + "}", 0, 1,
			[]string{"checksum mismatch", "md5 is"}, map[string]string{"demo/a.jsonl": ""}, 0},
		{"404 names the URL", "      - {url: https://example.org/rel/gone.jsonl, to: demo/a.jsonl}", 0, 1,
			[]string{"GET " + ts.URL + "/rel/gone.jsonl: 404 Not Found"}, map[string]string{"demo/a.jsonl": ""}, 0},
		{"no checksum published: a whole gzip file", "      - {url: https://example.org/rel/a.jsonl.gz, to: demo/a.jsonl.gz}", 0, 0,
			[]string{"a whole gzip file"}, map[string]string{"demo/a.jsonl.gz": sha(gz.Bytes())}, 0},
		{"no checksum published: a gzip file cut short", "      - {url: https://example.org/rel/cut.jsonl.gz, to: demo/a.jsonl.gz}", 0, 1,
			[]string{"demo/a.jsonl.gz is not a whole gzip file", "unexpected EOF", "the download was removed"}, map[string]string{"demo/a.jsonl.gz": "", "demo/a.jsonl.gz.part": ""}, 0},
		{"no checksum published: a whole Parquet file", "      - {url: https://example.org/rel/a.parquet, to: demo/a.parquet}", 0, 0,
			[]string{"a whole Parquet file"}, map[string]string{"demo/a.parquet": sha(pq)}, 0},
		{"no checksum published: a Parquet file cut short", "      - {url: https://example.org/rel/cut.parquet, to: demo/a.parquet}", 0, 1,
			[]string{"demo/a.parquet is not a whole Parquet file"}, map[string]string{"demo/a.parquet": "", "demo/a.parquet.part": ""}, 0},
		// Pinned, the same cut is the start of the file, kept to be
		// resumed, where it was removed as a checksum mismatch.
		{"checksum published: a Parquet file cut short", fmt.Sprintf("      - {url: https://example.org/rel/cut.parquet, to: demo/a.parquet, sha256: %s}", sha(pq)), 0, 1,
			[]string{"the download ends early", "demo/a.parquet.part: run fetch again to resume"}, map[string]string{"demo/a.parquet": "", "demo/a.parquet.part": sha(pq[:len(pq)-100])}, 0},
		{"checksum published: a gzip file cut short", fmt.Sprintf("      - {url: https://example.org/rel/cut.jsonl.gz, to: demo/a.jsonl.gz, sha256: %s}", sha(gz.Bytes())), 0, 1,
			[]string{"the download ends early"}, map[string]string{"demo/a.jsonl.gz": "", "demo/a.jsonl.gz.part": sha(gz.Bytes()[:gz.Len()-3])}, 0},
		{"checksum published: a page instead of the file", fmt.Sprintf("      - {url: https://example.org/rel/page.parquet, to: demo/a.parquet, sha256: %s}", sha(pq)), 0, 1,
			[]string{"checksum mismatch", "the download was removed"}, map[string]string{"demo/a.parquet": "", "demo/a.parquet.part": ""}, 0},
		{"tar.gz extracted below extract:", "      - {url: https://example.org/rel/corpus.tar.gz, archive: tar.gz, extract: corpus, to: demo/corpus}", 0, 0,
			[]string{"2 files extracted"}, map[string]string{"demo/corpus/g1": sha([]byte("h\n1\n")), "demo/corpus/g2": sha([]byte("h\n2\n")), "demo/corpus/README.md": "", "evil": "", "demo/corpus.tar.gz.part": ""}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.mu.Lock()
			srv.ranges = nil
			srv.mu.Unlock()
			dir := t.TempDir()
			if tt.partial > 0 {
				os.MkdirAll(filepath.Join(dir, "demo"), 0o755)
				os.WriteFile(filepath.Join(dir, "demo", "a.jsonl.part"), data[:tt.partial], 0o644)
			}
			code, stdout, stderr := agora(t, "fetch", "--config", fetchConfig(t, tt.fetch), "--data", dir, "--base-url", ts.URL)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s%s", w, stdout, stderr)
				}
			}
			for p, want := range tt.files {
				b, err := os.ReadFile(filepath.Join(dir, p))
				switch {
				case want == "" && err == nil:
					t.Errorf("%s should not exist", p)
				case want != "" && err != nil:
					t.Errorf("%s: %v", p, err)
				case want != "" && sha(b) != want:
					t.Errorf("%s has other content", p)
				}
			}
			srv.mu.Lock()
			if len(srv.ranges) != tt.ranges {
				t.Errorf("server saw Range headers %q, want %d", srv.ranges, tt.ranges)
			}
			if tt.partial > 0 && len(srv.ranges) > 0 && srv.ranges[0] != fmt.Sprintf("bytes=%d-", tt.partial) {
				t.Errorf("Range %q, want bytes=%d-", srv.ranges[0], tt.partial)
			}
			srv.mu.Unlock()
		})
	}
}

func TestFetchSkipsFilesInPlace(t *testing.T) {
	data := []byte(`{"x":1}` + "\n")
	ts := httptest.NewServer(&fetchServer{files: map[string][]byte{"/a.jsonl": data}})
	defer ts.Close()
	cfg := fetchConfig(t, fmt.Sprintf("      - {url: https://example.org/a.jsonl, to: demo/a.jsonl, sha256: %s}", sha(data)))
	dir := t.TempDir()
	for i, want := range []string{"downloaded", "is in place, checksum verified"} {
		code, stdout, stderr := agora(t, "fetch", "--config", cfg, "--data", dir, "--base-url", ts.URL)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("fetch %d: exit %d, output lacks %q:\n%s%s", i+1, code, want, stdout, stderr)
		}
	}
	// The fetched layout is what run reads.
	if code, stdout, stderr := agora(t, "check", "--config", cfg, "--data", dir); code != 0 {
		t.Errorf("check after fetch: exit %d\n%s%s", code, stdout, stderr)
	}
	// Another file in its place (the shipped sample, when --data is left
	// to pipeline.yaml's testdata/): fetch says so, and that another
	// --data keeps it, before saying how to replace it.
	os.WriteFile(filepath.Join(dir, "demo", "a.jsonl"), []byte(`{"x":2}`+"\n"), 0o644)
	code, stdout, stderr := agora(t, "fetch", "--config", cfg, "--data", dir, "--base-url", ts.URL)
	if code != 1 || !strings.Contains(stdout+stderr, "another file than the one published") || !strings.Contains(stdout+stderr, "give another --data") {
		t.Errorf("fetch over another file: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestFetchConfigValidation(t *testing.T) {
	tests := []struct {
		name, fetch, want string
	}{
		{"path escapes the data root", "      - {url: https://example.org/a, to: ../a}", "fetch[0].to"},
		{"not http", "      - {url: ftp://example.org/a, to: a}", "fetch[0].url"},
		{"bad sha256", "      - {url: https://example.org/a, to: a, sha256: abc}", "fetch[0].sha256"},
		{"bad archive", "      - {url: https://example.org/a, to: a, archive: rar}", "fetch[0].archive"},
		{"typo", "      - {url: https://example.org/a, to: a, sha265: abc}", `did you mean "sha256"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := agora(t, "fetch", "--config", fetchConfig(t, tt.fetch), "--data", t.TempDir())
			if code != exitUsage || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "pipeline.yaml:") {
				t.Errorf("exit %d; stderr lacks %q:\n%s", code, tt.want, stderr)
			}
		})
	}
}

// The shipped pipeline.yaml declares where every dataset is published.
func TestShippedFetchLocations(t *testing.T) {
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range cfg.DatasetIDs() {
		d := cfg.Datasets[id]
		if len(d.Fetch) == 0 {
			t.Errorf("%s: no fetch: locations", id)
		}
		// Every input lies under a fetched path.
		for _, inID := range d.InputIDs() {
			in := d.Inputs[inID]
			found := false
			for _, f := range d.Fetch {
				if in.Path == f.To || strings.HasPrefix(in.Path, f.To+"/") {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: input %s (%s) is not fetched", id, inID, in.Path)
			}
		}
	}
}

func TestArchivePath(t *testing.T) {
	tests := []struct {
		name, member, under, want string
		ok                        bool
	}{
		{"below extract", "repo-1/a/b/file", "a/b", "file", true},
		{"no extract", "repo-1/x/y", "", "x/y", true},
		{"outside extract", "repo-1/c/file", "a/b", "", false},
		{"top folder only", "repo-1", "", "", false},
		{"dot-dot cleaned away", "repo-1/a/b/../../../../etc/passwd", "a/b", "", false},
		{"absolute", "/repo-1/a/b/f", "a/b", "f", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := archivePath(tt.member, tt.under)
			if got != tt.want || ok != tt.ok {
				t.Errorf("archivePath(%q, %q) = %q, %v; want %q, %v", tt.member, tt.under, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestLogFormatJSON(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := agora(t, "run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", out, "--only", "delidata", "--log-format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var done, checks int
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
		// The notes on stdout reach the log too: DeliData's flagged check.
		if rec["msg"] == "check failed" && rec["level"] == "WARN" && rec["table"] == "messages" && rec["column"] == "team_performance" && rec["rows"] == 7.0 {
			checks++
		}
		if rec["msg"] == "table done" {
			done++
			for _, k := range []string{"dataset", "table", "rows_in", "written", "rejected", "files", "bytes", "seconds"} {
				if _, ok := rec[k]; !ok {
					t.Errorf("summary line lacks %s: %v", k, rec)
				}
			}
			// Counts and durations are JSON numbers, for schedulers to sum.
			for _, k := range []string{"rows_in", "written", "rejected", "files", "bytes", "seconds"} {
				if _, ok := rec[k].(float64); !ok {
					t.Errorf("%s is %T, not a number: %v", k, rec[k], rec)
				}
			}
		}
	}
	if done != 2 || checks != 1 {
		t.Errorf("%d table summary lines, want 2; %d flagged check lines, want 1:\n%s", done, checks, stderr)
	}
	if !strings.Contains(stdout, "messages") {
		t.Errorf("the stdout summary table is gone:\n%s", stdout)
	}
	if code, _, stderr := agora(t, "schema", "--config", "../../pipeline.yaml", "--log-format", "xml"); code != exitUsage {
		t.Errorf("--log-format xml: exit %d\n%s", code, stderr)
	}
	// The error that ends a run is a JSON line too, multi-line text and all.
	code, _, stderr = agora(t, "run", "--config", "../../pipeline.yaml", "--data", t.TempDir(), "--out", out, "--log-format", "json", "--quiet")
	if code != exitFailed {
		t.Fatalf("missing inputs: exit %d\n%s", code, stderr)
	}
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("not a JSON log line: %q", line)
		}
	}
	if msg, _ := last["msg"].(string); last["level"] != "ERROR" || !strings.Contains(msg, "does not exist") {
		t.Errorf("last line %v, want the run's error", last)
	}
}

// Under a pipe, progress is periodic log lines, never a drawn bar;
// --quiet turns them off.
func TestProgressLogLinesWhenNotATerminal(t *testing.T) {
	tests := []struct {
		name     string
		extra    []string
		progress bool
	}{
		{"log lines", nil, true},
		{"quiet", []string{"--quiet"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", t.TempDir(), "--only", "crowdrag25", "--progress-interval", "1ms"}, tt.extra...)
			code, _, stderr := agora(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if got := strings.Contains(stderr, "msg=progress name=crowdrag25/"); got != tt.progress {
				t.Errorf("progress lines: %v, want %v:\n%s", got, tt.progress, stderr)
			}
			if strings.Contains(stderr, "\x1b[") {
				t.Errorf("terminal escapes on a pipe:\n%q", stderr)
			}
		})
	}
}

// Under a pseudo-terminal, run draws a live bar per table.
func TestProgressBarOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agora under a pseudo-terminal")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", t.TempDir(), "--only", "crowdrag25", "--workers", "1")
	cmd.Env = append(os.Environ(), "AGORA_TEST_EXEC_MAIN=1")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&buf, f); close(done) }()
	if err := cmd.Wait(); err != nil {
		t.Errorf("agora under a pty: %v", err)
	}
	<-done
	f.Close()
	got := buf.String()
	for _, w := range []string{"crowdrag25/ratings", "rows/s", "\x1b[", "msg=\"table done\"", "dataset"} {
		if !strings.Contains(got, w) {
			t.Errorf("terminal output lacks %q:\n%q", w, got)
		}
	}
	if strings.Contains(got, "msg=progress") {
		t.Error("a terminal gets bars, not progress log lines")
	}
}

func TestHelpHasExamples(t *testing.T) {
	root := newRoot(io.Discard, io.Discard)
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			if c.Example == "" {
				t.Errorf("%s has no Example", c.Name())
			}
			code, stdout, _ := agora(t, c.Name(), "--help")
			if code != 0 || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "--log-format") {
				t.Errorf("%s --help: exit %d\n%s", c.Name(), code, stdout)
			}
		})
	}
	_, stdout, _ := agora(t, "--help")
	for _, w := range []string{"Exit codes", "130", "inspect", "schema", "fetch"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("agora --help lacks %q", w)
		}
	}
}

func TestInputTotal(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("line\n", 1000)
	os.WriteFile(filepath.Join(dir, "plain.jsonl"), []byte(content), 0o644)
	writeGz(t, filepath.Join(dir, "a.jsonl.gz"), content)
	os.MkdirAll(filepath.Join(dir, "folder"), 0o755)
	os.WriteFile(filepath.Join(dir, "folder", "g1"), []byte("12345"), 0o644)
	os.WriteFile(filepath.Join(dir, "folder", "g2"), []byte("123"), 0o644)
	os.WriteFile(filepath.Join(dir, "folder", ".hidden"), []byte("1234567"), 0o644)
	tests := []struct {
		name      string
		in        config.Input
		path      string
		wantTotal int64
		wantUnit  string
	}{
		{"plain file", config.Input{Format: "jsonl", Compression: "none"}, "plain.jsonl", int64(len(content)), "bytes"},
		{"gzip: uncompressed size from the trailer", config.Input{Format: "jsonl", Compression: "gzip"}, "a.jsonl.gz", int64(len(content)), "bytes"},
		{"tsv folder, hidden files left out", config.Input{Format: "tsv"}, "folder", 8, "bytes"},
		{"parquet rows", config.Input{Format: "parquet"}, "@../../testdata/habermas/hm_all_position_statement_ratings.parquet", 345, "rows"},
		{"missing", config.Input{Format: "jsonl"}, "none", 0, "bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.path)
			if rel, ok := strings.CutPrefix(tt.path, "@"); ok { // relative to the package
				p = rel
			}
			total, unit := inputTotal(&tt.in, p)
			if total != tt.wantTotal || unit != tt.wantUnit {
				t.Errorf("inputTotal = %d %s, want %d %s", total, unit, tt.wantTotal, tt.wantUnit)
			}
		})
	}
}

func TestTrackerStatus(t *testing.T) {
	tests := []struct {
		name    string
		total   int64
		unit    string
		chunks  [][2]int64 // bytes, rows
		done    bool
		want    []string
		notWant []string
	}{
		{"bytes with ETA", 1000, "bytes", [][2]int64{{250, 10}, {250, 10}}, false, []string{"500 B of 1000 B", "rows/s", "ETA"}, nil},
		{"rows unit counts rows", 100, "rows", [][2]int64{{0, 30}}, false, []string{"30 rows of 100 rows"}, nil},
		{"done has no ETA", 1000, "bytes", [][2]int64{{400, 4}}, true, []string{"400 B of 1000 B"}, []string{"ETA"}},
		{"unknown total", 0, "bytes", [][2]int64{{2048, 4}}, false, []string{"2.0 KiB"}, []string{" of ", "ETA"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracker("x", tt.total, 0, tt.unit)
			for _, c := range tt.chunks {
				tr.Chunk(c[0], int(c[1]))
			}
			time.Sleep(2 * time.Millisecond)
			if tt.done {
				tr.Done()
			}
			got := tr.status()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("status %q lacks %q", got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("status %q has %q", got, w)
				}
			}
		})
	}
}

// The shipped fetch: locations lay the files out the way run --data reads
// them: a test server stands in for GitHub, serving the shipped samples
// at the published paths.
func TestFetchShippedLayoutThenCheck(t *testing.T) {
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fetchServer{files: map[string][]byte{}}
	for _, id := range []string{"crowdrag25", "delidata"} {
		for _, f := range cfg.Datasets[id].Fetch {
			u, err := url.Parse(f.URL)
			if err != nil {
				t.Fatal(err)
			}
			if f.Archive == "" {
				b, err := os.ReadFile(filepath.Join("../../testdata", f.To))
				if err != nil {
					t.Fatal(err)
				}
				srv.files[u.Path] = b
				continue
			}
			files := map[string]string{}
			entries, _ := os.ReadDir(filepath.Join("../../testdata", f.To))
			for _, e := range entries {
				b, _ := os.ReadFile(filepath.Join("../../testdata", f.To, e.Name()))
				files[f.Extract+"/"+e.Name()] = string(b)
			}
			files["setup.py"] = "not data"
			srv.files[u.Path] = tarGz(t, files)
		}
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	data := t.TempDir()
	code, stdout, stderr := agora(t, "fetch", "crowdrag25", "delidata", "--config", "../../pipeline.yaml", "--data", data, "--base-url", ts.URL)
	if code != 0 {
		t.Fatalf("fetch: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "no checksum published") {
		t.Errorf("fetch should say no checksum is published:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(data, "delidata", "setup.py")); err == nil {
		t.Error("a file outside extract: was extracted")
	}
	code, stdout, stderr = agora(t, "check", "--config", "../../pipeline.yaml", "--data", data, "--only", "crowdrag25,delidata", "--quiet")
	if code != 0 || !strings.Contains(stdout, "2940") {
		t.Fatalf("check on the fetched data: exit %d\n%s%s", code, stdout, stderr)
	}
}

// After an interrupt shut the display down, a table that still starts is
// counted without a bar instead of panicking.
func TestBarUIAfterShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := mpb.NewWithContext(ctx, mpb.WithOutput(io.Discard))
	cancel()
	p.Wait()
	u := &barUI{p: p}
	tr := u.Track("x", 10, 0, "bytes")
	tr.Chunk(5, 1)
	tr.Done()
	if tr.bar != nil || tr.cur.Load() != 5 {
		t.Errorf("bar %v, counted %d; want no bar, 5", tr.bar, tr.cur.Load())
	}
}

// TestCommandLineMistakesExitTwo checks that the command line's mistakes
// that are not flags' exit 2 (the README's exit codes), as flag errors do
// (TestCommandErrors and TestInspectErrors have the rest).
func TestCommandLineMistakesExitTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"misspelt command", []string{"chek"}, "did you mean check?"},
		{"unknown dataset as an argument to run", []string{"run", "extra", "--config", "../../pipeline.yaml"}, `extra: no such dataset in ../../pipeline.yaml (have crowdrag25, delidata, habermas)`},
		{"datasets as arguments and --only", []string{"check", "delidata", "--only", "habermas", "--config", "../../pipeline.yaml"}, `name the datasets as arguments or with --only, not both`},
		{"argument to version", []string{"version", "x"}, `agora version takes no arguments`},
		{"schema with two", []string{"schema", "a", "b", "--config", "../../pipeline.yaml"}, "accepts at most 1 arg(s)"},
		{"check --only unknown", []string{"check", "--only", "nosuch", "--config", "../../pipeline.yaml"}, "nosuch: no such dataset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := agora(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d (want %d); stderr %q lacks %q", code, exitUsage, stderr, tt.want)
			}
		})
	}
	// Alone, agora shows its help and succeeds.
	if code, stdout, _ := agora(t); code != exitOK || !strings.Contains(stdout, "Usage:") {
		t.Errorf("agora alone: exit %d, stdout %q", code, stdout)
	}
}

// TestCheckNotesFlaggedChecks: check reports flagged checks without
// saying they are in a manifest.json it does not write; run says they
// are.
func TestCheckNotesFlaggedChecks(t *testing.T) {
	code, stdout, stderr := agora(t, "check", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--only", "delidata")
	if code != 0 || !strings.Contains(stdout+stderr, "(kept, run flags them in manifest.json)") || strings.Contains(stdout+stderr, "(kept, flagged in manifest.json)") {
		t.Errorf("check: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = agora(t, "run", "--config", "../../pipeline.yaml", "--data", "../../testdata", "--out", t.TempDir(), "--only", "delidata")
	if code != 0 || !strings.Contains(stdout+stderr, "(kept, flagged in manifest.json)") {
		t.Errorf("run: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestFetchCutShortSaysWhatComesNext: a download the server cuts short
// is an error that says what the next fetch does: resume it when a
// checksum is published, start over when none is (it said "resume"
// either way).
// TestFetchPartialFileThatCannotGo: a partial file longer than the
// server's (416 to its Range) that cannot be removed is one error
// naming it; fetch asked again and again, without end.
func TestFetchPartialFileThatCannotGo(t *testing.T) {
	var requests atomic.Int64
	srv := &fetchServer{files: map[string][]byte{"/rel/tiny.jsonl": []byte(`{"x":1}` + "\n")}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	dir := t.TempDir()
	// A folder that is not empty: os.Remove cannot take it.
	if err := os.MkdirAll(filepath.Join(dir, "demo", "tiny.jsonl.part", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	fetch := fmt.Sprintf("      - {url: https://example.org/rel/tiny.jsonl, to: demo/tiny.jsonl, sha256: %s}", sha([]byte(`{"x":1}`+"\n")))
	code, stdout, stderr := agora(t, "fetch", "--config", fetchConfig(t, fetch), "--data", dir, "--base-url", ts.URL)
	if code != 1 || !strings.Contains(stdout+stderr, "which cannot be removed to start over") || !strings.Contains(stdout+stderr, "tiny.jsonl.part") {
		t.Errorf("exit %d:\n%s%s", code, stdout, stderr)
	}
	if n := requests.Load(); n > 2 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestFetchArchiveBoundedAndInterruptible: an archive that extracts to
// far more than its size (a gzip bomb) is refused, and an interrupted
// extraction is not swapped in; either way the folder in place stays.
// The bomb was extracted whole and swapped in, and Ctrl-C waited for the
// end of the extraction.
func TestFetchArchiveBoundedAndInterruptible(t *testing.T) {
	savedMax, savedRatio := maxExtractBytes, extractRatio
	defer func() { maxExtractBytes, extractRatio = savedMax, savedRatio }()
	maxExtractBytes, extractRatio = 64<<10, 10
	bomb := tarGz(t, map[string]string{"corpus/g1": "h\n1\n", "corpus/zeros": strings.Repeat("\x00", 4<<20)})
	srv := &fetchServer{files: map[string][]byte{"/rel/corpus.tar.gz": bomb}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	old := filepath.Join(dir, "demo", "corpus", "g0")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte("h\n0\n"), 0o644)
	fetch := "      - {url: https://example.org/rel/corpus.tar.gz, archive: tar.gz, extract: corpus, to: demo/corpus}"
	code, stdout, stderr := agora(t, "fetch", "--config", fetchConfig(t, fetch), "--data", dir, "--base-url", ts.URL, "--force")
	if code != 1 || !strings.Contains(stdout+stderr, "the archive extracts to more than 10 times its size") {
		t.Errorf("a gzip bomb: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the folder in place was not kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "demo", "corpus", "zeros")); err == nil {
		t.Error("the bomb was extracted")
	}

	// Interrupted: the extraction stops, the folder in place stays.
	maxExtractBytes, extractRatio = savedMax, savedRatio
	archive := filepath.Join(t.TempDir(), "a.tar.gz")
	os.WriteFile(archive, bomb, 0o644)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f := &config.FetchFile{Archive: "tar.gz", Extract: "corpus"}
	if _, err := extract(ctx, archive, f, filepath.Join(dir, "demo", "corpus")); !errors.Is(err, context.Canceled) {
		t.Errorf("extract after cancel: %v", err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the folder in place was not kept after an interrupt: %v", err)
	}
}

// TestFetchTriesAgain: a server that answers 503 (with Retry-After) or
// 429 for a moment is asked again, up to three times in all; a 404 is
// not. fetch gave up at the first answer.
func TestFetchTriesAgain(t *testing.T) {
	savedBackoff := fetchBackoff
	defer func() { fetchBackoff = savedBackoff }()
	fetchBackoff = time.Millisecond
	data := []byte(`{"x":1}` + "\n")
	for _, tc := range []struct {
		name     string
		failures int
		status   int
		code     int
		requests int64
	}{
		{"503 twice, then the file", 2, http.StatusServiceUnavailable, 0, 3},
		{"429 three times", 3, http.StatusTooManyRequests, 1, 3},
		{"404 is not asked again", 1, http.StatusNotFound, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int64
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if requests.Add(1) <= int64(tc.failures) {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(tc.status)
					return
				}
				w.Write(data)
			}))
			defer ts.Close()
			fetch := fmt.Sprintf("      - {url: https://example.org/rel/a.jsonl, to: demo/a.jsonl, sha256: %s}", sha(data))
			code, stdout, stderr := agora(t, "fetch", "--config", fetchConfig(t, fetch), "--data", t.TempDir(), "--base-url", ts.URL)
			if code != tc.code || requests.Load() != tc.requests {
				t.Errorf("exit %d (want %d), %d requests (want %d):\n%s%s", code, tc.code, requests.Load(), tc.requests, stdout, stderr)
			}
		})
	}
}

func TestFetchCutShortSaysWhatComesNext(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte(`{"x":1}` + "\n"))
	}))
	defer ts.Close()
	for _, tt := range []struct{ fetch, want string }{
		{"      - {url: https://example.org/a.jsonl, to: demo/a.jsonl, sha256: " + strings.Repeat("0", 64) + "}", "run fetch again to resume"},
		{"      - {url: https://example.org/a.jsonl, to: demo/a.jsonl}", "with no published checksum to verify a resumed file, it starts over"},
	} {
		code, stdout, stderr := agora(t, "fetch", "--config", fetchConfig(t, tt.fetch), "--data", t.TempDir(), "--base-url", ts.URL)
		if code != 1 || !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("exit %d, output lacks %q:\n%s%s", code, tt.want, stdout, stderr)
		}
	}
}

// TestFetchAsksWhetherAFileChanged: a file with no published checksum,
// in place from an earlier fetch, is fetched again when the server says
// it changed (ETag, or Last-Modified for the archive) and kept when it
// says it did not; it used to be kept for good, so that a nightly fetch
// never saw a new upstream release.
func TestFetchAsksWhetherAFileChanged(t *testing.T) {
	var mu sync.Mutex
	content, etag := []byte(`{"x":1}`+"\n"), `"v1"`
	archive, modified := tarGz(t, map[string]string{"corpus/g1": "h\n1\n"}), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	bodies := 0 // responses with a body
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		rec := httptest.NewRecorder()
		switch r.URL.Path {
		case "/a.jsonl":
			rec.Header().Set("ETag", etag)
			http.ServeContent(rec, r, "", time.Time{}, bytes.NewReader(content))
		case "/corpus.tar.gz":
			http.ServeContent(rec, r, "", modified, bytes.NewReader(archive))
		default:
			http.NotFound(w, r)
			return
		}
		if rec.Code == http.StatusOK {
			bodies++
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer ts.Close()
	cfg := fetchConfig(t, "      - {url: https://example.org/a.jsonl, to: demo/a.jsonl}\n      - {url: https://example.org/corpus.tar.gz, archive: tar.gz, extract: corpus, to: demo/corpus}")
	dir := t.TempDir()
	fetch := func(want ...string) {
		t.Helper()
		code, stdout, stderr := agora(t, "fetch", "--config", cfg, "--data", dir, "--base-url", ts.URL)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stdout, w) {
				t.Errorf("output lacks %q:\n%s", w, stdout)
			}
		}
	}
	fetch("downloaded demo/a.jsonl", "downloaded demo/corpus")
	fetch("demo/a.jsonl is in place, and the server says it has not changed", "demo/corpus is in place, and the server says it has not changed")
	mu.Lock()
	if bodies != 2 {
		t.Errorf("%d downloads for two files fetched once", bodies)
	}
	content, etag = []byte(`{"x":2}`+"\n"), `"v2"`
	archive, modified = tarGz(t, map[string]string{"corpus/g1": "h\n2\n"}), modified.Add(time.Hour)
	mu.Unlock()
	fetch("downloaded (changed upstream) demo/a.jsonl", "downloaded (changed upstream) demo/corpus")
	for p, want := range map[string]string{"demo/a.jsonl": `{"x":2}` + "\n", "demo/corpus/g1": "h\n2\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", p, b, err, want)
		}
	}
	// The records stay out of the input folders.
	if entries, _ := os.ReadDir(filepath.Join(dir, "demo")); len(entries) != 2 {
		t.Errorf("demo/ holds %d entries, want a.jsonl and corpus", len(entries))
	}
	// A file changed by hand since it was fetched is not what the
	// server's validators name: kept, and said so.
	os.WriteFile(filepath.Join(dir, "demo", "a.jsonl"), []byte(`{"x":3}`+"\n"), 0o644)
	fetch("demo/a.jsonl is in place, changed since it was fetched")
	os.WriteFile(filepath.Join(dir, "demo", "a.jsonl"), []byte(`{"x":2}`+"\n"), 0o644)
	// A server that cannot be asked: the copies in place are kept, and
	// fetch succeeds (an outage upstream used to stop a nightly run).
	ts.Close()
	fetch("demo/corpus is in place; whether it changed upstream is not known")
}

// TestFetchSeesAnArchiveCutByHand: a file removed from a folder extracted
// from an archive is seen on the next fetch (it was "in place" for any
// non-empty folder), and the archive is fetched and extracted again,
// pinned or not (an unpinned one was kept as it was, and run converted
// the folder cut short).
func TestFetchSeesAnArchiveCutByHand(t *testing.T) {
	archive := tarGz(t, map[string]string{"corpus/g1": "h\n1\n", "corpus/g2": "h\n2\n"})
	ts := httptest.NewServer(&fetchServer{files: map[string][]byte{"/corpus.tar.gz": archive}})
	defer ts.Close()
	for _, tt := range []struct {
		name, sum, want string
		restored        bool
	}{
		{"pinned", ", sha256: " + sha(archive), "downloaded (its files changed since it was extracted) demo/corpus", true},
		{"not pinned", "", "downloaded (its files changed since it was extracted) demo/corpus", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fetchConfig(t, "      - {url: https://example.org/corpus.tar.gz, archive: tar.gz, extract: corpus, to: demo/corpus"+tt.sum+"}")
			dir := t.TempDir()
			fetch := func() string { return fetchOK(t, cfg, dir, ts.URL) }
			fetch()
			if out := fetch(); !strings.Contains(out, "demo/corpus is in place") {
				t.Errorf("an untouched folder: %s", out)
			}
			os.Remove(filepath.Join(dir, "demo", "corpus", "g2"))
			if out := fetch(); !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "demo", "corpus", "g2")); (err == nil) != tt.restored {
				t.Errorf("g2 restored: %v, want %v", err == nil, tt.restored)
			}
		})
	}
}

// TestFetchMendsAKilledExtraction: a fetch killed between the two renames
// of swapIn left the old folder aside and none in place, and one killed
// while removing the old folder left it as the extraction folder; the
// next fetch puts the old folder back (and finds it in place) and removes
// the leftover. swapIn itself leaves the new folder in place, nothing
// beside it.
func TestFetchMendsAKilledExtraction(t *testing.T) {
	archive := tarGz(t, map[string]string{"corpus/g1": "h\n1\n", "corpus/g2": "h\n2\n"})
	ts := httptest.NewServer(&fetchServer{files: map[string][]byte{"/corpus.tar.gz": archive}})
	defer ts.Close()
	cfg := fetchConfig(t, "      - {url: https://example.org/corpus.tar.gz, archive: tar.gz, extract: corpus, to: demo/corpus, sha256: "+sha(archive)+"}")
	dir := t.TempDir()
	dest := filepath.Join(dir, "demo", "corpus")
	fetch := func() string { return fetchOK(t, cfg, dir, ts.URL) }
	fetch()
	if err := os.Rename(dest, dest+".old"); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dest+".extracting", 0o755)
	os.WriteFile(filepath.Join(dest+".extracting", "g1"), []byte("half"), 0o644)
	if out := fetch(); !strings.Contains(out, "demo/corpus is in place") {
		t.Errorf("the old folder is not put back: %s", out)
	}
	for _, p := range []string{dest + ".old", dest + ".extracting"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "g2")); string(b) != "h\n2\n" {
		t.Errorf("g2 = %q", b)
	}

	stage := filepath.Join(dir, "new")
	os.MkdirAll(stage, 0o755)
	os.WriteFile(filepath.Join(stage, "g3"), []byte("3"), 0o644)
	if err := swapIn(stage, dest); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dest)
	if len(entries) != 1 || entries[0].Name() != "g3" {
		t.Errorf("after swapIn dest holds %v", entries)
	}
	left, _ := os.ReadDir(filepath.Dir(dest))
	if len(left) != 1 {
		t.Errorf("beside dest: %v", left)
	}
	if _, err := os.Stat(stage); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stage left: %v", err)
	}
}

// TestFetchGivesUpOnAStalledBody: a server that sends part of a body and
// then nothing is given up on after the idle time, with a message that
// says so; the run waited for ever.
func TestFetchGivesUpOnAStalledBody(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(http.StatusOK)
		w.Write(bytes.Repeat([]byte("x"), 1000))
		w.(http.Flusher).Flush()
		select { // without the idle timeout, the test fails after 20 s rather than hangs
		case <-release:
		case <-time.After(20 * time.Second):
		}
	}))
	defer ts.Close()
	defer close(release)
	p := fetchConfig(t, "      - {url: https://example.org/a.jsonl, to: demo/a.jsonl}")
	cfg, err := loadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	start := time.Now()
	err = fetchAll(t.Context(), cfg, []string{"demo"}, fetchOptions{Data: t.TempDir(), BaseURL: ts.URL, Idle: 200 * time.Millisecond}, &out)
	if err == nil || !strings.Contains(err.Error(), "nothing received for 200ms: the server stopped sending") || !strings.Contains(err.Error(), "after 1000 bytes") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("gave up after %s", d)
	}
}

// TestFetchOneAtATime: a second fetch into the same data root while one
// runs stops at once, saying so; two shared their .part and extraction
// folders.
func TestFetchOneAtATime(t *testing.T) {
	dir := t.TempDir()
	lock, err := sinks.AcquireLock(filepath.Join(dir, ".agora-fetch"), "fetch")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	cfg := fetchConfig(t, "      - {url: https://example.org/a.jsonl, to: demo/a.jsonl}")
	code, _, stderr := agora(t, "fetch", "--config", cfg, "--data", dir, "--base-url", "http://127.0.0.1:9")
	if code == 0 || !strings.Contains(stderr, "another fetch into "+dir+" is running") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// fetchOK runs agora fetch with cfg into dir from base, and returns its
// output; a failure fails the test.
func fetchOK(t *testing.T, cfg, dir, base string) string {
	t.Helper()
	code, stdout, stderr := agora(t, "fetch", "--config", cfg, "--data", dir, "--base-url", base)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	return stdout
}
