package staleness

import (
	"math"
	"reflect"
	"testing"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/history/historytest"
)

func gridConfig() historytest.Config {
	return historytest.Config{Seed: 7, Keys: 3, Writes: 25, PeriodNS: 10e6, StepNS: 5e5,
		Levels: []string{"ONE", "QUORUM"}, MaxLag: map[string]int{"ONE": 12, "QUORUM": 0},
		WriteLevel: "QUORUM", Replica: map[string]string{"ONE": "db2", "QUORUM": "db1"}}
}

// Every window, the fresh-read curve and the k-staleness distribution
// match the generator's plan, and each window carries the clock
// uncertainty of its write's and its read's replica.
func TestAgainstGeneratedPlan(t *testing.T) {
	cfg := gridConfig()
	clock := map[string]int64{"primary": 40e3, "db1": 10e3, "db2": 250e3}
	plan := historytest.Generate(cfg, clock)
	edges := make([]int64, cfg.PeriodNS/cfg.StepNS)
	for j := range edges {
		edges[j] = int64(j) * cfg.StepNS
	}
	res := Analyze(plan.Ops, Options{Edges: edges, Clock: Clock{ByReplica: clock}})
	if len(res.Levels) != 2 {
		t.Fatalf("%d groups, want 2: %+v", len(res.Levels), res.Levels)
	}
	for _, l := range res.Levels {
		if l.WriteLevel != "QUORUM" {
			t.Errorf("group %+v: write level should be QUORUM", l.Group)
		}
		rl := l.ReadLevel
		want := plan.Visibility[rl]
		if len(l.Windows) != len(want) {
			t.Fatalf("%s: %d windows, want %d", rl, len(l.Windows), len(want))
		}
		for _, w := range l.Windows {
			id := historytest.WriteID{Key: w.Key, Version: w.Version}
			if w.VisibilityNS != want[id] || !w.Resolved || w.UncertaintyNS != plan.Uncertainty[rl] {
				t.Errorf("%s %v: visibility %d resolved %v ± %d, want %d resolved ± %d",
					rl, id, w.VisibilityNS, w.Resolved, w.UncertaintyNS, want[id], plan.Uncertainty[rl])
			}
		}
		if l.UncertaintyNS != plan.Uncertainty[rl] {
			t.Errorf("%s: group uncertainty %d, want %d", rl, l.UncertaintyNS, plan.Uncertainty[rl])
		}
		for j, b := range l.Curve {
			if b.Reads != plan.CurveReads[rl][j] || b.Fresh != plan.CurveFresh[rl][j] {
				t.Errorf("%s bin %d (%d..%d ns): %d of %d fresh, want %d of %d", rl, j, b.FromNS, b.ToNS, b.Fresh, b.Reads, plan.CurveFresh[rl][j], plan.CurveReads[rl][j])
			}
		}
		got := map[int64]int{}
		for _, k := range l.KStale {
			got[k.K] = k.Reads
		}
		if !reflect.DeepEqual(got, plan.KStale[rl]) {
			t.Errorf("%s: k-staleness %v, want %v", rl, got, plan.KStale[rl])
		}
	}
	// The plan's ONE lags run to 12 steps (6 ms); QUORUM's are 0.
	one, quorum := res.Levels[0], res.Levels[1]
	if p100, _ := quorum.Quantile(1); p100 != 0 || quorum.ShareWithin(0) != 1 {
		t.Errorf("QUORUM: max visibility %d, share within 0 %v; want 0 and 1", p100, quorum.ShareWithin(0))
	}
	var maxLag int
	for _, m := range plan.Lag["ONE"] {
		maxLag = max(maxLag, m)
	}
	if p100, _ := one.Quantile(1); p100 != int64(maxLag)*cfg.StepNS {
		t.Errorf("ONE: max visibility %d, want %d", p100, int64(maxLag)*cfg.StepNS)
	}
}

func w(p int, key string, v, inv, done int64, outcome string) history.Op {
	return history.Op{Process: p, Kind: history.Write, Key: key, Value: v, InvokeNS: inv, CompleteNS: done, Outcome: outcome}
}

func r(p int, key string, v, inv, done int64, outcome string) history.Op {
	return history.Op{Process: p, Kind: history.Read, Key: key, Value: v, InvokeNS: inv, CompleteNS: done, Outcome: outcome}
}

