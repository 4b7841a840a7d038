// Package compare judges whether a figure changed between two campaigns
// (a baseline A and a candidate B) at a load level both measured: the
// difference of the repetitions' means, Welch's t-test on it, its
// confidence interval, and the smallest difference the repetitions could
// have detected (docs/compare.md). It is pure: the driver (FromResults)
// reads the per-run figures, the report renders the result.
package compare

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// Verdict is what a comparison of one figure says of B against A.
type Verdict string

const (
	Better Verdict = "better"
	Worse  Verdict = "worse"
	// Same means no detectable difference: the confidence interval of
	// the difference holds 0.
	Same Verdict = "no detectable difference"
	// Untested: the figure cannot be compared (fewer than two repetitions
	// on a side, or a run without a value).
	Untested Verdict = "not tested"
)

// Power is the probability with which a true difference of Detectable is
// found, the usual 80% of a sample-size calculation.
const Power = 0.80

// Result is one figure compared. Changes are relative to A's mean (0.1 is
// B 10% above A); the interval treats A's mean as fixed, while the
// verdict is Welch's test on the difference itself.
type Result struct {
	MeanA, MeanB float64 // the repetitions' means, in the figure's unit
	NA, NB       int     // repetitions
	Change       float64 // (MeanB - MeanA) / MeanA
	Lo, Hi       float64 // confidence interval of Change at the level
	P            float64 // two-sided p-value of "the means are equal"; NaN when no test ran
	// Detectable is the smallest relative difference, either way, that
	// these repetitions find with probability Power at the level:
	// (t_((1+level)/2) + t_Power) x SE / MeanA, with Welch-Satterthwaite's
	// degrees of freedom (docs/compare.md).
	Detectable float64
	Verdict    Verdict
	Why        string // why the figure is Untested
}

// Judge compares a (A's per-run values) with b (B's) at the confidence
// level (e.g. 0.95). higherIsBetter says which way is better (throughput:
// true; a latency: false).
func Judge(a, b []float64, higherIsBetter bool, level float64) Result {
	r := Result{NA: len(a), NB: len(b), Change: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), Detectable: math.NaN(), Verdict: Untested}
	r.MeanA, r.MeanB = stats.Mean(a), stats.Mean(b)
	for _, xs := range [][]float64{a, b} {
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				r.Why = "a run has no value for it (no successful request)"
				return r
			}
		}
	}
	if len(a) < 2 || len(b) < 2 {
		r.Why = fmt.Sprintf("it needs at least two repetitions on each side (%d and %d)", len(a), len(b))
		return r
	}
	if !(r.MeanA > 0) {
		r.Why = "the baseline's mean is 0, so a relative change is undefined"
		return r
	}
	w, ok := stats.WelchTest(b, a)
	r.Change = w.Diff / r.MeanA
	if !ok {
		// No spread on either side: every repetition gave the same value,
		// so the difference is exact.
		r.Lo, r.Hi, r.Detectable = r.Change, r.Change, 0
		r.Verdict = direction(w.Diff, higherIsBetter)
		return r
	}
	lo, hi := w.CI(level)
	r.Lo, r.Hi, r.P = lo/r.MeanA, hi/r.MeanA, w.P
	r.Detectable = (stats.TCritical(level, w.DF) + stats.TQuantile(Power, w.DF)) * w.SE / r.MeanA
	r.Verdict = Same
	if lo > 0 || hi < 0 {
		r.Verdict = direction(w.Diff, higherIsBetter)
	}
	return r
}

func direction(diff float64, higherIsBetter bool) Verdict {
	switch {
	case diff == 0:
		return Same
	case (diff > 0) == higherIsBetter:
		return Better
	}
	return Worse
}
