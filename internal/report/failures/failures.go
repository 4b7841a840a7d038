// Package failures is the report's section on failure scenarios and
// acknowledged writes: the lost-write verdict first (red), then per run
// the failure timeline (per-second availability, throughput and p99 with
// the events marked), the table of scenarios (window, yield, harvest,
// time to detect, MTTR, degraded-mode capacity) and the run's
// availability over its failures, and the write checks. It renders what
// internal/analysis/availability computed; the definitions are in that
// package's comment and docs/failures.md.
package failures

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/availability"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// SectionID is the section's anchor (the answer card links lost writes
// to it).
const SectionID = "failures"

// ReportSections is the failures section of a campaign whose runs had
// fault events or write checks; none otherwise.
func ReportSections(r *results.Results) ([]page.Section, error) {
	runs, err := availability.FromResults(r)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	sec := page.Section{ID: SectionID, Title: "Failures and recovery"}
	for _, v := range LostVerdicts(runs) {
		sec.Blocks = append(sec.Blocks, page.Block{Note: &page.Note{Level: "warning", Text: format.Capitalize(format.Sentence(v))}})
	}
	var summary []string
	for _, x := range runs {
		name := runName(x)
		if x.Problem != nil {
			sec.Blocks = append(sec.Blocks, page.Block{Note: &page.Note{Level: "warning", Text: format.Capitalize(format.Sentence(name + ": " + x.Problem.Error()))}})
			continue
		}
		if len(x.Result.Scenarios) > 0 {
			summary = append(summary, format.Capitalize(format.Sentence(name+": "+RunText(x))))
			sec.Blocks = append(sec.Blocks, scenarioTable(x),
				page.Block{Chart: timeline(x, "availability")}, page.Block{Chart: timeline(x, "throughput")}, page.Block{Chart: timeline(x, "p99")})
			for _, sc := range x.Result.Scenarios {
				if sc.Problem != "" {
					sec.Blocks = append(sec.Blocks, page.Block{Note: &page.Note{Level: "info", Text: format.Capitalize(format.Sentence(fmt.Sprintf("%s, %s: %s", name, faultName(sc.Fault), sc.Problem)))}})
				}
			}
		}
	}
	if tb := checkTable(runs); tb != nil {
		sec.Blocks = append(sec.Blocks, page.Block{Table: tb})
		summary = append(summary, format.Capitalize(format.Sentence(checksText(runs))))
	}
	sec.Summary = strings.Join(summary, " ")
	return []page.Section{sec}, nil
}

// LostVerdicts are one sentence per run whose write check found
// acknowledged records lost (no trailing full stop).
func LostVerdicts(runs []availability.Run) []string {
	var out []string
	for _, x := range runs {
		for _, c := range x.Checks {
			if c.Lost == 0 {
				continue
			}
			v := fmt.Sprintf("LOST WRITES: %s lost %d of %d acknowledged records after %s (%d stable, %d never read; first key numbers %s)",
				runName(x), c.Lost, c.Checked, triggerText(c.Trigger), c.Stable, c.NeverRead, keys(c.FirstLost))
			if c.HolesForgotten {
				v += "; the run had more failed inserts than the generator remembers, so some of them may never have been acknowledged"
			}
			out = append(out, v)
		}
	}
	return out
}

// RunText is a run's failures in one sentence: each scenario, then the
// availability over the run.
func RunText(x availability.Run) string {
	var parts []string
	for _, sc := range x.Result.Scenarios {
		parts = append(parts, scenarioText(x, sc))
	}
	res := x.Result
	s := strings.Join(parts, "; ")
	s += fmt.Sprintf("; request availability %s", pct(res.Requests, 2))
	if res.Failures > 0 {
		s += fmt.Sprintf(", uptime/(uptime+downtime) %s over %s (MTTF %s, MTTR %s)", pct(res.Availability, 2),
			format.Plural(res.Failures, "failure"), secs(res.MTTF), secs(res.MTTR))
	}
	return s
}

