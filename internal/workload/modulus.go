package workload

import "math/bits"

// modulus computes x mod n for a fixed n >= 1 without a division instruction
// (which costs tens of cycles), by Barrett reduction: with m = floor(2^64/n),
// q = floor(x*m / 2^64) is floor(x/n) or one less, since
// x/n - x*m/2^64 = x*(2^64/n - m)/2^64 < x/2^64 < 1; so r = x - q*n is in
// [0, 2n) and one conditional subtraction finishes.
type modulus struct {
	n, m uint64
}

func newModulus(n uint64) modulus {
	if n <= 1 {
		return modulus{n: n} // m = 0 makes q = 0 and r = x, reduced below
	}
	m, _ := bits.Div64(1, 0, n) // floor(2^64 / n); 1 < n, so no overflow
	return modulus{n: n, m: m}
}

func (d modulus) reduce(x uint64) uint64 {
	if d.n <= 1 {
		return 0
	}
	q, _ := bits.Mul64(x, d.m)
	r := x - q*d.n
	if r >= d.n {
		r -= d.n
	}
	return r
}
