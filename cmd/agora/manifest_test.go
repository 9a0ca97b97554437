package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/sinks"
)

// manifestFiles makes n file entries, some with names JSON escapes.
func manifestFiles(n int) []FileDigest {
	odd := []string{`quote"d`, `back\slash`, "<html>&amp;", "ünïcödé ✓", "tab\there", "ctl\x01"}
	files := make([]FileDigest, n)
	for i := range files {
		files[i] = FileDigest{Name: fmt.Sprintf("%08d-%s", i, odd[i%len(odd)]), Bytes: int64(i * 37), SHA256: strings.Repeat(fmt.Sprintf("%x", i%16), 64)}
	}
	return files
}

// TestWriteManifestMatchesEncoder: the streamed manifest is byte for byte
// what encoding/json makes of the whole value, whatever the inputs.
func TestWriteManifestMatchesEncoder(t *testing.T) {
	tables := []*TableResult{{Name: "t", Input: "in", Schema: []ColumnInfo{{Name: "a", Type: "string"}}, Notes: []string{"<passed over> & more"}}}
	for _, tc := range []struct {
		name   string
		inputs []InputInfo
	}{
		{"no inputs", nil},
		{"a file input", []InputInfo{{ID: "in", Path: "d/in.jsonl", Bytes: 10, SHA256: "ab"}}},
		{"a folder of one file", []InputInfo{{ID: "in", Path: "d", Bytes: 1, SHA256: "cd", Files: manifestFiles(1)}}},
		{"folders and files", []InputInfo{
			{ID: "a", Path: "d/a", SHA256: "01", Files: manifestFiles(7)},
			{ID: "b", Path: "d/b.parquet", Bytes: 3, SHA256: "02"},
			{ID: "c", Path: `d/"c"`, SHA256: "03", Files: manifestFiles(300)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Manifest{Dataset: "d", Agora: "v", Libraries: map[string]string{"x": "1", "a": "2"}, ConfigSHA256: "ff", Inputs: tc.inputs, Tables: tables}
			var want, got bytes.Buffer
			if err := sinks.EncodeJSON(&want, m); err != nil {
				t.Fatal(err)
			}
			var before [][]FileDigest // copies, to see that the caller's lists are left alone
			for _, in := range m.Inputs {
				before = append(before, slices.Clone(in.Files))
			}
			if err := writeManifest(&got, m); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("streamed manifest differs:\n%s\nwant:\n%s", got.String(), want.String())
			}
			for i, in := range m.Inputs {
				if !slices.Equal(in.Files, before[i]) {
					t.Errorf("input %d's files changed: %v", i, in.Files)
				}
			}
		})
	}
}

// largestWrite records the largest single Write.
type largestWrite struct{ n, max int }

func (l *largestWrite) Write(p []byte) (int, error) {
	l.n += len(p)
	l.max = max(l.max, len(p))
	return len(p), nil
}

// TestWriteManifestStreams: a long file list is written entry by entry,
// not built whole first.
func TestWriteManifestStreams(t *testing.T) {
	m := Manifest{Dataset: "d", Inputs: []InputInfo{{ID: "in", Path: "d", Files: manifestFiles(50000)}}}
	var w largestWrite
	if err := writeManifest(&w, m); err != nil {
		t.Fatal(err)
	}
	if w.n < 50000*100 || w.max > 4096 {
		t.Errorf("%d bytes written, the largest piece %d bytes; want them written a file at a time", w.n, w.max)
	}
}

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 10000) // past one 64 KiB read
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := bytes.Clone(big)
	other[len(other)-1] = 'X'
	a, b := write("a", big), write("b", bytes.Clone(big))
	for _, tc := range []struct {
		name string
		x, y string
		want bool
	}{
		{"same", a, b, true},
		{"last byte differs", a, write("c", other), false},
		{"one a prefix of the other", a, write("d", big[:len(big)-1]), false},
		{"both empty", write("e", nil), write("f", nil), true},
		{"one missing", a, filepath.Join(dir, "none"), false},
	} {
		if got := sameFile(tc.x, tc.y); got != tc.want {
			t.Errorf("%s: sameFile = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFrictionlessType(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"string", "string"},
		{"int64", "integer"},
		{"int32", "integer"},
		{"float64", "number"},
		{"float32", "number"},
		{"decimal128(10, 2)", "number"},
		{"bool", "boolean"},
		{"timestamp", "datetime"},
		{"date", "date"},
		{"list<string>", "array"},
		{"struct<a:int64>", "object"},
		{"binary", "object"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := frictionlessType(tc.in); got != tc.want {
				t.Errorf("frictionlessType(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
