// Package controller renders the judging of elastic controller runs
// (issue 19, seed 003 ch. 8; docs/controller.md): per run, the offered
// load and the tier's nodes over time, the SLA satisfaction the sensor
// read each period and every decision with its reason; then the
// controllers side by side over their repetitions. The numbers are
// internal/analysis/elasticityjudge's; this package only lays them out.
package controller

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/elasticityjudge"
	"github.com/headroom-dev/headroom/internal/controller/runlog"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// SectionID is the anchor of the section in report.html.
const SectionID = "controller"

// ReportSections is the "Elastic controller" section: present when the
// store has a run with a controller.
func ReportSections(r *results.Results) ([]page.Section, error) {
	j, err := elasticityjudge.FromResults(r, nil)
	if err != nil || len(j.Runs) == 0 {
		return nil, err
	}
	return []page.Section{Section(j)}, nil
}

// Section lays out the judged runs: the side-by-side table first, then
// each run's load chart, satisfaction chart, decisions and notes.
func Section(j elasticityjudge.Judged) page.Section {
	sec := page.Section{ID: SectionID, Title: "Elastic controller", Summary: summary(j)}
	if len(j.Summaries) > 0 {
		sec.Blocks = append(sec.Blocks, page.Block{Table: compareTable(j)})
	}
	for _, x := range j.Runs {
		if x.Problem != nil {
			sec.Blocks = append(sec.Blocks, note("warning", format.Capitalize(runName(x)+" was not judged: "+x.Problem.Error())))
			continue
		}
		sec.Blocks = append(sec.Blocks, page.Block{Chart: loadChart(x)})
		if c := slaChart(x); c != nil {
			sec.Blocks = append(sec.Blocks, page.Block{Chart: c})
		}
		sec.Blocks = append(sec.Blocks, page.Block{Table: decisionTable(x)})
		for _, n := range format.Distinct(x.Notes) {
			sec.Blocks = append(sec.Blocks, note("info", format.Capitalize(runName(x)+": "+n)))
		}
	}
	return sec
}

// summary is the controllers in a sentence: the terminal's lines joined.
func summary(j elasticityjudge.Judged) string {
	var parts []string
	for _, s := range j.Summaries {
		parts = append(parts, Line(j, s))
	}
	out := ""
	if len(parts) > 0 {
		out = format.Sentence(strings.Join(parts, "; ")) + " Means over each controller's runs."
	}
	if n := problems(j); n > 0 {
		out = strings.TrimSpace(out + " " + format.Plural(n, "controller run") + " could not be judged.")
	}
	return out
}

func problems(j elasticityjudge.Judged) int {
	n := 0
	for _, x := range j.Runs {
		if x.Problem != nil {
			n++
		}
	}
	return n
}

// Line is one controller's result in words: "empirical: SLA 97.1%, $0.43,
// 4 actions" (means over its runs), with its profit when priced.
func Line(j elasticityjudge.Judged, s elasticityjudge.Summary) string {
	out := fmt.Sprintf("%s: SLA %s, %s", s.Controller, pct(s.SLA.Mean), dollars(s.Cost.Mean))
	if priced(j.RunsOf(s.Controller)) {
		out += ", profit " + dollars(s.Profit.Mean)
	}
	out += ", " + actions(s.Actions.Mean)
	if s.Runs > 1 {
		out += fmt.Sprintf(" (%d runs)", s.Runs)
	}
	return out
}

func actions(mean float64) string {
	if mean == math.Trunc(mean) {
		return format.Plural(int(mean), "action")
	}
	return format.Num(mean) + " actions"
}

