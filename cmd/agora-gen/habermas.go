package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Habermas Machine (Tessler, Bakker et al., Science 2024): groups of
// citizens deliberate on a question, a model mediator drafts group
// statements, people rank and rate them, critique the winner and rank the
// revisions.
//
//	go run ./cmd/agora-gen habermas --out DIR [--rows N | --scale F] [--seed S] [--row-group N]
//
// Two of the release's parquet files are written, as pandas+pyarrow would:
//
//   - hm_all_candidate_comparisons.parquet: one row per participant ×
//     round × iteration. The columns are FLAT top-level names that contain
//     dots ("candidates.metadata.id" is one name, not a struct path); they
//     mix scalars, list<string>, list<int64>, list<list<float64>> and
//     list<list<string>>. A group (launch_id, 32 hex) of 4–5 people (3 when
//     the panel is incomplete, 6 in the virtual citizens' assembly) takes 3
//     rounds (round_id, one question each). Iteration 0 shows the initial
//     candidates (critique.* and top_candidate.* null); iteration 1 shows
//     the revisions (critique.* set; top_candidate.* is the iteration-0
//     Schulze winner of that round, computed from the round's rankings with
//     mock (-1) and non-COMPLETED rankings left out and ties broken by the
//     smallest candidate id).
//   - Aligned lists: candidates.*, rankings.candidate_ids/numerical_ranks
//     and ratings.* have one element per shown candidate (usually 4,
//     sometimes 1–3); other_opinions.* one per other panel member. Every
//     participant of a round-iteration sees the same id→text map, in their
//     own display order (display labels A–D follow that order), and
//     rankings.candidate_ids is often in yet another order (best first).
//   - Ranks are 0 = best with dense ties (0,1,1,2); a mock ranking is all
//     -1 (bots, timed-out rows). Likert ratings are enum names, MOCK
//     included. Provenances are ResponseProvenance names (HUMAN_CITIZEN,
//     BOT_CITIZEN, MOCK, MODEL_MEDIATOR, HUMAN_MEDIATOR).
//   - metadata.version holds the 14 cohorts in the release's proportions;
//     worker_id is null exactly on TRAINING_* rows, and so is the whole
//     candidates.reward_data.welfare_or_rank value.
//   - metadata.created is timestamp[ns, UTC], timestamp is
//     timestamp[ms, UTC], metadata.updated is an ISO 8601 string as Python's
//     isoformat() prints it (no fraction when the microseconds are 0), and
//     the leaked pandas "index" column has gaps.
//   - hm_all_position_statement_ratings.parquet: the 26 columns of the
//     release, one row per participant × question × rating_index (0 before
//     deliberation, 1 after) with ratings.agreement a one-element list
//     (MOCK ~13%). Its groups, participants and questions are those of the
//     comparisons file, plus groups that only rated position statements.
//
// The files carry a pyarrow-style "pandas" key-value metadata entry and the
// ARROW:schema, use 3-level lists (arrow-go names the item "element", as
// pyarrow does), are zstd-compressed at level 1 (the pandas-written sample
// is snappy, so readers meet both codecs), and have row groups of
// --row-group rows (default: rows/20 clamped to [100, 5000], so the 300-row
// output has three). They are streamed row group by row group; memory does
// not grow with --scale (about 350 MB peak with 5,000-row groups).
//
// --scale 1 is the release's size (39,955 comparison rows, 45,976 position
// rating rows); --rows N sets the comparison rows directly (default 300,
// the position file keeps the release ratio). Output is a pure function of
// the flags and --seed (default 2024): per-group random streams, no map
// order, no clock, and only PCG's raw stream plus integer and basic IEEE
// arithmetic.
//
// Invented where the release is silent: texts (template-built UK English),
// dates, durations, worker_id format (24 hex), own_opinion.display_label,
// status values other than COMPLETED, aggregation method names, model
// api_version names, reward numbers, which cohorts used which split, and
// that the 6-person setup is the virtual citizens' assembly.
//
// # Shipped sample
//
// testdata/habermas holds a pandas-written copy of the 300-row output
// (pandas.read_parquet, then DataFrame.to_parquet through pyarrow, the
// release's writer, with snappy and row groups of 100), made by
//
//	.venv/bin/python testdata/habermas/make_sample.py   # make habermas-sample
//
// which runs this generator with --rows 300 first. Rerun it (and review the
// diff) when the generator changes.

// Size of the real release (--scale 1).
const (
	hmReleaseComparisons = 39_955
	hmReleasePositions   = 45_976
	hmDefaultRows        = 300
	hmDefaultSeed        = 2024
	hmMaxRows            = 50_000_000
	hmMinRowGroup        = 100
	hmMaxRowGroup        = 5_000
)

// File names of the release.
const (
	hmComparisonsFile = "hm_all_candidate_comparisons.parquet"
	hmPositionsFile   = "hm_all_position_statement_ratings.parquet"
)

// Stream tags (distinct from the other generators' tags).
const (
	hmTagGroup uint64 = 0x4ab3_0000_0000 + iota
	hmTagQuestion
	hmTagStance
	hmTagRound
	hmTagText
	hmTagRow
	hmTagPosRow
	hmTagIndex
	hmTagWiden
)

// Question splits, as stored (upper-case enum names).
const (
	hmTrain = iota
	hmIID
	hmOOD
)

var hmSplitNames = [3]string{"TRAIN", "IID_TEST", "OOD_TEST"}

// hmReleasePools is the number of distinct questions per split behind the
// release's 2,250 (the split shares are invented).
var hmReleasePools = [3]int{1350, 675, 225}

// hmVersion is one cohort (metadata.version).
type hmVersion struct {
	name  string
	rows  int    // comparison rows in the release
	split int    // split its questions come from
	start string // first day of data collection (invented)
	days  int    // length of data collection (invented)
}

// hmVersions are the 14 cohorts with their release row counts.
var hmVersions = [...]hmVersion{
	{"TRAINING_DATA_V1", 6955, hmTrain, "2022-09-05", 28},
	{"TRAINING_DATA_V2", 3845, hmTrain, "2022-10-10", 21},
	{"TRAINING_DATA_V3", 2555, hmTrain, "2022-11-14", 14},
	{"TRAINING_DATA_V4", 1580, hmTrain, "2022-12-05", 10},
	{"TRAINING_DATA_V5", 660, hmTrain, "2023-01-09", 7},
	{"EVAL_COHORT1_ABLATION_IID_V1", 5085, hmIID, "2023-02-06", 21},
	{"EVAL_COHORT2_ABLATION_IID_V2", 5920, hmIID, "2023-03-06", 21},
	{"EVAL_COHORT3_ABLATION_OOD_V1", 3920, hmOOD, "2023-04-03", 21},
	{"EVAL_COHORT4_CRITIQUE_EXCLUSION", 2790, hmIID, "2023-05-02", 14},
	{"EVAL_COHORT5_OPINION_EXPOSURE", 1265, hmIID, "2023-06-05", 10},
	{"EVAL_COHORT6_HUMAN_MEDIATOR", 2150, hmIID, "2023-07-03", 14},
	{"EVAL_VIRTUAL_CITIZENS_ASSEMBLY_WEEK3", 1090, hmOOD, "2023-10-16", 5},
	{"EVAL_VIRTUAL_CITIZENS_ASSEMBLY_WEEK4", 1080, hmOOD, "2023-10-23", 5},
	{"EVAL_VIRTUAL_CITIZENS_ASSEMBLY_WEEK5", 1060, hmOOD, "2023-10-30", 5},
}

const (
	hmVerCohort4 = 8
	hmVerCohort5 = 9
	hmVerCohort6 = 10
	hmVerVCA     = 11 // this and later: the virtual citizens' assembly (panels of 6)
)

func (v *hmVersion) training() bool { return strings.HasPrefix(v.name, "TRAINING_") }

