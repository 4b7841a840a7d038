package profit

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// v is Table 16's first step in dollars.
const v = 0.0033 / 100

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestTable16Steps(t *testing.T) {
	s := Table16()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rt    time.Duration
		cents float64
	}{{0, 0.0033}, {time.Second, 0.0033}, {time.Second + 1, 0.0027}, {3 * time.Second, 0.0020}, {4500 * time.Millisecond, 0.0007}, {5 * time.Second, 0.0007}, {6 * time.Second, -0.0033}} {
		if got := s.Earn(c.rt) * 100; !near(got, c.cents) {
			t.Errorf("rt %v earns %g cent, want %g", c.rt, got, c.cents)
		}
	}
	// Without a last step, slower requests earn nothing.
	if got := (Steps{{UpTo: time.Second, Dollars: 1}}).Earn(2 * time.Second); got != 0 {
		t.Errorf("beyond the last bounded step: %g", got)
	}
}

func TestStepsCheck(t *testing.T) {
	for _, s := range []Steps{nil, {{UpTo: 2 * time.Second}, {UpTo: time.Second}}, {{UpTo: 0}, {UpTo: time.Second}}, {{UpTo: time.Second, Dollars: math.NaN()}}} {
		if err := s.Check(); err == nil {
			t.Errorf("%v passed the check", s)
		}
	}
}

func TestRevenueSumsBuckets(t *testing.T) {
	h := store.NewHistogram()
	if err := h.RecordValues(500_000, 1000); err != nil { // 0.5 s: first step
		t.Fatal(err)
	}
	if err := h.RecordValues(6_000_000, 100); err != nil { // 6 s: penalty
		t.Fatal(err)
	}
	r := Revenue(h, Table16(), time.Microsecond, true)
	if r.Requests != 1100 || r.Straddling != 0 || r.MainRequests != 1000 || !near(r.Dollars, 900*v) || !near(r.Min, r.Dollars) || !near(r.Max, r.Dollars) {
		t.Errorf("revenue %+v, want 900 × %g", r, v)
	}
	// A request at exactly 1 s shares its bucket with slower values: the
	// bounds say it may have earned either step.
	h.Reset()
	if err := h.RecordValues(1_000_000, 10); err != nil {
		t.Fatal(err)
	}
	r = Revenue(h, Table16(), time.Microsecond, true)
	if r.Straddling != 10 || !near(r.Max, 10*v) || !near(r.Min, 10*0.0027/100) || !near(r.Dollars, r.Min) {
		t.Errorf("straddling bucket: %+v", r)
	}
}

var plan4 = results.Plan{Cost: results.PlanCost{Basis: NodeHour, NodeHour: 4}}

func configs() []resultstest.MoneyConfig {
	return []resultstest.MoneyConfig{
		{Name: "small", Nodes: 1, Capacity: 100, Set: []results.Setting{{Path: "lab.hosts[1].count", Value: "1"}}},
		{Name: "mid", Nodes: 2, Capacity: 200, Set: []results.Setting{{Path: "lab.hosts[1].count", Value: "2"}}},
	}
}

