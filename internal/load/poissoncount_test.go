package load

import (
	"math"
	"testing"
)

// The counts have the Poisson mean and variance (both mu) on both sides of
// the switch between the two methods, and 0 for a mean of 0.
func TestPoissonCountMoments(t *testing.T) {
	r := newArrivalRand(5)
	if n := poissonCount(r, 0); n != 0 {
		t.Fatalf("mean 0 gave %d", n)
	}
	for _, mu := range []float64{0.3, 4, 9.9, 10, 57, 5000, 3e9} {
		const draws = 20000
		var sum, sq float64
		for range draws {
			x := float64(poissonCount(r, mu))
			sum += x
			sq += x * x
		}
		mean := sum / draws
		variance := sq/draws - mean*mean
		// The sample mean's standard error is sqrt(mu/draws); allow 5.
		if math.Abs(mean-mu) > 5*math.Sqrt(mu/draws) {
			t.Errorf("mu %g: mean %g", mu, mean)
		}
		if math.Abs(variance/mu-1) > 0.1 {
			t.Errorf("mu %g: variance %g", mu, variance)
		}
	}
}

// Skipping to t leaves every schedule where drawing its arrivals one by
// one would: the same count for even spacing, and for exponential spacing
// a count whose mean over many seeds is the expected number of arrivals.
func TestSkipMatchesDrawing(t *testing.T) {
	const until = int64(3e9) // 3 s
	even := map[string]func() Schedule{
		"constant": func() Schedule { return &Constant{Rate: 777} },
		"steps":    func() Schedule { return &Steps{Spacing: Even, Steps: []Step{{100, 1e9}, {0, 5e8}, {333, 1e9}}} },
		"trace":    func() Schedule { return &Trace{Spacing: Even, Points: []TracePoint{{2e8, 50}, {1e9, 900}}} },
	}
	for name, mk := range even {
		a, b := mk(), mk()
		a.Next() // one returned already, as in the engine
		b.Next()
		var drawn int64
		want := a.Next()
		for ; want < until; want = a.Next() {
			drawn++
		}
		skipped := b.Skip(until)
		if skipped != drawn {
			t.Errorf("%s: skip counted %d, drawing %d", name, skipped, drawn)
		}
		if got := b.Next(); got < until || math.Abs(float64(got-want)) > 2 {
			t.Errorf("%s: after skipping the next arrival is at %d, drawing gives %d", name, got, want)
		}
	}
	for name, mk := range map[string]func(seed uint64) Schedule{
		"poisson": func(seed uint64) Schedule { return &Poisson{Rate: 400, Seed: seed} },
		"steps": func(seed uint64) Schedule {
			return &Steps{Spacing: Exponential, Seed: seed, Steps: []Step{{100, 1e9}, {0, 5e8}, {700, 1e9}}}
		},
	} {
		var sum float64
		const seeds = 400
		for seed := range uint64(seeds) {
			s := mk(seed)
			s.Next()
			sum += float64(s.Skip(until))
			if next := s.Next(); next < until {
				t.Fatalf("%s: after skipping to %d the next arrival is at %d", name, until, next)
			}
		}
		want := mk(0).MeanRate(0, 3*1e9) * 3
		if mean := sum / seeds; math.Abs(mean-want) > 5*math.Sqrt(want/seeds) {
			t.Errorf("%s: %g arrivals skipped on average, want %g", name, mean, want)
		}
	}
}