// startUnix is the version's first day at 00:00 UTC.
func (v *hmVersion) startUnix() int64 {
	t, err := time.Parse("2006-01-02", v.start)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

// Enumerations (names as serialised).
var (
	hmAgreement = [7]string{"STRONGLY_DISAGREE", "DISAGREE", "SOMEWHAT_DISAGREE", "NEUTRAL", "SOMEWHAT_AGREE", "AGREE", "STRONGLY_AGREE"}
	hmQuality   = [7]string{"TERRIBLE_QUALITY", "POOR_QUALITY", "SOMEWHAT_POOR_QUALITY", "NEUTRAL", "SOMEWHAT_GOOD_QUALITY", "GOOD_QUALITY", "EXCELLENT_QUALITY"}
	// hmAgreementWeights is the release's position-rating distribution of
	// the non-MOCK values, in hmAgreement order.
	hmAgreementWeights = [7]int{5773, 5174, 3275, 3717, 5641, 8523, 8068}
	hmLabels           = [4]string{"A", "B", "C", "D"}
	hmAPIVersions      = [3]string{"chinchilla_70b_mediator_sft_v2", "chinchilla_70b_mediator_sft_v3", "chinchilla_70b_mediator_rm_best_of_16"}
)

const (
	hmMock          = "MOCK"
	hmCompleted     = "COMPLETED"
	hmHumanCitizen  = "HUMAN_CITIZEN"
	hmBotCitizen    = "BOT_CITIZEN"
	hmModelMediator = "MODEL_MEDIATOR"
	hmHumanMediator = "HUMAN_MEDIATOR"
	hmFinalPrefix   = "Final consensus statement: "
)

// hmConfig is a fully resolved generation request.
type hmConfig struct {
	// Out is the output directory.
	Out string
	// Rows is the number of candidate comparison rows.
	Rows int
	// PosRows is the number of position statement rating rows.
	PosRows int
	// RowGroup is the number of rows per parquet row group.
	RowGroup int
	// Seed selects the random streams.
	Seed uint64
	// TextWidth makes every free text (opinions, critiques, candidate
	// statements and their variants) this many times as long, with words
	// drawn from a stream seeded by the text (see widen): the release's rows
	// are about 25 times wider than the template texts, so a file can grow
	// the way the real one differs from the sample, in width, with the
	// same rows, rounds and keys. 0 and 1 leave texts as they are.
	TextWidth int
	// ListStatus writes rankings.metadata.status as a list per candidate
	// (the row's status repeated), the other shape the release's metadata
	// columns may have: agora must read either into the same table.
	ListStatus bool
	// mem allocates Arrow buffers (nil: the Go allocator).
	mem memory.Allocator
}

// hmFileStat reports one written file.
type hmFileStat struct {
	Name      string
	Rows      int
	RowGroups int
	Bytes     int64
}

func runHabermas(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("habermas", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output directory (created if missing; required)")
	rowsFlag := optionalInt{n: -1}
	fs.Var(&rowsFlag, "rows", "candidate comparison `rows` (default 300 unless --scale is given)")
	rows := &rowsFlag.n
	scale := fs.Float64("scale", 0, "size relative to the real release (1 = 39,955 comparison and 45,976 position rating rows)")
	rowGroup := fs.Int("row-group", 0, "rows per parquet row group (0 = rows/20 clamped to [100, 5000])")
	seed := fs.Uint64("seed", hmDefaultSeed, "random seed; equal flags and seed give byte-identical files")
	listStatus := fs.Bool("list-status", false, "write rankings.metadata.status as a list per candidate (the row's status repeated), the other shape the release may have")
	width := fs.Int("text-width", 1, "make every free text this many times as long (grows the file in width, as the release is wider than the templates, with the same rows)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: agora-gen habermas --out DIR [--rows N | --scale F] [--text-width K] [--list-status] [--seed S] [--row-group N]\n\n"+
			"Writes %s and %s\nin the Habermas Machine release format into DIR.\n\n", hmComparisonsFile, hmPositionsFile)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, out); err != nil {
		return err
	}
	cfg, err := resolveHMConfig(*out, *rows, *scale, *rowGroup, *seed)
	if err != nil {
		return err
	}
	if *width < 1 {
		return fmt.Errorf("habermas: --text-width must be >= 1, got %d", *width)
	}
	cfg.TextWidth = *width
	cfg.ListStatus = *listStatus
	stats, err := generateHabermas(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "habermas: %d comparison rows, %d position rating rows, seed %d -> %s\n", cfg.Rows, cfg.PosRows, cfg.Seed, cfg.Out)
	for _, s := range stats {
		fmt.Fprintf(stdout, "  %-42s %9d rows %5d row groups %12d bytes\n", s.Name, s.Rows, s.RowGroups, s.Bytes)
	}
	return nil
}

// resolveHMConfig turns flags into counts; rows < 0 and scale == 0 mean unset.
func resolveHMConfig(out string, rows int, scale float64, rowGroup int, seed uint64) (hmConfig, error) {
	if scale < 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		return hmConfig{}, fmt.Errorf("habermas: --scale must be > 0, got %v", scale)
	}
	n := hmDefaultRows
	switch {
	case rows >= 0:
		n = rows
	case scale > 0:
		if x := math.Round(hmReleaseComparisons * scale); x <= hmMaxRows {
			n = int(x)
		} else {
			n = hmMaxRows + 1
		}
	}
	switch {
	case n < 1:
		return hmConfig{}, fmt.Errorf("habermas: need at least 1 row, got %d", n)
	case n > hmMaxRows:
		return hmConfig{}, fmt.Errorf("habermas: at most %d rows supported", hmMaxRows)
	case rowGroup < 0:
		return hmConfig{}, fmt.Errorf("habermas: --row-group must be >= 0, got %d", rowGroup)
	}
	pos := int((int64(n)*hmReleasePositions + hmReleaseComparisons/2) / hmReleaseComparisons)
	if rowGroup == 0 {
		rowGroup = min(max(n/20, hmMinRowGroup), hmMaxRowGroup)
	}
	return hmConfig{Out: out, Rows: n, PosRows: pos, RowGroup: rowGroup, Seed: seed}, nil
}

// ---------------------------------------------------------------------------
// Plan: which cohort each group belongs to.

// hmPlanner hands out groups in file order. A group's cohort is the one
// furthest below its share of --rows so far (ties: table order), so every
// prefix of the file has the release's proportions and the first 14
// groups cover the 14 cohorts. The position file uses its own planner and
// so sees the same groups, then more.
type hmPlanner struct {
	cfg      *hmConfig
	target   [len(hmVersions)]int64
	emitted  [len(hmVersions)]int64
	groups   [len(hmVersions)]int
	expected [len(hmVersions)]int
	pools    [3]int
	qNext    [3]int // next question of each split's pool (used cyclically)
	next     int
}

func newHMPlanner(cfg *hmConfig) *hmPlanner {
	p := &hmPlanner{cfg: cfg}
	// Largest remainder apportionment of cfg.Rows.
	type rem struct {
		v int
		r int64
	}
	var rems []rem
	var total int64
	for v, ver := range hmVersions {
		num := int64(ver.rows) * int64(cfg.Rows)
		p.target[v] = num / hmReleaseComparisons
		total += p.target[v]
		rems = append(rems, rem{v, num % hmReleaseComparisons})
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.r > b.r:
			return -1
		case a.r < b.r:
			return 1
		}
		return 0
	})
	for i := 0; total < int64(cfg.Rows); i++ {
		p.target[rems[i].v]++
		total++
	}
	for v := range p.target {
		p.expected[v] = int(max(1, (p.target[v]+26)/27))
	}
	for s, n := range hmReleasePools {
		p.pools[s] = max(3, int((int64(n)*int64(cfg.Rows)+hmReleaseComparisons/2)/hmReleaseComparisons))
	}
	return p
}

// pick chooses the next group's cohort.
func (p *hmPlanner) pick() int {
	best := -1
	for v := range hmVersions {
		if p.target[v] == 0 {
			continue
		}
		if best < 0 || (p.target[v]-p.emitted[v])*p.target[best] > (p.target[best]-p.emitted[best])*p.target[v] {
			best = v
		}
	}
	if best < 0 {
		best = 0
	}
	return best
}

func (p *hmPlanner) nextGroup() *hmGroup {
	v := p.pick()
	split := hmVersions[v].split
	g := buildHMGroup(p.cfg.Seed, p.next, v, p.groups[v], p.expected[v], p.qNext[split], p.pools[split])
	p.qNext[split] = (p.qNext[split] + len(g.rounds)) % p.pools[split]
	p.next++
	p.groups[v]++
	p.emitted[v] += int64(g.compRows)
	return g
}

// ---------------------------------------------------------------------------
// Groups, questions and rounds.

type hmQuestion struct {
	id, text, aff, neg, split string
	topic                     int64
	subj, act                 string // for the texts of the round
}

type hmMember struct {
	pid, worker string
	bot         bool
}

type hmRoundSpec struct {
	q       hmQuestion
	present []int // member indexes in the round's panel
	iters   int   // 1 or 2
	start   int64 // unix µs
	id      string
}

type hmGroup struct {
	idx, version int
	launch       string
	members      []hmMember
	rounds       []hmRoundSpec
	compRows     int
	serverStart  int64 // unix ms that monotonic_timestamp counts from
}

func hmHex(r *rnd, n int) string {
	var b strings.Builder
	b.Grow(n)
	var x uint64
	for i := range n {
		if i%16 == 0 {
			x = r.uint64()
		}
		b.WriteByte(hexDigits[x&15])
		x >>= 4
	}
	return b.String()
}

