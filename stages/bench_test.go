package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/gzip"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// ratingsLike writes n lines shaped like CrowdRAG-25 ratings (46 keys,
// lists of 5) and returns the file and its uncompressed size.
func ratingsLike(b *testing.B, n int) (string, int64) {
	b.Helper()
	var raw bytes.Buffer
	dims := []string{"correctness_topical", "coherence_logical", "coherence_stylistic", "coverage_broad", "coverage_deep", "consistency_internal", "quality_overall"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&raw, `{"submission_id":"s%d","query_id":"2024-%d","response_a":"a%d","response_b":"b%d","worker":["w1","w2","w3","w4","w5"]`, i, i%65, i, i)
		for _, d := range dims {
			fmt.Fprintf(&raw, `,"%s_vote":["A","B","N","A","A"],"%s_spam_probability":[0.1234567891,0.2,0.3,0.4,0.5],"%s_p_a":0.5,"%s_p_n":0.25,"%s_p_b":0.25,"%s_gold":"a"`, d, d, d, d, d, d)
		}
		raw.WriteString("}\n")
	}
	return gzipFile(b, "ratings.jsonl.gz", raw.Bytes())
}

// gzipFile writes data gzipped to a temporary file and returns the file
// and the uncompressed size.
func gzipFile(b *testing.B, name string, data []byte) (string, int64) {
	b.Helper()
	p := filepath.Join(b.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write(data)
	if err := errors.Join(zw.Close(), f.Close()); err != nil {
		b.Fatal(err)
	}
	return p, int64(len(data))
}

func ratingsColumns(b *testing.B) []JSONColumn {
	cols := []JSONColumn{
		{Name: "submission_id", Type: mustType(b, "string")}, {Name: "query_id", Type: mustType(b, "string")},
		{Name: "response_a", Type: mustType(b, "string")}, {Name: "response_b", Type: mustType(b, "string")},
		{Name: "worker", Type: mustType(b, "list<string>")},
	}
	for _, d := range []string{"correctness_topical", "coherence_logical", "coherence_stylistic", "coverage_broad", "coverage_deep", "consistency_internal", "quality_overall"} {
		cols = append(cols,
			JSONColumn{Name: d + "_vote", Type: mustType(b, "list<string>")},
			JSONColumn{Name: d + "_spam_probability", Type: mustType(b, "list<float64>")},
			JSONColumn{Name: d + "_p_a", Type: mustType(b, "float64")},
			JSONColumn{Name: d + "_p_n", Type: mustType(b, "float64")},
			JSONColumn{Name: d + "_p_b", Type: mustType(b, "float64")},
			JSONColumn{Name: d + "_gold", Type: mustType(b, "string")})
	}
	return cols
}

// responsesLike writes n lines shaped like CrowdRAG-25 responses (20
// source texts of about 1 KB per line, repeated by every response of a
// topic, and a list of statements with citations) and returns the file and
// its uncompressed size.
func responsesLike(b *testing.B, n int) (string, int64) {
	b.Helper()
	var raw bytes.Buffer
	// Like the release, which Python's json wrote: every non-ASCII
	// character is a \u escape (about one in 16 words here; one in 135
	// bytes of the real responses).
	word := func(i int) string {
		return []string{"the", "court", "ruled", "that", "evidence", "was", "inadmissible", "because",
			"its", "source", "\\u201cwas\\u201d", "not", "disclosed", "to", "the", "defence"}[i%16]
	}
	text := func(seed, words int) string {
		var t bytes.Buffer
		for w := 0; w < words; w++ {
			fmt.Fprintf(&t, "%s%d ", word(seed+w), (seed*7+w)%97)
		}
		return t.String()
	}
	for i := 0; i < n; i++ {
		topic := i / 6
		fmt.Fprintf(&raw, `{"response":"r%d","topic":"2024-%d","style":"essay","kind":"human","query":"%s","references_ids":[`, i, topic, text(topic, 12))
		for r := 0; r < 20; r++ {
			if r > 0 {
				raw.WriteByte(',')
			}
			fmt.Fprintf(&raw, `"msmarco_v2.1_doc_%d_%d"`, topic, r)
		}
		raw.WriteString(`],"references_texts":[`)
		for r := 0; r < 20; r++ {
			if r > 0 {
				raw.WriteByte(',')
			}
			fmt.Fprintf(&raw, `"%s"`, text(topic*20+r, 100+(topic+r)%80))
		}
		fmt.Fprintf(&raw, `],"raw_text":"%s","cleaned_text":"%s","statements":[`, text(i, 300+i%200), text(i, 280+i%200))
		for st := 0; st < 8+i%5; st++ {
			if st > 0 {
				raw.WriteByte(',')
			}
			fmt.Fprintf(&raw, `{"text":"%s","citations":["%d","%d"]}`, text(i+st, 30), st, st+1)
		}
		raw.WriteString("]}\n")
	}
	return gzipFile(b, "responses.jsonl.gz", raw.Bytes())
}

func responsesColumns(b *testing.B) []JSONColumn {
	var cols []JSONColumn
	for _, c := range [][2]string{
		{"response", "string"}, {"topic", "string"}, {"style", "string"}, {"kind", "string"}, {"query", "string"},
		{"references_ids", "list<string>"}, {"references_texts", "list<string>"}, {"raw_text", "string"}, {"cleaned_text", "string"},
		{"statements", "list<struct<text:string,citations:list<string>>>"},
	} {
		cols = append(cols, JSONColumn{Name: c[0], Type: mustType(b, c[1])})
	}
	return cols
}

// BenchmarkDecodeJSONLines measures gunzip + decode into Arrow, in MB/s
// of uncompressed JSON and rows/s: ratings-shaped lines (many short
// values) and responses-shaped ones (long texts, nested lists).
func BenchmarkDecodeJSONLines(b *testing.B) {
	for _, bc := range []struct {
		name string
		file func(*testing.B, int) (string, int64)
		rows int
		cols func(*testing.B) []JSONColumn
	}{
		{"ratings", ratingsLike, 5000, ratingsColumns},
		{"responses", responsesLike, 600, responsesColumns},
	} {
		// "fast" decodes with the fast path; "fastjson" sends every line
		// through fastjson, as before the fast path (and as the lines it
		// declines still go).
		for _, path := range []string{"fast", "fastjson"} {
			b.Run(bc.name+"/"+path, func(b *testing.B) {
				p, size := bc.file(b, bc.rows)
				cols := bc.cols(b)
				b.ResetTimer()
				rows := 0
				for i := 0; i < b.N; i++ {
					s := &JSONLines{Path: p, Name: "r", Gzip: true, Columns: cols, BatchRows: 1024, Mem: memory.DefaultAllocator}
					if _, err := s.Schema(); err != nil {
						b.Fatal(err)
					}
					if path == "fastjson" {
						s.fast = nil
					} else if s.fast == nil {
						b.Fatal("no fast path for these columns")
					}
					err := s.Chunks(context.Background(), func(c pipeline.Chunk) error {
						bt, err := s.Decode(context.Background(), c, &pipeline.Rejects{})
						if err != nil {
							return err
						}
						rows += int(bt.NumRows())
						bt.Release()
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(size)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
				b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkUnpivotValidateDerive measures the ratings steps after decode
// (unpivot, validate, derive), in input rows/s.
func BenchmarkUnpivotValidateDerive(b *testing.B) {
	p, _ := ratingsLike(b, 5000)
	s := &JSONLines{Path: p, Name: "r", Gzip: true, Columns: ratingsColumns(b), BatchRows: 1024, Mem: memory.DefaultAllocator}
	var batches []pipeline.Chunk
	s.Chunks(context.Background(), func(c pipeline.Chunk) error { batches = append(batches, c); return nil })
	schema, _ := s.Schema()
	dims := []string{"correctness_topical", "coherence_logical", "coherence_stylistic", "coverage_broad", "coverage_deep", "consistency_internal", "quality_overall"}
	u, err := NewUnpivot(memory.DefaultAllocator, schema, "dimension", "{dimension}_{field}", dims, []string{"vote", "spam_probability", "p_a", "p_n", "p_b", "gold"}, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	d, err := NewDerive(memory.DefaultAllocator, u.Schema(), []config.Derivation{
		{Name: "vote", Fn: "lower", Args: []string{"vote"}, Replace: true},
		{Name: "n_a", Fn: "count_equal", Args: []string{"vote"}, Value: "a"},
		{Name: "maj", Fn: "majority", Args: []string{"vote"}, Min: 3},
		{Name: "pair_key", Fn: "pair_key", Args: []string{"response_a", "response_b"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	zero, one := 0.0, 1.0
	v, err := NewValidate(memory.DefaultAllocator, d.Schema(), []config.Rule{
		{Required: []string{"submission_id", "vote"}},
		{Enum: &config.EnumRule{Column: "vote", Values: []string{"a", "b", "n"}}},
		{Range: &config.RangeRule{Column: "spam_probability", Min: &zero, Max: &one}},
		{SumsTo: &config.SumRule{Columns: []string{"p_a", "p_n", "p_b"}, Value: 1, Tolerance: 1e-6}},
	})
	if err != nil {
		b.Fatal(err)
	}
	var decoded []arrow.RecordBatch
	for _, c := range batches {
		bt, _ := s.Decode(context.Background(), c, &pipeline.Rejects{})
		decoded = append(decoded, bt)
	}
	b.ResetTimer()
	rows := 0
	for i := 0; i < b.N; i++ {
		for _, in := range decoded {
			rej := &pipeline.Rejects{}
			x, _ := u.Process(context.Background(), in, rej)
			y, _ := d.Process(context.Background(), x, rej)
			z, _ := v.Process(context.Background(), y, rej)
			rows += int(in.NumRows())
			x.Release()
			y.Release()
			z.Release()
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	for _, x := range decoded {
		x.Release()
	}
}
