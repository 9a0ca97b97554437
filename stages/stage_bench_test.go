package stages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// Per-stage benchmarks not covered by bench_test.go: the TSV and Parquet
// decoders, and unpivot, explode, validate and derive one at a time. Each
// reports MB/s (of the input file for decoders, of the Arrow input batches
// for steps) and rows/s (input rows).

var benchDims = []string{"correctness_topical", "coherence_logical", "coherence_stylistic", "coverage_broad", "coverage_deep", "consistency_internal", "quality_overall"}

// decodeBatches runs a source's Chunks and Decode and returns the batches.
func decodeBatches(b *testing.B, s pipeline.Source) []arrow.RecordBatch {
	b.Helper()
	var out []arrow.RecordBatch
	err := s.Chunks(context.Background(), func(c pipeline.Chunk) error {
		bt, err := s.Decode(context.Background(), c, &pipeline.Rejects{})
		if err != nil {
			return err
		}
		out = append(out, bt)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, x := range bs {
		x.Release()
	}
}

func rowsOf(bs []arrow.RecordBatch) int {
	n := 0
	for _, x := range bs {
		n += int(x.NumRows())
	}
	return n
}

// arrowSize is the Arrow buffer bytes of the batches.
func arrowSize(bs []arrow.RecordBatch) int64 {
	var n int64
	for _, x := range bs {
		for _, c := range x.Columns() {
			n += int64(c.Data().SizeInBytes())
		}
	}
	return n
}

func reportRate(b *testing.B, bytes int64, rows int) {
	b.ReportMetric(float64(bytes)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// deliLike writes DeliData-shaped group files (a header and ~35 lines
// each) and returns the folder and its size.
func deliLike(b *testing.B, groups int) (string, int64) {
	b.Helper()
	dir := b.TempDir()
	var total int64
	hdr := "group_id\tmessage_id\tmessage_type\torigin\toriginal_text\tclean_text\tannotation_type\tannotation_target\tannotation_additional\tteam_performance\tperformance_change\tsol_tracker_message\tsol_tracker_all\n"
	for g := 0; g < groups; g++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", g, g)
		var sb strings.Builder
		sb.WriteString(hdr)
		fmt.Fprintf(&sb, "%s\t-1\tINITIAL\tSYSTEM\tSYSTEM,Duck,Cat&&5,I,Y,4\t\t\t\t\t0.5\t0.0\t\t{\"Duck\": [\"I\", \"4\"]}\n", id)
		for i := 1; i < 35; i++ {
			fmt.Fprintf(&sb, "%s\t%08x-1111-4000-8000-%012x\tMESSAGE\tDuck\tI think it''s %d and I, since the rule says so\tI think it 's <CARD> and <CARD> , since the rule says so\tProbing\tReasoning\t0\t0.5\t0.0\tI,4\t{\"Duck\": [\"I\", \"4\"], \"Cat\": [\"5\"]}\n", id, g, i, i)
		}
		p := filepath.Join(dir, id)
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		total += int64(sb.Len())
	}
	return dir, total
}

func deliColumns() []TSVColumn {
	var cols []TSVColumn
	for _, n := range []string{"group_id", "message_id", "message_type", "origin", "original_text", "clean_text", "annotation_type", "annotation_target", "annotation_additional"} {
		cols = append(cols, TSVColumn{Name: n, Type: arrow.BinaryTypes.String})
	}
	cols = append(cols, TSVColumn{Name: "team_performance", Type: arrow.PrimitiveTypes.Float64}, TSVColumn{Name: "performance_change", Type: arrow.PrimitiveTypes.Float64})
	cols = append(cols, TSVColumn{Name: "sol_tracker_message", Type: arrow.BinaryTypes.String}, TSVColumn{Name: "sol_tracker_all", Type: arrow.BinaryTypes.String})
	return cols
}

// BenchmarkDecodeTSV measures the TSV folder decoder on DeliData-shaped
// files, in MB/s of TSV and rows/s.
func BenchmarkDecodeTSV(b *testing.B) {
	dir, size := deliLike(b, 400)
	b.ResetTimer()
	rows := 0
	for i := 0; i < b.N; i++ {
		s := &TSVFolder{Path: dir, Name: "delidata", Columns: deliColumns(), BatchRows: 1024, Mem: memory.DefaultAllocator}
		bs := decodeBatches(b, s)
		rows = rowsOf(bs)
		releaseBatches(bs)
	}
	reportRate(b, size, rows)
}

// ratingsBatches decodes the ratings-shaped JSON Lines of bench_test.go.
func ratingsBatches(b *testing.B, n int) (*arrow.Schema, []arrow.RecordBatch) {
	b.Helper()
	p, _ := ratingsLike(b, n)
	s := &JSONLines{Path: p, Name: "r", Gzip: true, Columns: ratingsColumns(b), BatchRows: 1024, Mem: memory.DefaultAllocator}
	bs := decodeBatches(b, s)
	schema, err := s.Schema()
	if err != nil {
		b.Fatal(err)
	}
	return schema, bs
}

// BenchmarkDecodeParquet measures the Parquet source on a ratings-shaped
// file (46 columns, lists of 5, zstd): MB/s of decoded Arrow data (the
// file is small, compressed), MB/s of file (fileMB/s) and rows/s.
func BenchmarkDecodeParquet(b *testing.B) {
	schema, bs := ratingsBatches(b, 5000)
	p := filepath.Join(b.TempDir(), "ratings.parquet")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(1), parquet.WithMaxRowGroupLength(2048))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		b.Fatal(err)
	}
	for _, x := range bs {
		if err := w.Write(x); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	releaseBatches(bs)
	info, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	var cols []ParquetColumn
	for _, fd := range schema.Fields() {
		if fd.Name != pipeline.LineColumn { // the source adds its own
			cols = append(cols, ParquetColumn{Name: fd.Name, Type: fd.Type})
		}
	}
	b.ResetTimer()
	rows := 0
	var decoded int64
	for i := 0; i < b.N; i++ {
		s := &ParquetFile{Path: p, Name: "ratings.parquet", Columns: cols, BatchRows: 1024, Mem: memory.DefaultAllocator}
		out := decodeBatches(b, s)
		rows, decoded = rowsOf(out), arrowSize(out)
		releaseBatches(out)
	}
	reportRate(b, decoded, rows)
	b.ReportMetric(float64(info.Size())*float64(b.N)/1e6/b.Elapsed().Seconds(), "fileMB/s")
}

// processor is a step's Process method.
type processor interface {
	Process(context.Context, arrow.RecordBatch, *pipeline.Rejects) (arrow.RecordBatch, error)
}

// benchStep times one step over prepared input batches.
func benchStep(b *testing.B, step processor, in []arrow.RecordBatch) {
	b.Helper()
	benchFreshStep(b, func() processor { return step }, in)
}

// benchFreshStep times a step over prepared input batches, with a step
// from next for every pass (a step that keeps state, such as a key set).
func benchFreshStep(b *testing.B, next func() processor, in []arrow.RecordBatch) {
	b.Helper()
	size, rows := arrowSize(in), rowsOf(in)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step := next()
		for _, x := range in {
			y, err := step.Process(context.Background(), x, &pipeline.Rejects{})
			if err != nil {
				b.Fatal(err)
			}
			y.Release()
		}
	}
	reportRate(b, size, rows)
}

// unpivoted returns the ratings batches after the ratings table's unpivot
// and rename (the input of its derive and validate steps).
func unpivoted(b *testing.B) (*arrow.Schema, []arrow.RecordBatch, *Unpivot, []arrow.RecordBatch) {
	b.Helper()
	schema, bs := ratingsBatches(b, 5000)
	u, err := NewUnpivot(memory.DefaultAllocator, schema, "dimension", "{dimension}_{field}", benchDims, []string{"vote", "spam_probability", "p_a", "p_n", "p_b", "gold"}, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	var out []arrow.RecordBatch
	for _, x := range bs {
		y, err := u.Process(context.Background(), x, &pipeline.Rejects{})
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, y)
	}
	return u.Schema(), out, u, bs
}

// BenchmarkUnpivot measures the ratings unpivot (46 wide columns to 7 rows
// per record), in MB/s of Arrow input and input rows/s.
func BenchmarkUnpivot(b *testing.B) {
	_, long, u, wide := unpivoted(b)
	releaseBatches(long)
	benchStep(b, u, wide)
	releaseBatches(wide)
}

// BenchmarkExplode measures the votes explode (aligned lists of 5 to one
// row per worker) on unpivoted ratings.
func BenchmarkExplode(b *testing.B) {
	schema, long, _, wide := unpivoted(b)
	releaseBatches(wide)
	e, err := NewExplode(memory.DefaultAllocator, schema, []string{"worker", "vote", "spam_probability"}, nil, "worker_index", nil, "")
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, e, long)
	releaseBatches(long)
}

