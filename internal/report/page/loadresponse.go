package page

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/store"
)

// overall is the latency row that stands for a whole level: the merged
// "all" row when there are several operation types, else the only one.
func overall(l levels.Level) *levels.OpRow {
	for i := range l.Ops {
		if l.Ops[i].Op == "all" {
			return &l.Ops[i]
		}
	}
	if len(l.Ops) == 1 {
		return &l.Ops[0]
	}
	return nil
}

func sloText(slo *levels.SLO) string {
	op := "all operations"
	if slo.Op != "" {
		op = slo.Op
	}
	return fmt.Sprintf("p%s ≤ %v (%s)", format.Num(slo.Percentile), slo.Threshold, op)
}

// verdicts is the plain-language finding of the load response, in the words
// of the terminal summary: the SLO verdict, peak throughput, the client.
func verdicts(sum levels.Summary, set setting) string {
	var b strings.Builder
	ls := sum.Levels
	if sum.SLO != nil && len(ls) > 0 {
		fmt.Fprintf(&b, "The SLO %s ", sloText(sum.SLO))
		switch {
		case sum.FirstFail < 0:
			fmt.Fprintf(&b, "is met at every level, up to %s. ", format.LoadText(set.model, ls[len(ls)-1].Level))
		default:
			f := ls[sum.FirstFail]
			if sum.LastPass >= 0 {
				fmt.Fprintf(&b, "is met up to %s and ", format.LoadText(set.model, ls[sum.LastPass].Level))
			} else {
				b.WriteString("is not met at any level; it ")
			}
			fmt.Fprintf(&b, "first fails at %s, where %.2f%% of offered requests succeeded within %v (p%s = %s). ",
				format.LoadText(set.model, f.Level), 100*f.SLO.Within.Mean, sum.SLO.Threshold, format.Num(sum.SLO.Percentile), format.Page.Micros(f.SLO.Value.Mean))
		}
	}
	best := -1
	for i, l := range ls {
		if l.Throughput.N > 0 && (best < 0 || l.Throughput.Mean > ls[best].Throughput.Mean) {
			best = i
		}
	}
	if best >= 0 {
		fmt.Fprintf(&b, "Achieved throughput peaks at %s ok/s at %s. ", format.Page.Est(ls[best].Throughput, 1), format.LoadText(set.model, ls[best].Level))
	}
	limited, first := 0, -1.0
	for _, l := range ls {
		if l.ClientLimited > 0 {
			if first < 0 {
				first = l.Level
			}
			limited += l.ClientLimited
		}
	}
	switch {
	case limited == 0:
		b.WriteString("The client was not the limit in any run.")
	case set.inProcess:
		fmt.Fprintf(&b, "The client was the limit in %s, from %s on: the target runs inside the client process, and the engine's own share of its CPU was what limited the load.", format.Plural(limited, "run"), format.LoadText(set.model, first))
	default:
		fmt.Fprintf(&b, "The client was the limit in %s, from %s on: those levels measure the load generator, not the target.", format.Plural(limited, "run"), format.LoadText(set.model, first))
	}
	return b.String()
}

