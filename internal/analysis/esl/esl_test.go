package esl

import (
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestDistributionNormalizesMergesAndSorts(t *testing.T) {
	e, err := NewDistribution([]Level{{310, 1}, {290, 1}, {300, 1}, {300, 1}, {500, 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Level{{290, 0.25}, {300, 0.5}, {310, 0.25}}
	if len(e.Levels) != len(want) {
		t.Fatalf("levels = %+v, want %+v", e.Levels, want)
	}
	for i, l := range want {
		if e.Levels[i].Value != l.Value || !near(e.Levels[i].Freq, l.Freq, 1e-15) {
			t.Fatalf("level %d = %+v, want %+v", i, e.Levels[i], l)
		}
	}
	if got := e.Mean(); !near(got, 300, 1e-12) {
		t.Fatalf("mean = %v, want 300", got)
	}
	// Nearest rank: cumulative 0.25, 0.75, 1.
	for _, c := range []struct{ p, want float64 }{{0, 290}, {0.01, 290}, {0.25, 290}, {0.26, 300}, {0.75, 300}, {0.99, 310}, {1, 310}} {
		if got := e.Quantile(c.p); got != c.want {
			t.Fatalf("quantile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if e.Min() != 290 || e.Max() != 310 || e.IsSingle() {
		t.Fatalf("min/max/single = %v %v %v", e.Min(), e.Max(), e.IsSingle())
	}
}

func TestDistributionRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		levels []Level
		want   string
	}{
		{nil, "at least one level"},
		{[]Level{{300, -1}, {200, 2}}, "non-negative"},
		{[]Level{{300, 0}}, "at least one must be positive"},
		{[]Level{{0, 1}}, "positive, finite"},
		{[]Level{{math.NaN(), 1}}, "positive, finite"},
		{[]Level{{300, math.Inf(1)}}, "non-negative, finite"},
	} {
		_, err := NewDistribution(c.levels)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%+v: err = %v, want %q", c.levels, err, c.want)
		}
	}
	if _, err := Single(-3); err == nil {
		t.Fatal("Single(-3) must fail")
	}
	var zero ESL
	if !math.IsNaN(zero.Mean()) || !math.IsNaN(zero.Quantile(0.5)) || !math.IsNaN(zero.Min()) {
		t.Fatal("statistics of an empty ESL must be NaN")
	}
}
