package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// DeliData (Karadzhov, Stafford & Vlachos, CSCW 2023): group chats of 2–6
// people solving the Wason card-selection task together.
//
//	go run ./cmd/agora-gen delidata --out DIR [--groups N | --scale F] [--seed S]
//
// What the real corpus looks like, and so what this generator writes:
//
//   - A folder with one file per group, named by the group's UUID (v4) with
//     no extension, plus an empty __init__.py that loaders must skip. The
//     release has 500 groups and 17,610 rows (500 INITIAL, 14,003 MESSAGE,
//     3,107 SUBMIT); --scale 1 reproduces that size.
//   - Each file is UTF-8 TSV (no BOM, LF, final newline) with the 13-column
//     header deliHeader. No field holds a tab or newline; no field starts
//     with a double quote, although some contain one mid-text, so a strict
//     CSV reader rejects the files and splitting on tabs is the way in.
//   - No timestamp column: rows are in chronological order and the INITIAL
//     row comes first. Its message_id is -1; every other row (SUBMIT too,
//     whatever the upstream README says) has a unique UUID v4.
//   - INITIAL original_text is "Alias,SYSTEM,Alias&&c1,c2,c3,c4": the aliases
//     present at the start (SYSTEM anywhere among them), then the 4 cards
//     (digits 1–9, upper-case letters). SUBMIT text is the comma-joined
//     selection (a few are empty, one is the malformed "U,on"). MESSAGE text
//     is free chat; when it contains an apostrophe both original_text and
//     clean_text are SQL-quoted: wrapped in '…' with inner ' doubled.
//   - clean_text is the tokenised message (a space before punctuation, "--"
//     as "- -") with card mentions masked <CARD> and aliases <MENTION>;
//     empty on INITIAL/SUBMIT, like the three annotation columns (which on
//     MESSAGE rows include the literal strings "None" and "0", and
//     comma-joined multi-labels) and sol_tracker_message (the cards a
//     message mentions, often empty).
//   - sol_tracker_all, on every row, is each participant's current selection
//     as json.dumps would print it ({"Bat": ["3", "U"], "Cat": []}). Keys
//     follow first appearance, so they include people who joined after the
//     INITIAL row. A SUBMIT replaces the submitter's entry with the submitted
//     cards; a MESSAGE with card mentions replaces the speaker's entry with
//     them. Upstream bugs kept: "N/A" split into ["N", "/", "A"] (a late
//     joiner's placeholder) and the "on" left by the "U,on" submission.
//   - team_performance = round(mean over tracker keys of (cards whose
//     selected/unselected state is right)/4, 3), where the right answer is
//     the vowels plus the odd digits; printed like Python's str(float)
//     ("0.5", "0.562", "1.0"). performance_change = round(this row's value
//     minus the previous row's, 3), "0.0" on INITIAL. On rows whose tracker
//     holds the N/A artefact the corpus value disagrees with that formula
//     (9 rows in the release); here it is computed as if the placeholder
//     were an empty selection, and those groups hold exactly one of the
//     cards A and N, so the printed value always differs from what an ETL
//     recomputes from the tracker.
//
// Output is a pure function of the flags and --seed (default 2023): every
// group has its own random streams, files are streamed row by row, and
// nothing depends on map order, the clock or the number of CPUs.
//
// # Shipped sample
//
// testdata/delidata is reproduced byte for byte by running, from the module
// root (the rm clears group files of an older generator version, which the
// generator refuses to mix with its own):
//
//	rm -rf testdata/delidata && go run ./cmd/agora-gen delidata --out testdata/delidata --groups 12
//
// TestDeliDataSampleMatchesTestdata fails when the generator and the
// committed sample drift apart.

// Size and bounds of the real release.
const (
	deliReleaseGroups = 500
	deliMaxGroups     = 1_000_000
	deliDefaultSeed   = 2023
	deliMaxMessage    = 415 // characters of original_text
	deliMaxRows       = 116 // rows per group, INITIAL included
	// deliReleaseArtefactEpisodes × ~3 rows ≈ the release's 9 N/A rows.
	deliReleaseArtefactEpisodes = 3
	deliReleaseEmptySubmits     = 6
)

// Stream tags (distinct from the crowdrag25 tags in rand.go).
const (
	deliTagPlan uint64 = 0xde11_da7a_0000 + iota
	deliTagGroupID
	deliTagGroup
	deliTagText
	deliTagMessageIDs
)

// deliHeader is the exact column order of every file.
var deliHeader = [...]string{
	"group_id", "message_id", "message_type", "origin", "original_text", "clean_text",
	"annotation_type", "annotation_target", "annotation_additional",
	"team_performance", "performance_change", "sol_tracker_message", "sol_tracker_all",
}

// deliAliases are the 29 participant aliases of the release.
var deliAliases = [...]string{
	"Duck", "Leopard", "Cat", "Guinea pig", "Unicorn", "Bat", "Chipmunk", "Dog", "Fox", "Owl",
	"Panda", "Tiger", "Lion", "Zebra", "Giraffe", "Rabbit", "Horse", "Bear", "Wolf", "Monkey",
	"Elephant", "Koala", "Penguin", "Dolphin", "Squirrel", "Hamster", "Llama", "Hedgehog", "Otter",
}

const (
	deliVowels     = "AEIOU"
	deliConsonants = "BCDFGHJKLMNPQRSTVWXYZ"
)

// deliUUIDRe matches group file names (any UUID version, lower case).
var deliUUIDRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// deliConfig is a fully resolved generation request.
type deliConfig struct {
	// Out is the output directory.
	Out string
	// Groups is the number of group files.
	Groups int
	// Seed selects the random streams.
	Seed uint64
}

// deliRowRef locates one row: file name and 1-based line (the header is line 1).
type deliRowRef struct {
	File string
	Line int
}

// deliStats summarises a generated corpus.
type deliStats struct {
	Groups, Rows, Initial, Messages, Submits int
	Bytes                                    int64
	// Mismatches are the N/A artefact rows whose team_performance differs
	// from the formula, in group order.
	Mismatches []deliRowRef
}

func runDeliData(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("delidata", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output directory (created if missing; required)")
	scale := fs.Float64("scale", 1, "size relative to the real corpus (1 = 500 groups, ~17,610 rows)")
	groups := fs.Int("groups", -1, "number of groups (overrides --scale)")
	seed := fs.Uint64("seed", deliDefaultSeed, "random seed; equal flags and seed give byte-identical files")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: agora-gen delidata --out DIR [--groups N | --scale F] [--seed S]\n\n"+
			"Writes one TSV file per group chat, named by the group UUID, plus an empty\n"+
			"__init__.py, in the DeliData corpus format into DIR.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, out); err != nil {
		return err
	}
	cfg, err := resolveDeliConfig(*out, *scale, *groups, *seed)
	if err != nil {
		return err
	}
	st, err := generateDeliData(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "delidata: %d groups, seed %d -> %s\n", st.Groups, cfg.Seed, cfg.Out)
	fmt.Fprintf(stdout, "  rows %d (INITIAL %d, MESSAGE %d, SUBMIT %d), %d bytes\n",
		st.Rows, st.Initial, st.Messages, st.Submits, st.Bytes)
	fmt.Fprintf(stdout, "  team_performance artefact rows (differ from the formula): %d\n", len(st.Mismatches))
	for i, m := range st.Mismatches {
		if i == 20 {
			fmt.Fprintf(stdout, "    …\n")
			break
		}
		fmt.Fprintf(stdout, "    %s:%d\n", m.File, m.Line)
	}
	return nil
}

