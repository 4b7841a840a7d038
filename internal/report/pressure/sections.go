package pressure

import (
	"fmt"
	"math"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
)

// maxChartPoints bounds the points of one SLP time series chart; longer
// series are drawn as means of consecutive points (the critical periods
// are shaded from the full series).
const maxChartPoints = 1200

// Sections are the report's pressure sections: SLP per treatment (seed
// 000 boxplots, table, time series with critical periods shaded), the
// recommendations, the before/after comparison across treatments, the
// cost comparison (seed 000 Table 1) and the normalisation fits. None
// when nothing had an ESL model.
func Sections(a *assess.Assessment) []page.Section {
	if subjectCount(a) == 0 && len(a.Fits) == 0 {
		return nil
	}
	var out []page.Section
	main := page.Section{ID: "slp", Title: "Service level pressure", Summary: summary(a)}
	main.Blocks = append(main.Blocks, page.Block{Note: &page.Note{Level: "info", Text: RulesText(a) + " Boxes: line at the mean, box from the 25th to the 75th percentile, whiskers at the 1st and 99th (seed 000)."}})
	for ti, t := range a.Treatments {
		main.Blocks = append(main.Blocks, treatmentBlocks(a, ti, t)...)
	}
	for _, n := range a.Notes {
		main.Blocks = append(main.Blocks, page.Block{Note: &page.Note{Level: "warning", Text: n}})
	}
	out = append(out, main)
	if s, ok := recommendationSection(a); ok {
		out = append(out, s)
	}
	if s, ok := beforeAfterSection(a); ok {
		out = append(out, s)
	}
	if s, ok := costSection(a); ok {
		out = append(out, s)
	}
	if s, ok := fitSection(a); ok {
		out = append(out, s)
	}
	return out
}

// summary is the finding in a sentence or two.
func summary(a *assess.Assessment) string {
	var parts []string
	for _, t := range a.Treatments {
		for _, f := range t.Findings {
			if f.Class == slp.ProvisionMore || f.Class == slp.TransientSaturation {
				parts = append(parts, fmt.Sprintf("%s%s", inTreatment(t.Name), strings.TrimSuffix(f.Message, ".")))
			}
		}
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("No service was under persistent or transient pressure (%d series assessed)", subjectCount(a)))
	}
	s := strings.Join(parts, ". ") + "."
	if sh := volumeShifts(a); len(sh) > 0 && len(sh) <= 4 {
		s += " " + sentences(sh)
	}
	return s
}

// sentences joins clauses into sentences ending with a full stop.
func sentences(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return strings.Join(xs, "; ") + "."
}

func inTreatment(name string) string {
	if name == "" {
		return ""
	}
	return "In " + name + ", "
}

func sourceOf(t assess.Treatment) string {
	if t.Imported {
		return "every sample in the results (imported data, no runs)"
	}
	return fmt.Sprintf("per-interval samples of the measured phases of %d completed run(s)", t.Runs)
}

// idPart is the part of a treatment's IDs that names it: its index, and
// its ID when it has a name ("1-fast-2").
func idPart(name string, i int) string {
	if name == "" {
		return fmt.Sprint(i)
	}
	return fmt.Sprintf("%d-%s", i, format.ID(name))
}

func treatmentBlocks(a *assess.Assessment, ti int, t assess.Treatment) []page.Block {
	id := idPart(t.Name, ti)
	title := ""
	if t.Name != "" {
		title = " · " + t.Name
	}
	var blocks []page.Block
	if len(t.Subjects) == 0 {
		return []page.Block{{Note: &page.Note{Level: "info", Text: treatmentLabel(t.Name) + ": no subject with an ESL model and samples."}}}
	}
	var boxes []chart.Box
	for _, s := range t.Subjects {
		b := s.Summary.Box
		boxes = append(boxes, chart.Box{Label: boxLabel(s), N: b.N,
			Mean: chart.Num(b.Mean), P1: chart.Num(b.P1), P25: chart.Num(b.P25), P75: chart.Num(b.P75), P99: chart.Num(b.P99)})
	}
	blocks = append(blocks, page.Block{Chart: &chart.Chart{ID: "slp-boxes-" + id, Title: "Service level pressure per host and service" + title,
		Source: sourceOf(t) + "; time-weighted, nearest-rank percentiles; ESL models in the table below",
		Boxes:  &chart.Boxes{X: chart.Axis{Label: "host, service, quality"}, Y: chart.Axis{Label: "SLP", Unit: "%", Min: chart.At(0)}, Boxes: boxes}}})
	blocks = append(blocks, page.Block{Table: slpTable(a, "slp-table-"+id, "SLP and critical pressure times"+title, t)})
	for si, s := range t.Subjects {
		blocks = append(blocks, page.Block{Chart: timeSeries(a, fmt.Sprintf("slp-ts-%s-%d", id, si), t, s)})
	}
	for _, f := range t.Findings {
		level := "warning"
		if f.Class == slp.OverProvisioned {
			level = "info"
		}
		text := f.Message
		if f.Action != "" {
			text += ". Suggested: " + f.Action + "."
		}
		blocks = append(blocks, page.Block{Note: &page.Note{Level: level, Text: text}})
	}
	return blocks
}

