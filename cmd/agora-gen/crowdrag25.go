package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Size of the real CrowdRAG-25 release (--scale 1).
const (
	crowdReleaseTopics      = 301
	crowdReleaseRatedTopics = 65
	// crowdMaxTopics keeps topic ids at six digits ("2024-NNNNNN") so that
	// string order equals numeric order.
	crowdMaxTopics = 800_000
	// crowdDefaultSeed is the --seed default (also used for the shipped sample).
	crowdDefaultSeed = 25
)

// Bounds taken from the real release.
const (
	crowdRefsPerTopic  = 20
	crowdVotes         = 5
	crowdRawMinChars   = 100
	crowdRawMaxChars   = 3087
	crowdMaxLineBytes  = 43_000
	crowdMinRefsBytes  = 18_000 // escaped bytes of references_texts per line
	crowdMaxStatements = 21
)

var (
	crowdStyles = [3]string{"bullet", "essay", "news"}
	crowdKinds  = [2]string{"human", "llm"}
	// crowdDims is the dimension order of the rating files.
	crowdDims = [7]string{
		"correctness_topical", "coherence_logical", "coherence_stylistic",
		"coverage_broad", "coverage_deep", "consistency_internal", "quality_overall",
	}
	crowdInferences = [2]string{"combined", "individual"}
)

const (
	crowdResponsesPerTopic = len(crowdStyles) * len(crowdKinds)
	dimQualityOverall      = 6
)

// crowdConfig is a fully resolved generation request.
type crowdConfig struct {
	// Out is the output directory.
	Out string
	// Topics is the number of topics (6 responses each).
	Topics int
	// RatedTopics is how many of them have pairwise ratings and grades.
	RatedTopics int
	// Seed selects the random streams.
	Seed uint64
}

// crowdFileStat reports one written file.
type crowdFileStat struct {
	// Name is the file name inside the output directory.
	Name string
	// Records is the number of JSON Lines records.
	Records int
	// Bytes is the compressed size.
	Bytes int64
}

func runCrowdRAG25(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crowdrag25", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output directory (created if missing; required)")
	scale := fs.Float64("scale", 1, "size relative to the real release (1 = 301 topics, 65 rated pairwise)")
	topics := fs.Int("topics", -1, "number of topics (overrides --scale)")
	rated := fs.Int("rated-topics", -1, "number of pairwise-rated topics (overrides --scale; default keeps the release ratio 65/301)")
	seed := fs.Uint64("seed", crowdDefaultSeed, "random seed; equal flags and seed give byte-identical files")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: agora-gen crowdrag25 --out DIR [--scale F] [--topics N --rated-topics M] [--seed S]\n\n"+
			"Writes responses.jsonl.gz, ratings.jsonl.gz, llm_ratings.jsonl.gz and grades.jsonl.gz\n"+
			"in the CrowdRAG-25 release format into DIR.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, out); err != nil {
		return err
	}
	cfg, err := resolveCrowdConfig(*out, *scale, *topics, *rated, *seed)
	if err != nil {
		return err
	}
	stats, err := generateCrowdRAG25(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "crowdrag25: %d topics (%d rated), seed %d -> %s\n", cfg.Topics, cfg.RatedTopics, cfg.Seed, cfg.Out)
	for _, s := range stats {
		fmt.Fprintf(stdout, "  %-22s %9d records %12d bytes\n", s.Name, s.Records, s.Bytes)
	}
	return nil
}

// resolveCrowdConfig turns flags into counts; topics/rated < 0 mean "unset".
func resolveCrowdConfig(out string, scale float64, topics, rated int, seed uint64) (crowdConfig, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return crowdConfig{}, fmt.Errorf("crowdrag25: --scale must be > 0, got %v", scale)
	}
	n := int(math.Round(crowdReleaseTopics * scale))
	m := int(math.Round(crowdReleaseRatedTopics * scale))
	if topics >= 0 {
		n = topics
		m = int(math.Round(float64(topics) * crowdReleaseRatedTopics / crowdReleaseTopics))
	}
	if rated >= 0 {
		m = rated
	}
	switch {
	case n < 1:
		return crowdConfig{}, fmt.Errorf("crowdrag25: need at least 1 topic, got %d", n)
	case n > crowdMaxTopics:
		return crowdConfig{}, fmt.Errorf("crowdrag25: at most %d topics supported, got %d", crowdMaxTopics, n)
	case m < 0 || m > n:
		return crowdConfig{}, fmt.Errorf("crowdrag25: rated topics must be in [0, %d], got %d", n, m)
	}
	return crowdConfig{Out: out, Topics: n, RatedTopics: m, Seed: seed}, nil
}