// hmQuestionAt returns question q of a split's pool. Ids are "S" + 9
// digits from a bijection of (q, split), so they never collide.
func hmQuestionAt(seed uint64, split, q int) hmQuestion {
	n := uint64(q)*3 + uint64(split)
	id := (n*387_420_489 + 173_961_439 + seed%1_000_000_000) % 1_000_000_000
	r := newRnd(seed, hmTagQuestion, uint64(split), uint64(q))
	var issues []int
	for i, is := range hmIssues {
		if is.ood == (split == hmOOD) {
			issues = append(issues, i)
		}
	}
	ii := pick(r, issues)
	is := hmIssues[ii]
	lo := int64(ii * 105 / len(hmIssues))
	hi := int64((ii + 1) * 105 / len(hmIssues))
	act := is.act + pick(r, hmQualifiers)
	subj := upperFirst(is.subj)
	return hmQuestion{
		id:    fmt.Sprintf("S%09d", id),
		text:  "Should " + is.subj + " " + act + "?",
		aff:   subj + " should " + act + ".",
		neg:   subj + " should NOT " + act + ".",
		split: hmSplitNames[split],
		topic: lo + int64(r.intn(int(max(1, hi-lo)))),
		subj:  is.subj,
		act:   act,
	}
}

// buildHMGroup builds group idx of cohort v, its k-th of about expected;
// its questions are qStart, qStart+1, … of the cohort's split pool.
func buildHMGroup(seed uint64, idx, v, k, expected, qStart, pool int) *hmGroup {
	ver := &hmVersions[v]
	r := newRnd(seed, hmTagGroup, uint64(idx))
	g := &hmGroup{idx: idx, version: v, launch: hmHex(r, 32)}
	panel := 5
	switch x := r.intn(100); {
	case v >= hmVerVCA:
		panel = 6
		if x < 20 {
			panel = 5
		}
	case x < 8:
		panel = 3
	case x < 42:
		panel = 4
	}
	if idx == 2 && v < hmVerVCA {
		panel = 3 // every output has an incomplete panel
	}
	g.members = make([]hmMember, panel)
	for m := range g.members {
		g.members[m] = hmMember{pid: hmHex(r, 10), worker: hmHex(r, 24)}
		if ver.training() && r.chance(0.05) {
			g.members[m].bot = true
		}
	}
	if idx == 0 {
		g.members[panel-1].bot = true // every output has a bot
	}
	nRounds := 3
	if x := r.intn(100); x < 1 {
		nRounds = 1
	} else if x < 4 {
		nRounds = 2
	}
	dropRound, dropMember := -1, -1
	if panel >= 4 && nRounds == 3 && r.chance(0.05) {
		dropRound, dropMember = 1+r.intn(2), r.intn(panel)
	}
	// Schedule: sessions spread over the cohort's days, 09:00–20:00 UTC.
	day := int64(k * ver.days / expected)
	day = min(day, int64(ver.days-1))
	startSec := ver.startUnix() + day*86400 + int64(9*3600+r.intn(11*3600))
	g.serverStart = (ver.startUnix() - 3*86400 + int64(r.intn(3600))) * 1000
	t := startSec*1_000_000 + int64(r.intn(1_000_000))
	for ri := range nRounds {
		q := hmQuestionAt(seed, ver.split, (qStart+ri)%pool)
		rs := hmRoundSpec{q: q, iters: 2, start: t, id: hmHex(r, 32)}
		for m := range panel {
			if dropRound >= 0 && ri >= dropRound && m == dropMember {
				continue
			}
			rs.present = append(rs.present, m)
		}
		if r.chance(0.02) {
			rs.iters = 1
		}
		g.rounds = append(g.rounds, rs)
		g.compRows += len(rs.present) * rs.iters
		t += int64(25*60+r.intn(15*60)) * 1_000_000
	}
	return g
}

// hmStance is a member's agreement (1..7) with the question's affirming
// statement before deliberation; shared by both files.
func hmStance(seed uint64, g, ri, m int) int {
	r := newRnd(seed, hmTagStance, uint64(g), uint64(ri), uint64(m))
	x := r.intn(40171)
	for i, w := range hmAgreementWeights {
		if x < w {
			return i + 1
		}
		x -= w
	}
	return 7
}

// hmStatement is an opinion, critique or candidate.
type hmStatement struct {
	id, text, prov, status string
	pos, quality           float64 // stance in [-1, 1] and quality (candidates)
	method                 string
	reward, welfare        []float64
	parents, allTexts      []string
	api                    string
}

// hmVote is one participant's view of one round-iteration.
type hmVote struct {
	member     int
	mock       bool // timed-out human: MOCK row
	status     string
	display    []int   // candidate indexes in display order
	ranks      []int64 // by candidate index
	rankSorted bool    // rankings.candidate_ids best first (else display order)
	agreement  []string
	quality    []string
	created    int64 // µs
	taskDur    float64
	respDur    float64
}

type hmIteration struct {
	id    string
	cands []hmStatement
	votes []hmVote
	start int64
}

type hmRound struct {
	spec      *hmRoundSpec
	ri        int
	opinions  []hmStatement // by position in spec.present
	critiques []hmStatement
	iters     []hmIteration
	winner    int // iteration-0 Schulze winner (candidate index)
}

// hmSyllables build the words widen adds.
var hmSyllables = strings.Fields("de li ber at ion con sen sus pol icy pub lic ser vice re form tax health care hous ing a gree ment pro pos al vote ci ti zen gov ern ment ben e fit cost fair ness com mu ni ty ed u ca tion")

// widen makes every free text of the round k times as long: the text,
// then words drawn from a stream seeded by the text itself, so the same
// text widens the same way wherever it appears and the file grows in
// bytes (a repeated text would compress away).
func (rd *hmRound) widen(k int) {
	if k <= 1 {
		return
	}
	w := func(s string) string {
		if s == "" {
			return s
		}
		h := fnv.New64a()
		h.Write([]byte(s))
		r := newRnd(h.Sum64(), hmTagWiden)
		var b strings.Builder
		b.Grow(k * len(s))
		b.WriteString(s)
		for b.Len() < k*len(s) {
			b.WriteByte(' ')
			for n := r.between(1, 4); n > 0; n-- {
				b.WriteString(hmSyllables[r.intn(len(hmSyllables))])
			}
		}
		return b.String()
	}
	for i := range rd.opinions {
		rd.opinions[i].text = w(rd.opinions[i].text)
	}
	for i := range rd.critiques {
		rd.critiques[i].text = w(rd.critiques[i].text)
	}
	for it := range rd.iters {
		for c := range rd.iters[it].cands {
			cand := &rd.iters[it].cands[c]
			cand.text = w(cand.text)
			for j := range cand.allTexts {
				cand.allTexts[j] = w(cand.allTexts[j])
			}
		}
	}
}

// hmSchulze returns the index of the Schulze winner among ids given
// ballots of dense ranks aligned with ids (0 = best). Among several
// winners the smallest id wins.
func hmSchulze(ids []string, ballots [][]int64) int {
	n := len(ids)
	d := make([][]int, n)
	p := make([][]int, n)
	for i := range n {
		d[i] = make([]int, n)
		p[i] = make([]int, n)
	}
	for _, b := range ballots {
		for i := range n {
			for j := range n {
				if i != j && b[i] < b[j] {
					d[i][j]++
				}
			}
		}
	}
	for i := range n {
		for j := range n {
			if i != j && d[i][j] > d[j][i] {
				p[i][j] = d[i][j]
			}
		}
	}
	for k := range n {
		for i := range n {
			if i == k {
				continue
			}
			for j := range n {
				if j != i && j != k {
					p[i][j] = max(p[i][j], min(p[i][k], p[k][j]))
				}
			}
		}
	}
	best := -1
	for i := range n {
		win := true
		for j := range n {
			if j != i && p[j][i] > p[i][j] {
				win = false
				break
			}
		}
		if win && (best < 0 || ids[i] < ids[best]) {
			best = i
		}
	}
	return best
}

// hmCandidateCount draws the number of statements shown in a
// round-iteration ({4: 7359, 2: 148, 3: 50, 1: 7} in the release).
func hmCandidateCount(r *rnd) int {
	switch x := r.intn(7564); {
	case x < 7:
		return 1
	case x < 57:
		return 3
	case x < 205:
		return 2
	}
	return 4
}

func hmLevel(x float64) int { return int(min(max(math.Round(x), 1), 7)) }

