package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// sampleConfig is the shipped sample (see doc.go).
func sampleConfig(out string) crowdConfig {
	return crowdConfig{Out: out, Topics: 6, RatedTopics: 4, Seed: crowdDefaultSeed}
}

// gzFile is one decompressed output file.
type gzFile struct {
	header gzip.Header
	rawHdr []byte // first 10 bytes of the member
	data   []byte
	lines  [][]byte // without the trailing "\n"
}

func readGz(t testing.TB, path string) gzFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	f := gzFile{header: zr.Header, rawHdr: b[:10], data: data}
	if len(data) > 0 {
		if data[len(data)-1] != '\n' {
			t.Fatalf("%s: no final newline", path)
		}
		f.lines = bytes.Split(data[:len(data)-1], []byte("\n"))
	}
	return f
}

// topKeys returns the top-level keys of a JSON object in document order.
func topKeys(line []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func checkKeyOrder(line []byte, want []string) error {
	got, err := topKeys(line)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("key order\n got %q\nwant %q", got, want)
	}
	return nil
}

func checkASCII(b []byte) error {
	for i, c := range b {
		if c >= 0x80 {
			return fmt.Errorf("non-ASCII byte %#x at offset %d", c, i)
		}
	}
	return nil
}

// checkCompact verifies a line has no insignificant whitespace.
func checkCompact(line []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, line); err != nil {
		return err
	}
	if !bytes.Equal(buf.Bytes(), line) {
		return errors.New("line is not compact JSON")
	}
	return nil
}

var (
	uuidV3Re = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	uuidV4Re = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	topicRe  = regexp.MustCompile(`^2024-\d{6}$`)
	refIDRe  = regexp.MustCompile(`^msmarco_v2\.1_doc_\d{2}_\d+#\d+_\d+$`)
	// pandas double_precision=10: ≤10 decimals, no trailing zero except "X.0".
	pandasFloatRe = regexp.MustCompile(`^-?\d+\.(0|\d{0,9}[1-9])$`)
	markerRe      = regexp.MustCompile(`\[(\d+(?:, ?\d+)*)\]`)
	cleanMarkerRe = regexp.MustCompile(` ?\[\d+(?:, ?\d+)*\]`)
	starBulletRe  = regexp.MustCompile(`(?m)^\* `)
	escapeRe      = regexp.MustCompile(`\\u([0-9a-fA-F]{4})`)
)

func ratingKeysOrder() []string {
	keys := []string{"submission_id", "query_id", "response_a", "response_b", "worker"}
	for _, d := range crowdDims {
		keys = append(keys, d+"_vote", d+"_spam_probability", d+"_p_a")
		if d != "quality_overall" {
			keys = append(keys, d+"_p_n")
		}
		keys = append(keys, d+"_p_b", d+"_gold")
	}
	return keys
}

var (
	responseKeys = []string{"response", "topic", "style", "kind", "query", "references_ids",
		"references_texts", "raw_text", "cleaned_text", "statements"}
	llmKeys    = append([]string{"query_id", "response_a", "response_b", "inference"}, crowdDims[:]...)
	gradesKeys = append([]string{"response"}, crowdDims[:]...)
)

// decodeNumbers decodes a line keeping numbers as json.Number.
func decodeNumbers(line []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	return m, err
}

func checkPandasFloat(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is %T, not a number", v, v)
	}
	if !pandasFloatRe.MatchString(string(n)) {
		return 0, fmt.Errorf("%q is not a pandas double_precision=10 float", n)
	}
	return n.Float64()
}

