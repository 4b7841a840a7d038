package ods

import (
	"math"
	"testing"
	"time"
)

func TestDistance(t *testing.T) {
	x := Vector{"a": 3, "b": 10}
	y := Vector{"a": 7, "b": 4, "c": 1}
	// a: 3 ≤ 7 → 16; b: 10 > 4 → α·36; c: missing in x, 0 ≤ 1 → 1.
	for _, tc := range []struct{ alpha, want float64 }{{0, math.Sqrt(17)}, {0.5, math.Sqrt(35)}, {1, math.Sqrt(53)}} {
		q := DefaultQuery()
		q.Alpha = tc.alpha
		if got := q.Distance(x, y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("alpha %v: distance %v, want %v", tc.alpha, got, tc.want)
		}
	}
}

// fill adds n records of one configuration, one per second from t0, with
// throughput around (read, write) (±jitter alternating) and SLA sla.
func fill(s *Store, cfg string, cost float64, n int, t0 time.Time, read, write, jitter, sla float64) {
	for i := 0; i < n; i++ {
		j := jitter
		if i%2 == 1 {
			j = -jitter
		}
		s.Append(Record{Time: t0.Add(time.Duration(i) * time.Second), Config: cfg, Cost: cost,
			Sensitive: sla, Normal: sla, Throughput: Vector{"read": read + j, "write": write - j}})
	}
}

func TestFindGroupingRules(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	y := Vector{"read": 400, "write": 100}
	s := New()
	fill(s, "far-cheap", 0.1, 60, t0, 100, 20, 0, 1)       // far below the forecast: outside 50 req/s
	fill(s, "thin", 0.5, 29, t0, 400, 100, 5, 1)           // support 29 < 30
	fill(s, "slow", 0.8, 40, t0, 400, 100, 5, 0.85)        // mean SLA 85% < 90%
	fill(s, "right", 1.0, 40, t0, 400, 100, 10, 0.95)      // eligible, cheapest eligible
	fill(s, "dear", 2.0, 40, t0, 400, 100, 10, 0.99)       // eligible, dearer
	fill(s, "edge", 0.9, 30, t0, 400-49, 100, 0, 0.95)     // distance 49: inside, support 30 → eligible, cheaper than right
	fill(s, "just-out", 0.05, 30, t0, 400-51, 100, 0, 1.0) // distance 51: outside
	a := s.Find(DefaultQuery(), y)
	if !a.Found || a.Choice.Config != "edge" {
		t.Fatalf("chose %+v, want edge", a.Choice)
	}
	if a.Within != 29+40+40+40+30 {
		t.Errorf("%d records within the radius, want 179", a.Within)
	}
	want := []struct {
		cfg      string
		rejected bool
	}{{"edge", false}, {"right", false}, {"dear", false}, {"thin", true}, {"slow", true}}
	if len(a.Groups) != len(want) {
		t.Fatalf("groups %+v, want %d", a.Groups, len(want))
	}
	for i, w := range want {
		g := a.Groups[i]
		if g.Config != w.cfg || (g.Rejected != "") != w.rejected {
			t.Errorf("group %d: %s rejected %q, want %s rejected=%v", i, g.Config, g.Rejected, w.cfg, w.rejected)
		}
	}
	if g := a.Groups[1]; g.Support != 40 || math.Abs(g.MeanSLA-0.95) > 1e-12 || g.Cost != 1 || !g.Last.Equal(t0.Add(39*time.Second)) {
		t.Errorf("right's group: %+v", g)
	}
}

func TestFindPrefersMostRecentAtEqualCost(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	y := Vector{"read": 200, "write": 50}
	s := New()
	fill(s, "old", 1, 30, t0, 200, 50, 0, 1)
	fill(s, "new", 1, 30, t0.Add(time.Hour), 200, 50, 0, 1)
	if a := s.Find(DefaultQuery(), y); a.Choice.Config != "new" {
		t.Fatalf("chose %s, want the most recently observed, new", a.Choice.Config)
	}
}

func TestFindAlphaAndNoAnswer(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	y := Vector{"read": 200, "write": 50}
	s := New()
	// served far more reads than forecast: distance 0 when alpha is 0.
	fill(s, "big", 3, 30, t0, 600, 50, 0, 1)
	if a := s.Find(DefaultQuery(), y); !a.Found || a.Choice.Config != "big" {
		t.Fatalf("alpha 0: chose %+v, want big", a)
	}
	q := DefaultQuery()
	q.Alpha = 1
	if a := s.Find(q, y); a.Found || a.Within != 0 {
		t.Fatalf("alpha 1: a record 400 req/s over is outside 50 req/s; got %+v", a)
	}
	if a := New().Find(DefaultQuery(), y); a.Found || len(a.Groups) != 0 {
		t.Fatalf("an empty store has no answer; got %+v", a)
	}
}

func TestQueryCheck(t *testing.T) {
	if err := DefaultQuery().Check(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{{Alpha: -1, Radius: 50, MinSupport: 30, MinSLA: .9}, {Radius: 0, MinSupport: 30}, {Radius: 50}, {Radius: 50, MinSupport: 1, MinSLA: 2}} {
		if q.Check() == nil {
			t.Errorf("%+v should be refused", q)
		}
	}
}
