package rigor

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/scaling"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// NodeScalingSections is the report section of scaling over node count
// (scaling.FromClusters, seed-digest §5, seed 002 §V): the treatments
// whose target ran a managed cluster, side by side by node count and node
// size (horizontal vs vertical), with scale-up, speed-up, cost per ok/s
// from the lab's prices, the line of throughput over node count per node
// type, and the spread of response time under each. No section unless
// two cluster treatments differ in node count or node size.
func NodeScalingSections(r *results.Results) ([]page.Section, error) {
	cmp, err := nodeComparison(r, nil)
	if err != nil || cmp == nil {
		return nil, err
	}
	sec := page.Section{ID: "node-scaling", Title: "Scaling over node count: more nodes vs bigger nodes"}
	if cmp.Problem != nil {
		sec.Summary = capital(cmp.Problem.Error())
		return []page.Section{sec}, nil
	}
	res := cmp.Result
	var summary []string
	for _, row := range res.Rows {
		if row.Strategy != "baseline" {
			summary = append(summary, nodeRowText(row, res.Baseline, atWhat(cmp)))
		}
	}
	summary = append(summary, linearityTexts(res)...)
	if v := variabilityText(res, atWhat(cmp)); v != "" {
		summary = append(summary, v)
	}
	for i := range summary {
		summary[i] = capital(summary[i])
	}
	sec.Summary = strings.Join(summary, " ")
	sec.Blocks = append(sec.Blocks, nodeTable(cmp))
	if c := nodeChart(res); c != nil {
		sec.Blocks = append(sec.Blocks, page.Block{Chart: c})
	}
	for _, n := range format.Distinct(cmp.Notes) {
		sec.Blocks = append(sec.Blocks, note("info", capital(n)))
	}
	return []page.Section{sec}, nil
}

// nodeComparison compares the cluster treatments' curves; nil without
// two cluster treatments or without curves (the capacity section reports
// why). cc, when not nil, are the curves already computed.
func nodeComparison(r *results.Results, cc *capacity.Campaign) (*scaling.NodeComparison, error) {
	clusters := 0
	for _, t := range r.Treatments() {
		if t.Target.Cluster != nil {
			clusters++
		}
	}
	if clusters < 2 {
		return nil, nil
	}
	if cc == nil {
		c, err := capacity.FromResults(r, capacity.Config{})
		if err != nil {
			return nil, err
		}
		cc = &c
	}
	if cc.Problem != nil {
		return nil, nil
	}
	return scaling.FromClusters(r, cc.Curves), nil
}

// shapeText is a deployment in words: "8 × small".
func shapeText(row scaling.NodeRow) string {
	if row.Type == "" {
		return format.Num(row.Servers) + " nodes"
	}
	return format.Num(row.Servers) + " × " + row.Type
}

// atWhat names the level whose throughput and response times stand for a
// deployment: its capacity under the SLO, or its peak when some treatment
// met the SLO at no level (scaling.FromCurves).
func atWhat(cmp *scaling.NodeComparison) string {
	if cmp.OnPeak {
		return "peak throughput"
	}
	return "capacity"
}

// nodeRowText is one deployment against the baseline; the summary and
// the terminal findings use it. at names the level compared (atWhat).
func nodeRowText(row scaling.NodeRow, baseline, at string) string {
	s := fmt.Sprintf("%s (%s, %s)", label(row.Name), row.Strategy, shapeText(row))
	if math.IsNaN(row.Throughput) {
		return s + " has no throughput estimate"
	}
	s += fmt.Sprintf(" reaches %s ok/s, a scale-up of %s over %s", format.Num(row.Throughput), num2(row.ScaleUp), label(baseline))
	if !math.IsNaN(row.SpeedUp) {
		s += fmt.Sprintf(" and a speed-up of %s", num2(row.SpeedUp))
	}
	if !math.IsNaN(row.CostPerReqPerSec) {
		s += fmt.Sprintf(", at $%.3f per month per ok/s", row.CostPerReqPerSec)
	}
	if cv := row.AtCapacity.CV(); !math.IsNaN(cv) {
		s += fmt.Sprintf("; response-time CV %s at %s", num2(cv), at)
	}
	return s
}

