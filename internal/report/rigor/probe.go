package rigor

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/scaling"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// probeRun is one stored probe with its settings and windows.
type probeRun struct {
	p         results.Probe
	treatment string // "" without treatments
	window    time.Duration
	margin    time.Duration
	windows   []results.ProbeWindow
}

// loadProbes reads every probe with its windows, in the order they ran.
func loadProbes(r *results.Results) ([]probeRun, error) {
	ps, err := r.Probes()
	if err != nil {
		return nil, err
	}
	var out []probeRun
	for _, p := range ps {
		ws, err := r.ProbeWindows(p.ID)
		if err != nil {
			return nil, err
		}
		set := results.SettingsOf(p)
		out = append(out, probeRun{p: p, treatment: set.Treatment, window: set.Window, margin: set.Margin, windows: ws})
	}
	return out, nil
}

func (pr probeRun) sla() string {
	return fmt.Sprintf("p%s ≤ %v", format.Num(pr.p.SLAPercentile), pr.p.SLAThreshold)
}

// probeText is a probe's result in a sentence.
func probeText(pr probeRun) string {
	p := pr.p
	s := ""
	switch {
	case p.Status == results.StatusRunning:
		s = fmt.Sprintf("the probe did not finish (%s so far)", format.Plural(len(pr.windows), "window"))
	case !math.IsNaN(p.Estimate):
		s = fmt.Sprintf("estimate %s req/s at %s after %s", format.Num(p.Estimate), pr.sla(), format.Plural(len(pr.windows), "window"))
	case p.ClientLimited:
		s = fmt.Sprintf("no estimate: the client was the bottleneck (%s)", format.Plural(len(pr.windows), "window"))
	default:
		s = fmt.Sprintf("no estimate (%s, %s)", p.Stop, format.Plural(len(pr.windows), "window"))
	}
	if math.IsNaN(p.Estimate) && !math.IsNaN(p.LowerBound) {
		s += fmt.Sprintf("; the server met %s at %s req/s", pr.sla(), format.Num(p.LowerBound))
	}
	if p.Status == results.StatusInterrupted {
		s += " (interrupted)"
	}
	if b := p.Baseline; b != nil {
		s += "; " + baselineText(*b)
	}
	return s
}

// baselineText is a probe's unloaded latency in a phrase.
func baselineText(b results.ProbeBaseline) string {
	s := fmt.Sprintf("unloaded latency %s ms", ms3(b.LatencyUs/1000))
	if !math.IsNaN(b.RTTUs) {
		s += fmt.Sprintf(" (RTT %s ms)", rttText(b.RTTUs))
	}
	return s
}

// baselineNote says how the baseline was measured and the pass rule it
// gave the probe's seconds.
func baselineNote(pr probeRun) page.Block {
	b := pr.p.Baseline
	if b == nil {
		return note("info", "No unloaded latency was measured (a probe stored before the baseline, or run with --baseline-window 0): a second passed when its median latency was at most the RTT before its window plus the margin ("+pr.margin.String()+"), seed 004's rule.")
	}
	rule := fmt.Sprintf("the RTT before its window + %s ms + the margin (%s)", ms3(b.UnloadedUs/1000), pr.margin)
	rtt := "without an RTT guard"
	if !math.IsNaN(b.RTTUs) {
		rtt = fmt.Sprintf("the TCP connect RTT before it was %s ms", rttText(b.RTTUs))
	}
	if math.IsNaN(b.RTTUs) {
		rule = fmt.Sprintf("%s ms + the margin (%s)", ms3(b.UnloadedUs/1000), pr.margin)
	}
	return note("info", fmt.Sprintf("Baseline: the unloaded end-to-end latency was %s ms (median; p90 %s ms) over %d successful requests at %s req/s for %v; %s. "+
		"A second passed when its median latency was at most %s (Headroom's addition: seed 004 compares with the RTT + margin only).",
		ms3(b.LatencyUs/1000), ms3(b.P90Us/1000), b.Completed, format.Num(b.Rate), b.Duration, rtt, rule))
}

