package page

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// runSeries is one completed run's measured phase, interval by interval,
// or bucket by bucket when the run has more intervals than a chart shows
// (levels.MaxPoints). Times are seconds from the start of the measured
// phase.
type runSeries struct {
	run     store.Run
	at      []float64 // start of each interval or bucket
	tput    []float64 // successful requests per second
	p99     []float64 // µs, of the point's requests together; NaN when nothing succeeded
	breach  []bool    // an interval of the point missed the SLO
	missed  []int     // how many of its intervals missed the SLO
	n       []int     // how many intervals it merges
	minTput []float64 // the lowest and highest interval throughput in it
	maxTput []float64
	maxP99  []float64 // the highest interval p99 in it, µs
	ivSecs  float64   // the longest point's length: the interval, or the bucket's span
	// bucketed says some point merges several intervals.
	bucketed bool
	outside  int                      // intervals left out: their start lies outside the measured phase
	peaked   bool                     // cpu or disk holds the highest sample of each part of the run (peaks)
	cpu      map[string][]chart.Point // host -> util_pct of the whole host
	disk     map[string][]chart.Point // host -> read + write ops/s summed over its disks
}

// seriesOf lays out a run's folded intervals (levels.Point, one per
// interval or per bucket of intervals, with its operation types merged)
// as series. Intervals shorter than half of nominal (the partial one the
// engine may write when the measured phase ends mid-interval) are left
// out: a rate over a few milliseconds is noise beside whole intervals. It
// returns how many it left out. The SLO rule of the load response
// (levels), applied to one interval, is that fewer than Percentile % of
// the offered requests (completed, failed or dropped) succeeded within
// the threshold; the fold judged each interval against the treatment's
// SLO and counted those that missed it.
func seriesOf(rd levels.RunData, nominal time.Duration) (runSeries, int) {
	rs := runSeries{run: rd.Run, outside: rd.Outside}
	short := 0
	origin := rd.Run.Summary.MeasureStart
	if origin.IsZero() && len(rd.Points) > 0 {
		origin = rd.Points[0].Start
	}
	for _, p := range rd.Points {
		if p.Intervals <= 1 && p.Duration < nominal/2 {
			short++
			continue
		}
		rs.at = append(rs.at, p.Start.Sub(origin).Seconds())
		tput := math.NaN()
		if p.Duration > 0 {
			tput = float64(p.Count) / p.Duration.Seconds()
		}
		rs.tput, rs.p99 = append(rs.tput, tput), append(rs.p99, p.P99)
		rs.breach, rs.missed, rs.n = append(rs.breach, p.Missed > 0), append(rs.missed, p.Missed), append(rs.n, max(p.Intervals, 1))
		rs.minTput, rs.maxTput, rs.maxP99 = append(rs.minTput, p.MinRate), append(rs.maxTput, p.MaxRate), append(rs.maxP99, p.MaxP99)
		rs.ivSecs = math.Max(rs.ivSecs, p.Duration.Seconds())
		rs.bucketed = rs.bucketed || p.Intervals > 1
	}
	return rs, short
}

// addSamples reads the run's CPU and disk samples inside its measured
// window.
func (rs *runSeries) addSamples(r *results.Results) error {
	from, to := rs.run.Summary.MeasureStart, rs.run.Summary.MeasureEnd
	if from.IsZero() || !to.After(from) {
		return nil
	}
	f := results.SampleFilter{RunID: rs.run.ID, From: from, To: to}
	cpuF := f
	cpuF.Resource, cpuF.Metric = monitor.ResourceCPU, monitor.CPUUtilPct
	cpu, err := r.Samples(cpuF)
	if err != nil {
		return err
	}
	rs.cpu = map[string][]chart.Point{}
	for _, s := range cpu {
		rs.cpu[s.Host] = append(rs.cpu[s.Host], chart.Point{X: s.Start.Sub(from).Seconds(), Y: chart.Num(s.Value)})
	}
	type key struct {
		host string
		at   int64
	}
	ops := map[key]float64{}
	for _, m := range []string{monitor.DiskReadOps, monitor.DiskWriteOps} {
		g := f
		g.Metric = m
		xs, err := r.Samples(g)
		if err != nil {
			return err
		}
		for _, s := range xs {
			if strings.HasPrefix(s.Resource, monitor.ResourceDiskPrefix) {
				ops[key{s.Host, s.Start.UnixNano()}] += s.Value
			}
		}
	}
	keys := make([]key, 0, len(ops))
	for k := range ops {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].host != keys[j].host {
			return keys[i].host < keys[j].host
		}
		return keys[i].at < keys[j].at
	})
	rs.disk = map[string][]chart.Point{}
	for _, k := range keys {
		x := time.Unix(0, k.at).Sub(from).Seconds()
		rs.disk[k.host] = append(rs.disk[k.host], chart.Point{X: x, Y: chart.Num(ops[k])})
	}
	for _, m := range []map[string][]chart.Point{rs.cpu, rs.disk} {
		for h, pts := range m {
			m[h] = peaks(pts, to.Sub(from).Seconds(), levels.MaxPoints)
			rs.peaked = rs.peaked || len(m[h]) < len(pts)
		}
	}
	return nil
}

