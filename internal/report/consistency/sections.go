package consistency

import (
	"fmt"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/sessions"
	"github.com/headroom-dev/headroom/internal/analysis/staleness"
	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// ReportSections is the consistency section: none for a campaign without
// an operation history. An analysis that cannot run becomes a section
// saying why, so the rest of the report is still written.
func ReportSections(r *results.Results) ([]page.Section, error) {
	runs, err := Build(r)
	if err != nil {
		return []page.Section{{ID: SectionID, Title: "Consistency",
			Summary: "The consistency analyses could not run.",
			Blocks:  []page.Block{{Note: &page.Note{Level: "warning", Text: err.Error()}}}}}, nil
	}
	if len(runs) == 0 {
		return nil, nil
	}
	return []page.Section{Section(runs)}, nil
}

// Section renders the runs' consistency figures.
func Section(runs []Run) page.Section {
	s := page.Section{ID: SectionID, Title: "Consistency", Summary: summary(runs)}
	s.Blocks = append(s.Blocks,
		page.Block{Table: stalenessTable(runs)},
		page.Block{Chart: cdfChart(runs)},
		page.Block{Chart: freshChart(runs)},
		page.Block{Table: violationTable(runs)},
		page.Block{Table: linTable(runs)})
	for _, run := range runs {
		for _, k := range run.Linearized {
			if k.Status == history.Violation {
				s.Blocks = append(s.Blocks, page.Block{Note: &page.Note{Level: "warning",
					Text: fmt.Sprintf("%s, key %q is not linearizable: %s.", runName(run), k.Key, k.Counterexample)}})
				break // one counterexample a run; the table counts the rest
			}
		}
	}
	s.Blocks = append(s.Blocks, page.Block{Note: &page.Note{Level: "info", Text: "t-visibility of a write = from its acknowledgement " +
		"until the last read invoked after it that still returned an older version (0 when none did); a write whose window was still " +
		"open at the end of the run is censored and left out of the percentiles. ± is the clock-offset uncertainty of the hosts " +
		"that timed the write and the read. Definitions: docs/consistency.md."}})
	return s
}

func runName(run Run) string {
	if run.Treatment == "" {
		return fmt.Sprintf("run %d", run.RunID)
	}
	return fmt.Sprintf("%s (run %d)", run.Treatment, run.RunID)
}

func groupName(g staleness.Group) string {
	w, r := g.WriteLevel, g.ReadLevel
	if w == "" {
		w = "default"
	}
	if r == "" {
		r = "default"
	}
	return "write " + w + " / read " + r
}

// ms prints ns as milliseconds with a ± when u > 0.
func ms(ns, u int64) string {
	s := format.Page.Micros(float64(ns) / 1e3)
	if u > 0 {
		s += " ± " + format.Page.Micros(float64(u)/1e3)
	}
	return s
}

func summary(runs []Run) string {
	var parts []string
	for _, run := range runs {
		for _, l := range run.Staleness.Levels {
			p99, ok := l.Quantile(0.99)
			if !ok {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s at %s: %s (%s of reads stale)",
				groupName(l.Group), runName(run), ms(p99, l.UncertaintyNS), format.Page.Percent(100*l.StaleShare(), 2)))
		}
	}
	v := 0
	lin := 0
	for _, run := range runs {
		t := run.Sessions.Total
		v += t.MonotonicRead + t.ReadYourWrites + t.MonotonicWrite
		lin += LinCounts(run.Linearized)[history.Violation]
	}
	s := "No acknowledged write was followed by a read"
	if len(parts) > 0 {
		s = "p99 t-visibility: " + strings.Join(parts, "; ")
	}
	return format.Sentence(fmt.Sprintf("%s. %s; %s", s, format.Capitalize(format.Plural(v, "session-guarantee violation")),
		format.Plural(lin, "key")+" not linearizable"))
}

