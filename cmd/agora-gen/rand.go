package main

import (
	"crypto/md5"
	"encoding/hex"
	"math/bits"
	"math/rand/v2"
)

// rnd is a small deterministic random source on top of math/rand/v2's PCG.
// Only PCG's raw Uint64 stream is used; every derived quantity (bounded
// ints, floats, shuffles) is computed here with integer arithmetic or plain
// IEEE operations, so output does not depend on how a Go release implements
// rand.Rand's helper methods.
type rnd struct {
	src *rand.PCG
}

// splitmix64 is the SplitMix64 finaliser, used to derive independent
// stream seeds from (seed, tag, indices).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Stream tags: every independent decision family has its own tag, so that
// e.g. adding a field to responses never shifts the ratings.
const (
	tagTopicIDs uint64 = iota + 1
	tagRatedSelection
	tagTopicText
	tagQuality
	tagPairs
	tagSubmissionSizes
	tagSubmission
	tagWorker
	tagRatingRow
	tagLLMTopic
	tagLLMRow
	tagNullRow
	tagGradesShuffle
)

// newRnd returns the stream for (seed, tag, idx...). Equal arguments give
// equal streams; any difference gives an unrelated stream.
func newRnd(seed, tag uint64, idx ...uint64) *rnd {
	h := splitmix64(seed ^ 0x5ca1ab1e)
	h = splitmix64(h ^ tag)
	for _, i := range idx {
		h = splitmix64(h ^ (i + 0x632be59bd9b4e019))
	}
	return &rnd{src: rand.NewPCG(seed, h)}
}

func (r *rnd) uint64() uint64 { return r.src.Uint64() }

// intn returns a value in [0, n) using Lemire's multiply-shift with
// rejection (exactly uniform).
func (r *rnd) intn(n int) int {
	if n <= 0 {
		panic("intn: n <= 0")
	}
	un := uint64(n)
	hi, lo := bits.Mul64(r.uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(r.uint64(), un)
		}
	}
	return int(hi)
}

// between returns a value in [lo, hi] (inclusive).
func (r *rnd) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// float returns a value in [0, 1) with 53 random bits.
func (r *rnd) float() float64 { return float64(r.uint64()>>11) * (1.0 / (1 << 53)) }

// chance reports true with probability p.
func (r *rnd) chance(p float64) bool { return r.float() < p }

// normal returns an approximately standard normal value (Irwin–Hall sum of
// twelve uniforms): only additions, so it is bit-identical on every
// platform, unlike math.Log/math.Cos based methods.
func (r *rnd) normal() float64 {
	s := 0.0
	for range 12 {
		s += r.float()
	}
	return s - 6
}

// pick returns a random element of xs.
func pick[T any](r *rnd, xs []T) T { return xs[r.intn(len(xs))] }

// shuffle permutes xs in place (Fisher–Yates).
func shuffle[T any](r *rnd, xs []T) {
	for i := len(xs) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// perm returns a random permutation of 0..n-1.
func (r *rnd) perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	shuffle(r, p)
	return p
}

// uuidNamespaceURL is RFC 4122's NameSpace_URL.
var uuidNamespaceURL = [16]byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

// crowdNamespace is the name space for every CrowdRAG-25 v3 UUID we mint:
// uuid3(NAMESPACE_URL, "https://github.com/agora-etl/agora/crowdrag25").
var crowdNamespace = uuid3Bytes(uuidNamespaceURL, "https://github.com/agora-etl/agora/crowdrag25")

// uuid3Bytes computes an RFC 4122 version 3 (MD5, name-based) UUID.
func uuid3Bytes(ns [16]byte, name string) [16]byte {
	h := md5.New()
	h.Write(ns[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x30
	u[8] = u[8]&0x3f | 0x80
	return u
}

// uuid3 is uuid3Bytes formatted canonically.
func uuid3(ns [16]byte, name string) string { return formatUUID(uuid3Bytes(ns, name)) }

// uuid4 draws a random (version 4) UUID from r.
func uuid4(r *rnd) string {
	var u [16]byte
	a, b := r.uint64(), r.uint64()
	for i := range 8 {
		u[i] = byte(a >> (56 - 8*i))
		u[8+i] = byte(b >> (56 - 8*i))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u)
}

func formatUUID(u [16]byte) string {
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], u[10:])
	return string(buf[:])
}
