package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	deliSampleGroups = 12
	// deliSampleMismatchRows is the number of rows in the shipped sample
	// (12 groups, seed 2023) whose team_performance deliberately disagrees
	// with the formula because the tracker holds the split "N/A": 7 rows,
	// fac88def-e00e-4b78-b824-b4cb86f5b3a5 lines 14–16 and
	// e60dd051-12b9-46bc-8955-693621be8f9a lines 27–30 (the header is line 1).
	deliSampleMismatchRows = 7
)

// deliSampleConfig is the shipped sample (see the comment in delidata.go).
func deliSampleConfig(out string) deliConfig {
	return deliConfig{Out: out, Groups: deliSampleGroups, Seed: deliDefaultSeed}
}

// deliTestCorpus is a generated folder as read back from disk.
type deliTestCorpus struct {
	hasInit bool
	initPy  []byte
	names   []string // every other entry, sorted
	data    [][]byte // contents of names[i] (nil for directories)
}

func loadDeliCorpus(t testing.TB, dir string) *deliTestCorpus {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &deliTestCorpus{}
	for _, e := range entries {
		var b []byte
		if !e.IsDir() {
			if b, err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
		if e.Name() == "__init__.py" {
			c.hasInit, c.initPy = true, b
			continue
		}
		c.names = append(c.names, e.Name())
		c.data = append(c.data, b)
	}
	return c
}

func (c *deliTestCorpus) clone() *deliTestCorpus {
	d := *c
	d.names = slices.Clone(c.names)
	d.data = make([][]byte, len(c.data))
	for i, b := range c.data {
		d.data[i] = bytes.Clone(b)
	}
	return &d
}

// deliLines splits a file into lines of tab-separated fields (the final
// newline is not a line).
func deliLines(b []byte) [][]string {
	s := strings.TrimSuffix(string(b), "\n")
	var out [][]string
	for l := range strings.SplitSeq(s, "\n") {
		out = append(out, strings.Split(l, "\t"))
	}
	return out
}

func deliJoin(lines [][]string) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(strings.Join(l, "\t"))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Column indexes.
const (
	dcGroup = iota
	dcID
	dcType
	dcOrigin
	dcOrig
	dcClean
	dcAnnType
	dcAnnTarget
	dcAnnAdd
	dcTP
	dcPC
	dcSolMsg
	dcSolAll
)

var (
	deliTestUUID4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	deliDecimal   = regexp.MustCompile(`^-?[01]\.\d{1,3}$`)
	deliCardRe    = regexp.MustCompile(`^[1-9A-Z]$`)
	deliTestHdr   = "group_id\tmessage_id\tmessage_type\torigin\toriginal_text\tclean_text\tannotation_type\tannotation_target\tannotation_additional\tteam_performance\tperformance_change\tsol_tracker_message\tsol_tracker_all"
	deliAnnTypes  = []string{"Non-probing-deliberation", "Probing", "None", "0"}
	deliAnnTgts   = []string{"Reasoning", "Solution", "0", "Agree", "Moderation", "Disagree", "None"}
	deliAnnAdds   = []string{"0", "complete_solution", "partial_solution", "specific_addressee", "solution_summary", "consider_opposite"}
)

// deliTestTracker is a parsed sol_tracker_all, keys in document order.
type deliTestTracker struct {
	keys []string
	sel  map[string][]string
}

func parseDeliTracker(s string) (deliTestTracker, error) {
	tr := deliTestTracker{sel: map[string][]string{}}
	dec := json.NewDecoder(strings.NewReader(s))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return tr, fmt.Errorf("not a JSON object: %q", s)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return tr, err
		}
		k := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return tr, err
		}
		var list []string
		if !bytes.HasPrefix(raw, []byte("[")) || json.Unmarshal(raw, &list) != nil {
			return tr, fmt.Errorf("value of %q is not a list of strings: %s", k, raw)
		}
		if _, dup := tr.sel[k]; dup {
			return tr, fmt.Errorf("duplicate key %q", k)
		}
		tr.keys = append(tr.keys, k)
		tr.sel[k] = append([]string{}, list...)
	}
	if _, err := dec.Token(); err != nil {
		return tr, err
	}
	if dec.More() {
		return tr, errors.New("trailing data")
	}
	return tr, nil
}