func shortQuality(q string) string {
	switch q {
	case "ops_per_s":
		return "ops/s"
	case "bytes_per_s":
		return "bw/s"
	case "rx_bytes_per_s":
		return "rx"
	case "tx_bytes_per_s":
		return "tx"
	case "util_pct":
		return "util"
	}
	return q
}

// boxLabel names a subject briefly under a box: host, resource without
// its kind prefix, source, quality (db1 data ops/s, db1 eth0 rx).
func boxLabel(s assess.Subject) string {
	res := s.Resource
	if _, name, ok := strings.Cut(res, ":"); ok && name != "" && !strings.HasPrefix(res, "cgroup:") {
		res = name
	}
	if s.Source != "sampled" {
		res += "@" + s.Source
	}
	return s.Host + " " + res + " " + shortQuality(string(s.Quality))
}

func slpTable(a *assess.Assessment, id, title string, t assess.Treatment) *page.Table {
	cols := []page.Column{{Title: "host"}, {Title: "service"}, {Title: "quality"}, {Title: "ESL"}, {Title: "ESL model"},
		{Title: "observed (mean)"}, {Title: "mean SLP", Unit: "%"}, {Title: "p1", Unit: "%"}, {Title: "p25", Unit: "%"},
		{Title: "p75", Unit: "%"}, {Title: "p99", Unit: "%"}}
	for _, c := range a.Thresholds {
		cols = append(cols, page.Column{Title: fmt.Sprintf("MCPT > %g%%", c), Unit: "s"}, page.Column{Title: fmt.Sprintf("MCPT > %g%% (%% of time)", c), Unit: "%"},
			page.Column{Title: fmt.Sprintf("TCPT > %g%%", c), Unit: "s"}, page.Column{Title: fmt.Sprintf("TCPT > %g%% (%% of time)", c), Unit: "%"})
	}
	var rows [][]page.Cell
	for _, s := range t.Subjects {
		b := s.Summary.Box
		row := []page.Cell{page.Text(s.Host), page.Text(s.Service), page.Text(string(s.Quality)), page.Number(s.ESL, s.ESLMean), page.Text(s.Model),
			page.Number(assess.FormatLevel(s.Observed, s.Unit), s.Observed), pctCell(b.Mean), pctCell(b.P1), pctCell(b.P25), pctCell(b.P75), pctCell(b.P99)}
		for _, c := range s.Summary.Critical {
			row = append(row, page.Number(secs(c.MCPT), c.MCPT.Seconds()), pctCell(c.MCPTPct), page.Number(secs(c.TCPT), c.TCPT.Seconds()), pctCell(c.TCPTPct))
		}
		rows = append(rows, row)
	}
	return &page.Table{ID: id, Title: title, Source: sourceOf(t) + "; SLP(o) = Σ (o/s_j) f_j per interval (seed-digest §4); MCPT/TCPT count intervals strictly above the threshold, over the covered time (gaps excluded)",
		Columns: cols, Rows: rows}
}

// pctCell prints a percentage as the terminal does, "-" when missing, as
// these tables always have.
func pctCell(v float64) page.Cell { return page.Number(format.Terminal.Percent(v, 1), v) }