// ProbeRow is one probe's result with the deployment it ran on, for
// comparing treatments.
type ProbeRow struct {
	Treatment  string
	Status     string
	Stop       string
	Estimate   float64 // req/s; NaN when none
	LowerBound float64 // req/s; NaN when none
	Windows    int
	SLA        string
	// The deployment, from the lab event before the probe ("" / 0 without
	// a lab): the managed server's host, else every lab host.
	Type         string
	Servers      int
	VCPUs        float64 // per server
	PricePerHour float64 // per server, volumes included
	// CostPerReqPerSec = Servers × PricePerHour × 730 / Estimate ($ per
	// month per req/s, scaling.CostPerReqPerSec); NaN without a price or an
	// estimate.
	CostPerReqPerSec float64
}

// ProbeComparison returns every stored probe with its deployment and cost
// per req/s, in the order they ran.
func ProbeComparison(r *results.Results) ([]ProbeRow, error) {
	prs, err := loadProbes(r)
	if err != nil {
		return nil, err
	}
	return probeRows(r, prs), nil
}

func probeRows(r *results.Results, prs []probeRun) []ProbeRow {
	var out []ProbeRow
	for _, pr := range prs {
		row := ProbeRow{Treatment: pr.treatment, Status: pr.p.Status, Stop: pr.p.Stop, Estimate: pr.p.Estimate, LowerBound: pr.p.LowerBound,
			Windows: len(pr.windows), SLA: pr.sla(), CostPerReqPerSec: math.NaN()}
		t, _ := r.Treatment(pr.treatment)
		if d, ok := scaling.DeploymentAt(r, pr.p.Start, t.Target.Hosts); ok {
			row.Type, row.Servers, row.VCPUs, row.PricePerHour = d.Types, d.Servers, d.VCPUs, d.PricePerHour
			row.CostPerReqPerSec = scaling.CostPerReqPerSec(d.Servers, d.PricePerHour, row.Estimate)
		}
		out = append(out, row)
	}
	return out
}

// ProbeSections is the report section of the black-box capacity probe
// (seed-digest §3, seed 004): the result of every probe, compared across
// treatments, and for each probe its windows, its per-second pass rule
// over time and the latency/throughput surface (percentile x rate x
// latency). No section without probes.
func ProbeSections(r *results.Results) ([]page.Section, error) {
	prs, err := loadProbes(r)
	if err != nil || len(prs) == 0 {
		return nil, err
	}
	sec := page.Section{ID: "probe", Title: "Capacity probe: the highest rate that meets the latency SLA"}
	var parts []string
	for _, pr := range prs {
		if pr.treatment != "" {
			parts = append(parts, format.Sentence(pr.treatment+": "+probeText(pr)))
		} else {
			parts = append(parts, capital(probeText(pr)))
		}
	}
	sec.Summary = strings.Join(parts, " ")
	if len(prs) > 1 {
		sec.Blocks = append(sec.Blocks, compareProbes(probeRows(r, prs))...)
	}
	for i, pr := range prs {
		sec.Blocks = append(sec.Blocks, probeBlocks(i, pr)...)
	}
	return []page.Section{sec}, nil
}

func compareProbes(rows []ProbeRow) []page.Block {
	tbl := &page.Table{ID: "probe-compare", Title: "Probes compared",
		Source: fmt.Sprintf("from %s; estimate = the last rate whose window met the SLA (seed 004); lower bound = the highest rate that met it when there is no estimate; "+
			"deployment from the lab event recorded before each probe; cost per req/s = servers × price per server-hour (instance plus volumes) × 730 h / estimate", format.Plural(len(rows), "probe")),
		Columns: []page.Column{{Title: "treatment"}, {Title: "SLA"}, {Title: "estimate (req/s)", Unit: "req/s"}, {Title: "lower bound (req/s)", Unit: "req/s"},
			{Title: "windows"}, {Title: "stop"}, {Title: "type"}, {Title: "vCPUs"}, {Title: "$ per hour", Unit: "$"}, {Title: "cost per req/s ($/month)", Unit: "$ per month per req/s"}}}
	est := chart.BarSeries{Name: "estimate (req/s)"}
	var cats []string
	for _, r := range rows {
		typ := r.Type
		if typ == "" {
			typ = "–"
		} else if r.Servers > 1 {
			typ = fmt.Sprintf("%d × %s", r.Servers, typ)
		}
		vcpus, price := page.Text("–"), page.Text("–")
		if r.Servers > 0 {
			vcpus, price = numCell(r.VCPUs, 2), numCell(r.PricePerHour, 3)
		}
		e := numCell(r.Estimate, 0)
		if math.IsNaN(r.Estimate) {
			e = verdictCell("none", "warn")
		}
		tbl.Rows = append(tbl.Rows, []page.Cell{page.Text(label(r.Treatment)), page.Text(r.SLA), e, numCell(r.LowerBound, 0),
			intCell(int64(r.Windows)), page.Text(r.Stop), page.Text(typ), vcpus, price, numCell(r.CostPerReqPerSec, 4)})
		cats = append(cats, label(r.Treatment))
		est.Values = append(est.Values, chart.Num(r.Estimate))
	}
	return []page.Block{{Table: tbl}, {Chart: &chart.Chart{ID: "probe-compare-estimates", Title: "Probe estimates by treatment", Source: tbl.Source,
		Bars: &chart.Bars{X: chart.Axis{Label: "treatment"}, Y: chart.Axis{Label: "estimate", Unit: "req/s", Min: chart.At(0)}, Categories: cats, Series: []chart.BarSeries{est}}}}}
}

