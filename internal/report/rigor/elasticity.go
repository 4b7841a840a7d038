package rigor

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/elasticity"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// ElasticitySections is the report section of the runs in which cluster
// nodes were added or removed (internal/analysis/elasticity, seed 002
// §III): per change the time until the node served, the data streamed,
// throughput and p99 before and after, how long each took to settle, the
// seconds in SLO violation and the latency excess of the transition, and
// the throughput one node added; per run its timeline with the changes
// marked. No section without a node change.
func ElasticitySections(r *results.Results) ([]page.Section, error) {
	runs, err := elasticity.FromResults(r, elasticity.Config{})
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	sec := page.Section{ID: "elasticity", Title: "Elasticity: nodes added and removed during runs"}
	var summary []string
	for _, x := range runs {
		name := runName(x)
		if x.Problem != nil {
			sec.Blocks = append(sec.Blocks, note("warning", capital(name+": "+x.Problem.Error())))
			continue
		}
		summary = append(summary, format.Sentence(format.Capitalize(name+": "+elasticityText(x))))
		sec.Blocks = append(sec.Blocks, elasticityTable(x), page.Block{Chart: timelineChart(x, "throughput")}, page.Block{Chart: timelineChart(x, "p99")})
		var notes []string
		for _, m := range x.Result.Changes {
			notes = append(notes, m.Notes...)
		}
		for _, n := range format.Distinct(notes) {
			sec.Blocks = append(sec.Blocks, note("info", capital(n)))
		}
	}
	sec.Summary = strings.Join(summary, " ")
	return []page.Section{sec}, nil
}

// runName names a run in prose: "run 3 (big, 400 req/s, repetition 1)".
func runName(x elasticity.Run) string {
	parts := []string{}
	if x.Treatment.Name != "" {
		parts = append(parts, x.Treatment.Name)
	}
	parts = append(parts, format.LoadText(x.Treatment.Load.Model, x.Run.Level), fmt.Sprintf("repetition %d", x.Run.Repetition))
	return fmt.Sprintf("run %d (%s)", x.Run.ID, strings.Join(parts, ", "))
}

// elasticityText is a run's changes in one sentence; the section's
// summary and the terminal finding use it.
func elasticityText(x elasticity.Run) string {
	var parts []string
	for _, m := range x.Result.Changes {
		parts = append(parts, changeText(m, x.Result.Config))
	}
	return strings.Join(parts, "; then ")
}

func changeText(m elasticity.Metrics, cfg elasticity.Config) string {
	c := m.Change
	verb, done := "adding", "served"
	if c.Delta < 0 {
		verb, done = "removing", "was out"
	}
	s := fmt.Sprintf("%s %s", verb, c.Node)
	if c.Host != "" {
		s += " on " + c.Host
	}
	if !m.Served {
		what := "never served"
		if c.Delta < 0 {
			what = "never completed"
		}
		s += " " + what
	} else {
		s += fmt.Sprintf(" %s after %s", done, secs(m.ToServe))
		if c.BytesStreamed >= 0 {
			s += fmt.Sprintf(" (%s streamed)", bytesText(c.BytesStreamed))
		}
	}
	s += fmt.Sprintf(", throughput %s → %s ok/s (%s per node)", format.Num(m.Before.Throughput), format.Num(m.After.Throughput), signed(m.GainPerNode))
	if m.Settled() {
		s += fmt.Sprintf(", throughput and p99 back within %.0f%% of the new steady state after %s and %s", 100*cfg.Tolerance, secs(m.ThroughputSettle), secs(m.P99Settle))
	} else {
		s += fmt.Sprintf(", not back within %.0f%% when the window ended", 100*cfg.Tolerance)
	}
	if !math.IsNaN(m.SLOSeconds) {
		s += fmt.Sprintf(", %s in SLO violation", format.Seconds(m.SLOSeconds))
	}
	if !math.IsNaN(m.LatencyExcess) {
		s += fmt.Sprintf(", latency excess %s ms·s", format.Num(m.LatencyExcess))
	}
	return s
}