// timeSeries draws one SLP series with its critical periods (above the
// first threshold) shaded and a rule at every threshold. x is seconds
// since the series' first point; gaps between runs break the line.
func timeSeries(a *assess.Assessment, id string, t assess.Treatment, s assess.Subject) *chart.Chart {
	start := s.Series[0].Start
	at := func(p slp.Point) float64 { return p.Start.Sub(start).Seconds() }
	var pts []chart.Point
	step := (len(s.Series) + maxChartPoints - 1) / maxChartPoints
	for i := 0; i < len(s.Series); {
		j, sum, w := i, 0.0, 0.0
		for ; j < len(s.Series) && j < i+step; j++ {
			if j > i && s.Series[j].Start.Sub(s.Series[j-1].End()) > s.Series[j-1].Period/100 {
				break
			}
			sum += s.Series[j].Value * s.Series[j].Period.Seconds()
			w += s.Series[j].Period.Seconds()
		}
		if i > 0 && s.Series[i].Start.Sub(s.Series[i-1].End()) > s.Series[i-1].Period/100 {
			pts = append(pts, chart.Point{X: at(s.Series[i]) - 1e-9, Y: chart.NaN})
		}
		pts = append(pts, chart.Point{X: at(s.Series[i]), Y: chart.Num(sum / w)})
		i = j
	}
	ln := &chart.Line{X: chart.Axis{Label: "time since the first sample", Unit: "s"}, Y: chart.Axis{Label: "SLP", Unit: "%", Min: chart.At(0)},
		Series: []chart.Series{{Name: s.Host + " " + s.Service + " " + string(s.Quality), Points: pts}}}
	for _, c := range a.Thresholds {
		ln.Rules = append(ln.Rules, chart.Rule{Axis: "y", Value: c, Label: fmt.Sprintf("%g%%", c)})
	}
	if len(s.Summary.Critical) > 0 {
		c := s.Summary.Critical[0]
		for _, r := range c.Periods {
			ln.Ranges = append(ln.Ranges, chart.Range{From: r.Start.Sub(start).Seconds(), To: r.End.Sub(start).Seconds(), Label: fmt.Sprintf("SLP > %g%%", c.Threshold)})
		}
		ln.RangesName = fmt.Sprintf("critical: SLP > %g%%", c.Threshold)
	}
	title := fmt.Sprintf("SLP of %s %s %s over time", s.Host, s.Service, s.Quality)
	if t.Name != "" {
		title += " · " + t.Name
	}
	src := sourceOf(t) + "; ESL " + s.ESL
	if step > 1 {
		src += fmt.Sprintf("; drawn as means of %d consecutive points", step)
	}
	return &chart.Chart{ID: id, Title: title, Source: src, Line: ln}
}

func recommendationSection(a *assess.Assessment) (page.Section, bool) {
	var rows [][]page.Cell
	for _, t := range a.Treatments {
		for _, f := range t.Findings {
			q := string(f.Quality)
			if q == "" {
				q = "every quality"
			}
			rows = append(rows, []page.Cell{page.Text(treatmentLabel(t.Name)), page.Text(string(f.Class)), page.Text(f.Host), page.Text(f.Service), page.Text(q),
				pctCell(f.Mean), pctCell(f.P99), pctCell(f.TCPTPct), page.Number(secs(f.MCPT), f.MCPT.Seconds()), page.Number(secs(f.Covered), f.Covered.Seconds()),
				page.Text(f.Message), page.Text(f.Action)})
		}
	}
	if len(rows) == 0 {
		return page.Section{}, false
	}
	return page.Section{ID: "slp-recommendations", Title: "Provisioning recommendations",
		Summary: fmt.Sprintf("%d finding(s): persistent pressure (high TCPT) asks for more of a service, a transient event (high MCPT alone) for a look at what ran, and low p99 pressure on every quality for less.", len(rows)),
		Blocks: []page.Block{{Table: &page.Table{ID: "slp-recommendations-table", Title: "Findings with their evidence",
			Source: fmt.Sprintf("slp.Recommend over the SLP series above; TCPT at %g%%, MCPT at %g%%", a.Rules.PersistentThreshold, a.Rules.TransientThreshold),
			Columns: []page.Column{{Title: "treatment"}, {Title: "class"}, {Title: "host"}, {Title: "service"}, {Title: "quality"},
				{Title: "mean SLP", Unit: "%"}, {Title: "p99 SLP", Unit: "%"}, {Title: fmt.Sprintf("TCPT > %g%% (%% of time)", a.Rules.PersistentThreshold), Unit: "%"},
				{Title: fmt.Sprintf("MCPT > %g%%", a.Rules.TransientThreshold), Unit: "s"}, {Title: "covered", Unit: "s"}, {Title: "finding"}, {Title: "suggested change"}},
			Rows: rows}}}}, true
}

