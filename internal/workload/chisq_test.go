package workload

import (
	"math"
	"testing"
)

// zUpper001 is the standard normal quantile for an upper tail of 0.001.
const zUpper001 = 3.090232306167813

// chiSquareCritical returns the p = 0.001 upper critical value of the
// chi-square distribution with df degrees of freedom by the Wilson–Hilferty
// approximation: (X/df)^(1/3) is close to normal with mean 1 - 2/(9 df) and
// variance 2/(9 df).
func chiSquareCritical(df int) float64 {
	k := float64(df)
	v := 2 / (9 * k)
	c := 1 - v + zUpper001*math.Sqrt(v)
	return k * c * c * c
}

// checkFit runs Pearson's chi-square goodness-of-fit test of observed counts
// against probabilities p (summing to 1) at p-value 0.001. Adjacent cells are
// merged, in order, until each expects at least 5 draws, so a long thin tail
// becomes a few buckets.
func checkFit(t *testing.T, what string, observed []int64, p []float64) {
	t.Helper()
	if len(observed) != len(p) {
		t.Fatalf("%s: %d observed cells, %d probabilities", what, len(observed), len(p))
	}
	var n int64
	psum := 0.0
	for i, o := range observed {
		n += o
		psum += p[i]
	}
	if math.Abs(psum-1) > 1e-9 {
		t.Fatalf("%s: probabilities sum to %v, not 1", what, psum)
	}
	var obs, exp []float64
	var o, e float64
	for i := range observed {
		o += float64(observed[i])
		e += float64(n) * p[i]
		if e >= 5 {
			obs, exp = append(obs, o), append(exp, e)
			o, e = 0, 0
		}
	}
	if e > 0 || o > 0 { // fold a thin remainder into the last cell
		if len(obs) == 0 {
			t.Fatalf("%s: too few draws (%d) for a chi-square test", what, n)
		}
		obs[len(obs)-1] += o
		exp[len(exp)-1] += e
	}
	if len(obs) < 2 {
		t.Fatalf("%s: only %d cell(s) after merging", what, len(obs))
	}
	stat := 0.0
	for i := range obs {
		d := obs[i] - exp[i]
		stat += d * d / exp[i]
	}
	df := len(obs) - 1
	crit := chiSquareCritical(df)
	if stat > crit {
		t.Errorf("%s: chi-square %.1f > critical %.1f (df %d, p=0.001, %d draws)", what, stat, crit, df, n)
	} else {
		t.Logf("%s: chi-square %.1f <= critical %.1f (df %d, %d draws)", what, stat, crit, df, n)
	}
}

// TestChiSquareCritical checks the Wilson–Hilferty values against tabulated
// p = 0.001 critical values: within 1% from 10 degrees of freedom up, 2% for 4 and 3.5%
// (on the lenient side) for 1.
func TestChiSquareCritical(t *testing.T) {
	for _, c := range []struct {
		df        int
		want, tol float64
	}{{1, 10.828, 0.035}, {4, 18.467, 0.02}, {10, 29.588, 0.01}, {99, 148.230, 0.01}, {999, 1148.0, 0.01}} {
		got := chiSquareCritical(c.df)
		if math.Abs(got-c.want)/c.want > c.tol {
			t.Errorf("df %d: got %.3f, want about %.3f", c.df, got, c.want)
		}
	}
}

// zipfPMF returns the exact Zipf law P(rank k) = (k+1)^-theta / zeta(n, theta).
func zipfPMF(n int, theta float64) []float64 {
	p := make([]float64, n)
	z := 0.0
	for k := range p {
		p[k] = math.Pow(float64(k+1), -theta)
		z += p[k]
	}
	for k := range p {
		p[k] /= z
	}
	return p
}

// grayCDF returns P(rank < k) of Gray's method as z implements it (see
// zipfian): 1/zeta(n) and zeta(2)/zeta(n) for k = 1, 2, then
// 1 - (1 - (k/n)^(1-theta))/eta.
func grayCDF(z *zipfian, k uint64) float64 {
	switch {
	case k == 0:
		return 0
	case k == 1:
		return 1 / z.zetan
	case k == 2:
		return z.zeta2 / z.zetan
	case k >= z.items:
		return 1
	}
	return 1 - (1-math.Pow(float64(k)/z.n, 1-z.theta))/z.eta
}

// grayPMF returns P(rank k) of z for k < n (n <= z.items).
func grayPMF(z *zipfian, n int) []float64 {
	p := make([]float64, n)
	for k := range p {
		p[k] = grayCDF(z, uint64(k+1)) - grayCDF(z, uint64(k))
	}
	return p
}
