package rigor

import (
	"fmt"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/scaling"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// ScalingSections is the report section of seed 002's scaling metrics
// (seed-digest §5) across treatments that ran on lab deployments
// differing in server count or size: scale-up, speed-up, efficiency, the
// linearity of throughput over capacity, and the cost per req/s from the
// lab's prices. The deployments come from the lab facts (the lab up when
// each treatment ran, its hosts' vCPUs and prices): the hosts of the
// treatment's managed server, or every lab host. Throughput is the
// capacity curve's estimate for campaigns, the probe's estimate for
// probes. No section unless two treatments with lab deployments differ.
func ScalingSections(r *results.Results) ([]page.Section, error) {
	if len(r.Labs()) == 0 {
		return nil, nil
	}
	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil {
		return nil, err
	}
	sec := page.Section{ID: "scaling", Title: "Scaling: scale-up, speed-up and cost across deployments"}
	var summary []string
	if cc.Problem == nil {
		if cmp := scaling.FromResults(r, cc.Curves); cmp != nil {
			blocks, text := runScaling(cmp, cc.Curves)
			sec.Blocks = append(sec.Blocks, blocks...)
			if text != "" {
				summary = append(summary, text)
			}
		}
	}
	cmp, err := scaling.FromProbes(r)
	if err != nil {
		return nil, err
	}
	if cmp != nil {
		blocks, text := probeScaling(cmp)
		sec.Blocks = append(sec.Blocks, blocks...)
		if text != "" {
			summary = append(summary, text)
		}
	}
	if len(sec.Blocks) == 0 {
		return nil, nil
	}
	sec.Summary = strings.Join(summary, " ")
	return []page.Section{sec}, nil
}

// runScaling renders the comparison of the treatments' capacity curves.
func runScaling(cmp *scaling.Comparison, curves []capacity.TreatmentCurve) ([]page.Block, string) {
	if cmp.Problem != nil {
		return []page.Block{note("warning", capital(cmp.Problem.Error()))}, ""
	}
	var srcs []string
	for _, tc := range curves {
		if _, ok := cmp.Deployments[tc.Treatment.Name]; ok {
			srcs = append(srcs, strings.TrimPrefix(runSource(tc.Input, "treatment "+label(tc.Treatment.Name)), "from "))
		}
	}
	src := "from " + strings.Join(srcs, "; ") + "; throughput = each treatment's capacity estimate (the highest mean throughput of a level that meets the SLO without client limits, as in the capacity section), " +
		"or, when some treatment met the SLO at no level, each treatment's peak (the highest mean throughput of a level without client limits; see the note); " +
		"response time = mean latency at the highest level every treatment measured below the lowest knee; deployments from each treatment's lab event"
	return scalingBlocks("scaling-runs", "campaign runs", cmp, src, "ok/s"), scalingSummary(cmp.Result, "ok/s")
}

// probeScaling renders the comparison of the probes' estimates.
func probeScaling(cmp *scaling.Comparison) ([]page.Block, string) {
	if cmp.Problem != nil {
		return []page.Block{note("warning", capital(cmp.Problem.Error()))}, ""
	}
	src := fmt.Sprintf("from %s; throughput = each treatment's probe estimate (the highest rate that met the SLA, seed 004); deployments from the lab event recorded before each probe", format.Plural(len(cmp.Result.Rows), "probe"))
	return scalingBlocks("scaling-probes", "probes", cmp, src, "req/s"), scalingSummary(cmp.Result, "req/s")
}

func scalingSummary(res scaling.Result, unit string) string {
	var parts []string
	for _, r := range res.Rows {
		if r.Kind == "baseline" {
			continue
		}
		if math.IsNaN(r.Throughput) {
			parts = append(parts, fmt.Sprintf("%s (%s, α = %s) has no throughput estimate", label(r.Name), r.Kind, format.Num(r.Alpha)))
			continue
		}
		s := fmt.Sprintf("%s (%s, α = %s) reaches %s %s, a scale-up of %s over %s (efficiency %s)",
			label(r.Name), r.Kind, format.Num(r.Alpha), format.Num(r.Throughput), unit, num2(r.ScaleUp), label(res.Baseline), num2(r.Efficiency))
		if !math.IsNaN(r.CostPerReqPerSec) {
			s += fmt.Sprintf(", at $%.3f per month per %s", r.CostPerReqPerSec, unit)
		}
		parts = append(parts, s)
	}
	return format.Sentence(strings.Join(parts, "; "))
}

func num2(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "undefined"
	}
	return fmt.Sprintf("%.2f", v)
}