// peaks bounds a host's samples over a window of span seconds to at most
// n points: when there are more, each point is the highest sample of an
// equal part of the window, so that a resource's saturation stays visible
// however long the run.
func peaks(pts []chart.Point, span float64, n int) []chart.Point {
	if len(pts) <= n || !(span > 0) {
		return pts
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
	w := span / float64(n)
	out := pts[:0:0]
	last := math.NaN()
	for _, p := range pts {
		b := math.Floor(p.X / w)
		if k := len(out) - 1; k >= 0 && b == last {
			if p.Y.Defined() && (!out[k].Y.Defined() || p.Y > out[k].Y) {
				out[k].Y = p.Y
			}
			continue
		}
		last = b
		out = append(out, chart.Point{X: b * w, Y: p.Y})
	}
	return out
}

func intervalsSection(r *results.Results, in levels.Input, sum levels.Summary, set setting) (Section, error) {
	sec := Section{ID: "intervals", Title: "Interval by interval"}
	nominal := set.interval
	if nominal == 0 {
		for _, rd := range in.Runs {
			for _, p := range rd.Points {
				nominal = max(nominal, p.Duration)
			}
		}
	}
	byLevel := map[int][]runSeries{}
	short, outside, bucketed := 0, 0, false
	span := nominal.Seconds()
	for _, rd := range in.Runs {
		rs, n := seriesOf(rd, nominal)
		short += n
		outside += rs.outside
		if rs.bucketed {
			bucketed = true
			span = math.Max(span, rs.ivSecs)
		}
		if err := rs.addSamples(r); err != nil {
			return sec, err
		}
		byLevel[rd.Run.LevelIndex] = append(byLevel[rd.Run.LevelIndex], rs)
	}
	for _, rss := range byLevel {
		sort.Slice(rss, func(i, j int) bool { return rss[i].run.Repetition < rss[j].run.Repetition })
	}
	if len(in.Runs) == 0 {
		sec.Summary = "No run completed, so there are no intervals to show."
		return sec, nil
	}
	ivSecs := span
	evs, err := r.Events(-1)
	if err != nil {
		return sec, err
	}
	src := fmt.Sprintf("every interval of the measured phase of %s, %s intervals", format.Plural(len(in.Runs), "completed run"), format.Seconds(nominal.Seconds()))
	if bucketed {
		// Seed-digest §1: a bucket's p99 is F^-1(0.99) of its requests
		// together, from its intervals' histograms merged.
		src = fmt.Sprintf("the measured phase of %s in at most %s buckets per run of %s each (%s intervals merged: a bucket's throughput is its requests over its time, its p99 that of its requests together; the thin lines are its lowest and highest interval)",
			format.Plural(len(in.Runs), "completed run"), format.Num(levels.MaxPoints), format.Seconds(span), format.Seconds(nominal.Seconds()))
	}
	if short > 0 {
		src += fmt.Sprintf(" (%s shorter than half an interval, at the end of a run, left out)", format.Plural(short, "partial interval"))
	}
	if outside > 0 {
		src += fmt.Sprintf(" (%s whose start lies outside its run's measured phase left out: the store's times are damaged)", format.Plural(outside, "interval"))
	}
	sec.Summary = intervalFinding(sum, byLevel, set)
	sec.Blocks = append(sec.Blocks, Block{Chart: throughputBoxes(sum, byLevel, set, src)})
	if h := p99Heat(sum, byLevel, set, ivSecs, src); h != nil {
		sec.Blocks = append(sec.Blocks, Block{Chart: h})
	}
	for i, l := range sum.Levels {
		rss := byLevel[l.Index]
		name := fmt.Sprintf("Level %d/%d, %s", i+1, len(sum.Levels), format.LoadText(set.model, l.Level))
		lsrc := fmt.Sprintf("each whole interval of the measured phase of %s at %s, %s intervals; time from the start of each run's measured phase",
			format.Plural(len(rss), "completed run"), format.LoadText(set.model, l.Level), format.Seconds(ivSecs))
		if bucketed {
			lsrc = fmt.Sprintf("the measured phase of %s at %s in buckets of %s (several %s intervals each; thin lines: each bucket's lowest and highest interval); time from the start of each run's measured phase",
				format.Plural(len(rss), "completed run"), format.LoadText(set.model, l.Level), format.Seconds(ivSecs), format.Seconds(nominal.Seconds()))
		}
		rules := eventRules(evs, rss)
		drawn, note := drawnReps(rss) // drawn.go
		if note != "" {
			lsrc += "; " + note
		}
		sec.Blocks = append(sec.Blocks, Block{Chart: levelThroughput(i, name, l, drawn, rules, set, lsrc)})
		sec.Blocks = append(sec.Blocks, Block{Chart: levelP99(i, name, drawn, rules, set, lsrc)})
		for _, c := range saturatedCharts(r, set.classify, i, name, rss, drawn, rules, lsrc) { // saturated.go
			sec.Blocks = append(sec.Blocks, Block{Chart: c})
		}
		if c := levelResource(i, name, drawn, rules, lsrc, "cpu"); c != nil {
			sec.Blocks = append(sec.Blocks, Block{Chart: c})
		}
		if c := levelResource(i, name, drawn, rules, lsrc, "disk"); c != nil {
			sec.Blocks = append(sec.Blocks, Block{Chart: c})
		}
	}
	return sec, nil
}

// intervalFinding says how steady the runs were: the level with the widest
// per-interval throughput spread, and how many intervals missed the SLO.
func intervalFinding(sum levels.Summary, byLevel map[int][]runSeries, set setting) string {
	var b strings.Builder
	worst, worstSpread := -1, -1.0
	var worstBox chart.Box
	total, missed := 0, 0
	missedAt := []string{}
	for i, l := range sum.Levels {
		var xs []float64
		m := 0
		for _, rs := range byLevel[l.Index] {
			xs = append(xs, rs.tput...)
			for j := range rs.n {
				total += rs.n[j]
				m += rs.missed[j]
			}
		}
		if m > 0 {
			missed += m
			missedAt = append(missedAt, format.LoadText(set.model, l.Level))
		}
		box := chart.BoxOf("", xs)
		if box.N > 0 && box.Mean > 0 {
			if spread := float64(box.P99-box.P1) / float64(box.Mean); spread > worstSpread {
				worst, worstSpread, worstBox = i, spread, box
			}
		}
	}
	switch {
	case worst >= 0 && worstSpread < 1e-9:
		b.WriteString("Throughput was steady: every interval of a level completed as many requests as the others. ")
	case worst >= 0:
		fmt.Fprintf(&b, "Per-interval throughput varies most at %s: from %s to %s ok/s (1st to 99th percentile of its intervals, mean %s). ",
			format.LoadText(set.model, sum.Levels[worst].Level), format.Num(float64(worstBox.P1)), format.Num(float64(worstBox.P99)), format.Num(float64(worstBox.Mean)))
	}
	if set.slo != nil {
		if missed == 0 {
			fmt.Fprintf(&b, "Every measured interval met the SLO %s.", sloText(set.slo))
		} else {
			fmt.Fprintf(&b, "%d of %d measured intervals (%.1f%%) missed the SLO %s, at %s; they are shaded in the latency charts.",
				missed, total, 100*float64(missed)/float64(total), sloText(set.slo), strings.Join(missedAt, ", "))
		}
	}
	return strings.TrimSpace(b.String())
}

func throughputBoxes(sum levels.Summary, byLevel map[int][]runSeries, set setting, src string) *chart.Chart {
	bx := &chart.Boxes{X: format.LoadAxis(set.model), Y: chart.Axis{Label: "throughput per interval", Unit: "ok/s", Min: chart.At(0)}}
	for _, l := range sum.Levels {
		var xs []float64
		for _, rs := range byLevel[l.Index] {
			xs = append(xs, rs.tput...)
		}
		bx.Boxes = append(bx.Boxes, chart.BoxOf(format.Num(l.Level), xs))
	}
	return &chart.Chart{ID: "interval-throughput", Title: "Throughput per interval by level", Boxes: bx,
		Source: src + "; all repetitions of a level pooled"}
}

// p99Heat shows the p99 of every interval (columns) at every level (rows),
// the mean over repetitions: where in a run and at which load latency rose.
func p99Heat(sum levels.Summary, byLevel map[int][]runSeries, set setting, ivSecs float64, src string) *chart.Chart {
	if ivSecs <= 0 {
		return nil
	}
	cols := 0
	maxUS := 0.0
	var all []float64
	for _, rss := range byLevel {
		for _, rs := range rss {
			for j, at := range rs.at {
				cols = max(cols, int(math.Round(at/ivSecs))+1)
				if !math.IsNaN(rs.p99[j]) {
					maxUS = math.Max(maxUS, rs.p99[j])
					all = append(all, rs.p99[j])
				}
			}
		}
	}
	if cols == 0 || len(all) == 0 {
		return nil
	}
	unit, div := format.LatencyUnit(maxUS)
	h := &chart.HeatMap{X: chart.Axis{Label: "interval start", Unit: "s"}, Y: format.LoadAxis(set.model),
		Scale: chart.Axis{Label: "p99 latency", Unit: unit, Log: wantLog(all)}}
	for c := range cols {
		h.XLabels = append(h.XLabels, format.Num(float64(c)*ivSecs))
	}
	for _, l := range sum.Levels {
		h.YLabels = append(h.YLabels, format.Num(l.Level))
		sums, ns := make([]float64, cols), make([]int, cols)
		for _, rs := range byLevel[l.Index] {
			for j, at := range rs.at {
				if c := int(math.Round(at / ivSecs)); c >= 0 && c < cols && !math.IsNaN(rs.p99[j]) {
					sums[c] += rs.p99[j]
					ns[c]++
				}
			}
		}
		row := make([]chart.Num, cols)
		for c := range row {
			row[c] = chart.NaN
			if ns[c] > 0 {
				row[c] = chart.Num(sums[c] / float64(ns[c]) / div)
			}
		}
		h.Values = append(h.Values, row)
	}
	return &chart.Chart{ID: "interval-p99-heatmap", Title: "p99 latency per interval and level", Heat: h,
		Source: src + "; each cell is the mean over repetitions of the interval's p99 of successful requests, all operation types together; grey = no successful request"}
}

func repName(rs runSeries) string { return fmt.Sprintf("rep %d", rs.run.Repetition) }

// eventRules marks events that happened inside a run's measured phase.
func eventRules(evs []store.Event, rss []runSeries) []chart.Rule {
	var rules []chart.Rule
	for _, rs := range rss {
		from, to := rs.run.Summary.MeasureStart, rs.run.Summary.MeasureEnd
		for _, e := range evs {
			if e.RunID == rs.run.ID && !e.Time.Before(from) && e.Time.Before(to) {
				rules = append(rules, chart.Rule{Axis: "x", Value: e.Time.Sub(from).Seconds(), Label: e.Kind + " (" + repName(rs) + ")"})
			}
		}
	}
	return rules
}

func levelThroughput(i int, name string, l levels.Level, rss []runSeries, rules []chart.Rule, set setting, src string) *chart.Chart {
	line := &chart.Line{X: chart.Axis{Label: "time", Unit: "s"}, Y: chart.Axis{Label: "throughput", Unit: "ok/s", Min: chart.At(0)}, Rules: rules}
	for _, rs := range rss {
		s := chart.Series{Name: repName(rs)}
		for j, at := range rs.at {
			s.Points = append(s.Points, chart.Point{X: at, Y: chart.Num(rs.tput[j])})
		}
		line.Series = append(line.Series, s)
		if rs.bucketed {
			line.Series = append(line.Series, extremes(rs, repName(rs)+" lowest interval", rs.minTput, 1), extremes(rs, repName(rs)+" highest interval", rs.maxTput, 1))
		}
	}
	if set.model == "open" && len(rss) > 0 && len(rss[0].at) > 0 {
		first, last := rss[0].at[0], rss[0].at[len(rss[0].at)-1]
		line.Series = append(line.Series, chart.Series{Name: "offered", Dashed: true,
			Points: []chart.Point{{X: first, Y: chart.Num(l.Level)}, {X: last, Y: chart.Num(l.Level)}}})
	}
	return &chart.Chart{ID: fmt.Sprintf("level%d-throughput", i+1), Title: name + ": throughput per interval", Source: src, Line: line}
}

// extremes is a bucketed run's lowest or highest interval values, ys
// divided by div, as a thin series beside the buckets' own.
func extremes(rs runSeries, name string, ys []float64, div float64) chart.Series {
	s := chart.Series{Name: name, Thin: true}
	for j, at := range rs.at {
		s.Points = append(s.Points, chart.Point{X: at, Y: chart.Num(ys[j] / div)})
	}
	return s
}

func levelP99(i int, name string, rss []runSeries, rules []chart.Rule, set setting, src string) *chart.Chart {
	maxUS := 0.0
	var all []float64
	for _, rs := range rss {
		for j, v := range rs.p99 {
			if !math.IsNaN(v) {
				maxUS = math.Max(maxUS, v)
				all = append(all, v)
			}
			if rs.bucketed && !math.IsNaN(rs.maxP99[j]) {
				maxUS = math.Max(maxUS, rs.maxP99[j])
			}
		}
	}
	if set.slo != nil {
		maxUS = math.Max(maxUS, float64(set.slo.Threshold.Microseconds()))
	}
	unit, div := format.LatencyUnit(maxUS)
	line := &chart.Line{X: chart.Axis{Label: "time", Unit: "s"}, Y: chart.Axis{Label: "p99 latency", Unit: unit, Log: wantLog(all)}, Rules: rules}
	if !line.Y.Log {
		line.Y.Min = chart.At(0)
	}
	for _, rs := range rss {
		s := chart.Series{Name: repName(rs)}
		for j, at := range rs.at {
			s.Points = append(s.Points, chart.Point{X: at, Y: chart.Num(rs.p99[j] / div)})
		}
		line.Series = append(line.Series, s)
		if rs.bucketed {
			line.Series = append(line.Series, extremes(rs, repName(rs)+" highest interval p99", rs.maxP99, div))
		}
		// Consecutive intervals that missed the SLO form one shaded period.
		for j := 0; j < len(rs.breach); j++ {
			if !rs.breach[j] {
				continue
			}
			k := j
			for k+1 < len(rs.breach) && rs.breach[k+1] {
				k++
			}
			to := rs.at[k] + rs.ivSecs
			line.Ranges = append(line.Ranges, chart.Range{From: rs.at[j], To: to,
				Label: fmt.Sprintf("%s: SLO missed from %s to %s", repName(rs), format.Seconds(rs.at[j]), format.Seconds(to))})
			j = k
		}
	}
	if set.slo != nil {
		line.Rules = append(line.Rules, chart.Rule{Axis: "y", Value: float64(set.slo.Threshold.Microseconds()) / div, Label: "SLO threshold " + set.slo.Threshold.String()})
		line.RangesName = "interval missed the SLO " + sloText(set.slo)
	}
	return &chart.Chart{ID: fmt.Sprintf("level%d-p99", i+1), Title: name + ": p99 latency per interval", Line: line,
		Source: src + "; p99 of successful requests, all operation types together"}
}

// levelResource draws host CPU utilisation ("cpu") or disk operations
// ("disk") per interval, one line per host and repetition.
func levelResource(i int, name string, rss []runSeries, rules []chart.Rule, src, what string) *chart.Chart {
	hosts := map[string]bool{}
	for _, rs := range rss {
		m := rs.cpu
		if what == "disk" {
			m = rs.disk
		}
		for h, pts := range m {
			if len(pts) > 0 {
				hosts[h] = true
			}
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		names = append(names, h)
	}
	sort.Strings(names)
	line := &chart.Line{X: chart.Axis{Label: "time", Unit: "s"}, Rules: rules}
	c := &chart.Chart{ID: fmt.Sprintf("level%d-%s", i+1, what), Line: line}
	if what == "cpu" {
		line.Y = chart.Axis{Label: "host CPU utilisation", Unit: "%", Min: chart.At(0), Max: chart.At(100)}
		c.Title = name + ": host CPU utilisation per interval"
		c.Source = src + "; util_pct of each host's whole CPU (100 - idle - iowait)"
	} else {
		line.Y = chart.Axis{Label: "disk operations", Unit: "ops/s", Min: chart.At(0)}
		c.Title = name + ": disk operations per interval"
		c.Source = src + "; reads + writes per second summed over each host's sampled disks"
	}
	for _, rs := range rss {
		if rs.peaked {
			c.Source += fmt.Sprintf("; a run too long to draw sample by sample is cut into %s equal stretches, each drawn as its highest sample", format.Num(levels.MaxPoints))
			break
		}
	}
	for _, h := range names {
		for _, rs := range rss {
			m := rs.cpu
			if what == "disk" {
				m = rs.disk
			}
			if len(m[h]) == 0 {
				continue
			}
			label := repName(rs)
			if len(names) > 1 {
				label = h + " " + label
			}
			line.Series = append(line.Series, chart.Series{Name: label, Points: m[h]})
		}
	}
	return c
}