// crowdWorker is one crowd worker: a v3 UUID and a MACE-style spam
// probability per dimension (a property of the worker, so it repeats
// across every row the worker judged).
type crowdWorker struct {
	id   string
	spam [len(crowdDims)]float64
}

// crowdSubmission is one crowdsourcing submission: 12–16 rating rows judged
// by the same five workers.
type crowdSubmission struct {
	id      string
	workers [crowdVotes]int
}

// ratingKey identifies one row of ratings.jsonl (an ordered response pair).
type ratingKey struct {
	a, b   string // response ids
	topic  int32
	ai, bi int8 // response indexes within the topic
	sub    int32
}

type crowdGen struct {
	cfg      crowdConfig
	topicIDs []string
	rated    []int // ascending topic indexes of pairwise-rated topics
	workers  []crowdWorker
	// nullRated is the position in rated whose first combined LLM row has
	// nulls in six dimensions (-1 when nothing is rated).
	nullRated int
}

func newCrowdGen(cfg crowdConfig) *crowdGen {
	g := &crowdGen{cfg: cfg}
	seed := cfg.Seed

	// Topic ids: increasing six-digit numbers with random gaps.
	r := newRnd(seed, tagTopicIDs)
	maxGap := min(max((999_999-110_000)/cfg.Topics, 1), 400)
	cur := 100_000 + r.intn(10_000)
	g.topicIDs = make([]string, cfg.Topics)
	for i := range g.topicIDs {
		g.topicIDs[i] = "2024-" + strconv.Itoa(cur)
		cur += 1 + r.intn(maxGap)
	}

	// Which topics were rated pairwise.
	perm := newRnd(seed, tagRatedSelection).perm(cfg.Topics)
	g.rated = append([]int(nil), perm[:cfg.RatedTopics]...)
	slices.Sort(g.rated)

	// Worker pool.
	g.workers = make([]crowdWorker, 20+2*cfg.RatedTopics)
	for i := range g.workers {
		wr := newRnd(seed, tagWorker, uint64(i))
		w := &g.workers[i]
		w.id = uuid3(crowdNamespace, "worker/"+strconv.Itoa(i))
		b := wr.float()
		base := float64(b*b) * b // most workers are reliable, a few are spammers
		for d := range w.spam {
			x := float64(0.85*base) + float64(0.15*wr.float()) // in [0, 1)
			w.spam[d] = 0.014 + float64(0.969*x)
		}
	}

	g.nullRated = -1
	if cfg.RatedTopics > 0 {
		g.nullRated = newRnd(seed, tagNullRow).intn(cfg.RatedTopics)
	}
	return g
}

func (g *crowdGen) responseID(topic, resp int) string {
	style, kind := crowdStyles[resp/len(crowdKinds)], crowdKinds[resp%len(crowdKinds)]
	return uuid3(crowdNamespace, "response/"+g.topicIDs[topic]+"/"+style+"/"+kind)
}

// quality returns the latent quality of each response of a topic in each
// dimension. Pairwise preferences, LLM judgments and grades all derive from
// it, so the files agree with each other the way real judgments roughly do.
func (g *crowdGen) quality(topic int) (q [crowdResponsesPerTopic][len(crowdDims)]float64) {
	r := newRnd(g.cfg.Seed, tagQuality, uint64(topic))
	for resp := range q {
		base := r.normal()
		if crowdKinds[resp%len(crowdKinds)] == "llm" {
			base += 0.3
		}
		for d := range q[resp] {
			q[resp][d] = base + float64(0.8*r.normal())
		}
	}
	return q
}

