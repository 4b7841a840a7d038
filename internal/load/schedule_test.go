package load

import (
	"math"
	"strings"
	"testing"
	"time"
)

// arrivalsBefore reads s until its next arrival is at or after end.
func arrivalsBefore(s Schedule, end time.Duration) []int64 {
	var out []int64
	for {
		t := s.Next()
		if t >= int64(end) {
			return out
		}
		out = append(out, t)
	}
}

// countIn is the number of arrivals in [from, to).
func countIn(ts []int64, from, to time.Duration) int {
	n := 0
	for _, t := range ts {
		if t >= int64(from) && t < int64(to) {
			n++
		}
	}
	return n
}

// Even steps: each step holds rate x duration arrivals, exactly 1/rate
// apart, starting exactly at the step's start; a zero-rate step holds
// none; the last rate holds after the steps end.
func TestStepsEvenSpacingExact(t *testing.T) {
	s := &Steps{Spacing: Even, Steps: []Step{{100, 3 * time.Second}, {0, 2 * time.Second}, {300, 2 * time.Second}}}
	ts := arrivalsBefore(s, 9*time.Second)
	// Expected times written out independently: k/100 s for k < 300, then
	// 5 s + j/300 s for j = 0, 1, ... (the 300/s step, held to 9 s).
	var want []int64
	for k := 0; k < 300; k++ {
		want = append(want, int64(k)*1e9/100)
	}
	for j := 0; j < 4*300; j++ {
		want = append(want, 5e9+int64(float64(j)*1e9/300))
	}
	if len(ts) != len(want) {
		t.Fatalf("%d arrivals before 9 s, want %d", len(ts), len(want))
	}
	for i := range want {
		if ts[i] != want[i] {
			t.Fatalf("arrival %d at %d ns, want %d", i, ts[i], want[i])
		}
	}
	for _, c := range []struct {
		from, to time.Duration
		n        int
	}{{0, 3 * time.Second, 300}, {3 * time.Second, 5 * time.Second, 0}, {5 * time.Second, 7 * time.Second, 600}, {7 * time.Second, 9 * time.Second, 600}} {
		if got := countIn(ts, c.from, c.to); got != c.n {
			t.Errorf("[%v, %v): %d arrivals, want %d", c.from, c.to, got, c.n)
		}
	}
}

// When a step's expected count is not whole, the spacing carries across
// the boundary instead of restarting: 2.5/s for 1 s gives arrivals at 0,
// 0.4 and 0.8 s (Λ(1 s) = 2.5), and the next, the third on the Λ scale,
// falls half a gap of the 10/s step after 1 s: 1 s + 0.5/10 s = 1.05 s.
func TestStepsEvenSpacingAcrossFractionalBoundary(t *testing.T) {
	s := &Steps{Spacing: Even, Steps: []Step{{2.5, time.Second}, {10, time.Second}}}
	want := []int64{0, 400e6, 800e6, 1050e6, 1150e6}
	for i, w := range want {
		if got := s.Next(); got != w {
			t.Fatalf("arrival %d at %d ns, want %d", i, got, w)
		}
	}
}

// Poisson steps: per-step counts are Poisson with mean rate x duration,
// gaps within a step are exponential (coefficient of variation 1), a
// zero-rate step gets nothing, and the same seed gives the same times.
func TestStepsPoissonCounts(t *testing.T) {
	steps := []Step{{1000, 10 * time.Second}, {0, 5 * time.Second}, {3000, 10 * time.Second}}
	s := &Steps{Spacing: Exponential, Seed: 4, Steps: steps}
	ts := arrivalsBefore(s, 25*time.Second)
	for _, c := range []struct {
		from, to time.Duration
		mean     float64
	}{{0, 10 * time.Second, 10000}, {10 * time.Second, 15 * time.Second, 0}, {15 * time.Second, 25 * time.Second, 30000}} {
		got := float64(countIn(ts, c.from, c.to))
		// Four standard deviations of a Poisson count: 4 sqrt(mean).
		if math.Abs(got-c.mean) > 4*math.Sqrt(c.mean) {
			t.Errorf("[%v, %v): %g arrivals, want %g ± %.0f", c.from, c.to, got, c.mean, 4*math.Sqrt(c.mean))
		}
	}
	// Gaps inside the 3000/s step: mean 1/3000 s, standard deviation equal
	// to the mean for an exponential distribution.
	var gaps []float64
	for i := 1; i < len(ts); i++ {
		if ts[i-1] >= int64(15*time.Second) {
			gaps = append(gaps, float64(ts[i]-ts[i-1]))
		}
	}
	mean, sd := meanSD(gaps)
	if math.Abs(mean-1e9/3000)/(1e9/3000) > 0.03 {
		t.Errorf("mean gap %.0f ns in the 3000/s step, want %.0f", mean, 1e9/3000)
	}
	if cv := sd / mean; cv < 0.96 || cv > 1.04 {
		t.Errorf("gap coefficient of variation %.3f, want 1 (exponential)", cv)
	}
	again := arrivalsBefore(&Steps{Spacing: Exponential, Seed: 4, Steps: steps}, 25*time.Second)
	if len(again) != len(ts) || again[len(again)/2] != ts[len(ts)/2] {
		t.Fatal("the same seed gave a different schedule")
	}
	other := arrivalsBefore(&Steps{Spacing: Exponential, Seed: 5, Steps: steps}, 25*time.Second)
	if len(other) > 1 && other[1] == ts[1] {
		t.Fatal("another seed gave the same schedule")
	}
}