// The edge cases of the definitions, one history each.
func TestEdgeCases(t *testing.T) {
	ok, fail, info := history.OK, history.Fail, history.Info
	for _, c := range []struct {
		name string
		ops  []history.Op
		want []Window // of the one group
	}{
		{"a read overlapping the write does not count",
			[]history.Op{w(0, "a", 1, 100, 200, ok), r(1, "a", 0, 150, 250, ok), r(1, "a", 1, 260, 270, ok)},
			[]Window{{Key: "a", Version: 1, WrittenNS: 200, VisibilityNS: 0, Resolved: true}}},
		{"a read invoked exactly at the completion counts",
			[]history.Op{w(0, "a", 1, 100, 200, ok), r(1, "a", 0, 200, 250, ok), r(1, "a", 1, 260, 270, ok)},
			[]Window{{Key: "a", Version: 1, WrittenNS: 200, VisibilityNS: 0, Resolved: true}}},
		{"the last stale read ends the window, fresh reads between do not",
			[]history.Op{w(0, "a", 1, 100, 200, ok), r(1, "a", 1, 210, 220, ok), r(2, "a", 0, 300, 310, ok), r(1, "a", 1, 400, 410, ok)},
			[]Window{{Key: "a", Version: 1, WrittenNS: 200, VisibilityNS: 100, Resolved: true}}},
		{"failed and unknown reads observe nothing",
			[]history.Op{w(0, "a", 1, 100, 200, ok), r(1, "a", 0, 300, 310, fail), r(1, "a", 0, 400, 410, info), r(1, "a", 1, 500, 510, ok)},
			[]Window{{Key: "a", Version: 1, WrittenNS: 200, VisibilityNS: 0, Resolved: true}}},
		{"not found is older than every version",
			[]history.Op{w(0, "a", 1, 100, 200, ok), r(1, "a", history.NoValue, 250, 260, ok), r(1, "a", 1, 300, 310, ok)},
			[]Window{{Key: "a", Version: 1, WrittenNS: 200, VisibilityNS: 50, Resolved: true}}},
		{"a window still open at the end is censored",
			[]history.Op{w(0, "a", 1, 100, 200, ok), r(1, "a", 1, 250, 260, ok), r(1, "a", 0, 300, 310, ok)},
			[]Window{{Key: "a", Version: 1, WrittenNS: 200, VisibilityNS: 100, Resolved: false}}},
		{"failed and unknown writes start no window; a newer version read is fresh",
			[]history.Op{w(0, "a", 1, 100, 200, fail), w(0, "a", 2, 300, 400, info), w(0, "a", 3, 500, 600, ok),
				r(1, "a", 2, 610, 620, ok), r(1, "a", 4, 700, 710, ok)},
			[]Window{{Key: "a", Version: 3, WrittenNS: 600, VisibilityNS: 10, Resolved: true}}},
		{"a write with no read after it is not observed",
			[]history.Op{r(1, "a", 0, 50, 60, ok), w(0, "a", 1, 100, 200, ok)},
			nil},
	} {
		res := Analyze(c.ops, Options{})
		var got []Window
		for _, l := range res.Levels {
			got = append(got, l.Windows...)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// The curve and k-staleness count reads against the newest acknowledged
// write at their invocation; reads before any write count in neither.
func TestCurveAndKStale(t *testing.T) {
	ok := history.OK
	ops := []history.Op{
		r(1, "a", 0, 50, 60, ok), // before any write: not counted
		w(0, "a", 1, 90, 100, ok), w(0, "a", 2, 190, 200, ok), w(0, "a", 3, 290, 300, ok),
		r(1, "a", 2, 305, 306, ok),               // t=5, 1 behind
		r(1, "a", 1, 310, 311, ok),               // t=10, 2 behind
		r(1, "a", history.NoValue, 320, 321, ok), // t=20, 3 behind
		r(1, "a", 3, 330, 331, ok),               // t=30, fresh
	}
	res := Analyze(ops, Options{Edges: []int64{0, 10, 25}})
	l := res.Levels[0]
	if l.Reads != 4 {
		t.Errorf("reads %d, want 4", l.Reads)
	}
	wantCurve := []Bin{{0, 10, 1, 0}, {10, 25, 2, 0}, {25, math.MaxInt64, 1, 1}}
	if !reflect.DeepEqual(l.Curve, wantCurve) {
		t.Errorf("curve %+v, want %+v", l.Curve, wantCurve)
	}
	wantK := []KCount{{0, 1}, {1, 1}, {2, 1}, {3, 1}}
	if !reflect.DeepEqual(l.KStale, wantK) {
		t.Errorf("k-staleness %+v, want %+v", l.KStale, wantK)
	}
	if s := l.StaleShare(); s != 0.75 {
		t.Errorf("stale share %v, want 0.75", s)
	}
}