// resolveDeliConfig turns flags into a group count; groups < 0 means unset.
func resolveDeliConfig(out string, scale float64, groups int, seed uint64) (deliConfig, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return deliConfig{}, fmt.Errorf("delidata: --scale must be > 0, got %v", scale)
	}
	n := 0
	if x := math.Round(deliReleaseGroups * scale); x <= deliMaxGroups {
		n = int(x)
	} else {
		n = deliMaxGroups + 1
	}
	if groups >= 0 {
		n = groups
	}
	switch {
	case n < 1:
		return deliConfig{}, fmt.Errorf("delidata: need at least 1 group, got %d", n)
	case n > deliMaxGroups:
		return deliConfig{}, fmt.Errorf("delidata: at most %d groups supported", deliMaxGroups)
	}
	return deliConfig{Out: out, Groups: n, Seed: seed}, nil
}

// deliQuirks are the rare corpus features a group must carry. They are
// placed by deliPlan so that every output, however small, has them.
type deliQuirks struct {
	showcase     bool // group 0: Guinea pig, ’ “ … ¿ and a mid-text '"'
	uOn          bool // the malformed "U,on" submission (once per corpus)
	artefact     bool // an N/A tracker episode (team_performance mismatch rows)
	targetNone   bool // annotation_target "None" (once per corpus)
	leadSpace    bool // original_text with a leading space (once)
	trailSpace   bool // original_text with a trailing space (once)
	emptySubmits int  // SUBMIT rows with no cards
}

func deliPlan(n int, seed uint64) []deliQuirks {
	q := make([]deliQuirks, n)
	r := newRnd(seed, deliTagPlan)
	q[0].showcase = true
	q[r.intn(n)].uOn = true
	q[r.intn(n)].targetNone = true
	q[r.intn(n)].leadSpace = true
	q[r.intn(n)].trailSpace = true
	empties := max(1, int(math.Round(float64(deliReleaseEmptySubmits)*float64(n)/deliReleaseGroups)))
	for range empties {
		q[r.intn(n)].emptySubmits++
	}
	episodes := min(n, max(2, int(math.Round(float64(deliReleaseArtefactEpisodes)*float64(n)/deliReleaseGroups))))
	for placed := 0; placed < episodes; {
		if i := r.intn(n); !q[i].artefact {
			q[i].artefact = true
			placed++
		}
	}
	return q
}

// deliGroupID is group i's UUID (and file name).
func deliGroupID(seed uint64, i int) string {
	return uuid4(newRnd(seed, deliTagGroupID, uint64(i)))
}

// generateDeliData writes the corpus into cfg.Out. Groups are built and
// written concurrently; each is a pure function of (seed, index).
func generateDeliData(cfg deliConfig) (deliStats, error) {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return deliStats{}, err
	}
	ids := make([]string, cfg.Groups)
	want := make(map[string]bool, cfg.Groups)
	for i := range ids {
		ids[i] = deliGroupID(cfg.Seed, i)
		want[ids[i]] = true
	}
	// Never mix corpora: group files this run would not write are refused
	// rather than deleted (DIR might be a real corpus).
	entries, err := os.ReadDir(cfg.Out)
	if err != nil {
		return deliStats{}, err
	}
	var stale []string
	for _, e := range entries {
		if deliUUIDRe.MatchString(e.Name()) && !want[e.Name()] {
			stale = append(stale, e.Name())
		}
	}
	if len(stale) > 0 {
		return deliStats{}, fmt.Errorf("delidata: %s already holds %d group files this run would not write (e.g. %s); remove them or use an empty directory",
			cfg.Out, len(stale), stale[0])
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "__init__.py"), nil, 0o644); err != nil {
		return deliStats{}, err
	}

	plan := deliPlan(cfg.Groups, cfg.Seed)
	per := make([]deliGroupStats, cfg.Groups)
	workers := min(runtime.GOMAXPROCS(0), cfg.Groups)
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.Groups {
					return
				}
				st, err := writeDeliGroup(cfg.Out, ids[i], buildDeliGroup(cfg.Seed, i, ids[i], plan[i]))
				if err != nil {
					errs[w] = err
					return
				}
				per[i] = st
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return deliStats{}, err
	}
	st := deliStats{Groups: cfg.Groups}
	for _, p := range per {
		st.Initial += p.initial
		st.Messages += p.messages
		st.Submits += p.submits
		st.Bytes += p.bytes
		st.Mismatches = append(st.Mismatches, p.mismatches...)
	}
	st.Rows = st.Initial + st.Messages + st.Submits
	return st, nil
}

// deliRow is one output line; fields in deliHeader order.
type deliRow struct {
	fields [len(deliHeader)]string
	// artefact marks a row whose team_performance deliberately differs
	// from the formula.
	artefact bool
}

type deliGroupStats struct {
	initial, messages, submits int
	bytes                      int64
	mismatches                 []deliRowRef
}

func writeDeliGroup(dir, id string, rows []deliRow) (st deliGroupStats, err error) {
	f, err := os.Create(filepath.Join(dir, id))
	if err != nil {
		return st, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := bufio.NewWriterSize(f, 32<<10)
	line := make([]byte, 0, 1024)
	write := func(fields []string) error {
		line = line[:0]
		for i, v := range fields {
			if strings.ContainsAny(v, "\t\n\r") || strings.HasPrefix(v, `"`) {
				return fmt.Errorf("delidata: %s: bad %s field %q", id, deliHeader[i], v)
			}
			if i > 0 {
				line = append(line, '\t')
			}
			line = append(line, v...)
		}
		line = append(line, '\n')
		st.bytes += int64(len(line))
		_, err := w.Write(line)
		return err
	}
	if err := write(deliHeader[:]); err != nil {
		return st, err
	}
	for i := range rows {
		row := &rows[i]
		if err := write(row.fields[:]); err != nil {
			return st, err
		}
		switch row.fields[2] {
		case "INITIAL":
			st.initial++
		case "MESSAGE":
			st.messages++
		case "SUBMIT":
			st.submits++
		}
		if row.artefact {
			st.mismatches = append(st.mismatches, deliRowRef{File: id, Line: i + 2})
		}
	}
	return st, w.Flush()
}

// deliTracker is sol_tracker_all: selections in key insertion order.
type deliTracker struct {
	keys []string
	sel  map[string][]string
}

func (t *deliTracker) set(p string, cards []string) {
	if _, ok := t.sel[p]; !ok {
		t.keys = append(t.keys, p)
	}
	t.sel[p] = cards
}

// json renders the tracker exactly like Python's json.dumps defaults.
func (t *deliTracker) json() string {
	b := make([]byte, 0, 32*len(t.keys))
	b = append(b, '{')
	for i, k := range t.keys {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendPyJSONString(b, k)
		b = append(b, ": ["...)
		for j, v := range t.sel[k] {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = appendPyJSONString(b, v)
		}
		b = append(b, ']')
	}
	return string(append(b, '}'))
}

// appendPyJSONString quotes s like json.dumps with ensure_ascii=True.
func appendPyJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, `\"`...)
		case r == '\\':
			b = append(b, `\\`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\b':
			b = append(b, `\b`...)
		case r == '\f':
			b = append(b, `\f`...)
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		case r > 0xffff:
			r -= 0x10000
			b = fmt.Appendf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b = fmt.Appendf(b, `\u%04x`, r)
		}
	}
	return append(b, '"')
}

