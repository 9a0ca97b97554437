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
	if len(ballots) == 0 || len(candidates) == 0 {
		return nil, ErrNoBallots
	}
	cs := append([]string(nil), candidates...)
	sort.Strings(cs)
	n := len(cs)
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
	}
	for _, b := range ballots {
		rank := func(c string) int {
			if r, ok := b[c]; ok {
				return r
			}
			return int(^uint(0) >> 1) // unranked: last
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != j && rank(cs[i]) < rank(cs[j]) {
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