// BenchmarkValidate measures the ratings table's validate rules (without
// unique, which holds state across batches) on unpivoted ratings.
func BenchmarkValidate(b *testing.B) {
	schema, long, _, wide := unpivoted(b)
	releaseBatches(wide)
	zero, one := 0.0, 1.0
	v, err := NewValidate(memory.DefaultAllocator, schema, []config.Rule{
		{Required: []string{"submission_id", "query_id", "response_a", "response_b", "worker", "vote", "spam_probability", "p_a", "p_b", "gold"}},
		{ListLength: &config.ListLengthRule{Column: "worker", Length: 5}},
		{EqualLengths: []string{"worker", "vote", "spam_probability"}},
		{Enum: &config.EnumRule{Column: "vote", Values: []string{"A", "B", "N"}}},
		{Enum: &config.EnumRule{Column: "gold", Values: []string{"a", "b", "n"}}},
		{Range: &config.RangeRule{Column: "spam_probability", Min: &zero, Max: &one}},
		{Range: &config.RangeRule{Column: "p_a", Min: &zero, Max: &one}},
		{SumsTo: &config.SumRule{Columns: []string{"p_a", "p_n", "p_b"}, Value: 1, Tolerance: 1e-6}},
	})
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, v, long)
	releaseBatches(long)
}

