package elasticity

import (
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/storegen"
)

// The timeline of a run's measured phase with more intervals than a chart
// shows (10 minutes at 100 ms: 6,000) is streamed into at most
// levels.MaxPoints points, and the run's designed 10-second stall
// (storegen: at three quarters of the phase, a tenth of the throughput)
// still misses the SLO in the points that cover it, and only there.
func TestPhaseTimelineOfALongRunIsBounded(t *testing.T) {
	cfg := storegen.Config{Measure: 10 * time.Minute, Interval: 100 * time.Millisecond, Ops: []string{"read"}, StallEvery: 0.75, StallFor: 10 * time.Second}
	r := storegen.Results(t, cfg)
	run := r.Runs()[0]
	tr, _ := r.Treatment(run.Treatment)
	pts, short, err := PhaseTimeline(r, run, "measure", tr.SLO, tr.Load.Interval)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) == 0 || len(pts) > levels.MaxPoints || short != 0 {
		t.Fatalf("%d points (%d short); want 1 to %d", len(pts), short, levels.MaxPoints)
	}
	from, to := cfg.Stall()
	stallStart := run.Summary.MeasureStart.Add(time.Duration(from) * cfg.Interval)
	stallEnd := run.Summary.MeasureStart.Add(time.Duration(to) * cfg.Interval)
	missed := 0
	for _, p := range pts {
		in := p.Start.Before(stallEnd) && p.Start.Add(p.Dur).After(stallStart)
		if p.SLOMiss {
			missed++
			if !in {
				t.Errorf("the point at %v misses the SLO outside the stall [%v, %v)", p.Start, stallStart, stallEnd)
			}
		}
	}
	if missed == 0 {
		t.Error("no point misses the SLO: the stall is lost in the buckets")
	}
}