// deliIsArtefact reports whether a tracker selection is the split "N/A".
func deliIsArtefact(sel []string) bool { return slices.Contains(sel, "/") }

// formatPyRound3 prints x like Python's str(round(x, 3)): the exact binary
// value rounded half-even to 3 decimals, trailing zeros dropped but one
// decimal kept.
func formatPyRound3(x float64) string {
	s := strconv.FormatFloat(x, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return s
}

// deliGroupGen holds the state of one group chat while it is generated.
type deliGroupGen struct {
	r, tr   *rnd // structure and text streams
	cards   [4]string
	roles   [4]byte // 'V' vowel, 'K' consonant, 'E' even, 'O' odd
	correct [4]bool
	people  []string
	belief  map[string]uint8 // state of mind: bit i = card i selected
	final   uint8            // the answer the group drifts towards
	tracker deliTracker
	said    map[string]bool // longer messages already sent (no verbatim repeats)
}

// deliSpeakerCount draws 2–6 with the release's weights (115/198/125/59/3).
func deliSpeakerCount(r *rnd) int {
	u := r.intn(500)
	for i, w := range [...]int{115, 198, 125, 59, 3} {
		if u < w {
			return i + 2
		}
		u -= w
	}
	return 3
}

// deliMessageQuantiles is the inverse CDF of MESSAGE rows per group
// (release: 6–104, median 25, mean 28).
var deliMessageQuantiles = [...]struct{ p, v float64 }{
	{0, 6}, {0.05, 9}, {0.15, 14}, {0.30, 20}, {0.50, 25}, {0.70, 33},
	{0.85, 43}, {0.95, 60}, {0.99, 84}, {1, 104},
}

func deliMessageCount(r *rnd) int {
	u := r.float()
	q := deliMessageQuantiles[:]
	for i := 1; i < len(q); i++ {
		if u < q[i].p || i == len(q)-1 {
			x := q[i-1].v + float64((q[i].v-q[i-1].v)*(u-q[i-1].p))/(q[i].p-q[i-1].p)
			return int(math.Floor(x + 0.5))
		}
	}
	panic("unreachable")
}

// deliCards draws the 4 cards: usually one vowel, one consonant, one even
// and one odd digit, sometimes another mix. The "U,on" group shows U; an
// artefact group shows exactly one of A and N, so that reading the split
// "N/A" as a selection changes the score.
func deliCards(r *rnd, q deliQuirks) (cards [4]string) {
	var cs [4]byte
	if q.uOn || q.artefact || r.chance(0.8) {
		v := deliVowels[r.intn(len(deliVowels))]
		c := deliConsonants[r.intn(len(deliConsonants))]
		switch {
		case q.uOn && q.artefact:
			v, c = 'U', 'N'
		case q.uOn:
			v = 'U'
		case q.artefact && r.chance(0.7):
			v = 'A'
			for c == 'N' {
				c = deliConsonants[r.intn(len(deliConsonants))]
			}
		case q.artefact:
			c = 'N'
			for v == 'A' {
				v = deliVowels[r.intn(len(deliVowels))]
			}
		}
		cs = [4]byte{v, c, byte('2' + 2*r.intn(4)), byte('1' + 2*r.intn(5))}
	} else {
		for {
			for i := range 2 {
				if r.chance(0.5) {
					cs[i] = deliVowels[r.intn(len(deliVowels))]
				} else {
					cs[i] = deliConsonants[r.intn(len(deliConsonants))]
				}
				cs[2+i] = byte('1' + r.intn(9))
			}
			right := 0
			for _, c := range cs {
				if deliRightCard(c) {
					right++
				}
			}
			if cs[0] != cs[1] && cs[2] != cs[3] && right > 0 && right < 4 {
				break
			}
		}
	}
	shuffle(r, cs[:])
	for i, c := range cs {
		cards[i] = string(c)
	}
	return cards
}

// deliRightCard reports whether a card belongs to the correct answer
// (a vowel or an odd digit).
func deliRightCard(c byte) bool {
	return strings.IndexByte(deliVowels, c) >= 0 || (c >= '1' && c <= '9' && (c-'0')%2 == 1)
}

func deliRole(c byte) byte {
	switch {
	case strings.IndexByte(deliVowels, c) >= 0:
		return 'V'
	case c >= 'A' && c <= 'Z':
		return 'K'
	case (c-'0')%2 == 0:
		return 'E'
	}
	return 'O'
}

// roleMask returns the cards with any of the given roles.
func (g *deliGroupGen) roleMask(roles string) uint8 {
	var m uint8
	for i, r := range g.roles {
		if strings.IndexByte(roles, r) >= 0 {
			m |= 1 << i
		}
	}
	return m
}

// initialBelief draws a typical individual Wason answer.
func (g *deliGroupGen) initialBelief(r *rnd) uint8 {
	for {
		var m uint8
		switch u := r.intn(100); {
		case u < 30:
			m = g.roleMask("V") // the vowel only
		case u < 65:
			m = g.roleMask("VE") // matching bias
		case u < 77:
			m = g.roleMask("VO") // correct
		case u < 83:
			m = 0xf
		case u < 88:
			m = g.roleMask("VEO")
		case u < 91:
			m = g.roleMask("E")
		default:
			m = uint8(r.between(1, 15))
		}
		if m != 0 {
			return m
		}
	}
}

// list renders a selection: card order, or a random click order.
func (g *deliGroupGen) list(r *rnd, m uint8, shuffled bool) []string {
	out := []string{}
	for i, c := range g.cards {
		if m&(1<<i) != 0 {
			out = append(out, c)
		}
	}
	if shuffled {
		shuffle(r, out)
	}
	return out
}

// performance is the mean participant score over the tracker keys. With
// dropArtefact the split "N/A" counts as an empty selection (what the
// corpus's own computation evidently did); without it, it is the formula
// an ETL recomputes.
func (g *deliGroupGen) performance(dropArtefact bool) (x float64, artefact bool) {
	total := 0
	for _, k := range g.tracker.keys {
		sel := g.tracker.sel[k]
		if deliIsArtefact(sel) {
			artefact = true
			if dropArtefact {
				sel = nil
			}
		}
		for i, c := range g.cards {
			if slices.Contains(sel, c) == g.correct[i] {
				total++
			}
		}
	}
	return float64(total) / float64(4*len(g.tracker.keys)), artefact
}

// buildDeliGroup generates the rows of group idx.
func buildDeliGroup(seed uint64, idx int, id string, q deliQuirks) []deliRow {
	r := newRnd(seed, deliTagGroup, uint64(idx))
	ids := newRnd(seed, deliTagMessageIDs, uint64(idx))
	g := &deliGroupGen{r: r, tr: newRnd(seed, deliTagText, uint64(idx)), belief: map[string]uint8{}, said: map[string]bool{}}
	g.tracker.sel = map[string][]string{}

	// Participants: k aliases, the last nLate of them join after INITIAL.
	k := deliSpeakerCount(r)
	perm := r.perm(len(deliAliases))
	people := make([]string, k)
	for j := range people {
		people[j] = deliAliases[perm[j]]
	}
	if q.showcase && !slices.Contains(people, "Guinea pig") {
		people[r.intn(k)] = "Guinea pig"
	}
	nLate := 0
	switch {
	case q.artefact:
		nLate = 1
	case k >= 3 && r.chance(0.75):
		nLate = 1
		if k >= 5 && r.chance(0.25) {
			nLate = 2
		}
	case k == 2 && r.chance(0.3):
		nLate = 1
	}
	g.people = people
	initial, late := people[:k-nLate], people[k-nLate:]
	sysPos := r.intn(len(initial) + 1)

	g.cards = deliCards(r, q)
	for i, c := range g.cards {
		g.roles[i] = deliRole(c[0])
		g.correct[i] = deliRightCard(c[0])
	}

	// Row counts. Row 0 is INITIAL; rows 1..T follow.
	specials := 0
	if q.showcase {
		specials += 7
	}
	for _, b := range []bool{q.targetNone, q.leadSpace, q.trailSpace} {
		if b {
			specials++
		}
	}
	nMsg := max(deliMessageCount(r), specials+3)
	nSub := k + r.intn(2+nMsg/5)
	if r.chance(0.15) {
		nSub-- // somebody never pressed Submit
	}
	need := q.emptySubmits + 1
	if q.uOn {
		need++
	}
	nSub = max(min(nSub, deliMaxRows-1-nMsg), need)
	T := nMsg + nSub

	// Chronology: messages spread evenly, submissions skewed late.
	type event struct {
		key    float64
		submit bool
	}
	evs := make([]event, 0, T)
	for j := range nMsg {
		evs = append(evs, event{(float64(j) + r.float()) / float64(nMsg), false})
	}
	for range nSub {
		evs = append(evs, event{max(r.float(), r.float()), true})
	}
	slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.key, b.key) })
	submit := make([]bool, T+1)
	var msgRows []int
	for j, e := range evs {
		submit[j+1] = e.submit
		if !e.submit {
			msgRows = append(msgRows, j+1)
		}
	}

	// Who speaks when. join[p] is the row before which p cannot act.
	origin := make([]string, T+1)
	forced := make([]bool, T+1)
	join := map[string]int{}
	artP, r0, r1 := "", -1, -1
	if q.artefact {
		// The late joiner's first row is a greeting that creates the "N/A"
		// placeholder; 2–4 rows later they state or submit a selection.
		artP = late[0]
		var cands []int
		for _, t := range msgRows {
			if t <= T-2 && t <= max(2, T/2) {
				cands = append(cands, t)
			}
		}
		if len(cands) == 0 {
			for _, t := range msgRows {
				if t <= T-2 {
					cands = append(cands, t)
				}
			}
		}
		r0 = pick(r, cands)
		r1 = min(r0+r.between(2, 4), T)
		origin[r0], origin[r1] = artP, artP
		forced[r0], forced[r1] = true, true
		join[artP] = r0
	}
	for _, p := range late {
		if p == artP {
			continue
		}
		var cands []int
		limit := max(1, (4*T+9)/10)
		for _, t := range msgRows {
			if !forced[t] && t <= limit {
				cands = append(cands, t)
			}
		}
		if len(cands) == 0 {
			for _, t := range msgRows {
				if !forced[t] {
					cands = append(cands, t)
				}
			}
		}
		t := pick(r, cands)
		origin[t], forced[t] = p, true
		join[p] = t
	}
	talk := make(map[string]float64, k)
	for _, p := range people {
		talk[p] = 0.4 + r.float()
	}
	weighted := func(ps []string) string {
		total := 0.0
		for _, p := range ps {
			total += talk[p]
		}
		x := float64(r.float() * total)
		for _, p := range ps {
			if x < talk[p] {
				return p
			}
			x -= talk[p]
		}
		return ps[len(ps)-1]
	}
	submitted := map[string]int{}
	count := map[string]int{}
	prev := ""
	for t := 1; t <= T; t++ {
		if !forced[t] {
			var eligible, fresh []string
			for _, p := range people {
				if join[p] >= t || (p == artP && t > r0 && t < r1) {
					continue
				}
				eligible = append(eligible, p)
				if submitted[p] == 0 {
					fresh = append(fresh, p)
				}
			}
			p := weighted(eligible)
			switch {
			case submit[t] && len(fresh) > 0 && r.chance(0.75):
				p = weighted(fresh)
			case !submit[t] && p == prev && len(eligible) > 1 && r.chance(0.5):
				p = weighted(eligible)
			}
			origin[t] = p
		}
		if submit[t] {
			submitted[origin[t]]++
		}
		count[origin[t]]++
		prev = origin[t]
	}
	// Everybody speaks at least once.
	for _, p := range initial {
		if count[p] > 0 {
			continue
		}
		var cands []int
		for _, t := range msgRows {
			if !forced[t] && count[origin[t]] >= 2 {
				cands = append(cands, t)
			}
		}
		if len(cands) == 0 {
			continue
		}
		t := pick(r, cands)
		count[origin[t]]--
		origin[t] = p
		count[p]++
	}

	// Rows that carry rare features.
	var free []int
	for _, t := range msgRows {
		if !forced[t] {
			free = append(free, t)
		}
	}
	shuffle(r, free)
	spec := make([]deliMsgSpec, T+1)
	pop := func() int {
		t := free[0]
		free = free[1:]
		return t
	}
	if q.showcase {
		for c := range deliNonASCII {
			spec[pop()].nonASCII = c + 1
		}
		spec[pop()].quote = true
		spec[pop()].ann = deliAnn{deliNPD, "Solution", "complete_solution,specific_addressee"}
		spec[pop()].ann = deliAnn{deliNPD, "Disagree", "0"}
	}
	if q.targetNone {
		spec[pop()].targetNone = true
	}
	if q.leadSpace {
		spec[pop()].leadSpace = true
	}
	if q.trailSpace {
		spec[pop()].trailSpace = true
	}
	if r0 > 0 {
		spec[r0].greeting = true
		spec[r1].solution = true
	}
	var subRows []int
	for t := 1; t <= T; t++ {
		if submit[t] && t != r1 {
			subRows = append(subRows, t)
		}
	}
	shuffle(r, subRows)
	emptySub := map[int]bool{}
	for _, t := range subRows[:q.emptySubmits] {
		emptySub[t] = true
	}
	uOnRow := -1
	if q.uOn {
		uOnRow = subRows[q.emptySubmits]
	}

	// States of mind and the initial tracker.
	for _, p := range people {
		g.belief[p] = g.initialBelief(r)
	}
	g.final = g.roleMask("VO")
	if !r.chance(0.5) {
		best, bestN := g.roleMask("VE"), 0
		for _, p := range initial {
			n := 0
			for _, o := range initial {
				if g.belief[o] == g.belief[p] {
					n++
				}
			}
			if n > bestN {
				best, bestN = g.belief[p], n
			}
		}
		g.final = best
	}
	for _, p := range initial {
		sel := g.list(r, g.belief[p], false)
		if r.chance(0.008) {
			sel = []string{} // no individual answer recorded
		}
		g.tracker.set(p, sel)
	}

	rows := make([]deliRow, 0, T+1)
	names := slices.Insert(slices.Clone(initial), sysPos, "SYSTEM")
	tp, _ := g.performance(false)
	tpStr := formatPyRound3(tp)
	rows = append(rows, deliRow{fields: [len(deliHeader)]string{
		id, "-1", "INITIAL", "SYSTEM",
		strings.Join(names, ",") + "&&" + strings.Join(g.cards[:], ","),
		"", "", "", "", tpStr, "0.0", "", g.tracker.json(),
	}})
	prevTP, _ := strconv.ParseFloat(tpStr, 64)

	for t := 1; t <= T; t++ {
		p := origin[t]
		f := float64(t) / float64(T)
		row := deliRow{}
		row.fields[0] = id
		row.fields[1] = uuid4(ids)
		row.fields[3] = p
		if submit[t] {
			if r.chance(0.25 + float64(0.7*f)) {
				g.belief[p] = g.final
			}
			sel := g.list(r, g.belief[p], r.chance(0.35))
			switch {
			case emptySub[t]:
				sel = []string{}
			case t == uOnRow:
				sel = []string{"U", "on"} // the release's malformed submission
			}
			g.tracker.set(p, sel)
			row.fields[2] = "SUBMIT"
			row.fields[4] = strings.Join(sel, ",")
		} else {
			if r.chance(0.1 + float64(0.6*f)) {
				g.belief[p] = g.final
			}
			m := g.message(p, spec[t])
			switch {
			case t == r0:
				g.tracker.set(p, []string{"N", "/", "A"})
			case len(m.cards) > 0:
				g.tracker.set(p, m.cards)
			}
			row.fields[2] = "MESSAGE"
			copy(row.fields[4:9], []string{m.orig, m.clean, m.ann.typ, m.ann.target, m.ann.add})
			row.fields[11] = strings.Join(m.cards, ",")
		}
		x, art := g.performance(false)
		tpStr = formatPyRound3(x)
		if art {
			y, _ := g.performance(true)
			if formatPyRound3(y) == tpStr {
				panic("delidata: N/A artefact row agrees with the formula")
			}
			tpStr = formatPyRound3(y)
			row.artefact = true
		}
		cur, _ := strconv.ParseFloat(tpStr, 64)
		row.fields[9] = tpStr
		row.fields[10] = formatPyRound3(cur - prevTP)
		row.fields[12] = g.tracker.json()
		prevTP = cur
		rows = append(rows, row)
	}
	return rows
}