func buildHMRound(seed uint64, g *hmGroup, ri int) *hmRound {
	spec := &g.rounds[ri]
	ver := &hmVersions[g.version]
	r := newRnd(seed, hmTagRound, uint64(g.idx), uint64(ri))
	tg := newHMText(newRnd(seed, hmTagText, uint64(g.idx), uint64(ri)), spec.q)
	rd := &hmRound{spec: spec, ri: ri}
	np := len(spec.present)
	stance := make([]float64, np)
	meanStance := 0.0
	for i, m := range spec.present {
		stance[i] = float64(hmStance(seed, g.idx, ri, m)-4) / 3
		meanStance += stance[i]
	}
	meanStance /= float64(np)

	for i, m := range spec.present {
		op := hmStatement{id: hmHex(r, 32), prov: hmHumanCitizen, status: hmCompleted, pos: stance[i]}
		if g.members[m].bot {
			op.prov = hmBotCitizen
			op.text = tg.botOpinion(stance[i])
		} else {
			op.text = tg.opinion(stance[i])
		}
		rd.opinions = append(rd.opinions, op)
	}

	api := pick(r, hmAPIVersions[:])
	iterStart := spec.start + int64(6*60+r.intn(4*60))*1_000_000
	for it := range spec.iters {
		iter := hmIteration{id: hmHex(r, 32), start: iterStart}
		n := hmCandidateCount(r)
		if g.idx == 1 && ri == 0 && it == 0 {
			n = 2 // every output has a short candidate list
		}
		if it == 1 {
			// Critiques of the iteration-0 winner.
			for i, m := range spec.present {
				c := hmStatement{id: hmHex(r, 32), prov: hmHumanCitizen, status: hmCompleted}
				switch {
				case g.members[m].bot:
					c.prov, c.text = hmBotCitizen, tg.botCritique()
				default:
					c.text = tg.critique(stance[i])
				}
				rd.critiques = append(rd.critiques, c)
			}
		}
		var base *hmStatement
		if it == 1 {
			base = &rd.iters[0].cands[rd.winner]
		}
		for k := range n {
			c := hmStatement{id: hmHex(r, 32), prov: hmModelMediator, method: "SCHULZE", api: api}
			c.quality = r.normal() * 0.6
			switch {
			case it == 0:
				c.pos = min(max(meanStance+r.normal()*0.35, -1), 1)
				c.text = tg.statement(c.pos, false)
				for _, op := range rd.opinions {
					c.parents = append(c.parents, op.id)
				}
			default:
				c.pos = min(max(base.pos+r.normal()*0.15, -1), 1)
				c.quality += 0.3
				c.text = tg.revision(c.pos)
				if r.chance(0.3) {
					c.text = hmFinalPrefix + c.text
				}
				c.parents = []string{base.id}
				if g.version != hmVerCohort4 { // revisions ignore the critiques
					for _, cr := range rd.critiques {
						c.parents = append(c.parents, cr.id)
					}
				}
			}
			human := false
			switch {
			case g.version == hmVerCohort5 && it == 0 && k == n-1 && n > 1:
				c.prov, c.method, human = hmHumanCitizen, "NONE", true
				c.text = rd.opinions[r.intn(np)].text
				c.parents = nil
			case g.version == hmVerCohort6 && k == n-1 && n > 1:
				c.prov, c.method, human = hmHumanMediator, "NONE", true
				c.text = tg.statement(c.pos, false)
			}
			if ver.training() {
				switch x := r.intn(100); {
				case x < 2 || (g.idx == 0 && ri == 2 && it == 0 && k == 0):
					c.text = "" // blank statements occur in training data
				case x < 3:
					c.text = pick(r, hmShortStatements)
				}
			}
			c.allTexts = []string{c.text}
			if !human {
				for range r.intn(3) {
					c.allTexts = append(c.allTexts, tg.variant(c.text, c.pos))
				}
				shuffle(r, c.allTexts)
				for range np {
					c.reward = append(c.reward, math.Round((0.5+c.quality*0.2+r.normal()*0.1)*1e6)/1e6)
				}
			}
			if human {
				c.api = ""
			}
			if !ver.training() {
				for range np {
					c.welfare = append(c.welfare, float64(1+r.intn(n)))
				}
			}
			iter.cands = append(iter.cands, c)
		}

		// Votes.
		for i, m := range spec.present {
			rr := newRnd(seed, hmTagRow, uint64(g.idx), uint64(ri), uint64(it), uint64(m))
			v := hmVote{member: m, status: hmCompleted}
			v.created = iter.start + int64(rr.intn(45_000_000))
			v.taskDur = float64(60_000+rr.intn(540_000)) / 1000
			v.respDur = math.Round(v.taskDur*(0.5+0.45*rr.float())*1000) / 1000
			v.display = rr.perm(n)
			v.rankSorted = rr.chance(0.65)
			mock := g.members[m].bot
			if !mock && rr.chance(0.035) {
				v.mock, mock = true, true
				v.status = pick(rr, []string{"ABANDONED", "TIMED_OUT", "TIMED_OUT", "RETURNED"})
				v.created -= v.created % 1_000_000 // whole seconds: isoformat drops the fraction
				v.taskDur, v.respDur = math.Round(v.taskDur), 0
			}
			v.ranks = make([]int64, n)
			v.agreement = make([]string, n)
			v.quality = make([]string, n)
			if mock {
				for k := range n {
					v.ranks[k] = -1
					v.agreement[k], v.quality[k] = hmMock, hmMock
				}
			} else {
				util := make([]float64, n)
				for k, c := range iter.cands {
					util[k] = c.quality - 0.8*math.Abs(stance[i]-c.pos) + 0.3*rr.normal()
					v.agreement[k] = hmAgreement[hmLevel(5+2.5*util[k]+0.6*rr.normal())-1]
					v.quality[k] = hmQuality[hmLevel(4.3+2*c.quality+util[k]+0.6*rr.normal())-1]
				}
				v.ranks = hmDenseRanks(util, 0.08)
			}
			iter.votes = append(iter.votes, v)
		}
		if it == 0 {
			ids := make([]string, n)
			for k, c := range iter.cands {
				ids[k] = c.id
			}
			var ballots [][]int64
			for _, v := range iter.votes {
				if v.status == hmCompleted && v.ranks[0] >= 0 {
					ballots = append(ballots, v.ranks)
				}
			}
			rd.winner = hmSchulze(ids, ballots)
		}
		rd.iters = append(rd.iters, iter)
		iterStart += int64(10*60+r.intn(6*60)) * 1_000_000
	}
	return rd
}

// hmDenseRanks ranks utilities (higher is better) as dense 0-based ranks;
// neighbours closer than tie are tied.
func hmDenseRanks(util []float64, tie float64) []int64 {
	order := make([]int, len(util))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case util[a] > util[b]:
			return -1
		case util[a] < util[b]:
			return 1
		}
		return 0
	})
	ranks := make([]int64, len(util))
	rank := int64(0)
	for i, k := range order {
		if i > 0 && util[order[i-1]]-util[k] >= tie {
			rank++
		}
		ranks[k] = rank
	}
	return ranks
}

// ---------------------------------------------------------------------------
// Output rows.

type hmCompRow struct {
	index        int64
	mono         float64
	launch       string
	round        string
	iterID       string
	iterIdx      int64
	candIDs      []string
	candTexts    []string
	candProv     []string
	candLabels   []string
	candMethod   []string
	candReward   [][]float64
	candWelfare  [][]float64
	candParents  [][]string
	candAllTexts [][]string
	hasCrit      bool
	critText     string
	critID       string
	critProv     string
	created      int64 // µs
	id           string
	pid          string
	prov         string
	respDur      float64
	status       string
	taskDur      float64
	updated      string
	version      string
	otherTexts   []string
	otherIDs     []string
	otherProv    []string
	otherPIDs    []string
	ownText      string
	ownID        string
	ownProv      string
	ownStatus    string
	ownLabel     string
	q            *hmQuestion
	rankIDs      []string
	ranks        []int64
	rankStatus   string
	agreement    []string
	quality      []string
	timestamp    int64 // ms
	hasTop       bool
	top          *hmStatement
	worker       string
	hasWorker    bool
}

type hmPosRow struct {
	index      int64
	mono       float64
	launch     string
	created    int64 // µs
	id         string
	pid        string
	prov       string
	respDur    float64
	status     string
	taskDur    float64
	updated    string
	version    string
	q          *hmQuestion
	qIndex     int64
	ratingIdx  int64
	agreement  string
	ratCreated int64 // µs
	ratID      string
	timestamp  int64 // ms
	worker     string
	hasWorker  bool
}

