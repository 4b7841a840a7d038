package rigor

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// confidence is the level of the capacity curve's t intervals (the
// analysis's default).
const confidence = capacity.DefaultConfidence

// CapacitySections is the report section of the load-response curves
// (seed-digest §1-2): for every treatment, throughput and mean latency
// against offered load with 95% t confidence intervals, the knee, the
// first level failing the SLO (the treatment's own SLO), the levels the
// client limited, and CPU against load. No section without completed
// runs.
func CapacitySections(r *results.Results) ([]page.Section, error) {
	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil {
		return nil, err
	}
	sec := page.Section{ID: "capacity", Title: "Capacity: knee and load response by treatment"}
	if cc.Problem != nil {
		sec.Summary = "The capacity analysis could not run on these results."
		sec.Blocks = append(sec.Blocks, note("warning", capital(cc.Problem.Error())))
		return []page.Section{sec}, nil
	}
	tcs := cc.Curves
	if len(tcs) == 0 {
		return nil, nil
	}
	var parts []string
	for _, tc := range tcs {
		parts = append(parts, curveSummary(tc))
	}
	sec.Summary = strings.Join(parts, " ")
	if len(tcs) > 1 {
		sec.Blocks = append(sec.Blocks, compareCharts(tcs)...)
	}
	for i, tc := range tcs {
		sec.Blocks = append(sec.Blocks, curveBlocks(i, tc)...)
	}
	return []page.Section{sec}, nil
}

// kneeText says where the curve's knee is, or why there is none.
func kneeText(tc capacity.TreatmentCurve) string {
	c := tc.Curve
	if c.Knee != nil {
		return fmt.Sprintf("the knee is at %s: %s", format.LoadText(tc.Curve.Model, c.Knee.Level), c.Knee.Reason)
	}
	// The capacity analysis's note on why there is no knee.
	for _, n := range c.Notes {
		for _, why := range []string{"capacity is above", "capacity is below", "no knee can be found", "a knee needs"} {
			if strings.Contains(n, why) {
				return "no knee: " + n
			}
		}
	}
	return "no knee was found"
}

// capacityText is the curve's one capacity figure (capacity.Curve's
// MaxThroughput), the one every $/req/s of the report divides by.
func capacityText(tc capacity.TreatmentCurve) string {
	c := tc.Curve
	if c.MaxIndex < 0 {
		return c.NoCapacity
	}
	p := c.Points[c.MaxIndex]
	what := "the highest throughput the client did not limit"
	if tc.Input.SLO != nil {
		what = "the highest throughput that meets the SLO without client limits"
	}
	return fmt.Sprintf("%s is %s ok/s at %s", what, format.Num(c.MaxThroughput), format.LoadText(tc.Curve.Model, p.Level.Level))
}

// sloFinding is the SLO verdict of the curve; "" without an SLO.
func sloFinding(tc capacity.TreatmentCurve) string {
	o := tc.Input.SLO
	c := tc.Curve
	if o == nil || len(c.Points) == 0 {
		return ""
	}
	s := fmt.Sprintf("the SLO p%s ≤ %v", format.Num(o.Percentile), o.Threshold)
	if c.FirstFail < 0 {
		return s + " is met at every level, up to " + format.LoadText(tc.Curve.Model, c.Points[len(c.Points)-1].Level.Level)
	}
	f := c.Points[c.FirstFail]
	if c.LastPass >= 0 {
		s += " is met up to " + format.LoadText(tc.Curve.Model, c.Points[c.LastPass].Level.Level) + " and"
	}
	return fmt.Sprintf("%s first fails at %s (%.2f%% of offered requests within %v)", s, format.LoadText(tc.Curve.Model, f.Level.Level), 100*f.SLO.Within.Mean, o.Threshold)
}

// clientText names the levels the client limited; "" when none.
func clientText(tc capacity.TreatmentCurve) string {
	var ls []string
	for _, i := range tc.Curve.ClientLimited {
		ls = append(ls, format.LoadText(tc.Curve.Model, tc.Curve.Points[i].Level.Level))
	}
	if len(ls) == 0 {
		return ""
	}
	return "the client was the limit at " + strings.Join(ls, ", ") + " (left out of the knee and the capacity estimate)"
}

