package page

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/report/chart"
	"github.com/headroom-dev/headroom/internal/storegen"
)

// The interval charts of a run with more intervals than a chart shows
// (10 minutes at 100 ms: 6,000) hold at most levels.MaxPoints points per
// series and heat-map columns, and the run's designed 10-second stall
// (storegen: throughput a tenth, latencies 50 times the usual) still
// stands out in the bucketed p99 and in the highest interval p99 beside
// it, at the time storegen put it.
func TestIntervalChartsOfALongRunAreBounded(t *testing.T) {
	cfg := storegen.Config{Measure: 10 * time.Minute, Interval: 100 * time.Millisecond, Ops: []string{"read"}, StallEvery: 0.75, StallFor: 10 * time.Second}
	r := storegen.Results(t, cfg)
	rep, err := Build(r)
	if err != nil {
		t.Fatal(err)
	}
	charts := map[string]*chart.Chart{}
	for _, s := range rep.Sections {
		for _, b := range s.Blocks {
			if b.Chart != nil {
				charts[b.Chart.ID] = b.Chart
			}
		}
	}
	for _, id := range []string{"level1-throughput", "level1-p99", "level1-cpu", "interval-p99-heatmap"} {
		c := charts[id]
		switch {
		case c == nil:
			t.Fatalf("no chart %s", id)
		case c.Heat != nil:
			for _, row := range c.Heat.Values {
				if len(row) > levels.MaxPoints+1 {
					t.Errorf("%s: %d columns, want at most %d", id, len(row), levels.MaxPoints+1)
				}
			}
		default:
			for _, s := range c.Line.Series {
				if len(s.Points) > levels.MaxPoints+1 {
					t.Errorf("%s, series %q: %d points, want at most %d", id, s.Name, len(s.Points), levels.MaxPoints+1)
				}
			}
		}
	}
	if src := charts["level1-p99"].Source; !strings.Contains(src, "buckets of") {
		t.Errorf("the p99 chart does not say its points are buckets: %s", src)
	}
	from, to := cfg.Stall()
	stallAt, stallEnd := (time.Duration(from) * cfg.Interval).Seconds(), (time.Duration(to) * cfg.Interval).Seconds()
	for _, name := range []string{"rep 1", "rep 1 highest interval p99"} {
		var s *chart.Series
		for i := range charts["level1-p99"].Line.Series {
			if charts["level1-p99"].Line.Series[i].Name == name {
				s = &charts["level1-p99"].Line.Series[i]
			}
		}
		if s == nil {
			t.Fatalf("no series %q in the p99 chart", name)
		}
		// A bucket wholly inside the stall is judged against those wholly
		// outside it; the two at its edges mix both.
		span := s.Points[1].X - s.Points[0].X
		var in, out []float64
		for _, p := range s.Points {
			switch {
			case p.X >= stallAt && p.X+span <= stallEnd+1e-9:
				in = append(in, float64(p.Y))
			case (p.X+span <= stallAt+1e-9 || p.X >= stallEnd) && p.Y.Defined():
				out = append(out, float64(p.Y))
			}
		}
		lowest, highest := math.Inf(1), 0.0
		for _, y := range in {
			lowest = math.Min(lowest, y)
		}
		for _, y := range out {
			highest = math.Max(highest, y)
		}
		if len(in) == 0 || lowest < 10*highest {
			t.Errorf("%s: the stall's points (%d, lowest %.3g) are not 10 times above the rest (highest %.3g)", name, len(in), lowest, highest)
		}
	}
}