func loadResponseSection(sum levels.Summary, in levels.Input, runs []store.Run, set setting, delays map[int64]store.ClientDelay) Section {
	sec := Section{ID: "load-response", Title: "Load response"}
	if len(sum.Levels) == 0 {
		sec.Summary = "No run completed, so there is no load response to show."
		return sec
	}
	sec.Summary = verdicts(sum, set)
	src := measuredSource(sum, runs, set)
	errSrc := src + "; each point is the mean across repetitions, error bars ± 1 standard error"
	incomplete := 0
	for _, r := range runs {
		if r.Status != store.StatusCompleted {
			incomplete++
		}
	}
	if incomplete > 0 {
		sec.Blocks = append(sec.Blocks, Block{Note: &Note{Level: "warning", Text: format.Plural(incomplete, "run") + " did not complete; only completed runs are summarised here."}})
	}
	tp, lat := levelTables(sum, set, src)
	addClientDelay(lat, sum, in, delays)
	sec.Blocks = append(sec.Blocks, Block{Table: tp}, Block{Table: lat})
	sec.Blocks = append(sec.Blocks, Block{Chart: throughputChart(sum, set, errSrc)})
	if c := latencyChart(sum, set, errSrc); c != nil {
		sec.Blocks = append(sec.Blocks, Block{Chart: c})
	}
	sec.Blocks = append(sec.Blocks, Block{Table: opTable(sum, set, src)})
	if c := problemChart(sum, set, errSrc); c != nil {
		sec.Blocks = append(sec.Blocks, Block{Chart: c})
	} else {
		sec.Blocks = append(sec.Blocks, Block{Note: &Note{Level: "info", Text: "No request was late, dropped or failed at any level."}})
	}
	if c := cpuChart(sum, set, src); c != nil {
		sec.Blocks = append(sec.Blocks, Block{Chart: c}, Block{Table: hostTable(sum, set, src)})
	}
	for _, l := range sum.Levels {
		for _, n := range l.Notes {
			sec.Blocks = append(sec.Blocks, Block{Note: &Note{Level: "warning", Text: format.LoadText(set.model, l.Level) + ": " + n}})
		}
	}
	return sec
}

// levelTables are the load response by level: what was offered and
// achieved, then latency and the SLO verdict. Two tables keep each narrow
// enough to read without scrolling.
func levelTables(sum levels.Summary, set setting, src string) (*Table, *Table) {
	load := Column{Title: format.LoadAxis(set.model).Label + " (" + format.LoadUnit(set.model) + ")", Unit: format.LoadUnit(set.model)}
	tp := &Table{ID: "levels-table", Title: "Throughput and request outcomes by level",
		Source:  src + "; mean ± standard error across repetitions",
		Columns: []Column{load, {Title: "reps"}, {Title: "achieved (ok/s)", Unit: "ok/s"}, {Title: "errors/run"}, {Title: "late/run"}, {Title: "dropped/run"}, {Title: "client-limited runs"}}}
	lat := &Table{ID: "levels-latency", Title: "Latency by level",
		Source:  src + "; mean ± standard error across repetitions of each run's percentile of successful requests, all operation types together",
		Columns: []Column{load, {Title: "p50", Unit: "µs"}, {Title: "p95", Unit: "µs"}, {Title: "p99", Unit: "µs"}}}
	if sum.SLO != nil {
		lat.Title = "Latency and SLO " + sloText(sum.SLO) + " by level"
		lat.Source += "; within = share of offered requests (completed, failed or dropped) that succeeded within the threshold"
		lat.Columns = append(lat.Columns, Column{Title: "within " + sum.SLO.Threshold.String() + " (%)", Unit: "% of offered"}, Column{Title: "SLO"})
	}
	for _, l := range sum.Levels {
		lv := Number(format.Num(l.Level), l.Level)
		lim := Number(fmt.Sprint(l.ClientLimited), float64(l.ClientLimited))
		if l.ClientLimited > 0 {
			lim.Mark = "warn"
		}
		tp.Rows = append(tp.Rows, []Cell{lv, Number(fmt.Sprint(l.Reps), float64(l.Reps)), estCell(l.Throughput, 1),
			estCell(l.Errors, 0), estCell(l.Late, 0), estCell(l.Dropped, 0), lim})
		row := []Cell{lv}
		if o := overall(l); o != nil {
			row = append(row, latCell(o.Latency.P50), latCell(o.Latency.P95), latCell(o.Latency.P99))
		} else {
			row = append(row, Text("–"), Text("–"), Text("–"))
		}
		if sum.SLO != nil {
			w := l.SLO.Within
			within := Text("–")
			if w.N > 0 {
				within = Estimate(format.Page.Est(stats.Estimate{Mean: 100 * w.Mean, SE: 100 * w.SE, N: w.N}, 2), 100*w.Mean, 100*w.SE)
			}
			verdict := Cell{Text: "pass", Mark: "pass"}
			if !l.SLO.Pass {
				verdict = Cell{Text: "FAIL", Mark: "fail"}
			}
			row = append(row, within, verdict)
		}
		lat.Rows = append(lat.Rows, row)
	}
	return tp, lat
}