func scalingBlocks(id, what string, cmp *scaling.Comparison, src, unit string) []page.Block {
	res, byName, notes := cmp.Result, cmp.Deployments, cmp.Notes
	tbl := &page.Table{ID: id, Title: "Scaling across deployments (" + what + ")",
		Source: src + "; α = capacity units (servers × vCPUs relative to the smallest) over the baseline's; scale-up = T(αs)/T(s); speed-up = RT(s)/RT(αs) at the same load; " +
			"efficiency = scale-up/α; cost per month = servers × price per server-hour (instance plus volumes) × 730 h; cost per req/s = cost per month / throughput",
		Columns: []page.Column{{Title: "treatment"}, {Title: "kind"}, {Title: "servers"}, {Title: "type"}, {Title: "vCPUs per server"}, {Title: "α"},
			{Title: "throughput (" + unit + ")", Unit: unit}, {Title: "scale-up"}, {Title: "efficiency"}, {Title: "speed-up"},
			{Title: "cost per month ($)", Unit: "$"}, {Title: "cost per " + unit + " ($/month)", Unit: "$ per month per " + unit}}}
	bars := chart.BarSeries{Name: "throughput (" + unit + ")"}
	cost := chart.BarSeries{Name: "cost per " + unit + " ($/month)"}
	var cats []string
	for _, r := range res.Rows {
		sh := byName[r.Name]
		tbl.Rows = append(tbl.Rows, []page.Cell{page.Text(label(r.Name)), page.Text(r.Kind), intCell(int64(sh.Servers)), page.Text(sh.Types),
			numCell(sh.VCPUs, 2), numCell(r.Alpha, 2), numCell(r.Throughput, 1), numCell(r.ScaleUp, 2), numCell(r.Efficiency, 2),
			numCell(r.SpeedUp, 2), numCell(r.CostPerMonth, 2), numCell(r.CostPerReqPerSec, 4)})
		cats = append(cats, label(r.Name))
		bars.Values = append(bars.Values, chart.Num(r.Throughput))
		cost.Values = append(cost.Values, chart.Num(r.CostPerReqPerSec))
	}
	blocks := []page.Block{{Table: tbl}, {Chart: &chart.Chart{ID: id + "-throughput", Title: "Throughput by deployment (" + what + ")", Source: src,
		Bars: &chart.Bars{X: chart.Axis{Label: "treatment"}, Y: chart.Axis{Label: "throughput", Unit: unit, Min: chart.At(0)}, Categories: cats, Series: []chart.BarSeries{bars}}}}}
	withCost := false
	for _, v := range cost.Values {
		withCost = withCost || v.Defined()
	}
	if withCost {
		blocks = append(blocks, page.Block{Chart: &chart.Chart{ID: id + "-cost", Title: "Cost per " + unit + " by deployment (" + what + ")", Source: src + "; cost per month / throughput",
			Bars: &chart.Bars{X: chart.Axis{Label: "treatment"}, Y: chart.Axis{Label: "cost per " + unit, Unit: "$/month", Min: chart.At(0)}, Categories: cats, Series: []chart.BarSeries{cost}}}})
	}
	f := res.Linearity
	if !math.IsNaN(f.Slope) {
		blocks = append(blocks, note("info", fmt.Sprintf("Linearity (%s): throughput = %s + %s × capacity units, Pearson r = %s (r² = %s).",
			what, format.Num(f.Intercept), format.Num(f.Slope), num2(f.R), num2(f.R2))))
	}
	for _, n := range format.Distinct(notes) {
		blocks = append(blocks, note("info", capital(n)))
	}
	return blocks
}