func curveSummary(tc capacity.TreatmentCurve) string {
	parts := []string{kneeText(tc), capacityText(tc)}
	for _, s := range []string{sloFinding(tc), clientText(tc)} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	text := strings.Join(parts, "; ")
	if tc.Treatment.Name != "" {
		return format.Sentence(tc.Treatment.Name + ": " + text)
	}
	return capital(text)
}

// levelMarks are the findings at point i, for the table.
func levelMarks(tc capacity.TreatmentCurve, i int) (string, string) {
	c := tc.Curve
	var ms []string
	mark := ""
	if c.Knee != nil && c.Knee.Index == i {
		ms = append(ms, "knee")
		mark = "pass"
	}
	if c.MaxIndex == i {
		ms = append(ms, "capacity")
	}
	if c.FirstFail == i {
		ms = append(ms, "first SLO failure")
		mark = "fail"
	}
	if c.Points[i].Saturated {
		ms = append(ms, "saturated")
	}
	if c.Points[i].ClientLimited > 0 {
		ms = append(ms, "client-limited")
		if mark == "" {
			mark = "warn"
		}
	}
	return strings.Join(ms, ", "), mark
}

func curveBlocks(i int, tc capacity.TreatmentCurve) []page.Block {
	id := fmt.Sprintf("capacity-t%d", i+1)
	who := "the campaign"
	title := ""
	if tc.Treatment.Name != "" {
		who = "treatment " + tc.Treatment.Name
		title = " (" + tc.Treatment.Name + ")"
	}
	src := runSource(tc.Input, who)
	ciSrc := src + "; each point is the mean across repetitions, error bars the 95% t confidence interval (n−1 degrees of freedom; none with one repetition)"
	c := tc.Curve
	var blocks []page.Block

	maxLat := 0.0
	for _, p := range c.Points {
		maxLat = math.Max(maxLat, p.Latency.Mean+finiteOr0(p.LatencyCI))
		if p.SLO != nil {
			maxLat = math.Max(maxLat, p.SLO.Value.Mean)
		}
	}
	unit, div := format.LatencyUnit(maxLat)
	cols := []page.Column{loadColumn(tc.Curve.Model), {Title: "reps"}, {Title: "throughput (ok/s) [95% CI]", Unit: "ok/s"},
		{Title: "shortfall (%)", Unit: "%"}, {Title: "mean latency (" + unit + ") [95% CI]", Unit: "µs"}}
	if tc.Input.SLO != nil {
		cols = append(cols, page.Column{Title: "SLO"})
	}
	cols = append(cols, page.Column{Title: "busiest host CPU (%)", Unit: "%"}, page.Column{Title: "finding"})
	tbl := &page.Table{ID: id + "-table", Title: "Load response" + title,
		Source: src + "; cells print the mean across repetitions and its 95% t confidence interval in brackets (report.json: value = mean, se = standard error); " +
			"shortfall = 1 − throughput/offered rate, saturated above 5%; mean latency = the mean response time tau of successful requests, all operations; " +
			"busiest host = the monitored host with the highest mean CPU utilisation at the level",
		Columns: cols}
	for k, p := range c.Points {
		shortfall := page.Text("–")
		if !math.IsNaN(p.Shortfall) {
			shortfall = numCell(100*p.Shortfall, 1)
			if p.Saturated {
				shortfall.Mark = "warn"
			}
		}
		row := []page.Cell{page.Number(format.Num(p.Level.Level), p.Level.Level), intCell(int64(p.Reps)),
			ciCell(p.Throughput, p.ThroughputCI, 1, 1), shortfall, ciCell(p.Latency, p.LatencyCI, 2, div)}
		if tc.Input.SLO != nil {
			v := verdictCell("pass", "pass")
			if p.SLO == nil || !p.SLO.Pass {
				v = verdictCell("FAIL", "fail")
			}
			row = append(row, v)
		}
		busy := page.Text("–")
		if p.BusiestHost != "" {
			busy = page.Number(fmt.Sprintf("%s %.0f", p.BusiestHost, p.BusiestCPU), p.BusiestCPU)
		}
		text, mark := levelMarks(tc, k)
		row = append(row, busy, verdictCell(text, mark))
		tbl.Rows = append(tbl.Rows, row)
	}
	blocks = append(blocks, page.Block{Table: tbl})

	rules := curveRules(tc)
	achieved := chart.Series{Name: "achieved (ok/s)"}
	offered := chart.Series{Name: "offered", Dashed: true}
	for _, p := range c.Points {
		achieved.Points = append(achieved.Points, chart.Point{X: p.Level.Level, Y: chart.Num(p.Throughput.Mean), Err: chart.Num(p.ThroughputCI)})
		offered.Points = append(offered.Points, chart.Point{X: p.Level.Level, Y: chart.Num(p.Level.Level)})
	}
	series := []chart.Series{achieved}
	if tc.Curve.Model == "open" {
		series = append(series, offered)
	}
	blocks = append(blocks, page.Block{Chart: &chart.Chart{ID: id + "-throughput", Title: "Throughput against " + format.LoadAxis(tc.Curve.Model).Label + title, Source: ciSrc,
		Line: &chart.Line{X: format.LoadAxis(tc.Curve.Model), Y: chart.Axis{Label: "throughput", Unit: "ok/s", Min: chart.At(0)}, Series: series, Rules: rules}}})

	mean := chart.Series{Name: "mean latency"}
	var sloSeries chart.Series
	var values []float64
	for _, p := range c.Points {
		mean.Points = append(mean.Points, chart.Point{X: p.Level.Level, Y: chart.Num(p.Latency.Mean / div), Err: chart.Num(p.LatencyCI / div)})
		values = append(values, p.Latency.Mean)
		if p.SLO != nil {
			sloSeries.Points = append(sloSeries.Points, chart.Point{X: p.Level.Level, Y: chart.Num(p.SLO.Value.Mean / div), Err: chart.Num(p.SLO.Value.HalfWidth(confidence) / div)})
			values = append(values, p.SLO.Value.Mean)
		}
	}
	latSeries := []chart.Series{mean}
	latRules := rules
	if o := tc.Input.SLO; o != nil {
		sloSeries.Name = "p" + format.Num(o.Percentile)
		if o.Op != "" {
			sloSeries.Name += " of " + o.Op
		}
		latSeries = append(latSeries, sloSeries)
		latRules = append([]chart.Rule{{Axis: "y", Value: float64(o.Threshold.Microseconds()) / div, Label: "SLO " + o.Threshold.String()}}, rules...)
	}
	blocks = append(blocks, page.Block{Chart: &chart.Chart{ID: id + "-latency", Title: "Latency against " + format.LoadAxis(tc.Curve.Model).Label + title,
		Source: ciSrc + "; mean = tau, the per-run mean response time of successful requests; the SLO percentile comes from each run's merged histogram",
		Line:   &chart.Line{X: format.LoadAxis(tc.Curve.Model), Y: chart.Axis{Label: "latency", Unit: unit, Log: wantLog(values)}, Series: latSeries, Rules: latRules}}})

	if cpu := cpuSeries(c); len(cpu) > 0 {
		blocks = append(blocks, page.Block{Chart: &chart.Chart{ID: id + "-cpu", Title: "Host CPU against " + format.LoadAxis(tc.Curve.Model).Label + title,
			Source: src + "; each point is the mean across repetitions of the host's mean CPU utilisation over the measured phase (lab hosts: share of their vCPU quota), error bars none",
			Line:   &chart.Line{X: format.LoadAxis(tc.Curve.Model), Y: chart.Axis{Label: "CPU utilisation", Unit: "%", Min: chart.At(0), Max: chart.At(100)}, Series: cpu, Rules: rules}}})
	}
	if c.Knee != nil {
		blocks = append(blocks, note("info", format.Sentence(fmt.Sprintf("Knee%s, %s method: %s", title, c.Knee.Method, c.Knee.Reason))))
	}
	prefix := ""
	if tc.Treatment.Name != "" {
		prefix = tc.Treatment.Name + ": "
	}
	for _, n := range c.Notes {
		level := "info"
		if strings.Contains(n, "client was the limit") {
			level = "warning"
		}
		if prefix == "" {
			blocks = append(blocks, note(level, capital(n)))
		} else {
			blocks = append(blocks, note(level, format.Sentence(prefix+n)))
		}
	}
	return blocks
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// curveRules mark the knee, the first level failing the SLO and the
// client-limited levels on a chart over load.
func curveRules(tc capacity.TreatmentCurve) []chart.Rule {
	c := tc.Curve
	var rs []chart.Rule
	if c.Knee != nil {
		rs = append(rs, chart.Rule{Axis: "x", Value: c.Knee.Level, Label: "knee"})
	}
	if c.FirstFail >= 0 {
		rs = append(rs, chart.Rule{Axis: "x", Value: c.Points[c.FirstFail].Level.Level, Label: "first SLO failure"})
	}
	for _, i := range c.ClientLimited {
		rs = append(rs, chart.Rule{Axis: "x", Value: c.Points[i].Level.Level, Label: "client-limited"})
	}
	return rs
}

// cpuSeries is one series per monitored host of its mean CPU per level.
func cpuSeries(c capacity.Curve) []chart.Series {
	byHost := map[string]*chart.Series{}
	for _, p := range c.Points {
		for _, h := range p.Hosts {
			if math.IsNaN(h.CPUMean) {
				continue
			}
			s := byHost[h.Host]
			if s == nil {
				s = &chart.Series{Name: h.Host}
				byHost[h.Host] = s
			}
			s.Points = append(s.Points, chart.Point{X: p.Level.Level, Y: chart.Num(h.CPUMean)})
		}
	}
	names := make([]string, 0, len(byHost))
	for n := range byHost {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]chart.Series, 0, len(names))
	for _, n := range names {
		out = append(out, *byHost[n])
	}
	return out
}