// checkRatingRow validates one ratings.jsonl record on its own.
func checkRatingRow(line []byte) error {
	if err := checkKeyOrder(line, ratingKeysOrder()); err != nil {
		return err
	}
	m, err := decodeNumbers(line)
	if err != nil {
		return err
	}
	if s, _ := m["submission_id"].(string); !uuidV4Re.MatchString(s) {
		return fmt.Errorf("submission_id %q is not a v4 UUID", s)
	}
	if s, _ := m["query_id"].(string); !topicRe.MatchString(s) {
		return fmt.Errorf("query_id %q", s)
	}
	for _, k := range []string{"response_a", "response_b"} {
		if s, _ := m[k].(string); !uuidV3Re.MatchString(s) {
			return fmt.Errorf("%s %q is not a v3 UUID", k, s)
		}
	}
	workers, _ := m["worker"].([]any)
	seen := map[string]bool{}
	for _, w := range workers {
		s, _ := w.(string)
		if !uuidV3Re.MatchString(s) || seen[s] {
			return fmt.Errorf("bad or repeated worker %q", s)
		}
		seen[s] = true
	}
	if len(workers) != crowdVotes {
		return fmt.Errorf("%d workers", len(workers))
	}
	for _, d := range crowdDims {
		qo := d == "quality_overall"
		votes, _ := m[d+"_vote"].([]any)
		spam, _ := m[d+"_spam_probability"].([]any)
		if len(votes) != crowdVotes || len(spam) != crowdVotes {
			return fmt.Errorf("%s: %d votes, %d spam probabilities", d, len(votes), len(spam))
		}
		for _, v := range votes {
			allowed := v == "A" || v == "B" || (!qo && v == "N")
			if !allowed {
				return fmt.Errorf("%s: vote %v", d, v)
			}
		}
		for _, s := range spam {
			f, err := checkPandasFloat(s)
			if err != nil {
				return fmt.Errorf("%s spam: %w", d, err)
			}
			if f < 0.014 || f > 0.983 {
				return fmt.Errorf("%s spam probability %v out of [0.014, 0.983]", d, f)
			}
		}
		labels := []string{"a", "n", "b"}
		if qo {
			labels = []string{"a", "b"}
			if _, ok := m[d+"_p_n"]; ok {
				return errors.New("quality_overall_p_n present")
			}
		}
		sum, best, bestP := 0.0, "", -1.0
		for _, l := range labels {
			p, err := checkPandasFloat(m[d+"_p_"+l])
			if err != nil {
				return fmt.Errorf("%s_p_%s: %w", d, l, err)
			}
			if p < 0 || p > 1 {
				return fmt.Errorf("%s_p_%s = %v", d, l, p)
			}
			sum += p
			if p > bestP {
				best, bestP = l, p
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			return fmt.Errorf("%s: p's sum to %.15f", d, sum)
		}
		if g := m[d+"_gold"]; g != best {
			return fmt.Errorf("%s_gold = %v, argmax is %q", d, g, best)
		}
	}
	return nil
}

// checkLLMRow validates one llm_ratings.jsonl record on its own.
func checkLLMRow(line []byte) (map[string]any, error) {
	if err := checkKeyOrder(line, llmKeys); err != nil {
		return nil, err
	}
	m, err := decodeNumbers(line)
	if err != nil {
		return nil, err
	}
	if inf := m["inference"]; inf != "combined" && inf != "individual" {
		return nil, fmt.Errorf("inference %v", inf)
	}
	for _, d := range crowdDims {
		switch m[d] {
		case "a", "b", "n", nil:
		default:
			return nil, fmt.Errorf("%s = %v", d, m[d])
		}
	}
	return m, nil
}

// cleanRaw is the reference transformation raw_text -> cleaned_text.
func cleanRaw(raw string) string {
	return starBulletRe.ReplaceAllString(cleanMarkerRe.ReplaceAllString(raw, ""), "- ")
}

type statement struct {
	Text      string   `json:"text"`
	Citations []string `json:"citations"`
}

type responseRec struct {
	Response        string      `json:"response"`
	Topic           string      `json:"topic"`
	Style           string      `json:"style"`
	Kind            string      `json:"kind"`
	Query           string      `json:"query"`
	ReferencesIDs   []string    `json:"references_ids"`
	ReferencesTexts []string    `json:"references_texts"`
	RawText         string      `json:"raw_text"`
	CleanedText     string      `json:"cleaned_text"`
	Statements      []statement `json:"statements"`
}

// checkResponse validates one responses.jsonl record on its own.
func checkResponse(line []byte) (responseRec, error) {
	var r responseRec
	if err := checkKeyOrder(line, responseKeys); err != nil {
		return r, err
	}
	if len(line) < 19_000 || len(line) > 44_000 {
		return r, fmt.Errorf("line is %d bytes, want 19,000..44,000", len(line))
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, err
	}
	switch {
	case !uuidV3Re.MatchString(r.Response):
		return r, fmt.Errorf("response %q is not a v3 UUID", r.Response)
	case !topicRe.MatchString(r.Topic):
		return r, fmt.Errorf("topic %q", r.Topic)
	case !slices.Contains(crowdStyles[:], r.Style) || !slices.Contains(crowdKinds[:], r.Kind):
		return r, fmt.Errorf("style/kind %q/%q", r.Style, r.Kind)
	case !strings.HasSuffix(r.Query, "?"):
		return r, fmt.Errorf("query %q", r.Query)
	case len(r.ReferencesIDs) != 20 || len(r.ReferencesTexts) != 20:
		return r, fmt.Errorf("%d reference ids, %d texts", len(r.ReferencesIDs), len(r.ReferencesTexts))
	}
	for _, id := range r.ReferencesIDs {
		if !refIDRe.MatchString(id) {
			return r, fmt.Errorf("reference id %q", id)
		}
	}
	nonASCII := false
	for _, txt := range r.ReferencesTexts {
		nonASCII = nonASCII || strings.ContainsFunc(txt, func(c rune) bool { return c >= utf8.RuneSelf })
	}
	if !nonASCII {
		return r, errors.New("references_texts without non-ASCII text")
	}
	if n := utf8.RuneCountInString(r.RawText); n < 100 || n > 3087 {
		return r, fmt.Errorf("raw_text has %d chars", n)
	}
	if got := cleanRaw(r.RawText); got != r.CleanedText {
		return r, fmt.Errorf("cleaned_text differs from cleaned raw_text:\n%q\n%q", r.CleanedText, got)
	}
	if n := len(r.Statements); n < 1 || n > 21 {
		return r, fmt.Errorf("%d statements", n)
	}
	// Statement citations are the ids of raw_text's markers, in order.
	markers := markerRe.FindAllStringSubmatch(r.RawText, -1)
	k := 0
	for i, s := range r.Statements {
		if s.Citations == nil {
			return r, fmt.Errorf("statement %d: citations is null", i)
		}
		if len(s.Citations) > 21 {
			return r, fmt.Errorf("statement %d: %d citations", i, len(s.Citations))
		}
		if r.Style == "bullet" && !strings.HasPrefix(s.Text, "\n") {
			return r, fmt.Errorf("bullet statement %d %q does not start with a newline", i, s.Text)
		}
		if !strings.Contains(r.CleanedText, strings.TrimLeft(s.Text, "\n")) {
			return r, fmt.Errorf("statement %d %q not in cleaned_text", i, s.Text)
		}
		if len(s.Citations) == 0 {
			continue
		}
		if k >= len(markers) {
			return r, fmt.Errorf("statement %d has citations but raw_text has no marker left", i)
		}
		var ids []string
		for _, x := range strings.Split(markers[k][1], ",") {
			idx, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil || idx >= len(r.ReferencesIDs) {
				return r, fmt.Errorf("marker %q", markers[k][0])
			}
			ids = append(ids, r.ReferencesIDs[idx])
		}
		if !slices.Equal(ids, s.Citations) {
			return r, fmt.Errorf("statement %d: citations %q, marker %s gives %q", i, s.Citations, markers[k][0], ids)
		}
		k++
	}
	if k != len(markers) {
		return r, fmt.Errorf("%d markers, %d cited statements", len(markers), k)
	}
	return r, nil
}

// checkGzHeader checks the member header pandas/Python would write (plus
// MTIME 0 for reproducibility).
func checkGzHeader(f gzFile, name string) error {
	if f.header.Name != name {
		return fmt.Errorf("gzip header name %q, want %q", f.header.Name, name)
	}
	if mt := f.rawHdr[4:8]; !bytes.Equal(mt, []byte{0, 0, 0, 0}) {
		return fmt.Errorf("gzip MTIME % x, want 0", mt)
	}
	if f.rawHdr[8] != 2 {
		return fmt.Errorf("gzip XFL %d, want 2 (best compression)", f.rawHdr[8])
	}
	return nil
}

// crowdSample holds the four decoded files of one generated sample.
type crowdSample map[string]gzFile

func generateSample(t testing.TB, cfg crowdConfig) crowdSample {
	t.Helper()
	if _, err := generateCrowdRAG25(cfg); err != nil {
		t.Fatal(err)
	}
	s := crowdSample{}
	for _, name := range crowdFiles {
		s[name] = readGz(t, filepath.Join(cfg.Out, name+".gz"))
	}
	return s
}

func TestCrowdRAG25Sample(t *testing.T) {
	dir := t.TempDir()
	s := generateSample(t, sampleConfig(dir))

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"gzip headers", func(t *testing.T) {
			for _, name := range crowdFiles {
				if err := checkGzHeader(s[name], name); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}},
		{"ascii compact lf lines", func(t *testing.T) {
			for _, name := range crowdFiles {
				f := s[name]
				if err := checkASCII(f.data); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if bytes.ContainsRune(f.data, '\r') {
					t.Errorf("%s: contains CR", name)
				}
				for i, l := range f.lines {
					if err := checkCompact(l); err != nil {
						t.Errorf("%s line %d: %v", name, i+1, err)
						break
					}
				}
			}
		}},
		{"escapes", func(t *testing.T) {
			d := s["responses.jsonl"].data
			if !bytes.Contains(d, []byte(`\/`)) {
				t.Error(`no \/ escape in responses`)
			}
			if bytes.Contains(d, []byte(`https://`)) {
				t.Error(`unescaped "/" in responses`)
			}
			esc := escapeRe.FindAllSubmatch(d, -1)
			if len(esc) == 0 {
				t.Fatal(`no \u escapes in responses`)
			}
			surrogate := false
			for _, m := range esc {
				if !bytes.Equal(m[1], bytes.ToLower(m[1])) {
					t.Fatalf(`uppercase hex escape %s`, m[0])
				}
				surrogate = surrogate || bytes.HasPrefix(m[1], []byte("d8"))
			}
			if !surrogate {
				t.Error("no astral character (surrogate pair) in the sample")
			}
		}},
		{"key order", func(t *testing.T) {
			want := map[string][]string{
				"responses.jsonl":   responseKeys,
				"ratings.jsonl":     ratingKeysOrder(),
				"llm_ratings.jsonl": llmKeys,
				"grades.jsonl":      gradesKeys,
			}
			for _, name := range crowdFiles {
				for i, l := range s[name].lines {
					if err := checkKeyOrder(l, want[name]); err != nil {
						t.Fatalf("%s line %d: %v", name, i+1, err)
					}
				}
			}
			// Statement objects: exactly text, citations.
			for i, l := range s["responses.jsonl"].lines {
				var m struct{ Statements []json.RawMessage }
				if err := json.Unmarshal(l, &m); err != nil {
					t.Fatal(err)
				}
				for _, st := range m.Statements {
					if err := checkKeyOrder(st, []string{"text", "citations"}); err != nil {
						t.Fatalf("responses line %d statement: %v", i+1, err)
					}
				}
			}
		}},
		{"responses", func(t *testing.T) {
			lines := s["responses.jsonl"].lines
			if len(lines) != 6*6 {
				t.Fatalf("%d responses, want 36", len(lines))
			}
			var recs []responseRec
			ids := map[string]bool{}
			for i, l := range lines {
				r, err := checkResponse(l)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if ids[r.Response] {
					t.Fatalf("duplicate response id %s", r.Response)
				}
				ids[r.Response] = true
				recs = append(recs, r)
			}
			if !slices.IsSortedFunc(recs, func(a, b responseRec) int {
				return cmp.Or(strings.Compare(a.Topic, b.Topic), strings.Compare(a.Style, b.Style), strings.Compare(a.Kind, b.Kind))
			}) {
				t.Error("responses not sorted by (topic, style, kind)")
			}
			nlNonBullet, multiCited, zeroCited := 0, 0, 0
			for i := 0; i < len(recs); i += 6 {
				for j, r := range recs[i : i+6] {
					if r.Style != crowdStyles[j/2] || r.Kind != crowdKinds[j%2] || r.Topic != recs[i].Topic {
						t.Fatalf("topic %s: response %d is %s/%s", recs[i].Topic, j, r.Style, r.Kind)
					}
					if !slices.Equal(r.ReferencesIDs, recs[i].ReferencesIDs) || !slices.Equal(r.ReferencesTexts, recs[i].ReferencesTexts) || r.Query != recs[i].Query {
						t.Fatalf("topic %s: responses do not share query and references", r.Topic)
					}
				}
			}
			for _, r := range recs {
				for _, st := range r.Statements {
					switch {
					case r.Style != "bullet" && strings.HasPrefix(st.Text, "\n"):
						nlNonBullet++
					case len(st.Citations) == 0:
						zeroCited++
					case len(st.Citations) > 1:
						multiCited++
					}
				}
			}
			if nlNonBullet == 0 || zeroCited == 0 || multiCited == 0 {
				t.Errorf("statement variety missing: %d non-bullet \\n-texts, %d uncited, %d multi-cited", nlNonBullet, zeroCited, multiCited)
			}
		}},
		{"ratings", func(t *testing.T) {
			lines := s["ratings.jsonl"].lines
			type pair struct{ a, b string }
			var pairs []pair
			perTopic := map[string]int{}
			perSub := map[string]int{}
			topicOf := map[string]string{}
			for i, l := range lines {
				if err := checkRatingRow(l); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				m, _ := decodeNumbers(l)
				p := pair{m["response_a"].(string), m["response_b"].(string)}
				pairs = append(pairs, p)
				q := m["query_id"].(string)
				perTopic[q]++
				perSub[m["submission_id"].(string)]++
				topicOf[p.a], topicOf[p.b] = q, q
			}
			if !slices.IsSortedFunc(pairs, func(x, y pair) int {
				return cmp.Or(strings.Compare(x.a, y.a), strings.Compare(x.b, y.b))
			}) {
				t.Error("ratings not sorted by (response_a, response_b)")
			}
			if len(perTopic) != 4 {
				t.Errorf("%d rated topics, want 4", len(perTopic))
			}
			for q, n := range perTopic {
				if n < 15 || n > 26 {
					t.Errorf("topic %s has %d rows, want 15..26", q, n)
				}
			}
			for sub, n := range perSub {
				if n < 12 || n > 16 {
					t.Errorf("submission %s covers %d rows, want 12..16", sub, n)
				}
			}
			set := map[pair]bool{}
			for _, p := range pairs {
				if set[p] || p.a == p.b {
					t.Fatalf("repeated or self pair %v", p)
				}
				set[p] = true
			}
			both := 0
			unordered := map[pair]bool{}
			for _, p := range pairs {
				if set[pair{p.b, p.a}] {
					both++
				}
				u := p
				if u.b < u.a {
					u = pair{p.b, p.a}
				}
				unordered[u] = true
			}
			if len(unordered) != 4*15 {
				t.Errorf("%d unordered pairs, want every pair of every rated topic (60)", len(unordered))
			}
			if both == 0 {
				t.Error("no pair rated in both orders")
			}
			// Workers' spam probabilities are per worker and dimension.
			spamOf := map[string]string{}
			for _, l := range lines {
				var m map[string]json.RawMessage
				json.Unmarshal(l, &m)
				var ws []string
				json.Unmarshal(m["worker"], &ws)
				for _, d := range crowdDims {
					var sp []json.Number
					json.Unmarshal(m[d+"_spam_probability"], &sp)
					for v, w := range ws {
						key := w + "/" + d
						if prev, ok := spamOf[key]; ok && prev != string(sp[v]) {
							t.Fatalf("worker %s has spam probabilities %s and %s in %s", w, prev, sp[v], d)
						}
						spamOf[key] = string(sp[v])
					}
				}
			}
		}},
		{"llm ratings", func(t *testing.T) {
			lines := s["llm_ratings.jsonl"].lines
			ratedResponses := map[string]bool{}
			for _, l := range s["ratings.jsonl"].lines {
				m, _ := decodeNumbers(l)
				ratedResponses[m["response_a"].(string)] = true
				ratedResponses[m["response_b"].(string)] = true
			}
			byKey := map[string][]map[string]any{}
			seenIndividual, nullRows, qoN := false, 0, 0
			for i, l := range lines {
				m, err := checkLLMRow(l)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if !ratedResponses[m["response_a"].(string)] || !ratedResponses[m["response_b"].(string)] {
					t.Fatalf("line %d judges unrated responses", i+1)
				}
				switch m["inference"] {
				case "individual":
					seenIndividual = true
				case "combined":
					if seenIndividual {
						t.Fatalf("line %d: combined row after individual rows", i+1)
					}
				}
				nulls := 0
				for _, d := range crowdDims {
					if m[d] == nil {
						nulls++
					}
				}
				switch {
				case nulls == 6 && m["correctness_topical"] != nil && m["inference"] == "combined":
					nullRows++
				case nulls != 0:
					t.Fatalf("line %d: unexpected nulls", i+1)
				}
				if m["quality_overall"] == "n" {
					qoN++
				}
				k := fmt.Sprint(m["response_a"], m["response_b"], m["inference"])
				byKey[k] = append(byKey[k], m)
			}
			dups, conflicts := 0, 0
			for _, rows := range byKey {
				if len(rows) > 2 {
					t.Fatalf("key occurs %d times", len(rows))
				}
				if len(rows) == 2 {
					dups++
					for _, d := range crowdDims {
						if rows[0][d] != rows[1][d] {
							conflicts++
							break
						}
					}
				}
			}
			if nullRows != 1 {
				t.Errorf("%d combined rows null in six dimensions, want exactly 1", nullRows)
			}
			if dups == 0 || conflicts == 0 || conflicts == dups {
				t.Errorf("duplicated keys %d, conflicting %d: want some of each, not all conflicting", dups, conflicts)
			}
			if qoN == 0 {
				t.Error(`no "n" for quality_overall`)
			}
		}},
		{"grades", func(t *testing.T) {
			rated := map[string]string{}
			for _, l := range s["ratings.jsonl"].lines {
				m, _ := decodeNumbers(l)
				rated[m["response_a"].(string)] = m["query_id"].(string)
				rated[m["response_b"].(string)] = m["query_id"].(string)
			}
			lines := s["grades.jsonl"].lines
			if len(lines) != len(rated) {
				t.Fatalf("%d grade rows for %d rated responses", len(lines), len(rated))
			}
			perTopicDim := map[string][]int{}
			var order []string
			for i, l := range lines {
				m, err := decodeNumbers(l)
				if err != nil {
					t.Fatal(err)
				}
				id := m["response"].(string)
				q, ok := rated[id]
				if !ok {
					t.Fatalf("line %d: response %s not in ratings", i+1, id)
				}
				delete(rated, id)
				order = append(order, id)
				for _, d := range crowdDims {
					n, ok := m[d].(json.Number)
					g, err := n.Int64()
					if !ok || err != nil || strings.Contains(string(n), ".") {
						t.Fatalf("line %d: %s = %v is not an int", i+1, d, m[d])
					}
					perTopicDim[q+"/"+d] = append(perTopicDim[q+"/"+d], int(g))
				}
			}
			for k, gs := range perTopicDim {
				slices.Sort(gs)
				if !slices.Equal(gs, []int{1, 2, 3, 4, 5, 6}) {
					t.Errorf("%s grades %v are not a permutation of 1..6", k, gs)
				}
			}
			if slices.IsSorted(order) {
				t.Error("grades rows are sorted; the release's are not")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

// TestCheckersDetectCorruption makes sure the checkers above can fail.
func TestCheckersDetectCorruption(t *testing.T) {
	s := generateSample(t, sampleConfig(t.TempDir()))
	rating := s["ratings.jsonl"].lines[0]
	llm := s["llm_ratings.jsonl"].lines[0]
	resp := s["responses.jsonl"].lines[0]
	if err := checkRatingRow(rating); err != nil {
		t.Fatalf("pristine rating row rejected: %v", err)
	}
	if _, err := checkResponse(resp); err != nil {
		t.Fatalf("pristine response rejected: %v", err)
	}
	replaceFirstValue := func(line []byte, key, val string) []byte {
		re := regexp.MustCompile(`"` + key + `":("[^"]*"|[-0-9.e]+)`)
		loc := re.FindSubmatchIndex(line)
		if loc == nil {
			t.Fatalf("key %s not found", key)
		}
		return slices.Concat(line[:loc[2]], []byte(val), line[loc[3]:])
	}
	tests := []struct {
		name string
		err  func() error
	}{
		{"rating key order", func() error {
			return checkRatingRow(bytes.Replace(rating, []byte(`"query_id"`), []byte(`"query"`), 1))
		}},
		{"rating p's do not sum to 1", func() error {
			return checkRatingRow(replaceFirstValue(rating, "coverage_deep_p_a", "0.0000000001"))
		}},
		{"rating p with trailing zero", func() error {
			return checkRatingRow(replaceFirstValue(rating, "quality_overall_p_a", "0.5000000000"))
		}},
		{"rating gold uppercase", func() error {
			return checkRatingRow(replaceFirstValue(rating, "coherence_logical_gold", `"A"`))
		}},
		{"rating vote lowercase", func() error {
			return checkRatingRow(regexp.MustCompile(`"correctness_topical_vote":\["[ANB]"`).
				ReplaceAll(rating, []byte(`"correctness_topical_vote":["a"`)))
		}},
		{"rating quality_overall_p_n", func() error {
			return checkRatingRow(bytes.Replace(rating, []byte(`"quality_overall_p_b"`), []byte(`"quality_overall_p_n":0.0,"quality_overall_p_b"`), 1))
		}},
		{"llm bad label", func() error {
			_, err := checkLLMRow(replaceFirstValue(llm, "coverage_broad", `"N"`))
			return err
		}},
		{"response raw/cleaned mismatch", func() error {
			_, err := checkResponse(replaceFirstValue(resp, "cleaned_text", `"x"`))
			return err
		}},
		{"response short line", func() error {
			i := bytes.Index(resp, []byte(`"references_texts":[`))
			j := bytes.Index(resp, []byte(`],"raw_text"`))
			short := slices.Concat(resp[:i], []byte(`"references_texts":["x"`), resp[j:])
			_, err := checkResponse(short)
			return err
		}},
		{"non-ascii byte", func() error { return checkASCII([]byte(`{"a":"é"}`)) }},
		{"not compact", func() error { return checkCompact([]byte(`{"a": 1}`)) }},
		{"gzip header name", func() error { return checkGzHeader(s["grades.jsonl"], "ratings.jsonl") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err() == nil {
				t.Error("corruption not detected")
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if _, err := generateCrowdRAG25(sampleConfig(dir)); err != nil {
			t.Fatal(err)
		}
	}
	other := t.TempDir()
	cfg := sampleConfig(other)
	cfg.Seed++
	if _, err := generateCrowdRAG25(cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range crowdFiles {
		x, _ := os.ReadFile(filepath.Join(a, name+".gz"))
		y, _ := os.ReadFile(filepath.Join(b, name+".gz"))
		z, _ := os.ReadFile(filepath.Join(other, name+".gz"))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s: two runs differ (or are empty)", name)
		}
		if bytes.Equal(x, z) {
			t.Errorf("%s: seed has no effect", name)
		}
	}
}

// TestSampleMatchesTestdata pins the committed sample: regenerate it with
// the command in doc.go when the generator changes on purpose.
func TestSampleMatchesTestdata(t *testing.T) {
	dir := t.TempDir()
	if _, err := generateCrowdRAG25(sampleConfig(dir)); err != nil {
		t.Fatal(err)
	}
	for _, name := range crowdFiles {
		want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "crowdrag25", name+".gz"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, name+".gz"))
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from testdata/crowdrag25; regenerate with: "+
				"go run ./cmd/agora-gen crowdrag25 --out testdata/crowdrag25 --topics 6 --rated-topics 4", name)
		}
	}
}

func TestAppendPandasFloat(t *testing.T) {
	// Expected strings are pandas 3.1 DataFrame.to_json output.
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"zero", 0, "0.0"},
		{"one", 1, "1.0"},
		{"whole", 12, "12.0"},
		{"half", 0.5, "0.5"},
		{"short", 0.014, "0.014"},
		{"nine digits", 0.902595571, "0.902595571"},
		{"third rounds down", 1.0 / 3, "0.3333333333"},
		{"two thirds rounds up", 2.0 / 3, "0.6666666667"},
		{"rolls over", 0.99999999999, "1.0"},
		{"negative", -0.25, "-0.25"},
		{"mixed", 123.456, "123.456"},
		{"below precision", 1e-11, "0.0"},
		{"leading zeros", 0.0000000014, "0.0000000014"},
		{"tiny uses %g", 2.5e-16, "2.5e-16"},
		{"huge uses %g", 1e17, "1e+17"},
		{"nan is null", math.NaN(), "null"},
		{"round near tenth digit", 0.12345678915, "0.1234567892"},
		{"trim after rounding", 0.98300000001, "0.983"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendPandasFloat(nil, tc.in)); got != tc.want {
				t.Errorf("appendPandasFloat(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestAppendJSONString(t *testing.T) {
	// Expected strings are pandas 3.1 DataFrame.to_json output.
	tests := []struct {
		name, in, want string
	}{
		{"plain", "abc", `"abc"`},
		{"slash", "a/b", `"a\/b"`},
		{"latin", "é", `"\u00e9"`},
		{"typography", "’–“”\u00a0", `"\u2019\u2013\u201c\u201d\u00a0"`},
		{"astral", "😊", `"\ud83d\ude0a"`},
		{"quotes and backslash", `"q" back\slash`, `"\"q\" back\\slash"`},
		{"controls", "\n\r\t\b\f\x01\x1f\x00", `"\n\r\t\b\f\u0001\u001f\u0000"`},
		{"html chars kept", "<&>", `"<&>"`},
		{"del kept", "\x7f", "\"\x7f\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendJSONString(nil, tc.in)); got != tc.want {
				t.Errorf("appendJSONString(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestUUID(t *testing.T) {
	dns := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	tests := []struct {
		name string
		got  string
		want string
	}{
		// Python: uuid.uuid3(uuid.NAMESPACE_DNS, "python.org")
		{"v3 python.org", uuid3(dns, "python.org"), "6fa459ea-ee8a-3ca4-894e-db77e160355e"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %s, want %s", tc.got, tc.want)
			}
		})
	}
	r := newRnd(1, 2)
	for range 100 {
		if u := uuid4(r); !uuidV4Re.MatchString(u) {
			t.Fatalf("uuid4 %s is not a v4 UUID", u)
		}
	}
}

func TestResolveCrowdConfig(t *testing.T) {
	tests := []struct {
		name          string
		scale         float64
		topics, rated int
		wantN, wantM  int
		wantErr       bool
	}{
		{"release size", 1, -1, -1, 301, 65, false},
		{"ten times", 10, -1, -1, 3010, 650, false},
		{"fifty times", 50, -1, -1, 15050, 3250, false},
		{"sample", 1, 6, 4, 6, 4, false},
		{"topics keep ratio", 1, 100, -1, 100, 22, false},
		{"only rated", 1, -1, 10, 301, 10, false},
		{"more rated than topics", 1, 6, 7, 0, 0, true},
		{"zero scale", 0, -1, -1, 0, 0, true},
		{"zero topics", 1, 0, -1, 0, 0, true},
		{"too many topics", 1, crowdMaxTopics + 1, 0, 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := resolveCrowdConfig("x", tc.scale, tc.topics, tc.rated, 1)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && (cfg.Topics != tc.wantN || cfg.RatedTopics != tc.wantM) {
				t.Errorf("got %d/%d, want %d/%d", cfg.Topics, cfg.RatedTopics, tc.wantN, tc.wantM)
			}
		})
	}
}

func TestCLI(t *testing.T) {
	out := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"no args", nil, 2, ""},
		{"help", []string{"--help"}, 0, "crowdrag25"},
		{"unknown dataset", []string{"nope"}, 2, ""},
		{"missing out", []string{"crowdrag25"}, 1, ""},
		{"bad flag", []string{"crowdrag25", "--bogus"}, 1, ""},
		{"dataset help", []string{"crowdrag25", "-h"}, 0, ""},
		{"generate", []string{"crowdrag25", "--out", out, "--topics", "2", "--rated-topics", "1", "--seed", "7"}, 0, "ratings.jsonl.gz"},
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
	// The small run must still have every file, with one response per
	// (topic, style, kind).
	f := readGz(t, filepath.Join(out, "responses.jsonl.gz"))
	if len(f.lines) != 12 {
		t.Errorf("%d responses, want 12", len(f.lines))
	}
	sc := bufio.NewScanner(bytes.NewReader(readGz(t, filepath.Join(out, "grades.jsonl.gz")).data))
	n := 0
	for sc.Scan() {
		n++
	}
	if n != 6 {
		t.Errorf("%d grade rows, want 6", n)
	}
}