func scenarioText(x availability.Run, sc availability.Scenario) string {
	s := faultName(sc.Fault) + " at " + secs(sc.Fault.At.Sub(x.Origin))
	if sc.Recovery.Action != "" {
		s += fmt.Sprintf(", %s at %s", faultName(sc.Recovery), secs(sc.Recovery.At.Sub(x.Origin)))
	} else {
		s += ", no recovery event"
	}
	switch {
	case sc.Problem != "":
		return s + fmt.Sprintf(": yield %s", pct(sc.Yield, 1))
	case !sc.Detected:
		return s + ": no visible effect on the clients"
	}
	s += fmt.Sprintf(": detected after %s (%s), yield %s, harvest %s, degraded capacity %s", secs(sc.Detect), sc.DetectedBy, pct(sc.Yield, 1), pct(sc.Harvest, 1), pct(sc.Degraded, 0))
	if sc.Recovered {
		s += ", MTTR " + secs(sc.MTTR)
	} else {
		s += fmt.Sprintf(", not back within %.0f%% before the run ended (%s so far)", 100*tolerance(x), secs(sc.MTTR))
	}
	return s
}

func checksText(runs []availability.Run) string {
	var n, lost, checked int64
	for _, x := range runs {
		for _, c := range x.Checks {
			n++
			lost += c.Lost
			checked += c.Checked
		}
	}
	if lost > 0 {
		return fmt.Sprintf("the write checks found %d of %d acknowledged records lost", lost, checked)
	}
	return fmt.Sprintf("%s read back all %d acknowledged records (none lost)", format.Plural(int(n), "write check"), checked)
}

func scenarioTable(x availability.Run) page.Block {
	cfg := x.Config
	src := fmt.Sprintf("from run %d's measured phase (%s intervals, every operation type together) and its fault events; "+
		"window = fault to its recovery event, an interval counting when its midpoint is inside; yield = successful / due (due = successful + failed + dropped); "+
		"harvest = successful / (successful + not found); steady = median throughput and p99 over the %s before the fault; "+
		"detect = fault to the end of the first interval with failures above the steady share, no success, or p99 > %g × steady; "+
		"MTTR = fault to the first of %s within %s of steady throughput and p99; degraded capacity = window throughput / steady",
		x.Run.ID, intervalText(x), secs(orDefault(cfg.Steady, availability.DefaultSteady)), orDefaultF(cfg.DetectFactor, availability.DefaultDetectFactor),
		format.Plural(orDefaultI(cfg.Stable, availability.DefaultStable), "consecutive interval"), pct(tolerance(x), 0))
	tb := &page.Table{ID: fmt.Sprintf("failures-run%d", x.Run.ID), Title: "Failure scenarios of " + runName(x), Source: src,
		Columns: []page.Column{{Title: "fault"}, {Title: "at (s)", Unit: "s"}, {Title: "recovery"}, {Title: "window (s)", Unit: "s"},
			{Title: "due"}, {Title: "yield (%)", Unit: "%"}, {Title: "harvest (%)", Unit: "%"},
			{Title: "detect (s)", Unit: "s"}, {Title: "shown by"}, {Title: "MTTR (s)", Unit: "s"},
			{Title: "steady (ok/s)", Unit: "ok/s"}, {Title: "during (ok/s)", Unit: "ok/s"}, {Title: "degraded capacity (%)", Unit: "%"},
			{Title: "steady p99 (ms)", Unit: "ms"}}}
	for _, sc := range x.Result.Scenarios {
		rec := page.Text("none")
		if sc.Recovery.Action != "" {
			rec = page.Text(fmt.Sprintf("%s at %.1f s", faultName(sc.Recovery), sc.Recovery.At.Sub(x.Origin).Seconds()))
		}
		detect, by, mttr := page.Text("not seen"), page.Text("–"), page.Text("–")
		if sc.Detected {
			detect, by = num(sc.Detect.Seconds(), 1), page.Text(sc.DetectedBy)
			mttr = num(sc.MTTR.Seconds(), 1)
			if !sc.Recovered {
				mttr = page.Cell{Text: fmt.Sprintf("> %.1f", sc.MTTR.Seconds()), Mark: "warn"}
			}
		}
		yield := num(100*sc.Yield, 1)
		if sc.Yield < 1 {
			yield.Mark = "warn"
		}
		tb.Rows = append(tb.Rows, []page.Cell{page.Text(faultName(sc.Fault)), num(sc.Fault.At.Sub(x.Origin).Seconds(), 1), rec,
			num(sc.To.Sub(sc.From).Seconds(), 1), page.Number(fmt.Sprint(sc.Due), float64(sc.Due)), yield, num(100*sc.Harvest, 1),
			detect, by, mttr, num(sc.Before.Throughput, 1), num(sc.During, 1), num(100*sc.Degraded, 0), num(sc.Before.P99/1000, 2)})
	}
	res := x.Result
	tb.Rows = append(tb.Rows, []page.Cell{page.Text("whole run"), page.Text("–"), page.Text(fmt.Sprintf("%s; MTTF %s, MTTR %s", format.Plural(res.Failures, "failure"), secs(res.MTTF), secs(res.MTTR))),
		num(res.Span.Seconds(), 1), page.Text("–"), num(100*res.Requests, 2), page.Text("–"), page.Text("–"), page.Text("–"),
		num(res.Downtime.Seconds(), 1), page.Text("–"), page.Text("–"), page.Text("–"), page.Text("uptime/(uptime+downtime) " + pct(res.Availability, 2))})
	return page.Block{Table: tb}
}

