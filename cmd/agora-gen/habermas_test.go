package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Expected schemas, typed out independently of the generator's tables.
// Types are described without list item names ("item" vs "element").
var hmTestCompSchema = [][2]string{
	{"index", "int64"},
	{"monotonic_timestamp", "float64"},
	{"launch_id", "string"},
	{"round_id", "string"},
	{"iteration_id", "string"},
	{"iteration_index", "int64"},
	{"candidates.aggregation.method", "list<string>"},
	{"candidates.all_texts", "list<list<string>>"},
	{"candidates.display_label", "list<string>"},
	{"candidates.metadata.id", "list<string>"},
	{"candidates.metadata.provenance", "list<string>"},
	{"candidates.parent_statement_ids", "list<list<string>>"},
	{"candidates.reward_data.reward_predictions", "list<list<float64>>"},
	{"candidates.reward_data.welfare_or_rank", "list<list<float64>>"},
	{"candidates.text", "list<string>"},
	{"critique.metadata.id", "string"},
	{"critique.metadata.provenance", "string"},
	{"critique.text", "string"},
	{"metadata.created", "timestamp[ns, UTC]"},
	{"metadata.id", "string"},
	{"metadata.participant_id", "string"},
	{"metadata.provenance", "string"},
	{"metadata.response_duration", "float64"},
	{"metadata.status", "string"},
	{"metadata.task_duration", "float64"},
	{"metadata.updated", "string"},
	{"metadata.version", "string"},
	{"other_opinions.metadata.id", "list<string>"},
	{"other_opinions.metadata.participant_id", "list<string>"},
	{"other_opinions.metadata.provenance", "list<string>"},
	{"other_opinions.text", "list<string>"},
	{"own_opinion.display_label", "string"},
	{"own_opinion.metadata.id", "string"},
	{"own_opinion.metadata.provenance", "string"},
	{"own_opinion.metadata.status", "string"},
	{"own_opinion.text", "string"},
	{"question.affirming_statement", "string"},
	{"question.id", "string"},
	{"question.negating_statement", "string"},
	{"question.split", "string"},
	{"question.text", "string"},
	{"question.topic", "int64"},
	{"rankings.candidate_ids", "list<string>"},
	{"rankings.metadata.status", "string"},
	{"rankings.numerical_ranks", "list<int64>"},
	{"ratings.agreement", "list<string>"},
	{"ratings.quality", "list<string>"},
	{"timestamp", "timestamp[ms, UTC]"},
	{"top_candidate.metadata.generative_model.api_version", "string"},
	{"top_candidate.metadata.id", "string"},
	{"top_candidate.metadata.provenance", "string"},
	{"top_candidate.text", "string"},
	{"worker_id", "string"},
}

var hmTestPosSchema = [][2]string{
	{"index", "int64"},
	{"monotonic_timestamp", "float64"},
	{"launch_id", "string"},
	{"metadata.created", "timestamp[ns, UTC]"},
	{"metadata.id", "string"},
	{"metadata.participant_id", "string"},
	{"metadata.provenance", "string"},
	{"metadata.response_duration", "float64"},
	{"metadata.status", "string"},
	{"metadata.task_duration", "float64"},
	{"metadata.updated", "string"},
	{"metadata.version", "string"},
	{"question.affirming_statement", "string"},
	{"question.id", "string"},
	{"question.negating_statement", "string"},
	{"question.split", "string"},
	{"question.text", "string"},
	{"question.topic", "int64"},
	{"question_index", "int64"},
	{"rating_index", "int64"},
	{"ratings.agreement", "list<string>"},
	{"ratings.metadata.created", "timestamp[ns, UTC]"},
	{"ratings.metadata.id", "string"},
	{"ratings.metadata.participant_id", "string"},
	{"timestamp", "timestamp[ms, UTC]"},
	{"worker_id", "string"},
}