func throughputChart(sum levels.Summary, set setting, src string) *chart.Chart {
	achieved := chart.Series{Name: "achieved (ok/s)"}
	offered := chart.Series{Name: "offered", Dashed: true}
	for _, l := range sum.Levels {
		achieved.Points = append(achieved.Points, chart.Point{X: l.Level, Y: chart.Num(l.Throughput.Mean), Err: chart.Num(l.Throughput.SE)})
		offered.Points = append(offered.Points, chart.Point{X: l.Level, Y: chart.Num(l.Level)})
	}
	series := []chart.Series{achieved}
	if set.model == "open" {
		series = append(series, offered)
	}
	return &chart.Chart{ID: "throughput-vs-load", Title: "Achieved throughput against " + format.LoadAxis(set.model).Label, Source: src,
		Line: &chart.Line{X: format.LoadAxis(set.model), Y: chart.Axis{Label: "throughput", Unit: "ok/s", Min: chart.At(0)}, Series: series}}
}

func latencyChart(sum levels.Summary, set setting, src string) *chart.Chart {
	type pick struct {
		name string
		get  func(levels.Level) stats.Estimate
	}
	picks := []pick{
		{"p50", func(l levels.Level) stats.Estimate {
			return overallLat(l, func(o *levels.OpRow) stats.Estimate { return o.Latency.P50 })
		}},
		{"p95", func(l levels.Level) stats.Estimate {
			return overallLat(l, func(o *levels.OpRow) stats.Estimate { return o.Latency.P95 })
		}},
		{"p99", func(l levels.Level) stats.Estimate {
			return overallLat(l, func(o *levels.OpRow) stats.Estimate { return o.Latency.P99 })
		}},
	}
	slo := sum.SLO
	if slo != nil && (slo.Op != "" || (slo.Percentile != 50 && slo.Percentile != 95 && slo.Percentile != 99)) {
		op := slo.Op
		if op == "" {
			op = "all"
		}
		picks = append(picks, pick{"SLO p" + format.Num(slo.Percentile) + " (" + op + ")", func(l levels.Level) stats.Estimate { return l.SLO.Value }})
	}
	var all []float64
	for _, p := range picks {
		for _, l := range sum.Levels {
			if e := p.get(l); e.N > 0 {
				all = append(all, e.Mean)
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	maxUS := 0.0
	for _, v := range all {
		maxUS = math.Max(maxUS, v)
	}
	if slo != nil {
		maxUS = math.Max(maxUS, float64(slo.Threshold.Microseconds()))
	}
	unit, div := format.LatencyUnit(maxUS)
	line := &chart.Line{X: format.LoadAxis(set.model), Y: chart.Axis{Label: "latency", Unit: unit, Log: wantLog(all)}}
	if !line.Y.Log {
		line.Y.Min = chart.At(0)
	}
	for _, p := range picks {
		s := chart.Series{Name: p.name}
		for _, l := range sum.Levels {
			e := p.get(l)
			y, se := chart.NaN, chart.NaN
			if e.N > 0 {
				y, se = chart.Num(e.Mean/div), chart.Num(e.SE/div)
			}
			s.Points = append(s.Points, chart.Point{X: l.Level, Y: y, Err: se})
		}
		line.Series = append(line.Series, s)
	}
	if slo != nil {
		line.Rules = append(line.Rules, chart.Rule{Axis: "y", Value: float64(slo.Threshold.Microseconds()) / div, Label: "SLO " + sloText(slo)})
		if sum.FirstFail >= 0 {
			line.Rules = append(line.Rules, chart.Rule{Axis: "x", Value: sum.Levels[sum.FirstFail].Level, Label: "SLO first fails"})
		}
	}
	if line.Y.Log {
		src += "; logarithmic latency axis"
	}
	return &chart.Chart{ID: "latency-vs-load", Title: "Latency percentiles against " + format.LoadAxis(set.model).Label, Source: src + "; successful requests, all operation types together", Line: line}
}

func overallLat(l levels.Level, f func(*levels.OpRow) stats.Estimate) stats.Estimate {
	if o := overall(l); o != nil {
		return f(o)
	}
	return stats.Estimate{Mean: math.NaN(), SE: math.NaN()}
}

func opTable(sum levels.Summary, set setting, src string) *Table {
	withServer := false
	for _, l := range sum.Levels {
		for _, o := range l.Ops {
			withServer = withServer || o.Server.N > 0
		}
	}
	cols := []Column{{Title: format.LoadAxis(set.model).Label + " (" + format.LoadUnit(set.model) + ")", Unit: format.LoadUnit(set.model)}, {Title: "operation"}, {Title: "ok/run"}, {Title: "mean", Unit: "µs"},
		{Title: "p50", Unit: "µs"}, {Title: "p95", Unit: "µs"}, {Title: "p99", Unit: "µs"}, {Title: "max", Unit: "µs"}}
	if withServer {
		cols = append(cols, Column{Title: "server", Unit: "µs"}, Column{Title: MuLabel, Unit: "µs"})
	}
	var rows [][]Cell
	for _, l := range sum.Levels {
		for _, o := range l.Ops {
			row := []Cell{Number(format.Num(l.Level), l.Level), Text(o.Op), estCell(o.Count, 0), latCell(o.Latency.Mean),
				latCell(o.Latency.P50), latCell(o.Latency.P95), latCell(o.Latency.P99), latCell(o.Latency.Max)}
			if withServer {
				row = append(row, latCell(o.Server), MuCell(o.Network))
			}
			rows = append(rows, row)
		}
	}
	s := src + "; mean ± standard error across repetitions of each run's latency statistic, successful requests only"
	if withServer {
		s += "; server = the server's own mean execution time per statement; " + MuNote + " (seed-digest §2)"
	}
	return &Table{ID: "latency-by-op", Title: "Latency by operation type", Source: s, Columns: cols, Rows: rows}
}

func problemChart(sum levels.Summary, set setting, src string) *chart.Chart {
	b := &chart.Bars{X: format.LoadAxis(set.model), Y: chart.Axis{Label: "requests per run"}}
	nonzero := false
	series := []chart.BarSeries{{Name: "errors"}, {Name: "late"}, {Name: "dropped"}}
	for _, l := range sum.Levels {
		b.Categories = append(b.Categories, format.Num(l.Level))
		for i, e := range []stats.Estimate{l.Errors, l.Late, l.Dropped} {
			series[i].Values = append(series[i].Values, chart.Num(e.Mean))
			series[i].Err = append(series[i].Err, chart.Num(e.SE))
			nonzero = nonzero || (e.N > 0 && e.Mean > 0)
		}
	}
	if !nonzero {
		return nil
	}
	if set.model == "closed" {
		series = series[:1] // a closed loop has no schedule to be late for
	}
	b.Series = series
	return &chart.Chart{ID: "problems-by-level", Title: "Failed, late and dropped requests per run", Source: src, Bars: b}
}

func cpuChart(sum levels.Summary, set setting, src string) *chart.Chart {
	type host struct{ mean, peak chart.Series }
	byHost := map[string]*host{}
	var names []string
	for _, l := range sum.Levels {
		for _, h := range l.Hosts {
			if math.IsNaN(h.CPUMean) {
				continue
			}
			hs := byHost[h.Host]
			if hs == nil {
				hs = &host{mean: chart.Series{Name: h.Host + " mean"}, peak: chart.Series{Name: h.Host + " peak", Dashed: true}}
				byHost[h.Host] = hs
				names = append(names, h.Host)
			}
			hs.mean.Points = append(hs.mean.Points, chart.Point{X: l.Level, Y: chart.Num(h.CPUMean)})
			hs.peak.Points = append(hs.peak.Points, chart.Point{X: l.Level, Y: chart.Num(h.CPUMax)})
		}
	}
	if len(names) == 0 {
		return nil
	}
	line := &chart.Line{X: format.LoadAxis(set.model), Y: chart.Axis{Label: "host CPU utilisation", Unit: "%", Min: chart.At(0), Max: chart.At(100)}}
	for _, n := range names { // in the order levels list hosts: sorted by name
		line.Series = append(line.Series, byHost[n].mean, byHost[n].peak)
	}
	return &chart.Chart{ID: "cpu-vs-load", Title: "Host CPU utilisation against " + format.LoadAxis(set.model).Label, Line: line,
		Source: src + "; mean = mean over repetitions of each run's mean utilisation, peak = highest sample at the level"}
}

func hostTable(sum levels.Summary, set setting, src string) *Table {
	cols := []Column{{Title: format.LoadAxis(set.model).Label + " (" + format.LoadUnit(set.model) + ")", Unit: format.LoadUnit(set.model)}, {Title: "host"}, {Title: "CPU mean", Unit: "%"}, {Title: "CPU peak", Unit: "%"},
		{Title: "busiest disk"}, {Title: "disk busy", Unit: "%"}, {Title: "disk busy peak", Unit: "%"}, {Title: "network", Unit: "bytes/s"}}
	var rows [][]Cell
	for _, l := range sum.Levels {
		for _, h := range l.Hosts {
			peak := pctCell(h.CPUMax)
			if math.IsNaN(h.CPUMean) {
				peak = Text("–")
			}
			disk, util, utilMax := Text("–"), Text("–"), Text("–")
			if h.Disk != "" {
				disk, util, utilMax = Text(h.Disk), pctCell(h.DiskUtil), pctCell(h.DiskUtilMax)
			}
			net := Text("–")
			if !math.IsNaN(h.NetBytes) {
				net = Number(format.Page.BytesPerSec(h.NetBytes), h.NetBytes)
			}
			rows = append(rows, []Cell{Number(format.Num(l.Level), l.Level), Text(h.Host), pctCell(h.CPUMean), peak, disk, util, utilMax, net})
		}
	}
	return &Table{ID: "hosts-by-level", Title: "Monitored hosts by level", Columns: cols, Rows: rows,
		Source: src + "; resource samples inside each run's measured window, mean over repetitions, peaks the highest sample"}
}

// addClientDelay puts the load generator's own scheduling delay beside the
// latency percentiles (internal/load/clientdelay.go): per level, the mean
// across repetitions of each run's p50 and p99 wait of its goroutines for
// a processor. Runs stored before the figure existed have none, and then
// the table is left as it was.
func addClientDelay(lat *Table, sum levels.Summary, in levels.Input, delays map[int64]store.ClientDelay) {
	p50, p99 := map[float64][]float64{}, map[float64][]float64{}
	for _, rd := range in.Runs {
		if d, ok := delays[rd.Run.ID]; ok && rd.Run.Status == store.StatusCompleted {
			p50[rd.Run.Level] = append(p50[rd.Run.Level], float64(d.P50)/1e3)
			p99[rd.Run.Level] = append(p99[rd.Run.Level], float64(d.P99)/1e3)
		}
	}
	if len(p99) == 0 {
		return
	}
	lat.Columns = slices.Insert(lat.Columns, 4, Column{Title: "client-side delay p50", Unit: "µs"}, Column{Title: "client-side delay p99", Unit: "µs"})
	lat.Source += "; client-side delay = the load generator's goroutines' wait for a processor once runnable, a lower bound of the client's share of each latency (docs/measurement.md)"
	for i, l := range sum.Levels {
		a, b := Text("–"), Text("–")
		if len(p99[l.Level]) > 0 {
			a, b = latCell(stats.Summarize(p50[l.Level])), latCell(stats.Summarize(p99[l.Level]))
		}
		lat.Rows[i] = slices.Insert(lat.Rows[i], 4, a, b)
	}
}