// pyDumps re-encodes the way Python's json.dumps does for ASCII names.
func (tr deliTestTracker) pyDumps() string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var parts []string
	for _, k := range tr.keys {
		var vs []string
		for _, v := range tr.sel[k] {
			vs = append(vs, q(v))
		}
		parts = append(parts, q(k)+": ["+strings.Join(vs, ", ")+"]")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (tr deliTestTracker) artefact() bool {
	for _, v := range tr.sel {
		if slices.Contains(v, "/") {
			return true
		}
	}
	return false
}

// pyRound3 is an independent str(round(x, 3)): math/big rounds the exact
// binary value half-to-even.
func pyRound3(x float64) string {
	s := new(big.Float).SetFloat64(x).Text('f', 3)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return s
}

// deliFormula is the team_performance an ETL recomputes from the tracker.
func deliFormula(cards []string, tr deliTestTracker) string {
	right := func(c string) bool {
		return strings.Contains("AEIOU", c) || strings.Contains("13579", c)
	}
	total := 0
	for _, k := range tr.keys {
		for _, c := range cards {
			if slices.Contains(tr.sel[k], c) == right(c) {
				total++
			}
		}
	}
	return pyRound3(float64(total) / float64(4*len(tr.keys)))
}

func deliSplitCards(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// deliUnquote undoes the SQL-style quoting of a MESSAGE text field.
func deliUnquote(s string) (string, error) {
	if !strings.Contains(s, "'") {
		return s, nil
	}
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", fmt.Errorf("apostrophe text not wrapped in '…': %q", s)
	}
	inner := s[1 : len(s)-1]
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\'' {
			if i+1 == len(inner) || inner[i+1] != '\'' {
				return "", fmt.Errorf("inner apostrophe not doubled: %q", s)
			}
			i++
		}
	}
	u := strings.ReplaceAll(inner, "''", "'")
	if !strings.Contains(u, "'") || strings.Contains(u, "''") {
		return "", fmt.Errorf("unquoted text %q should have single apostrophes", u)
	}
	if "'"+strings.ReplaceAll(u, "'", "''")+"'" != s {
		return "", fmt.Errorf("quoting does not round-trip: %q", s)
	}
	return u, nil
}

// groups yields the parsed data rows (INITIAL first) of every group file.
func (c *deliTestCorpus) groups(fn func(name string, rows [][]string) error) error {
	for i, name := range c.names {
		lines := deliLines(c.data[i])
		if len(lines) < 2 {
			return fmt.Errorf("%s: no data rows", name)
		}
		if err := fn(name, lines[1:]); err != nil {
			return err
		}
	}
	return nil
}

func deliInitialCards(row []string) []string {
	_, cards, _ := strings.Cut(row[dcOrig], "&&")
	return strings.Split(cards, ",")
}

// deliCheck validates one aspect of a corpus.
type deliCheck struct {
	name string
	fn   func(c *deliTestCorpus) error
}