// hmISO formats unix µs like Python's datetime.isoformat() for UTC.
func hmISO(us int64) string {
	t := time.UnixMicro(us).UTC()
	if us%1_000_000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// hmRowTimes fills the timing columns shared by both files.
func hmRowTimes(created int64, taskDur float64, serverStart int64, jitter int) (updated string, ts int64, mono float64) {
	upd := created + int64(math.Round(taskDur*1e6))
	ts = upd/1000 + int64(jitter)
	return hmISO(upd), ts, float64(ts-serverStart) / 1000
}

// hmIndexGap advances the leaked pandas index (rows the authors filtered
// out leave gaps).
func hmIndexGap(r *rnd) int64 {
	if r.chance(0.02) {
		return 2 + int64(r.intn(40))
	}
	return 1
}

// compRows emits a round's comparison rows in file order.
func (rd *hmRound) compRows(g *hmGroup, emit func(*hmCompRow) error, seed uint64, index *int64) error {
	ver := &hmVersions[g.version]
	spec := rd.spec
	for it := range rd.iters {
		iter := &rd.iters[it]
		for i, v := range iter.votes {
			m := &g.members[v.member]
			rr := newRnd(seed, hmTagIndex, uint64(g.idx), uint64(rd.ri), uint64(it), uint64(v.member))
			*index += hmIndexGap(rr)
			row := hmCompRow{
				index: *index, launch: g.launch, round: spec.id, iterID: iter.id, iterIdx: int64(it),
				created: v.created, id: hmHex(rr, 32), pid: m.pid, prov: hmHumanCitizen,
				respDur: v.respDur, status: v.status, taskDur: v.taskDur, version: ver.name,
				q: &spec.q, rankStatus: v.status, worker: m.worker, hasWorker: !ver.training(),
			}
			row.updated, row.timestamp, row.mono = hmRowTimes(v.created, v.taskDur, g.serverStart, rr.intn(2000))
			switch {
			case m.bot:
				row.prov = hmBotCitizen
			case v.mock:
				row.prov = hmMock
			}
			op := &rd.opinions[i]
			row.ownText, row.ownID, row.ownProv, row.ownStatus = op.text, op.id, op.prov, op.status
			row.ownLabel = "Opinion " + strconv.Itoa(v.member+1)
			for j, o := range rd.opinions {
				if j == i {
					continue
				}
				row.otherTexts = append(row.otherTexts, o.text)
				row.otherIDs = append(row.otherIDs, o.id)
				row.otherProv = append(row.otherProv, o.prov)
				row.otherPIDs = append(row.otherPIDs, g.members[spec.present[j]].pid)
			}
			for pos, k := range v.display {
				c := &iter.cands[k]
				row.candIDs = append(row.candIDs, c.id)
				row.candTexts = append(row.candTexts, c.text)
				row.candProv = append(row.candProv, c.prov)
				row.candLabels = append(row.candLabels, hmLabels[pos])
				row.candMethod = append(row.candMethod, c.method)
				row.candReward = append(row.candReward, c.reward)
				row.candWelfare = append(row.candWelfare, c.welfare)
				row.candParents = append(row.candParents, c.parents)
				row.candAllTexts = append(row.candAllTexts, c.allTexts)
				row.agreement = append(row.agreement, v.agreement[k])
				row.quality = append(row.quality, v.quality[k])
			}
			if ver.training() {
				row.candWelfare = nil
			}
			order := slices.Clone(v.display)
			if v.rankSorted {
				slices.SortStableFunc(order, func(a, b int) int { return int(v.ranks[a] - v.ranks[b]) })
			}
			for _, k := range order {
				row.rankIDs = append(row.rankIDs, iter.cands[k].id)
				row.ranks = append(row.ranks, v.ranks[k])
			}
			if it == 1 {
				cr := &rd.critiques[i]
				row.hasCrit = true
				row.critText, row.critID, row.critProv = cr.text, cr.id, cr.prov
				if v.mock {
					row.critText, row.critProv = "", hmMock
				}
				row.hasTop, row.top = true, &rd.iters[0].cands[rd.winner]
			}
			if err := emit(&row); err != nil {
				return err
			}
		}
	}
	return nil
}

// posRows emits a group's position statement rating rows.
func (g *hmGroup) posRows(seed uint64, emit func(*hmPosRow) error, index *int64) error {
	ver := &hmVersions[g.version]
	for ri := range g.rounds {
		spec := &g.rounds[ri]
		for _, m := range spec.present {
			mem := &g.members[m]
			level := hmStance(seed, g.idx, ri, m)
			for ratingIdx := range 2 {
				r := newRnd(seed, hmTagPosRow, uint64(g.idx), uint64(ri), uint64(m), uint64(ratingIdx))
				*index += hmIndexGap(r)
				row := hmPosRow{
					index: *index, launch: g.launch, id: hmHex(r, 32), pid: mem.pid, prov: hmHumanCitizen,
					status: hmCompleted, version: ver.name, q: &spec.q, qIndex: int64(ri), ratingIdx: int64(ratingIdx),
					ratID: hmHex(r, 32), worker: mem.worker, hasWorker: !ver.training() && !mem.bot,
				}
				// Before: at the start of the round; after: once it ended.
				row.created = spec.start + int64(20_000_000+r.intn(40_000_000))
				if ratingIdx == 1 {
					row.created += int64(22*60+r.intn(6*60)) * 1_000_000
					if r.chance(0.35) {
						level += (4 - level) / max(1, abs(4-level)) // one step towards neutral
					}
				}
				row.taskDur = float64(8_000+r.intn(60_000)) / 1000
				row.respDur = math.Round(row.taskDur*(0.4+0.5*r.float())*1000) / 1000
				row.agreement = hmAgreement[level-1]
				switch {
				case mem.bot:
					row.prov, row.agreement = hmBotCitizen, hmMock
				case r.chance(0.035):
					row.prov, row.agreement = hmMock, hmMock
					row.status = pick(r, []string{"ABANDONED", "TIMED_OUT", "RETURNED"})
					row.created -= row.created % 1_000_000
				case r.chance(0.09):
					row.agreement = hmMock // skipped the rating
				}
				row.ratCreated = row.created + int64(math.Round(row.respDur*1e6))
				row.updated, row.timestamp, row.mono = hmRowTimes(row.created, row.taskDur, g.serverStart, r.intn(2000))
				if err := emit(&row); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ---------------------------------------------------------------------------
// Parquet writing.

// hmColumn is one output column: its name (dots included), Arrow type and
// how a row fills it.
type hmColumn[R any] struct {
	name string
	typ  arrow.DataType
	put  func(b array.Builder, r *R)
}

var (
	hmTSns       = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	hmTSms       = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	hmStrList    = arrow.ListOf(arrow.BinaryTypes.String)
	hmStrListL   = arrow.ListOf(arrow.ListOf(arrow.BinaryTypes.String))
	hmF64ListL   = arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float64))
	hmI64List    = arrow.ListOf(arrow.PrimitiveTypes.Int64)
	hmStringType = arrow.BinaryTypes.String
	hmInt64Type  = arrow.PrimitiveTypes.Int64
	hmF64Type    = arrow.PrimitiveTypes.Float64
)

func putStr(b array.Builder, s string) { b.(*array.StringBuilder).Append(s) }

func putOptStr(b array.Builder, s string, ok bool) {
	if ok {
		b.(*array.StringBuilder).Append(s)
	} else {
		b.AppendNull()
	}
}

func putI64(b array.Builder, v int64)   { b.(*array.Int64Builder).Append(v) }
func putF64(b array.Builder, v float64) { b.(*array.Float64Builder).Append(v) }

func putTSus(b array.Builder, us int64) {
	tb := b.(*array.TimestampBuilder)
	if tb.Type().(*arrow.TimestampType).Unit == arrow.Nanosecond {
		tb.Append(arrow.Timestamp(us * 1000))
	} else {
		tb.Append(arrow.Timestamp(us / 1000))
	}
}

func putStrs(b array.Builder, xs []string) {
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	for _, x := range xs {
		vb.Append(x)
	}
}

func putI64s(b array.Builder, xs []int64) {
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int64Builder).AppendValues(xs, nil)
}

func putStrss(b array.Builder, xss [][]string) {
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	for _, xs := range xss {
		putStrs(lb.ValueBuilder(), xs)
	}
}

// putF64ss writes a list<list<float64>>; a nil outer slice is null.
func putF64ss(b array.Builder, xss [][]float64) {
	lb := b.(*array.ListBuilder)
	if xss == nil {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	inner := lb.ValueBuilder().(*array.ListBuilder)
	for _, xs := range xss {
		inner.Append(true)
		inner.ValueBuilder().(*array.Float64Builder).AppendValues(xs, nil)
	}
}

// hmCompColumnsFor returns hmCompColumns, with rankings.metadata.status
// a list per candidate under cfg.ListStatus.
func hmCompColumnsFor(cfg hmConfig) []hmColumn[hmCompRow] {
	if !cfg.ListStatus {
		return hmCompColumns
	}
	cols := slices.Clone(hmCompColumns)
	for i, c := range cols {
		if c.name == "rankings.metadata.status" {
			cols[i].typ = hmStrList
			cols[i].put = func(b array.Builder, r *hmCompRow) {
				putStrs(b, slices.Repeat([]string{r.rankStatus}, len(r.candIDs)))
			}
		}
	}
	return cols
}

// hmCompColumns is the comparisons file's schema: the identifiers first,
// then the other names in byte order (as in the position ratings file).
var hmCompColumns = []hmColumn[hmCompRow]{
	{"index", hmInt64Type, func(b array.Builder, r *hmCompRow) { putI64(b, r.index) }},
	{"monotonic_timestamp", hmF64Type, func(b array.Builder, r *hmCompRow) { putF64(b, r.mono) }},
	{"launch_id", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.launch) }},
	{"round_id", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.round) }},
	{"iteration_id", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.iterID) }},
	{"iteration_index", hmInt64Type, func(b array.Builder, r *hmCompRow) { putI64(b, r.iterIdx) }},
	{"candidates.aggregation.method", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.candMethod) }},
	{"candidates.all_texts", hmStrListL, func(b array.Builder, r *hmCompRow) { putStrss(b, r.candAllTexts) }},
	{"candidates.display_label", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.candLabels) }},
	{"candidates.metadata.id", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.candIDs) }},
	{"candidates.metadata.provenance", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.candProv) }},
	{"candidates.parent_statement_ids", hmStrListL, func(b array.Builder, r *hmCompRow) { putStrss(b, r.candParents) }},
	{"candidates.reward_data.reward_predictions", hmF64ListL, func(b array.Builder, r *hmCompRow) { putF64ss(b, r.candReward) }},
	{"candidates.reward_data.welfare_or_rank", hmF64ListL, func(b array.Builder, r *hmCompRow) { putF64ss(b, r.candWelfare) }},
	{"candidates.text", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.candTexts) }},
	{"critique.metadata.id", hmStringType, func(b array.Builder, r *hmCompRow) { putOptStr(b, r.critID, r.hasCrit) }},
	{"critique.metadata.provenance", hmStringType, func(b array.Builder, r *hmCompRow) { putOptStr(b, r.critProv, r.hasCrit) }},
	{"critique.text", hmStringType, func(b array.Builder, r *hmCompRow) { putOptStr(b, r.critText, r.hasCrit) }},
	{"metadata.created", hmTSns, func(b array.Builder, r *hmCompRow) { putTSus(b, r.created) }},
	{"metadata.id", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.id) }},
	{"metadata.participant_id", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.pid) }},
	{"metadata.provenance", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.prov) }},
	{"metadata.response_duration", hmF64Type, func(b array.Builder, r *hmCompRow) { putF64(b, r.respDur) }},
	{"metadata.status", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.status) }},
	{"metadata.task_duration", hmF64Type, func(b array.Builder, r *hmCompRow) { putF64(b, r.taskDur) }},
	{"metadata.updated", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.updated) }},
	{"metadata.version", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.version) }},
	{"other_opinions.metadata.id", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.otherIDs) }},
	{"other_opinions.metadata.participant_id", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.otherPIDs) }},
	{"other_opinions.metadata.provenance", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.otherProv) }},
	{"other_opinions.text", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.otherTexts) }},
	{"own_opinion.display_label", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.ownLabel) }},
	{"own_opinion.metadata.id", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.ownID) }},
	{"own_opinion.metadata.provenance", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.ownProv) }},
	{"own_opinion.metadata.status", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.ownStatus) }},
	{"own_opinion.text", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.ownText) }},
	{"question.affirming_statement", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.q.aff) }},
	{"question.id", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.q.id) }},
	{"question.negating_statement", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.q.neg) }},
	{"question.split", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.q.split) }},
	{"question.text", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.q.text) }},
	{"question.topic", hmInt64Type, func(b array.Builder, r *hmCompRow) { putI64(b, r.q.topic) }},
	{"rankings.candidate_ids", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.rankIDs) }},
	{"rankings.metadata.status", hmStringType, func(b array.Builder, r *hmCompRow) { putStr(b, r.rankStatus) }},
	{"rankings.numerical_ranks", hmI64List, func(b array.Builder, r *hmCompRow) { putI64s(b, r.ranks) }},
	{"ratings.agreement", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.agreement) }},
	{"ratings.quality", hmStrList, func(b array.Builder, r *hmCompRow) { putStrs(b, r.quality) }},
	{"timestamp", hmTSms, func(b array.Builder, r *hmCompRow) { putTSus(b, r.timestamp*1000) }},
	{"top_candidate.metadata.generative_model.api_version", hmStringType, func(b array.Builder, r *hmCompRow) {
		putOptStr(b, r.top.orZero().api, r.hasTop && r.top.api != "")
	}},
	{"top_candidate.metadata.id", hmStringType, func(b array.Builder, r *hmCompRow) { putOptStr(b, r.top.orZero().id, r.hasTop) }},
	{"top_candidate.metadata.provenance", hmStringType, func(b array.Builder, r *hmCompRow) { putOptStr(b, r.top.orZero().prov, r.hasTop) }},
	{"top_candidate.text", hmStringType, func(b array.Builder, r *hmCompRow) { putOptStr(b, r.top.orZero().text, r.hasTop) }},
	{"worker_id", hmStringType, func(b array.Builder, r *hmCompRow) { putOptStr(b, r.worker, r.hasWorker) }},
}

