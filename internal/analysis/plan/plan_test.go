package plan

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// perReqHour is what one req/s of first-step requests earns per hour
// under Table 16: 3600 × 0.0033 cent.
const perReqHour = 3600 * 0.0033 / 100

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// designed is a campaign whose profit-optimal plan is known by
// construction: small (1 node, capacity 100 req/s), mid (2, 200), big (4,
// 400) and bad (3 nodes but capacity 50: more cost, less revenue), at $4
// per node-hour; every request within capacity takes 0.5 s (first step),
// every request beyond it 6 s (the penalty). At level L a configuration
// of capacity c earns (min(L,c) − max(0,L−c)) × perReqHour per hour:
//
//	level  small        mid           big          bad
//	50     5.94−4=1.94  5.94−8=−2.06  5.94−16      5.94−12
//	150    5.94−4=1.94  17.82−8=9.82  17.82−16=1.82 −5.94−12
//	300    −11.88−4     11.88−8=3.88  35.64−16=19.64 −23.76−12
//
// so the plan is small, mid, big: more nodes as the workload grows.
func designed(t *testing.T) profit.Analysis {
	t.Helper()
	cfgs := []resultstest.MoneyConfig{
		{Name: "small", Nodes: 1, Capacity: 100, Set: []results.Setting{{Path: "db.nodes", Value: "1"}}},
		{Name: "mid", Nodes: 2, Capacity: 200, Set: []results.Setting{{Path: "db.nodes", Value: "2"}}},
		{Name: "big", Nodes: 4, Capacity: 400, Set: []results.Setting{{Path: "db.nodes", Value: "4"}}},
		{Name: "bad", Nodes: 3, Capacity: 50, Set: []results.Setting{{Path: "db.nodes", Value: "3"}}},
	}
	st := resultstest.MoneyStore(t, "", "designed", cfgs, []float64{50, 150, 300}, 2, 500*time.Millisecond, 6*time.Second,
		results.Plan{Cost: results.PlanCost{Basis: profit.NodeHour, NodeHour: 4}})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	a, err := profit.FromResults(r, profit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestPlanPicksTheDesignedConfigurations(t *testing.T) {
	p, err := Make(designed(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Choices {
		got = append(got, c.Config)
	}
	if strings.Join(got, " ") != "small mid big" {
		t.Fatalf("plan %v, want small mid big", got)
	}
	if c := p.Choices[1]; !near(c.Profit.Mean, 150*perReqHour-8) || c.Nodes != 2 || c.Params["db.nodes"] != "2" || c.RunnerUp != "small" ||
		!near(float64(c.Margin), (150*perReqHour-8)-(50*perReqHour-4)) || c.Tie != "" {
		t.Errorf("level 150: %+v", c)
	}
	// Break-even by interpolating the profit difference between levels:
	// mid − small is −4 at 50 and 7.88 at 150.
	if len(p.BreakEvens) != 2 {
		t.Fatalf("break-evens %+v", p.BreakEvens)
	}
	d50, d150 := -4.0, (150*perReqHour-8)-(50*perReqHour-4)
	if be := p.BreakEvens[0]; be.From != "small" || be.To != "mid" || !be.Measured || !near(float64(be.At), 50+100*(-d50)/(d150-d50)) {
		t.Errorf("break-even %+v", be)
	}
	// Price sensitivity: the plan holds from $0 up to the price at which
	// small's saving of one node (2 nodes − 1) pays for mid's extra
	// revenue at 150: (17.82 − 5.94)/1 node = $11.88 per node-hour; the
	// same bound comes from mid vs big at 300 ((35.64−11.88)/2).
	if pr := p.Price; pr == nil || pr.Low != 0 || !near(float64(pr.High), 100*perReqHour) || pr.Base != 4 || !strings.HasPrefix(pr.HighBy, "small at 150") {
		t.Errorf("price range %+v", p.Price)
	}
	// Main-step sensitivity: every configuration here pays its penalty
	// at −v whatever v is, and at each level the winner serves at least as
	// many first-step requests as any cheaper rival, so no first-step
	// earning changes the plan: [0, ∞).
	if m := p.MainStep; m == nil || m.Low != 0 || !math.IsInf(float64(m.High), 1) {
		t.Errorf("main step range %+v", p.MainStep)
	}
	if _, err := json.Marshal(p); err != nil {
		t.Errorf("the plan does not encode: %v", err)
	}
}

func TestMonotoneRevenueLiftsDearerWorseConfigurations(t *testing.T) {
	p, err := Make(designed(t))
	if err != nil {
		t.Fatal(err)
	}
	var row *FrontierRow
	for i, f := range p.Frontier {
		if f.Level == 150 && f.Config == "bad" {
			row = &p.Frontier[i]
		}
	}
	// bad (cost 12) measures −5.94 at 150; mid (cost 8) measures 17.82,
	// so bad's monotone revenue is mid's.
	if row == nil || row.LiftedFrom != "mid" || !near(float64(row.Revenue), -50*perReqHour) || !near(float64(row.MonotoneRevenue), 150*perReqHour) || !near(float64(row.Profit), 150*perReqHour-12) {
		t.Fatalf("bad at 150: %+v", row)
	}
	// The frontier is non-decreasing along cost at every level.
	last := map[float64]Num{}
	for _, f := range p.Frontier {
		if prev, ok := last[f.Level]; ok && f.MonotoneRevenue < prev {
			t.Errorf("level %g: revenue falls to %g at %s", f.Level, f.MonotoneRevenue, f.Config)
		}
		last[f.Level] = f.MonotoneRevenue
	}
}

// cells builds an analysis directly: name, nodes, cost, profit at one
// level (revenue = profit + cost).
func cells(rows ...struct {
	name          string
	nodes         int
	cost, profitV float64
}) profit.Analysis {
	a := profit.Analysis{Objective: wildcard.ProfitPerHour, Cost: profit.CostModel{Basis: profit.Table}, SLA: profit.DefaultSLA()}
	for _, r := range rows {
		a.Configs = append(a.Configs, profit.Configuration{Name: r.name, Nodes: r.nodes})
		e := func(x float64) profit.Estimate { return profit.Estimate{Mean: x, Half: math.NaN(), N: 1} }
		a.Cells = append(a.Cells, profit.Cell{Config: r.name, Level: 10, Cost: e(r.cost), Profit: e(r.profitV), Revenue: e(r.profitV + r.cost), Main: e(0)})
	}
	return a
}

type row = struct {
	name          string
	nodes         int
	cost, profitV float64
}

func TestTiesAreBrokenCheaperThenFewerNodesThenName(t *testing.T) {
	for _, c := range []struct {
		rows []row
		want string
		tie  string
	}{
		{[]row{{"dear", 1, 6, 10}, {"cheap", 3, 5, 10}}, "cheap", "cheaper"},
		{[]row{{"three", 3, 5, 10}, {"two", 2, 5, 10}}, "two", "fewer nodes"},
		{[]row{{"b", 2, 5, 10}, {"a", 2, 5, 10}}, "a", "name order"},
		{[]row{{"b", 2, 5, 11}, {"a", 2, 5, 10}}, "b", ""},
	} {
		p, err := Make(cells(c.rows...))
		if err != nil {
			t.Fatal(err)
		}
		ch := p.Choices[0]
		if ch.Config != c.want || (c.tie == "") != (ch.Tie == "") || !strings.Contains(ch.Tie, c.tie) {
			t.Errorf("%v: chose %s (%q), want %s (%s)", c.rows, ch.Config, ch.Tie, c.want, c.tie)
		}
	}
}

func TestOtherObjectives(t *testing.T) {
	a := designed(t)
	a.Objective = wildcard.P99
	p, err := Make(a)
	if err != nil {
		t.Fatal(err)
	}
	// At 300 only big stays within capacity (p99 0.5 s); at 50 every
	// configuration but bad does, and small is the cheapest of them.
	if p.Choices[0].Config != "small" || p.Choices[2].Config != "big" || p.Price != nil || len(p.BreakEvens) != 0 {
		t.Errorf("p99 plan %+v", p.Choices)
	}
}

func TestMainStepRangeIsWhereTheWinnerStaysAhead(t *testing.T) {
	// A: cost 5, 1000 first-step requests per hour; B: cost 2, 500. At
	// v = 0.01 A earns 10 − 5 = 5 and B 5 − 2 = 3; A stays ahead while
	// 1000v − 5 ≥ 500v − 2, i.e. v ≥ 0.006.
	e := func(x float64) profit.Estimate { return profit.Estimate{Mean: x, Half: math.NaN(), N: 1} }
	a := profit.Analysis{Objective: wildcard.ProfitPerHour, Cost: profit.CostModel{Basis: profit.NodeHour, NodeHour: 1},
		SLA:     profit.SLA{Steps: profit.Steps{{UpTo: time.Second, Dollars: 0.01}}},
		Configs: []profit.Configuration{{Name: "A", Nodes: 5}, {Name: "B", Nodes: 2}},
		Cells: []profit.Cell{{Config: "A", Level: 10, Cost: e(5), Revenue: e(10), Profit: e(5), Main: e(1000)},
			{Config: "B", Level: 10, Cost: e(2), Revenue: e(5), Profit: e(3), Main: e(500)}}}
	p, err := Make(a)
	if err != nil {
		t.Fatal(err)
	}
	if m := p.MainStep; p.Choices[0].Config != "A" || !near(float64(m.Low), 0.006) || m.LowBy != "B at 10" || !math.IsInf(float64(m.High), 1) {
		t.Errorf("plan %s, main step range %+v", p.Choices[0].Config, p.MainStep)
	}
	// The node-hour price: A (5 nodes) stays ahead while 10 − 5x ≥ 5 − 2x,
	// i.e. x ≤ 5/3.
	if pr := p.Price; pr.Low != 0 || !near(float64(pr.High), 5.0/3) || pr.HighBy != "B at 10" {
		t.Errorf("price range %+v", pr)
	}
}