// deliMsgSpec forces features onto a MESSAGE row.
type deliMsgSpec struct {
	greeting   bool    // no card mentions (the artefact join row)
	solution   bool    // states the speaker's full selection (artefact leave row)
	nonASCII   int     // 1..4: use a template with deliNonASCIIChars[n-1]
	quote      bool    // a template with '"' mid-text
	targetNone bool    // annotation_target "None"
	ann        deliAnn // forced annotation, when typ != ""
	leadSpace  bool    // " " before original_text (never SQL-quoted)
	trailSpace bool    // " " after original_text (never SQL-quoted)
}

// deliAnn is the three DeliAnnotation columns of a MESSAGE row.
type deliAnn struct{ typ, target, add string }

const (
	deliNPD     = "Non-probing-deliberation"
	deliProbing = "Probing"
)

// deliFixed is a template that comes with its own annotation.
type deliFixed struct {
	tpl string
	ann deliAnn
}

var (
	annNone        = deliAnn{"None", "0", "0"}
	annReason      = deliAnn{deliNPD, "Reasoning", "0"}
	annProbeReason = deliAnn{deliProbing, "Reasoning", "0"}
	annComplete    = deliAnn{deliNPD, "Solution", "complete_solution"}
	annProbeSol    = deliAnn{deliProbing, "Solution", "complete_solution"}
)