func meanSD(xs []float64) (float64, float64) {
	var sum, sq float64
	for _, x := range xs {
		sum += x
	}
	m := sum / float64(len(xs))
	for _, x := range xs {
		sq += (x - m) * (x - m)
	}
	return m, math.Sqrt(sq / float64(len(xs)-1))
}

// One step is the same schedule as Constant or Poisson at that rate.
func TestOneStepMatchesFixedRate(t *testing.T) {
	c, st := &Constant{Rate: 700}, &Steps{Spacing: Even, Steps: []Step{{700, time.Hour}}}
	p, sp := &Poisson{Rate: 700, Seed: 3}, &Steps{Spacing: Exponential, Seed: 3, Steps: []Step{{700, time.Hour}}}
	for i := 0; i < 5000; i++ {
		if a, b := c.Next(), st.Next(); a != b {
			t.Fatalf("constant arrival %d: %d vs one step %d", i, a, b)
		}
		// Both sum the same exponential draws; the step divides each by the
		// rate after summing, so they may differ by rounding only.
		if a, b := p.Next(), sp.Next(); a-b > 1 || b-a > 1 {
			t.Fatalf("poisson arrival %d: %d vs one step %d", i, a, b)
		}
	}
}

// A trace holds each row's rate until the next row, sends nothing before
// its first row, and holds its last row's rate.
func TestTraceEvenSpacing(t *testing.T) {
	tr := &Trace{Name: "t.csv", Spacing: Even, Points: []TracePoint{{time.Second, 100}, {3 * time.Second, 0}, {4 * time.Second, 50}}}
	ts := arrivalsBefore(tr, 6*time.Second)
	if ts[0] != int64(time.Second) || ts[1] != int64(time.Second)+1e7 {
		t.Fatalf("first arrivals at %v, want 1 s and 1.01 s", ts[:2])
	}
	for _, c := range []struct {
		from, to time.Duration
		n        int
	}{{0, time.Second, 0}, {time.Second, 3 * time.Second, 200}, {3 * time.Second, 4 * time.Second, 0}, {4 * time.Second, 6 * time.Second, 100}} {
		if got := countIn(ts, c.from, c.to); got != c.n {
			t.Errorf("[%v, %v): %d arrivals, want %d", c.from, c.to, got, c.n)
		}
	}
	// 500 Poisson arrivals expected over the same trace from 1 s to 6 s.
	pt := &Trace{Spacing: Exponential, Seed: 8, Points: tr.Points}
	pts := arrivalsBefore(pt, 6*time.Second)
	if n := countIn(pts, 3*time.Second, 4*time.Second); n != 0 || pts[0] < int64(time.Second) {
		t.Fatalf("%d poisson arrivals in the pause, first at %d", n, pts[0])
	}
	if n := float64(len(pts)); math.Abs(n-300) > 4*math.Sqrt(300) {
		t.Fatalf("%g poisson arrivals, want 300 ± 70", n)
	}
}