func beforeAfterSection(a *assess.Assessment) (page.Section, bool) {
	rows := BeforeAfter(a)
	if len(rows) == 0 {
		return page.Section{}, false
	}
	cols := []page.Column{{Title: "subject"}}
	for _, t := range a.Treatments {
		cols = append(cols, page.Column{Title: treatmentLabel(t.Name) + " mean SLP", Unit: "%"}, page.Column{Title: treatmentLabel(t.Name) + " p99 SLP", Unit: "%"})
	}
	var cells [][]page.Cell
	for _, r := range rows {
		row := []page.Cell{page.Text(r.Label)}
		for j := range a.Treatments {
			switch r.Label {
			case "capacity (req/s)":
				row = append(row, page.Number(fmt.Sprintf("%.1f req/s", r.Means[j]), r.Means[j]), page.Text(""))
			case "$/month per req/s":
				row = append(row, page.Number(cost.Money(r.Means[j]), r.Means[j]), page.Text(""))
			default:
				row = append(row, pctCell(r.Means[j]), pctCell(r.P99s[j]))
			}
		}
		cells = append(cells, row)
	}
	var boxes []chart.Box
	for _, t := range a.Treatments {
		for _, s := range t.Subjects {
			if !assess.IsVolume(s.Resource) {
				continue
			}
			b := s.Summary.Box
			boxes = append(boxes, chart.Box{Label: treatmentLabel(t.Name) + " " + boxLabel(s), N: b.N,
				Mean: chart.Num(b.Mean), P1: chart.Num(b.P1), P25: chart.Num(b.P25), P75: chart.Num(b.P75), P99: chart.Num(b.P99)})
		}
	}
	sec := page.Section{ID: "slp-before-after", Title: "Before and after: pressure across treatments",
		Summary: strings.TrimSpace(fmt.Sprintf("Base %s against %d other treatment(s). %s", a.Base, len(a.Treatments)-1, sentences(volumeShifts(a))))}
	if len(boxes) > 0 {
		sec.Blocks = append(sec.Blocks, page.Block{Chart: &chart.Chart{ID: "slp-before-after-boxes", Title: "Volume SLP of ops/s and bandwidth per treatment (seed 000 Figs. 6-7)",
			Source: "the SLP series of each treatment's measured phases; line at the mean, box 25th-75th, whiskers 1st-99th percentile",
			Boxes:  &chart.Boxes{X: chart.Axis{Label: "treatment, host, service, quality"}, Y: chart.Axis{Label: "SLP", Unit: "%", Min: chart.At(0)}, Boxes: boxes}}})
	}
	sec.Blocks = append(sec.Blocks, page.Block{Table: &page.Table{ID: "slp-before-after-table", Title: "Mean and p99 SLP, throughput and cost per treatment",
		Source:  "SLP as in the sections above; throughput is the treatment's capacity figure (the highest mean throughput of a level that meets the SLO without client limits, as in the capacity section); cost from the lab's prices over that throughput",
		Columns: cols, Rows: cells}})
	return sec, true
}

