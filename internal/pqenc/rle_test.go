package pqenc

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// decodeRLE reads n values of bit width w from Parquet's RLE /
// bit-packing hybrid encoding, as the format's specification describes
// it (an implementation of its own, not the encoder's).
func decodeRLE(t *testing.T, b []byte, n, w int) []int32 {
	t.Helper()
	var out []int32
	for len(out) < n {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			t.Fatalf("bad run header after %d values", len(out))
		}
		b = b[k:]
		if h&1 == 0 {
			run := int(h >> 1)
			size := (w + 7) / 8
			var v int32
			for i := range size {
				v |= int32(b[i]) << (8 * i)
			}
			b = b[size:]
			for range run {
				out = append(out, v)
			}
			continue
		}
		groups := int(h >> 1)
		bitPos := 0
		for range groups * 8 {
			var v int32
			for j := range w {
				if b[(bitPos+j)/8]&(1<<((bitPos+j)%8)) != 0 {
					v |= 1 << j
				}
			}
			bitPos += w
			out = append(out, v)
		}
		b = b[groups*w:]
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes left after %d values", len(b), n)
	}
	return out[:n]
}

// TestRLE: the hybrid encoding of levels and dictionary indices decodes
// to the values encoded, for runs at and off the groups of 8, stretches
// of every length, and bit widths 1 to 20.
func TestRLE(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := map[string][]int32{
		"empty":                 {},
		"one":                   {1},
		"seven":                 {1, 0, 1, 1, 0, 1, 0},
		"run of 8":              {3, 3, 3, 3, 3, 3, 3, 3},
		"run after 3":           {1, 2, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5},
		"run after 8":           {1, 2, 3, 4, 5, 6, 7, 0, 5, 5, 5, 5, 5, 5, 5, 5, 5},
		"run then stretch of 5": {2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 0, 1, 0, 1},
		"runs of 7":             {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3},
	}
	for k := range 20 {
		v := make([]int32, rng.IntN(300))
		for i := range v {
			if rng.IntN(4) == 0 && i > 0 {
				v[i] = v[i-1] // runs
			} else {
				v[i] = int32(rng.IntN(1 << (k%6 + 1)))
			}
		}
		cases[fmt.Sprintf("random %d", k)] = v
	}
	for name, vals := range cases {
		for _, w := range []int{1, 2, 3, 7, 8, 9, 16, 20} {
			maxV := int32(0)
			for _, v := range vals {
				maxV = max(maxV, v)
			}
			if maxV >= 1<<w {
				continue
			}
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				got := decodeRLE(t, appendRLE(nil, vals, w), len(vals), w)
				if !slices.Equal(got, vals) {
					t.Fatalf("decoded %v, want %v", got, vals)
				}
			})
		}
	}
}
