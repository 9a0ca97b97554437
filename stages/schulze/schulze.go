// Package schulze computes the Schulze (beatpath) method winner of ranked
// ballots, as the Habermas Machine aggregates participants' rankings.
//
// A ballot gives each candidate a rank, 0 for the most preferred; equal
// ranks are ties. d[a][b] counts the ballots ranking a strictly above b;
// the strength of the strongest path from a to b is found with a
// Floyd–Warshall pass; a wins when its path to every other candidate is
// at least as strong as the path back. Several candidates can win; Winner
// then breaks the tie deterministically by taking the smallest candidate
// id (byte order), so the same ballots always give the same winner.
package schulze

import (
	"errors"
	"sort"
	"strings"
)

// ErrNoBallots is returned when there is nothing to count.
var ErrNoBallots = errors.New("schulze: no ballots")

// Ballot maps a candidate id to its rank (0 = most preferred).
type Ballot map[string]int

// Winners returns every Schulze winner, sorted by id. Candidates a ballot
// does not rank are ranked below all it does.
func Winners(candidates []string, ballots []Ballot) ([]string, error) {
	t := &Tally{}
	for _, b := range ballots {
		t.Add(b)
	}
	return t.Winners(candidates)
}

// Tally counts ballots as they come, keeping only pairwise counts (memory
// in the square of the candidates, not in the ballots), for Winners at
// the end. The zero Tally is empty and ready.
type Tally struct {
	ballots int
	names   []string
	ranked  []int32 // ballots ranking candidate i
	both    []int32 // n×n: ballots ranking both i and j
	above   []int32 // n×n: ballots ranking i strictly above j
}

// index returns candidate c's index, adding it if new.
func (t *Tally) index(c string) int {
	for i, n := range t.names {
		if n == c {
			return i
		}
	}
	n := len(t.names)
	grow := func(m []int32) []int32 {
		out := make([]int32, (n+1)*(n+1))
		for i := 0; i < n; i++ {
			copy(out[i*(n+1):i*(n+1)+n], m[i*n:i*n+n])
		}
		return out
	}
	t.both, t.above = grow(t.both), grow(t.above)
	t.names = append(t.names, strings.Clone(c)) // c may point into a larger buffer
	t.ranked = append(t.ranked, 0)
	return n
}

// Add counts one ballot; one that ranks nothing says nothing, and is not
// counted (counted, it made every candidate tie with no real ballot).
func (t *Tally) Add(b Ballot) {
	if len(b) == 0 {
		return
	}
	t.ballots++
	ids := make([]int, 0, len(b))
	ranks := make([]int, 0, len(b))
	for c, r := range b {
		ids = append(ids, t.index(c))
		ranks = append(ranks, r)
	}
	n := len(t.names)
	for x, i := range ids {
		t.ranked[i]++
		for y, j := range ids {
			if x == y {
				continue
			}
			t.both[i*n+j]++
			if ranks[x] < ranks[y] {
				t.above[i*n+j]++
			}
		}
	}
}

// find returns candidate c's index, if any ballot ranked it.
func (t *Tally) find(c string) (int, bool) {
	for i, n := range t.names {
		if n == c {
			return i, true
		}
	}
	return 0, false
}

// Winners returns every Schulze winner among candidates, sorted by id.
func (t *Tally) Winners(candidates []string) ([]string, error) {
	if t.ballots == 0 || len(candidates) == 0 {
		return nil, ErrNoBallots
	}
	cs := append([]string(nil), candidates...)
	sort.Strings(cs)
	n := len(cs)
	// d[a][b]: ballots ranking a above b, where a ballot ranking a but
	// not b ranks a above b.
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
	}
	for a := 0; a < n; a++ {
		ia, okA := t.find(cs[a])
		if !okA {
			continue // ranked by no ballot: above nothing
		}
		for b := 0; b < n; b++ {
			if a == b {
				continue
			}
			ib, okB := t.find(cs[b])
			if !okB {
				d[a][b] = int(t.ranked[ia])
				continue
			}
			m := len(t.names)
			d[a][b] = int(t.above[ia*m+ib] + t.ranked[ia] - t.both[ia*m+ib])
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
			if i == k {
				continue
			}
			for j := 0; j < n; j++ {
				if j == i || j == k {
					continue
				}
				p[i][j] = max(p[i][j], min(p[i][k], p[k][j]))
			}
		}
	}
	var out []string
	for i := 0; i < n; i++ {
		wins := true
		for j := 0; j < n; j++ {
			if i != j && p[i][j] < p[j][i] {
				wins = false
				break
			}
		}
		if wins {
			out = append(out, cs[i])
		}
	}
	return out, nil
}

// Winner returns the Schulze winner, the smallest id among tied winners,
// and whether the result was a tie.
func Winner(candidates []string, ballots []Ballot) (winner string, tie bool, err error) {
	ws, err := Winners(candidates, ballots)
	if err != nil {
		return "", false, err
	}
	return ws[0], len(ws) > 1, nil
}

// Winner returns the tally's Schulze winner among candidates, the
// smallest id among tied winners, and whether the result was a tie.
func (t *Tally) Winner(candidates []string) (winner string, tie bool, err error) {
	ws, err := t.Winners(candidates)
	if err != nil {
		return "", false, err
	}
	return ws[0], len(ws) > 1, nil
}