// timeline is the run's per-interval availability, throughput or p99,
// every event marked and each failure window shaded.
func timeline(x availability.Run, what string) *chart.Chart {
	at := func(t time.Time) float64 { return t.Sub(x.Origin).Seconds() }
	line := &chart.Line{X: chart.Axis{Label: "time", Unit: "s"}, RangesName: "failure window (fault to recovery event)"}
	for _, sc := range x.Result.Scenarios {
		line.Rules = append(line.Rules, chart.Rule{Axis: "x", Value: at(sc.Fault.At), Label: faultName(sc.Fault)})
		if sc.Recovery.Action != "" {
			line.Rules = append(line.Rules, chart.Rule{Axis: "x", Value: at(sc.Recovery.At), Label: faultName(sc.Recovery)})
		}
		line.Ranges = append(line.Ranges, chart.Range{From: at(sc.From), To: at(sc.To), Label: faultName(sc.Fault)})
		if sc.Detected && sc.Recovered && sc.MTTR > 0 {
			line.Rules = append(line.Rules, chart.Rule{Axis: "x", Value: at(sc.RecoveredAt), Label: "recovered (MTTR " + secs(sc.MTTR) + ")"})
		}
	}
	s := chart.Series{Name: fmt.Sprintf("run %d", x.Run.ID)}
	src := fmt.Sprintf("run %d's measured phase, %s intervals, every operation type together; time from the start of the measured phase", x.Run.ID, intervalText(x))
	c := &chart.Chart{Line: line}
	switch what {
	case "availability":
		line.Y = chart.Axis{Label: "availability", Unit: "%", Min: chart.At(0), Max: chart.At(100)}
		for _, p := range x.Result.Timeline {
			s.Points = append(s.Points, chart.Point{X: at(p.Start), Y: chart.Num(100 * p.Availability)})
		}
		c.ID, c.Title, c.Source = fmt.Sprintf("failures-run%d-availability", x.Run.ID), "Availability per interval, "+runName(x), src+"; successful / due requests (a gap: none due)"
	case "throughput":
		line.Y = chart.Axis{Label: "throughput", Unit: "ok/s", Min: chart.At(0)}
		for _, p := range x.Result.Timeline {
			s.Points = append(s.Points, chart.Point{X: at(p.Start), Y: chart.Num(p.Throughput)})
		}
		c.ID, c.Title, c.Source = fmt.Sprintf("failures-run%d-throughput", x.Run.ID), "Throughput per interval, "+runName(x), src+"; successful requests per second"
	default:
		maxUS := 0.0
		for _, p := range x.Result.Timeline {
			if !math.IsNaN(p.P99) {
				maxUS = math.Max(maxUS, p.P99)
			}
		}
		unit, div := format.LatencyUnit(maxUS)
		line.Y = chart.Axis{Label: "p99 latency", Unit: unit, Log: maxUS > 0, Min: nil}
		for _, p := range x.Result.Timeline {
			s.Points = append(s.Points, chart.Point{X: at(p.Start), Y: chart.Num(p.P99 / div)})
		}
		c.ID, c.Title, c.Source = fmt.Sprintf("failures-run%d-p99", x.Run.ID), "p99 latency per interval, "+runName(x), src+"; p99 of successful requests (a gap: none succeeded)"
	}
	line.Series = append(line.Series, s)
	return c
}

