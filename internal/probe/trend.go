package probe

import (
	"fmt"
	"math"
	"sort"
)

// Trend is Headroom's unstable-queue rule applied to one window (seed 004
// does not have it; docs/probe.md "An unstable queue"). A server offered
// more than it can serve builds a queue that grows for as long as the
// rate is held, so its latency rises from the window's first second to its
// last. A short window can end before that rise takes its percentile over
// the SLA, and the seed would accept a rate the server cannot sustain.
//
// The rule tests the window's per-second medians for a monotone upward
// trend with the Mann-Kendall statistic S = sum over i<j of
// sign(x_j - x_i), whose null distribution (the seconds exchangeable, as in
// a stationary queue) is that of n(n-1)/2 - 2 x the inversions of a random
// permutation; its one-sided p-value is computed exactly for small n. The
// size of the rise is Sen's slope (the median of the pairwise slopes
// (x_j - x_i)/(j - i)) times the window's span. A window is unstable when
// both hold:
//
//   - p <= Config.UnstableP (0.001). Near capacity a stable queue's
//     seconds are not exchangeable: each window starts from an empty
//     queue and fills it, and at utilisation 0.9-0.97 that warm-up can
//     take most of a 10 s window. On a simulated single-server queue
//     (queueServer, 200 windows per point; TestUnstableRuleOnSimulatedQueue
//     checks the 0.001 figures) a level of 0.01 flagged 3% of
//     windows at utilisation 0.9 and 7-14% at 0.95-0.97; 0.001 flags at
//     most 2% up to 0.95, and still 75-100% of windows 1-2% over capacity
//     on a server of 5000 req/s. A window needs enough seconds with a
//     median for a strictly rising sequence to reach the level: 1/n! <=
//     p, so 7 seconds at 0.001 (minTrendSeconds).
//   - rise >= Config.Margin: the median rose across the window by at
//     least what the pass rule already counts as a material rise over the
//     unloaded latency. A stable queue far from capacity drifts by far
//     less; its warm-up from an empty queue (each window starts after the
//     previous one drained) rises by the queue's mean wait, which stays
//     under the margin until close to capacity.
type Trend struct {
	// Seconds is how many seconds had a median (the series tested).
	Seconds int
	// Judged is false when the window was too short to judge (fewer than
	// minTrendSeconds seconds with a median) or the rule is off.
	Judged bool
	// Needed is the fewest seconds the rule could judge (minTrendSeconds).
	Needed int
	// S is the Mann-Kendall statistic; P its one-sided p-value for an
	// upward trend (NaN when not judged).
	S int
	P float64
	// Slope is Sen's slope of the per-second medians in ms per second;
	// Rise is Slope x (last second - first second), in ms.
	Slope, Rise float64
	// Unstable is the verdict: a significant, material upward trend.
	Unstable bool
}

// minTrendSeconds is the shortest series whose strictly rising order can
// reach significance level alpha: the smallest n with 1/n! <= alpha.
func minTrendSeconds(alpha float64) int {
	n, perms := 1, 1.0
	for 1/perms > alpha && n < 1000 {
		n++
		perms *= float64(n)
	}
	return n
}

// exactTrendLimit is the longest series whose p-value is computed
// exactly; longer ones use the normal approximation, which is close by
// then (Kendall 1975).
const exactTrendLimit = 40

// String says what the trend is, for a window's note.
func (t Trend) String() string {
	if !t.Judged {
		return fmt.Sprintf("too short to judge a trend (%d seconds with a median; %d needed)", t.Seconds, t.Needed)
	}
	return fmt.Sprintf("the median rose %.1f ms/s over %d seconds (%.1f ms in all; Mann-Kendall p = %.2g)", t.Slope, t.Seconds, t.Rise, t.P)
}

// judgeTrend applies the unstable-queue rule to a window's seconds. alpha
// is Config.UnstableP (0 = off, Judged false); minRise is the margin, ms.
func judgeTrend(secs []Second, alpha, minRise float64) Trend {
	var xs, ys []float64
	for _, s := range secs {
		if !math.IsNaN(s.P50) {
			xs = append(xs, float64(s.Index))
			ys = append(ys, s.P50)
		}
	}
	t := Trend{Seconds: len(ys), P: math.NaN(), Slope: math.NaN(), Rise: math.NaN()}
	if alpha <= 0 {
		return t
	}
	if t.Needed = minTrendSeconds(alpha); len(ys) < t.Needed {
		return t
	}
	t.Judged = true
	t.S = mannKendallS(ys)
	t.P = mannKendallP(t.S, len(ys))
	t.Slope = senSlope(xs, ys)
	t.Rise = t.Slope * (xs[len(xs)-1] - xs[0])
	t.Unstable = t.P <= alpha && t.Rise >= minRise
	return t
}

// mannKendallS is sum over i<j of sign(y_j - y_i); ties count 0.
func mannKendallS(ys []float64) int {
	s := 0
	for i := range ys {
		for j := i + 1; j < len(ys); j++ {
			switch {
			case ys[j] > ys[i]:
				s++
			case ys[j] < ys[i]:
				s--
			}
		}
	}
	return s
}

// mannKendallP is P(S' >= s) for the S' of n exchangeable values without
// ties, the one-sided p-value of an upward trend. Ties (which shrink S
// towards 0) make it conservative. Exact up to exactTrendLimit values:
// S' = N - 2D with N = n(n-1)/2 and D the inversions of a uniformly random
// permutation, so P(S' >= s) = P(D <= (N - s)/2), and the distribution of D
// follows from D_n = D_{n-1} + U with U uniform on 0..n-1 (the new
// element's inversions). Beyond that, the normal approximation with
// Var S = n(n-1)(2n+5)/18 and a continuity correction.
func mannKendallP(s, n int) float64 {
	if n < 2 {
		return 1
	}
	N := n * (n - 1) / 2
	if n > exactTrendLimit {
		v := float64(n*(n-1)*(2*n+5)) / 18
		z := (float64(s) - 1) / math.Sqrt(v)
		return 0.5 * math.Erfc(z/math.Sqrt2)
	}
	if s > N {
		return 0
	}
	// dist[k] = P(D = k) for the permutations of m elements, built up to n.
	dist := []float64{1}
	for m := 2; m <= n; m++ {
		next := make([]float64, len(dist)+m-1)
		for k, p := range dist {
			for u := 0; u < m; u++ {
				next[k+u] += p / float64(m)
			}
		}
		dist = next
	}
	maxD := (N - s) / 2 // S' >= s  <=>  D <= floor((N - s)/2)
	p := 0.0
	for k := 0; k <= maxD && k < len(dist); k++ {
		p += dist[k]
	}
	return math.Min(p, 1)
}

// senSlope is the median of the pairwise slopes (y_j - y_i)/(x_j - x_i).
func senSlope(xs, ys []float64) float64 {
	var slopes []float64
	for i := range ys {
		for j := i + 1; j < len(ys); j++ {
			if dx := xs[j] - xs[i]; dx != 0 {
				slopes = append(slopes, (ys[j]-ys[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return math.NaN()
	}
	sort.Float64s(slopes)
	n := len(slopes)
	if n%2 == 1 {
		return slopes[n/2]
	}
	return (slopes[n/2-1] + slopes[n/2]) / 2
}
