package plan

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/plan"
	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// designed has the plan small (level 50), mid (150), big (300) by
// construction (see internal/analysis/plan's test of the same store).
func designed(t *testing.T) *results.Results {
	t.Helper()
	cfgs := []resultstest.MoneyConfig{
		{Name: "small", Nodes: 1, Capacity: 100, Set: []results.Setting{{Path: "db.nodes", Value: "1"}}},
		{Name: "mid", Nodes: 2, Capacity: 200, Set: []results.Setting{{Path: "db.nodes", Value: "2"}}},
		{Name: "big", Nodes: 4, Capacity: 400, Set: []results.Setting{{Path: "db.nodes", Value: "4"}}},
	}
	st := resultstest.MoneyStore(t, "", "designed", cfgs, []float64{50, 150, 300}, 2, 500*time.Millisecond, 6*time.Second,
		results.Plan{Cost: results.PlanCost{Basis: profit.NodeHour, NodeHour: 4}})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReportSectionsShowThePlan(t *testing.T) {
	secs, err := ReportSections(designed(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 2 || secs[0].ID != "plan" || secs[1].ID != "plan-configurations" {
		t.Fatalf("sections %+v", secs)
	}
	if want := "50 req/s → small; 150 req/s → mid; 300 req/s → big"; !strings.Contains(secs[0].Summary, want) {
		t.Errorf("summary %q lacks %q", secs[0].Summary, want)
	}
	tab := secs[0].Blocks[0].Table
	if tab == nil || len(tab.Rows) != 3 || !strings.HasPrefix(tab.Rows[2][1].Text, "big (db.nodes=4)") {
		t.Fatalf("plan table %+v", tab)
	}
	// Every configuration at every level: 3 × 3 rows.
	if all := secs[1].Blocks[0].Table; len(all.Rows) != 9 {
		t.Errorf("configurations table has %d rows", len(all.Rows))
	}
	rep := &page.Report{Sections: secs}
	if err := rep.Validate(); err != nil {
		t.Errorf("the sections do not validate: %v", err)
	}
}

func TestNoSectionForOneConfigurationWithoutPlanSettings(t *testing.T) {
	st := resultstest.MoneyStore(t, "", "one", []resultstest.MoneyConfig{{Name: "", Nodes: 1, Capacity: 10}}, []float64{5}, 1, time.Millisecond, time.Second, results.Plan{})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := ReportSections(r)
	if err != nil || len(secs) != 0 {
		t.Errorf("sections %+v, %v", secs, err)
	}
}

func TestWriteText(t *testing.T) {
	r := designed(t)
	a, err := profit.FromResults(r, profit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, a, mustPlan(t, a)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Plan over", "small (db.nodes=1)", "break-even: mid overtakes small at about", "sensitivity: the plan holds for a node-hour price ($) from 0 to 11.88 (now 4)", "ties:"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func mustPlan(t *testing.T, a profit.Analysis) plan.Plan {
	t.Helper()
	p, err := plan.Make(a)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnswerLine(t *testing.T) {
	lines, err := AnswerLines(designed(t))
	if err != nil || len(lines) != 1 || lines[0].Evidence != "plan" || lines[0].Text != "50 req/s → small; 150 req/s → mid; 300 req/s → big" {
		t.Errorf("answer lines %+v, %v", lines, err)
	}
}
