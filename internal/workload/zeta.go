package workload

import "math"

// ycsbZeta10G is YCSB's precomputed zeta(10^10, 0.99), the normaliser of its
// scrambled zipfian generator. It is used verbatim for theta = 0.99 so that the
// key distribution matches YCSB's; zeta_test.go checks it against zetaTable.
const ycsbZeta10G = 26.46902820178302

// scrambledItems is the item count of the scrambled zipfian's underlying
// zipfian (YCSB's 10^10): ranks are drawn over it and then hashed onto the key
// range (seed-digest §1).
const scrambledItems = 10_000_000_000

// zetaHead is how many leading terms of zeta are summed exactly; beyond it the
// Euler–Maclaurin tail below is accurate to far below float64 rounding.
const zetaHead = 256

// zetaTable evaluates the generalised harmonic number
//
//	zeta(n, theta) = sum_{i=1..n} i^-theta
//
// for one theta and any n in O(1) after an O(zetaHead) set-up: n <= zetaHead is
// a lookup in exact prefix sums; larger n adds to prefix[zetaHead] the
// Euler–Maclaurin formula for sum_{i=a..n} f(i), f(x) = x^-theta, a = zetaHead+1:
//
//	integral_a^n f + (f(a)+f(n))/2 + sum_{k=1..3} B_2k/(2k)! (f^(2k-1)(n) - f^(2k-1)(a))
//
// with B2 = 1/6, B4 = -1/30, B6 = 1/42 and
// f^(2k-1)(x) = -theta(theta+1)...(theta+2k-2) x^(-theta-2k+1). The first
// omitted term is below B8/8! * 7! * a^-8 < 1e-22, so the result is as good as
// an exact sum (better, in fact, than summing 10^10 terms in float64). This is
// what keeps New fast for huge record counts and lets "latest" re-normalise
// its zipfian in O(1) as the key space grows (seed-digest §1).
//
// A zetaTable is immutable after newZetaTable and shared between forks.
type zetaTable struct {
	theta  float64
	prefix []float64 // prefix[k] = zeta(k, theta), k = 0..zetaHead
}

func newZetaTable(theta float64) *zetaTable {
	t := &zetaTable{theta: theta, prefix: make([]float64, zetaHead+1)}
	for i := 1; i <= zetaHead; i++ {
		t.prefix[i] = t.prefix[i-1] + math.Pow(float64(i), -theta)
	}
	return t
}

// zeta returns zeta(n, theta).
func (t *zetaTable) zeta(n uint64) float64 {
	if n <= zetaHead {
		return t.prefix[n]
	}
	return t.prefix[zetaHead] + eulerMaclaurin(zetaHead+1, float64(n), t.theta)
}

// eulerMaclaurin approximates sum_{i=a..b} i^-theta for 0 < theta < 1 and
// 1 <= a <= b (see zetaTable).
func eulerMaclaurin(a, b, theta float64) float64 {
	s := 1 - theta
	// integral_a^b x^-theta dx = (b^s - a^s)/s, written with Expm1 so that it
	// keeps its precision when theta is close to 1.
	integral := math.Pow(a, s) * math.Expm1(s*math.Log(b/a)) / s
	fa, fb := math.Pow(a, -theta), math.Pow(b, -theta)
	sum := integral + (fa+fb)/2
	// f^(k)(x) = c_k x^(-theta-k) = c_k f(x)/x^k for k = 1, 3, 5.
	c1 := -theta
	c3 := c1 * (theta + 1) * (theta + 2)
	c5 := c3 * (theta + 3) * (theta + 4)
	sum += 1.0 / 12 * c1 * (fb/b - fa/a)
	sum += -1.0 / 720 * c3 * (fb/(b*b*b) - fa/(a*a*a))
	sum += 1.0 / 30240 * c5 * (fb/(b*b*b*b*b) - fa/(a*a*a*a*a))
	return sum
}
