package config

import (
	"strings"
	"testing"
)

// TestDeriveKeysThroughMerges: the keys a derive item names are found
// through YAML merges too, of a table (<<: *t1) and of an item
// (<<: [*a, *b]), so a key set to its zero is told from one left out
// wherever it was written.
func TestDeriveKeysThroughMerges(t *testing.T) {
	doc := `version: 1
datasets:
  d:
    inputs:
      in: {path: d/in.jsonl, format: jsonl, columns: [{name: id, type: string}]}
    tables:
      t1: &t1
        input: in
        steps:
          - derive:
              - {name: n, fn: n_words, args: [id], min: 0}
      t2: {<<: *t1}
      t3:
        input: in
        steps:
          - derive:
              - {<<: [{name: n, fn: n_words}, {args: [id], grouped: false}]}
`
	cfg, err := Load("f.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]string{"t1": "name fn args min", "t2": "name fn args min", "t3": "name fn args grouped"} {
		if got := strings.Join(cfg.Datasets["d"].Tables[table].Steps[0].Derive[0].Keys(), " "); got != want {
			t.Errorf("%s: keys %q, want %q", table, got, want)
		}
	}
}
