package page

import (
	"fmt"
	"sort"
	"strings"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/results"
)

// saturatedCharts draw, for one level, the resources that the bottleneck
// classification (docs/bottleneck.md) found to be a bottleneck in its runs,
// next to the level's latency: a lab volume's normalized operations per
// second against its provisioned IOPS as they were in force (a step where a
// set_volume event changed them), and any other such resource's
// utilisation against the saturation threshold. None when no run of the
// level had a bottleneck resource or its samples cannot be classified.
// The resources are those of every run of the level (rss); the lines,
// those of the runs drawn.
func saturatedCharts(r *results.Results, cfg ab.Config, i int, name string, rss, drawn []runSeries, rules []chart.Rule, src string) []*chart.Chart {
	type runRes struct {
		rs     runSeries
		series map[string]ab.Series
	}
	var runs []runRes
	found := map[string]bool{}
	alpha := ab.DefaultAlpha
	// The classification is the bottleneck analysis's own (computed once
	// per results); the level's samples are read again, for the charts'
	// series, only when one of its runs had a bottleneck resource.
	a, err := ab.FromResults(r)
	if err != nil {
		return nil // the bottleneck section says why
	}
	classified := map[int64]ab.Result{}
	for _, t := range a.Treatments {
		for _, ra := range t.Runs {
			if ra.Err == "" {
				classified[ra.Run.ID] = ra.Result
			}
		}
	}
	for _, rs := range rss {
		if res, ok := classified[rs.run.ID]; ok {
			alpha = res.Config.Alpha
			for _, st := range res.Resources {
				if st.Class != "" {
					found[st.Resource] = true
				}
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	for _, rs := range drawn {
		if _, ok := classified[rs.run.ID]; !ok {
			continue
		}
		series, _, _, err := ab.RunSeries(r, rs.run, cfg)
		if err != nil {
			continue
		}
		by := map[string]ab.Series{}
		for _, s := range series {
			by[s.Resource] = s
		}
		runs = append(runs, runRes{rs, by})
	}
	ids := make([]string, 0, len(found))
	for id := range found {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []*chart.Chart
	util := &chart.Line{X: chart.Axis{Label: "time", Unit: "s"}, Y: chart.Axis{Label: "utilisation", Unit: "%", Min: chart.At(0)},
		Rules: append(append([]chart.Rule{}, rules...), chart.Rule{Axis: "y", Value: alpha, Label: fmt.Sprintf("saturated above %s%%", format.Exact(alpha))})}
	var utilIDs []string
	for k, id := range ids {
		host, vol, isVol := volumeOf(id)
		if !isVol {
			utilIDs = append(utilIDs, id)
		}
		// A volume's operations against the limit in force when each
		// interval began: utilisation x limit / 100 is the normalized ops/s
		// the lab counted against that limit.
		vline := &chart.Line{X: chart.Axis{Label: "time", Unit: "s"}, Y: chart.Axis{Label: "normalized operations", Unit: "ops/s", Min: chart.At(0)}, Rules: rules}
		prevLimit := ""
		for _, rr := range runs {
			s, ok := rr.series[id]
			if !ok {
				continue
			}
			from := rr.rs.run.Summary.MeasureStart
			label := repName(rr.rs)
			if !isVol {
				if len(ids) > 1 {
					label = id + " " + label
				}
				pts := make([]chart.Point, 0, len(s.Points))
				for _, p := range s.Points {
					pts = append(pts, chart.Point{X: p.Start.Sub(from).Seconds(), Y: chart.Num(p.Util)})
				}
				util.Series = append(util.Series, chart.Series{Name: label, Points: pts})
				continue
			}
			var ops, limit []chart.Point
			var iops []float64
			for _, p := range s.Points {
				hl, ok := r.HostLimits(host, p.Start)
				v, vok := hl.Volume(vol)
				if !ok || !vok || v.IOPS <= 0 {
					continue
				}
				x := p.Start.Sub(from).Seconds()
				ops = append(ops, chart.Point{X: x, Y: chart.Num(p.Util * v.IOPS / 100)})
				limit = append(limit, chart.Point{X: x, Y: chart.Num(v.IOPS)}, chart.Point{X: x + p.Period.Seconds(), Y: chart.Num(v.IOPS)})
				iops = append(iops, v.IOPS)
			}
			if len(ops) == 0 {
				continue
			}
			vline.Series = append(vline.Series, chart.Series{Name: "operations, " + label, Points: ops})
			// One limit line for repetitions whose limits were the same.
			if key := fmt.Sprint(iops); key != prevLimit {
				prevLimit = key
				vline.Series = append(vline.Series, chart.Series{Name: "provisioned IOPS in force, " + label, Dashed: true, Points: limit})
			}
		}
		if len(vline.Series) > 0 {
			out = append(out, &chart.Chart{ID: fmt.Sprintf("level%d-saturated-%d", i+1, k+1), Line: vline,
				Title:  fmt.Sprintf("%s: %s's volume %s, operations against its provisioned IOPS", name, host, vol),
				Source: src + "; a bottleneck resource of the level (docs/bottleneck.md); operations = read + write ops/s, each counted as ceil(mean op size / 256 KiB) normalized operations as the lab enforces the limit; the limit is the volume's IOPS in force (results.HostLimitSeries)"})
		}
	}
	if len(util.Series) > 0 {
		out = append(out, &chart.Chart{ID: fmt.Sprintf("level%d-saturated-util", i+1), Line: util,
			Title:  fmt.Sprintf("%s: utilisation of the bottleneck resources (%s)", name, strings.Join(utilIDs, ", ")),
			Source: src + "; the resources the bottleneck classification found saturated in this level's runs (docs/bottleneck.md), utilisation per classification interval"})
	}
	return out
}

// volumeOf reads a lab volume's IOPS series name ("db1/volume:data#iops")
// as its host and volume name.
func volumeOf(id string) (host, volume string, ok bool) {
	rest, found := strings.CutSuffix(id, ab.SuffixIOPS)
	if !found {
		return "", "", false
	}
	host, res, found := strings.Cut(rest, "/")
	if !found {
		return "", "", false
	}
	volume, found = strings.CutPrefix(res, "volume:")
	return host, volume, found
}