// deliNonASCIIChars are the non-ASCII characters of the release's chat.
var deliNonASCIIChars = [...]string{"’", "“", "…", "¿"}

var deliNonASCII = [len(deliNonASCIIChars)][]deliFixed{
	{
		{"I’m not sure", annNone},
		{"it’s {S}", annComplete},
		{"that’s what I thought", deliAnn{deliNPD, "Agree", "0"}},
		{"I don’t think {K} matters", annReason},
		{"let’s submit", deliAnn{deliNPD, "Moderation", "0"}},
	},
	{
		{"the rule is “if vowel then even”", annReason},
		{"so “{S}” is the answer?", annProbeSol},
		{"I typed “{C}” by mistake", annNone},
	},
	{
		{"hmm…", annNone},
		{"{S}…", annComplete},
		{"wait…", deliAnn{deliNPD, "Moderation", "0"}},
		{"I think {S}… not sure", annComplete},
	},
	{
		{"¿{S}?", annProbeSol},
		{"¿why {E}?", annProbeReason},
		{"¿what?", annNone},
	},
}

// deliQuoted contain '"' mid-text (never first).
var deliQuoted = []deliFixed{
	{`the rule says "if vowel then even number"`, annReason},
	{`we only need to check the "if" part`, annReason},
	{`it says "a vowel on one side", not both sides`, annReason},
	{`the key word is "if"`, annReason},
	{`it's "if", not "if and only if"`, annReason},
	{`does "even" mean {E} here?`, annProbeReason},
	{`I clicked "submit" too early`, annNone},
	{`so the answer is "{S}"`, deliAnn{deliNPD, "Solution", "solution_summary"}},
}

var deliSocial = []string{
	"hi", "hello", "hi everyone", "hey", "hello!", "hi all", "hi guys", "hello everyone!",
	"ok", "okay", "yes", "yeah", "lol", "haha", "cool", "sure", "hmm", "ok cool", "great",
	"nice", "thanks!", "bye", "good luck everyone", "I'm here", "I'm ready", "what's up",
	"sorry I'm late", "how do we submit?", "can everyone see the cards?",
	"are we supposed to chat here?", "who's going first?", "it's my first time doing this",
	"that was fun", "good job team", "thank you all", "I don't know", "me too", "same here",
	"wait", "oh", "right", "idk", "?", "anyone there?", "so how does this work?",
	"hello, nice to meet you all", "is this the chat?", "can you see my messages?", "oops",
	"brb", "I'm back", "the page didn't load for a second", "sorry, my internet is slow",
	"haha yes", "ok ok", "yes!", "no worries", "fine by me", "lets go", "hi :)",
}

var deliAgree = []string{
	"yes", "agreed", "I agree", "agree", "same", "yeah that makes sense", "true", "good point",
	"yep", "exactly", "that's right", "I agree with {M}", "ok I'm convinced", "makes sense",
	"yes I think so too", "you're right", "{M} is right", "ok that's fair", "yeah", "definitely",
	"sounds good", "I agree with that", "ok", "right", "fair point", "yes that's what I thought",
	"same here", "I think so too", "yes, I see it now", "oh yeah you're right",
	"true, I didn't think of that", "agreed with {M}", "yeah I'm happy with that",
	"ok makes sense to me", "yes I agree, that is the only way to test the rule",
	"I agree, I was overthinking it", "yes that makes a lot of sense now",
	"agreed, I think we have it now", "true, the even number does not prove anything",
	"ok I see what you mean now", "yes, good explanation {M}",
}

