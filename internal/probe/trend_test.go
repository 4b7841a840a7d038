package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// Exact Mann-Kendall tail probabilities, counted by hand from the
// permutations: of the 24 orders of 4 values, 1 has S = 6, 3 have S = 4
// (one adjacent swap) and 5 have S = 2 (two inversions); of the 120 orders
// of 5, 1 has S = 10 and 71 have S >= 0 (at most 5 inversions: the
// Mahonian numbers of 5 are 1 4 9 15 20 22 20 15 9 4 1).
func TestMannKendallExactP(t *testing.T) {
	cases := []struct {
		s, n int
		want float64
	}{
		{6, 4, 1.0 / 24},
		{4, 4, 4.0 / 24},
		{2, 4, 9.0 / 24},
		{10, 5, 1.0 / 120},
		{0, 5, 71.0 / 120},
		{45, 10, 1 / 3628800.0},
		{-10, 5, 1},
		{12, 5, 0},
	}
	for _, c := range cases {
		if got := mannKendallP(c.s, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("P(S >= %d | n=%d) = %v, want %v", c.s, c.n, got, c.want)
		}
	}
	// Beyond the exact range the normal approximation takes over; at the
	// boundary the two agree to within a few thousandths.
	n := exactTrendLimit
	v := float64(n*(n-1)*(2*n+5)) / 18
	s := int(2 * math.Sqrt(v)) // about two standard deviations
	if s%2 != (n*(n-1)/2)%2 {
		s++
	}
	exact := mannKendallP(s, n)
	approx := 0.5 * math.Erfc((float64(s)-1)/math.Sqrt(v)/math.Sqrt2)
	if math.Abs(exact-approx) > 0.003 || exact < 0.01 || exact > 0.04 {
		t.Errorf("n=%d S=%d: exact %v, normal %v", n, s, exact, approx)
	}
	if got := mannKendallP(s, n+1); math.IsNaN(got) || got <= 0 || got >= 1 {
		t.Errorf("normal approximation %v", got)
	}
}

// The smallest series whose strictly rising order reaches each level.
func TestMinTrendSeconds(t *testing.T) {
	for alpha, want := range map[float64]int{0.01: 5, 0.001: 7, 0.05: 4, 1.0 / 5040: 7, 0.0001: 8} {
		if got := minTrendSeconds(alpha); got != want {
			t.Errorf("alpha %v: %d seconds, want %d", alpha, got, want)
		}
	}
}

func TestSenSlope(t *testing.T) {
	// Pairwise slopes of (0,1) (1,3) (2,2) (4,10): 2, 0.5, 2.25, -1, 3.5, 4;
	// the median of the six is (2 + 2.25)/2.
	if got := senSlope([]float64{0, 1, 2, 4}, []float64{1, 3, 2, 10}); got != 2.125 {
		t.Fatalf("Sen's slope %v", got)
	}
	// One wild second does not move it: a line of slope 3 with an outlier.
	if got := senSlope([]float64{0, 1, 2, 3, 4, 5, 6}, []float64{0, 3, 6, 900, 12, 15, 18}); got != 3 {
		t.Fatalf("Sen's slope with an outlier %v", got)
	}
}

// secondsOf makes a window's seconds from per-second medians (ms); NaN is
// a second with no successful request.
func secondsOf(medians ...float64) []Second {
	out := make([]Second, len(medians))
	for i, m := range medians {
		out[i] = Second{Index: i, P50: m}
	}
	return out
}

