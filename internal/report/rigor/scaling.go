package rigor

import (
	"fmt"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/scaling"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/store"
)

// Scaling is the report section of seed 002's scaling metrics
// (seed-digest §5) across treatments that ran on lab hosts differing in
// server count or size: scale-up, speed-up, efficiency, the linearity of
// throughput over capacity, and the cost per req/s from the lab's prices.
// The shapes come from each treatment's lab event (its hosts, their
// instance types' vCPUs and prices): the host of the treatment's managed
// server, or every lab host. Throughput is the capacity curve's estimate
// for campaigns, the probe's estimate for probes. No section unless two
// treatments with lab shapes differ.
func Scaling(st *store.Store) ([]page.Section, error) {
	c, tcs, aerr, err := loadCurves(st)
	if err != nil {
		return nil, err
	}
	labs := c.labs()
	if len(labs) == 0 {
		return nil, nil
	}
	sec := page.Section{ID: "scaling", Title: "Scaling: scale-up, speed-up and cost across deployments"}
	var summary []string
	if aerr == nil {
		if blocks, text, err := runScaling(c, labs, tcs); err != nil {
			sec.Blocks = append(sec.Blocks, note("warning", capital(err.Error())))
		} else if blocks != nil {
			sec.Blocks = append(sec.Blocks, blocks...)
			summary = append(summary, text)
		}
	}
	prs, err := loadProbes(st)
	if err != nil {
		return nil, err
	}
	if blocks, text, err := probeScaling(c, labs, prs); err != nil {
		sec.Blocks = append(sec.Blocks, note("warning", capital(err.Error())))
	} else if blocks != nil {
		sec.Blocks = append(sec.Blocks, blocks...)
		summary = append(summary, text)
	}
	if len(sec.Blocks) == 0 {
		return nil, nil
	}
	sec.Summary = strings.Join(summary, " ")
	return []page.Section{sec}, nil
}

// sized turns shapes into the analysis's: sizes relative to the smallest
// vCPU count among them.
func sized(names []string, shapes []shape) map[string]scaling.Shape {
	ref := math.Inf(1)
	for _, s := range shapes {
		ref = math.Min(ref, s.VCPUs)
	}
	out := map[string]scaling.Shape{}
	for i, n := range names {
		s := shapes[i]
		size := 1.0
		if ref > 0 {
			size = s.VCPUs / ref
		}
		out[n] = scaling.Shape{Servers: float64(s.Servers), Size: size, PricePerHour: s.PricePerHour}
	}
	return out
}

// runScaling compares the treatments' capacity curves; nil blocks when
// fewer than two have lab shapes or their shapes are the same.
func runScaling(c *campaign, labs []labRecord, tcs []treatmentCurve) ([]page.Block, string, error) {
	var names []string
	var shapes []shape
	var curves []capacity.Curve
	var srcs []string
	for _, tc := range tcs {
		sh, ok := c.treatmentShape(labs, tc.t)
		if !ok {
			continue
		}
		names, shapes, curves = append(names, tc.t.name), append(shapes, sh), append(curves, tc.curve)
		srcs = append(srcs, strings.TrimPrefix(runSource(tc.in, "treatment "+label(tc.t.name)), "from "))
	}
	if len(curves) < 2 || !differ(shapes) {
		return nil, "", nil
	}
	ts, notes, err := scaling.FromCurves(curves, sized(names, shapes))
	if err != nil {
		return nil, "", err
	}
	res, err := scaling.Analyze(ts, "")
	if err != nil {
		return nil, "", err
	}
	src := "from " + strings.Join(srcs, "; ") + "; throughput = each treatment's capacity estimate (the highest mean throughput of a level the client did not limit); " +
		"response time = mean latency at the highest level every treatment measured below the lowest knee; deployments from each treatment's lab event"
	blocks := scalingBlocks("scaling-runs", "campaign runs", res, shapes, names, append(notes, res.Notes...), src, "ok/s")
	return blocks, scalingSummary(res, "ok/s"), nil
}

// probeScaling compares the probes' estimates of treatments on different
// lab shapes.
func probeScaling(c *campaign, labs []labRecord, prs []probeRun) ([]page.Block, string, error) {
	var names []string
	var shapes []shape
	var ts []scaling.Treatment
	var notes []string
	seen := map[string]bool{}
	for i := len(prs) - 1; i >= 0; i-- { // the latest probe of each treatment
		pr := prs[i]
		if seen[pr.treatment] || pr.p.Status != store.StatusCompleted {
			continue
		}
		t, _ := c.find(pr.treatment)
		sh, ok := shapeOf(labAt(labs, pr.p.Start), managedHost(t.spec))
		if !ok {
			continue
		}
		seen[pr.treatment] = true
		tput := pr.p.Estimate
		if math.IsNaN(tput) {
			// Unknown, not 0: a probe stopped by the client or a cap says
			// nothing about the server's limit (scaling.Analyze leaves its
			// ratios undefined).
			notes = append(notes, fmt.Sprintf("the probe of %s has no estimate (%s): its throughput is unknown", label(pr.treatment), pr.p.Stop))
		}
		names = append([]string{pr.treatment}, names...)
		shapes = append([]shape{sh}, shapes...)
		ts = append([]scaling.Treatment{{Name: pr.treatment, Throughput: tput}}, ts...)
	}
	if len(ts) < 2 || !differ(shapes) {
		return nil, "", nil
	}
	sz := sized(names, shapes)
	for i := range ts {
		s := sz[ts[i].Name]
		ts[i].Servers, ts[i].Size, ts[i].PricePerHour = s.Servers, s.Size, s.PricePerHour
	}
	res, err := scaling.Analyze(ts, "")
	if err != nil {
		return nil, "", err
	}
	src := fmt.Sprintf("from %s; throughput = each treatment's probe estimate (the highest rate that met the SLA, seed 004); deployments from the lab event recorded before each probe", plural(len(ts), "probe"))
	blocks := scalingBlocks("scaling-probes", "probes", res, shapes, names, append(notes, res.Notes...), src, "req/s")
	return blocks, scalingSummary(res, "req/s"), nil
}

func scalingSummary(res scaling.Result, unit string) string {
	var parts []string
	for _, r := range res.Rows {
		if r.Kind == "baseline" {
			continue
		}
		if math.IsNaN(r.Throughput) {
			parts = append(parts, fmt.Sprintf("%s (%s, α = %s) has no throughput estimate", label(r.Name), r.Kind, num(r.Alpha)))
			continue
		}
		s := fmt.Sprintf("%s (%s, α = %s) reaches %s %s, a scale-up of %s over %s (efficiency %s)",
			label(r.Name), r.Kind, num(r.Alpha), num(r.Throughput), unit, num2(r.ScaleUp), label(res.Baseline), num2(r.Efficiency))
		if !math.IsNaN(r.CostPerReqPerSec) {
			s += fmt.Sprintf(", at $%.3f per month per %s", r.CostPerReqPerSec, unit)
		}
		parts = append(parts, s)
	}
	return sentence(strings.Join(parts, "; "))
}

func num2(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "undefined"
	}
	return fmt.Sprintf("%.2f", v)
}

func scalingBlocks(id, what string, res scaling.Result, shapes []shape, names []string, notes []string, src, unit string) []page.Block {
	byName := map[string]shape{}
	for i, n := range names {
		byName[n] = shapes[i]
	}
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
			what, num(f.Intercept), num(f.Slope), num2(f.R), num2(f.R2))))
	}
	for _, n := range dedupe(notes) {
		blocks = append(blocks, note("info", capital(n)))
	}
	return blocks
}