// orZero is the statement, or the zero statement when there is none (a
// row without a top candidate).
func (s *hmStatement) orZero() hmStatement {
	if s == nil {
		return hmStatement{}
	}
	return *s
}

// hmPosColumns is the position ratings file's schema, in the release's
// column order.
var hmPosColumns = []hmColumn[hmPosRow]{
	{"index", hmInt64Type, func(b array.Builder, r *hmPosRow) { putI64(b, r.index) }},
	{"monotonic_timestamp", hmF64Type, func(b array.Builder, r *hmPosRow) { putF64(b, r.mono) }},
	{"launch_id", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.launch) }},
	{"metadata.created", hmTSns, func(b array.Builder, r *hmPosRow) { putTSus(b, r.created) }},
	{"metadata.id", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.id) }},
	{"metadata.participant_id", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.pid) }},
	{"metadata.provenance", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.prov) }},
	{"metadata.response_duration", hmF64Type, func(b array.Builder, r *hmPosRow) { putF64(b, r.respDur) }},
	{"metadata.status", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.status) }},
	{"metadata.task_duration", hmF64Type, func(b array.Builder, r *hmPosRow) { putF64(b, r.taskDur) }},
	{"metadata.updated", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.updated) }},
	{"metadata.version", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.version) }},
	{"question.affirming_statement", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.q.aff) }},
	{"question.id", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.q.id) }},
	{"question.negating_statement", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.q.neg) }},
	{"question.split", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.q.split) }},
	{"question.text", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.q.text) }},
	{"question.topic", hmInt64Type, func(b array.Builder, r *hmPosRow) { putI64(b, r.q.topic) }},
	{"question_index", hmInt64Type, func(b array.Builder, r *hmPosRow) { putI64(b, r.qIndex) }},
	{"rating_index", hmInt64Type, func(b array.Builder, r *hmPosRow) { putI64(b, r.ratingIdx) }},
	{"ratings.agreement", hmStrList, func(b array.Builder, r *hmPosRow) { putStrs(b, []string{r.agreement}) }},
	{"ratings.metadata.created", hmTSns, func(b array.Builder, r *hmPosRow) { putTSus(b, r.ratCreated) }},
	{"ratings.metadata.id", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.ratID) }},
	{"ratings.metadata.participant_id", hmStringType, func(b array.Builder, r *hmPosRow) { putStr(b, r.pid) }},
	{"timestamp", hmTSms, func(b array.Builder, r *hmPosRow) { putTSus(b, r.timestamp*1000) }},
	{"worker_id", hmStringType, func(b array.Builder, r *hmPosRow) { putOptStr(b, r.worker, r.hasWorker) }},
}

// hmPandasType returns pyarrow's pandas_type and numpy_type for t.
func hmPandasType(t arrow.DataType) (pandas, numpy string) {
	switch t := t.(type) {
	case *arrow.Int64Type:
		return "int64", "int64"
	case *arrow.Float64Type:
		return "float64", "float64"
	case *arrow.StringType:
		return "unicode", "object"
	case *arrow.TimestampType:
		return "datetimetz", "datetime64[" + t.Unit.String() + "]"
	case *arrow.ListType:
		p, _ := hmPandasType(t.Elem())
		return "list[" + p + "]", "object"
	}
	panic(fmt.Sprintf("habermas: no pandas type for %s", t))
}

