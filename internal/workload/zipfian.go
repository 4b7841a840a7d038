package workload

import "math"

// zipfian draws ranks 0..items-1 with P(rank k) close to
// (k+1)^-theta / zeta(items, theta), by the method of Gray et al., "Quickly
// generating billion-record synthetic databases" (SIGMOD 1994), which YCSB
// uses (seed-digest §1). With u uniform in [0, 1):
//
//	u*zeta(items) < 1             -> rank 0
//	u*zeta(items) < 1 + 0.5^theta -> rank 1
//	otherwise                     -> floor(items * (eta*u - eta + 1)^alpha)
//
//	alpha = 1/(1-theta)
//	eta   = (1 - (2/items)^(1-theta)) / (1 - zeta(2)/zeta(items))
//
// Ranks 0 and 1 get exactly their Zipf probabilities. Beyond them the method
// replaces the Zipf CDF by one linear in k^(1-theta):
//
//	P(rank < k) = 1 - (1 - (k/items)^(1-theta)) / eta,   2 <= k <= items,
//
// which matches at k = 2 and k = items but not in between: for theta = 0.99 it
// over-weights rank 2 by 15-19% and the far tail is 2-5% light, a total
// variation distance of 1.2-1.7% from the exact Zipf law for 10^2..10^5 items.
// That is YCSB's distribution, kept as is so that results stay comparable;
// zipfian_test.go checks the draws against both laws.
//
// A zipfian is a small value; a draw beyond rank 1 costs one logPos and one
// expNeg (fastmath.go).
type zipfian struct {
	items uint64
	n     float64 // items as a float64
	theta float64
	alpha float64 // 1/(1-theta)
	zeta2 float64 // zeta(2, theta) = 1 + 0.5^theta
	zetan float64 // zeta(items, theta)
	eta   float64
}

// newZipfian returns a zipfian over items >= 1 ranks with normaliser zetan
// (normally zeta(items, theta) from a zetaTable; see ycsbZeta10G).
func newZipfian(items uint64, theta, zetan float64) zipfian {
	z := zipfian{theta: theta, alpha: 1 / (1 - theta), zeta2: 1 + math.Pow(0.5, theta)}
	z.resize(items, zetan)
	return z
}

// resize re-targets z to items ranks with normaliser zetan = zeta(items, theta).
func (z *zipfian) resize(items uint64, zetan float64) {
	z.items, z.n, z.zetan = items, float64(items), zetan
	// For items <= 2 eta is 0/0 or meaningless, but rank never reaches the
	// formula: u*zetan < zetan <= zeta2.
	z.eta = (1 - math.Pow(2/z.n, 1-z.theta)) / (1 - z.zeta2/zetan)
}

// rank maps u in [0, 1) to a rank in [0, items).
func (z *zipfian) rank(u float64) uint64 {
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.zeta2 {
		return 1
	}
	// (eta*u - eta + 1)^alpha, where the base lies in (0, 1]
	// ((2/items)^(1-theta) at the smallest u that gets here).
	f := z.n * expNeg(z.alpha*logPos(z.eta*u-z.eta+1))
	if !(f < z.n) { // rounding at u -> 1, or NaN for items <= 2
		return z.items - 1
	}
	return uint64(f)
}

// scrambledZipfian is YCSB's scrambled zipfian (seed-digest §1): a rank is
// drawn from a zipfian over scrambledItems = 10^10 ranks and hashed onto the
// n keys,
//
//	key = ycsbHash(rank) mod n,
//
// so the popular keys are scattered over the key space instead of clustered
// at its start, while their popularity stays Zipf-like: the most popular key
// is ycsbHash(0) mod n with probability about 1/zeta(10^10, theta) (1/26.469
// for theta = 0.99) plus whatever other ranks hash onto it.
type scrambledZipfian struct {
	z   zipfian
	mod modulus
}

func newScrambledZipfian(n uint64, t *zetaTable) scrambledZipfian {
	zetan := ycsbZeta10G
	if t.theta != 0.99 {
		zetan = t.zeta(scrambledItems)
	}
	return scrambledZipfian{z: newZipfian(scrambledItems, t.theta, zetan), mod: newModulus(n)}
}

func (s *scrambledZipfian) next(r *rng) uint64 {
	return s.mod.reduce(ycsbHash(s.z.rank(r.float())))
}