// grades ranks the responses of a topic per dimension as the release does:
// 6 = best … 1 = worst (Bradley-Terry rank, higher is better).
func grades(q *[crowdResponsesPerTopic][len(crowdDims)]float64) (gr [crowdResponsesPerTopic][len(crowdDims)]int) {
	for i := range gr {
		for d := range gr[i] {
			rank := 1
			for j := range q {
				if q[j][d] > q[i][d] || (q[j][d] == q[i][d] && j < i) {
					rank++
				}
			}
			gr[i][d] = crowdResponsesPerTopic + 1 - rank
		}
	}
	return gr
}

// topicPairs returns the ordered response pairs rated for a topic: every
// unordered pair once, a binomial share of them (capped at 11) in both
// orders, giving 15–26 rows like the release.
func (g *crowdGen) topicPairs(topic int) [][2]int {
	r := newRnd(g.cfg.Seed, tagPairs, uint64(topic))
	var unordered [][2]int
	for i := range crowdResponsesPerTopic {
		for j := i + 1; j < crowdResponsesPerTopic; j++ {
			unordered = append(unordered, [2]int{i, j})
		}
	}
	both := 0
	for range unordered {
		if r.chance(0.387) {
			both++
		}
	}
	both = min(both, 11)
	shuffle(r, unordered)
	var out [][2]int
	for k, p := range unordered {
		switch {
		case k < both:
			out = append(out, p, [2]int{p[1], p[0]})
		case r.chance(0.5):
			out = append(out, p)
		default:
			out = append(out, [2]int{p[1], p[0]})
		}
	}
	shuffle(r, out)
	return out
}

// submissionSizes splits n rows into submissions of 12–16 rows (when n
// allows it, i.e. n >= 24 or 12 <= n <= 16).
func submissionSizes(r *rnd, n int) []int {
	if n == 0 {
		return nil
	}
	lo, hi := (n+15)/16, n/12
	k := (n + 7) / 14
	if lo <= hi {
		k = min(max(k, lo), hi)
	} else {
		k = max(hi, 1) // no exact partition exists (n < 12 or 17..23)
	}
	sizes := make([]int, k)
	for i := range sizes {
		sizes[i] = n / k
		if i < n%k {
			sizes[i]++
		}
	}
	for range 32 * k {
		i, j := r.intn(k), r.intn(k)
		if i != j && sizes[i] > 12 && sizes[j] < 16 {
			sizes[i]--
			sizes[j]++
		}
	}
	return sizes
}

// ratingPlan lists every ratings row (sorted by response_a, response_b)
// and the submissions they belong to. Only keys are kept in memory; row
// contents are regenerated from per-row random streams while writing.
func (g *crowdGen) ratingPlan() ([]ratingKey, []crowdSubmission) {
	var keys []ratingKey
	ids := make([]string, crowdResponsesPerTopic)
	for _, t := range g.rated {
		for i := range ids {
			ids[i] = g.responseID(t, i)
		}
		for _, p := range g.topicPairs(t) {
			keys = append(keys, ratingKey{a: ids[p[0]], b: ids[p[1]], topic: int32(t), ai: int8(p[0]), bi: int8(p[1])})
		}
	}
	sizes := submissionSizes(newRnd(g.cfg.Seed, tagSubmissionSizes), len(keys))
	subs := make([]crowdSubmission, len(sizes))
	k := 0
	for s, size := range sizes {
		r := newRnd(g.cfg.Seed, tagSubmission, uint64(s))
		subs[s].id = uuid4(r)
		for v := range subs[s].workers {
		again:
			w := r.intn(len(g.workers))
			for _, prev := range subs[s].workers[:v] {
				if prev == w {
					goto again
				}
			}
			subs[s].workers[v] = w
		}
		for range size {
			keys[k].sub = int32(s)
			k++
		}
	}
	slices.SortFunc(keys, func(x, y ratingKey) int {
		return cmp.Or(strings.Compare(x.a, y.a), strings.Compare(x.b, y.b))
	})
	return keys, subs
}

// voteLetters are the crowd vote labels; goldLetters the aggregated ones.
var (
	voteLetters = [3]string{"A", "N", "B"}
	goldLetters = [3]string{"a", "n", "b"}
)

