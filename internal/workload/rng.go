package workload

import (
	"math/bits"
	"math/rand/v2"
)

// rng is a generator's pseudo-random source: a PCG-DXSM stream from
// math/rand/v2, held by value so that a draw is a direct, inlinable call that
// allocates nothing. It is not safe for concurrent use; every Generator (and
// every Fork) owns its own.
type rng struct{ pcg rand.PCG }

// newRNG returns the stream selected by key. Keys are derived with mix64, so
// nearby seeds or stream numbers still give unrelated streams.
func newRNG(key uint64) rng {
	var r rng
	r.pcg.Seed(mix64(key), mix64(key^0x6a09e667f3bcc909))
	return r
}

// u64 returns 64 uniformly random bits.
func (r *rng) u64() uint64 { return r.pcg.Uint64() }

// float returns a uniform float64 in [0, 1) with 53 random bits.
func (r *rng) float() float64 { return float64(r.pcg.Uint64()>>11) * 0x1p-53 }

// below returns a uniform integer in [0, n) for n > 0, by Lemire's
// multiply-shift with rejection ("Fast random integer generation in an
// interval", 2019): the high word of x*n is uniform once the few low words
// below 2^64 mod n are rejected, so there is no modulo bias and usually no
// division.
func (r *rng) below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.pcg.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(r.pcg.Uint64(), n)
		}
	}
	return hi
}

// mix64 is the SplitMix64 finaliser (Steele, Lea and Flood 2014), a bijection
// on uint64 that spreads every input bit over the output. It derives stream
// keys from seeds and the per-record keys of Populate.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
