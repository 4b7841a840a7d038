// Package regions is the report's "Regions" section and terminal lines:
// per run driven by load agents in two or more regions, one row per
// region (its agents, ok/s, p50, p99, errors, dropped). The numbers are
// internal/analysis/regions'; this package only lays them out.
package regions

import (
	"fmt"
	"io"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/regions"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// SectionID is the section's anchor in report.html.
const SectionID = "regions"

// ReportSections is the Regions section: present when load agents drove
// a run; a table per run whose agents span two or more regions, one note
// for the runs whose agents do not.
func ReportSections(r *results.Results) ([]page.Section, error) {
	runs, err := regions.FromResults(r)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return []page.Section{Section(runs)}, nil
}

// Section lays out the runs' breakdowns.
func Section(runs []regions.Result) page.Section {
	sec := page.Section{ID: SectionID, Title: "Regions"}
	var split, whole []string
	for _, x := range runs {
		if !x.Split() {
			whole = append(whole, x.Note)
			continue
		}
		split = append(split, fmt.Sprintf("run %d", x.Run.ID))
		sec.Blocks = append(sec.Blocks, page.Block{Table: table(x)})
	}
	if len(split) > 0 {
		sec.Summary = format.Capitalize(format.Sentence(fmt.Sprintf("The load agents of %s span %s; each table breaks the run down by the agents' regions",
			strings.Join(split, ", "), format.Plural(regionCount(runs), "region"))))
	} else {
		sec.Summary = "No run's load agents span two regions, so there is nothing to break down."
	}
	if len(whole) > 0 {
		sec.Blocks = append(sec.Blocks, page.Block{Note: &page.Note{Level: "info",
			Text: format.Capitalize(format.Sentence(strings.Join(format.Distinct(whole), "; ")))}})
	}
	return sec
}

// regionCount is the number of distinct regions over the split runs.
func regionCount(runs []regions.Result) int {
	seen := map[string]bool{}
	for _, x := range runs {
		for _, g := range x.Regions {
			seen[g.Name] = true
		}
	}
	return len(seen)
}

func table(x regions.Result) *page.Table {
	src := fmt.Sprintf("from run %d's agents' own intervals over its measured phase (%s s), every operation type together; "+
		"a region's latencies are the exact merge of its agents' HdrHistograms (successful requests); "+
		"ok/s = the region's successful requests / the run's measured seconds, so the regions add up to the run; "+
		"an agent's region is its host's (lab.hosts[].region, infra.hosts[].region) or kubernetes.region",
		x.Run.ID, format.Num(x.MeasureSec))
	tb := &page.Table{ID: fmt.Sprintf("regions-run%d", x.Run.ID), Title: "Regions of " + RunName(x), Source: src,
		Columns: []page.Column{{Title: "region"}, {Title: "agents"}, {Title: "ok/s", Unit: "ok/s"}, {Title: "p50", Unit: "µs"},
			{Title: "p99", Unit: "µs"}, {Title: "errors"}, {Title: "dropped"}}}
	for _, g := range x.Regions {
		tb.Rows = append(tb.Rows, []page.Cell{
			page.Text(g.Name),
			page.Number(fmt.Sprintf("%d (%s)", len(g.Agents), strings.Join(g.Agents, ", ")), float64(len(g.Agents))),
			page.Number(fmt.Sprintf("%.1f", g.Throughput), g.Throughput),
			latency(g.P50, g.Hist.TotalCount()),
			latency(g.P99, g.Hist.TotalCount()),
			page.Number(fmt.Sprint(g.Errors), float64(g.Errors)),
			page.Number(fmt.Sprint(g.Dropped), float64(g.Dropped)),
		})
	}
	return tb
}

func latency(us, n int64) page.Cell {
	if n == 0 {
		return page.Text(format.Page.Missing)
	}
	return page.Number(format.Page.Micros(float64(us)), float64(us))
}

// RunName names a run for the section and the terminal.
func RunName(x regions.Result) string {
	parts := []string{format.LoadText(x.Run.Model, x.Run.Level), fmt.Sprintf("repetition %d", x.Run.Repetition)}
	if x.Run.Treatment != "" {
		parts = append([]string{x.Run.Treatment}, parts...)
	}
	return fmt.Sprintf("run %d (%s)", x.Run.ID, strings.Join(parts, ", "))
}

// Terminal prints one line per run whose agents span two or more regions
// (nothing otherwise).
func Terminal(w io.Writer, r *results.Results) error {
	runs, err := regions.FromResults(r)
	if err != nil {
		return err
	}
	header := false
	for _, x := range runs {
		if !x.Split() {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nRegions (evidence: #%s of report.html)\n", SectionID)
			header = true
		}
		fmt.Fprintf(w, "  %s\n", Line(x))
	}
	return nil
}

// Line is a split run in one line: per region its agents, ok/s, p50 and
// p99, and errors and dropped when there were any.
func Line(x regions.Result) string {
	var parts []string
	for _, g := range x.Regions {
		s := fmt.Sprintf("%s %s %.1f ok/s", g.Name, format.Plural(len(g.Agents), "agent"), g.Throughput)
		if g.Hist.TotalCount() > 0 {
			s += fmt.Sprintf(" p50 %s p99 %s", format.Terminal.Micros(float64(g.P50)), format.Terminal.Micros(float64(g.P99)))
		}
		if g.Errors > 0 || g.Dropped > 0 {
			s += fmt.Sprintf(" (%d errors, %d dropped)", g.Errors, g.Dropped)
		}
		parts = append(parts, s)
	}
	return RunName(x) + ": " + strings.Join(parts, "; ")
}