// ratingLine renders one ratings row. Votes follow MACE's generative story
// (a worker spams, i.e. votes uniformly at random, with its spam
// probability, and otherwise reports the true label); p_a/p_n/p_b are the
// resulting posteriors and gold is their argmax.
func (g *crowdGen) ratingLine(lb *lineBuilder, k ratingKey, sub *crowdSubmission, q *[crowdResponsesPerTopic][len(crowdDims)]float64) ([]byte, error) {
	r := newRnd(g.cfg.Seed, tagRatingRow, uint64(k.topic), uint64(k.ai), uint64(k.bi))
	lb.begin()
	lb.str("submission_id", sub.id)
	lb.str("query_id", g.topicIDs[k.topic])
	lb.str("response_a", k.a)
	lb.str("response_b", k.b)
	var workerIDs [crowdVotes]string
	for v, w := range sub.workers {
		workerIDs[v] = g.workers[w].id
	}
	lb.strList("worker", workerIDs[:])
	var votes [crowdVotes]string
	var spam [crowdVotes]float64
	for d, dim := range crowdDims {
		labels := []int{0, 1, 2} // A, N, B
		if d == dimQualityOverall {
			labels = []int{0, 2}
		}
		nl := float64(len(labels))
		// True label from the latent quality difference.
		delta := q[k.ai][d] - q[k.bi][d]
		t := delta / (1 + math.Abs(delta))
		pA := 0.5 + float64(0.5*t)
		pN := 0.0
		if len(labels) == 3 {
			pN = 0.35 / (1 + float64(4*float64(delta*delta)))
			pA = float64((1 - pN) * pA)
		}
		truth := 2
		if u := r.float(); u < pA {
			truth = 0
		} else if u < pA+pN {
			truth = 1
		}
		// Votes and MACE posterior (uniform prior, uniform spam strategy).
		score := [3]float64{1, 1, 1}
		for v, w := range sub.workers {
			s := g.workers[w].spam[d]
			spam[v] = s
			vote := truth
			if r.chance(s) {
				vote = labels[r.intn(len(labels))]
			}
			votes[v] = voteLetters[vote]
			for _, l := range labels {
				f := s / nl
				if l == vote {
					f += 1 - s
				}
				score[l] *= f
			}
		}
		total := 0.0
		for _, l := range labels {
			total += score[l]
		}
		// Quantise to pandas' 10 decimals so the printed p's sum to 1.
		const unit = 1e10
		var pi [3]int64
		pi[0] = int64(math.Round(float64(score[0] / total * unit)))
		if len(labels) == 3 {
			pi[1] = int64(math.Round(float64(score[1] / total * unit)))
		}
		pi[2] = int64(unit) - pi[0] - pi[1]
		if pi[2] < 0 {
			pi[0] += pi[2]
			pi[2] = 0
		}
		gold := 0
		for _, l := range labels {
			if pi[l] > pi[gold] {
				gold = l
			}
		}
		lb.strList(dim+"_vote", votes[:])
		lb.floatList(dim+"_spam_probability", spam[:])
		var sum float64
		for _, l := range labels {
			key := dim + "_p_" + goldLetters[l]
			printed := appendPandasFloat(nil, float64(pi[l])/unit)
			lb.key(key)
			lb.b = append(lb.b, printed...)
			x, err := strconv.ParseFloat(string(printed), 64)
			if err != nil {
				return nil, fmt.Errorf("ratings: %s printed as %q: %w", key, printed, err)
			}
			sum += x
		}
		if math.Abs(sum-1) > 1e-9 {
			return nil, fmt.Errorf("ratings: %s probabilities sum to %v", dim, sum)
		}
		lb.str(dim+"_gold", goldLetters[gold])
	}
	return lb.end(), nil
}

func (g *crowdGen) writeRatings(f *jsonlGzFile) error {
	keys, subs := g.ratingPlan()
	var lb lineBuilder
	for _, k := range keys {
		q := g.quality(int(k.topic))
		line, err := g.ratingLine(&lb, k, &subs[k.sub], &q)
		if err != nil {
			return err
		}
		if err := f.write(line); err != nil {
			return err
		}
	}
	return nil
}

// llmKey is one (response_a, response_b, inference) judgment key.
type llmKey struct {
	ai, bi   int
	inf      int
	dup      bool // the key occurs twice
	conflict bool // the two occurrences disagree on some dimension
	null     bool // the first occurrence has nulls in all but correctness_topical
}

