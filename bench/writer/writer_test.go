package writer

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// rating is one row of agora's crowdrag25 ratings table (without the
// partition column), as parquet-go writes it: 3-level lists, zstd.
type rating struct {
	SubmissionID      string    `parquet:"submission_id"`
	QueryID           string    `parquet:"query_id"`
	ResponseA         string    `parquet:"response_a"`
	ResponseB         string    `parquet:"response_b"`
	Workers           []string  `parquet:"workers,list"`
	Votes             []string  `parquet:"votes,list"`
	SpamProbabilities []float64 `parquet:"spam_probabilities,list"`
	PA                float64   `parquet:"p_a"`
	PN                *float64  `parquet:"p_n,optional"`
	PB                float64   `parquet:"p_b"`
	Gold              string    `parquet:"gold"`
	NVotesA           int64     `parquet:"n_votes_a"`
	NVotesB           int64     `parquet:"n_votes_b"`
	NVotesN           int64     `parquet:"n_votes_n"`
	HasMajority       bool      `parquet:"has_majority"`
	PairKey           string    `parquet:"pair_key"`
}

// ratingPlain is rating with the strings PLAIN-encoded, as agora writes
// them (parquet-go's default for strings is DELTA_LENGTH_BYTE_ARRAY).
type ratingPlain struct {
	SubmissionID      string    `parquet:"submission_id,plain"`
	QueryID           string    `parquet:"query_id,plain"`
	ResponseA         string    `parquet:"response_a,plain"`
	ResponseB         string    `parquet:"response_b,plain"`
	Workers           []string  `parquet:"workers,list,plain"`
	Votes             []string  `parquet:"votes,list,plain"`
	SpamProbabilities []float64 `parquet:"spam_probabilities,list"`
	PA                float64   `parquet:"p_a"`
	PN                *float64  `parquet:"p_n,optional"`
	PB                float64   `parquet:"p_b"`
	Gold              string    `parquet:"gold,plain"`
	NVotesA           int64     `parquet:"n_votes_a"`
	NVotesB           int64     `parquet:"n_votes_b"`
	NVotesN           int64     `parquet:"n_votes_n"`
	HasMajority       bool      `parquet:"has_majority"`
	PairKey           string    `parquet:"pair_key,plain"`
}

// benchRows is the table size: three 64Ki-row row groups and a part.
const benchRows = 200_000

// rowGroupRows is agora's default row_group_rows.
const rowGroupRows = 65536

func uuid(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
}

// makeRows builds n deterministic ratings-shaped rows: about 600 pairs
// of 1,800 responses, 300 workers, values like the generated release.
func makeRows(n int) []rating {
	r := rand.New(rand.NewPCG(25, 2025))
	responses := make([]string, 1800)
	for i := range responses {
		responses[i] = uuid(r)
	}
	workers := make([]string, 300)
	for i := range workers {
		workers[i] = uuid(r)
	}
	labels := []string{"a", "b", "n"}
	rows := make([]rating, n)
	for i := range rows {
		a, b := responses[r.IntN(len(responses))], responses[r.IntN(len(responses))]
		x := rating{
			SubmissionID: uuid(r), QueryID: fmt.Sprintf("2024-%d", 100000+r.IntN(60000)),
			ResponseA: a, ResponseB: b, Gold: labels[r.IntN(3)],
		}
		counts := map[string]int64{}
		for k := 0; k < 5; k++ {
			v := labels[r.IntN(3)]
			counts[v]++
			x.Workers = append(x.Workers, workers[r.IntN(len(workers))])
			x.Votes = append(x.Votes, v)
			x.SpamProbabilities = append(x.SpamProbabilities, float64(r.IntN(1e10))/1e10)
		}
		x.PA = float64(r.IntN(1e10)) / 1e10
		x.PB = (1 - x.PA) / 2
		if i%7 != 6 { // quality_overall has no p_n
			pn := 1 - x.PA - x.PB
			x.PN = &pn
		}
		x.NVotesA, x.NVotesB, x.NVotesN = counts["a"], counts["b"], counts["n"]
		x.HasMajority = x.NVotesA >= 3 || x.NVotesB >= 3 || x.NVotesN >= 3
		if a <= b {
			x.PairKey = a + "|" + b
		} else {
			x.PairKey = b + "|" + a
		}
		rows[i] = x
	}
	return rows
}

