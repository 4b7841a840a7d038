package stats

import "math"

// Confidence intervals use Student's t distribution because Headroom's
// repetition counts are small (seed 001 uses 20, seed 000 uses 5; a quick
// campaign may use 3), where the normal approximation is too narrow
// (seed-digest §1-2: report the mean and its standard error across
// repetitions; the t interval turns that pair into a statement of
// confidence).

// normalDF is the degrees of freedom above which the t distribution is
// replaced by the normal: the two differ by about z(1+z²)/(4·df), under
// 1e-6 at the quantiles a confidence interval uses.
const normalDF = 1e7

// TQuantile is the p-quantile of Student's t distribution with df degrees
// of freedom: the t with P(T <= t) = p. df may be fractional (Welch) or
// +Inf (the standard normal). It is NaN for p outside (0, 1) or df <= 0.
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	tail := 1 - p // upper-tail probability; solving on the tail keeps precision near p = 1
	if df > normalDF {
		return math.Sqrt2 * math.Erfinv(1-2*tail)
	}
	// The upper tail is strictly decreasing in t: bracket the root by
	// doubling, then bisect. Bisection is slow but cannot diverge, and a
	// report computes a few hundred quantiles at most.
	lo, hi := 0.0, 1.0
	for tTail(hi, df) > tail {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-13*hi; i++ {
		mid := (lo + hi) / 2
		if tTail(mid, df) > tail {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TCritical is the two-sided critical value of a confidence interval at
// the given level (e.g. 0.95): the (1+level)/2 quantile of t with df
// degrees of freedom. NaN for a level outside (0, 1) or df <= 0.
func TCritical(level, df float64) float64 {
	if !(level > 0 && level < 1) {
		return math.NaN()
	}
	return TQuantile(1-(1-level)/2, df)
}

// CI is the mean of xs and the half-width of its two-sided t confidence
// interval at level: mean ± t_{(1+level)/2, n-1} · s/√n. The half-width is
// NaN for fewer than two values (no spread to judge) and the mean NaN for
// none. NaN values propagate; filter them first if they mean "missing".
func CI(xs []float64, level float64) (mean, half float64) {
	e := Summarize(xs)
	return e.Mean, e.HalfWidth(level)
}

// HalfWidth is the half-width of the two-sided t confidence interval of the
// estimate's mean at level, t_{(1+level)/2, N-1} · SE; NaN for N < 2.
func (e Estimate) HalfWidth(level float64) float64 {
	if e.N < 2 {
		return math.NaN()
	}
	return TCritical(level, float64(e.N-1)) * e.SE
}

// tTail is P(T > t) for t >= 0 with df degrees of freedom:
// ½ · I_{df/(df+t²)}(df/2, ½), with I the regularized incomplete beta.
func tTail(t, df float64) float64 {
	return 0.5 * RegIncBeta(df/(df+t*t), df/2, 0.5)
}

// RegIncBeta is the regularized incomplete beta function I_x(a, b) for
// x in [0, 1] and a, b > 0; NaN outside that domain. It evaluates the
// continued fraction
//
//	I_x(a,b) = x^a (1-x)^b / (a·B(a,b)) · 1/(1+ d1/(1+ d2/(1+ ...)))
//	d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1))
//	d_{2m}   =  m(b-m) x / ((a+2m-1)(a+2m))
//
// by the modified Lentz method. The fraction converges quickly for
// x < (a+1)/(a+b+2); above that it uses I_x(a,b) = 1 - I_{1-x}(b,a).
func RegIncBeta(x, a, b float64) float64 {
	switch {
	case !(a > 0) || !(b > 0) || !(x >= 0 && x <= 1):
		return math.NaN()
	case x == 0:
		return 0
	case x == 1:
		return 1
	}
	if x > (a+1)/(a+b+2) {
		return 1 - RegIncBeta(1-x, b, a)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(a*math.Log(x) + b*math.Log1p(-x) - (la + lb - lab))
	return front / a * betaFraction(x, a, b)
}

// betaFraction evaluates 1/G with G = 1 + d1/(1 + d2/(1 + ...)), G by the
// modified Lentz method (b0 = 1, a_m = d_m, b_m = 1).
func betaFraction(x, a, b float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	g, c, d := 1.0, 1.0, 0.0
	for m := 1; m < 10000; m++ {
		var coef float64
		if k := float64(m / 2); m%2 == 1 {
			coef = -(a + k) * (a + b + k) * x / ((a + 2*k) * (a + 2*k + 1))
		} else {
			coef = k * (b - k) * x / ((a + 2*k - 1) * (a + 2*k))
		}
		d = 1 / guard(1+coef*d)
		c = guard(1 + coef/c)
		delta := c * d
		g *= delta
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return 1 / g
}
