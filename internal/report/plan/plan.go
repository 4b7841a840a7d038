// Package plan renders profit planning (docs/planning.md): the plan table
// (workload → configuration with its profit), the break-even workloads,
// the sensitivity to the node-hour price and to the SLA's main step, and
// every configuration's profit at every level, as report sections and as
// terminal text. The computing is internal/analysis/profit's and
// internal/analysis/plan's.
package plan

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/headroom-dev/headroom/internal/analysis/plan"
	"github.com/headroom-dev/headroom/internal/analysis/profit"
	"github.com/headroom-dev/headroom/internal/analysis/wildcard"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// ReportSections is the plan section of a report: present when the
// campaign compares configurations (more than one treatment) or sets
// analysis.plan.
func ReportSections(r *results.Results) ([]page.Section, error) {
	ts := r.Treatments()
	if len(ts) < 2 && reflect.DeepEqual(ts[0].Analysis.Plan, results.Plan{}) {
		return nil, nil
	}
	if len(r.AllCompletedRuns()) == 0 {
		return nil, nil
	}
	a, err := profit.FromResults(r, profit.Options{})
	if err != nil {
		return []page.Section{{ID: "plan", Title: "Profit plan", Summary: "No plan: " + err.Error()}}, nil
	}
	p, err := plan.Make(a)
	if err != nil {
		return []page.Section{{ID: "plan", Title: "Profit plan", Summary: "No plan: " + err.Error()}}, nil
	}
	return Sections(a, p), nil
}

// Sections lays out a plan: the plan table with break-even points and
// sensitivity, then every configuration's money per level.
func Sections(a profit.Analysis, p plan.Plan) []page.Section {
	src := source(a)
	planTab := &page.Table{ID: "plan-table", Title: "Plan: the best configuration at each workload", Source: src,
		Columns: []page.Column{{Title: "Workload", Unit: a.LevelUnit}, {Title: "Configuration"}, {Title: "Nodes"},
			{Title: "Profit", Unit: "$/h"}, {Title: "Cost", Unit: "$/h"},
			{Title: "Throughput", Unit: "req/s"}, {Title: "p99", Unit: "ms"}, {Title: "Runner-up"}, {Title: "Note"}}}
	withObj := p.Objective != wildcard.ProfitPerHour
	if withObj {
		planTab.Columns = append(planTab.Columns[:3], append([]page.Column{{Title: "Objective: " + objTitle(p.Objective)}}, planTab.Columns[3:]...)...)
	}
	for _, c := range p.Choices {
		note := c.Tie
		if c.Close {
			note = strings.TrimPrefix(note+"; runner-up inside the 95% interval", "; ")
		}
		cell := page.Text(note)
		if c.Close {
			cell.Mark = "warn"
		}
		row := []page.Cell{page.Number(format.Num(c.Level), c.Level), page.Text(configText(c.Config, c.Params)), page.Number(fmt.Sprint(c.Nodes), float64(c.Nodes))}
		if withObj {
			row = append(row, est(c.Objective, p.Objective))
		}
		planTab.Rows = append(planTab.Rows, append(row, est(c.Profit, wildcard.ProfitPerHour), est(c.Cost, wildcard.CostPerHour),
			est(c.Throughput, wildcard.Throughput), est(c.P99MS, wildcard.P99), page.Text(runnerUp(c)), cell))
	}
	sec := page.Section{ID: "plan", Title: "Profit plan", Summary: Summary(a, p)}
	sec.Blocks = append(sec.Blocks, page.Block{Table: planTab})
	if len(p.BreakEvens) > 0 {
		be := &page.Table{ID: "plan-break-even", Title: "Break-even workloads between neighbouring plans", Source: "linear interpolation of the two configurations' mean profit between the measured levels",
			Columns: []page.Column{{Title: "From"}, {Title: "To"}, {Title: "Between", Unit: a.LevelUnit}, {Title: "Break-even", Unit: a.LevelUnit}}}
		for _, b := range p.BreakEvens {
			at := page.Text("not measured at both levels")
			if b.Measured {
				at = page.Number(format.Num(float64(b.At)), float64(b.At))
			}
			be.Rows = append(be.Rows, []page.Cell{page.Text(b.From), page.Text(b.To), page.Text(format.Num(b.Low) + " – " + format.Num(b.High)), at})
		}
		sec.Blocks = append(sec.Blocks, page.Block{Table: be})
	}
	if p.Price != nil {
		sens := &page.Table{ID: "plan-sensitivity", Title: "Sensitivity: parameter ranges that keep this plan", Source: "each configuration's profit is linear in the parameter; the range is where every level's winner stays ahead of every other configuration (mean profits)",
			Columns: []page.Column{{Title: "Parameter"}, {Title: "Now"}, {Title: "Plan holds from"}, {Title: "to"}, {Title: "Beyond, first to take over"}}}
		for _, r := range []*plan.Range{p.Price, p.MainStep} {
			if r == nil {
				continue
			}
			sens.Rows = append(sens.Rows, []page.Cell{page.Text(r.Parameter), page.Number(format.Num(float64(r.Base)), float64(r.Base)),
				rangeEnd(r.Low), rangeEnd(r.High), page.Text(takeOver(*r))})
		}
		sec.Blocks = append(sec.Blocks, page.Block{Table: sens})
	}
	for _, n := range append([]string{p.Monotone + ".", p.TieBreak + "."}, a.Notes...) {
		sec.Blocks = append(sec.Blocks, page.Block{Note: &page.Note{Level: "info", Text: format.Sentence(n)}})
	}
	all := &page.Table{ID: "plan-cells", Title: "Every configuration at every workload", Source: src,
		Columns: []page.Column{{Title: "Workload", Unit: a.LevelUnit}, {Title: "Configuration"}, {Title: "Throughput", Unit: "req/s"},
			{Title: "p99", Unit: "ms"}, {Title: "Revenue", Unit: "$/h"}, {Title: "Monotone revenue", Unit: "$/h"}, {Title: "Cost", Unit: "$/h"},
			{Title: "Profit", Unit: "$/h"}, {Title: "Cost per req/s", Unit: "$/month"}, {Title: "Runs"}}}
	mono := map[string]plan.FrontierRow{}
	for _, f := range p.Frontier {
		mono[fmt.Sprint(f.Level, "\x00", f.Config)] = f
	}
	cells := append([]profit.Cell(nil), a.Cells...)
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].Level < cells[j].Level })
	for _, c := range cells {
		f := mono[fmt.Sprint(c.Level, "\x00", c.Config)]
		mr := page.Number(money(float64(f.MonotoneRevenue)), float64(f.MonotoneRevenue))
		if f.LiftedFrom != "" {
			mr.Text += " (from " + f.LiftedFrom + ")"
		}
		all.Rows = append(all.Rows, []page.Cell{page.Number(format.Num(c.Level), c.Level), page.Text(c.Config),
			est(c.Throughput, wildcard.Throughput), est(c.P99MS, wildcard.P99), est(c.Revenue, wildcard.RevenuePerHour), mr,
			est(c.Cost, wildcard.CostPerHour), est(c.Profit, wildcard.ProfitPerHour), est(c.CostPerReq, wildcard.CostPerReqMonth),
			page.Number(fmt.Sprint(len(c.Runs)), float64(len(c.Runs)))})
	}
	cellsSec := page.Section{ID: "plan-configurations", Title: "Profit of every configuration",
		Summary: fmt.Sprintf("%s at %s, from %s.", format.Plural(len(a.Configs), "configuration"), format.Plural(len(profit.Levels(a.Cells)), "workload level"), format.Plural(len(a.Runs), "completed run")),
		Blocks:  []page.Block{{Table: all}}}
	return []page.Section{sec, cellsSec}
}