func elasticityTable(x elasticity.Run) page.Block {
	cfg := x.Result.Config
	skipped := ""
	if x.Skipped > 0 {
		skipped = fmt.Sprintf(" (%s shorter than half an interval left out)", format.Plural(x.Skipped, "partial interval"))
	}
	src := fmt.Sprintf("from run %d's measured phase, %s intervals of every operation type together%s and its node_change events; "+
		"windows are cut at each change's request, an interval counting in the window it ends in; "+
		"steady state = the median throughput and median p99 over the last %v of a window, from when its change was done; before = the previous window's, after = the change's own; "+
		"settle = from the request to the first interval inside the band (throughput ≥ %.0f%% of after, p99 ≤ %.0f%% of after) after the last run of more than %s outside it; "+
		"transition = from the request to the latest of the change being done and both settles; SLO violation = length of the transition's intervals that failed the SLO; "+
		"latency excess = Σ max(0, p99 − after p99) × interval over the transition; gain per node = (after − before) / nodes added (a removal counts −1)",
		x.Run.ID, intervalText(x), skipped, cfg.Steady, 100*(1-cfg.Tolerance), 100*(1+cfg.Tolerance), format.Plural(cfg.Excursion, "interval"))
	tb := &page.Table{ID: fmt.Sprintf("elasticity-run%d", x.Run.ID), Title: "Node changes of " + runName(x), Source: src,
		Columns: []page.Column{{Title: "change"}, {Title: "node"}, {Title: "host"}, {Title: "requested at (s)", Unit: "s"},
			{Title: "to start (s)", Unit: "s"}, {Title: "to serve (s)", Unit: "s"}, {Title: "streamed (bytes)", Unit: "bytes"},
			{Title: "throughput before (ok/s)", Unit: "ok/s"}, {Title: "throughput after (ok/s)", Unit: "ok/s"}, {Title: "gain per node (ok/s)", Unit: "ok/s"},
			{Title: "p99 before (ms)", Unit: "ms"}, {Title: "p99 after (ms)", Unit: "ms"},
			{Title: "throughput settle (s)", Unit: "s"}, {Title: "p99 settle (s)", Unit: "s"}, {Title: "transition (s)", Unit: "s"},
			{Title: "SLO violation (s)", Unit: "s"}, {Title: "latency excess (ms·s)", Unit: "ms·s"}}}
	for _, m := range x.Result.Changes {
		c := m.Change
		host := c.Host
		if host == "" {
			host = "this machine"
		}
		streamed := page.Text("unknown")
		if c.BytesStreamed >= 0 {
			streamed = page.Number(bytesText(c.BytesStreamed), float64(c.BytesStreamed))
		}
		serve := durCell(m.ToServe)
		if !m.Served {
			serve = verdictCell("never", "warn")
		}
		slo := page.Text("no SLO")
		if !math.IsNaN(m.SLOSeconds) {
			slo = numCell(m.SLOSeconds, 1)
			if m.SLOSeconds > 0 {
				slo.Mark = "warn"
			}
		}
		tb.Rows = append(tb.Rows, []page.Cell{page.Text(c.Action), page.Text(c.Node), page.Text(host),
			numCell(c.Requested.Sub(x.Origin).Seconds(), 1), durCell(m.ToStart), serve, streamed,
			numCell(m.Before.Throughput, 1), numCell(m.After.Throughput, 1), numCell(m.GainPerNode, 1),
			numCell(m.Before.P99/1000, 2), numCell(m.After.P99/1000, 2),
			durCell(m.ThroughputSettle), durCell(m.P99Settle), numCell(m.Transition().Seconds(), 1), slo, numCell(m.LatencyExcess, 1)})
	}
	return page.Block{Table: tb}
}

