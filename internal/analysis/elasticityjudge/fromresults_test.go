package elasticityjudge

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/controller/runlog"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// The designed campaign: lab "lab" with app1 ($0.10/h), db1 ($0.20/h and
// a $73/month volume: $0.10/h) and, in the empirical treatment's lab
// only, old1 ($1/h). A run measures 60 s with 50 ms (fast) and 1.5 s
// (slow) responses, normal threshold 1 s:
//
//	0–19 s:  80 fast reads
//	20–29 s: 150 fast reads, 10 fast and 20 slow updates, 5 errors, 5 dropped
//	30–39 s: 150 fast reads, 10 fast and 20 slow updates
//	40–59 s: 60 fast reads
//
// The empirical controller (node capacity 100 req/s) adds app2 ($0.10/h;
// asked at 22 s, serving at 25 s) and removes it (asked at 45 s, released
// at 47 s). The HPA run has the same seconds, no node change and no node
// capacity.
var (
	fastRT, slowRT = 50 * time.Millisecond, 1500 * time.Millisecond
	errCents       = -0.05
	plan           = results.Plan{SLA: results.PlanSLA{Steps: []results.SLAStep{{UpTo: results.Dur(time.Second), Cents: 0.01}, {Cents: -0.02}}, ErrorCents: &errCents}}
)

func designedSeconds() [][]resultstest.ControllerOp {
	var out [][]resultstest.ControllerOp
	for s := 0; s < 60; s++ {
		var ops []resultstest.ControllerOp
		switch {
		case s < 20:
			ops = []resultstest.ControllerOp{{Op: "read", Fast: 80}}
		case s < 40:
			up := resultstest.ControllerOp{Op: "update", Fast: 10, Slow: 20}
			if s < 30 {
				up.Errors, up.Dropped = 5, 5
			}
			ops = []resultstest.ControllerOp{{Op: "read", Fast: 150}, up}
		default:
			ops = []resultstest.ControllerOp{{Op: "read", Fast: 60}}
		}
		out = append(out, ops)
	}
	return out
}

