package cost_test

import (
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// Every $/req/s of a report divides by the capacity finding's figure: the
// pressure analysis's throughput of each treatment is the capacity curve's
// MaxThroughput, at the same level (the two-treatment store of
// internal/results/testdata/v1, SLO p95 of reads).
func TestCostsDivideByTheCapacityFigure(t *testing.T) {
	r := resultstest.OpenV1(t, "treatments.db")
	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil || cc.Problem != nil || len(cc.Curves) != 2 {
		t.Fatalf("capacity: %v %v, %d curves", err, cc.Problem, len(cc.Curves))
	}
	caps, err := cost.Capacities(r)
	if err != nil {
		t.Fatal(err)
	}
	a, err := pressure.FromResults(r, pressure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cc.Curves {
		c := tc.Curve
		if c.MaxIndex < 0 {
			t.Fatalf("%s: no capacity (%s)", tc.Treatment.Name, c.NoCapacity)
		}
		want, level := c.MaxThroughput, c.Points[c.MaxIndex].Level.Level
		if got := caps[tc.Treatment.Name]; got.Throughput != want || got.Level != level || got.Why != "" {
			t.Errorf("%s: cost.Capacities %+v, want %v at %v", tc.Treatment.Name, got, want, level)
		}
		found := false
		for _, pt := range a.Treatments {
			if pt.Name == tc.Treatment.Name {
				found = true
				if pt.Throughput != want || pt.Level != level {
					t.Errorf("%s: pressure divides by %v at %v, the capacity finding says %v at %v", pt.Name, pt.Throughput, pt.Level, want, level)
				}
			}
		}
		if !found {
			t.Errorf("%s: not in the pressure assessment", tc.Treatment.Name)
		}
	}
	if _, ok := caps["nonesuch"]; ok {
		t.Error("a treatment that does not exist has a capacity")
	}
}
