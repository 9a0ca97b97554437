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
// the end.
type Tally struct {
	ballots int
	idx     map[string]int
	names   []string
	ranked  []int          // ballots ranking candidate i
	both    map[[2]int]int // ballots ranking both i and j (i < j)
	above   map[[2]int]int // ballots ranking i strictly above j
}

// Add counts one ballot.
func (t *Tally) Add(b Ballot) {
	if t.idx == nil {
		t.idx, t.both, t.above = map[string]int{}, map[[2]int]int{}, map[[2]int]int{}
	}
	t.ballots++
	ids := make([]int, 0, len(b))
	for c := range b {
		i, ok := t.idx[c]
		if !ok {
			i = len(t.names)
			t.idx[c] = i
			t.names = append(t.names, c)
			t.ranked = append(t.ranked, 0)
		}
		t.ranked[i]++
		ids = append(ids, i)
	}
	for x, i := range ids {
		for _, j := range ids[x+1:] {
			t.both[[2]int{min(i, j), max(i, j)}]++
			ri, rj := b[t.names[i]], b[t.names[j]]
			switch {
			case ri < rj:
				t.above[[2]int{i, j}]++
			case rj < ri:
				t.above[[2]int{j, i}]++
			}
		}
	}
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
		ia, okA := t.idx[cs[a]]
		if !okA {
			continue // ranked by no ballot: above nothing
		}
		for b := 0; b < n; b++ {
			if a == b {
				continue
			}
			ib, okB := t.idx[cs[b]]
			if !okB {
				d[a][b] = t.ranked[ia]
				continue
			}
			d[a][b] = t.above[[2]int{ia, ib}] + t.ranked[ia] - t.both[[2]int{min(ia, ib), max(ia, ib)}]
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
