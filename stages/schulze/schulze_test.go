package schulze

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// ballots repeats a ranking (best first; "=" joins ties) n times.
func ballots(spec ...any) []Ballot {
	var out []Ballot
	for i := 0; i < len(spec); i += 2 {
		n, order := spec[i].(int), spec[i+1].(string)
		for k := 0; k < n; k++ {
			b := Ballot{}
			for r, group := range strings.Split(order, ">") {
				for _, c := range strings.Split(group, "=") {
					b[c] = r
				}
			}
			out = append(out, b)
		}
	}
	return out
}

func TestWinners(t *testing.T) {
	tests := []struct {
		name    string
		cands   string
		ballots []Ballot
		want    string
	}{
		// The example from Schulze's paper and Wikipedia: 45 voters, winner E.
		{"wikipedia", "A B C D E", ballots(5, "A>C>B>E>D", 5, "A>D>E>C>B", 8, "B>E>D>A>C", 3, "C>A>B>E>D", 7, "C>A>E>B>D", 2, "C>B>A>D>E", 7, "D>C>E>B>A", 8, "E>B>A>D>C"), "E"},
		{"unanimous", "a b c", ballots(3, "b>a>c"), "b"},
		{"condorcet winner beats plurality", "a b c", ballots(4, "a>b>c", 3, "b>c>a", 2, "c>b>a"), "b"},
		{"a perfect tie is broken by the smallest id", "x y", ballots(1, "x>y", 1, "y>x"), "x y"},
		{"ties within a ballot count for neither", "a b c", ballots(2, "a=b>c", 1, "b>a>c"), "b"},
		{"unranked candidates come last", "a b c", []Ballot{{"a": 0}, {"a": 0, "b": 1}}, "a"},
		{"single candidate", "only", ballots(2, "only"), "only"},
		{"cycle resolved by path strength", "a b c", ballots(3, "a>b>c", 2, "b>c>a", 2, "c>a>b"), "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := Winners(strings.Fields(tt.cands), tt.ballots)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(ws, " "); got != tt.want {
				t.Fatalf("winners %q, want %q", got, tt.want)
			}
			w, tie, _ := Winner(strings.Fields(tt.cands), tt.ballots)
			if w != ws[0] || tie != (len(ws) > 1) {
				t.Fatalf("Winner = %q tie=%v", w, tie)
			}
		})
	}
}

func TestNoBallots(t *testing.T) {
	if _, err := Winners([]string{"a"}, nil); !errors.Is(err, ErrNoBallots) {
		t.Fatalf("err = %v", err)
	}
}

func TestOrderOfInputsDoesNotMatter(t *testing.T) {
	b := ballots(5, "A>C>B>E>D", 5, "A>D>E>C>B", 8, "B>E>D>A>C", 3, "C>A>B>E>D", 7, "C>A>E>B>D", 2, "C>B>A>D>E", 7, "D>C>E>B>A", 8, "E>B>A>D>C")
	rev := make([]Ballot, len(b))
	for i := range b {
		rev[len(b)-1-i] = b[i]
	}
	w1, _, _ := Winner([]string{"A", "B", "C", "D", "E"}, b)
	w2, _, _ := Winner([]string{"E", "D", "C", "B", "A"}, rev)
	if w1 != w2 || w1 != "E" {
		t.Fatalf("%s vs %s", w1, w2)
	}
}

// The tally must give the winners a direct count of the ballots gives,
// including ballots that leave candidates out and ties within a ballot.
// TestEmptyBallotsAreNoBallots: ballots that rank nothing elect no one,
// where they made every candidate tie and the smallest id win.
func TestEmptyBallotsAreNoBallots(t *testing.T) {
	if ws, err := Winners([]string{"x", "y"}, []Ballot{{}, {}}); err != ErrNoBallots {
		t.Errorf("empty ballots only: %v, %v; want ErrNoBallots", ws, err)
	}
	if ws, err := Winners([]string{"x", "y"}, []Ballot{{}, {"y": 0, "x": 1}}); err != nil || !slices.Equal(ws, []string{"y"}) {
		t.Errorf("an empty ballot and one for y: %v, %v; want [y]", ws, err)
	}
}

func TestTallyMatchesDirectCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(6)
		cands := make([]string, n)
		for i := range cands {
			cands[i] = fmt.Sprintf("c%d", i)
		}
		var ballots []Ballot
		for v := rng.IntN(12); v >= 0; v-- {
			b := Ballot{}
			for _, c := range cands {
				if rng.IntN(5) > 0 {
					b[c] = rng.IntN(n)
				}
			}
			ballots = append(ballots, b)
		}
		want, werr := directWinners(cands, ballots)
		tl := &Tally{}
		for _, b := range ballots {
			tl.Add(b)
		}
		got, gerr := tl.Winners(cands)
		if (werr != nil) != (gerr != nil) || !slices.Equal(got, want) {
			t.Fatalf("trial %d: tally %v (%v), direct %v (%v); ballots %v", trial, got, gerr, want, werr, ballots)
		}
	}
}

// directWinners is the textbook computation from the ballots.
// A ballot that ranks nothing is no ballot.
func directWinners(candidates []string, ballots []Ballot) ([]string, error) {
	ballots = slices.DeleteFunc(slices.Clone(ballots), func(b Ballot) bool { return len(b) == 0 })
	if len(ballots) == 0 || len(candidates) == 0 {
		return nil, ErrNoBallots
	}
	cs := append([]string(nil), candidates...)
	slices.Sort(cs)
	n := len(cs)
	rank := func(b Ballot, c string) int {
		if r, ok := b[c]; ok {
			return r
		}
		return 1 << 30
	}
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
		for j := range d[i] {
			for _, b := range ballots {
				if i != j && rank(b, cs[i]) < rank(b, cs[j]) {
					d[i][j]++
				}
			}
		}
	}
	p := make([][]int, n)
	for i := range p {
		p[i] = make([]int, n)
		for j := 0; j < n; j++ {
			if i != j && d[i][j] > d[j][i] {
				p[i][j] = d[i][j]
			}
		}
	}
	for k := 0; k < n; k++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != k && j != i && j != k {
					p[i][j] = max(p[i][j], min(p[i][k], p[k][j]))
				}
			}
		}
	}
	var out []string
	for i := 0; i < n; i++ {
		wins := true
		for j := 0; j < n; j++ {
			if i != j && p[i][j] < p[j][i] {
				wins = false
			}
		}
		if wins {
			out = append(out, cs[i])
		}
	}
	return out, nil
}