// compareTable is the controllers side by side: every metric's mean over
// the controller's runs, with its range when there are several.
func compareTable(j elasticityjudge.Judged) *page.Table {
	anyPriced := false
	for _, s := range j.Summaries {
		anyPriced = anyPriced || priced(j.RunsOf(s.Controller))
	}
	tb := &page.Table{ID: "controller-compare", Title: "The controllers side by side",
		Source: "per controller, the mean (and min – max) over its completed runs of: SLA satisfaction = share of the measured phase's requests answered within the normal threshold (failed and dropped ones are not); " +
			"cost = Σ over measured seconds of every lab host's hourly price in force / 3600; profit = revenue under analysis.plan's SLA steps − cost; actions = decisions that changed the node count without error; " +
			"BUNGEE (Herbst et al.): accuracy = mean share of the nodes demanded (⌈offered req/s / node capacity⌉) missing (under) or in excess (over) per second, timeshare = share of seconds under- or over-provisioned, " +
			"jitter = (supply changes − demand changes) per minute; supply = the tier's nodes serving (an added node from when it served, a removed one until its removal was asked for); " +
			"a controller of several tiers is judged per tier with a node capacity, and its BUNGEE metrics are the tiers' mean",
		Columns: []page.Column{{Title: "Controller"}, {Title: "Runs"}, {Title: "SLA satisfaction", Unit: "%"}, {Title: "Cost", Unit: "$"}}}
	if anyPriced {
		tb.Columns = append(tb.Columns, page.Column{Title: "Profit", Unit: "$"})
	}
	tb.Columns = append(tb.Columns, page.Column{Title: "Actions"},
		page.Column{Title: "Accuracy under θU", Unit: "%"}, page.Column{Title: "Accuracy over θO", Unit: "%"},
		page.Column{Title: "Timeshare under τU", Unit: "%"}, page.Column{Title: "Timeshare over τO", Unit: "%"},
		page.Column{Title: "Jitter", Unit: "/min"})
	for _, s := range j.Summaries {
		runs := j.RunsOf(s.Controller)
		row := []page.Cell{page.Text(s.Controller), page.Number(fmt.Sprint(s.Runs), float64(s.Runs)),
			stat(s.SLA, 100, true), stat(s.Cost, 1, true)}
		if anyPriced {
			if priced(runs) {
				row = append(row, stat(s.Profit, 1, true))
			} else {
				row = append(row, page.Text("not priced"))
			}
		}
		row = append(row, stat(s.Actions, 1, true))
		el := elastic(runs)
		for _, st := range []elasticityjudge.Stat{s.AccuracyUnder, s.AccuracyOver, s.TimeshareUnder, s.TimeshareOver, s.Jitter} {
			row = append(row, stat(st, 1, el))
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

// stat prints a metric's mean, scaled, with its range when it varied.
func stat(s elasticityjudge.Stat, scale float64, known bool) page.Cell {
	if !known {
		return page.Text("no node capacity")
	}
	text := format.Num(s.Mean * scale)
	if s.Min != s.Max {
		text += fmt.Sprintf(" (%s – %s)", format.Num(s.Min*scale), format.Num(s.Max*scale))
	}
	return page.Number(text, s.Mean*scale)
}

func priced(runs []elasticityjudge.Run) bool {
	for _, x := range runs {
		if !x.Result.Priced {
			return false
		}
	}
	return len(runs) > 0
}

func elastic(runs []elasticityjudge.Run) bool {
	for _, x := range runs {
		if !x.Elastic {
			return false
		}
	}
	return len(runs) > 0
}

// runName names a run in prose: "run 3 (empirical, treatment emp,
// repetition 1)".
func runName(x elasticityjudge.Run) string {
	parts := []string{x.Setup.Controller}
	if x.Treatment != "" {
		parts = append(parts, "treatment "+x.Treatment)
	}
	parts = append(parts, fmt.Sprintf("repetition %d", x.Repetition))
	return fmt.Sprintf("run %d (%s)", x.ID, strings.Join(parts, ", "))
}

// start is the run's first measured second, the zero of its time axes.
func start(x elasticityjudge.Run) time.Time { return x.Input.Seconds[0].Start }

func since(x elasticityjudge.Run, t time.Time) float64 { return t.Sub(start(x)).Seconds() }

// timeAxis is the time axis of a run's charts: the whole measured phase,
// so that the load and the satisfaction line up.
func timeAxis(x elasticityjudge.Run) chart.Axis {
	last := x.Input.Seconds[len(x.Input.Seconds)-1].Start
	return chart.Axis{Label: "time since the measured phase began", Unit: "s", Min: chart.At(0), Max: chart.At(since(x, last) + 1)}
}

// loadChart draws the offered and answered load per second and the
// tiers' nodes: as the capacity they supply when the node capacity is
// known, and as a rule at every change of the nodes serving.
func loadChart(x elasticityjudge.Run) *chart.Chart {
	line := &chart.Line{X: timeAxis(x), Y: chart.Axis{Label: "load", Unit: "req/s", Min: chart.At(0)}}
	offered := chart.Series{Name: "offered"}
	answered := chart.Series{Name: "answered"}
	for i, sec := range x.Input.Seconds {
		at := since(x, sec.Start)
		offered.Points = append(offered.Points, chart.Point{X: at, Y: chart.Num(x.Offered[i])})
		answered.Points = append(answered.Points, chart.Point{X: at, Y: chart.Num(x.Answered[i])})
	}
	line.Series = []chart.Series{offered, answered}
	several := len(x.Tiers) > 1
	var names, started []string
	for _, t := range x.Tiers {
		name := "tier capacity"
		if several {
			name = t.Tier + " capacity"
		}
		capacity := chart.Series{Name: fmt.Sprintf("%s (nodes × %s req/s)", name, format.Num(t.NodeCapacity)), Dashed: true}
		for i, sec := range x.Input.Seconds {
			at := since(x, sec.Start)
			capacity.Points = append(capacity.Points, chart.Point{X: at, Y: chart.Num(t.Supply[i] * t.NodeCapacity)})
			if i > 0 && t.Supply[i] != t.Supply[i-1] {
				label := "→ " + format.Plural(int(t.Supply[i]), "node")
				if several {
					label = t.Tier + " " + label
				}
				line.Rules = append(line.Rules, chart.Rule{Axis: "x", Value: at, Label: label})
			}
		}
		if t.NodeCapacity > 0 {
			line.Series = append(line.Series, capacity)
		}
		names = append(names, t.Tier)
		started = append(started, fmt.Sprintf("%s… with %s", t.Tier, format.Plural(int(t.Supply[0]), "node")))
	}
	title := fmt.Sprintf("Load and the %s tier's nodes, %s", strings.Join(names, ", "), runName(x))
	if several {
		title = fmt.Sprintf("Load and the %s tiers' nodes, %s", strings.Join(names, " and "), runName(x))
	}
	return &chart.Chart{ID: fmt.Sprintf("controller-run%d-load", x.ID), Line: line, Title: title,
		Source: fmt.Sprintf("from run %d's measured phase, per second over every operation: offered = answered + failed + dropped; the tiers started as %s; "+
			"a rule marks each change of the nodes serving (from the run's node_change events: an added node from when it served, a removed one from when its removal was asked for)",
			x.ID, strings.Join(started, ", "))}
}

// slaChart draws the satisfaction the controller's sensor read each
// period, at its sensitive and normal thresholds; nil without decisions.
func slaChart(x elasticityjudge.Run) *chart.Chart {
	if len(x.Entries) == 0 {
		return nil
	}
	s := x.Setup
	sens := chart.Series{Name: "within the sensitive threshold " + s.Sensitive.String()}
	norm := chart.Series{Name: "within the normal threshold " + s.Normal.String()}
	for _, e := range x.Entries {
		at := since(x, e.At)
		sv, nv := chart.NaN, chart.NaN
		if e.Requests > 0 {
			sv, nv = chart.Num(100*e.Sensitive), chart.Num(100*e.Normal)
		}
		sens.Points = append(sens.Points, chart.Point{X: at, Y: sv})
		norm.Points = append(norm.Points, chart.Point{X: at, Y: nv})
	}
	return &chart.Chart{ID: fmt.Sprintf("controller-run%d-sla", x.ID),
		Title: "SLA satisfaction per controller period, " + runName(x),
		Source: fmt.Sprintf("from run %d's recorded decisions: at each decision, the share of the requests of the last sensor window answered within each threshold (failures count as not within); a period without requests is left out",
			x.ID),
		Line: &chart.Line{X: timeAxis(x),
			Y: chart.Axis{Label: "requests within the threshold", Unit: "%", Min: chart.At(0), Max: chart.At(100)}, Series: []chart.Series{sens, norm}}}
}

// decisionTable lists every decision with what it read and why it acted.
func decisionTable(x elasticityjudge.Run) *page.Table {
	s := x.Setup
	var bounds []string
	for _, t := range s.AllTiers() {
		bounds = append(bounds, fmt.Sprintf("the %s tier, bounds %d–%d", t.Tier, t.Min, t.Max))
	}
	tb := &page.Table{ID: fmt.Sprintf("controller-run%d-decisions", x.ID), Title: "Decisions of " + runName(x),
		Source: fmt.Sprintf("from run %d's controller_decision events (every %v; the %s controller on %s, %s seeding the ODS); "+
			"satisfaction over the sensor's last window, CPU = the tier's mean utilisation over the last period, answered = req/s over the window; "+
			"ODS = the configuration chosen, its support and the records within the query's radius, or the forecast asked about",
			x.ID, s.Period, s.Controller, strings.Join(bounds, " and "), format.Plural(s.ODSRecords, "record")),
		Columns: []page.Column{{Title: "At", Unit: "s"}, {Title: "Path"}, {Title: "Action"}, {Title: "Nodes → target"},
			{Title: "Sensitive", Unit: "%"}, {Title: "Normal", Unit: "%"}, {Title: "CPU", Unit: "%"}, {Title: "Answered", Unit: "req/s"},
			{Title: "ODS"}, {Title: "Reason"}, {Title: "Error"}}}
	for _, e := range x.Entries {
		nodes, util := nodesCell(e), cpu(e.Utilisation)
		if len(e.Tiers) > 1 {
			util = page.Text(tiersCPU(e))
		}
		errCell := page.Text(e.Error)
		if e.Error != "" {
			errCell.Mark = "fail"
		}
		path := e.Path
		if path == "" {
			path = "–"
		}
		tb.Rows = append(tb.Rows, []page.Cell{
			page.Number(format.Num(since(x, e.At)), since(x, e.At)), page.Text(path), page.Text(e.Action), nodes,
			share(e.Sensitive, e.Requests), share(e.Normal, e.Requests), util,
			page.Number(format.Num(e.Throughput), e.Throughput), page.Text(odsText(e)), page.Text(e.Reason), errCell})
	}
	return tb
}

// nodesCell is a decision's node counts: "2", "1 → 2", or for several
// tiers "app 1 → 2, db 1".
func nodesCell(e runlog.Entry) page.Cell {
	ts := e.AllTiers()
	var parts []string
	total := 0
	for _, t := range ts {
		part := fmt.Sprint(t.Nodes)
		if t.Target != t.Nodes {
			part = fmt.Sprintf("%d → %d", t.Nodes, t.Target)
		}
		if len(ts) > 1 {
			part = t.Tier + " " + part
		}
		parts = append(parts, part)
		total += t.Target
	}
	return page.Number(strings.Join(parts, ", "), float64(total))
}

// tiersCPU is every tier's CPU: "app 85, db 40".
func tiersCPU(e runlog.Entry) string {
	var parts []string
	for _, t := range e.AllTiers() {
		v := "not monitored"
		if t.Utilisation >= 0 {
			v = format.Num(100 * t.Utilisation)
		}
		parts = append(parts, t.Tier+" "+v)
	}
	return strings.Join(parts, ", ")
}

func share(v float64, requests int64) page.Cell {
	if requests == 0 {
		return page.Text("no requests")
	}
	return page.Number(format.Num(100*v), 100*v)
}

func cpu(u float64) page.Cell {
	if u < 0 {
		return page.Text("not monitored")
	}
	return page.Number(format.Num(100*u), 100*u)
}

// odsText is what the decision asked of the ODS and what it answered.
func odsText(e runlog.Entry) string {
	var parts []string
	if e.Config != "" {
		parts = append(parts, fmt.Sprintf("%s (support %d)", e.Config, e.Support))
	}
	if e.Records > 0 {
		parts = append(parts, format.Plural(e.Records, "record")+" within the radius")
	}
	if e.Forecast > 0 {
		parts = append(parts, "forecast "+format.Num(e.Forecast)+" req/s")
	}
	return strings.Join(parts, "; ")
}

func note(level, text string) page.Block {
	return page.Block{Note: &page.Note{Level: level, Text: format.Sentence(text)}}
}

func pct(v float64) string { return format.Num(100*v) + "%" }

// dollars prints an amount: "$0.4312", "−$0.01".
func dollars(v float64) string {
	if v < 0 {
		return "−$" + format.Num(-v)
	}
	return "$" + format.Num(v)
}
