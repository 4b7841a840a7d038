package elasticity

import (
	"math"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// Run is the elasticity of one completed run with node changes.
type Run struct {
	Treatment results.Treatment
	Run       results.Run
	// Origin is the start of the measured phase; the report's timeline
	// counts from it.
	Origin time.Time
	Input  Input
	SLO    *results.SLO
	Result Result
	// Skipped counts intervals left out of the timeline: partial ones
	// shorter than half the nominal interval.
	Skipped int
	// Problem is why the run could not be judged; Result is then empty.
	Problem error
}

// FromResults judges every completed run that recorded node changes, in
// campaign order. The timeline is the measured phase's intervals, every
// operation type together: throughput = successful requests per second,
// p99 = F^-1(0.99) of their merged histogram (seed-digest §1), and the
// SLO rule of the treatment judged per interval. The error is a failure
// to read the results; a run the analysis cannot judge carries Problem.
func FromResults(r *results.Results, cfg Config) ([]Run, error) {
	all, err := r.AllNodeChanges()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	var out []Run
	for _, run := range r.AllCompletedRuns() {
		chs := all[run.ID]
		if len(chs) == 0 {
			continue
		}
		t, _ := r.Treatment(run.Treatment)
		// The intervals stream from the store, folded as they come.
		f := levels.NewFolder(run, levelsSLO(t.SLO))
		if err := r.EachInterval(run.ID, "measure", func(iv *store.Interval) error {
			f.Add(iv)
			return nil
		}); err != nil {
			return nil, err
		}
		pts := f.Done().Points
		x := Run{Treatment: t, Run: run, Origin: run.Summary.MeasureStart, SLO: t.SLO}
		if x.Origin.IsZero() && len(pts) > 0 {
			x.Origin = pts[0].Start
		}
		x.Input.Points, x.Skipped = timelineOf(pts, t.SLO, t.Load.Interval)
		x.Input.HasSLO = t.SLO != nil
		if t.Load.Open() {
			x.Input.Offered = run.Level
		}
		for _, c := range chs {
			x.Input.Changes = append(x.Input.Changes, Change{Action: c.Action, Node: c.Node, Host: c.Host, Delta: c.Delta(),
				Requested: c.Requested, Started: c.Started, Done: c.Done, BytesStreamed: c.BytesStreamed, Error: c.Error})
		}
		x.Result, x.Problem = Analyze(x.Input, cfg)
		out = append(out, x)
	}
	return out, nil
}

// Timeline folds a run's intervals (one row per operation type) into one
// point per interval. Intervals shorter than half of nominal (the partial
// one that may end a run) are left out and counted; nominal 0 takes the
// longest interval.
func Timeline(ivs []store.Interval, slo *results.SLO, nominal time.Duration) ([]Point, int) {
	return timelineOf(levels.Fold(store.Run{}, ivs, levelsSLO(slo)).Points, slo, nominal)
}

// PhaseTimeline is Timeline of run's intervals of phase, streamed from r
// in the memory of its answer: the measured phase in at most
// levels.MaxPoints points (a long run's intervals in buckets, each
// missing the SLO when any of its intervals did), other phases (warm-up,
// drain: short) one point per interval.
func PhaseTimeline(r *results.Results, run results.Run, phase string, slo *results.SLO, nominal time.Duration) ([]Point, int, error) {
	f := levels.NewFolder(run, levelsSLO(slo))
	if phase == "measure" {
		f.BoundPoints(levels.MaxPoints)
	}
	if err := r.EachInterval(run.ID, phase, func(iv *store.Interval) error {
		f.Add(iv)
		return nil
	}); err != nil {
		return nil, 0, err
	}
	pts, short := timelineOf(f.Done().Points, slo, nominal)
	return pts, short, nil
}

// TimelineOfPoints is Timeline from points the load response already
// folded (levels.RunData.Points, judged by the same SLO).
func TimelineOfPoints(pts []levels.Point, slo *results.SLO, nominal time.Duration) ([]Point, int) {
	return timelineOf(pts, slo, nominal)
}

// timelineOf is Timeline from the load response's folded points
// (levels.Folder), which judged each interval by the treatment's SLO: the
// load-response table's rule, fewer than Percentile % of the offered
// requests (completed, failed or dropped) succeeded within the threshold.
func timelineOf(pts []levels.Point, slo *results.SLO, nominal time.Duration) ([]Point, int) {
	if nominal == 0 {
		for _, p := range pts {
			nominal = max(nominal, p.Duration)
		}
	}
	var out []Point
	short := 0
	for _, lp := range pts {
		if lp.Duration < nominal/2 || lp.Duration <= 0 {
			short++
			continue
		}
		secs := lp.Duration.Seconds()
		p := Point{Start: lp.Start, Dur: lp.Duration, Throughput: float64(lp.Count) / secs, P99: lp.P99, Offered: float64(lp.Offered) / secs}
		p.SLOMiss = slo != nil && (lp.Missed > 0 || !math.IsNaN(lp.Within) && lp.Within < slo.Percentile/100)
		out = append(out, p)
	}
	return out, short
}

// levelsSLO is the treatment's SLO as the load response takes it.
func levelsSLO(slo *results.SLO) *levels.SLO {
	if slo == nil {
		return nil
	}
	return &levels.SLO{Percentile: slo.Percentile, Threshold: slo.Threshold, Op: slo.Op}
}
