package sinks

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/pipeline"
)

// ratingsSchema is agora's crowdrag25 ratings table as the sink receives
// it: the columns, the dimension partition column and the line column.
var ratingsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "submission_id", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "query_id", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "response_a", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "response_b", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "workers", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "votes", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "spam_probabilities", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "p_a", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "p_n", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "p_b", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "gold", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "n_votes_a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "n_votes_b", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "n_votes_n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "has_majority", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "pair_key", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "dimension", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: pipeline.LineColumn, Type: arrow.PrimitiveTypes.Int64},
}, nil)

// ratingsBatches builds n ratings-shaped rows (7 dimensions, one after the
// other per record, as the unpivot emits them) in batches of 1,024.
func ratingsBatches(b *testing.B, n int) []arrow.RecordBatch {
	b.Helper()
	dims := []string{"correctness_topical", "coherence_logical", "coherence_stylistic", "coverage_broad", "coverage_deep", "consistency_internal", "quality_overall"}
	labels := []string{"a", "b", "n"}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, ratingsSchema)
	defer bld.Release()
	str := func(i int, v string) { bld.Field(i).(*array.StringBuilder).Append(v) }
	var out []arrow.RecordBatch
	x := uint64(2025)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	for i := 0; i < n; i++ {
		rec := i / len(dims)
		a, c := fmt.Sprintf("%016x-a%05d", next(), rec%1800), fmt.Sprintf("%016x-b%05d", next(), (rec*7)%1800)
		str(0, fmt.Sprintf("%08x-%04x-4000-8000-%012x", rec, rec%65536, next()&0xffffffffffff))
		str(1, fmt.Sprintf("2024-%d", 100000+rec%60000))
		str(2, a)
		str(3, c)
		for _, f := range []int{4, 5} {
			lb := bld.Field(f).(*array.ListBuilder)
			lb.Append(true)
			for k := 0; k < 5; k++ {
				if f == 4 {
					lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("w%04d", next()%300))
				} else {
					lb.ValueBuilder().(*array.StringBuilder).Append(labels[next()%3])
				}
			}
		}
		fl := bld.Field(6).(*array.ListBuilder)
		fl.Append(true)
		for k := 0; k < 5; k++ {
			fl.ValueBuilder().(*array.Float64Builder).Append(float64(next()%1e10) / 1e10)
		}
		pa := float64(next()%1e10) / 1e10
		bld.Field(7).(*array.Float64Builder).Append(pa)
		if i%7 == 6 {
			bld.Field(8).AppendNull()
		} else {
			bld.Field(8).(*array.Float64Builder).Append((1 - pa) / 2)
		}
		bld.Field(9).(*array.Float64Builder).Append((1 - pa) / 2)
		str(10, labels[next()%3])
		for f := 11; f <= 13; f++ {
			bld.Field(f).(*array.Int64Builder).Append(int64(next() % 6))
		}
		bld.Field(14).(*array.BooleanBuilder).Append(next()%2 == 0)
		str(15, a+"|"+c)
		str(16, dims[i%len(dims)])
		bld.Field(17).(*array.Int64Builder).Append(int64(rec + 1))
		if (i+1)%1024 == 0 || i == n-1 {
			out = append(out, bld.NewRecordBatch())
		}
	}
	return out
}

// BenchmarkTableWrite measures the Parquet sink (pqarrow, zstd 1, no
// dictionary, then fsync and the read-back check of Close) on 140,000
// ratings-shaped rows, partitioned by dimension (7 open partitions) or
// not: MB/s of Arrow input, rows/s and the bytes written (outMB).
func BenchmarkTableWrite(b *testing.B) {
	batches := ratingsBatches(b, 140_000)
	defer func() {
		for _, x := range batches {
			x.Release()
		}
	}()
	var size int64
	rows := 0
	for _, x := range batches {
		size += arrowx.BatchBytes(x)
		rows += int(x.NumRows())
	}
	for _, c := range []struct {
		name string
		by   []string
	}{{"partitioned", []string{"dimension"}}, {"single", nil}} {
		b.Run(c.name, func(b *testing.B) {
			var out int64
			for i := 0; i < b.N; i++ {
				sink, err := NewTable(b.TempDir(), "ratings", ratingsSchema, c.by, config.DefaultWriter, memory.DefaultAllocator)
				if err != nil {
					b.Fatal(err)
				}
				for _, x := range batches {
					if err := sink.Write(b.Context(), x); err != nil {
						b.Fatal(err)
					}
				}
				files, err := sink.Close()
				if err != nil {
					b.Fatal(err)
				}
				out = 0
				for _, f := range files {
					out += f.Bytes
				}
			}
			b.ReportMetric(float64(size)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(out)/1e6, "outMB")
		})
	}
}

