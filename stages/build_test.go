package stages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/config"
)

// TestBuildRefusesHiddenColumns: a column whose name starts with _ would
// be left out of the tables without a word (agora's own columns are
// named so): a step that makes one, or an input column of that name no
// step renames, stops the build naming where.
func TestBuildRefusesHiddenColumns(t *testing.T) {
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "d"), 0o755)
	os.WriteFile(filepath.Join(data, "d", "in.jsonl"), []byte(`{"id":"a","_x":1}`+"\n"), 0o644)
	for _, tc := range []struct {
		name, steps, want string
	}{
		{"rename to _", `[{rename: {id: _id}}]`, `datasets.d.tables.t.steps[0]: the step makes column "_id"`},
		{"rename to agora's own row number", `[{drop: [_x]}, {rename: {id: __agora_row}}]`, `datasets.d.tables.t.steps[1]: the step makes column "__agora_row"`},
		{"aggregate column", `[{aggregate: {by: [id], columns: [{name: _n, fn: count}]}}]`, `datasets.d.tables.t.steps[0]: the step makes column "_n"`},
		{"input column kept", `[]`, `datasets.d.tables.t: column "_x" starts with _`},
		{"input column renamed", `[{rename: {_x: x}}]`, ``},
		{"input column dropped", `[{drop: [_x]}]`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := `version: 1
datasets:
  d:
    inputs:
      in: {path: d/in.jsonl, format: jsonl, columns: [{name: id, type: string}, {name: _x, type: int64}]}
    tables:
      t:
        input: in
        steps: ` + tc.steps + "\n"
			wantBuild(t, doc, data, tc.want)
		})
	}
}

// TestCountEqualEmptyValue: value: "" written in the file counts empty
// strings, while count_equal without a value is refused (it counted
// empty strings without saying so).
func TestCountEqualEmptyValue(t *testing.T) {
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "d"), 0o755)
	os.WriteFile(filepath.Join(data, "d", "in.jsonl"), []byte(`{"v":["","a"]}`+"\n"), 0o644)
	for _, tc := range []struct{ name, item, want string }{
		{"empty value given", `{name: n, fn: count_equal, args: [v], value: ""}`, ""},
		{"value left out", `{name: n, fn: count_equal, args: [v]}`, "value must be the value to count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := `version: 1
datasets:
  d:
    inputs:
      in: {path: d/in.jsonl, format: jsonl, columns: [{name: v, type: "list<string>"}]}
    tables:
      t:
        input: in
        steps: [{derive: [` + tc.item + `]}]
`
			wantBuild(t, doc, data, tc.want)
		})
	}
}

// TestBuildRefusesPartitionTypes: a partition column whose type cannot
// name a folder stops the build (and so check and schema), as it stops
// the sink at run time; they passed it.
func TestBuildRefusesPartitionTypes(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct{ col, want string }{
		{"labels", `datasets.d.tables.t.partition_by: column "labels" is list<string>; partition on a string, integer or boolean`},
		{"w", `datasets.d.tables.t.partition_by: column "w" is float64`},
		{"id", ""},
	} {
		t.Run(tc.col, func(t *testing.T) {
			doc := `version: 1
datasets:
  d:
    inputs:
      in: {path: d/in.jsonl, format: jsonl, columns: [{name: id, type: string}, {name: labels, type: "list<string>"}, {name: w, type: float64}]}
    tables:
      t:
        input: in
        partition_by: [` + tc.col + `]
`
			wantBuild(t, doc, data, tc.want)
		})
	}
}

// wantBuild loads the config doc and builds its table d.t over data: it
// must be refused with an error containing want, or, for want "", be
// built (its stages are then closed).
func wantBuild(t *testing.T, doc, data, want string) {
	t.Helper()
	cfg, err := config.Load("p.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := BuildTable(cfg, "d", "t", data, nil)
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		for _, s := range b.Stages {
			if c, ok := s.(interface{ Close() }); ok {
				c.Close()
			}
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
