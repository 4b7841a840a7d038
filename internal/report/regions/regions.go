// Package regions is the report's "Regions" section and terminal lines:
// per run driven by load agents in two or more regions, one row per
// region (its agents, ok/s, p50, p99, errors, dropped); and per run whose
// monitored hosts carry two or more region labels, one row per region of
// hosts (their CPU utilisation and network throughput). The numbers are
// internal/analysis/regions'; this package only lays them out.
package regions

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/regions"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// SectionID is the section's anchor in report.html.
const SectionID = "regions"

// ReportSections is the Regions section: present when load agents drove
// a run or when hosts carry region labels; a table per run whose agents
// span two or more regions, one note for the runs whose agents do not,
// and a table per run whose labelled hosts span two or more regions.
func ReportSections(r *results.Results) ([]page.Section, error) {
	runs, err := regions.FromResults(r)
	if err != nil {
		return nil, err
	}
	hosts, err := regions.HostsFromResults(r)
	if err != nil {
		return nil, err
	}
	var split []regions.HostResult
	for _, h := range hosts {
		if h.Split() {
			split = append(split, h)
		}
	}
	if len(runs) == 0 && len(split) == 0 {
		return nil, nil
	}
	return []page.Section{Section(runs, split)}, nil
}

// Section lays out the runs' breakdowns by the agents' regions and, for
// the runs in hosts, by the hosts' regions.
func Section(runs []regions.Result, hosts []regions.HostResult) page.Section {
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
	var sentences []string
	switch {
	case len(split) > 0:
		sentences = append(sentences, fmt.Sprintf("The load agents of %s span %s; each table breaks the run down by the agents' regions",
			strings.Join(split, ", "), format.Plural(regionCount(runs), "region")))
	case len(runs) > 0:
		sentences = append(sentences, "No run's load agents span two regions, so there is nothing to break down by the agents' regions")
	}
	for _, h := range hosts {
		sec.Blocks = append(sec.Blocks, page.Block{Table: hostTable(h)})
	}
	if len(hosts) > 0 {
		sentences = append(sentences, fmt.Sprintf("The monitored hosts of %s carry labels of %s; a table per run groups their CPU and network figures by region",
			format.Plural(len(hosts), "run"), format.Plural(hostRegionCount(hosts), "region")))
	}
	for i := range sentences {
		sentences[i] = format.Capitalize(format.Sentence(sentences[i]))
	}
	sec.Summary = strings.Join(sentences, " ")
	if len(whole) > 0 {
		sec.Blocks = append(sec.Blocks, page.Block{Note: &page.Note{Level: "info",
			Text: format.Capitalize(format.Sentence(strings.Join(format.Distinct(whole), "; ")))}})
	}
	return sec
}

// hostRegionCount is the number of distinct labelled regions of the runs'
// hosts.
func hostRegionCount(runs []regions.HostResult) int {
	seen := map[string]bool{}
	for _, x := range runs {
		for _, g := range x.Regions {
			if g.Name != regions.NoRegion {
				seen[g.Name] = true
			}
		}
	}
	return len(seen)
}

func hostTable(x regions.HostResult) *page.Table {
	src := fmt.Sprintf("from run %d's monitoring samples over its measured window; "+
		"CPU = the mean over the region's hosts of each host's mean utilisation of its own processors (a lab host's vCPUs), peak = the highest one-interval value of any of them; "+
		"network = the sum over the region's hosts of their mean rx+tx bytes per second; "+
		"a host's region is lab.hosts[].region or infra.hosts[].region, and hosts without one (the machine Headroom runs on) are %s",
		x.Run.ID, regions.NoRegion)
	tb := &page.Table{ID: fmt.Sprintf("region-hosts-run%d", x.Run.ID), Title: "Hosts by region of " + RunName(regions.Result{Run: x.Run}), Source: src,
		Columns: []page.Column{{Title: "region"}, {Title: "hosts"}, {Title: "CPU mean", Unit: "%"}, {Title: "CPU peak", Unit: "%"},
			{Title: "network", Unit: "B/s"}}}
	for _, g := range x.Regions {
		tb.Rows = append(tb.Rows, []page.Cell{
			page.Text(g.Name),
			page.Number(fmt.Sprintf("%d (%s)", len(g.Hosts), strings.Join(g.Hosts, ", ")), float64(len(g.Hosts))),
			number(format.Page.Percent(g.CPUMean, 1), g.CPUMean),
			number(format.Page.Percent(g.CPUMax, 1), g.CPUMax),
			number(format.Page.BytesPerSec(g.NetBytes), g.NetBytes),
		})
	}
	return tb
}

// number is a cell that carries its value only when there is one.
func number(text string, v float64) page.Cell {
	if math.IsNaN(v) {
		return page.Text(text)
	}
	return page.Number(text, v)
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
// and one per run whose labelled hosts do (nothing otherwise).
func Terminal(w io.Writer, r *results.Results) error {
	runs, err := regions.FromResults(r)
	if err != nil {
		return err
	}
	hosts, err := regions.HostsFromResults(r)
	if err != nil {
		return err
	}
	header := false
	put := func(line string) {
		if !header {
			fmt.Fprintf(w, "\nRegions (evidence: #%s of report.html)\n", SectionID)
			header = true
		}
		fmt.Fprintf(w, "  %s\n", line)
	}
	for _, x := range runs {
		if x.Split() {
			put(Line(x))
		}
	}
	for _, x := range hosts {
		if x.Split() {
			put(HostLine(x))
		}
	}
	return nil
}

// HostLine is a run's hosts by region in one line: per region its hosts,
// their mean and peak CPU and their network throughput when sampled.
func HostLine(x regions.HostResult) string {
	var parts []string
	for _, g := range x.Regions {
		s := fmt.Sprintf("%s %s (%s)", g.Name, format.Plural(len(g.Hosts), "host"), strings.Join(g.Hosts, ", "))
		if !math.IsNaN(g.CPUMean) {
			s += fmt.Sprintf(" CPU %s mean, %s peak", format.Terminal.Percent(g.CPUMean, 1), format.Terminal.Percent(g.CPUMax, 1))
		}
		if !math.IsNaN(g.NetBytes) {
			s += " network " + format.Terminal.BytesPerSec(g.NetBytes)
		}
		parts = append(parts, s)
	}
	return "hosts of " + RunName(regions.Result{Run: x.Run}) + ": " + strings.Join(parts, "; ")
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
