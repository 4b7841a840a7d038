package elasticityjudge

import (
	"math"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/analysis/profit"
)

var t0 = time.Unix(1_700_000_000, 0)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// trace is 120 s: demand 2 units, then 4 from 60 s; supply follows 10 s
// late (4 from 70 s) and overshoots to 5 for the last 10 s, at $1 per
// unit-hour. Each second answers 9 requests at 100 ms and 1 at 1.5 s;
// the ten under-provisioned seconds answer 5 at 100 ms, 5 at 6 s and
// fail 1.
func trace(t *testing.T) []Second {
	var out []Second
	for i := 0; i < 120; i++ {
		s := Second{Start: t0.Add(time.Duration(i) * time.Second), Demand: 2, Supply: 2}
		if i >= 60 {
			s.Demand = 4
		}
		if i >= 70 {
			s.Supply = 4
		}
		if i >= 110 {
			s.Supply = 5
		}
		s.CostPerHour = s.Supply
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		rec := func(n int, us int64) {
			for j := 0; j < n; j++ {
				if err := h.RecordValue(us); err != nil {
					t.Fatal(err)
				}
			}
		}
		if i >= 60 && i < 70 {
			rec(5, 100_000)
			rec(5, 6_000_000)
			s.Errors = 1
		} else {
			rec(9, 100_000)
			rec(1, 1_500_000)
		}
		s.Hist = h
		out = append(out, s)
	}
	return out
}

func TestJudgeKnownTrace(t *testing.T) {
	r, err := Judge(Input{Controller: "empirical", Repetition: 1, Seconds: trace(t), Actions: 2, Threshold: time.Second, SLA: profit.Table16()})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Bungee
	// Under: 10 s at (4−2)/4 → 100·5/120; over: 10 s at (5−4)/4 → 100·2.5/120.
	// Timeshares: 10 s of 120 each. Jitter: supply changed twice, demand
	// once, over 2 minutes → 0.5 per minute.
	want := Bungee{AccuracyUnder: 500.0 / 120, AccuracyOver: 250.0 / 120, TimeshareUnder: 1000.0 / 120, TimeshareOver: 1000.0 / 120, Jitter: 0.5}
	if !near(b.AccuracyUnder, want.AccuracyUnder) || !near(b.AccuracyOver, want.AccuracyOver) ||
		!near(b.TimeshareUnder, want.TimeshareUnder) || !near(b.TimeshareOver, want.TimeshareOver) || !near(b.Jitter, want.Jitter) {
		t.Errorf("bungee %+v, want %+v", b, want)
	}
	if r.Requests != 110*10+10*11 {
		t.Errorf("%d requests, want 1210", r.Requests)
	}
	if want := (110*9 + 10*5) / 1210.0; !near(r.SLA, want) {
		t.Errorf("SLA %v, want %v", r.SLA, want)
	}
	if want := (70*2 + 40*4 + 10*5) / 3600.0; !near(r.Cost, want) {
		t.Errorf("cost %v, want %v", r.Cost, want)
	}
	// Table 16 in dollars: 100 ms earns 0.000033, 1.5 s 0.000027, 6 s and
	// a failure −0.000033.
	// In the last 10 s the 5 fast requests' earnings and the 5 slow ones'
	// penalties cancel, and the failure's penalty is left.
	wantRev := 110*(9*0.000033+0.000027) + 10*(-0.000033)
	if !r.Priced || !near(r.Revenue, wantRev) || !near(r.Profit, wantRev-r.Cost) {
		t.Errorf("revenue %v profit %v, want %v and %v", r.Revenue, r.Profit, wantRev, wantRev-r.Cost)
	}
	if r.Actions != 2 || r.Seconds != 120 {
		t.Errorf("actions %d seconds %d", r.Actions, r.Seconds)
	}
}

func TestPerfectAndZeroDemand(t *testing.T) {
	var secs []Second
	for i := 0; i < 60; i++ {
		secs = append(secs, Second{Start: t0.Add(time.Duration(i) * time.Second), Demand: 3, Supply: 3})
	}
	if b := Elasticity(secs); b != (Bungee{}) {
		t.Errorf("supply equal to demand: %+v, want all zero", b)
	}
	// Zero demand with one unit supplied: over by 1/ε = 1 unit each second.
	secs = []Second{{Demand: 0, Supply: 1}, {Demand: 0, Supply: 1}}
	if b := Elasticity(secs); !near(b.AccuracyOver, 100) || !near(b.TimeshareOver, 100) {
		t.Errorf("zero demand: %+v, want 100%% over", b)
	}
	if r, err := Judge(Input{Controller: "hpa", Seconds: secs, Threshold: time.Second}); err != nil || r.Priced || r.Profit != 0 || r.Requests != 0 {
		t.Errorf("no SLA model: %+v %v", r, err)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Judge(Input{Controller: "x", Threshold: time.Second}); err == nil {
		t.Error("no seconds must be refused")
	}
	if _, err := Judge(Input{Controller: "x", Seconds: []Second{{Demand: -1}}, Threshold: time.Second}); err == nil {
		t.Error("negative demand must be refused")
	}
	if _, err := Judge(Input{Controller: "x", Seconds: []Second{{}}}); err == nil {
		t.Error("a zero threshold must be refused")
	}
}

func TestSummarise(t *testing.T) {
	rs := []Result{
		{Controller: "empirical", Repetition: 2, SLA: 0.9, Cost: 3, Actions: 4},
		{Controller: "hpa", Repetition: 1, SLA: 0.8, Cost: 5, Actions: 10},
		{Controller: "empirical", Repetition: 1, SLA: 1.0, Cost: 1, Actions: 2},
	}
	s := Summarise(rs)
	if len(s) != 2 || s[0].Controller != "empirical" || s[1].Controller != "hpa" {
		t.Fatalf("summaries %+v", s)
	}
	e := s[0]
	if e.Runs != 2 || !near(e.SLA.Mean, 0.95) || e.SLA.Min != 0.9 || e.SLA.Max != 1 || !near(e.Cost.Mean, 2) || !near(e.Actions.Mean, 3) {
		t.Errorf("empirical summary %+v", e)
	}
	if h := s[1]; h.Runs != 1 || h.Cost.Mean != 5 || h.Cost.Min != 5 || h.Cost.Max != 5 {
		t.Errorf("hpa summary %+v", h)
	}
}