var deliDisagree = []string{
	"I don't think so", "no", "I disagree", "not sure about that", "no, {C} doesn't matter",
	"but {E} can't break the rule", "I don't agree with {M}", "hmm no I think {K} is irrelevant",
	"that's not right", "I'm not convinced", "no I think we need {O} too",
	"I don't think we need {E}", "but that doesn't prove anything",
	"no, the rule doesn't work both ways",
}

var deliModeration = []string{
	"let's submit", "ok let's discuss", "let's go through each card",
	"we should all submit the same answer", "let's start with {V}", "ok everyone submit",
	"I'll submit now", "let's decide", "time to submit I think", "let's wait for {M}",
	"let's talk about {E}", "ok let's go card by card", "I think we're done",
	"let's make a final decision", "we have a few minutes left", "everyone please submit again",
}

var deliModerationProbe = []string{
	"what do you all think?", "{M}, what do you think?", "{M} what did you pick?",
	"shall we submit?", "are we all agreed?", "anyone else?", "so what's our final answer?",
	"what did everyone choose?", "does everyone agree?", "what about you {M}?", "any thoughts?",
	"should we go through them one by one?", "has everyone submitted?", "ready to submit?",
	"what did you all put?", "which cards did you pick?", "{M}, do you agree?",
	"are we all happy with that?",
}

var deliReasoning = []string{
	"because the rule only says what happens if there is a vowel",
	"we need to check if the rule is broken",
	"the rule does not say anything about consonants",
	"an even number could have a consonant on the back and that would not break the rule",
	"if there's a vowel behind the odd number the rule is false",
	"we are trying to prove the rule wrong, not right",
	"turning the even number cannot disprove the rule",
	"it only matters if the vowel has an odd number on the other side",
	"the consonant is irrelevant",
	"we need to find a card that breaks the rule",
	"it's about falsifying the rule",
	"the rule only works one way",
	"checking the even number does not tell us anything",
	"because if {V} has an odd number on the back the rule is wrong",
	"{O} could have a vowel on the other side",
	"turning {E} doesn't tell us anything",
	"we need to check {V} to see if there's an even number behind it",
	"if {O} has a vowel on the back then the rule is broken",
	"{E} cannot break the rule",
	"{K} is a consonant so it does not matter",
	"{E} is even so it doesn't matter what is on the back",
	"the rule says nothing about {K}",
	"I think {V} matters but not {K}",
	"{V} and {O} are the only ones that can break the rule",
	"if {E} has a consonant on the back the rule still holds",
	"{K} could have anything on the back",
	"whatever is behind {E}, the rule can still be true",
	"we have to turn {V} because if it is odd on the other side the rule fails",
	"the rule is if vowel then even -- so we check the vowel and the odd number",
	"nothing on the back of {K} can break it",
	"if {V} has an even number that confirms it but we need to test it anyway",
	"I thought {E} at first because of the even number",
	"it is a logic puzzle, the obvious answer is usually wrong",
	"people usually pick the even number but it does not help",
	"the question is which cards could prove the rule false",
}

var deliReasoningProbe = []string{
	"why {C}?", "why not {O}?", "why would we turn {E}?",
	"but what if {O} has a vowel on the other side?", "how does {E} help?", "does {K} matter?",
	"why?", "what is the point of turning {E}?", "can {O} break the rule?",
	"is {E} not needed to confirm the rule?", "what if there's a vowel behind {O}?",
	"why do you think {V}?", "how can {K} break the rule?", "what would {E} tell us?",
	"why did you choose {C}?", "does the rule say anything about odd numbers?",
}

var deliConsiderOpposite = []string{
	"what if {O} has a vowel on the back?", "but what if the rule is false?",
	"think about what would make the rule false", "think about it the other way round",
	"but what if there's a vowel behind {O}?", "what if we are wrong about {E}?",
	"imagine {O} has a vowel on the back",
}

// deliLeadIns and deliTails pad chat messages.
var (
	deliLeadIns = []string{"hmm ", "well ", "ok so ", "so ", "yeah ", "honestly ", "to be honest ", "ok ",
		"right, ", "I mean ", "hmm, ", "hey, "}
	deliTails = []string{" I think", " to be honest", " in my opinion", " right?", " as well", " probably",
		" for now", ", what do you think?", " haha", " I guess", " at least that is what I thought"}
	// deliBecause are card-free reasons.
	deliBecause = []string{
		"the rule only says what happens if there is a vowel",
		"those are the only cards that can break the rule",
		"we need to find a card that breaks the rule",
		"an odd number with a vowel on the back would make the rule false",
		"the even number could have anything on the other side",
		"the consonant does not matter",
		"the rule only works one way",
		"we need to check the vowel for sure",
		"that is what I thought at first",
		"it makes the most sense to me",
	}
)

// {S} in these is the speaker's own selection.
var deliReasonedSolution = []string{
	"I picked {S} because I thought we need to check both",
	"I chose {S} because those are the only ones that can break the rule",
	"I think {S} because of the vowel and the number",
	"{S}, because the others can't disprove it",
	"I went for {S} since the rule is about vowels",
	"I said {S} because an odd number with a vowel would break it",
}

var deliSolution = []string{
	"I think {S}", "{S}", "I chose {S}", "my answer is {S}", "I'd go with {S}",
	"I said {S} at first", "{S} for me", "I picked {S}", "I went with {S}", "it is {S}",
	"I think it is {S}", "I'm going with {S}", "I put {S}", "I think the answer is {S}",
	"{S} I think", "I had {S}", "I selected {S}", "{S} is my answer", "I would say {S}",
	"now I think {S}", "I changed to {S}", "originally I had {S}", "pretty sure it's {S}",
	"I initially selected {S}", "my initial answer was {S}", "I went for {S} in the first round",
	"I think the correct answer is {S}", "after thinking about it I would go with {S}",
	"I still think the answer is {S}", "I have changed my mind, I think {S}",
}

// {C} in these is one card of the speaker's selection.
var deliPartial = []string{
	"definitely {C}", "{C} for sure", "I think we need {C}", "{C} is definitely one",
	"we need to turn {C}", "I'm not sure about {C}", "{C} too", "and {C}", "also {C}",
	"{C} has to be one of them", "at least {C}",
}

var deliSolutionProbe = []string{
	"should we go with {S}?", "so {S}?", "is it {S}?", "do we all agree on {S}?", "{S}?",
	"are we going with {S}?", "so we just need {S}?", "what about {S}?", "{S} then?",
	"is the answer {S}?",
}

// {S} in these is the group's emerging answer.
var deliSummary = []string{
	"so we have {S}", "ok so final answer {S}", "so we're all going with {S}",
	"so the answer is {S}", "ok so {S} then", "final answer: {S}", "so everyone agrees on {S}",
	"ok {S} it is", "so it's {S}", "let's all submit {S}",
}

// deliWeight is one weighted choice.
type deliWeight struct {
	v string
	w int
}

