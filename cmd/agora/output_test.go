package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/mempool"
)

// TestInspectHeadAcrossFiles: the head of a folder whose rows span
// several files holds the values of every file, under the pooling
// allocator main installs as memory.DefaultAllocator (a poisoning one
// here, so that a row that kept a view of a released batch shows).
func TestInspectHeadAcrossFiles(t *testing.T) {
	out := runSamples(t, "--only", "crowdrag25")
	saved := memory.DefaultAllocator
	memory.DefaultAllocator = mempool.NewPoisoning(1<<30, 64)
	t.Cleanup(func() { memory.DefaultAllocator = saved })

	dir := filepath.Join(out, "crowdrag25", "votes")
	var want []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".parquet" {
			return err
		}
		tbl := readTable(t, p)
		defer tbl.Release()
		col := tbl.Column(int(tbl.Schema().FieldIndices("query_id")[0]))
		for _, c := range col.Data().Chunks() {
			s := c.(*array.String)
			for i := range s.Len() {
				want = append(want, s.Value(i))
			}
		}
		return nil
	})
	if len(want) < 1000 {
		t.Fatalf("%d rows: too few to span files", len(want))
	}
	code, stdout, stderr := agora(t, "inspect", dir, "--format", "json", "--head", "100000")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep InspectReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Head {
		s, _ := r["query_id"].(string)
		got = append(got, s)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		bad := 0
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				bad++
			}
		}
		t.Errorf("inspect's head holds %d query ids, the files %d; %d differ", len(got), len(want), bad)
	}
}

// failingWriter refuses every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestStdoutWriteErrorFails: a command whose output does not reach
// stdout fails, naming why, instead of exiting 0.
func TestStdoutWriteErrorFails(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"schema", "--config", "../../pipeline.yaml"}} {
		t.Run(args[0], func(t *testing.T) {
			var stderr bytes.Buffer
			code := execute(t.Context(), args, failingWriter{}, &stderr)
			if code != exitFailed || !strings.Contains(stderr.String(), "writing to stdout: no space left on device") {
				t.Errorf("exit %d, stderr %q", code, stderr.String())
			}
		})
	}
}

// TestCardKeepsTableRows: a column description over several lines (a
// YAML block scalar) or with a pipe stays in its one table row of the
// dataset card.
func TestCardKeepsTableRows(t *testing.T) {
	tables := []*TableResult{{
		Name:    "t",
		Schema:  []ColumnInfo{{Name: "p", Type: "float64"}, {Name: "q", Type: "string"}},
		Columns: map[string]string{"p": "A probability,\nestimated per\nworker.\n", "q": "a | b"},
	}}
	card := datasetCard("d", &config.Dataset{}, tables)
	for _, want := range []string{"| `p` | float64 | A probability, estimated per worker. |\n", "| `q` | string | a \\| b |\n"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks the row %q:\n%s", want, card)
		}
	}
}

// readTable reads the Parquet file p whole, with Go's allocator.
func readTable(t *testing.T, p string) arrow.Table {
	t.Helper()
	rdr, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