var deliChecks = []deliCheck{
	{"layout", func(c *deliTestCorpus) error {
		if !c.hasInit {
			return errors.New("no __init__.py")
		}
		if len(c.initPy) != 0 {
			return errors.New("__init__.py is not empty")
		}
		if len(c.names) == 0 {
			return errors.New("no group files")
		}
		for i, n := range c.names {
			if !deliTestUUID4.MatchString(n) || c.data[i] == nil {
				return fmt.Errorf("%q is not a group file named by a UUID v4", n)
			}
		}
		return nil
	}},
	{"encoding", func(c *deliTestCorpus) error {
		for i, n := range c.names {
			b := c.data[i]
			switch {
			case !utf8.Valid(b):
				return fmt.Errorf("%s: not UTF-8", n)
			case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
				return fmt.Errorf("%s: BOM", n)
			case bytes.IndexByte(b, '\r') >= 0:
				return fmt.Errorf("%s: CR", n)
			case !bytes.HasSuffix(b, []byte("\n")):
				return fmt.Errorf("%s: no final newline", n)
			case !bytes.HasPrefix(b, []byte(deliTestHdr+"\n")):
				return fmt.Errorf("%s: bad header", n)
			}
			for j, l := range deliLines(b) {
				if len(l) != 13 {
					return fmt.Errorf("%s:%d: %d fields", n, j+1, len(l))
				}
				for _, f := range l {
					if strings.HasPrefix(f, `"`) {
						return fmt.Errorf("%s:%d: field starts with '\"': %q", n, j+1, f)
					}
				}
			}
		}
		return nil
	}},
	{"ids", func(c *deliTestCorpus) error {
		seen := map[string]string{}
		return c.groups(func(name string, rows [][]string) error {
			for i, r := range rows {
				at := fmt.Sprintf("%s:%d", name, i+2)
				if r[dcGroup] != name {
					return fmt.Errorf("%s: group_id %q", at, r[dcGroup])
				}
				if (i == 0) != (r[dcType] == "INITIAL") {
					return fmt.Errorf("%s: INITIAL must be the first row and only there (%s)", at, r[dcType])
				}
				if i == 0 {
					if r[dcID] != "-1" || r[dcOrigin] != "SYSTEM" {
						return fmt.Errorf("%s: INITIAL id %q origin %q", at, r[dcID], r[dcOrigin])
					}
					continue
				}
				if r[dcType] != "MESSAGE" && r[dcType] != "SUBMIT" {
					return fmt.Errorf("%s: message_type %q", at, r[dcType])
				}
				if !deliTestUUID4.MatchString(r[dcID]) {
					return fmt.Errorf("%s: message_id %q", at, r[dcID])
				}
				if prev, dup := seen[r[dcID]]; dup {
					return fmt.Errorf("%s: message_id also at %s", at, prev)
				}
				seen[r[dcID]] = at
			}
			return nil
		})
	}},
	{"initial and speakers", func(c *deliTestCorpus) error {
		return c.groups(func(name string, rows [][]string) error {
			people, cards, ok := strings.Cut(rows[0][dcOrig], "&&")
			if !ok {
				return fmt.Errorf("%s: INITIAL text %q", name, rows[0][dcOrig])
			}
			names := strings.Split(people, ",")
			if n := strings.Count(","+people+",", ",SYSTEM,"); n != 1 || len(names) < 2 {
				return fmt.Errorf("%s: INITIAL participants %q", name, people)
			}
			cs := strings.Split(cards, ",")
			if len(cs) != 4 || len(slices.Compact(slices.Sorted(slices.Values(cs)))) != 4 {
				return fmt.Errorf("%s: INITIAL cards %q", name, cards)
			}
			for _, c := range cs {
				if !deliCardRe.MatchString(c) {
					return fmt.Errorf("%s: card %q", name, c)
				}
			}
			speakers := map[string]bool{}
			for _, r := range rows[1:] {
				if r[dcOrigin] == "SYSTEM" || r[dcOrigin] == "" {
					return fmt.Errorf("%s: %s row with origin %q", name, r[dcType], r[dcOrigin])
				}
				speakers[r[dcOrigin]] = true
			}
			if len(speakers) < 2 || len(speakers) > 6 {
				return fmt.Errorf("%s: %d speakers", name, len(speakers))
			}
			return nil
		})
	}},
	{"empty and annotation fields", func(c *deliTestCorpus) error {
		return c.groups(func(name string, rows [][]string) error {
			for i, r := range rows {
				at := fmt.Sprintf("%s:%d", name, i+2)
				if r[dcType] != "MESSAGE" {
					for _, col := range []int{dcClean, dcAnnType, dcAnnTarget, dcAnnAdd, dcSolMsg} {
						if r[col] != "" {
							return fmt.Errorf("%s: %s has %s %q", at, r[dcType], deliHeader[col], r[col])
						}
					}
					continue
				}
				if r[dcOrig] == "" || r[dcClean] == "" {
					return fmt.Errorf("%s: empty MESSAGE text", at)
				}
				if !slices.Contains(deliAnnTypes, r[dcAnnType]) || !slices.Contains(deliAnnTgts, r[dcAnnTarget]) {
					return fmt.Errorf("%s: annotation %q/%q", at, r[dcAnnType], r[dcAnnTarget])
				}
				for l := range strings.SplitSeq(r[dcAnnAdd], ",") {
					if !slices.Contains(deliAnnAdds, l) {
						return fmt.Errorf("%s: annotation_additional %q", at, r[dcAnnAdd])
					}
				}
				if n := utf8.RuneCountInString(r[dcOrig]); n > 415 {
					return fmt.Errorf("%s: %d-character message", at, n)
				}
				if strings.Contains(r[dcClean], "  ") || strings.Contains(r[dcClean], "--") {
					return fmt.Errorf("%s: clean_text not tokenised: %q", at, r[dcClean])
				}
			}
			return nil
		})
	}},
	{"sql quoting", func(c *deliTestCorpus) error {
		return c.groups(func(name string, rows [][]string) error {
			for i, r := range rows {
				if r[dcType] != "MESSAGE" {
					continue
				}
				if strings.Contains(r[dcOrig], "'") != strings.Contains(r[dcClean], "'") {
					return fmt.Errorf("%s:%d: only one text column quoted", name, i+2)
				}
				for _, col := range []int{dcOrig, dcClean} {
					if _, err := deliUnquote(r[col]); err != nil {
						return fmt.Errorf("%s:%d: %s: %v", name, i+2, deliHeader[col], err)
					}
				}
			}
			return nil
		})
	}},
	{"tracker json", func(c *deliTestCorpus) error {
		return c.groups(func(name string, rows [][]string) error {
			for i, r := range rows {
				tr, err := parseDeliTracker(r[dcSolAll])
				if err != nil {
					return fmt.Errorf("%s:%d: %v", name, i+2, err)
				}
				if len(tr.keys) == 0 || tr.pyDumps() != r[dcSolAll] {
					return fmt.Errorf("%s:%d: not json.dumps output: %q", name, i+2, r[dcSolAll])
				}
			}
			return nil
		})
	}},
	{"tracker updates", func(c *deliTestCorpus) error {
		return c.groups(func(name string, rows [][]string) error {
			prev, _ := parseDeliTracker(rows[0][dcSolAll])
			for i, r := range rows[1:] {
				at := fmt.Sprintf("%s:%d", name, i+3)
				cur, err := parseDeliTracker(r[dcSolAll])
				if err != nil {
					return fmt.Errorf("%s: %v", at, err)
				}
				p := r[dcOrigin]
				if !slices.Equal(cur.keys[:min(len(prev.keys), len(cur.keys))], prev.keys) ||
					len(cur.keys) > len(prev.keys)+1 || (len(cur.keys) > len(prev.keys) && cur.keys[len(cur.keys)-1] != p) {
					return fmt.Errorf("%s: keys %q after %q", at, cur.keys, prev.keys)
				}
				for _, k := range prev.keys {
					if k != p && !slices.Equal(cur.sel[k], prev.sel[k]) {
						return fmt.Errorf("%s: %s's selection changed on %s's row", at, k, p)
					}
				}
				var want []string
				switch {
				case r[dcType] == "SUBMIT":
					want = deliSplitCards(r[dcOrig])
				case r[dcSolMsg] != "":
					want = deliSplitCards(r[dcSolMsg])
					if !strings.Contains(r[dcClean], "<CARD>") {
						return fmt.Errorf("%s: sol_tracker_message %q but no <CARD>", at, r[dcSolMsg])
					}
				case slices.Contains(prev.keys, p):
					want = prev.sel[p]
				case slices.Contains(cur.keys, p):
					want = []string{"N", "/", "A"} // a late joiner's placeholder
				}
				if got, ok := cur.sel[p]; (ok || want != nil) && !slices.Equal(got, want) {
					return fmt.Errorf("%s: %s's selection %q, want %q", at, p, got, want)
				}
				prev = cur
			}
			return nil
		})
	}},
	{"team performance", func(c *deliTestCorpus) error {
		artefacts := 0
		err := c.groups(func(name string, rows [][]string) error {
			cards := deliInitialCards(rows[0])
			for i, r := range rows {
				at := fmt.Sprintf("%s:%d", name, i+2)
				if !deliDecimal.MatchString(r[dcTP]) || strings.HasPrefix(r[dcTP], "-") {
					return fmt.Errorf("%s: team_performance %q", at, r[dcTP])
				}
				tr, err := parseDeliTracker(r[dcSolAll])
				if err != nil {
					return fmt.Errorf("%s: %v", at, err)
				}
				want := deliFormula(cards, tr)
				switch {
				case tr.artefact() && want == r[dcTP]:
					return fmt.Errorf("%s: N/A artefact row matches the formula (%s)", at, want)
				case tr.artefact():
					artefacts++
				case want != r[dcTP]:
					return fmt.Errorf("%s: team_performance %s, formula gives %s", at, r[dcTP], want)
				}
			}
			return nil
		})
		if err == nil && artefacts == 0 {
			err = errors.New("no N/A artefact rows")
		}
		return err
	}},
	{"performance change", func(c *deliTestCorpus) error {
		return c.groups(func(name string, rows [][]string) error {
			prev := 0.0
			for i, r := range rows {
				at := fmt.Sprintf("%s:%d", name, i+2)
				tp, err := strconv.ParseFloat(r[dcTP], 64)
				if err != nil {
					return fmt.Errorf("%s: %v", at, err)
				}
				want := "0.0"
				if i > 0 {
					want = pyRound3(tp - prev)
				}
				if r[dcPC] != want || !deliDecimal.MatchString(r[dcPC]) {
					return fmt.Errorf("%s: performance_change %q, want %q", at, r[dcPC], want)
				}
				prev = tp
			}
			return nil
		})
	}},
}