func stalenessTable(runs []Run) *page.Table {
	t := &page.Table{ID: "consistency-staleness", Title: "t-visibility per configuration",
		Source: "from each run's operation history: every acknowledged write and every read at each level invoked after it",
		Columns: []page.Column{{Title: "run"}, {Title: "levels"}, {Title: "writes"}, {Title: "censored"},
			{Title: "p50", Unit: "ms"}, {Title: "p95", Unit: "ms"}, {Title: "p99", Unit: "ms"}, {Title: "max", Unit: "ms"},
			{Title: "stale reads", Unit: "%"}, {Title: "max k"}, {Title: "clock ±", Unit: "ms"}}}
	for _, run := range runs {
		for _, l := range run.Staleness.Levels {
			row := []page.Cell{page.Text(runName(run)), page.Text(groupName(l.Group)),
				page.Number(fmt.Sprint(len(l.Windows)), float64(len(l.Windows))),
				page.Number(fmt.Sprint(l.Censored()), float64(l.Censored()))}
			for _, q := range []float64{0.5, 0.95, 0.99, 1} {
				v, ok := l.Quantile(q)
				if !ok {
					row = append(row, page.Text(format.Page.Missing))
					continue
				}
				row = append(row, page.Estimate(ms(v, l.UncertaintyNS), float64(v)/1e6, float64(l.UncertaintyNS)/1e6))
			}
			var maxK int64
			for _, k := range l.KStale {
				maxK = max(maxK, k.K)
			}
			row = append(row, page.Number(format.Page.Percent(100*l.StaleShare(), 3), 100*l.StaleShare()),
				page.Number(fmt.Sprint(maxK), float64(maxK)),
				page.Number(ms(l.UncertaintyNS, 0), float64(l.UncertaintyNS)/1e6))
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// cdfPoints is the most points a CDF series draws.
const cdfPoints = 200

func cdfChart(runs []Run) *chart.Chart {
	c := &chart.Chart{ID: "consistency-cdf", Title: "t-visibility CDF per configuration",
		Source: "resolved windows of each run's acknowledged writes; censored windows count as not yet visible",
		Line: &chart.Line{X: chart.Axis{Label: "time since the write was acknowledged", Unit: "ms", Min: chart.At(0)},
			Y: chart.Axis{Label: "writes visible", Unit: "%", Min: chart.At(0), Max: chart.At(100)}}}
	for _, run := range runs {
		for _, l := range run.Staleness.Levels {
			v := l.Visibility()
			if len(v) == 0 {
				continue
			}
			s := chart.Series{Name: runName(run) + " · " + groupName(l.Group)}
			n := float64(len(l.Windows))
			stride := max(1, len(v)/cdfPoints)
			for i := 0; i < len(v); i += stride {
				j := i
				for j+1 < len(v) && v[j+1] == v[i] {
					j++ // the CDF at v[i] counts every window equal to it
				}
				s.Points = append(s.Points, chart.Point{X: float64(v[i]) / 1e6, Y: chart.Num(100 * float64(j+1) / n)})
			}
			if last := v[len(v)-1]; s.Points[len(s.Points)-1].X != float64(last)/1e6 {
				s.Points = append(s.Points, chart.Point{X: float64(last) / 1e6, Y: chart.Num(100 * float64(len(v)) / n)})
			}
			c.Line.Series = append(c.Line.Series, s)
		}
	}
	if len(c.Line.Series) == 0 {
		c.Line.Series = []chart.Series{{Name: "no resolved window"}}
	}
	return c
}

func freshChart(runs []Run) *chart.Chart {
	c := &chart.Chart{ID: "consistency-fresh", Title: "Probability of a fresh read by time since the write (PBS)",
		Source: "every read invoked after an acknowledged write of its key, by time since the newest such write, in bins (plotted at the bin's upper edge)",
		Line: &chart.Line{X: chart.Axis{Label: "time since the write was acknowledged", Unit: "ms", Log: true},
			Y: chart.Axis{Label: "fresh reads", Unit: "%", Min: chart.At(0), Max: chart.At(100)}}}
	for _, run := range runs {
		for _, l := range run.Staleness.Levels {
			s := chart.Series{Name: runName(run) + " · " + groupName(l.Group)}
			for _, b := range l.Curve {
				if b.Reads == 0 || b.ToNS == math.MaxInt64 {
					continue
				}
				s.Points = append(s.Points, chart.Point{X: float64(b.ToNS) / 1e6, Y: chart.Num(100 * b.P())})
			}
			if len(s.Points) > 0 {
				c.Line.Series = append(c.Line.Series, s)
			}
		}
	}
	if len(c.Line.Series) == 0 {
		c.Line.Series = []chart.Series{{Name: "no read after a write"}}
	}
	return c
}

func violationTable(runs []Run) *page.Table {
	t := &page.Table{ID: "consistency-sessions", Title: "Session-guarantee violations per consistency level",
		Source: "exact counts over every ok read and write of each run's operation history; rates per million ok reads of the level",
		Columns: []page.Column{{Title: "run"}, {Title: "level"}, {Title: "reads"},
			{Title: "monotonic reads"}, {Title: "per million"}, {Title: "read your writes"}, {Title: "per million"},
			{Title: "monotonic writes"}, {Title: "write pairs"}}}
	count := func(c sessions.Counts, n int) []page.Cell {
		cell := page.Number(fmt.Sprint(n), float64(n))
		if n > 0 {
			cell.Mark = "fail"
		}
		rate := c.PerMillion(n)
		return []page.Cell{cell, page.Number(format.Num(rate), rate)}
	}
	for _, run := range runs {
		for _, l := range run.Sessions.Levels {
			level := l.Level
			if level == "" {
				level = "default"
			}
			row := []page.Cell{page.Text(runName(run)), page.Text(level), page.Number(fmt.Sprint(l.Reads), float64(l.Reads))}
			row = append(row, count(l.Counts, l.MonotonicRead)...)
			row = append(row, count(l.Counts, l.ReadYourWrites)...)
			mw := page.Number(fmt.Sprint(l.MonotonicWrite), float64(l.MonotonicWrite))
			if l.MonotonicWrite > 0 {
				mw.Mark = "fail"
			}
			row = append(row, mw, page.Number(fmt.Sprint(l.WritePairs), float64(l.WritePairs)))
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func linTable(runs []Run) *page.Table {
	t := &page.Table{ID: "consistency-linearizability", Title: "Linearizability of single-key registers (porcupine)",
		Source: fmt.Sprintf("each key's ok reads, ok writes and writes of unknown outcome; keys of more than %d operations skipped, %s per key and %s a run",
			LinOptions.MaxOps, LinOptions.Timeout, LinOptions.Budget),
		Columns: []page.Column{{Title: "run"}, {Title: "keys"}, {Title: "linearizable"}, {Title: "violations"}, {Title: "skipped (too large)"}, {Title: "timed out"}}}
	for _, run := range runs {
		n := LinCounts(run.Linearized)
		bad := page.Number(fmt.Sprint(n[history.Violation]), float64(n[history.Violation]))
		if n[history.Violation] > 0 {
			bad.Mark = "fail"
		}
		t.Rows = append(t.Rows, []page.Cell{page.Text(runName(run)), page.Number(fmt.Sprint(len(run.Linearized)), float64(len(run.Linearized))),
			page.Number(fmt.Sprint(n[history.Linearizable]), float64(n[history.Linearizable])), bad,
			page.Number(fmt.Sprint(n[history.TooLarge]), float64(n[history.TooLarge])),
			page.Number(fmt.Sprint(n[history.TimedOut]), float64(n[history.TimedOut]))})
	}
	return t
}