// timelineChart is the run's per-interval throughput or p99 with every
// change's request and completion marked and its transition shaded.
func timelineChart(x elasticity.Run, what string) *chart.Chart {
	at := func(t time.Time) float64 { return t.Sub(x.Origin).Seconds() }
	line := &chart.Line{X: chart.Axis{Label: "time", Unit: "s"}, RangesName: "transition (request until settled)"}
	for _, m := range x.Result.Changes {
		c := m.Change
		line.Rules = append(line.Rules, chart.Rule{Axis: "x", Value: at(c.Requested), Label: c.Action + " " + c.Node + " requested"})
		if m.Served && !c.Done.Equal(c.Requested) {
			state := "serving"
			if c.Delta < 0 {
				state = "out"
			}
			line.Rules = append(line.Rules, chart.Rule{Axis: "x", Value: at(c.Done), Label: c.Node + " " + state})
		}
		if m.TransitionEnd.After(c.Requested) {
			line.Ranges = append(line.Ranges, chart.Range{From: at(c.Requested), To: at(m.TransitionEnd),
				Label: fmt.Sprintf("%s %s: transition %s", c.Action, c.Node, secs(m.Transition()))})
		}
	}
	s := chart.Series{Name: "run " + fmt.Sprint(x.Run.ID)}
	src := fmt.Sprintf("run %d's measured phase, %s intervals, every operation type together; time from the start of the measured phase", x.Run.ID, intervalText(x))
	c := &chart.Chart{Line: line}
	if what == "throughput" {
		line.Y = chart.Axis{Label: "throughput", Unit: "ok/s", Min: chart.At(0)}
		for _, p := range x.Input.Points {
			s.Points = append(s.Points, chart.Point{X: at(p.Start), Y: chart.Num(p.Throughput)})
		}
		line.Series = append(line.Series, s)
		if x.Input.Offered > 0 && len(s.Points) > 0 {
			line.Series = append(line.Series, chart.Series{Name: "offered", Dashed: true,
				Points: []chart.Point{{X: s.Points[0].X, Y: chart.Num(x.Input.Offered)}, {X: s.Points[len(s.Points)-1].X, Y: chart.Num(x.Input.Offered)}}})
		}
		c.ID, c.Title, c.Source = fmt.Sprintf("elasticity-run%d-throughput", x.Run.ID), "Throughput per interval, "+runName(x), src+"; successful requests per second"
		return c
	}
	maxUS := 0.0
	var all []float64
	for _, p := range x.Input.Points {
		if !math.IsNaN(p.P99) {
			maxUS = math.Max(maxUS, p.P99)
			all = append(all, p.P99)
		}
	}
	if x.SLO != nil {
		maxUS = math.Max(maxUS, us(x.SLO.Threshold))
	}
	unit, div := format.LatencyUnit(maxUS)
	line.Y = chart.Axis{Label: "p99 latency", Unit: unit, Log: wantLog(all)}
	if !line.Y.Log {
		line.Y.Min = chart.At(0)
	}
	for _, p := range x.Input.Points {
		s.Points = append(s.Points, chart.Point{X: at(p.Start), Y: chart.Num(p.P99 / div)})
	}
	line.Series = append(line.Series, s)
	if x.SLO != nil {
		line.Rules = append(line.Rules, chart.Rule{Axis: "y", Value: us(x.SLO.Threshold) / div, Label: "SLO threshold " + x.SLO.Threshold.String()})
	}
	c.ID, c.Title, c.Source = fmt.Sprintf("elasticity-run%d-p99", x.Run.ID), "p99 latency per interval, "+runName(x), src+"; p99 of successful requests"
	return c
}

func intervalText(x elasticity.Run) string {
	if len(x.Input.Points) == 0 {
		return "no"
	}
	return format.Seconds(x.Input.Points[0].Dur.Seconds())
}

// durCell prints a duration in seconds; a negative one is unknown.
func durCell(d time.Duration) page.Cell {
	if d < 0 {
		return page.Text("–")
	}
	return numCell(d.Seconds(), 1)
}

// secs prints a duration in seconds with one decimal; negative = never.
func secs(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func signed(v float64) string {
	if math.IsNaN(v) {
		return "undefined"
	}
	if v > 0 {
		return "+" + format.Num(v)
	}
	return format.Num(v)
}

// bytesText prints a byte count with a binary unit.
func bytesText(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, exp := float64(b), 0
	for v >= unit && exp < 4 {
		v /= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[exp-1])
}

// addElasticityFinding adds one "Elasticity" finding per run of the
// treatment with node changes.
func addElasticityFinding(r *results.Results, treatment string, add func(label, text string)) error {
	runs, err := elasticity.FromResults(r, elasticity.Config{})
	if err != nil {
		return err
	}
	for _, x := range runs {
		if x.Run.Treatment != treatment {
			continue
		}
		if x.Problem != nil {
			add("note", "elasticity of "+runName(x)+": "+x.Problem.Error())
			continue
		}
		add("Elasticity", runName(x)+": "+elasticityText(x))
	}
	return nil
}
