package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite README.md's config reference")

// README.md's config reference is the generated one.
func TestReadmeConfigReference(t *testing.T) {
	const readme = "../../README.md"
	want, err := Generate("..")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := updateFile(readme, ".."); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Section(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("README.md's config reference is out of date; run `go run ./config/gendoc` (or go test ./config/gendoc -update)")
	}
}

// The reference covers every key of every config struct, with a meaning.
func TestGenerateCoversEveryKey(t *testing.T) {
	doc, err := Generate("..")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, want string }{
		{"top level default", "| `batch_rows` | integer | `1024` |"},
		{"writer default", "| `compression` | string | `zstd` |"},
		{"input default", "| `on_bad_line` | string | `fail` |"},
		{"default the stages apply", "| `on_fail` | string | `reject` |"},
		{"nested path", "`datasets.<id>.tables.<table>.steps[]`"},
		{"fetch", "FetchFile — `datasets.<id>.fetch[]`"},
		{"struct link", "[Writer](#config-writer)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(doc, tt.want) {
				t.Errorf("reference lacks %q:\n%s", tt.want, doc)
			}
		})
	}
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `") && strings.HasSuffix(line, "|  |") {
			t.Errorf("a key without a doc comment: %s", line)
		}
	}
}

func TestReplace(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            bool
	}{
		{"replaces", "a\n" + StartMarker + "\nold\n" + EndMarker + "\nb\n", "a\n" + StartMarker + "\nnew\n" + EndMarker + "\nb\n", false},
		{"no start", "a\n" + EndMarker, "", true},
		{"no end", StartMarker + "\nx", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Replace([]byte(tt.in), "new\n")
			if (err != nil) != tt.err || (!tt.err && string(got) != tt.want) {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