// compareCharts overlay the treatments' curves.
func compareCharts(tcs []capacity.TreatmentCurve) []page.Block {
	model := tcs[0].Curve.Model
	for _, tc := range tcs {
		if tc.Curve.Model != model {
			return nil // open and closed curves share no x axis
		}
	}
	var tput, lat []chart.Series
	maxLat := 0.0
	var values []float64
	for _, tc := range tcs {
		for _, p := range tc.Curve.Points {
			maxLat = math.Max(maxLat, p.Latency.Mean+finiteOr0(p.LatencyCI))
			values = append(values, p.Latency.Mean)
		}
	}
	unit, div := format.LatencyUnit(maxLat)
	var srcs []string
	for _, tc := range tcs {
		t := chart.Series{Name: tc.Treatment.Name}
		l := chart.Series{Name: tc.Treatment.Name}
		for _, p := range tc.Curve.Points {
			t.Points = append(t.Points, chart.Point{X: p.Level.Level, Y: chart.Num(p.Throughput.Mean), Err: chart.Num(p.ThroughputCI)})
			l.Points = append(l.Points, chart.Point{X: p.Level.Level, Y: chart.Num(p.Latency.Mean / div), Err: chart.Num(p.LatencyCI / div)})
		}
		tput, lat = append(tput, t), append(lat, l)
		srcs = append(srcs, strings.TrimPrefix(runSource(tc.Input, "treatment "+tc.Treatment.Name), "from "))
	}
	src := "from " + strings.Join(srcs, "; ") + "; each point is the mean across repetitions, error bars the 95% t confidence interval"
	return []page.Block{
		{Chart: &chart.Chart{ID: "capacity-compare-throughput", Title: "Throughput against " + format.LoadAxis(model).Label + ", by treatment", Source: src,
			Line: &chart.Line{X: format.LoadAxis(model), Y: chart.Axis{Label: "throughput", Unit: "ok/s", Min: chart.At(0)}, Series: tput}}},
		{Chart: &chart.Chart{ID: "capacity-compare-latency", Title: "Mean latency against " + format.LoadAxis(model).Label + ", by treatment", Source: src + "; mean latency = tau of successful requests, all operations",
			Line: &chart.Line{X: format.LoadAxis(model), Y: chart.Axis{Label: "mean latency", Unit: unit, Log: wantLog(values)}, Series: lat}}},
	}
}

// wantLog says whether values spread over more than two decades.
func wantLog(values []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return hi > 0 && hi/lo > 100
}