// ratingsFields are the table's columns; agora writes every column
// nullable, parquet-go's struct makes them required (but p_n).
var ratingsFields = []arrow.Field{
	{Name: "submission_id", Type: arrow.BinaryTypes.String},
	{Name: "query_id", Type: arrow.BinaryTypes.String},
	{Name: "response_a", Type: arrow.BinaryTypes.String},
	{Name: "response_b", Type: arrow.BinaryTypes.String},
	{Name: "workers", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	{Name: "votes", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	{Name: "spam_probabilities", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	{Name: "p_a", Type: arrow.PrimitiveTypes.Float64},
	{Name: "p_n", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "p_b", Type: arrow.PrimitiveTypes.Float64},
	{Name: "gold", Type: arrow.BinaryTypes.String},
	{Name: "n_votes_a", Type: arrow.PrimitiveTypes.Int64},
	{Name: "n_votes_b", Type: arrow.PrimitiveTypes.Int64},
	{Name: "n_votes_n", Type: arrow.PrimitiveTypes.Int64},
	{Name: "has_majority", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "pair_key", Type: arrow.BinaryTypes.String},
}

// schemaOf is the Arrow schema with every column nullable (agora's) or
// required but p_n (parquet-go's struct).
func schemaOf(nullable bool) *arrow.Schema {
	fs := append([]arrow.Field(nil), ratingsFields...)
	for i := range fs {
		fs[i].Nullable = nullable || fs[i].Name == "p_n"
		if !nullable {
			switch fs[i].Name {
			case "workers", "votes":
				fs[i].Type = arrow.ListOfNonNullable(arrow.BinaryTypes.String)
			case "spam_probabilities":
				fs[i].Type = arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64)
			}
		}
	}
	return arrow.NewSchema(fs, nil)
}

// toArrow builds the same rows as Arrow record batches of 1,024 rows
// (agora's batch_rows), the form agora's sink receives.
func toArrow(rows []rating, schema *arrow.Schema) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	strs := func(i int, v string) { bld.Field(i).(*array.StringBuilder).Append(v) }
	list := func(i int, vs []string) {
		lb := bld.Field(i).(*array.ListBuilder)
		lb.Append(true)
		for _, v := range vs {
			lb.ValueBuilder().(*array.StringBuilder).Append(v)
		}
	}
	for i, x := range rows {
		strs(0, x.SubmissionID)
		strs(1, x.QueryID)
		strs(2, x.ResponseA)
		strs(3, x.ResponseB)
		list(4, x.Workers)
		list(5, x.Votes)
		fl := bld.Field(6).(*array.ListBuilder)
		fl.Append(true)
		for _, v := range x.SpamProbabilities {
			fl.ValueBuilder().(*array.Float64Builder).Append(v)
		}
		bld.Field(7).(*array.Float64Builder).Append(x.PA)
		if x.PN == nil {
			bld.Field(8).AppendNull()
		} else {
			bld.Field(8).(*array.Float64Builder).Append(*x.PN)
		}
		bld.Field(9).(*array.Float64Builder).Append(x.PB)
		strs(10, x.Gold)
		bld.Field(11).(*array.Int64Builder).Append(x.NVotesA)
		bld.Field(12).(*array.Int64Builder).Append(x.NVotesB)
		bld.Field(13).(*array.Int64Builder).Append(x.NVotesN)
		bld.Field(14).(*array.BooleanBuilder).Append(x.HasMajority)
		strs(15, x.PairKey)
		if (i+1)%1024 == 0 || i == len(rows)-1 {
			out = append(out, bld.NewRecordBatch())
		}
	}
	return out
}

// arrowBytes is the Arrow in-memory size of the batches, the MB of MB/s.
func arrowBytes(batches []arrow.RecordBatch) int64 {
	var n int64
	for _, b := range batches {
		for _, c := range b.Columns() {
			n += int64(c.Data().SizeInBytes())
		}
	}
	return n
}

// writePQArrow writes the batches with agora's writer settings (see
// sinks/writerProps): data page v1, zstd level 1, statistics on, no
// dictionary, 64Ki-row row groups, the Arrow schema stored.
func writePQArrow(batches []arrow.RecordBatch) ([]byte, error) {
	schema := batches[0].Schema()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(
		parquet.WithCreatedBy("agora version bench"),
		parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithVersion(parquet.V2_6),
		parquet.WithMaxRowGroupLength(rowGroupRows),
		parquet.WithStats(true),
		parquet.WithDictionaryDefault(false),
		parquet.WithDataPageSize(1<<20),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
	)
	w, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("pqarrow writer: %w", err)
	}
	for _, b := range batches {
		if err := w.WriteBuffered(b); err != nil {
			return nil, fmt.Errorf("pqarrow write: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("pqarrow close: %w", err)
	}
	return buf.Bytes(), nil
}

// writeParquetGo writes the rows with parquet-go: zstd level 1
// (SpeedFastest), statistics on (its default), no dictionary, 64Ki-row
// row groups, 1 MiB pages.
func writeParquetGo[T any](rows []T) ([]byte, error) {
	var buf bytes.Buffer
	w := pq.NewGenericWriter[T](&buf,
		pq.Compression(&zstd.Codec{Level: zstd.SpeedFastest}),
		pq.MaxRowsPerRowGroup(rowGroupRows),
		pq.PageBufferSize(1<<20),
		pq.CreatedBy("agora", "bench", ""),
		pq.DataPageStatistics(true),
	)
	for i := 0; i < len(rows); i += 1024 {
		end := min(i+1024, len(rows))
		if _, err := w.Write(rows[i:end]); err != nil {
			return nil, fmt.Errorf("parquet-go write: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("parquet-go close: %w", err)
	}
	return buf.Bytes(), nil
}

// BenchmarkWriter compares the writers on the same 200,000 rows: MB/s of
// Arrow data (the same size for every case), rows/s, output MB, and
// whether two writes give byte-identical files (identical = 1).
//
//   - pqarrow_nullable: agora's writer and schema (every column nullable)
//   - pqarrow_required: the same, with parquet-go's required columns
//   - parquet-go_plain: parquet-go from Go structs, strings PLAIN like agora
//   - parquet-go_default: parquet-go's default string encoding (DELTA_LENGTH_BYTE_ARRAY)
func BenchmarkWriter(b *testing.B) {
	rows := makeRows(benchRows)
	plain := make([]ratingPlain, len(rows))
	for i, r := range rows {
		plain[i] = ratingPlain(r)
	}
	size := arrowBytes(toArrow(rows, schemaOf(true)))
	nullable, required := toArrow(rows, schemaOf(true)), toArrow(rows, schemaOf(false))
	cases := []struct {
		name  string
		write func() ([]byte, error)
	}{
		{"pqarrow_nullable", func() ([]byte, error) { return writePQArrow(nullable) }},
		{"pqarrow_required", func() ([]byte, error) { return writePQArrow(required) }},
		{"parquet-go_plain", func() ([]byte, error) { return writeParquetGo(plain) }},
		{"parquet-go_default", func() ([]byte, error) { return writeParquetGo(rows) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			first, err := c.write()
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var out []byte
			for i := 0; i < b.N; i++ {
				if out, err = c.write(); err != nil {
					b.Fatal(err)
				}
			}
			report(b, size, first, out)
		})
	}
}

func report(b *testing.B, size int64, first, last []byte) {
	b.ReportMetric(float64(size)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(len(last))/1e6, "outMB")
	identical := 0.0
	if bytes.Equal(first, last) {
		identical = 1
	}
	b.ReportMetric(identical, "identical")
}

// TestWritersSameRows checks that the cases of BenchmarkWriter write the
// same rows: pqarrow reads each file back to the same Arrow values.
func TestWritersSameRows(t *testing.T) {
	rows := makeRows(3000)
	plain := make([]ratingPlain, len(rows))
	for i, r := range rows {
		plain[i] = ratingPlain(r)
	}
	want := toArrow(rows, schemaOf(true))
	files := map[string]func() ([]byte, error){
		"pqarrow_nullable":   func() ([]byte, error) { return writePQArrow(want) },
		"pqarrow_required":   func() ([]byte, error) { return writePQArrow(toArrow(rows, schemaOf(false))) },
		"parquet-go_plain":   func() ([]byte, error) { return writeParquetGo(plain) },
		"parquet-go_default": func() ([]byte, error) { return writeParquetGo(rows) },
	}
	for name, write := range files {
		data, err := write()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := readBack(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.NumRows() != int64(len(rows)) {
			t.Fatalf("%s: %d rows, want %d", name, got.NumRows(), len(rows))
		}
		for c := 0; c < int(got.NumCols()); c++ {
			name := got.Schema().Field(c).Name
			var off int64
			for _, w := range want {
				col := w.Column(c)
				g := array.NewSlice(concat(t, got.Column(c).Data().Chunks()), off, off+int64(col.Len()))
				if g.String() != col.String() {
					t.Fatalf("column %s differs at rows %d..", name, off)
				}
				g.Release()
				off += int64(col.Len())
			}
		}
		got.Release()
	}
}

func readBack(data []byte) (arrow.Table, error) {
	return pqarrow.ReadTable(context.Background(), bytes.NewReader(data), parquet.NewReaderProperties(memory.DefaultAllocator),
		pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
}

func concat(t *testing.T, chunks []arrow.Array) arrow.Array {
	t.Helper()
	a, err := array.Concatenate(chunks, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