// The unstable-queue rule on synthetic windows whose answer is known:
// a queue growing 10 ms/s through 10 seconds is unstable; the same with
// noise of +-3 ms is still; a flat window with noise is not; a warm-up
// that rises 6 ms and levels off is not (under the 10 ms margin); a rise
// of 5 ms over 10 s is significant but not material; 6 seconds cannot
// reach p <= 0.001; the rule off judges nothing.
func TestUnstableQueueRule(t *testing.T) {
	const alpha, margin = 0.001, 10.0
	rng := rand.New(rand.NewPCG(4, 2))
	noisy := func(f func(i int) float64, amp float64) []Second {
		m := make([]float64, 10)
		for i := range m {
			m[i] = f(i) + amp*(2*rng.Float64()-1)
		}
		return secondsOf(m...)
	}
	growing := func(i int) float64 { return 12 + 10*float64(i) }
	flat := func(int) float64 { return 12 }
	warmUp := func(i int) float64 { return 12 + 6*(1-math.Exp(-float64(i)/1.5)) }
	slow := func(i int) float64 { return 12 + 0.55*float64(i) }

	tr := judgeTrend(noisy(growing, 0), alpha, margin)
	if !tr.Judged || !tr.Unstable || tr.S != 45 || math.Abs(tr.P-1/3628800.0) > 1e-15 || tr.Slope != 10 || tr.Rise != 90 {
		t.Fatalf("a queue growing 10 ms/s: %+v", tr)
	}
	if tr := judgeTrend(noisy(growing, 3), alpha, margin); !tr.Unstable || math.Abs(tr.Slope-10) > 1.5 {
		t.Fatalf("a growing queue with noise: %+v", tr)
	}
	for k := 0; k < 50; k++ {
		if tr := judgeTrend(noisy(flat, 3), alpha, margin); tr.Unstable || !tr.Judged {
			t.Fatalf("a flat window was judged unstable: %+v", tr)
		}
	}
	if tr := judgeTrend(noisy(warmUp, 0.2), alpha, margin); tr.Unstable || tr.Rise >= margin {
		t.Fatalf("a warm-up of 6 ms: %+v", tr)
	}
	if tr := judgeTrend(noisy(slow, 0), alpha, margin); tr.Unstable || tr.P > alpha || tr.Rise >= margin {
		t.Fatalf("a rise of 5 ms: %+v", tr)
	}
	short := secondsOf(10, 20, 30, 40, 50, 60)
	if tr := judgeTrend(short, alpha, margin); tr.Judged || tr.Unstable || tr.Needed != 7 || !math.IsNaN(tr.P) {
		t.Fatalf("6 seconds: %+v", tr)
	}
	if tr := judgeTrend(short, 0.01, margin); !tr.Unstable {
		t.Fatalf("6 seconds at 0.01: %+v", tr)
	}
	if tr := judgeTrend(noisy(growing, 0), 0, margin); tr.Judged || tr.Unstable {
		t.Fatalf("the rule off: %+v", tr)
	}
	// Seconds without a median are left out, and the slope counts the
	// seconds between the ones kept.
	gaps := secondsOf(10, math.NaN(), 30, 40, math.NaN(), 60, 70, 80, 90, 100)
	if tr := judgeTrend(gaps, alpha, margin); tr.Seconds != 8 || !tr.Unstable || tr.Slope != 10 || tr.Rise != 90 {
		t.Fatalf("gaps: %+v", tr)
	}
}

// The rule's error rates on the simulated single-server queue with Poisson
// arrivals (queueServer), 200 windows of 10 s per point, the figures
// docs/probe.md quotes: below capacity a stable queue is rarely flagged
// (at most 2% of windows up to utilisation 0.95, although each window
// starts from an empty queue), and on a fast server 2% over capacity
// nearly every window is.
func TestUnstableRuleOnSimulatedQueue(t *testing.T) {
	flagged := func(capacity, rho float64) int {
		n := 0
		for seed := uint64(0); seed < 200; seed++ {
			srv := &queueServer{capacity: capacity, base: 6 * time.Millisecond, seed: seed}
			wr, _ := srv.RunWindow(context.Background(), rho*capacity, 10*time.Second)
			if w := measure(defaultSim(), wr, 100, 5, 5, nil); w.Trend.Unstable {
				n++
			}
		}
		return n
	}
	for _, c := range []float64{150, 500, 5000} {
		for _, rho := range []float64{0.5, 0.9, 0.95} {
			if n := flagged(c, rho); n > 4 {
				t.Errorf("capacity %v at utilisation %v: %d of 200 stable windows flagged", c, rho, n)
			}
		}
	}
	if n := flagged(5000, 1.02); n < 190 {
		t.Errorf("capacity 5000 at 1.02: only %d of 200 growing windows flagged", n)
	}
}