// rttText prints an RTT given in µs as milliseconds with two decimals
// (lab and LAN round trips are tens of µs).
func rttText(us float64) string {
	if math.IsNaN(us) || math.IsInf(us, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f", us/1000)
}

// windowMark colours a window's verdict.
func windowMark(w results.ProbeWindow) string {
	switch {
	case w.Discarded:
		return "warn"
	case w.Phase == "fine-tune" && w.Trend.Unstable && !w.Accepted:
		return "fail" // met the SLA percentile, but its queue grew
	case w.Accepted || w.MetSLA:
		return "pass"
	}
	return "fail"
}

// percentile returns a window's latency (µs) at p, one of
// results.ProbePercentiles; NaN when not stored.
func percentile(w results.ProbeWindow, p float64) float64 {
	for i, q := range results.ProbePercentiles {
		if q == p && i < len(w.Percentiles) {
			return w.Percentiles[i]
		}
	}
	return math.NaN()
}

func probeBlocks(i int, pr probeRun) []page.Block {
	id := fmt.Sprintf("probe-p%d", i+1)
	title := ""
	if pr.treatment != "" {
		title = " (" + pr.treatment + ")"
	}
	p := pr.p
	win := "windows"
	if pr.window > 0 {
		win = "windows of " + pr.window.String()
	}
	src := fmt.Sprintf("from the %s of probe %d%s against the %s target, SLA %s", win, p.ID, title, p.Target, pr.sla())
	if p.RTTAddr != "" {
		src += ", RTT guard on " + p.RTTAddr
	}
	var blocks []page.Block
	maxLat := 0.0
	for _, w := range pr.windows {
		maxLat = math.Max(maxLat, finiteOr0(w.SLAUs))
	}
	unit, div := format.LatencyUnit(maxLat)
	slaCol := "p" + format.Num(p.SLAPercentile) + " (SLA)"
	tbl := &page.Table{ID: id + "-windows", Title: "Probe windows" + title,
		Source: src + "; rate = T, offered = requests sent per second, achieved = successful completions per second; latencies over the whole window's successful requests; " +
			"pass = seconds whose median latency was at most the limit (the RTT before the window + the unloaded latency beyond the RTT + the margin); " +
			"trend = Sen's slope of the per-second medians, unstable when rising with Mann-Kendall p ≤ the probe's level and by at least the margin over the window (Headroom's rule, docs/probe.md)",
		Columns: []page.Column{{Title: "#"}, {Title: "phase"}, {Title: "rate (req/s)", Unit: "req/s"}, {Title: "offered (req/s)", Unit: "req/s"},
			{Title: "achieved (ok/s)", Unit: "ok/s"}, {Title: "p50 (" + unit + ")", Unit: "µs"}, {Title: "p90 (" + unit + ")", Unit: "µs"}, {Title: slaCol + " (" + unit + ")", Unit: "µs"},
			{Title: "RTT before/after (ms)"}, {Title: "pass"}, {Title: "errors"}, {Title: "dropped"}, {Title: "verdict"},
			{Title: "limit (ms)", Unit: "µs"}, {Title: "trend (ms/s)", Unit: "ms/s"}}}
	lat := func(v float64) page.Cell {
		if math.IsNaN(v) {
			return page.Text("–")
		}
		return page.Number(fmt.Sprintf("%.2f", v/div), v)
	}
	for _, w := range pr.windows {
		verdict := w.Verdict
		if w.Note != "" && (w.Discarded || w.Trend.Unstable) {
			verdict += ": " + w.Note
		}
		tbl.Rows = append(tbl.Rows, []page.Cell{intCell(int64(w.Seq + 1)), page.Text(w.Phase), page.Number(format.Num(w.Rate), w.Rate),
			numCell(w.Offered, 1), numCell(w.Achieved, 1), lat(percentile(w, 50)), lat(percentile(w, 90)), lat(w.SLAUs),
			page.Text(rttText(w.RTTBeforeUs) + " / " + rttText(w.RTTAfterUs)), page.Number(fmt.Sprintf("%d/%d", w.PassedSeconds, len(w.Seconds)), float64(w.PassedSeconds)),
			intCell(w.Errors), intCell(w.Dropped), verdictCell(verdict, windowMark(w)), limitCell(w.LimitUs), trendCell(w.Trend)})
	}
	blocks = append(blocks, page.Block{Table: tbl}, baselineNote(pr))
	if len(pr.windows) == 0 {
		return append(blocks, note("info", "The probe stored no window."))
	}

	rate := chart.Series{Name: "rate T"}
	achieved := chart.Series{Name: "achieved (ok/s)"}
	for _, w := range pr.windows {
		rate.Points = append(rate.Points, chart.Point{X: float64(w.Seq + 1), Y: chart.Num(w.Rate)})
		achieved.Points = append(achieved.Points, chart.Point{X: float64(w.Seq + 1), Y: chart.Num(w.Achieved)})
	}
	var rules []chart.Rule
	if !math.IsNaN(p.Estimate) {
		rules = append(rules, chart.Rule{Axis: "y", Value: p.Estimate, Label: "estimate " + format.Num(p.Estimate)})
	}
	blocks = append(blocks, page.Block{Chart: &chart.Chart{ID: id + "-rates", Title: "Rate per window: ramp-up, then fine-tuning" + title,
		Source: src + "; one point per window in the order run",
		Line: &chart.Line{X: chart.Axis{Label: "window", Unit: "#"}, Y: chart.Axis{Label: "rate", Unit: "req/s", Min: chart.At(0)},
			Series: []chart.Series{rate, achieved}, Rules: rules}}})
	if c := secondsChart(id, title, src, pr); c != nil {
		blocks = append(blocks, page.Block{Chart: c})
	}
	if c := surfaceChart(id, title, src, pr); c != nil {
		blocks = append(blocks, page.Block{Chart: c})
	}
	if p.Note != "" {
		blocks = append(blocks, note("info", capital(p.Note)))
	}
	return blocks
}

func limitCell(v float64) page.Cell {
	if math.IsNaN(v) {
		return page.Text("–")
	}
	return page.Number(fmt.Sprintf("%.2f", v/1000), v)
}

// trendCell shows a window's latency trend, marked when unstable.
func trendCell(t results.ProbeTrend) page.Cell {
	if !t.Judged {
		return page.Text("–")
	}
	c := page.Number(fmt.Sprintf("%+.2f (p = %.2g)", t.SlopeUs/1000, t.P), t.SlopeUs/1000)
	if t.Unstable {
		c.Text += " unstable"
		c.Mark = "fail"
	}
	return c
}

// secondsChart is the per-second pass rule over the probe's time: each
// second's median latency beside the bar it had to stay under (the RTT
// before its window plus the margin), failing seconds shaded.
func secondsChart(id, title, src string, pr probeRun) *chart.Chart {
	t0 := pr.windows[0].Start
	p50 := chart.Series{Name: "median latency per second"}
	bar := chart.Series{Name: "pass limit (RTT before + unloaded + margin)", Dashed: true}
	var ranges []chart.Range
	maxUS := 0.0
	for _, w := range pr.windows {
		for _, s := range w.Seconds {
			maxUS = math.Max(maxUS, finiteOr0(s.P50Us))
		}
	}
	unit, div := format.LatencyUnit(maxUS)
	n := 0
	for _, w := range pr.windows {
		off := w.Start.Sub(t0).Seconds()
		limit := w.LimitUs / div
		if math.IsNaN(limit) && !math.IsNaN(w.RTTBeforeUs) { // stored before the baseline: seed 004's limit
			limit = (w.RTTBeforeUs + us(pr.margin)) / div
		} else if math.IsNaN(limit) && pr.margin > 0 {
			limit = us(pr.margin) / div
		}
		for _, s := range w.Seconds {
			x := off + float64(s.Index) + 0.5
			p50.Points = append(p50.Points, chart.Point{X: x, Y: chart.Num(s.P50Us / div)})
			bar.Points = append(bar.Points, chart.Point{X: x, Y: chart.Num(limit)})
			if !s.Pass {
				ranges = append(ranges, chart.Range{From: off + float64(s.Index), To: off + float64(s.Index) + 1, Label: fmt.Sprintf("window %d second %d failed", w.Seq+1, s.Index+1)})
			}
			n++
		}
		// A gap between windows breaks the lines.
		p50.Points = append(p50.Points, chart.Point{X: off + w.Duration.Seconds() + 0.01, Y: chart.NaN})
		bar.Points = append(bar.Points, chart.Point{X: off + w.Duration.Seconds() + 0.01, Y: chart.NaN})
	}
	if n == 0 {
		return nil
	}
	var values []float64
	for _, pt := range p50.Points {
		values = append(values, float64(pt.Y))
	}
	return &chart.Chart{ID: id + "-seconds", Title: "Per-second pass rule over the probe" + title,
		Source: src + "; x = seconds since the first window started; a second passes when its median latency is at most the RTT measured before its window plus the unloaded latency beyond the RTT (the baseline) plus the margin (" + pr.margin.String() + ") and its errors are within bounds; shaded seconds failed",
		Line: &chart.Line{X: chart.Axis{Label: "time since the first window", Unit: "s"}, Y: chart.Axis{Label: "median latency", Unit: unit, Log: wantLog(values)},
			Series: []chart.Series{p50, bar}, Ranges: ranges, RangesName: "failed seconds"}}
}

// surfaceChart is seed 004 §4.4's latency/throughput surface: for every
// rate the probe held (discarded windows left out), the latency at each
// stored percentile, as a heat map with rates across and percentiles up.
func surfaceChart(id, title, src string, pr probeRun) *chart.Chart {
	byRate := map[float64][]results.ProbeWindow{}
	maxUS := 0.0
	for _, w := range pr.windows {
		if w.Discarded || len(w.Percentiles) == 0 {
			continue
		}
		byRate[w.Rate] = append(byRate[w.Rate], w)
		for _, v := range w.Percentiles {
			maxUS = math.Max(maxUS, finiteOr0(v))
		}
	}
	if len(byRate) == 0 {
		return nil
	}
	rates := make([]float64, 0, len(byRate))
	for r := range byRate {
		rates = append(rates, r)
	}
	sort.Float64s(rates)
	unit, div := format.LatencyUnit(maxUS)
	h := &chart.HeatMap{X: chart.Axis{Label: "rate", Unit: "req/s"}, Y: chart.Axis{Label: "percentile"}, Scale: chart.Axis{Label: "latency", Unit: unit}}
	for _, r := range rates {
		h.XLabels = append(h.XLabels, format.Num(r))
	}
	var all []float64
	for k, p := range results.ProbePercentiles {
		h.YLabels = append(h.YLabels, "p"+format.Num(p))
		row := make([]chart.Num, len(rates))
		for j, r := range rates {
			var sum float64
			n := 0
			for _, w := range byRate[r] {
				if k < len(w.Percentiles) && !math.IsNaN(w.Percentiles[k]) {
					sum += w.Percentiles[k]
					n++
				}
			}
			row[j] = chart.NaN
			if n > 0 {
				row[j] = chart.Num(sum / float64(n) / div)
				all = append(all, sum/float64(n))
			}
		}
		h.Values = append(h.Values, row)
	}
	h.Scale.Log = wantLog(all)
	return &chart.Chart{ID: id + "-surface", Title: "Latency/throughput surface" + title,
		Source: src + "; cell = the latency at that percentile of the window's successful requests (its merged histogram), the mean over the windows held at that rate; discarded windows left out; grey = no successful request",
		Heat:   h}
}

// ms3 prints a latency in ms with three significant digits (10.2, 0.153),
// whole milliseconds from 100 up.
func ms3(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