func deliWeighted(r *rnd, ws []deliWeight) string {
	total := 0
	for _, w := range ws {
		total += w.w
	}
	u := r.intn(total)
	for _, w := range ws {
		if u < w.w {
			return w.v
		}
		u -= w.w
	}
	panic("unreachable")
}

// Annotation distributions (release counts where known).
var (
	deliTypeWeights = []deliWeight{{deliNPD, 8990}, {deliProbing, 1738}, {"None", 2864}, {"0", 411}}
	deliTargets     = map[string][]deliWeight{
		deliNPD:     {{"Reasoning", 3682}, {"Solution", 2953}, {"Agree", 2047}, {"Moderation", 197}, {"Disagree", 111}},
		deliProbing: {{"Reasoning", 700}, {"Solution", 450}, {"Moderation", 588}},
	}
	deliAdditional = map[string][]deliWeight{
		deliNPD + "/Solution": {{"complete_solution", 1480}, {"partial_solution", 240}, {"solution_summary", 160},
			{"0", 80}, {"complete_solution,specific_addressee", 15}, {"complete_solution,solution_summary", 8},
			{"partial_solution,solution_summary", 6}},
		deliProbing + "/Solution": {{"complete_solution", 60}, {"partial_solution", 15}, {"0", 20}, {"specific_addressee", 5}},
		deliNPD + "/Reasoning": {{"0", 900}, {"complete_solution", 40}, {"partial_solution", 15}, {"consider_opposite", 7},
			{"specific_addressee", 12}, {"partial_solution,specific_addressee", 2}},
		deliProbing + "/Reasoning":  {{"0", 85}, {"consider_opposite", 5}, {"specific_addressee", 10}},
		deliNPD + "/Agree":          {{"0", 92}, {"specific_addressee", 4}, {"solution_summary", 3}, {"specific_addressee,solution_summary", 1}},
		deliNPD + "/Disagree":       {{"0", 78}, {"consider_opposite", 10}, {"specific_addressee", 12}},
		deliNPD + "/Moderation":     {{"0", 55}, {"solution_summary", 25}, {"specific_addressee", 20}},
		deliProbing + "/Moderation": {{"0", 75}, {"specific_addressee", 24}, {"specific_addressee,solution_summary", 1}},
	}
)

func deliDrawAnn(r *rnd) deliAnn {
	typ := deliWeighted(r, deliTypeWeights)
	if typ == "None" || typ == "0" {
		return deliAnn{typ, "0", "0"}
	}
	target := deliWeighted(r, deliTargets[typ])
	return deliAnn{typ, target, deliWeighted(r, deliAdditional[typ+"/"+target])}
}

// deliMsg is one generated chat message.
type deliMsg struct {
	orig, clean string
	ann         deliAnn
	cards       []string // mentioned cards, in order (sol_tracker_message)
}

// deliStated says what {S} stands for.
type deliStated int

const (
	statedOwn   deliStated = iota // the speaker's selection
	statedGroup                   // the group's emerging answer
	statedEither
)

// message writes a MESSAGE row for speaker p.
func (g *deliGroupGen) message(p string, spec deliMsgSpec) deliMsg {
	r := g.tr
	for range 50 {
		m, ok := g.tryMessage(r, p, spec)
		if !ok || (len(m.orig) > 12 && g.said[m.orig]) {
			continue
		}
		g.said[m.orig] = true
		if spec.leadSpace || spec.trailSpace {
			if strings.Contains(m.orig, "'") {
				continue
			}
			if spec.leadSpace {
				m.orig = " " + m.orig
			} else {
				m.orig += " "
			}
		}
		return deliSQLQuote(m)
	}
	return deliMsg{orig: "ok", clean: "ok", ann: annNone}
}

// deliFieldLen is the length in characters of text once SQL-quoted.
func deliFieldLen(text string) int {
	n := utf8.RuneCountInString(text)
	if q := strings.Count(text, "'"); q > 0 {
		n += q + 2
	}
	return n
}

// deliSQLQuote applies the release's quoting: a message with an apostrophe
// is wrapped in '…' with every inner ' doubled, in both text columns.
func deliSQLQuote(m deliMsg) deliMsg {
	if strings.Contains(m.orig, "'") {
		m.orig = "'" + strings.ReplaceAll(m.orig, "'", "''") + "'"
		m.clean = "'" + strings.ReplaceAll(m.clean, "'", "''") + "'"
	}
	return m
}

func (g *deliGroupGen) tryMessage(r *rnd, p string, spec deliMsgSpec) (deliMsg, bool) {
	var ann deliAnn
	var tpls []string
	stated := statedOwn
	fixed := ""
	switch {
	case spec.greeting:
		if r.chance(0.5) {
			ann, tpls = annNone, deliSocial
		} else {
			ann, tpls = deliAnn{deliNPD, "Agree", "0"}, deliAgree
		}
	case spec.solution:
		ann, tpls = annComplete, deliSolution
	case spec.nonASCII > 0 || (!spec.targetNone && r.chance(0.004)):
		c := spec.nonASCII - 1
		if c < 0 {
			c = r.intn(len(deliNonASCII))
		}
		fx := pick(r, deliNonASCII[c])
		ann, fixed = fx.ann, fx.tpl
	case spec.quote:
		fx := pick(r, deliQuoted)
		ann, fixed = fx.ann, fx.tpl
	default:
		ann = deliDrawAnn(r)
		if spec.ann.typ != "" {
			ann = spec.ann
		}
		if spec.targetNone {
			ann = deliAnn{"None", "None", "0"}
		}
		tpls, stated = g.templatesFor(r, ann)
		if ann.target == "Reasoning" && ann.add == "0" && spec.ann.typ == "" && r.chance(0.03) {
			fx := pick(r, deliQuoted)
			ann, fixed = fx.ann, fx.tpl
		}
	}
	tpl := fixed
	if tpl == "" {
		tpl = pick(r, tpls)
	}
	if strings.Contains(ann.add, "specific_addressee") && !strings.Contains(tpl, "{M}") {
		tpl = pick(r, []string{"{M} ", "{M}, ", "@{M} "}) + tpl
	}
	// Chat padding: lead-ins, tails and explanations.
	if fixed == "" && !spec.greeting {
		if r.chance(0.3) {
			tpl = pick(r, deliLeadIns) + tpl
		}
		switch {
		case ann.target == "Solution" && r.chance(0.3):
			tpl += pick(r, []string{" because ", ", since ", " as "}) + pick(r, deliBecause)
		case r.chance(0.2):
			tpl += pick(r, deliTails)
		}
	}
	// Reasoning sometimes runs on for several sentences.
	if fixed == "" && ann.target == "Reasoning" && r.chance(0.3) {
		for {
			tpl += pick(r, []string{" ", ". ", ", and ", "... "}) + pick(r, deliReasoning)
			if !r.chance(0.45) {
				break
			}
		}
	}
	var sel []string
	switch stated {
	case statedOwn:
		sel = g.list(r, g.belief[p], r.chance(0.3))
	case statedGroup:
		sel = g.list(r, g.final, false)
	case statedEither:
		if r.chance(0.5) {
			sel = g.list(r, g.final, false)
		} else {
			sel = g.list(r, g.belief[p], false)
		}
	}
	m, ok := g.render(r, tpl, sel, p)
	if !ok {
		return m, false
	}
	for deliFieldLen(m.orig) > deliMaxMessage {
		// Drop the last run-on sentence.
		i := max(strings.LastIndex(tpl, ". "), strings.LastIndex(tpl, ", and "), strings.LastIndex(tpl, "... "))
		if i <= 0 {
			return m, false
		}
		tpl = tpl[:i]
		if m, ok = g.render(r, tpl, sel, p); !ok {
			return m, false
		}
	}
	if spec.greeting && len(m.cards) > 0 {
		return m, false
	}
	m.ann = ann
	return m, true
}