func designedCampaign(t *testing.T) *results.Results {
	app1, db1 := resultstest.ControllerHost{Name: "app1", Price: 0.1}, resultstest.ControllerHost{Name: "db1", Price: 0.2, VolumeMonthly: 73}
	emp := runlog.Setup{Controller: "empirical", Tier: "app", Period: 10 * time.Second, Min: 1, Max: 3, Nodes: []string{"app1"},
		Sensitive: 500 * time.Millisecond, Normal: time.Second, NodeCapacity: 100, ODSRecords: 120}
	hpa := emp
	hpa.Controller, hpa.NodeCapacity = "hpa", 0
	run := resultstest.ControllerRun{Seconds: designedSeconds(),
		Changes: []resultstest.ControllerChange{
			{Action: results.ActionAddNode, Host: "app2", Price: 0.1, Requested: 22 * time.Second, Done: 25 * time.Second},
			{Action: results.ActionRemoveNode, Host: "app2", Requested: 45 * time.Second, Done: 47 * time.Second},
		},
		Decisions: []resultstest.ControllerDecision{
			{At: 20 * time.Second, Entry: runlog.Entry{Controller: "empirical", Tier: "app", Nodes: 1, Target: 2, Action: "fallback", Path: "scale-up", Reason: "no ODS answer"}},
			{At: 30 * time.Second, Entry: runlog.Entry{Controller: "empirical", Tier: "app", Nodes: 2, Target: 2, Action: "hold", Path: "hold", Reason: "between goals"}},
			{At: 40 * time.Second, Entry: runlog.Entry{Controller: "empirical", Tier: "app", Nodes: 2, Target: 1, Action: "configure", Path: "scale-down", Config: "app=1", Reason: "cheaper"}},
			{At: 50 * time.Second, Entry: runlog.Entry{Controller: "empirical", Tier: "app", Nodes: 1, Target: 2, Action: "fallback", Path: "scale-up", Reason: "x", Error: "add_node app2: no capacity"}},
		}}
	st, _ := resultstest.ControllerCampaign(t, "lab", fastRT, slowRT, []resultstest.ControllerTreatment{
		{Name: "emp", Hosts: []resultstest.ControllerHost{app1, db1, {Name: "old1", Price: 1}}, Setup: &emp, Plan: plan, Runs: []resultstest.ControllerRun{run, run}},
		{Name: "base", Hosts: []resultstest.ControllerHost{app1, db1}, Setup: &hpa, Runs: []resultstest.ControllerRun{{Seconds: designedSeconds()}}},
		{Name: "plain", Hosts: []resultstest.ControllerHost{app1, db1}, Runs: []resultstest.ControllerRun{{Seconds: designedSeconds()}}},
	})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFromResultsDesignedCampaign(t *testing.T) {
	j, err := FromResults(designedCampaign(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Runs) != 3 {
		t.Fatalf("%d controller runs, want 3 (the plain run has no controller)", len(j.Runs))
	}
	// The answer, second by second, from the design above.
	var answered, within, failed, slow float64
	var demand, supply, costEmp, costHPA []float64
	for s := 0; s < 60; s++ {
		var offered float64
		switch {
		case s < 20:
			offered, answered, within = 80, answered+80, within+80
		case s < 30:
			offered, answered, within, failed, slow = 190, answered+180, within+160, failed+10, slow+20
		case s < 40:
			offered, answered, within, slow = 180, answered+180, within+160, slow+20
		default:
			offered, answered, within = 60, answered+60, within+60
		}
		demand = append(demand, math.Ceil(offered/100))
		n := 1.0
		if s >= 25 && s < 45 {
			n = 2
		}
		supply = append(supply, n)
		base := 0.1 + 0.2 + 73.0/730
		costHPA = append(costHPA, base)
		if s >= 22 && s < 47 {
			base += 0.1
		}
		costEmp = append(costEmp, base+1)
	}
	sum := func(xs []float64) (s float64) {
		for _, x := range xs {
			s += x
		}
		return s
	}
	wantSLA := within / (answered + failed)
	// Demand is 2 in 20–39 s; supply 2 in 25–44 s: under 5 s by half the
	// demand, over 5 s by the whole of it; both change twice: no jitter.
	wantB := Bungee{AccuracyUnder: 100.0 / 60 * 5 * 0.5, AccuracyOver: 100.0 / 60 * 5, TimeshareUnder: 100.0 * 5 / 60, TimeshareOver: 100.0 * 5 / 60}
	for i, x := range j.Runs[:2] {
		if x.Problem != nil {
			t.Fatalf("run %d: %v", x.ID, x.Problem)
		}
		r := x.Result
		if r.Controller != "empirical" || r.Repetition != i+1 || r.Seconds != 60 || !x.Elastic {
			t.Fatalf("run %+v", r)
		}
		for s, sec := range x.Input.Seconds {
			if sec.Demand != demand[s] || sec.Supply != supply[s] || !near(sec.CostPerHour, costEmp[s]) {
				t.Fatalf("second %d: demand %v supply %v cost %v, want %v %v %v", s, sec.Demand, sec.Supply, sec.CostPerHour, demand[s], supply[s], costEmp[s])
			}
		}
		if !near(r.SLA, wantSLA) || r.Requests != int64(answered+failed) {
			t.Errorf("SLA %v of %d requests, want %v of %v", r.SLA, r.Requests, wantSLA, answered+failed)
		}
		if !near(r.Cost, sum(costEmp)/3600) {
			t.Errorf("cost %v, want %v", r.Cost, sum(costEmp)/3600)
		}
		// analysis.plan's steps: 0.01¢ within 1 s, −0.02¢ slower; a failed
		// request earns the slowest step (the plan's error price is not
		// applied, which a note says).
		wantRev := (within*0.01 - slow*0.02 - failed*0.02) / 100
		if !r.Priced || !near(r.Revenue, wantRev) || !near(r.Profit, wantRev-r.Cost) {
			t.Errorf("revenue %v profit %v, want %v and %v", r.Revenue, r.Profit, wantRev, wantRev-r.Cost)
		}
		if r.Actions != 2 {
			t.Errorf("%d actions, want 2 (the decision that failed does not count)", r.Actions)
		}
		b := r.Bungee
		if !near(b.AccuracyUnder, wantB.AccuracyUnder) || !near(b.AccuracyOver, wantB.AccuracyOver) ||
			!near(b.TimeshareUnder, wantB.TimeshareUnder) || !near(b.TimeshareOver, wantB.TimeshareOver) || !near(b.Jitter, 0) {
			t.Errorf("bungee %+v, want %+v", b, wantB)
		}
		if !near(x.Offered[20], 190) || !near(x.Answered[20], 180) || len(x.Entries) != 4 {
			t.Errorf("offered %v answered %v at 20 s, %d entries", x.Offered[20], x.Answered[20], len(x.Entries))
		}
		if !strings.Contains(strings.Join(x.Notes, " "), "error and staleness prices are not applied") {
			t.Errorf("notes %q", x.Notes)
		}
	}
	h := j.Runs[2]
	if h.Problem != nil {
		t.Fatal(h.Problem)
	}
	if h.Elastic || h.Result.Bungee != (Bungee{}) || h.Result.Priced || h.Result.Actions != 0 {
		t.Errorf("hpa run without node capacity or plan: %+v elastic %v", h.Result, h.Elastic)
	}
	if !strings.Contains(strings.Join(h.Notes, " "), "node capacity is unknown") {
		t.Errorf("hpa notes %q", h.Notes)
	}
	// The base treatment's lab came up without old1: it does not cost.
	if !near(h.Result.Cost, sum(costHPA)/3600) {
		t.Errorf("hpa cost %v, want %v", h.Result.Cost, sum(costHPA)/3600)
	}
	if len(j.Summaries) != 2 || j.Summaries[0].Controller != "empirical" || j.Summaries[0].Runs != 2 || j.Summaries[1].Controller != "hpa" {
		t.Fatalf("summaries %+v", j.Summaries)
	}
	if got := j.RunsOf("hpa"); len(got) != 1 || got[0].ID != h.ID {
		t.Errorf("RunsOf(hpa) = %v", got)
	}
}

// A caller's SLA model replaces the plan's and prices every treatment.
func TestFromResultsGivenSLA(t *testing.T) {
	j, err := FromResults(designedCampaign(t), profit.Table16())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range j.Runs {
		if !x.Result.Priced {
			t.Errorf("run %d not priced", x.ID)
		}
	}
}

func TestInTier(t *testing.T) {
	for host, want := range map[string]bool{"app": true, "app1": true, "app12": true, "apple": false, "db1": false, "app1a": false} {
		if runlog.InTier("app", host) != want {
			t.Errorf("InTier(app, %s) != %v", host, want)
		}
	}
}

// A controller of two tiers is judged per tier: the designed seconds
// with an application tier (100 req/s a node; app2 serves 25–44 s) and a
// database tier (200 req/s a node; db2 asked at 30 s, serving from 33 s,
// never removed). Offered load 80, 190, 180, 60 req/s in 0–19, 20–29,
// 30–39, 40–59 s demands 1, 2, 2, 1 app nodes and always 1 db node.
func TestFromResultsJudgesEachTier(t *testing.T) {
	setup := runlog.Setup{Controller: "empirical", Tier: "app", Period: 10 * time.Second, Min: 1, Max: 3, Nodes: []string{"app1"},
		Sensitive: 500 * time.Millisecond, Normal: time.Second, NodeCapacity: 100,
		Tiers: []runlog.TierSetup{{Tier: "app", Min: 1, Max: 3, Nodes: []string{"app1"}, NodeCapacity: 100}, {Tier: "db", Min: 1, Max: 2, Nodes: []string{"db1"}, NodeCapacity: 200}}}
	run := resultstest.ControllerRun{Seconds: designedSeconds(),
		Changes: []resultstest.ControllerChange{
			{Action: results.ActionAddNode, Host: "app2", Price: 0.1, Requested: 22 * time.Second, Done: 25 * time.Second},
			{Action: results.ActionAddNode, Host: "db2", Price: 0.2, Requested: 30 * time.Second, Done: 33 * time.Second},
			{Action: results.ActionRemoveNode, Host: "app2", Requested: 45 * time.Second, Done: 47 * time.Second},
		}}
	st, _ := resultstest.ControllerCampaign(t, "lab", fastRT, slowRT, []resultstest.ControllerTreatment{
		{Name: "two", Hosts: []resultstest.ControllerHost{{Name: "app1", Price: 0.1}, {Name: "db1", Price: 0.2}}, Setup: &setup, Runs: []resultstest.ControllerRun{run}},
	})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	j, err := FromResults(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Runs) != 1 || j.Runs[0].Problem != nil {
		t.Fatalf("runs %+v", j.Runs)
	}
	x := j.Runs[0]
	if len(x.Tiers) != 2 || x.Tiers[0].Tier != "app" || x.Tiers[1].Tier != "db" || !x.Elastic {
		t.Fatalf("tiers %+v", x.Tiers)
	}
	for s := 0; s < 60; s++ {
		dbSupply := 1.0
		if s >= 33 {
			dbSupply = 2
		}
		if x.Tiers[1].Supply[s] != dbSupply || x.Tiers[1].Demand[s] != 1 {
			t.Fatalf("db second %d: supply %v demand %v, want %v and 1", s, x.Tiers[1].Supply[s], x.Tiers[1].Demand[s], dbSupply)
		}
		if x.Input.Seconds[s].Supply != x.Tiers[0].Supply[s] {
			t.Fatalf("second %d: the input's supply is not the first tier's", s)
		}
	}
	app := Bungee{AccuracyUnder: 100.0 / 60 * 5 * 0.5, AccuracyOver: 100.0 / 60 * 5, TimeshareUnder: 100.0 * 5 / 60, TimeshareOver: 100.0 * 5 / 60}
	// db: 27 s over by one node of a demand of one; one supply change, no
	// demand change in a minute.
	db := Bungee{AccuracyOver: 100.0 / 60 * 27, TimeshareOver: 100.0 * 27 / 60, Jitter: 1}
	for i, want := range []Bungee{app, db} {
		if !nearBungee(x.Tiers[i].Bungee, want) {
			t.Errorf("%s tier: %+v, want %+v", x.Tiers[i].Tier, x.Tiers[i].Bungee, want)
		}
	}
	mean := Bungee{(app.AccuracyUnder + db.AccuracyUnder) / 2, (app.AccuracyOver + db.AccuracyOver) / 2,
		(app.TimeshareUnder + db.TimeshareUnder) / 2, (app.TimeshareOver + db.TimeshareOver) / 2, (app.Jitter + db.Jitter) / 2}
	if !nearBungee(x.Result.Bungee, mean) {
		t.Errorf("the run's BUNGEE %+v, want the tiers' mean %+v", x.Result.Bungee, mean)
	}
}

func nearBungee(a, b Bungee) bool {
	return near(a.AccuracyUnder, b.AccuracyUnder) && near(a.AccuracyOver, b.AccuracyOver) &&
		near(a.TimeshareUnder, b.TimeshareUnder) && near(a.TimeshareOver, b.TimeshareOver) && near(a.Jitter, b.Jitter)
}
