package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The figures of one comparison against SciPy 1.x on the same values
// (scipy.stats.ttest_ind(b, a, equal_var=False), its
// confidence_interval(0.95), and t.ppf for the detectable difference):
// t 3.7947, p 0.0061900, df 7.3394, interval of the difference
// [0.91839, 3.88161] over A's mean 10.4.
func TestJudgeAgreesWithSciPy(t *testing.T) {
	a := []float64{10, 11, 12, 9, 10}
	b := []float64{12, 13, 12, 14, 13}
	r := Judge(a, b, false, 0.95)
	if r.Verdict != Worse {
		t.Errorf("verdict %q, want worse (a latency 23%% higher)", r.Verdict)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"change", r.Change, 0.23076923076923078},
		{"lo", r.Lo, 0.08830656626028441},
		{"hi", r.Hi, 0.3732318952781772},
		{"p", r.P, 0.006189963141638819},
		{"detectable", r.Detectable, 0.19679158837183863},
	} {
		if !near(c.got, c.want, 1e-6) {
			t.Errorf("%s = %.9f, want %.9f", c.name, c.got, c.want)
		}
	}
	if r := Judge(a, b, true, 0.95); r.Verdict != Better {
		t.Errorf("throughput 23%% higher: %q, want better", r.Verdict)
	}
}

func TestJudgeEdges(t *testing.T) {
	cases := []struct {
		name string
		a, b []float64
		want Verdict
	}{
		{"one repetition", []float64{1}, []float64{2, 3}, Untested},
		{"a run without a value", []float64{1, math.NaN()}, []float64{2, 3}, Untested},
		{"baseline of zero", []float64{0, 0}, []float64{1, 1}, Untested},
		{"identical and constant", []float64{5, 5, 5}, []float64{5, 5, 5}, Same},
		{"constant, different", []float64{5, 5, 5}, []float64{6, 6, 6}, Worse},
		{"overlapping", []float64{10, 12, 11}, []float64{11, 10, 12}, Same},
	}
	for _, c := range cases {
		r := Judge(c.a, c.b, false, 0.95)
		if r.Verdict != c.want {
			t.Errorf("%s: %q (%s), want %q", c.name, r.Verdict, r.Why, c.want)
		}
		if r.Verdict == Untested && r.Why == "" {
			t.Errorf("%s: untested without a reason", c.name)
		}
	}
}

// normalRuns draws n per-run values around mean with a coefficient of
// variation cv, as repetitions of one level spread.
func normalRuns(rng *rand.Rand, n int, mean, cv float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mean * (1 + cv*rng.NormFloat64())
	}
	return out
}

// Twenty seeded pairs of five repetitions from one distribution: at most
// one false difference at the 95% level (the expected number is one);
// and over 4,000 pairs the rate of false differences is the stated 5%
// within its sampling error (Welch's test is slightly conservative).
func TestFalseDifferencesAtTheStatedRate(t *testing.T) {
	false20 := 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		r := Judge(normalRuns(rng, 5, 1500, 0.04), normalRuns(rng, 5, 1500, 0.04), false, 0.95)
		if r.Verdict != Same {
			false20++
		}
	}
	if false20 > 1 {
		t.Errorf("%d of 20 seeded pairs from one distribution judged different, want at most 1", false20)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4000
	found := 0
	for range n {
		if Judge(normalRuns(rng, 5, 1500, 0.04), normalRuns(rng, 5, 1500, 0.04), false, 0.95).Verdict != Same {
			found++
		}
	}
	rate := float64(found) / n
	if limit := 0.05 + 2*math.Sqrt(0.05*0.95/n); rate > limit {
		t.Errorf("false-difference rate %.4f over %d pairs, want at most 5%% (%.4f with its sampling error)", rate, n, limit)
	}
	t.Logf("false differences: %d of 20 seeded pairs, %.2f%% of %d", false20, 100*rate, n)
}

// A 10% higher latency, with repetitions that spread by 2% (as a null
// target's p99 does), is found in nearly every pair, with an interval
// that holds the true change; Detectable says what could be found.
func TestTenPercentIsDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200
	found, covered := 0, 0
	for range n {
		r := Judge(normalRuns(rng, 5, 1000, 0.02), normalRuns(rng, 5, 1100, 0.02), false, 0.95)
		if r.Verdict == Worse {
			found++
		}
		if r.Lo <= 0.1 && 0.1 <= r.Hi {
			covered++
		}
		if !(r.Detectable > 0 && r.Detectable < 0.1) {
			t.Fatalf("detectable %.3f: a 10%% change should be within reach of 5 repetitions spread by 2%%", r.Detectable)
		}
	}
	if found < n*95/100 {
		t.Errorf("a 10%% regression found in %d of %d pairs, want at least 95%%", found, n)
	}
	// The interval treats A's mean as fixed, so it covers somewhat less
	// than its 95% (docs/compare.md); it must not be far off.
	if covered < n*85/100 {
		t.Errorf("the interval held the true change in %d of %d pairs", covered, n)
	}
}