// linearityTexts are the lines of throughput over node count, one
// sentence per node type.
func linearityTexts(res scaling.NodeResult) []string {
	var out []string
	for _, f := range res.ByType {
		what := "nodes of size " + format.Num(f.Size)
		if f.Type != "" {
			what = f.Type + " nodes"
		}
		out = append(out, fmt.Sprintf("over %s, throughput grows by %s ok/s per node (throughput = %s + %s × nodes, R² = %s, from %s)",
			what, format.Num(f.Fit.Slope), format.Num(f.Fit.Intercept), format.Num(f.Fit.Slope), num2(f.Fit.R2), format.Plural(f.Fit.N, "deployment")))
	}
	return out
}

// variabilityText compares the response-time spread of scaling out and
// scaling up (seed 002 §V found scaling up the more variable).
func variabilityText(res scaling.NodeResult, at string) string {
	h, v := res.HorizontalCV, res.VerticalCV
	if math.IsNaN(h) || math.IsNaN(v) {
		return ""
	}
	more := "bigger nodes (vertical) vary more than more nodes (horizontal)"
	if h > v {
		more = "more nodes (horizontal) vary more than bigger nodes (vertical)"
	} else if h == v {
		more = "both vary alike"
	}
	return fmt.Sprintf("response times at %s: %s, mean CV %s against %s", at, more, num2(math.Max(h, v)), num2(math.Min(h, v)))
}

func nodeTable(cmp *scaling.NodeComparison) page.Block {
	res := cmp.Result
	src := "from each cluster treatment's completed runs; nodes = managed.cluster.nodes as the cluster started; node type, vCPUs and price from the lab hosts it ran on; " +
		"size = vCPUs per node relative to the smallest type; strategy = horizontal (nodes of the baseline's size, another count) or vertical (nodes of another size); " +
		"α = (nodes × size) over the baseline's; throughput = the capacity estimate (the highest mean throughput of a level that meets the SLO without client limits), " +
		"or, when some treatment met the SLO at no level, every treatment's peak (the highest mean throughput of a level without client limits), and the capacity columns are then at that level; " +
		"scale-up = T(αs)/T(s); speed-up = RT(s)/RT(αs), mean response time at the highest level every treatment measured below the lowest knee; efficiency = scale-up/α; " +
		"cost per month = nodes × price per node-hour (instance plus volumes) × 730 h; cost per ok/s = cost per month / throughput; " +
		"response time = every successful request of the level's runs pooled (mean, standard deviation, CV = sd/mean); levels in req/s (open loop) or clients (closed loop)"
	tb := &page.Table{ID: "node-scaling-table", Title: "Scaling over node count, baseline " + label(res.Baseline), Source: src,
		Columns: []page.Column{{Title: "treatment"}, {Title: "strategy"}, {Title: "kind"}, {Title: "nodes"}, {Title: "node type"},
			{Title: "vCPUs per node"}, {Title: "α"}, {Title: "throughput (ok/s)", Unit: "ok/s"}, {Title: "scale-up"}, {Title: "speed-up"}, {Title: "efficiency"},
			{Title: "cost per month ($)", Unit: "$"}, {Title: "cost per ok/s ($/month)", Unit: "$ per month per ok/s"},
			{Title: "common load"}, {Title: "RT mean at common load (ms)", Unit: "ms"}, {Title: "RT sd at common load (ms)", Unit: "ms"}, {Title: "RT CV at common load"},
			{Title: "capacity level"}, {Title: "RT mean at capacity (ms)", Unit: "ms"}, {Title: "RT sd at capacity (ms)", Unit: "ms"}, {Title: "RT CV at capacity"}}}
	for _, row := range res.Rows {
		typ, vcpus := row.Type, math.NaN()
		if d, ok := cmp.Deployments[row.Name]; ok {
			vcpus = d.VCPUs
		}
		if typ == "" {
			typ = "this machine"
		}
		tb.Rows = append(tb.Rows, []page.Cell{page.Text(label(row.Name)), page.Text(row.Strategy), page.Text(row.Kind), intCell(int64(row.Servers)), page.Text(typ),
			numCell(vcpus, 2), numCell(row.Alpha, 2), numCell(row.Throughput, 1), numCell(row.ScaleUp, 2), numCell(row.SpeedUp, 2), numCell(row.Efficiency, 2),
			numCell(row.CostPerMonth, 2), numCell(row.CostPerReqPerSec, 4),
			numCell(row.AtLoad.Level, 0), numCell(row.AtLoad.Mean/1000, 2), numCell(row.AtLoad.StdDev/1000, 2), numCell(row.AtLoad.CV(), 2),
			numCell(row.AtCapacity.Level, 0), numCell(row.AtCapacity.Mean/1000, 2), numCell(row.AtCapacity.StdDev/1000, 2), numCell(row.AtCapacity.CV(), 2)})
	}
	return page.Block{Table: tb}
}