func runDeliChecks(t *testing.T, c *deliTestCorpus) {
	t.Helper()
	for _, ck := range deliChecks {
		t.Run(ck.name, func(t *testing.T) {
			if err := ck.fn(c); err != nil {
				t.Error(err)
			}
		})
	}
}

func generateDeliSample(t testing.TB) (*deliTestCorpus, deliStats) {
	t.Helper()
	dir := t.TempDir()
	st, err := generateDeliData(deliSampleConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	return loadDeliCorpus(t, dir), st
}

func TestDeliDataSample(t *testing.T) {
	c, st := generateDeliSample(t)
	if len(c.names) != deliSampleGroups || st.Groups != deliSampleGroups {
		t.Fatalf("%d files, want %d", len(c.names), deliSampleGroups)
	}
	runDeliChecks(t, c)
}

// deliFeatures collects the rare features a corpus shows.
type deliFeatures struct {
	origins, submits, annType, annTarget, annAdd map[string]int
	nonASCII                                     map[rune]int
	sysFirst, sysNotFirst, emptyLists, onTokens  int
	lateKeys, midQuote, sqlQuoted, dashes        int
	edgeSpace, negativeChange                    int
	mismatches                                   []deliRowRef
}

func collectDeliFeatures(t *testing.T, c *deliTestCorpus) deliFeatures {
	f := deliFeatures{origins: map[string]int{}, submits: map[string]int{}, annType: map[string]int{},
		annTarget: map[string]int{}, annAdd: map[string]int{}, nonASCII: map[rune]int{}}
	err := c.groups(func(name string, rows [][]string) error {
		people, _, _ := strings.Cut(rows[0][dcOrig], "&&")
		if strings.HasPrefix(people, "SYSTEM,") {
			f.sysFirst++
		} else {
			f.sysNotFirst++
		}
		cards := deliInitialCards(rows[0])
		for i, r := range rows {
			f.origins[r[dcOrigin]]++
			tr, err := parseDeliTracker(r[dcSolAll])
			if err != nil {
				return err
			}
			for _, k := range tr.keys {
				if len(tr.sel[k]) == 0 {
					f.emptyLists++
				}
				f.onTokens += strings.Count(strings.Join(tr.sel[k], "|")+"|", "on|")
				if !strings.Contains(","+people+",", ","+k+",") {
					f.lateKeys++
				}
			}
			if tr.artefact() && deliFormula(cards, tr) != r[dcTP] {
				f.mismatches = append(f.mismatches, deliRowRef{name, i + 2})
			}
			if strings.HasPrefix(r[dcPC], "-") {
				f.negativeChange++
			}
			switch r[dcType] {
			case "SUBMIT":
				f.submits[r[dcOrig]]++
			case "MESSAGE":
				f.annType[r[dcAnnType]]++
				f.annTarget[r[dcAnnTarget]]++
				f.annAdd[r[dcAnnAdd]]++
				for _, ch := range r[dcOrig] {
					if ch > 127 {
						f.nonASCII[ch]++
					}
				}
				if strings.Contains(r[dcOrig], `"`) {
					f.midQuote++
				}
				if strings.HasPrefix(r[dcOrig], "'") {
					f.sqlQuoted++
				}
				if strings.Contains(r[dcClean], "- -") {
					f.dashes++
				}
				if strings.TrimSpace(r[dcOrig]) != r[dcOrig] {
					f.edgeSpace++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func sortedRefs(refs []deliRowRef) []deliRowRef {
	return slices.SortedFunc(slices.Values(refs), func(a, b deliRowRef) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.Line-b.Line)
	})
}

// TestDeliDataSampleQuirks: even 12 groups show every quirk of the release.
func TestDeliDataSampleQuirks(t *testing.T) {
	c, st := generateDeliSample(t)
	f := collectDeliFeatures(t, c)
	multi := 0
	for k, n := range f.annAdd {
		if strings.Contains(k, ",") {
			multi += n
		}
	}
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"Guinea pig speaks", f.origins["Guinea pig"] > 0, f.origins["Guinea pig"]},
		{"malformed U,on submission", f.submits["U,on"] == 1, f.submits["U,on"]},
		{"empty submission", f.submits[""] > 0, f.submits[""]},
		{"empty tracker list", f.emptyLists > 0, f.emptyLists},
		{"on token in tracker", f.onTokens > 0, f.onTokens},
		{"tracker key missing from INITIAL", f.lateKeys > 0, f.lateKeys},
		{"SYSTEM first and elsewhere", f.sysFirst > 0 && f.sysNotFirst > 0, [2]int{f.sysFirst, f.sysNotFirst}},
		{"at least 2 mismatch rows", len(f.mismatches) >= 2, f.mismatches},
		{"documented mismatch count", len(f.mismatches) == deliSampleMismatchRows, len(f.mismatches)},
		{"generator reports the mismatches", slices.Equal(f.mismatches, sortedRefs(st.Mismatches)), st.Mismatches},
		{"right single quotation mark", f.nonASCII['’'] > 0, f.nonASCII},
		{"left double quotation mark", f.nonASCII['“'] > 0, f.nonASCII},
		{"ellipsis", f.nonASCII['…'] > 0, f.nonASCII},
		{"inverted question mark", f.nonASCII['¿'] > 0, f.nonASCII},
		{"double quote mid-text", f.midQuote > 0, f.midQuote},
		{"SQL-quoted messages", f.sqlQuoted > 0, f.sqlQuoted},
		{"-- tokenised as - -", f.dashes > 0, f.dashes},
		{"literal None annotation", f.annType["None"] > 0, f.annType},
		{"0 annotation", f.annType["0"] > 0, f.annType},
		{"Probing", f.annType["Probing"] > 0, f.annType},
		{"target None", f.annTarget["None"] == 1, f.annTarget},
		{"target Disagree", f.annTarget["Disagree"] > 0, f.annTarget},
		{"multi-label additional", multi > 0, f.annAdd},
		{"leading/trailing whitespace", f.edgeSpace > 0, f.edgeSpace},
		{"negative performance_change", f.negativeChange > 0, f.negativeChange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("missing from the sample; got %v", tc.got)
			}
		})
	}
}

// TestDeliDataScaleOne checks --scale 1 against the release's statistics.
func TestDeliDataScaleOne(t *testing.T) {
	if testing.Short() {
		t.Skip("500 groups")
	}
	dir := t.TempDir()
	cfg, err := resolveDeliConfig(dir, 1, -1, deliDefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	st, err := generateDeliData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := loadDeliCorpus(t, dir)
	runDeliChecks(t, c)
	var msgs, rowsPer []int
	err = c.groups(func(_ string, rows [][]string) error {
		m := 0
		for _, r := range rows {
			if r[dcType] == "MESSAGE" {
				m++
			}
		}
		msgs = append(msgs, m)
		rowsPer = append(rowsPer, len(rows))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Ints(msgs)
	f := collectDeliFeatures(t, c)
	within := func(x, want int, tol float64) bool {
		return float64(x) >= float64(want)*(1-tol) && float64(x) <= float64(want)*(1+tol)
	}
	tests := []struct {
		name string
		ok   bool
		got  any
	}{
		{"500 groups", st.Groups == 500 && len(c.names) == 500, len(c.names)},
		{"~17,610 rows", within(st.Rows, 17610, 0.03), st.Rows},
		{"~14,003 MESSAGE", within(st.Messages, 14003, 0.03), st.Messages},
		{"~3,107 SUBMIT", within(st.Submits, 3107, 0.06), st.Submits},
		{"MESSAGE per group in 6..104", msgs[0] >= 6 && msgs[len(msgs)-1] <= 104, [2]int{msgs[0], msgs[len(msgs)-1]}},
		{"median MESSAGE per group ~25", msgs[len(msgs)/2] >= 22 && msgs[len(msgs)/2] <= 28, msgs[len(msgs)/2]},
		{"at most 116 rows per group", slices.Max(rowsPer) <= 116, slices.Max(rowsPer)},
		{"one U,on", f.submits["U,on"] == 1, f.submits["U,on"]},
		{"a few empty submissions", f.submits[""] >= 3 && f.submits[""] <= 10, f.submits[""]},
		{"~9 mismatch rows", len(f.mismatches) >= 6 && len(f.mismatches) <= 12, len(f.mismatches)},
		{"all four non-ASCII marks", len(f.nonASCII) >= 4, f.nonASCII},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Errorf("got %v", tc.got)
			}
		})
	}
}

// TestDeliDataCheckersDetectCorruption makes sure every checker can fail.
func TestDeliDataCheckersDetectCorruption(t *testing.T) {
	pristine, _ := generateDeliSample(t)
	check := func(name string) func(*deliTestCorpus) error {
		for _, ck := range deliChecks {
			if ck.name == name {
				return ck.fn
			}
		}
		t.Fatalf("no check %q", name)
		return nil
	}
	// find returns the first (file, line index incl. header) matching pred.
	find := func(c *deliTestCorpus, pred func(r []string) bool) (int, int) {
		for i := range c.names {
			for j, r := range deliLines(c.data[i]) {
				if j > 0 && pred(r) {
					return i, j
				}
			}
		}
		t.Fatal("no matching row")
		return 0, 0
	}
	set := func(c *deliTestCorpus, fi, li, col int, v string) {
		lines := deliLines(c.data[fi])
		lines[li][col] = v
		c.data[fi] = deliJoin(lines)
	}
	edit := func(pred func(r []string) bool, col int, fn func(r []string) string) func(c *deliTestCorpus) {
		return func(c *deliTestCorpus) {
			fi, li := find(c, pred)
			set(c, fi, li, col, fn(deliLines(c.data[fi])[li]))
		}
	}
	is := func(typ string) func(r []string) bool { return func(r []string) bool { return r[dcType] == typ } }
	artefact := func(r []string) bool { return strings.Contains(r[dcSolAll], `"/"`) }
	plain := func(r []string) bool { return r[dcType] != "INITIAL" && !artefact(r) }
	quoted := func(r []string) bool { return r[dcType] == "MESSAGE" && strings.Contains(r[dcOrig], "''") }
	tests := []struct {
		name, check string
		corrupt     func(c *deliTestCorpus)
	}{
		{"no __init__.py", "layout", func(c *deliTestCorpus) { c.hasInit = false }},
		{"non-empty __init__.py", "layout", func(c *deliTestCorpus) { c.initPy = []byte("#") }},
		{"file with extension", "layout", func(c *deliTestCorpus) { c.names[0] += ".tsv" }},
		{"BOM", "encoding", func(c *deliTestCorpus) { c.data[0] = append([]byte("\xef\xbb\xbf"), c.data[0]...) }},
		{"CRLF", "encoding", func(c *deliTestCorpus) { c.data[1] = bytes.ReplaceAll(c.data[1], []byte("\n"), []byte("\r\n")) }},
		{"no final newline", "encoding", func(c *deliTestCorpus) { c.data[2] = bytes.TrimSuffix(c.data[2], []byte("\n")) }},
		{"header order", "encoding", func(c *deliTestCorpus) {
			c.data[0] = bytes.Replace(c.data[0], []byte("origin\toriginal_text"), []byte("original_text\torigin"), 1)
		}},
		{"14 fields", "encoding", func(c *deliTestCorpus) {
			c.data[0] = bytes.Replace(c.data[0], []byte("\tINITIAL\t"), []byte("\tINITIAL\t\t"), 1)
		}},
		{"field starts with a double quote", "encoding", edit(is("MESSAGE"), dcClean, func(r []string) string { return `"` + r[dcClean] })},
		{"group_id differs from file", "ids", edit(is("SUBMIT"), dcGroup, func([]string) string { return "x" })},
		{"INITIAL id not -1", "ids", edit(is("INITIAL"), dcID, func([]string) string { return "00000000-0000-4000-8000-000000000000" })},
		{"SUBMIT id -1", "ids", edit(is("SUBMIT"), dcID, func([]string) string { return "-1" })},
		{"duplicate message id", "ids", func(c *deliTestCorpus) {
			lines := deliLines(c.data[3])
			set(c, 3, 3, dcID, lines[2][dcID])
		}},
		{"INITIAL after first row", "ids", func(c *deliTestCorpus) {
			lines := deliLines(c.data[0])
			lines[1], lines[2] = lines[2], lines[1]
			c.data[0] = deliJoin(lines)
		}},
		{"three cards", "initial and speakers", edit(is("INITIAL"), dcOrig, func(r []string) string {
			return r[dcOrig][:strings.LastIndexByte(r[dcOrig], ',')]
		})},
		{"no SYSTEM", "initial and speakers", edit(is("INITIAL"), dcOrig, func(r []string) string {
			return strings.Replace(r[dcOrig], "SYSTEM", "Yak", 1)
		})},
		{"SYSTEM speaks", "initial and speakers", edit(is("MESSAGE"), dcOrigin, func([]string) string { return "SYSTEM" })},
		{"annotation on SUBMIT", "empty and annotation fields", edit(is("SUBMIT"), dcAnnType, func([]string) string { return "0" })},
		{"unknown annotation", "empty and annotation fields", edit(is("MESSAGE"), dcAnnTarget, func([]string) string { return "Other" })},
		{"untokenised clean_text", "empty and annotation fields", edit(is("MESSAGE"), dcClean, func(r []string) string { return r[dcClean] + " --" })},
		{"apostrophe not doubled", "sql quoting", edit(quoted, dcOrig, func(r []string) string { return strings.Replace(r[dcOrig], "''", "'", 1) })},
		{"apostrophe text not wrapped", "sql quoting", edit(quoted, dcClean, func(r []string) string {
			return strings.ReplaceAll(strings.Trim(r[dcClean], "'"), "''", "'")
		})},
		{"compact JSON separators", "tracker json", edit(is("SUBMIT"), dcSolAll, func(r []string) string {
			return strings.ReplaceAll(r[dcSolAll], ", ", ",")
		})},
		{"python set repr", "tracker json", edit(is("MESSAGE"), dcSolAll, func(r []string) string {
			return strings.ReplaceAll(r[dcSolAll], `"`, `'`)
		})},
		{"submission not applied", "tracker updates", edit(is("SUBMIT"), dcOrig, func(r []string) string { return r[dcOrig] + ",Q" })},
		{"mention not applied", "tracker updates", edit(func(r []string) bool { return r[dcSolMsg] != "" }, dcSolMsg, func(r []string) string {
			return r[dcSolMsg] + ",Q"
		})},
		{"formula broken", "team performance", edit(plain, dcTP, func(r []string) string {
			if r[dcTP] == "0.5" {
				return "0.501"
			}
			return "0.5"
		})},
		{"artefact row repaired", "team performance", func(c *deliTestCorpus) {
			fi, li := find(c, artefact)
			lines := deliLines(c.data[fi])
			tr, _ := parseDeliTracker(lines[li][dcSolAll])
			set(c, fi, li, dcTP, deliFormula(deliInitialCards(lines[1]), tr))
		}},
		{"no artefact rows", "team performance", func(c *deliTestCorpus) {
			var names []string
			var data [][]byte
			for i := range c.data {
				if !bytes.Contains(c.data[i], []byte(`"/"`)) {
					names, data = append(names, c.names[i]), append(data, c.data[i])
				}
			}
			c.names, c.data = names, data
		}},
		{"performance_change off", "performance change", edit(is("SUBMIT"), dcPC, func(r []string) string {
			return r[dcPC] + "1"
		})},
		{"INITIAL change", "performance change", edit(is("INITIAL"), dcPC, func([]string) string { return "0.5" })},
	}
	for _, ck := range deliChecks {
		if err := ck.fn(pristine); err != nil {
			t.Fatalf("pristine sample fails %s: %v", ck.name, err)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := pristine.clone()
			tc.corrupt(c)
			if err := check(tc.check)(c); err == nil {
				t.Errorf("%s check missed the corruption", tc.check)
			}
		})
	}
}