// llmPlan decides which judgments gpt-4o made for the rated topic at
// position pos. Release ratios: ~85% of rated topics, ~70% of their rated
// pairs, each inference mode ~92%, 56% of keys duplicated, 22% of those
// conflicting.
func (g *crowdGen) llmPlan(pos int) []llmKey {
	t := g.rated[pos]
	r := newRnd(g.cfg.Seed, tagLLMTopic, uint64(t))
	include := r.chance(0.85)
	forced := pos == g.nullRated
	if !include && !forced {
		return nil
	}
	pairs := g.topicPairs(t)
	ids := make([]string, crowdResponsesPerTopic)
	for i := range ids {
		ids[i] = g.responseID(t, i)
	}
	slices.SortFunc(pairs, func(x, y [2]int) int {
		return cmp.Or(strings.Compare(ids[x[0]], ids[y[0]]), strings.Compare(ids[x[1]], ids[y[1]]))
	})
	var keys []llmKey
	for pi, p := range pairs {
		sel := r.chance(0.7)
		for inf := range crowdInferences {
			k := llmKey{ai: p[0], bi: p[1], inf: inf}
			incl := r.chance(0.92)
			k.dup = r.chance(0.564)
			k.conflict = k.dup && r.chance(0.22)
			if forced && pi == 0 && inf == 0 {
				sel, incl = true, true
				k.dup, k.conflict, k.null = true, true, true
			}
			if sel && incl {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// llmLabels returns the judgment for one key occurrence ("" = null).
func (g *crowdGen) llmLabels(t int, k llmKey, copyNo int, q *[crowdResponsesPerTopic][len(crowdDims)]float64) (out [len(crowdDims)]string) {
	r := newRnd(g.cfg.Seed, tagLLMRow, uint64(t), uint64(k.ai), uint64(k.bi), uint64(k.inf))
	for d := range out {
		delta := q[k.ai][d] - q[k.bi][d] + float64(0.6*r.normal())
		thr := 0.25
		if d == dimQualityOverall {
			thr = 0.12
		}
		switch {
		case math.Abs(delta) < thr:
			out[d] = "n"
		case delta > 0:
			out[d] = "a"
		default:
			out[d] = "b"
		}
	}
	// Decide the disagreement of the second occurrence up front so both
	// occurrences consume the stream identically.
	first := r.intn(len(crowdDims))
	changed := [2]int{first, (first + 1 + r.intn(len(crowdDims)-1)) % len(crowdDims)}
	nChanged := 1 + r.intn(2)
	alt := [2]int{1 + r.intn(2), 1 + r.intn(2)}
	switch {
	case copyNo == 0 && k.null:
		for d := 1; d < len(out); d++ {
			out[d] = ""
		}
	case copyNo == 1 && k.conflict && !k.null:
		for i := range nChanged {
			d := changed[i]
			idx := strings.Index("anb", out[d])
			out[d] = string("anb"[(idx+alt[i])%3])
		}
	}
	return out
}

func (g *crowdGen) writeLLMRatings(f *jsonlGzFile) error {
	var lb lineBuilder
	for inf := range crowdInferences {
		for copyNo := range 2 {
			for pos, t := range g.rated {
				keys := g.llmPlan(pos)
				if len(keys) == 0 {
					continue
				}
				q := g.quality(t)
				for _, k := range keys {
					if k.inf != inf || (copyNo == 1 && !k.dup) {
						continue
					}
					labels := g.llmLabels(t, k, copyNo, &q)
					lb.begin()
					lb.str("query_id", g.topicIDs[t])
					lb.str("response_a", g.responseID(t, k.ai))
					lb.str("response_b", g.responseID(t, k.bi))
					lb.str("inference", crowdInferences[inf])
					for d, dim := range crowdDims {
						lb.strOrNull(dim, labels[d])
					}
					if err := f.write(lb.end()); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func (g *crowdGen) writeGrades(f *jsonlGzFile) error {
	order := newRnd(g.cfg.Seed, tagGradesShuffle).perm(len(g.rated) * crowdResponsesPerTopic)
	var lb lineBuilder
	for _, idx := range order {
		t := g.rated[idx/crowdResponsesPerTopic]
		resp := idx % crowdResponsesPerTopic
		q := g.quality(t)
		gr := grades(&q)
		lb.begin()
		lb.str("response", g.responseID(t, resp))
		for d, dim := range crowdDims {
			lb.int(dim, gr[resp][d])
		}
		if err := f.write(lb.end()); err != nil {
			return err
		}
	}
	return nil
}

// crowdStatement is one answer statement before rendering.
type crowdStatement struct {
	sentence  string
	cites     []int // 0-based indexes into references_ids (may repeat)
	paraBreak bool  // non-bullet: starts a new paragraph
	nlInText  bool  // the paragraph break belongs to the statement text
}

// answerStyle holds per-response rendering choices.
type answerStyle struct {
	bullet      bool
	bulletMarks [2]string // raw bullet prefixes used (alternating when mixed)
	mixed       bool
	citeSep     string // "," or ", "
	markerAfter bool   // "sentence. [0]" instead of "sentence [0]."
	paraSep     string
}

func citationCount(r *rnd, human bool) int {
	x := r.intn(1000)
	if human {
		x = max(x-60, 0) // humans cite a little less
	}
	switch {
	case x < 100:
		return 0
	case x < 580:
		return 1
	case x < 830:
		return 2
	case x < 910:
		return 3
	case x < 970:
		return r.between(4, 6)
	case x < 992:
		return r.between(7, 10)
	default:
		return r.between(11, 20)
	}
}

func statementCount(r *rnd) int {
	switch x := r.intn(100); {
	case x < 3:
		return 1
	case x < 15:
		return min(2+r.intn(6)+r.intn(6)+r.intn(12), crowdMaxStatements)
	default:
		return 2 + r.intn(6) + r.intn(6)
	}
}

// draftAnswer drafts the statements of one response.
func draftAnswer(tg *textGen, style string, human bool) ([]crowdStatement, answerStyle) {
	r := tg.r
	as := answerStyle{bullet: style == "bullet", citeSep: ",", paraSep: "\n\n"}
	as.bulletMarks = [2]string{"- ", "- "}
	switch x := r.intn(100); {
	case x < 25:
		as.bulletMarks = [2]string{"* ", "* "}
	case x < 30:
		as.bulletMarks = [2]string{"- ", "* "}
		as.mixed = true
	}
	if r.chance(0.5) || human && r.chance(0.5) {
		as.citeSep = ", "
	}
	as.markerAfter = r.chance(0.25)
	if r.chance(0.15) {
		as.paraSep = "\n"
	}
	paraMax := 5
	if style == "news" {
		paraMax = 3
	}
	n := statementCount(r)
	stmts := make([]crowdStatement, n)
	inPara, paraLen := 0, r.between(1, paraMax)
	for i := range stmts {
		s := &stmts[i]
		s.sentence = tg.answerSentence()
		c := citationCount(r, human)
		p := r.perm(crowdRefsPerTopic)[:c]
		if !r.chance(0.1) {
			slices.Sort(p)
		}
		if c > 0 && c < crowdRefsPerTopic && r.chance(0.025) {
			p = append(p, p[r.intn(c)])
		}
		s.cites = p
		if i > 0 && !as.bullet && inPara >= paraLen {
			s.paraBreak = true
			s.nlInText = r.chance(0.2)
			inPara, paraLen = 0, r.between(1, paraMax)
		}
		inPara++
	}
	// Very short answers: extend the last statement so raw_text reaches
	// the release minimum of 100 characters.
	total := 0
	for _, st := range stmts {
		total += utf8.RuneCountInString(st.sentence) + 1
	}
	for total < crowdRawMinChars+10 {
		last := &stmts[len(stmts)-1]
		extra := lowerFirst(tg.answerSentence())
		last.sentence = strings.TrimSuffix(last.sentence, ".") + "; " + extra
		total += utf8.RuneCountInString(extra) + 1
	}
	return stmts, as
}

func citationMarker(cites []int, sep string) string {
	if len(cites) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range cites {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(strconv.Itoa(c))
	}
	b.WriteByte(']')
	return b.String()
}

// renderedAnswer is a response ready for output.
type renderedAnswer struct {
	raw, cleaned string
	texts        []string
	cites        [][]string
}

// renderAnswer lays the statements out as raw_text (with citation markers
// and the response's own bullet characters), cleaned_text (markers removed,
// bullets normalised to "- ") and statement texts. Bullet statements carry
// their line break ("\n- …"); so do paragraph-opening statements whose
// break belongs to the statement.
func renderAnswer(stmts []crowdStatement, as answerStyle, refIDs []string) renderedAnswer {
	var raw, clean strings.Builder
	out := renderedAnswer{texts: make([]string, len(stmts)), cites: make([][]string, len(stmts))}
	for i, s := range stmts {
		marker := citationMarker(s.cites, as.citeSep)
		withMarker := s.sentence
		if marker != "" {
			if as.markerAfter {
				withMarker = s.sentence + " " + marker
			} else {
				last := len(s.sentence) - 1
				withMarker = s.sentence[:last] + " " + marker + s.sentence[last:]
			}
		}
		if as.bullet {
			if i > 0 {
				raw.WriteByte('\n')
				clean.WriteByte('\n')
			}
			raw.WriteString(as.bulletMarks[i%2] + withMarker)
			clean.WriteString("- " + s.sentence)
			out.texts[i] = "\n- " + s.sentence
		} else {
			sep := ""
			if i > 0 {
				sep = " "
				if s.paraBreak {
					sep = as.paraSep
				}
			}
			raw.WriteString(sep + withMarker)
			clean.WriteString(sep + s.sentence)
			out.texts[i] = s.sentence
			if s.paraBreak && s.nlInText {
				out.texts[i] = sep + s.sentence
			}
		}
		cs := make([]string, len(s.cites))
		for j, c := range s.cites {
			cs[j] = refIDs[c]
		}
		out.cites[i] = cs
	}
	out.raw, out.cleaned = raw.String(), clean.String()
	return out
}

// crowdTopic is the shared content of a topic's six responses.
type crowdTopic struct {
	id       string
	query    string
	refIDs   []string
	refTexts []string
}

func escapedLen(s string) int { return len(appendJSONString(nil, s)) - 2 }

// references draws the 20 retrieved MS MARCO v2.1 segments of a topic:
// 1–3 segments per document, ranked in random order, ~1.1k characters per
// passage, at least crowdMinRefsBytes escaped bytes in total, non-ASCII
// text in every topic and a URL somewhere.
func references(tg *textGen) (ids, texts []string) {
	r := tg.r
	type seg struct {
		id, title string
	}
	segs := make([]seg, 0, crowdRefsPerTopic)
	seen := make(map[string]bool, crowdRefsPerTopic)
	for len(segs) < crowdRefsPerTopic {
		shard, off := r.intn(59), r.intn(3_500_000_000)
		nseg := 1
		if x := r.intn(10); x >= 9 {
			nseg = 3
		} else if x >= 7 {
			nseg = 2
		}
		title := tg.docTitle()
		first := r.intn(8)
		for s := range nseg {
			id := fmt.Sprintf("msmarco_v2.1_doc_%02d_%d#%d_%d", shard, off, first+s*(1+r.intn(3)), r.uint64()>>32)
			if len(segs) < crowdRefsPerTopic && !seen[id] {
				seen[id] = true
				segs = append(segs, seg{id, title})
			}
		}
	}
	shuffle(r, segs)

	lens := make([]int, len(segs))
	sum := 0
	for i := range lens {
		lens[i] = 350 + r.intn(750) + r.intn(750)
		if r.chance(0.06) {
			lens[i] += r.intn(1500)
		}
		sum += lens[i]
	}
	target := r.between(16_800, 28_500)
	emoji := -1
	if r.chance(0.3) {
		emoji = r.intn(len(segs))
	}
	url := r.intn(len(segs))
	ids = make([]string, len(segs))
	texts = make([]string, len(segs))
	total := 0
	for i, s := range segs {
		ids[i] = s.id
		minLen := lens[i] * target / sum
		texts[i] = tg.passage(s.title, minLen, i == 0, i == url, i == emoji)
		total += escapedLen(texts[i])
	}
	for total < crowdMinRefsBytes {
		i := r.intn(len(texts))
		extra := " " + tg.fill(pick(r, passageTemplates))
		texts[i] += extra
		total += escapedLen(extra)
	}
	return ids, texts
}

func (g *crowdGen) writeResponses(f *jsonlGzFile) error {
	var lb lineBuilder
	for t, id := range g.topicIDs {
		r := newRnd(g.cfg.Seed, tagTopicText, uint64(t))
		tg := &textGen{r: r, subject: pick(r, crowdSubjects)}
		topic := crowdTopic{id: id, query: tg.query()}
		topic.refIDs, topic.refTexts = references(tg)
		for resp := range crowdResponsesPerTopic {
			style, kind := crowdStyles[resp/len(crowdKinds)], crowdKinds[resp%len(crowdKinds)]
			stmts, as := draftAnswer(tg, style, kind == "human")
			line, err := g.responseLine(&lb, &topic, g.responseID(t, resp), style, kind, stmts, as)
			if err != nil {
				return err
			}
			if err := f.write(line); err != nil {
				return err
			}
		}
	}
	return nil
}

// responseLine renders a response, trimming statements until raw_text and
// the line respect the release's bounds (and padding the single statement
// of a very short answer).
func (g *crowdGen) responseLine(lb *lineBuilder, topic *crowdTopic, id, style, kind string, stmts []crowdStatement, as answerStyle) ([]byte, error) {
	for {
		ans := renderAnswer(stmts, as, topic.refIDs)
		n := utf8.RuneCountInString(ans.raw)
		if n > crowdRawMaxChars && len(stmts) > 1 {
			stmts = stmts[:len(stmts)-1]
			continue
		}
		lb.begin()
		lb.str("response", id)
		lb.str("topic", topic.id)
		lb.str("style", style)
		lb.str("kind", kind)
		lb.str("query", topic.query)
		lb.strList("references_ids", topic.refIDs)
		lb.strList("references_texts", topic.refTexts)
		lb.str("raw_text", ans.raw)
		lb.str("cleaned_text", ans.cleaned)
		lb.key("statements")
		lb.b = append(lb.b, '[')
		for i, text := range ans.texts {
			if i > 0 {
				lb.b = append(lb.b, ',')
			}
			lb.b = append(lb.b, `{"text":`...)
			lb.b = appendJSONString(lb.b, text)
			lb.b = append(lb.b, `,"citations":`...)
			lb.b = appendStrList(lb.b, ans.cites[i])
			lb.b = append(lb.b, '}')
		}
		lb.b = append(lb.b, ']')
		line := lb.end()
		if len(line) > crowdMaxLineBytes && len(stmts) > 1 {
			stmts = stmts[:len(stmts)-1]
			continue
		}
		if n > crowdRawMaxChars || n < crowdRawMinChars {
			return nil, fmt.Errorf("responses: %s raw_text has %d chars", id, n)
		}
		return line, nil
	}
}

// crowdFiles lists the output files in report order.
var crowdFiles = [4]string{"responses.jsonl", "ratings.jsonl", "llm_ratings.jsonl", "grades.jsonl"}

// generateCrowdRAG25 writes the four files into cfg.Out. Files are produced
// concurrently; each is a pure function of cfg, so output is deterministic.
func generateCrowdRAG25(cfg crowdConfig) ([]crowdFileStat, error) {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	g := newCrowdGen(cfg)
	writers := [4]func(*jsonlGzFile) error{g.writeResponses, g.writeRatings, g.writeLLMRatings, g.writeGrades}
	stats := make([]crowdFileStat, len(crowdFiles))
	errs := make([]error, len(crowdFiles))
	var wg sync.WaitGroup
	for i, name := range crowdFiles {
		wg.Go(func() {
			f, err := createJSONLGz(cfg.Out, name)
			if err != nil {
				errs[i] = err
				return
			}
			err = f.close(writers[i](f))
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", name, err)
				return
			}
			st, err := os.Stat(filepath.Join(cfg.Out, name+".gz"))
			if err != nil {
				errs[i] = err
				return
			}
			stats[i] = crowdFileStat{Name: name + ".gz", Records: f.records, Bytes: st.Size()}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return stats, nil
}