// templatesFor chooses the template family matching an annotation.
func (g *deliGroupGen) templatesFor(r *rnd, ann deliAnn) ([]string, deliStated) {
	probing := ann.typ == deliProbing
	switch ann.target {
	case "0", "None":
		if r.chance(0.6) {
			return deliSocial, statedOwn
		}
		// Unannotated rows still say all kinds of things.
		c := deliDrawAnn(r)
		if c.target == "0" {
			return deliSocial, statedOwn
		}
		return g.templatesFor(r, c)
	case "Solution":
		switch {
		case strings.HasPrefix(ann.add, "partial_solution"):
			return deliPartial, statedOwn
		case strings.Contains(ann.add, "solution_summary"):
			return deliSummary, statedGroup
		case probing:
			return deliSolutionProbe, statedEither
		}
		return deliSolution, statedOwn
	case "Reasoning":
		switch {
		case strings.HasPrefix(ann.add, "complete_solution"):
			return deliReasonedSolution, statedOwn
		case strings.HasPrefix(ann.add, "partial_solution"):
			return deliPartial, statedOwn
		case strings.Contains(ann.add, "consider_opposite"):
			return deliConsiderOpposite, statedOwn
		case probing:
			return deliReasoningProbe, statedOwn
		}
		return deliReasoning, statedOwn
	case "Agree":
		if strings.HasPrefix(ann.add, "solution_summary") {
			return deliSummary, statedGroup
		}
		return deliAgree, statedOwn
	case "Disagree":
		return deliDisagree, statedOwn
	case "Moderation":
		switch {
		case strings.HasPrefix(ann.add, "solution_summary"):
			return deliSummary, statedGroup
		case probing:
			return deliModerationProbe, statedOwn
		}
		return deliModeration, statedOwn
	}
	panic("delidata: unknown annotation target " + ann.target)
}

// deliSeg is a piece of a rendered message: plain text, a card or a mention.
type deliSeg struct {
	text string
	kind byte // 0 plain, 'c' card, 'm' mention
}

// render expands a template. {S} is sel rendered as a list, {C}/{C2} a
// card (from sel when there is one), {V} {K} {E} {O} the card with that
// role, {M} another participant. ok is false when the group cannot fill a
// placeholder.
func (g *deliGroupGen) render(r *rnd, tpl string, sel []string, speaker string) (deliMsg, bool) {
	var segs []deliSeg
	var m deliMsg
	lower := r.chance(0.2)
	mention := func(c string) {
		if !slices.Contains(m.cards, c) {
			m.cards = append(m.cards, c)
		}
		if lower {
			c = strings.ToLower(c)
		}
		segs = append(segs, deliSeg{c, 'c'})
	}
	for tpl != "" {
		i := strings.IndexByte(tpl, '{')
		if i < 0 {
			segs = append(segs, deliSeg{tpl, 0})
			break
		}
		j := strings.IndexByte(tpl[i:], '}') + i
		if i > 0 {
			segs = append(segs, deliSeg{tpl[:i], 0})
		}
		slot := tpl[i+1 : j]
		tpl = tpl[j+1:]
		switch slot {
		case "S":
			if len(sel) == 0 {
				return m, false
			}
			sep, last := ", ", " and "
			switch {
			case len(sel) == 2:
				last = deliWeighted(r, []deliWeight{{" and ", 6}, {", ", 2}, {" & ", 1}, {",", 1}})
			case r.chance(0.4):
				last = sep
			}
			for k, c := range sel {
				switch {
				case k == 0:
				case k == len(sel)-1:
					segs = append(segs, deliSeg{last, 0})
				default:
					segs = append(segs, deliSeg{sep, 0})
				}
				mention(c)
			}
		case "C":
			from := sel
			if len(from) == 0 {
				from = g.cards[:]
			}
			mention(pick(r, from))
		case "V", "K", "E", "O":
			var cands []string
			for k, c := range g.cards {
				if g.roles[k] == slot[0] {
					cands = append(cands, c)
				}
			}
			if len(cands) == 0 {
				return m, false
			}
			mention(pick(r, cands))
		case "M":
			var others []string
			for _, p := range g.people {
				if p != speaker {
					others = append(others, p)
				}
			}
			a := pick(r, others)
			if r.chance(0.25) {
				a = strings.ToLower(a)
			}
			segs = append(segs, deliSeg{a, 'm'})
		default:
			panic("delidata: unknown slot " + slot)
		}
	}
	// Chat style: sometimes a capital first letter or a final full stop.
	if len(segs) > 0 && segs[0].kind == 0 && r.chance(0.3) {
		segs[0].text = upperFirst(segs[0].text)
	}
	last := segs[len(segs)-1]
	if end, _ := utf8.DecodeLastRuneInString(last.text); r.chance(0.2) && (last.kind != 0 || !strings.ContainsRune(".?!)…”\"", end)) {
		segs = append(segs, deliSeg{".", 0})
	}
	var orig strings.Builder
	var toks []string
	for _, s := range segs {
		orig.WriteString(s.text)
		switch s.kind {
		case 'c':
			toks = append(toks, "<CARD>")
		case 'm':
			toks = append(toks, "<MENTION>")
		default:
			toks = deliTokenize(s.text, toks)
		}
	}
	m.orig = orig.String()
	m.clean = strings.Join(toks, " ")
	return m, true
}

const (
	deliLeadPunct  = "(\"“¿@"
	deliTrailPunct = ".,?!:;)\"”…&"
)

// deliTokenize splits plain text into the release's clean_text tokens:
// punctuation separated from words, "--" as "- -", apostrophes kept.
func deliTokenize(s string, toks []string) []string {
	s = strings.ReplaceAll(s, "--", " - - ")
	for _, w := range strings.Fields(s) {
		for {
			c, n := utf8.DecodeRuneInString(w)
			if n == len(w) || !strings.ContainsRune(deliLeadPunct, c) {
				break
			}
			toks = append(toks, w[:n])
			w = w[n:]
		}
		var trail []string
		for w != "" {
			if len(w) > 3 && strings.HasSuffix(w, "...") || w == "..." {
				trail = append(trail, "...")
				w = w[:len(w)-3]
				continue
			}
			c, n := utf8.DecodeLastRuneInString(w)
			if !strings.ContainsRune(deliTrailPunct, c) {
				break
			}
			trail = append(trail, w[len(w)-n:])
			w = w[:len(w)-n]
		}
		if w != "" {
			toks = append(toks, w)
		}
		for i := len(trail) - 1; i >= 0; i-- {
			toks = append(toks, trail[i])
		}
	}
	return toks
}