func TestFromResultsPricesEveryCell(t *testing.T) {
	st := resultstest.MoneyStore(t, "", "money", configs(), []float64{50, 150}, 2, 500*time.Millisecond, 6*time.Second, plan4)
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	a, err := FromResults(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 8 || len(a.Cells) != 4 || a.Cost.Basis != NodeHour {
		t.Fatalf("%d runs, %d cells, basis %s", len(a.Runs), len(a.Cells), a.Cost.Basis)
	}
	// By construction: at level L a configuration of capacity c earns
	// 3600·(min(L,c) − max(0, L−c))·v per hour and costs nodes × $4.
	want := map[string][3]float64{ // revenue, cost, throughput
		"small@50": {3600 * 50 * v, 4, 50}, "small@150": {3600 * (100 - 50) * v, 4, 150},
		"mid@50": {3600 * 50 * v, 8, 50}, "mid@150": {3600 * 150 * v, 8, 150},
	}
	for _, c := range a.Cells {
		k := c.Config + "@" + strconv.FormatFloat(c.Level, 'g', -1, 64)
		w, ok := want[k]
		if !ok {
			t.Fatalf("unexpected cell %s", k)
		}
		if !near(c.Revenue.Mean, w[0]) || !near(c.Cost.Mean, w[1]) || !near(c.Profit.Mean, w[0]-w[1]) || !near(c.Throughput.Mean, w[2]) {
			t.Errorf("%s: revenue %v cost %v profit %v throughput %v, want %v", k, c.Revenue, c.Cost, c.Profit, c.Throughput, w)
		}
		if c.Revenue.N != 2 || c.Revenue.Half != 0 || c.Straddling != 0 {
			t.Errorf("%s: identical repetitions should give a zero-width interval over 2: %+v", k, c.Revenue)
		}
		if !near(c.CostPerReq.Mean, w[1]*730/w[2]) {
			t.Errorf("%s: $/month per req/s %v", k, c.CostPerReq)
		}
	}
	pts := a.Points()
	if len(pts) != 4 || pts[0].Params["lab.hosts[1].count"] != "1" {
		t.Errorf("points %+v", pts)
	}
}

func TestMergeRefusesDifferentWorkloads(t *testing.T) {
	a1 := analysisOf(t, resultstest.MoneyStore(t, "", "one", configs()[:1], []float64{50}, 1, time.Millisecond, time.Second, plan4))
	a2 := analysisOf(t, resultstest.MoneyStore(t, "", "two", configs()[:1], []float64{50}, 1, time.Millisecond, time.Second, plan4))
	m, err := Merge([]Analysis{a1, a2})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Configs) != 2 || m.Configs[0].Name == m.Configs[1].Name || len(m.Cells) != 2 {
		t.Errorf("merged configs %+v cells %d", m.Configs, len(m.Cells))
	}
	a2.Workload.RecordCount = 5000
	if _, err := Merge([]Analysis{a1, a2}); err == nil || !strings.Contains(err.Error(), "record_count 1000 vs 5000") {
		t.Errorf("different workloads merged: %v", err)
	}
}

func analysisOf(t *testing.T, st *store.Store) Analysis {
	t.Helper()
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	a, err := FromResults(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestModelErrorsNameTheField(t *testing.T) {
	bad := results.Plan{SLA: results.PlanSLA{Steps: []results.SLAStep{{UpTo: results.Dur(2 * time.Second)}, {UpTo: results.Dur(time.Second)}}}}
	if _, _, _, err := Model(bad, false); err == nil || !strings.Contains(err.Error(), "analysis.plan.sla.steps") {
		t.Errorf("descending steps: %v", err)
	}
	if _, _, _, err := Model(results.Plan{Objective: "fast"}, false); err == nil || !strings.Contains(err.Error(), "objective") {
		t.Errorf("unknown objective: %v", err)
	}
	_, cm, _, err := Model(results.Plan{}, true)
	if err != nil || cm.Basis != Catalog || cm.NodeHour != DefaultNodeHour {
		t.Errorf("defaults: %+v %v", cm, err)
	}
}

func TestTableCostHasFixedAndVariableParts(t *testing.T) {
	cm := CostModel{Basis: Table, Table: map[string]ConfigCost{"a": {FixedPerHour: 2, PerMillionRequests: 0.5}}}
	got, err := cm.PerHour(Config{Name: "a"}, 1000) // 3.6 M requests per hour
	if err != nil || !near(got, 2+0.5*3.6) {
		t.Errorf("table cost %v %v", got, err)
	}
	if _, err := cm.PerHour(Config{Name: "b"}, 1); err == nil {
		t.Error("a configuration missing from the table was priced")
	}
}
