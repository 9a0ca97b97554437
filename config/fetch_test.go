package config

import (
	"errors"
	"strings"
	"testing"
)

func TestFetchTo(t *testing.T) {
	for _, tc := range []struct {
		to string
		ok bool
	}{
		{"crowdrag25/ratings.jsonl.gz", true},
		{"delidata", true},
		{"a/../b", true},
		{".", false},
		{"x/..", false},
		{"./", false},
		{"", false},
		{"../up", false},
		{"/abs", false},
	} {
		t.Run(tc.to, func(t *testing.T) {
			doc := `version: 1
datasets:
  d:
    fetch:
      - {url: "https://example.org/a.tar.gz", archive: tar.gz, to: "` + tc.to + `"}
    inputs:
      in: {path: d/in.jsonl, format: jsonl, columns: [{name: id, type: string}]}
    tables:
      t: {input: in}
`
			_, err := Load("f.yaml", []byte(doc))
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && (err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "datasets.d.fetch[0].to")) {
				t.Fatalf("err = %v, want fetch[0].to refused", err)
			}
		})
	}
}