func checkTable(runs []availability.Run) *page.Table {
	tb := &page.Table{ID: "failures-write-checks", Title: "Acknowledged writes read back after the runs",
		Source: "every record the target acknowledged (populated, and the run's inserts that succeeded; a failed or timed-out insert was never acknowledged) read back after the run's faults were healed, " +
			"at the target's strongest consistency (Cassandra ALL, a PostgreSQL or Redis primary): stable = read back, lost = not found, never read = the read failed",
		Columns: []page.Column{{Title: "run"}, {Title: "after"}, {Title: "checked"}, {Title: "stable"}, {Title: "lost"}, {Title: "never read"},
			{Title: "first lost key numbers"}, {Title: "strongest reads"}, {Title: "took (s)", Unit: "s"}}}
	for _, x := range runs {
		for _, c := range x.Checks {
			lost := page.Number(fmt.Sprint(c.Lost), float64(c.Lost))
			lost.Mark = "pass"
			if c.Lost > 0 {
				lost.Mark = "fail"
			}
			never := page.Number(fmt.Sprint(c.NeverRead), float64(c.NeverRead))
			if c.NeverRead > 0 {
				never.Mark = "warn"
			}
			strong := "yes"
			if !c.Strong {
				strong = "no: the target's ordinary reads"
			}
			tb.Rows = append(tb.Rows, []page.Cell{page.Text(runName(x)), page.Text(triggerText(c.Trigger)), page.Number(fmt.Sprint(c.Checked), float64(c.Checked)),
				page.Number(fmt.Sprint(c.Stable), float64(c.Stable)), lost, never, page.Text(keys(c.FirstLost)), page.Text(strong), num(c.Seconds, 1)})
		}
	}
	if len(tb.Rows) == 0 {
		return nil
	}
	return tb
}

// runName names a run in prose: "run 3 (big, 400 req/s, repetition 1)".
func runName(x availability.Run) string {
	var parts []string
	if x.Treatment.Name != "" {
		parts = append(parts, x.Treatment.Name)
	}
	parts = append(parts, format.LoadText(x.Treatment.Load.Model, x.Run.Level), fmt.Sprintf("repetition %d", x.Run.Repetition))
	return fmt.Sprintf("run %d (%s)", x.Run.ID, strings.Join(parts, ", "))
}

func faultName(e availability.Event) string {
	if e.Host == "" {
		return e.Action
	}
	return e.Action + " " + e.Host
}

func triggerText(trigger string) string {
	switch trigger {
	case "fault":
		return "the run's faults"
	case "spec":
		return "the run (analysis.failures.write_check)"
	}
	return "the cluster change"
}

func keys(ks []uint64) string {
	if len(ks) == 0 {
		return "–"
	}
	var s []string
	for _, k := range ks {
		s = append(s, fmt.Sprint(k))
	}
	return strings.Join(s, ", ")
}

func intervalText(x availability.Run) string {
	if len(x.Result.Timeline) == 0 {
		return "no"
	}
	return format.Seconds(x.Result.Timeline[0].Dur.Seconds())
}

func tolerance(x availability.Run) float64 {
	return orDefaultF(x.Config.Tolerance, availability.DefaultTolerance)
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func orDefaultF(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func orDefaultI(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func num(v float64, decimals int) page.Cell {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return page.Text("–")
	}
	return page.Number(fmt.Sprintf("%.*f", decimals, v), v)
}

func pct(v float64, decimals int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.*f%%", decimals, 100*v)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