func costSection(a *assess.Assessment) (page.Section, bool) {
	if len(a.Costs) == 0 {
		return page.Section{}, false
	}
	var rows, detail [][]page.Cell
	var sentences, sources []string
	for _, c := range a.Costs {
		cc := c.Comparison
		rows = append(rows, []page.Cell{page.Text(c.Base + " → " + c.A), page.Number(fmt.Sprint(cc.A.Nodes), float64(cc.A.Nodes)), page.Number(cost.Money(cc.A.PerReqPerS), cc.A.PerReqPerS),
			page.Number(fmt.Sprint(cc.B.Nodes), float64(cc.B.Nodes)), page.Number(cost.Money(cc.B.PerReqPerS), cc.B.PerReqPerS), page.Number(cost.Money(cc.Savings), cc.Savings)})
		for _, o := range []struct {
			name, tr string
			opt      costOption
		}{{"base", c.Base, optionOf(cc.Base)}, {"option A (measured)", c.A, optionOf(cc.A)}, {"option B (scale-out, extrapolated)", c.Base, optionOf(cc.B)}} {
			detail = append(detail, []page.Cell{page.Text(c.Base + " → " + c.A), page.Text(o.name), page.Text(o.tr), page.Number(fmt.Sprint(o.opt.Nodes), float64(o.opt.Nodes)),
				page.Number(fmt.Sprintf("%g", o.opt.IOPS), o.opt.IOPS), page.Number(cost.Money(o.opt.MonthlyCost), o.opt.MonthlyCost),
				page.Number(fmt.Sprintf("%.1f", o.opt.Throughput), o.opt.Throughput), page.Number(cost.Money(o.opt.PerReqPerS), o.opt.PerReqPerS)})
		}
		sentences = append(sentences, c.A+": "+SavingsSentence(c))
		sources = append(sources, c.Prices)
	}
	src := "throughputs are each treatment's capacity figure (as in the capacity section); option B assumes throughput linear in nodes and takes the largest cluster below option A's throughput; prices: " + strings.Join(format.Distinct(sources), " | ")
	return page.Section{ID: "slp-cost", Title: "Cost: provision more vs scale out",
		Summary: strings.Join(sentences, ". ") + ".",
		Blocks: []page.Block{
			{Table: &page.Table{ID: "slp-cost-table", Title: "Option A vs option B in $/month per req/s (seed 000 Table 1)", Source: src,
				Columns: []page.Column{{Title: "change"}, {Title: "option A nodes"}, {Title: "option A $/month per req/s", Unit: "$"}, {Title: "option B nodes"},
					{Title: "option B $/month per req/s", Unit: "$"}, {Title: "A − B savings", Unit: "$"}}, Rows: rows}},
			{Table: &page.Table{ID: "slp-cost-detail", Title: "What each option costs and delivers", Source: src,
				Columns: []page.Column{{Title: "change"}, {Title: "option"}, {Title: "treatment"}, {Title: "nodes"}, {Title: "IOPS per volume"},
					{Title: "$/month", Unit: "$"}, {Title: "throughput", Unit: "req/s"}, {Title: "$/month per req/s", Unit: "$"}}, Rows: detail}},
		}}, true
}

// costOption is the fields the detail table prints.
type costOption struct {
	Nodes       int
	IOPS        float64
	MonthlyCost float64
	Throughput  float64
	PerReqPerS  float64
}

func optionOf(o cost.Option) costOption {
	return costOption{Nodes: o.Nodes, IOPS: o.IOPS, MonthlyCost: o.MonthlyCost, Throughput: o.Throughput, PerReqPerS: o.PerReqPerS}
}

func fitSection(a *assess.Assessment) (page.Section, bool) {
	if len(a.Fits) == 0 {
		return page.Section{}, false
	}
	var rows [][]page.Cell
	var sentences []string
	num := func(f float64, ok bool) page.Cell {
		if !ok {
			return page.Text("-")
		}
		return page.Number(fmt.Sprintf("%.3g", f), f)
	}
	for _, f := range a.Fits {
		row := []page.Cell{page.Text(f.Provider), page.Text(f.Client)}
		row = append(row, num(factor(f.Ops)), num(relRMS(f.Ops)), num(factor(f.Bytes)))
		if f.Unit != nil {
			row = append(row, page.Number(fmt.Sprintf("%g KiB", f.Unit.UnitKiB), f.Unit.UnitKiB), num(100*f.Unit.RelRMS, true))
		} else {
			row = append(row, page.Text("-"), page.Text("-"))
		}
		rows = append(rows, row)
		sentences = append(sentences, fitSentence(f))
	}
	return page.Section{ID: "slp-normalisation", Title: "Provider-side vs client-side monitoring", Summary: strings.Join(sentences, " "),
		Blocks: []page.Block{{Table: &page.Table{ID: "slp-normalisation-table", Title: "Fitted factors and normalized-op units (seed 000 §5.3)",
			Source: "each provider interval paired with the client's time-weighted mean over it (intervals covered less than 90% left out); k by least squares, k = Σpc/Σc²",
			Columns: []page.Column{{Title: "provider series"}, {Title: "client series"}, {Title: "k (ops/s)"}, {Title: "relative RMS (ops/s)"},
				{Title: "k (bandwidth)"}, {Title: "best normalized-op unit"}, {Title: "its relative RMS", Unit: "%"}}, Rows: rows}}}}, true
}

func factor(f *slp.Fit) (float64, bool) {
	if f == nil {
		return math.NaN(), false
	}
	return f.Factor, true
}

func relRMS(f *slp.Fit) (float64, bool) {
	if f == nil {
		return math.NaN(), false
	}
	return f.RelRMS, true
}
