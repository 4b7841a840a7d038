package stats

import "math"

// Welch is Welch's unequal-variances t-test of two samples' means: the
// test the variation verdict (b) uses across the repetitions of two
// instances at one level (seed-digest §2), where the instances' spreads
// differ (a noisy neighbour widens one of them) and Student's pooled test
// would be wrong.
//
//	d    = mean(a) - mean(b)
//	SE   = sqrt(s_a²/n_a + s_b²/n_b)
//	t    = d / SE
//	df   = SE⁴ / ((s_a²/n_a)²/(n_a-1) + (s_b²/n_b)²/(n_b-1))   (Welch–Satterthwaite)
//	p    = 2 · P(T_df > |t|)                                    (two-sided)
type Welch struct {
	Diff float64 // mean(a) - mean(b)
	SE   float64 // standard error of Diff
	T    float64 // Diff / SE
	DF   float64 // Welch–Satterthwaite degrees of freedom
	P    float64 // two-sided p-value of "the means are equal"
}

// WelchTest runs Welch's t-test on a and b. It returns ok = false when it
// is undefined: fewer than two values on a side, or no spread on either
// side (SE = 0: the difference is exact, no test is needed).
func WelchTest(a, b []float64) (w Welch, ok bool) {
	na, nb := float64(len(a)), float64(len(b))
	if len(a) < 2 || len(b) < 2 {
		return Welch{Diff: Mean(a) - Mean(b), SE: math.NaN(), T: math.NaN(), DF: math.NaN(), P: math.NaN()}, false
	}
	va, vb := sq(StdDev(a))/na, sq(StdDev(b))/nb
	w.Diff = Mean(a) - Mean(b)
	w.SE = math.Sqrt(va + vb)
	if !(w.SE > 0) {
		w.T, w.DF, w.P = math.NaN(), math.NaN(), math.NaN()
		return w, false
	}
	w.T = w.Diff / w.SE
	w.DF = sq(va+vb) / (sq(va)/(na-1) + sq(vb)/(nb-1))
	w.P = 2 * tTail(math.Abs(w.T), w.DF)
	return w, true
}

// CI is the two-sided confidence interval of Diff at level (e.g. 0.90):
// Diff ± t_{(1+level)/2, DF} · SE.
func (w Welch) CI(level float64) (lo, hi float64) {
	h := TCritical(level, w.DF) * w.SE
	return w.Diff - h, w.Diff + h
}

func sq(x float64) float64 { return x * x }