// Summary is the plan in a sentence or two.
func Summary(a profit.Analysis, p plan.Plan) string {
	s := "Best configuration by " + objTitle(p.Objective) + ": " + lineText(a, p) + "."
	if p.Price != nil {
		s += fmt.Sprintf(" The plan holds for a %s from %s to %s.", p.Price.Parameter, format.Num(float64(p.Price.Low)), endText(p.Price.High))
	}
	return s
}

// lineText is the plan as "50, 150 req/s → A; 250 req/s → B", levels with
// the same configuration in a row grouped.
func lineText(a profit.Analysis, p plan.Plan) string {
	var parts []string
	for i := 0; i < len(p.Choices); {
		j := i
		var lv []string
		for j < len(p.Choices) && p.Choices[j].Config == p.Choices[i].Config {
			lv = append(lv, format.Num(p.Choices[j].Level))
			j++
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s", strings.Join(lv, ", "), a.LevelUnit, configName(p.Choices[i].Config)))
		i = j
	}
	return strings.Join(parts, "; ")
}

func configName(n string) string {
	if n == "" {
		return "(the campaign)"
	}
	return n
}

// WriteText prints the plan for a terminal.
func WriteText(w io.Writer, a profit.Analysis, p plan.Plan) error {
	fmt.Fprintf(w, "Plan over %s (cost: %s; SLA: %s)\n", strings.Join(a.Sources, ", "), p.Cost, slaText(a.SLA))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	obj := ""
	if p.Objective != wildcard.ProfitPerHour {
		obj = objTitle(p.Objective) + "\t"
	}
	fmt.Fprintf(tw, "workload (%s)\tconfiguration\tnodes\t%sprofit $/h\tcost $/h\tthroughput\tp99 ms\trunner-up (behind by)\tnote\n", a.LevelUnit, obj)
	for _, c := range p.Choices {
		note := c.Tie
		if c.Close {
			note = strings.TrimPrefix(note+"; runner-up inside the 95% interval", "; ")
		}
		if obj != "" {
			obj = estText(c.Objective, p.Objective) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s%s\t%s\t%s\t%s\t%s\t%s\n", format.Num(c.Level), configText(c.Config, c.Params), c.Nodes,
			obj, estText(c.Profit, wildcard.ProfitPerHour), estText(c.Cost, wildcard.CostPerHour),
			estText(c.Throughput, wildcard.Throughput), estText(c.P99MS, wildcard.P99), runnerUp(c), note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, b := range p.BreakEvens {
		if b.Measured {
			fmt.Fprintf(w, "break-even: %s overtakes %s at about %s %s (between %s and %s)\n", b.To, b.From, format.Num(float64(b.At)), a.LevelUnit, format.Num(b.Low), format.Num(b.High))
		} else {
			fmt.Fprintf(w, "break-even: %s follows %s between %s and %s %s (not both measured at both levels)\n", b.To, b.From, format.Num(b.Low), format.Num(b.High), a.LevelUnit)
		}
	}
	for _, r := range []*plan.Range{p.Price, p.MainStep} {
		if r != nil {
			fmt.Fprintf(w, "sensitivity: the plan holds for a %s from %s to %s (now %s)%s\n", r.Parameter, format.Num(float64(r.Low)), endText(r.High), format.Num(float64(r.Base)), takeOverText(*r))
		}
	}
	fmt.Fprintf(w, "ties: %s\n", p.TieBreak)
	return nil
}

func source(a profit.Analysis) string {
	return fmt.Sprintf("%s over %s; revenue per request from the SLA steps (%s) applied to each run's measured-phase HdrHistograms, per hour at the measured rate; cost: %s; mean ± half-width of the 95%% t-interval over repetitions",
		format.Plural(len(a.Runs), "completed run"), strings.Join(a.Sources, ", "), slaText(a.SLA), a.Cost.Describe())
}

func slaText(s profit.SLA) string {
	var parts []string
	for _, st := range s.Steps {
		c := format.Num(st.Dollars*profit.CentsPerDollar) + "¢"
		if st.UpTo > 0 {
			parts = append(parts, fmt.Sprintf("≤%v %s", st.UpTo, c))
		} else {
			parts = append(parts, "slower "+c)
		}
	}
	out := strings.Join(parts, ", ")
	if len(s.Ops) > 0 {
		out += fmt.Sprintf("; own steps for %d operation(s)", len(s.Ops))
	}
	if s.ErrorDollars != nil {
		out += fmt.Sprintf("; %s¢ per failed or dropped request", format.Num(*s.ErrorDollars*profit.CentsPerDollar))
	}
	return out
}

func configText(name string, params map[string]string) string {
	if name == "" {
		name = "(the campaign)"
	}
	if len(params) == 0 {
		return name
	}
	var keys []string
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kv []string
	for _, k := range keys {
		kv = append(kv, k+"="+params[k])
	}
	return name + " (" + strings.Join(kv, ", ") + ")"
}

func runnerUp(c plan.Choice) string {
	if c.RunnerUp == "" {
		return "-"
	}
	return fmt.Sprintf("%s (%s behind)", c.RunnerUp, format.Num(float64(c.Margin)))
}

func objTitle(m wildcard.Metric) string {
	switch m {
	case wildcard.ProfitPerHour:
		return "profit $/h"
	case wildcard.Throughput:
		return "throughput req/s"
	case wildcard.P99:
		return "p99 ms"
	case wildcard.CostPerReqMonth:
		return "$/month per req/s"
	}
	return string(m)
}

func est(e profit.Estimate, m wildcard.Metric) page.Cell {
	// The text carries the 95% interval; the cell's SE field (a standard
	// error) is left empty rather than filled with a half-width.
	return page.Number(estText(e, m), e.Mean)
}

func estText(e profit.Estimate, m wildcard.Metric) string {
	if !e.Known() {
		return "-"
	}
	v := format.Num(e.Mean)
	switch m {
	case wildcard.ProfitPerHour, wildcard.RevenuePerHour, wildcard.CostPerHour, wildcard.CostPerReqMonth:
		v = money(e.Mean)
	}
	if e.N > 1 && !math.IsNaN(e.Half) && e.Half > 0 {
		v += " ± " + format.Num(e.Half)
	}
	return v
}

func money(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func rangeEnd(x plan.Num) page.Cell {
	return page.Number(endText(x), float64(x))
}

func endText(x plan.Num) string {
	if math.IsInf(float64(x), 1) {
		return "∞"
	}
	return format.Num(float64(x))
}

func takeOver(r plan.Range) string {
	var parts []string
	if r.LowBy != "" {
		parts = append(parts, "below: "+r.LowBy)
	}
	if r.HighBy != "" {
		parts = append(parts, "above: "+r.HighBy)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func takeOverText(r plan.Range) string {
	t := takeOver(r)
	if t == "-" {
		return ""
	}
	return "; " + t
}