// hmPandasMetadata renders the "pandas" key-value metadata the way
// pyarrow's json.dumps does (", " and ": " separators).
func hmPandasMetadata(fields []arrow.Field) string {
	q := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	var b strings.Builder
	b.WriteString(`{"index_columns": [], "column_indexes": [], "columns": [`)
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		p, n := hmPandasType(f.Type)
		meta := "null"
		if _, ok := f.Type.(*arrow.TimestampType); ok {
			meta = `{"timezone": "UTC"}`
		}
		fmt.Fprintf(&b, `{"name": %s, "field_name": %s, "pandas_type": %s, "numpy_type": %s, "metadata": %s}`,
			q(f.Name), q(f.Name), q(p), q(n), meta)
	}
	b.WriteString(`], "attributes": {}, "creator": {"library": "pyarrow", "version": "26.0.1"}, "pandas_version": "2.3.3"}`)
	return b.String()
}

// hmTable streams rows of type R into a parquet file, one row group per
// rowGroup rows.
type hmTable[R any] struct {
	cols      []hmColumn[R]
	f         *os.File
	bw        *bufio.Writer
	fw        *pqarrow.FileWriter
	rb        *array.RecordBuilder
	rowGroup  int
	buffered  int
	rows      int
	rowGroups int
}

func hmSchema[R any](cols []hmColumn[R]) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	md := arrow.NewMetadata([]string{"pandas"}, []string{hmPandasMetadata(fields)})
	return arrow.NewSchema(fields, &md)
}

func createHMTable[R any](path string, cols []hmColumn[R], rowGroup int, mem memory.Allocator) (*hmTable[R], error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	sc := hmSchema(cols)
	bw := bufio.NewWriterSize(f, 1<<20)
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(mem),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithMaxRowGroupLength(int64(rowGroup)),
		parquet.WithDictionaryDefault(true),
	)
	fw, err := pqarrow.NewFileWriter(sc, bw, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem)))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &hmTable[R]{cols: cols, f: f, bw: bw, fw: fw, rb: array.NewRecordBuilder(mem, sc), rowGroup: rowGroup}, nil
}

func (t *hmTable[R]) add(r *R) error {
	for i, c := range t.cols {
		c.put(t.rb.Field(i), r)
	}
	t.buffered++
	t.rows++
	if t.buffered == t.rowGroup {
		return t.flush()
	}
	return nil
}

func (t *hmTable[R]) flush() error {
	if t.buffered == 0 {
		return nil
	}
	rec := t.rb.NewRecordBatch()
	defer rec.Release()
	t.buffered = 0
	t.rowGroups++
	return t.fw.Write(rec)
}

// close finishes the file; err is the producer's error, if any.
func (t *hmTable[R]) close(err error) error {
	if err == nil {
		err = t.flush()
	}
	t.rb.Release()
	err = errors.Join(err, t.fw.Close())
	if err == nil {
		err = t.bw.Flush()
	}
	return errors.Join(err, t.f.Close())
}

// writeComparisons streams cfg.Rows comparison rows.
func writeHMComparisons(cfg *hmConfig, t *hmTable[hmCompRow]) error {
	p := newHMPlanner(cfg)
	errFull := errors.New("full")
	var index int64 = -1
	emit := func(r *hmCompRow) error {
		if t.rows == cfg.Rows {
			return errFull
		}
		return t.add(r)
	}
	for t.rows < cfg.Rows {
		g := p.nextGroup()
		for ri := range g.rounds {
			rd := buildHMRound(cfg.Seed, g, ri)
			rd.widen(cfg.TextWidth)
			if err := rd.compRows(g, emit, cfg.Seed, &index); err != nil {
				if errors.Is(err, errFull) {
					return nil
				}
				return err
			}
		}
	}
	return nil
}

// writeHMPositions streams cfg.PosRows position statement rating rows.
func writeHMPositions(cfg *hmConfig, t *hmTable[hmPosRow]) error {
	p := newHMPlanner(cfg)
	errFull := errors.New("full")
	var index int64 = -1
	emit := func(r *hmPosRow) error {
		if t.rows == cfg.PosRows {
			return errFull
		}
		return t.add(r)
	}
	for t.rows < cfg.PosRows {
		g := p.nextGroup()
		if err := g.posRows(cfg.Seed, emit, &index); err != nil {
			if errors.Is(err, errFull) {
				return nil
			}
			return err
		}
	}
	return nil
}

// generateHabermas writes both files into cfg.Out, concurrently; each is a
// pure function of cfg.
func generateHabermas(cfg hmConfig) ([]hmFileStat, error) {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	mem := cfg.mem
	if mem == nil {
		mem = memory.NewGoAllocator()
	}
	stats := make([]hmFileStat, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		path := filepath.Join(cfg.Out, hmComparisonsFile)
		t, err := createHMTable(path, hmCompColumnsFor(cfg), cfg.RowGroup, mem)
		if err == nil {
			err = t.close(writeHMComparisons(&cfg, t))
			stats[0] = hmFileStat{Name: hmComparisonsFile, Rows: t.rows, RowGroups: t.rowGroups}
		}
		errs[0] = err
	})
	wg.Go(func() {
		path := filepath.Join(cfg.Out, hmPositionsFile)
		t, err := createHMTable(path, hmPosColumns, cfg.RowGroup, mem)
		if err == nil {
			err = t.close(writeHMPositions(&cfg, t))
			stats[1] = hmFileStat{Name: hmPositionsFile, Rows: t.rows, RowGroups: t.rowGroups}
		}
		errs[1] = err
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("habermas: %w", err)
	}
	for i := range stats {
		st, err := os.Stat(filepath.Join(cfg.Out, stats[i].Name))
		if err != nil {
			return nil, err
		}
		stats[i].Bytes = st.Size()
	}
	return stats, nil
}

// ---------------------------------------------------------------------------
// Text: template-built UK English with the release's non-ASCII characters.

type hmIssue struct {
	subj, act string
	ood       bool // used for OOD_TEST questions
}

var hmIssues = []hmIssue{
	{"the government", "raise the minimum wage to £15 an hour", false},
	{"the UK", "rejoin the European Union", false},
	{"the government", "ban the sale of new petrol and diesel cars", false},
	{"schools", "ban mobile phones in the classroom", false},
	{"the NHS", "charge patients who miss GP appointments", false},
	{"the UK", "introduce a four-day working week", false},
	{"the government", "legalise cannabis for recreational use", false},
	{"local councils", "introduce congestion charges in city centres", false},
	{"the government", "lower the voting age to 16", false},
	{"the BBC", "scrap the licence fee", false},
	{"the government", "introduce a universal basic income", false},
	{"the UK", "build more nuclear power stations", false},
	{"the government", "renationalise the railways", false},
	{"universities", "abolish tuition fees", false},
	{"the government", "tax sugary drinks more heavily", false},
	{"the UK", "make voting compulsory in general elections", false},
	{"the government", "introduce a wealth tax on the richest 1%", false},
	{"social media companies", "verify the identity of every user", false},
	{"the police", "use live facial recognition in public spaces", false},
	{"the government", "cap rents in the private sector", false},
	{"the UK", "end the use of zero-hours contracts", false},
	{"the government", "make childcare free for every child under three", false},
	{"the UK", "allow assisted dying for terminally ill adults", false},
	{"supermarkets", "be required to donate unsold food", false},
	{"the government", "restrict second-home ownership in rural villages", false},
	{"the UK", "replace the House of Lords with an elected chamber", false},
	{"the government", "increase spending on foreign aid", false},
	{"cities", "pedestrianise their centres", false},
	{"the government", "ban junk-food advertising before the 9pm watershed", false},
	{"schools", "teach financial literacy as a core subject", false},
	{"the NHS", "offer routine genetic screening to newborns", false},
	{"the government", "fund free school meals for every primary pupil", false},
	{"the UK", "abolish the monarchy", true},
	{"employers", "be allowed to require staff to work from the office", true},
	{"the government", "introduce a tax on frequent flyers", true},
	{"the UK", "introduce national service for young people", true},
	{"the government", "ban the sale of fireworks to the public", true},
	{"the UK", "adopt proportional representation for general elections", true},
	{"water companies", "be brought back into public ownership", true},
	{"the government", "set a legal limit on the number of tourists in national parks", true},
}

var hmQualifiers = []string{"", "", "", " within the next ten years", " even if it means higher taxes", " before the next general election", " as a matter of urgency"}