// nodeChart draws throughput over node count, one series per node size,
// with each size's fitted line dashed.
func nodeChart(res scaling.NodeResult) *chart.Chart {
	bySize := map[float64][]scaling.NodeRow{}
	for _, row := range res.Rows {
		if !math.IsNaN(row.Throughput) {
			bySize[row.Size] = append(bySize[row.Size], row)
		}
	}
	if len(bySize) == 0 {
		return nil
	}
	sizes := make([]float64, 0, len(bySize))
	for s := range bySize {
		sizes = append(sizes, s)
	}
	sort.Float64s(sizes)
	line := &chart.Line{X: chart.Axis{Label: "nodes", Min: chart.At(0)}, Y: chart.Axis{Label: "throughput", Unit: "ok/s", Min: chart.At(0)}}
	for _, size := range sizes {
		rows := bySize[size]
		sort.Slice(rows, func(i, j int) bool { return rows[i].Servers < rows[j].Servers })
		name := "size " + format.Num(size)
		if rows[0].Type != "" {
			name = rows[0].Type
		}
		s := chart.Series{Name: name + " nodes"}
		for _, row := range rows {
			s.Points = append(s.Points, chart.Point{X: row.Servers, Y: chart.Num(row.Throughput)})
		}
		line.Series = append(line.Series, s)
		for _, f := range res.ByType {
			if f.Size != size || math.IsNaN(f.Fit.Slope) {
				continue
			}
			lo, hi := rows[0].Servers, rows[len(rows)-1].Servers
			line.Series = append(line.Series, chart.Series{Name: name + " fit", Dashed: true, Points: []chart.Point{
				{X: lo, Y: chart.Num(f.Fit.Intercept + f.Fit.Slope*lo)}, {X: hi, Y: chart.Num(f.Fit.Intercept + f.Fit.Slope*hi)}}})
		}
	}
	return &chart.Chart{ID: "node-scaling-throughput", Title: "Throughput over node count", Line: line,
		Source: "each cluster treatment's capacity estimate, by node count, one line per node type; dashed: the least-squares line of throughput over node count of that type"}
}

// addNodeScalingFinding adds a cluster treatment's row of the comparison
// over node count, and the lines over node count to the baseline's; cc are
// the campaign's curves.
func addNodeScalingFinding(r *results.Results, cc capacity.Campaign, treatment string, add func(label, text string)) error {
	cmp, err := nodeComparison(r, &cc)
	if err != nil || cmp == nil {
		return err
	}
	if cmp.Problem != nil {
		add("note", "scaling over node count: "+cmp.Problem.Error())
		return nil
	}
	res := cmp.Result
	for _, row := range res.Rows {
		switch {
		case row.Name != treatment:
		case row.Strategy == "baseline":
			texts := linearityTexts(res)
			if v := variabilityText(res, atWhat(cmp)); v != "" {
				texts = append(texts, v)
			}
			if len(texts) > 0 {
				add("Node scaling", "baseline of the comparison over node count; "+strings.Join(texts, "; "))
			}
		default:
			add("Node scaling", nodeRowText(row, res.Baseline, atWhat(cmp)))
		}
	}
	return nil
}
