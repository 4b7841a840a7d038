package controller

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/controller/runlog"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// designed is two controllers on the same 30 s trace, node capacity
// 100 req/s, normal threshold 1 s, hosts app1 ($0.36/h) and db1
// ($0.72/h), SLA steps 0.01¢ within 1 s and nothing slower:
//
//	0–9 s:   50 fast (rep 2 of the empirical: 40 fast, 10 slow)
//	10–19 s: 150 fast, 50 slow (offered 200: 2 nodes demanded)
//	20–29 s: 50 fast
//
// The empirical controller (2 repetitions) adds app2 ($0.36/h; asked at
// 11 s, serving at 14 s) and removes it (asked at 22 s, released at
// 23 s). The HPA keeps one node.
//
// Known answers. Empirical: SLA 2500/3000 and 2400/3000 (mean 81.67%),
// cost (30·1.08 + 12·0.36)/3600 = $0.0102, revenue $0.25 and $0.24
// (profit mean 0.2348), 2 actions; under 4 s by half → θU 6.667%, τU
// 13.33%; over 2 s by one → θO 6.667%, τO 6.667%; jitter 0. HPA: SLA
// 83.33%, cost $0.009, profit 0.241, 0 actions; under 10 s by half → θU
// 16.67%, τU 33.33%, no over; jitter (0 − 2) / 0.5 min = −4.
func designed(t *testing.T) *results.Results {
	secs := func(slowEarly bool) [][]resultstest.ControllerOp {
		var out [][]resultstest.ControllerOp
		for s := 0; s < 30; s++ {
			op := resultstest.ControllerOp{Op: "read", Fast: 50}
			if s < 10 && slowEarly {
				op.Fast, op.Slow = 40, 10
			}
			if s >= 10 && s < 20 {
				op.Fast, op.Slow = 150, 50
			}
			out = append(out, []resultstest.ControllerOp{op})
		}
		return out
	}
	setup := runlog.Setup{Controller: "empirical", Tier: "app", Period: 10 * time.Second, Min: 1, Max: 3, Nodes: []string{"app1"},
		Sensitive: 500 * time.Millisecond, Normal: time.Second, NodeCapacity: 100, ODSRecords: 300}
	hpa := setup
	hpa.Controller, hpa.ODSRecords = "hpa", 0
	changes := []resultstest.ControllerChange{
		{Action: results.ActionAddNode, Host: "app2", Price: 0.36, Requested: 11 * time.Second, Done: 14 * time.Second},
		{Action: results.ActionRemoveNode, Host: "app2", Requested: 22 * time.Second, Done: 23 * time.Second},
	}
	decisions := []resultstest.ControllerDecision{
		{At: 10 * time.Second, Entry: runlog.Entry{Controller: "empirical", Tier: "app", Nodes: 1, Target: 2, Requests: 500, Sensitive: 1, Normal: 1, Utilisation: 0.4, Throughput: 50,
			Path: "scale-up", Action: "fallback", Forecast: 210, Records: 12, Reason: "no configuration within the radius has support 30: one node more"}},
		{At: 20 * time.Second, Entry: runlog.Entry{Controller: "empirical", Tier: "app", Nodes: 2, Target: 1, Requests: 2000, Sensitive: 0.75, Normal: 0.75, Utilisation: 0.5, Throughput: 200,
			Path: "scale-down", Action: "configure", Forecast: 55, Config: "app=1", Support: 40, Records: 90, Reason: "app=1 is cheaper"}},
		{At: 25 * time.Second, Entry: runlog.Entry{Controller: "empirical", Tier: "app", Nodes: 1, Target: 3, Requests: 0, Utilisation: -1,
			Path: "scale-up", Action: "fallback", Reason: "one node more", Error: "add_node app2: the lab is full"}},
	}
	hpaDecisions := []resultstest.ControllerDecision{
		{At: 10 * time.Second, Entry: runlog.Entry{Controller: "hpa", Tier: "app", Nodes: 1, Target: 1, Requests: 500, Sensitive: 1, Normal: 1, Utilisation: 0.62, Throughput: 50, Action: "hold", Reason: "within tolerance"}},
	}
	plan := results.Plan{SLA: results.PlanSLA{Steps: []results.SLAStep{{UpTo: results.Dur(time.Second), Cents: 0.01}, {Cents: 0}}}}
	hosts := []resultstest.ControllerHost{{Name: "app1", Price: 0.36}, {Name: "db1", Price: 0.72}}
	st, _ := resultstest.ControllerCampaign(t, "lab", 50*time.Millisecond, 1500*time.Millisecond, []resultstest.ControllerTreatment{
		{Name: "emp", Hosts: hosts, Setup: &setup, Plan: plan, Runs: []resultstest.ControllerRun{
			{Seconds: secs(false), Changes: changes, Decisions: decisions}, {Seconds: secs(true), Changes: changes, Decisions: decisions}}},
		{Name: "base", Hosts: hosts, Setup: &hpa, Plan: plan, Runs: []resultstest.ControllerRun{{Seconds: secs(false), Decisions: hpaDecisions}}},
	})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSectionOfDesignedStore(t *testing.T) {
	secs, err := ReportSections(designed(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 1 || secs[0].ID != SectionID || secs[0].Title != "Elastic controller" {
		t.Fatalf("sections %+v", secs)
	}
	sec := secs[0]
	rep := &page.Report{Format: page.FormatVersion, Title: "t"}
	rep.Add(secs...)
	if err := rep.Validate(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := page.WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"empirical: SLA 81.67%, $0.0102, profit $0.2348, 2 actions (2 runs)", "hpa: SLA 83.33%, $0.009, profit $0.241, 0 actions"} {
		if !strings.Contains(sec.Summary, want) {
			t.Errorf("summary %q lacks %q", sec.Summary, want)
		}
	}
	cmp := tableByID(t, sec, "controller-compare")
	if len(cmp.Rows) != 2 {
		t.Fatalf("%d rows in the comparison, want 2", len(cmp.Rows))
	}
	want := map[string][2]float64{
		"SLA satisfaction": {(2500.0 + 2400) / 2 / 30, 2500.0 / 30}, "Cost": {0.0102, 0.009}, "Profit": {(0.25+0.24)/2 - 0.0102, 0.241},
		"Actions": {2, 0}, "Accuracy under": {100.0 / 30 * 2, 100.0 / 30 * 5}, "Accuracy over": {100.0 / 30 * 2, 0},
		"Timeshare under": {400.0 / 30, 1000.0 / 30}, "Timeshare over": {200.0 / 30, 0}, "Jitter": {0, -4},
	}
	for title, w := range want {
		c := col(t, cmp, title)
		for i, row := range cmp.Rows {
			if got := value(row[c]); math.Abs(got-w[i]) > 1e-6 {
				t.Errorf("%s of %s = %v, want %v", title, row[0].Text, got, w[i])
			}
		}
	}
	if got := cmp.Rows[0][col(t, cmp, "SLA satisfaction")].Text; got != "81.67 (80 – 83.33)" {
		t.Errorf("empirical SLA cell %q, want the mean and the range over its repetitions", got)
	}
	dec := tableByID(t, sec, "controller-run1-decisions")
	if len(dec.Rows) != 3 {
		t.Fatalf("%d decisions, want 3", len(dec.Rows))
	}
	cell := func(row int, title string) page.Cell { return dec.Rows[row][col(t, dec, title)] }
	if cell(0, "Nodes").Text != "1 → 2" || cell(0, "Path").Text != "scale-up" || cell(0, "Action").Text != "fallback" ||
		!strings.Contains(cell(0, "Reason").Text, "support 30") || cell(0, "At").Text != "10" || !strings.Contains(cell(0, "ODS").Text, "12 records within the radius") {
		t.Errorf("first decision %+v", dec.Rows[0])
	}
	if cell(1, "ODS").Text != "app=1 (support 40); 90 records within the radius; forecast 55 req/s" || value(cell(1, "Normal")) != 75 {
		t.Errorf("second decision %+v", dec.Rows[1])
	}
	if e := cell(2, "Error"); e.Mark != "fail" || !strings.Contains(e.Text, "the lab is full") || cell(2, "Normal").Text != "no requests" || cell(2, "CPU").Text != "not monitored" {
		t.Errorf("failed decision %+v", dec.Rows[2])
	}
	load := chartByID(t, sec, "controller-run1-load")
	if r := load.Line.Rules; len(r) != 2 || r[0].Value != 14 || r[0].Label != "→ 2 nodes" || r[1].Value != 22 || r[1].Label != "→ 1 node" {
		t.Errorf("load chart rules %+v, want the node serving at 14 s and leaving at 22 s", r)
	}
	if s := load.Line.Series; len(s) != 3 || float64(s[0].Points[15].Y) != 200 || float64(s[1].Points[15].Y) != 200 || float64(s[2].Points[15].Y) != 200 || float64(s[2].Points[13].Y) != 100 {
		t.Errorf("load chart series %+v", s)
	}
	sla := chartByID(t, sec, "controller-run1-sla")
	if p := sla.Line.Series[1].Points; len(p) != 3 || p[1].X != 20 || float64(p[1].Y) != 75 || p[2].Y.Defined() {
		t.Errorf("satisfaction points %+v", p)
	}
	if tableByID(t, sec, "controller-run3-decisions").Rows[0][2].Text != "hold" {
		t.Error("the HPA run's decision is not listed")
	}

	var out bytes.Buffer
	if err := Terminal(&out, designed(t)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  empirical: SLA 81.67%, $0.0102, profit $0.2348, 2 actions (2 runs)\n  hpa: SLA 83.33%") {
		t.Errorf("terminal:\n%s", out.String())
	}
}

// A store without a controller run has no section and prints nothing.
func TestNoController(t *testing.T) {
	r := resultstest.OpenV1(t, "treatments.db")
	secs, err := ReportSections(r)
	if err != nil || len(secs) != 0 {
		t.Errorf("sections %v, %v; want none", secs, err)
	}
	var out bytes.Buffer
	if err := Terminal(&out, r); err != nil || out.Len() != 0 {
		t.Errorf("terminal %q, %v; want nothing", out.String(), err)
	}
}

func tableByID(t *testing.T, sec page.Section, id string) *page.Table {
	t.Helper()
	for _, b := range sec.Blocks {
		if b.Table != nil && b.Table.ID == id {
			return b.Table
		}
	}
	t.Fatalf("no table %s", id)
	return nil
}

func chartByID(t *testing.T, sec page.Section, id string) *chart.Chart {
	t.Helper()
	for _, b := range sec.Blocks {
		if b.Chart != nil && b.Chart.ID == id {
			return b.Chart
		}
	}
	t.Fatalf("no chart %s", id)
	return nil
}

func col(t *testing.T, tb *page.Table, title string) int {
	t.Helper()
	for i, c := range tb.Columns {
		if strings.HasPrefix(c.Title, title) {
			return i
		}
	}
	t.Fatalf("table %s has no column %q", tb.ID, title)
	return -1
}

func value(c page.Cell) float64 {
	if c.Value == nil {
		return math.NaN()
	}
	return *c.Value
}

// A run whose setup cannot be judged gets a warning, not a comparison.
func TestUnjudgedRun(t *testing.T) {
	setup := runlog.Setup{Controller: "hpa", Tier: "app", Nodes: []string{"app1"}} // no normal threshold
	st, _ := resultstest.ControllerCampaign(t, "lab", time.Millisecond, time.Second, []resultstest.ControllerTreatment{
		{Name: "base", Hosts: []resultstest.ControllerHost{{Name: "app1", Price: 1}}, Setup: &setup,
			Runs: []resultstest.ControllerRun{{Seconds: [][]resultstest.ControllerOp{{{Op: "read", Fast: 10}}}}}},
	})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := ReportSections(r)
	if err != nil || len(secs) != 1 {
		t.Fatalf("sections %v, %v", secs, err)
	}
	sec := secs[0]
	if len(sec.Blocks) != 1 || sec.Blocks[0].Note == nil || sec.Blocks[0].Note.Level != "warning" ||
		!strings.Contains(sec.Blocks[0].Note.Text, "Run 1 (hpa, treatment base, repetition 1) was not judged: run 1's controller setup has no normal SLA threshold") {
		t.Errorf("blocks %+v", sec.Blocks)
	}
	if sec.Summary != "1 controller run could not be judged." {
		t.Errorf("summary %q", sec.Summary)
	}
}

// A controller of two tiers: the chart draws each tier's capacity and
// marks its changes by tier, and the decisions list every tier's nodes
// and CPU.
func TestSectionOfTwoTiers(t *testing.T) {
	var secs [][]resultstest.ControllerOp
	for s := 0; s < 30; s++ {
		secs = append(secs, []resultstest.ControllerOp{{Op: "read", Fast: 150}})
	}
	setup := runlog.Setup{Controller: "empirical", Tier: "app", Period: 10 * time.Second, Min: 1, Max: 3, Nodes: []string{"app1"},
		Sensitive: 500 * time.Millisecond, Normal: time.Second, NodeCapacity: 100,
		Tiers: []runlog.TierSetup{{Tier: "app", Min: 1, Max: 3, Nodes: []string{"app1"}, NodeCapacity: 100}, {Tier: "db", Min: 1, Max: 2, Nodes: []string{"db1"}, NodeCapacity: 400}}}
	dec := runlog.Entry{Controller: "empirical", Tier: "app", Nodes: 1, Target: 2, Requests: 1500, Sensitive: 0.5, Normal: 0.9, Utilisation: 0.95, Throughput: 150,
		Path: "scale-up", Action: "fallback", Reason: "the app tier is the busiest",
		Tiers: []runlog.TierState{{Tier: "app", Nodes: 1, Target: 2, Utilisation: 0.95}, {Tier: "db", Nodes: 1, Target: 1, Utilisation: 0.3}}}
	st, _ := resultstest.ControllerCampaign(t, "lab", 50*time.Millisecond, 1500*time.Millisecond, []resultstest.ControllerTreatment{
		{Name: "two", Hosts: []resultstest.ControllerHost{{Name: "app1", Price: 0.36}, {Name: "db1", Price: 0.72}}, Setup: &setup, Runs: []resultstest.ControllerRun{{
			Seconds:   secs,
			Changes:   []resultstest.ControllerChange{{Action: results.ActionAddNode, Host: "app2", Price: 0.36, Requested: 10 * time.Second, Done: 13 * time.Second}},
			Decisions: []resultstest.ControllerDecision{{At: 10 * time.Second, Entry: dec}},
		}}},
	})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := ReportSections(r)
	if err != nil || len(ss) != 1 {
		t.Fatalf("sections %v %v", ss, err)
	}
	load := chartByID(t, ss[0], "controller-run1-load")
	var names []string
	for _, s := range load.Line.Series {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, "; "); got != "offered; answered; app capacity (nodes × 100 req/s); db capacity (nodes × 400 req/s)" {
		t.Errorf("series %q", got)
	}
	if rs := load.Line.Rules; len(rs) != 1 || rs[0].Value != 13 || rs[0].Label != "app → 2 nodes" {
		t.Errorf("rules %+v, want one at 13 s: app → 2 nodes", rs)
	}
	if !strings.Contains(load.Title, "the app and db tiers' nodes") {
		t.Errorf("title %q", load.Title)
	}
	tb := tableByID(t, ss[0], "controller-run1-decisions")
	row := tb.Rows[0]
	if got := row[col(t, tb, "Nodes")].Text; got != "app 1 → 2, db 1" {
		t.Errorf("nodes cell %q", got)
	}
	if got := row[col(t, tb, "CPU")].Text; got != "app 95, db 30" {
		t.Errorf("CPU cell %q", got)
	}
	if !strings.Contains(tb.Source, "the app tier, bounds 1–3 and the db tier, bounds 1–2") {
		t.Errorf("source %q", tb.Source)
	}
}