var hmShortStatements = []string{"Citizen’s Jury", "No consensus.", "We agree.", "See above."}

var (
	hmOpinionFor = []string{
		"I think {subj} should {act}.",
		"On balance I’m in favour – the benefits outweigh the costs.",
		"It would make a real difference to people on lower incomes and to our neighbourhoods.",
		"Other countries have tried something similar and the evidence looks encouraging.",
		"We can’t keep putting this off; the status quo isn’t working for most people.",
		"I’d support it as long as the programme is properly funded and monitored.",
		"My own family’s experience makes me think this is long overdue.",
		"It’s a question of fairness, and fairness should be prioritised.",
		"Younger generations will thank us for being brave about this.",
	}
	hmOpinionAgainst = []string{
		"I don’t think {subj} should {act}.",
		"It sounds good in theory but the practicalities worry me.",
		"The cost would fall on ordinary taxpayers, and I’m not convinced it’s value for money.",
		"There are better ways to tackle the underlying problem.",
		"It risks unintended consequences that nobody has properly thought through.",
		"People should be free to make their own choices without the state interfering.",
		"Frankly it feels like a gimmick rather than a serious policy.",
		"It would hit small businesses – the local café, the corner shop – hardest.",
	}
	hmOpinionMixed = []string{
		"I’m honestly torn on this one.",
		"There are good arguments on both sides, so I’d want to see a trial first.",
		"It depends a great deal on how it’s implemented and who pays for it.",
		"Maybe a gradual, phased approach would be a sensible compromise.",
		"It would be naïve to think there’s a simple answer here.",
	}
	hmOpinionLead = []string{"", "", "", "Personally, ", "To be honest, ", "In my view, ", "Well… "}

	hmStatementOpen = [3][]string{
		{
			"Overall, we do not think {subj} should {act} at this time.",
			"The group is sceptical about whether {subj} should {act}.",
			"Most of us feel that {subj} should not {act}, although a minority disagree.",
		},
		{
			"The group was divided on whether {subj} should {act}, but we agreed on several key principles.",
			"We could not reach a clear view on whether {subj} should {act}, and we think the question deserves more debate.",
		},
		{
			"We believe that, on balance, {subj} should {act}, provided that it is done carefully.",
			"Most of us feel that {subj} should {act}, although some members have reservations.",
			"The group broadly supports the idea that {subj} should {act}.",
		},
	}
	hmStatementBody = []string{
		"The main argument in favour is that it would improve people’s quality of life and reduce inequality.",
		"However, we recognise the concerns about cost and the burden this might place on taxpayers and small businesses.",
		"Any change should be introduced gradually, with a clear timetable and an independent review after two years.",
		"It is important that the views of those most affected – including young people, pensioners and rural communities – are taken into account.",
		"We also think the evidence from other countries should be examined before a final decision is made.",
		"Some of us worry that the policy could be difficult to enforce and might have unintended consequences.",
		"Whatever is decided, the government should be transparent about the trade-offs involved.",
		"Funding should be ring-fenced so that it is not quietly cut in future budgets.",
		"Public services are already under strain, so any new commitments must be realistic.",
		"We agreed that “fairness” means different things to different people, and the policy should acknowledge that.",
		"Local organisations and councils should have a say in how it is delivered in their area.",
	}
	hmStatementClose = [3][]string{
		{
			"In conclusion, the group does not support the proposal in its current form, but would welcome a smaller pilot scheme.",
			"Ultimately, we believe the risks currently outweigh the benefits.",
		},
		{
			"Ultimately, we believe a cautious, evidence-led approach is the best way forward.",
			"In summary, we think a trial would help settle the disagreements within the group.",
		},
		{
			"In summary, we support the principle but want safeguards to ensure it is fair for everyone.",
			"Overall, we think the benefits are worth the effort, as long as progress is monitored.",
		},
	}
	hmRevisionNote = []string{
		"Following the critiques, we have made clear who would pay for the changes.",
		"In response to feedback, we now emphasise that a pilot scheme should come first.",
		"We have added that the concerns of rural areas and small businesses must be addressed.",
		"Several members felt the earlier draft overstated our agreement, so we have toned it down.",
	}
	hmCritiques = []string{
		"I broadly agree, but the statement doesn’t say who would pay for this.",
		"Too vague – it needs a concrete timetable.",
		"I think it overstates how much the group agreed.",
		"Good summary of the discussion. I’d add something about rural areas.",
		"It ignores the concerns about personal freedom that several of us raised.",
		"I’m happy with this statement as it is.",
		"It should mention the impact on small businesses and the self-employed.",
		"The wording is a bit long-winded; it could be more concise.",
		"I disagree with the conclusion, but it’s a fair reflection of the debate.",
		"Please make clear that a pilot scheme should come first – that’s the compromise we reached.",
	}
)

// hmText builds the texts of one round.
type hmText struct {
	r         *rnd
	subj, act string
}

func newHMText(r *rnd, q hmQuestion) *hmText { return &hmText{r: r, subj: q.subj, act: q.act} }

func (t *hmText) fill(s string) string {
	s = strings.ReplaceAll(s, "{subj}", t.subj)
	return strings.ReplaceAll(s, "{act}", t.act)
}

// sentences picks n distinct sentences of bank in random order.
func (t *hmText) sentences(bank []string, n int) []string {
	p := t.r.perm(len(bank))
	out := make([]string, 0, n)
	for _, i := range p[:min(n, len(bank))] {
		out = append(out, t.fill(bank[i]))
	}
	return out
}

func hmSide(stance float64) int {
	switch {
	case stance < -0.3:
		return 0
	case stance > 0.3:
		return 2
	}
	return 1
}

func (t *hmText) opinion(stance float64) string {
	r := t.r
	var parts []string
	switch hmSide(stance) {
	case 0:
		parts = append(parts, t.fill(hmOpinionAgainst[0]))
		parts = append(parts, t.sentences(hmOpinionAgainst[1:], 1+r.intn(3))...)
	case 2:
		parts = append(parts, t.fill(hmOpinionFor[0]))
		parts = append(parts, t.sentences(hmOpinionFor[1:], 1+r.intn(3))...)
	default:
		parts = append(parts, t.sentences(hmOpinionMixed, 1+r.intn(2))...)
		parts = append(parts, t.sentences(hmOpinionFor[1:], 1)...)
		parts = append(parts, t.sentences(hmOpinionAgainst[1:], 1)...)
	}
	if lead := pick(r, hmOpinionLead); lead != "" {
		if strings.HasPrefix(parts[0], "I ") || strings.HasPrefix(parts[0], "I’") {
			parts[0] = lead + parts[0]
		} else {
			parts[0] = lead + lowerFirst(parts[0])
		}
	}
	s := strings.Join(parts, " ")
	if r.chance(0.1) {
		s = strings.ToLower(strings.TrimSuffix(s, "."))
	}
	return s
}

func (t *hmText) botOpinion(stance float64) string {
	switch hmSide(stance) {
	case 0:
		return t.fill("I disagree that {subj} should {act}.")
	case 2:
		return t.fill("I agree that {subj} should {act}.")
	}
	return t.fill("I am unsure whether {subj} should {act}.")
}

func (t *hmText) botCritique() string { return "I have no further comments on this statement." }

func (t *hmText) critique(stance float64) string {
	s := strings.Join(t.sentences(hmCritiques, 1+t.r.intn(2)), " ")
	if stance < -0.6 && t.r.chance(0.3) {
		s += " " + t.fill("I still don’t think {subj} should {act}.")
	}
	return s
}

func (t *hmText) statement(pos float64, revised bool) string {
	r := t.r
	side := hmSide(pos)
	parts := []string{t.fill(pick(r, hmStatementOpen[side]))}
	parts = append(parts, t.sentences(hmStatementBody, 2+r.intn(3))...)
	if revised {
		parts = append(parts, pick(r, hmRevisionNote))
	}
	parts = append(parts, pick(r, hmStatementClose[side]))
	return strings.Join(parts, " ")
}

func (t *hmText) revision(pos float64) string { return t.statement(pos, true) }

// variant is another statement the mediator sampled in the same run:
// the same opening, a different body.
func (t *hmText) variant(text string, pos float64) string {
	if text == "" {
		return t.statement(pos, false)
	}
	first, _, _ := strings.Cut(text, ". ")
	rest := t.statement(pos, false)
	_, tail, _ := strings.Cut(rest, ". ")
	return first + ". " + tail
}

// optionalInt is an int flag with no default of its own: unset, it is -1
// (the caller picks), and its usage line shows no "(default -1)".
type optionalInt struct {
	n   int
	set bool
}

func (o *optionalInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

func (o *optionalInt) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("not an integer")
	}
	o.n, o.set = n, true
	return nil
}