var (
	hmTestVersions = []string{
		"TRAINING_DATA_V1", "TRAINING_DATA_V2", "TRAINING_DATA_V3", "TRAINING_DATA_V4", "TRAINING_DATA_V5",
		"EVAL_COHORT1_ABLATION_IID_V1", "EVAL_COHORT2_ABLATION_IID_V2", "EVAL_COHORT3_ABLATION_OOD_V1",
		"EVAL_COHORT4_CRITIQUE_EXCLUSION", "EVAL_COHORT5_OPINION_EXPOSURE", "EVAL_COHORT6_HUMAN_MEDIATOR",
		"EVAL_VIRTUAL_CITIZENS_ASSEMBLY_WEEK3", "EVAL_VIRTUAL_CITIZENS_ASSEMBLY_WEEK4", "EVAL_VIRTUAL_CITIZENS_ASSEMBLY_WEEK5",
	}
	hmTestProvenances = []string{"MOCK", "DUMMY", "EXAMPLE", "BOT_CITIZEN", "HUMAN_CITIZEN", "HUMAN_MEDIATOR", "MODEL_MEDIATOR", "POSITION_STATEMENT"}
	hmTestAgreement   = []string{"STRONGLY_DISAGREE", "DISAGREE", "SOMEWHAT_DISAGREE", "NEUTRAL", "SOMEWHAT_AGREE", "AGREE", "STRONGLY_AGREE", "MOCK"}
	hmTestQuality     = []string{"TERRIBLE_QUALITY", "POOR_QUALITY", "SOMEWHAT_POOR_QUALITY", "NEUTRAL", "SOMEWHAT_GOOD_QUALITY", "GOOD_QUALITY", "EXCELLENT_QUALITY", "MOCK"}
	hmTestSplits      = []string{"TRAIN", "IID_TEST", "OOD_TEST"}
	hmTestStatuses    = []string{"COMPLETED", "ABANDONED", "TIMED_OUT", "RETURNED"}

	hmHex32   = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hmHex10   = regexp.MustCompile(`^[0-9a-f]{10}$`)
	hmQID     = regexp.MustCompile(`^S\d{9}$`)
	hmISORe   = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$`)
	hmISOFrac = regexp.MustCompile(`\.\d{6}\+`)
)

// hmRow is one decoded row: column name → Go value (nil for null; string,
// int64, float64, int64 timestamps in the column's unit, []any lists).
type hmRow map[string]any

// hmTestFile is a parquet file read back with pqarrow, row group by row group.
type hmTestFile struct {
	schema    *arrow.Schema
	kv        map[string]string
	rowGroups int
	rows      []hmRow
}

func hmTypeDesc(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.ListType:
		return "list<" + hmTypeDesc(t.Elem()) + ">"
	case *arrow.TimestampType:
		return "timestamp[" + t.Unit.String() + ", " + t.TimeZone + "]"
	case *arrow.StringType:
		return "string"
	}
	return t.String()
}

func hmValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, hi-lo)
		for j := lo; j < hi; j++ {
			out = append(out, hmValue(vals, int(j)))
		}
		return out
	}
	panic(fmt.Sprintf("unexpected array type %s", a.DataType()))
}

func readHMFile(t testing.TB, path string, mem memory.Allocator) *hmTestFile {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64}, mem)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	out := &hmTestFile{schema: sc, kv: map[string]string{}, rowGroups: rdr.NumRowGroups()}
	for _, kv := range rdr.MetaData().KeyValueMetadata() {
		if kv.Value != nil {
			out.kv[kv.Key] = *kv.Value
		}
	}
	cols := make([]int, len(sc.Fields()))
	for i := range cols {
		cols[i] = i
	}
	for rg := range rdr.NumRowGroups() {
		tbl, err := fr.RowGroup(rg).ReadTable(context.Background(), cols)
		if err != nil {
			t.Fatalf("%s row group %d: %v", path, rg, err)
		}
		n := int(tbl.NumRows())
		if want := rdr.MetaData().RowGroup(rg).NumRows(); int64(n) != want {
			t.Errorf("%s row group %d: read %d rows, metadata says %d", path, rg, n, want)
		}
		base := len(out.rows)
		for range n {
			out.rows = append(out.rows, hmRow{})
		}
		for c := range int(tbl.NumCols()) {
			name := tbl.Schema().Field(c).Name
			i := base
			for _, chunk := range tbl.Column(c).Data().Chunks() {
				for j := range chunk.Len() {
					out.rows[i][name] = hmValue(chunk, j)
					i++
				}
			}
		}
		tbl.Release()
	}
	return out
}

// Accessors (nil-safe: a null string reads as "").
func (r hmRow) s(name string) string {
	v, _ := r[name].(string)
	return v
}

func (r hmRow) i(name string) int64 {
	v, _ := r[name].(int64)
	return v
}

func (r hmRow) strs(name string) []string {
	l, _ := r[name].([]any)
	out := make([]string, len(l))
	for i, v := range l {
		out[i], _ = v.(string)
	}
	return out
}

func (r hmRow) ints(name string) []int64 {
	l, _ := r[name].([]any)
	out := make([]int64, len(l))
	for i, v := range l {
		out[i], _ = v.(int64)
	}
	return out
}

func (r hmRow) listLen(name string) int {
	l, _ := r[name].([]any)
	return len(l)
}

func checkHMSchema(t *testing.T, f *hmTestFile, want [][2]string) {
	t.Helper()
	var got [][2]string
	for _, fld := range f.schema.Fields() {
		got = append(got, [2]string{fld.Name, hmTypeDesc(fld.Type)})
	}
	if !slices.Equal(got, want) {
		t.Errorf("schema mismatch:\n got %q\nwant %q", got, want)
	}
	var pd struct {
		IndexColumns []any `json:"index_columns"`
		Columns      []struct {
			Name       string `json:"name"`
			PandasType string `json:"pandas_type"`
		} `json:"columns"`
		PandasVersion string `json:"pandas_version"`
	}
	if err := json.Unmarshal([]byte(f.kv["pandas"]), &pd); err != nil {
		t.Fatalf("pandas metadata: %v (%q)", err, f.kv["pandas"])
	}
	if len(pd.IndexColumns) != 0 || pd.PandasVersion == "" || len(pd.Columns) != len(want) {
		t.Errorf("pandas metadata: index_columns %v, version %q, %d columns", pd.IndexColumns, pd.PandasVersion, len(pd.Columns))
	}
	for i, c := range pd.Columns {
		if i < len(want) && c.Name != want[i][0] {
			t.Errorf("pandas metadata column %d is %q, want %q", i, c.Name, want[i][0])
		}
	}
	if f.kv["ARROW:schema"] == "" {
		t.Errorf("no ARROW:schema key-value metadata")
	}
}

// hmTestSchulze is an independent Schulze implementation: strongest paths
// by relaxation until nothing changes; among the winners the smallest id.
func hmTestSchulze(ids []string, ballots []map[string]int64) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	beats := func(a, b string) int {
		n := 0
		for _, bl := range ballots {
			if bl[a] < bl[b] {
				n++
			}
		}
		return n
	}
	strength := map[[2]string]int{}
	for _, a := range ids {
		for _, b := range ids {
			if a != b && beats(a, b) > beats(b, a) {
				strength[[2]string{a, b}] = beats(a, b)
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, a := range ids {
			for _, b := range ids {
				for _, c := range ids {
					if a == b || b == c || a == c {
						continue
					}
					via := min(strength[[2]string{a, b}], strength[[2]string{b, c}])
					if via > strength[[2]string{a, c}] {
						strength[[2]string{a, c}] = via
						changed = true
					}
				}
			}
		}
	}
	for _, a := range ids { // sorted: the first winner is the smallest id
		win := true
		for _, b := range ids {
			if a != b && strength[[2]string{b, a}] > strength[[2]string{a, b}] {
				win = false
			}
		}
		if win {
			return a
		}
	}
	return ""
}

func isMockRanking(ranks []int64) bool {
	return len(ranks) > 0 && !slices.ContainsFunc(ranks, func(r int64) bool { return r != -1 })
}

// checkHMComparisons returns every violated invariant of the comparisons
// file (at most a few per kind).
func checkHMComparisons(rows []hmRow) []string {
	var problems []string
	seen := map[string]int{}
	bad := func(kind string, format string, args ...any) {
		seen[kind]++
		if seen[kind] <= 3 {
			problems = append(problems, kind+": "+fmt.Sprintf(format, args...))
		}
	}
	candLists := []string{"candidates.aggregation.method", "candidates.all_texts", "candidates.display_label",
		"candidates.metadata.id", "candidates.metadata.provenance", "candidates.parent_statement_ids",
		"candidates.reward_data.reward_predictions", "candidates.text",
		"rankings.candidate_ids", "rankings.numerical_ranks", "ratings.agreement", "ratings.quality"}
	otherLists := []string{"other_opinions.metadata.id", "other_opinions.metadata.participant_id",
		"other_opinions.metadata.provenance", "other_opinions.text"}
	critTop := []string{"critique.metadata.id", "critique.metadata.provenance", "critique.text",
		"top_candidate.metadata.id", "top_candidate.metadata.provenance", "top_candidate.text"}

	type iterInfo struct {
		texts   map[string]string
		prov    map[string]string
		cands   []string
		owners  []string // own_opinion ids of the rows
		others  [][]string
		round   string
		index   int64
		ballots []map[string]int64
	}
	iters := map[string]*iterInfo{}
	var iterOrder []string
	reordered, sameOrder := 0, 0
	prevIndex := int64(-1)
	for n, r := range rows {
		where := fmt.Sprintf("row %d", n)
		if r.i("index") <= prevIndex {
			bad("index", "%s: index %d after %d", where, r.i("index"), prevIndex)
		}
		prevIndex = r.i("index")
		for _, c := range []string{"launch_id", "round_id", "iteration_id", "metadata.id", "own_opinion.metadata.id"} {
			if !hmHex32.MatchString(r.s(c)) {
				bad("hex32", "%s: %s = %q", where, c, r.s(c))
			}
		}
		if !hmHex10.MatchString(r.s("metadata.participant_id")) {
			bad("hex10", "%s: participant %q", where, r.s("metadata.participant_id"))
		}
		if !slices.Contains(hmTestVersions, r.s("metadata.version")) {
			bad("version", "%s: %q", where, r.s("metadata.version"))
		}
		training := strings.HasPrefix(r.s("metadata.version"), "TRAINING_")
		if (r["worker_id"] == nil) != training {
			bad("worker_id", "%s: worker_id %v in %s", where, r["worker_id"], r.s("metadata.version"))
		}
		for _, c := range []string{"metadata.status", "rankings.metadata.status", "own_opinion.metadata.status"} {
			if !slices.Contains(hmTestStatuses, r.s(c)) {
				bad("status", "%s: %s = %q", where, c, r.s(c))
			}
		}
		// Question.
		if !hmQID.MatchString(r.s("question.id")) || !slices.Contains(hmTestSplits, r.s("question.split")) {
			bad("question", "%s: id %q split %q", where, r.s("question.id"), r.s("question.split"))
		}
		if tp := r.i("question.topic"); tp < 0 || tp > 104 {
			bad("question", "%s: topic %d", where, tp)
		}
		aff, neg := r.s("question.affirming_statement"), r.s("question.negating_statement")
		if !strings.Contains(neg, " NOT ") || strings.Replace(neg, " should NOT ", " should ", 1) != aff {
			bad("question", "%s: affirming %q negating %q", where, aff, neg)
		}
		// Times.
		upd := r.s("metadata.updated")
		created, _ := r["metadata.created"].(int64)
		if !hmISORe.MatchString(upd) {
			bad("updated", "%s: %q", where, upd)
		} else if tu, err := time.Parse(time.RFC3339Nano, upd); err != nil || tu.UnixNano() < created {
			bad("updated", "%s: %q before created %d (%v)", where, upd, created, err)
		}
		if created%1000 != 0 || created < time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano() {
			bad("created", "%s: %d", where, created)
		}
		// Provenances.
		var provs []string
		provs = append(provs, r.s("metadata.provenance"), r.s("own_opinion.metadata.provenance"))
		provs = append(provs, r.strs("candidates.metadata.provenance")...)
		provs = append(provs, r.strs("other_opinions.metadata.provenance")...)
		if r["critique.metadata.provenance"] != nil {
			provs = append(provs, r.s("critique.metadata.provenance"))
		}
		if r["top_candidate.metadata.provenance"] != nil {
			provs = append(provs, r.s("top_candidate.metadata.provenance"))
		}
		for _, p := range provs {
			if !slices.Contains(hmTestProvenances, p) {
				bad("provenance", "%s: %q", where, p)
			}
		}
		// Aligned lists.
		nc := r.listLen("candidates.metadata.id")
		if nc < 1 || nc > 4 {
			bad("candidates", "%s: %d candidates", where, nc)
		}
		for _, c := range candLists {
			if r[c] == nil || r.listLen(c) != nc {
				bad("aligned", "%s: %s has %d elements, candidates.metadata.id %d", where, c, r.listLen(c), nc)
			}
		}
		if w := r["candidates.reward_data.welfare_or_rank"]; (w == nil) != training || (w != nil && r.listLen("candidates.reward_data.welfare_or_rank") != nc) {
			bad("welfare_or_rank", "%s: %v in %s", where, w, r.s("metadata.version"))
		}
		if got := r.strs("candidates.display_label"); !slices.Equal(got, []string{"A", "B", "C", "D"}[:min(nc, 4)]) {
			bad("display_label", "%s: %q", where, got)
		}
		no := r.listLen("other_opinions.metadata.id")
		for _, c := range otherLists {
			if r[c] == nil || r.listLen(c) != no {
				bad("aligned", "%s: %s has %d elements, other_opinions.metadata.id %d", where, c, r.listLen(c), no)
			}
		}
		// Rankings and ratings.
		cids, rids, ranks := r.strs("candidates.metadata.id"), r.strs("rankings.candidate_ids"), r.ints("rankings.numerical_ranks")
		sc, sr := slices.Sorted(slices.Values(cids)), slices.Sorted(slices.Values(rids))
		if !slices.Equal(sc, sr) || len(slices.Compact(slices.Clone(sc))) != len(sc) {
			bad("ranking ids", "%s: candidates %q rankings %q", where, cids, rids)
		}
		if slices.Equal(cids, rids) {
			sameOrder++
		} else {
			reordered++
		}
		agreement, quality := r.strs("ratings.agreement"), r.strs("ratings.quality")
		mock := isMockRanking(ranks)
		if mock {
			if slices.ContainsFunc(agreement, func(s string) bool { return s != "MOCK" }) {
				bad("mock", "%s: mock ranking with ratings %q", where, agreement)
			}
		} else {
			distinct := slices.Compact(slices.Sorted(slices.Values(ranks)))
			for k, v := range distinct {
				if v != int64(k) {
					bad("ranks", "%s: ranks %v are not dense from 0", where, ranks)
					break
				}
			}
			if slices.Contains(agreement, "MOCK") {
				bad("mock", "%s: MOCK rating with real ranks %v", where, ranks)
			}
		}
		for _, a := range agreement {
			if !slices.Contains(hmTestAgreement, a) {
				bad("likert", "%s: agreement %q", where, a)
			}
		}
		for _, q := range quality {
			if !slices.Contains(hmTestQuality, q) {
				bad("likert", "%s: quality %q", where, q)
			}
		}
		// Critique and top candidate null exactly on iteration 0.
		it := r.i("iteration_index")
		if it != 0 && it != 1 {
			bad("iteration", "%s: iteration_index %d", where, it)
		}
		for _, c := range critTop {
			if (r[c] == nil) != (it == 0) {
				bad("iteration nulls", "%s: %s = %v on iteration %d", where, c, r[c], it)
			}
		}
		if it == 0 && r["top_candidate.metadata.generative_model.api_version"] != nil {
			bad("iteration nulls", "%s: api_version on iteration 0", where)
		}
		// Round-iteration bookkeeping.
		id := r.s("iteration_id")
		info := iters[id]
		if info == nil {
			info = &iterInfo{texts: map[string]string{}, prov: map[string]string{}, cands: sc, round: r.s("round_id"), index: it}
			iters[id] = info
			iterOrder = append(iterOrder, id)
		}
		if info.round != r.s("round_id") || info.index != it || !slices.Equal(info.cands, sc) {
			bad("round-iteration", "%s: iteration %s mixes rounds, indexes or candidate sets", where, id)
		}
		for k, cid := range cids {
			text := r.strs("candidates.text")[k]
			if prev, ok := info.texts[cid]; ok && prev != text {
				bad("id→text", "%s: candidate %s has two texts", where, cid)
			}
			info.texts[cid] = text
			info.prov[cid] = r.strs("candidates.metadata.provenance")[k]
		}
		info.owners = append(info.owners, r.s("own_opinion.metadata.id"))
		info.others = append(info.others, r.strs("other_opinions.metadata.id"))
		if it == 0 && !mock && r.s("rankings.metadata.status") == "COMPLETED" {
			b := map[string]int64{}
			for k, cid := range rids {
				b[cid] = ranks[k]
			}
			info.ballots = append(info.ballots, b)
		}
	}
	if len(rows) > 20 && (reordered == 0 || sameOrder == 0) {
		bad("ranking order", "%d rows with rankings.candidate_ids in a different order, %d in the same", reordered, sameOrder)
	}
	// Panels and Schulze winners.
	firstIter := map[string]*iterInfo{}
	for k, id := range iterOrder {
		info := iters[id]
		if info.index == 0 {
			firstIter[info.round] = info
		}
		last := k == len(iterOrder)-1
		panel := slices.Sorted(slices.Values(info.owners))
		for j, others := range info.others {
			all := slices.Sorted(slices.Values(append(slices.Clone(others), info.owners[j])))
			if len(others) < 2 || len(others) > 5 {
				bad("panel", "iteration %s: %d other opinions", id, len(others))
			}
			if !last && !slices.Equal(all, panel) {
				bad("panel", "iteration %s: own + other opinions %q != panel %q", id, all, panel)
			}
		}
	}
	for n, r := range rows {
		if r.i("iteration_index") != 1 {
			continue
		}
		first := firstIter[r.s("round_id")]
		if first == nil {
			bad("schulze", "row %d: iteration 1 of round %s without iteration 0", n, r.s("round_id"))
			continue
		}
		want := hmTestSchulze(first.cands, first.ballots)
		if got := r.s("top_candidate.metadata.id"); got != want {
			bad("schulze", "row %d: top_candidate %s, Schulze winner of iteration 0 is %s", n, got, want)
		}
		if r.s("top_candidate.text") != first.texts[want] || r.s("top_candidate.metadata.provenance") != first.prov[want] {
			bad("schulze", "row %d: top_candidate text/provenance differ from the winner's", n)
		}
	}
	return problems
}

// hmGenerate runs the generator into dir with a checked allocator.
func hmGenerate(t *testing.T, dir string, rows int, seed uint64) []hmFileStat {
	t.Helper()
	cfg, err := resolveHMConfig(dir, rows, 0, 0, seed)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cfg.mem = mem
	stats, err := generateHabermas(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// TestHabermasOutput generates each configuration once and checks both
// files, read back with pqarrow row group by row group.
func TestHabermasOutput(t *testing.T) {
	tests := []struct {
		name         string
		rows         int
		seed         uint64
		rowGroups    int
		versions     int // at least this many distinct metadata.version values
		posRows      int
		posRowGroups int
	}{
		{"sample 300 rows", 300, hmDefaultSeed, 3, 11, 345, 4},
		{"2000 rows", 2000, hmDefaultSeed, 20, 14, 2301, 24},
		{"1000 rows other seed", 1000, 7, 10, 14, 1151, 12},
		{"tiny 25 rows", 25, hmDefaultSeed, 1, 1, 29, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stats := hmGenerate(t, dir, tc.rows, tc.seed)
			t.Run("comparisons", func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				f := readHMFile(t, filepath.Join(dir, hmComparisonsFile), mem)
				checkHMSchema(t, f, hmTestCompSchema)
				if len(f.rows) != tc.rows || stats[0].Rows != tc.rows {
					t.Fatalf("%d rows read, %d reported, want %d", len(f.rows), stats[0].Rows, tc.rows)
				}
				if f.rowGroups != tc.rowGroups || stats[0].RowGroups != tc.rowGroups {
					t.Errorf("%d row groups (reported %d), want %d", f.rowGroups, stats[0].RowGroups, tc.rowGroups)
				}
				for _, p := range checkHMComparisons(f.rows) {
					t.Error(p)
				}
				count := func(pred func(hmRow) bool) int {
					n := 0
					for _, r := range f.rows {
						if pred(r) {
							n++
						}
					}
					return n
				}
				versions := map[string]int{}
				for _, r := range f.rows {
					versions[r.s("metadata.version")]++
				}
				if len(versions) < tc.versions {
					t.Errorf("%d versions, want >= %d: %v", len(versions), tc.versions, versions)
				}
				if tc.rows < 300 {
					return
				}
				// Proportions: every version within 3 points of its release share
				// (a group is ~27 rows, so only from a few thousand rows on).
				for v, n := range versions {
					if tc.rows < 2000 {
						break
					}
					var release int
					for _, hv := range hmVersions {
						if hv.name == v {
							release = hv.rows
						}
					}
					if got, want := float64(n)/float64(tc.rows), float64(release)/hmReleaseComparisons; math.Abs(got-want) > 0.03 {
						t.Errorf("version %s: share %.3f, release %.3f", v, got, want)
					}
				}
				features := []struct {
					name string
					pred func(hmRow) bool
				}{
					{"BOT_CITIZEN own opinion", func(r hmRow) bool { return r.s("own_opinion.metadata.provenance") == "BOT_CITIZEN" }},
					{"BOT_CITIZEN row", func(r hmRow) bool { return r.s("metadata.provenance") == "BOT_CITIZEN" }},
					{"MOCK row", func(r hmRow) bool { return r.s("metadata.provenance") == "MOCK" }},
					{"mock ranking", func(r hmRow) bool { return isMockRanking(r.ints("rankings.numerical_ranks")) }},
					{"MOCK rating", func(r hmRow) bool { return slices.Contains(r.strs("ratings.quality"), "MOCK") }},
					{"tied ranks", func(r hmRow) bool {
						ranks := r.ints("rankings.numerical_ranks")
						return len(slices.Compact(slices.Sorted(slices.Values(ranks)))) < len(ranks) && !isMockRanking(ranks)
					}},
					{"non-COMPLETED ranking", func(r hmRow) bool { return r.s("rankings.metadata.status") != "COMPLETED" }},
					{"fewer than 4 candidates", func(r hmRow) bool { return r.listLen("candidates.metadata.id") < 4 }},
					{"panel of 3", func(r hmRow) bool { return r.listLen("other_opinions.metadata.id") == 2 }},
					{"empty candidate text", func(r hmRow) bool { return slices.Contains(r.strs("candidates.text"), "") }},
					{"final consensus prefix", func(r hmRow) bool {
						return slices.ContainsFunc(r.strs("candidates.text"), func(s string) bool { return strings.HasPrefix(s, "Final consensus statement: ") })
					}},
					{"non-ASCII opinion", func(r hmRow) bool { return !isASCII(r.s("own_opinion.text")) }},
					{"non-ASCII candidate", func(r hmRow) bool {
						return slices.ContainsFunc(r.strs("candidates.text"), func(s string) bool { return !isASCII(s) })
					}},
					{"null worker_id", func(r hmRow) bool { return r["worker_id"] == nil }},
					{"eval row", func(r hmRow) bool { return !strings.HasPrefix(r.s("metadata.version"), "TRAINING_") }},
					{"ISO without fraction", func(r hmRow) bool { return !hmISOFrac.MatchString(r.s("metadata.updated")) }},
					{"split TRAIN", func(r hmRow) bool { return r.s("question.split") == "TRAIN" }},
					{"split IID_TEST", func(r hmRow) bool { return r.s("question.split") == "IID_TEST" }},
					{"split OOD_TEST", func(r hmRow) bool { return r.s("question.split") == "OOD_TEST" }},
				}
				if tc.rows >= 2000 {
					features = append(features, []struct {
						name string
						pred func(hmRow) bool
					}{
						{"HUMAN_MEDIATOR candidate", func(r hmRow) bool { return slices.Contains(r.strs("candidates.metadata.provenance"), "HUMAN_MEDIATOR") }},
						{"HUMAN_CITIZEN candidate", func(r hmRow) bool { return slices.Contains(r.strs("candidates.metadata.provenance"), "HUMAN_CITIZEN") }},
						{"panel of 6", func(r hmRow) bool { return r.listLen("other_opinions.metadata.id") == 5 }},
					}...)
					gaps := 0
					for i := 1; i < len(f.rows); i++ {
						if f.rows[i].i("index") > f.rows[i-1].i("index")+1 {
							gaps++
						}
					}
					if gaps == 0 {
						t.Errorf("no gaps in the leaked pandas index")
					}
				}
				for _, ft := range features {
					if count(ft.pred) == 0 {
						t.Errorf("no row with %s", ft.name)
					}
				}
			})
			t.Run("position ratings", func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				pos := readHMFile(t, filepath.Join(dir, hmPositionsFile), mem)
				comp := readHMFile(t, filepath.Join(dir, hmComparisonsFile), mem)
				checkHMSchema(t, pos, hmTestPosSchema)
				if len(pos.rows) != tc.posRows || pos.rowGroups != tc.posRowGroups {
					t.Fatalf("%d rows in %d row groups, want %d in %d", len(pos.rows), pos.rowGroups, tc.posRows, tc.posRowGroups)
				}
				// Participants of the comparisons file per launch.
				members := map[string]map[string]bool{}
				for _, r := range comp.rows {
					l := r.s("launch_id")
					if members[l] == nil {
						members[l] = map[string]bool{}
					}
					members[l][r.s("metadata.participant_id")] = true
				}
				values := map[string]int{}
				versions := map[string]bool{}
				nullWorkers, sharedLaunches := 0, map[string]bool{}
				prevIndex := int64(-1)
				for n, r := range pos.rows {
					where := fmt.Sprintf("row %d", n)
					ag := r.strs("ratings.agreement")
					if len(ag) != 1 || !slices.Contains(hmTestAgreement, ag[0]) {
						t.Errorf("%s: ratings.agreement %q", where, ag)
					} else {
						values[ag[0]]++
					}
					if ri := r.i("rating_index"); ri != 0 && ri != 1 {
						t.Errorf("%s: rating_index %d", where, ri)
					}
					if qi := r.i("question_index"); qi < 0 || qi > 2 {
						t.Errorf("%s: question_index %d", where, qi)
					}
					if r.s("ratings.metadata.participant_id") != r.s("metadata.participant_id") || !hmHex10.MatchString(r.s("metadata.participant_id")) {
						t.Errorf("%s: participant ids %q / %q", where, r.s("metadata.participant_id"), r.s("ratings.metadata.participant_id"))
					}
					if !hmHex32.MatchString(r.s("ratings.metadata.id")) || !hmHex32.MatchString(r.s("metadata.id")) || !hmQID.MatchString(r.s("question.id")) {
						t.Errorf("%s: ids %q %q %q", where, r.s("metadata.id"), r.s("ratings.metadata.id"), r.s("question.id"))
					}
					if !hmISORe.MatchString(r.s("metadata.updated")) {
						t.Errorf("%s: metadata.updated %q", where, r.s("metadata.updated"))
					}
					if r.i("index") <= prevIndex {
						t.Errorf("%s: index not increasing", where)
					}
					prevIndex = r.i("index")
					rc, _ := r["ratings.metadata.created"].(int64)
					mc, _ := r["metadata.created"].(int64)
					if rc < mc {
						t.Errorf("%s: rating created before the task", where)
					}
					training := strings.HasPrefix(r.s("metadata.version"), "TRAINING_")
					if r["worker_id"] == nil {
						nullWorkers++
					} else if training {
						t.Errorf("%s: worker_id on a training row", where)
					}
					versions[r.s("metadata.version")] = true
					if m := members[r.s("launch_id")]; m != nil {
						sharedLaunches[r.s("launch_id")] = true
						if !m[r.s("metadata.participant_id")] && len(m) >= 3 {
							t.Errorf("%s: participant %s not in launch %s of the comparisons", where, r.s("metadata.participant_id"), r.s("launch_id"))
						}
					}
				}
				if nullWorkers == 0 {
					t.Errorf("no null worker_id")
				}
				if len(sharedLaunches) != len(members) {
					t.Errorf("%d of %d comparison launches have position ratings", len(sharedLaunches), len(members))
				}
				mockShare := float64(values["MOCK"]) / float64(len(pos.rows))
				if tc.rows >= 300 && (mockShare < 0.05 || mockShare > 0.25 || len(values) != 8) {
					t.Errorf("agreement values %v (MOCK share %.3f)", values, mockShare)
				}
				if len(versions) < tc.versions {
					t.Errorf("%d versions", len(versions))
				}
			})
		})
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func TestHabermasDeterministic(t *testing.T) {
	tests := []struct {
		name         string
		seedA, seedB uint64
		same         bool
	}{
		{"same seed", hmDefaultSeed, hmDefaultSeed, true},
		{"different seed", hmDefaultSeed, hmDefaultSeed + 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := t.TempDir(), t.TempDir()
			hmGenerate(t, a, hmDefaultRows, tc.seedA)
			hmGenerate(t, b, hmDefaultRows, tc.seedB)
			for _, name := range []string{hmComparisonsFile, hmPositionsFile} {
				x, err := os.ReadFile(filepath.Join(a, name))
				if err != nil {
					t.Fatal(err)
				}
				y, err := os.ReadFile(filepath.Join(b, name))
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Equal(x, y) != tc.same {
					t.Errorf("%s: byte-identical = %v, want %v", name, !tc.same, tc.same)
				}
			}
		})
	}
}

// TestHabermasCheckerDetectsCorruption makes sure the invariant checker
// can fail: each mutation of a valid file must be reported.
func TestHabermasCheckerDetectsCorruption(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	hmGenerate(t, dir, 300, hmDefaultSeed)
	base := readHMFile(t, filepath.Join(dir, hmComparisonsFile), mem).rows
	if p := checkHMComparisons(base); len(p) > 0 {
		t.Fatalf("valid file reported: %q", p)
	}
	find := func(rows []hmRow, pred func(hmRow) bool) hmRow {
		for _, r := range rows {
			if pred(r) {
				return r
			}
		}
		panic("no row to corrupt")
	}
	iter1 := func(r hmRow) bool { return r.i("iteration_index") == 1 }
	real4 := func(r hmRow) bool {
		return r.listLen("candidates.metadata.id") == 4 && !isMockRanking(r.ints("rankings.numerical_ranks"))
	}
	tests := []struct {
		name   string
		kind   string
		mutate func(rows []hmRow)
	}{
		{"top candidate is not the Schulze winner", "schulze", func(rows []hmRow) {
			r := find(rows, iter1)
			for _, o := range rows {
				if o.s("round_id") == r.s("round_id") && o.i("iteration_index") == 1 {
					o["top_candidate.metadata.id"] = strings.Repeat("0", 32)
				}
			}
		}},
		{"ranks not dense", "ranks", func(rows []hmRow) {
			r := find(rows, real4)
			r["rankings.numerical_ranks"] = []any{int64(0), int64(2), int64(2), int64(3)}
		}},
		{"ranks not from 0", "ranks", func(rows []hmRow) {
			r := find(rows, real4)
			r["rankings.numerical_ranks"] = []any{int64(1), int64(2), int64(3), int64(4)}
		}},
		{"partly mock ranking", "ranks", func(rows []hmRow) {
			r := find(rows, real4)
			r["rankings.numerical_ranks"] = []any{int64(-1), int64(0), int64(1), int64(2)}
		}},
		{"ratings list too short", "aligned", func(rows []hmRow) {
			r := find(rows, real4)
			r["ratings.agreement"] = r["ratings.agreement"].([]any)[:3]
		}},
		{"other opinions misaligned", "aligned", func(rows []hmRow) {
			r := rows[0]
			r["other_opinions.text"] = r["other_opinions.text"].([]any)[1:]
		}},
		{"unknown Likert name", "likert", func(rows []hmRow) {
			r := find(rows, real4)
			r["ratings.quality"] = []any{"GOOD", "GOOD_QUALITY", "NEUTRAL", "NEUTRAL"}
		}},
		{"worker_id on training row", "worker_id", func(rows []hmRow) {
			find(rows, func(r hmRow) bool { return r["worker_id"] == nil })["worker_id"] = "abc"
		}},
		{"critique on iteration 0", "iteration nulls", func(rows []hmRow) {
			find(rows, func(r hmRow) bool { return r.i("iteration_index") == 0 })["critique.text"] = "x"
		}},
		{"ranking ids differ from candidates", "ranking ids", func(rows []hmRow) {
			r := find(rows, real4)
			ids := slices.Clone(r["rankings.candidate_ids"].([]any))
			ids[0] = strings.Repeat("f", 32)
			r["rankings.candidate_ids"] = ids
		}},
		{"two texts for one candidate", "id→text", func(rows []hmRow) {
			r := find(rows, real4)
			texts := slices.Clone(r["candidates.text"].([]any))
			texts[0] = "changed"
			r["candidates.text"] = texts
		}},
		{"panel member missing", "panel", func(rows []hmRow) {
			r := rows[0]
			r["other_opinions.metadata.id"] = append(slices.Clone(r["other_opinions.metadata.id"].([]any)[1:]), strings.Repeat("a", 32))
		}},
		{"updated not ISO", "updated", func(rows []hmRow) { rows[5]["metadata.updated"] = "2023-03-14 10:22:33" }},
		{"negating without NOT", "question", func(rows []hmRow) {
			rows[3]["question.negating_statement"] = rows[3]["question.affirming_statement"]
		}},
		{"unknown provenance", "provenance", func(rows []hmRow) { rows[2]["metadata.provenance"] = "HUMAN" }},
		{"index not increasing", "index", func(rows []hmRow) { rows[9]["index"] = int64(0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := make([]hmRow, len(base))
			for i, r := range base {
				rows[i] = hmRow{}
				for k, v := range r {
					rows[i][k] = v
				}
			}
			tc.mutate(rows)
			problems := checkHMComparisons(rows)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, tc.kind+":") }) {
				t.Errorf("mutation not reported as %q; problems: %q", tc.kind, problems)
			}
		})
	}
}

func TestHMSchulze(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	tests := []struct {
		name    string
		ids     []string
		ballots [][]int64 // ranks aligned with ids
		want    string
	}{
		{"condorcet winner", ids, [][]int64{{1, 0, 2, 3}, {1, 0, 3, 2}, {0, 1, 2, 3}}, "b"},
		{"no ballots: smallest id", ids, nil, "a"},
		{"single candidate", []string{"z"}, [][]int64{{0}}, "z"},
		{"full tie: smallest id", []string{"c", "b"}, [][]int64{{0, 1}, {1, 0}}, "b"},
		{"tied ranks count for neither", []string{"x", "y"}, [][]int64{{0, 0}, {0, 0}, {1, 0}}, "y"},
		// Cycle a>b (5:2), b>c (5:2), c>a (4:3): the weakest link c>a is
		// overridden by the path a>b>c of strength 5, so a wins.
		{"cycle", []string{"a", "b", "c"}, slices.Concat(
			hmRepeat([]int64{0, 1, 2}, 3), // a>b>c
			hmRepeat([]int64{2, 0, 1}, 2), // b>c>a
			hmRepeat([]int64{1, 2, 0}, 2), // c>a>b
		), "a"},
		// A cycle with equal strengths everywhere: all are winners, the
		// smallest id (listed last) is chosen.
		{"symmetric cycle", []string{"z", "y", "x"}, [][]int64{{0, 1, 2}, {2, 0, 1}, {1, 2, 0}}, "x"},
		// Wikipedia's 45-voter example (A..E); E wins.
		{"wikipedia", []string{"A", "B", "C", "D", "E"}, slices.Concat(
			hmRepeat([]int64{0, 2, 3, 4, 1}, 5), // ACBED
			hmRepeat([]int64{0, 4, 3, 1, 2}, 5), // ADECB
			hmRepeat([]int64{3, 0, 4, 1, 2}, 8), // BEDAC
			hmRepeat([]int64{1, 2, 0, 4, 3}, 3), // CABED
			hmRepeat([]int64{1, 4, 0, 3, 2}, 7), // CAEBD
			hmRepeat([]int64{2, 1, 0, 3, 4}, 2), // CBADE
			hmRepeat([]int64{4, 3, 1, 0, 2}, 7), // DCEBA
			hmRepeat([]int64{1, 4, 3, 2, 0}, 8), // EBADC
		), "E"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ids[hmSchulze(tc.ids, tc.ballots)]; got != tc.want {
				t.Errorf("hmSchulze = %s, want %s", got, tc.want)
			}
			var maps []map[string]int64
			for _, b := range tc.ballots {
				m := map[string]int64{}
				for i, id := range tc.ids {
					m[id] = b[i]
				}
				maps = append(maps, m)
			}
			if got := hmTestSchulze(tc.ids, maps); got != tc.want {
				t.Errorf("hmTestSchulze = %s, want %s", got, tc.want)
			}
		})
	}
}

func hmRepeat(b []int64, n int) [][]int64 {
	out := make([][]int64, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func TestResolveHMConfig(t *testing.T) {
	tests := []struct {
		name                      string
		rows                      int
		scale                     float64
		rowGroup                  int
		wantRows, wantPos, wantRG int
		wantErr                   bool
	}{
		{"defaults", -1, 0, 0, 300, 345, 100, false},
		{"scale 1", -1, 1, 0, 39955, 45976, 1997, false},
		{"scale 50", -1, 50, 0, 1997750, 2298800, 5000, false},
		{"rows beat scale", 2000, 3, 0, 2000, 2301, 100, false},
		{"explicit row group", 300, 0, 7, 300, 345, 7, false},
		{"zero rows", 0, 0, 0, 0, 0, 0, true},
		{"negative scale", -1, -2, 0, 0, 0, 0, true},
		{"negative row group", 10, 0, -1, 0, 0, 0, true},
		{"too big", -1, 5000, 0, 0, 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := resolveHMConfig("out", tc.rows, tc.scale, tc.rowGroup, 1)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (cfg.Rows != tc.wantRows || cfg.PosRows != tc.wantPos || cfg.RowGroup != tc.wantRG) {
				t.Errorf("got rows %d pos %d row group %d, want %d %d %d", cfg.Rows, cfg.PosRows, cfg.RowGroup, tc.wantRows, tc.wantPos, tc.wantRG)
			}
		})
	}
}

func TestHabermasCLI(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"ok", []string{"habermas", "--out", dir, "--rows", "40"}, 0},
		{"help", []string{"habermas", "-h"}, 0},
		{"no out", []string{"habermas"}, 1},
		{"extra args", []string{"habermas", "--out", dir, "x"}, 1},
		{"bad scale", []string{"habermas", "--out", dir, "--scale", "-1"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, stderr.String())
			}
		})
	}
	for _, name := range []string{hmComparisonsFile, hmPositionsFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestHabermasSampleMatchesTestdata checks the committed pandas-written
// sample: the release's writer quirks (question.topic a float column with
// two nulls, "element" list items, snappy, row groups of 100) and, apart
// from those, the same values as the generator's --rows 300 output. It
// fails when the two drift apart: rerun make habermas-sample.
func TestHabermasSampleMatchesTestdata(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	hmGenerate(t, dir, hmDefaultRows, hmDefaultSeed)
	tests := []struct {
		name      string
		file      string
		schema    [][2]string
		rowGroups int
	}{
		{"comparisons", hmComparisonsFile, hmTestCompSchema, 3},
		{"position ratings", hmPositionsFile, hmTestPosSchema, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "habermas", tc.file)
			committed := readHMFile(t, path, mem)
			fresh := readHMFile(t, filepath.Join(dir, tc.file), mem)
			want := slices.Clone(tc.schema)
			for i := range want {
				if want[i][0] == "question.topic" {
					want[i][1] = "float64"
				}
			}
			checkHMSchema(t, committed, want)
			if committed.rowGroups != tc.rowGroups {
				t.Errorf("%d row groups, want %d", committed.rowGroups, tc.rowGroups)
			}
			rdr, err := file.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			defer rdr.Close()
			if rdr.MetaData().Schema.ColumnIndexByName("ratings.agreement.list.element") < 0 {
				t.Errorf("no pyarrow-style list element in %s", path)
			}
			if !strings.HasPrefix(rdr.MetaData().GetCreatedBy(), "parquet-cpp-arrow") {
				t.Errorf("created_by %q: not written by pyarrow", rdr.MetaData().GetCreatedBy())
			}
			if len(committed.rows) != len(fresh.rows) {
				t.Fatalf("%d committed rows, generator gives %d", len(committed.rows), len(fresh.rows))
			}
			nanTopics := 0
			for i, c := range committed.rows {
				f := fresh.rows[i]
				switch v := c["question.topic"].(type) {
				case nil:
					nanTopics++
				case float64:
					if v != float64(f.i("question.topic")) {
						t.Errorf("row %d: question.topic %v, generator %d", i, v, f.i("question.topic"))
					}
				}
				for k, v := range f {
					if k != "question.topic" && !reflect.DeepEqual(c[k], v) {
						t.Errorf("row %d: %s differs from the generator (%v vs %v); rerun make habermas-sample", i, k, c[k], v)
						return
					}
				}
			}
			if nanTopics != 2 {
				t.Errorf("%d null question.topic values, want 2", nanTopics)
			}
		})
	}
}

// TestHabermasTextWidth: --text-width k keeps every row, id and rank and
// makes each free text about k times as long, the same text widening the
// same way wherever it appears; short fields stay as they are.
func TestHabermasTextWidth(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	read := func(width int) []hmRow {
		dir := t.TempDir()
		cfg, err := resolveHMConfig(dir, 120, 0, 0, hmDefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		cfg.mem, cfg.TextWidth = mem, width
		if _, err := generateHabermas(cfg); err != nil {
			t.Fatal(err)
		}
		return readHMFile(t, filepath.Join(dir, hmComparisonsFile), mem).rows
	}
	narrow, wide := read(1), read(4)
	if len(narrow) != len(wide) {
		t.Fatalf("%d rows at width 1, %d at width 4", len(narrow), len(wide))
	}
	widened := map[string]string{}
	for i := range narrow {
		for _, col := range []string{"metadata.id", "round_id", "question.text", "metadata.version"} {
			if narrow[i].s(col) != wide[i].s(col) {
				t.Fatalf("row %d: %s changed with the width", i, col)
			}
		}
		a, b := narrow[i].s("own_opinion.text"), wide[i].s("own_opinion.text")
		if a == "" {
			continue
		}
		if !strings.HasPrefix(b, a) || len(b) < 4*len(a) || len(b) > 4*len(a)+40 {
			t.Fatalf("row %d: own opinion of %d bytes widened to %d bytes (want about %d, starting with the text)", i, len(a), len(b), 4*len(a))
		}
		if prev, ok := widened[a]; ok && prev != b {
			t.Fatalf("row %d: the same opinion widened two ways", i)
		}
		widened[a] = b
	}
	if len(widened) == 0 {
		t.Fatal("no own opinion text to compare")
	}
}