func TestDeliDataDeterministic(t *testing.T) {
	a, b, other := t.TempDir(), t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if _, err := generateDeliData(deliSampleConfig(dir)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := deliSampleConfig(other)
	cfg.Seed++
	if _, err := generateDeliData(cfg); err != nil {
		t.Fatal(err)
	}
	x, y, z := loadDeliCorpus(t, a), loadDeliCorpus(t, b), loadDeliCorpus(t, other)
	if !slices.Equal(x.names, y.names) || !slices.EqualFunc(x.data, y.data, bytes.Equal) {
		t.Error("two runs differ")
	}
	if slices.Equal(x.names, z.names) {
		t.Error("seed has no effect")
	}
	// Rerunning into the same folder is allowed and changes nothing.
	if _, err := generateDeliData(deliSampleConfig(a)); err != nil {
		t.Fatal(err)
	}
	if x2 := loadDeliCorpus(t, a); !slices.EqualFunc(x.data, x2.data, bytes.Equal) {
		t.Error("rerun changed the output")
	}
}

// TestDeliDataSampleMatchesTestdata pins the committed sample: regenerate it
// with the command in delidata.go when the generator changes on purpose.
func TestDeliDataSampleMatchesTestdata(t *testing.T) {
	got, _ := generateDeliSample(t)
	want := loadDeliCorpus(t, filepath.Join("..", "..", "testdata", "delidata"))
	const regen = "rm -rf testdata/delidata && go run ./cmd/agora-gen delidata --out testdata/delidata --groups 12"
	if !want.hasInit || len(want.initPy) != 0 {
		t.Errorf("testdata/delidata/__init__.py missing or not empty; regenerate with: %s", regen)
	}
	if !slices.Equal(got.names, want.names) {
		t.Fatalf("testdata/delidata has files %q, generator writes %q; regenerate with: %s", want.names, got.names, regen)
	}
	for i, n := range got.names {
		if !bytes.Equal(got.data[i], want.data[i]) {
			t.Errorf("%s differs from testdata/delidata; regenerate with: %s", n, regen)
		}
	}
}

func TestDeliDataRefusesForeignGroups(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "0128a2aa-53a2-4874-8bfe-b71ce287e7c2")
	if err := os.WriteFile(stale, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := generateDeliData(deliSampleConfig(dir)); err == nil {
		t.Fatal("generator mixed its groups with a foreign group file")
	}
	if b, _ := os.ReadFile(stale); string(b) != "x" {
		t.Error("foreign group file was modified")
	}
}

func TestFormatPyRound3(t *testing.T) {
	// Expected strings are Python 3 str(round(x, 3)).
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"half-even down 0.0625", 0.0625, "0.062"},
		{"half-even down 0.5625", 0.5625, "0.562"},
		{"half-even up 0.4375", 0.4375, "0.438"},
		{"half-even up 0.6875", 0.6875, "0.688"},
		{"negative tie", -0.0625, "-0.062"},
		{"one", 1, "1.0"},
		{"zero", 0, "0.0"},
		{"two decimals", 0.44, "0.44"},
		{"two thirds", 2.0 / 3, "0.667"},
		{"twelfth", 1.0 / 12, "0.083"},
		{"twenty-fourth", 1.0 / 24, "0.042"},
		{"binary above tie", 0.0005, "0.001"},
		{"binary above tie 2", 0.0025, "0.003"},
		{"difference", 0.667 - 0.583, "0.084"},
		{"negative difference", 0.5 - 0.562, "-0.062"},
		{"difference below", 0.583 - 0.5, "0.083"},
		{"seven twelfths", 7.0 / 12, "0.583"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatPyRound3(tc.in); got != tc.want {
				t.Errorf("formatPyRound3(%v) = %q, want %q", tc.in, got, tc.want)
			}
			if got := pyRound3(tc.in); got != tc.want {
				t.Errorf("test oracle pyRound3(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestDeliTrackerJSON(t *testing.T) {
	// Expected strings are Python 3 json.dumps output.
	tests := []struct {
		name string
		keys []string
		sel  [][]string
		want string
	}{
		{"artefact and space", []string{"Guinea pig"}, [][]string{{"N", "/", "A"}}, `{"Guinea pig": ["N", "/", "A"]}`},
		{"empty list", []string{"Bat", "Cat"}, [][]string{{"3", "U"}, {}}, `{"Bat": ["3", "U"], "Cat": []}`},
		{"escapes", []string{"é\"\\"}, [][]string{{"\U0001F600", "\x7f\n"}}, `{"\u00e9\"\\": ["\ud83d\ude00", "\u007f\n"]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := deliTracker{sel: map[string][]string{}}
			for i, k := range tc.keys {
				tr.set(k, tc.sel[i])
			}
			if got := tr.json(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDeliTokenize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"punctuation", "Since one card has the number 7, the other side?", "Since one card has the number 7 , the other side ?"},
		{"double dash", "if vowel then even -- so", "if vowel then even - - so"},
		{"apostrophes kept", "it's the rule isn't it", "it's the rule isn't it"},
		{"quotes", `the rule says "if vowel"`, `the rule says " if vowel "`},
		{"non-ASCII", "¿what? hmm… “if”", "¿ what ? hmm … “ if ”"},
		{"ellipsis", "wait... ok", "wait ... ok"},
		{"lone mark", "?", "?"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(deliTokenize(tc.in, nil), " "); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDeliSQLQuote(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"apostrophe", "that the rule isn't true", "'that the rule isn''t true'"},
		{"two apostrophes", "it's what's left", "'it''s what''s left'"},
		{"none", "ok", "ok"},
		{"curly is not quoted", "it’s", "it’s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := deliSQLQuote(deliMsg{orig: tc.in, clean: tc.in})
			if m.orig != tc.want || m.clean != tc.want {
				t.Errorf("got %q / %q, want %q", m.orig, m.clean, tc.want)
			}
			if u, err := deliUnquote(m.orig); err != nil || u != tc.in {
				t.Errorf("unquote: %q, %v", u, err)
			}
		})
	}
}

func TestResolveDeliConfig(t *testing.T) {
	tests := []struct {
		name    string
		scale   float64
		groups  int
		want    int
		wantErr bool
	}{
		{"release", 1, -1, 500, false},
		{"half", 0.5, -1, 250, false},
		{"groups override", 1, 12, 12, false},
		{"tiny scale rounds up", 0.001, -1, 1, false},
		{"too small", 0.0001, -1, 0, true},
		{"zero groups", 1, 0, 0, true},
		{"bad scale", 0, -1, 0, true},
		{"huge", 1e9, -1, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := resolveDeliConfig("x", tc.scale, tc.groups, 1)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && cfg.Groups != tc.want {
				t.Errorf("got %d groups, want %d", cfg.Groups, tc.want)
			}
		})
	}
}

func TestDeliDataCLI(t *testing.T) {
	out := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"listed in help", []string{"--help"}, 0, "delidata"},
		{"missing out", []string{"delidata"}, 1, ""},
		{"bad flag", []string{"delidata", "--bogus"}, 1, ""},
		{"zero groups", []string{"delidata", "--out", out, "--groups", "0"}, 1, ""},
		{"bad scale", []string{"delidata", "--out", out, "--scale", "-1"}, 1, ""},
		{"extra argument", []string{"delidata", "--out", out, "x"}, 1, ""},
		{"dataset help", []string{"delidata", "-h"}, 0, ""},
		{"generate", []string{"delidata", "--out", out, "--groups", "3", "--seed", "7"}, 0, "3 groups"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantOut) {
				t.Errorf("stdout %q does not mention %q", stdout.String(), tc.wantOut)
			}
		})
	}
	c := loadDeliCorpus(t, out)
	if len(c.names) != 3 || !c.hasInit {
		t.Fatalf("got %d group files (init %v), want 3", len(c.names), c.hasInit)
	}
	runDeliChecks(t, c)
}