// BenchmarkDerive measures the ratings table's derivations (lower on a
// list and a string, count_equal ×3, majority, pair_key).
func BenchmarkDerive(b *testing.B) {
	schema, long, _, wide := unpivoted(b)
	releaseBatches(wide)
	d, err := NewDerive(memory.DefaultAllocator, schema, []config.Derivation{
		{Name: "vote", Fn: "lower", Args: []string{"vote"}, Replace: true},
		{Name: "gold", Fn: "lower", Args: []string{"gold"}, Replace: true},
		{Name: "n_votes_a", Fn: "count_equal", Args: []string{"vote"}, Value: "a"},
		{Name: "n_votes_b", Fn: "count_equal", Args: []string{"vote"}, Value: "b"},
		{Name: "n_votes_n", Fn: "count_equal", Args: []string{"vote"}, Value: "n"},
		{Name: "has_majority", Fn: "majority", Args: []string{"vote"}, Min: 3},
		{Name: "pair_key", Fn: "pair_key", Args: []string{"response_a", "response_b"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, d, long)
	releaseBatches(long)
}

// BenchmarkValidateUnique measures the unique rule alone, on the ratings
// table's key (response_a, response_b, dimension), with a fresh key set
// every pass, in MB/s of Arrow input and rows/s.
func BenchmarkValidateUnique(b *testing.B) {
	schema, long, _, wide := unpivoted(b)
	releaseBatches(wide)
	var v *Validate
	benchFreshStep(b, func() processor {
		if v != nil {
			v.Close()
		}
		var err error
		if v, err = NewValidate(memory.DefaultAllocator, schema, []config.Rule{{Unique: []string{"response_a", "response_b", "dimension"}}}); err != nil {
			b.Fatal(err)
		}
		return v
	}, long)
	v.Close()
	releaseBatches(long)
}

// BenchmarkAggregate measures an aggregate shaped like Habermas
// round_outcomes (first, union of a list, count; 4 rows a group, groups
// contiguous) over 200,000 rows and 50,000 groups, with every group in
// memory and with 4,096 in memory and the rest in partition files, in
// rows/s; the ratio of the two is the cost of spilling.
func BenchmarkAggregate(b *testing.B) {
	mem := memory.DefaultAllocator
	s := arrow.NewSchema([]arrow.Field{
		{Name: "round", Type: arrow.BinaryTypes.String}, {Name: "iter", Type: arrow.PrimitiveTypes.Int64},
		{Name: "who", Type: arrow.BinaryTypes.String}, {Name: "cands", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	var batches []arrow.RecordBatch
	rb := array.NewRecordBuilder(mem, s)
	for i := range 200_000 {
		g := i / 4
		rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("%08x-0000-4000-8000-%012x", g/5, g))
		rb.Field(1).(*array.Int64Builder).Append(int64(g % 5))
		rb.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("participant-%06d", i%997))
		lb := rb.Field(3).(*array.ListBuilder)
		lb.Append(true)
		for c := range 4 {
			lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("candidate-%08x", g*4+c))
		}
		rb.Field(4).(*array.Int64Builder).Append(int64(i + 1))
		if rb.Field(0).Len() == 1024 {
			batches = append(batches, rb.NewRecordBatch())
		}
	}
	batches = append(batches, rb.NewRecordBatch())
	rb.Release()
	defer releaseBatches(batches)
	cols := []config.AggColumn{
		{Name: "who", Fn: "union", Args: []string{"who"}},
		{Name: "cands", Fn: "union", Args: []string{"cands"}},
		{Name: "first", Fn: "first", Args: []string{"who"}},
		{Name: "n", Fn: "count"},
	}
	// The rows of each (round, iter) come together, four at a time, so
	// the same input serves the grouped aggregate; max_groups_held is
	// the most groups in memory after a batch (50,000 in all).
	for _, tc := range []struct {
		name      string
		memGroups int
		cfg       config.Aggregate
	}{
		{"memGroups=1048576", 1 << 20, config.Aggregate{By: []string{"round", "iter"}, Sort: true, Columns: cols}},
		{"memGroups=4096", 4096, config.Aggregate{By: []string{"round", "iter"}, Sort: true, Columns: cols}},
		{"first-seen", 1 << 20, config.Aggregate{By: []string{"round", "iter"}, Columns: cols}},
		{"grouped", 1 << 20, config.Aggregate{By: []string{"round", "iter"}, Columns: cols, Grouped: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			aggMemGroups(b, tc.memGroups)
			held := 0
			for b.Loop() {
				a, err := NewAggregate(mem, s, &tc.cfg)
				if err != nil {
					b.Fatal(err)
				}
				for _, x := range batches {
					out, err := a.Process(context.Background(), x, nil)
					if err != nil {
						b.Fatal(err)
					}
					if out != nil {
						out.Release()
					}
					held = max(held, a.ngroups)
				}
				err = a.FlushTo(context.Background(), func(x arrow.RecordBatch, _ *pipeline.Rejects) error { x.Release(); return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(held), "max_groups_held")
			b.ReportMetric(float64(rowsOf(batches))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