// A schedule whose last stretch has rate 0 says that no arrival follows.
func TestZeroRateEnd(t *testing.T) {
	for _, s := range []Schedule{
		&Steps{Spacing: Even, Steps: []Step{{10, time.Second}, {0, time.Second}}},
		&Steps{Spacing: Exponential, Seed: 1, Steps: []Step{{10, time.Second}, {0, time.Second}}},
		&Trace{Spacing: Even, Points: []TracePoint{{0, 10}, {time.Second, 0}}},
		&Steps{Spacing: Even, Steps: []Step{{0, time.Second}}},
	} {
		n := 0
		for s.Next() < math.MaxInt64 {
			n++
			if n > 100 {
				t.Fatalf("%v: arrivals after the rate fell to 0", s)
			}
		}
		if s.Next() != math.MaxInt64 {
			t.Fatalf("%v: an arrival after the end", s)
		}
	}
}

func TestMeanRate(t *testing.T) {
	s := &Steps{Spacing: Exponential, Steps: []Step{{100, 30 * time.Second}, {300, 30 * time.Second}}}
	tr := &Trace{Spacing: Even, Points: []TracePoint{{10 * time.Second, 100}, {40 * time.Second, 300}}}
	for _, c := range []struct {
		s        Schedule
		from, to time.Duration
		want     float64
	}{
		{s, 0, 60 * time.Second, 200},
		{s, 10 * time.Second, 40 * time.Second, (100*20 + 300*10) / 30.0},
		{s, 60 * time.Second, 120 * time.Second, 300}, // the last step holds
		{s, 45 * time.Second, 45 * time.Second, 300},  // an empty window: the rate there
		{tr, 0, 40 * time.Second, 100 * 30 / 40.0},
		{tr, 0, 70 * time.Second, (100*30 + 300*30) / 70.0},
		{&Poisson{Rate: 42}, 0, time.Second, 42},
		{&Constant{Rate: 7}, 0, time.Second, 7},
	} {
		if got := c.s.MeanRate(c.from, c.to); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("%v over [%v, %v): %v, want %v", c.s, c.from, c.to, got, c.want)
		}
	}
	// The mean does not depend on how far the schedule has been read.
	for i := 0; i < 1000; i++ {
		s.Next()
	}
	if got := s.MeanRate(0, 60*time.Second); got != 200 {
		t.Fatalf("mean after reading %v", got)
	}
}

func TestScheduleStringAndCheck(t *testing.T) {
	s := &Steps{Spacing: Exponential, Steps: []Step{{100, 30 * time.Second}, {300, 90 * time.Second}}}
	if got, want := s.String(), "poisson steps(100/s for 30s, 300/s for 1m30s)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	tr := &Trace{Name: "load.csv", Spacing: Even, Points: []TracePoint{{0, 0}, {30 * time.Second, 250}, {time.Minute, 10}}}
	if got, want := tr.String(), "constant trace(load.csv: 3 rows from 0s to 1m0s, 0 to 250/s)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if s.Check() != nil || tr.Check() != nil {
		t.Fatal("valid schedules refused")
	}
	for _, c := range []struct {
		s    interface{ Check() error }
		want string
	}{
		{&Steps{}, "at least one step"},
		{&Steps{Steps: []Step{{10, time.Second}, {-1, time.Second}}}, "step 2: the rate"},
		{&Steps{Steps: []Step{{math.NaN(), time.Second}}}, "step 1: the rate"},
		{&Steps{Steps: []Step{{10, 0}}}, "step 1: its duration"},
		{&Trace{}, "at least one row"},
		{&Trace{Points: []TracePoint{{0, 1}, {0, 2}}}, "row 2: its time"},
		{&Trace{Points: []TracePoint{{0, math.Inf(1)}}}, "row 1: the rate"},
		{&Poisson{}, "positive number"},
		{&Constant{Rate: math.Inf(1)}, "positive number"},
	} {
		err := c.s.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: Check() = %v, want %q", c.s, err, c.want)
		}
	}
}

// The engine refuses an open loop without a usable schedule, in one
// sentence naming it.
func TestConfigValidateSchedule(t *testing.T) {
	cfg := openConfig(100, 8, time.Second)
	cfg.Schedule = nil
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "arrival schedule") {
		t.Fatalf("no schedule: %v", err)
	}
	cfg.Schedule = &Steps{Spacing: Even, Steps: []Step{{-5, time.Second}}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "constant steps(-5/s for 1s): step 1") {
		t.Fatalf("bad steps: %v", err)
	}
}
