package schulze

import (
	"errors"
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