// BenchmarkRowGroupWriter writes the same four row groups (2,000 random
// rows of every column kind each, texts with dictionaries) with pqarrow's
// FileWriter, the baseline, with arrow-go's column writers serial and
// column-parallel, and with agora's own encoder (writer.encoder: agora)
// serial and column-parallel, taking turns in every iteration: MB/s of
// Arrow input for each, each one's time against pqarrow's (x_pqarrow),
// and the bytes each allocates per write (alloc_MB).
func BenchmarkRowGroupWriter(b *testing.B) {
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewPCG(3, 3))
	schema := encoderSchema
	groups := randGroupsOf(rng, mem, schema, 4, []int{1000, 1000}, 6, false)
	defer releaseGroups(groups)
	var size int64
	for _, g := range groups {
		for _, x := range g {
			size += arrowx.BatchBytes(x)
		}
	}
	w := config.DefaultWriter
	w.Dictionary = []string{"text", "words", "ids"}
	props, arrowProps := writerProps(w, schema, mem)
	var buf bytes.Buffer
	type run struct {
		d     time.Duration
		alloc uint64
	}
	var ms runtime.MemStats
	write := func(r *run, newW func() (rowGroupWriter, error)) {
		buf.Reset()
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		start := time.Now()
		rw, err := newW()
		if err != nil {
			b.Fatal(err)
		}
		writeGroups(b, rw, groups)
		r.d += time.Since(start)
		runtime.ReadMemStats(&ms)
		r.alloc += ms.TotalAlloc - before
	}
	pqarrowW := func() (rowGroupWriter, error) {
		pw, err := pqarrow.NewFileWriter(schema, &buf, props, arrowProps)
		return pqarrowWriter{pw, schema}, err
	}
	columnsW := func() (rowGroupWriter, error) {
		return newRowGroupWriter(schema, &buf, props, arrowProps, "arrow-go")
	}
	encW := func() (rowGroupWriter, error) {
		return newRowGroupWriter(schema, &buf, props, arrowProps, "agora")
	}
	old := parallelMin
	defer func() { parallelMin = old }()
	var base, serial, parallel, encSerial, encParallel run
	for i := 0; i < b.N; i++ {
		write(&base, pqarrowW)
		parallelMin = 1 << 62
		write(&serial, columnsW)
		write(&encSerial, encW)
		parallelMin = 0
		write(&parallel, columnsW)
		write(&encParallel, encW)
	}
	mbs := func(r run) float64 { return float64(size) * float64(b.N) / 1e6 / r.d.Seconds() }
	allocMB := func(r run) float64 { return float64(r.alloc) / float64(b.N) / 1e6 }
	b.ReportMetric(mbs(base), "pqarrow_MB/s")
	b.ReportMetric(mbs(serial), "serial_MB/s")
	b.ReportMetric(mbs(parallel), "parallel_MB/s")
	b.ReportMetric(mbs(encSerial), "agora_serial_MB/s")
	b.ReportMetric(mbs(encParallel), "agora_parallel_MB/s")
	b.ReportMetric(encSerial.d.Seconds()/base.d.Seconds(), "agora_serial_x_pqarrow")
	b.ReportMetric(allocMB(base), "pqarrow_alloc_MB")
	b.ReportMetric(allocMB(encSerial), "agora_alloc_MB")
	b.ReportMetric(serial.d.Seconds()/base.d.Seconds(), "serial_x_pqarrow")
	b.ReportMetric(parallel.d.Seconds()/base.d.Seconds(), "parallel_x_pqarrow")
}
