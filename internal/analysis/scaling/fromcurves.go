package scaling

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
)

// FromCurves derives one Treatment per capacity curve. Throughput is the
// curve's MaxThroughput (its measured capacity). ResponseTime is the mean
// latency at one common load: the highest level every curve measured that
// lies at or below the lowest knee among them, so that no deployment is
// past saturation there and speed-up compares like with like. shapes gives
// every treatment's server count, size and price. The notes say where an
// estimate is weaker than it looks.
func FromCurves(curves []capacity.Curve, shapes map[string]Shape) ([]Treatment, []string, error) {
	if len(curves) == 0 {
		return nil, nil, fmt.Errorf("scaling: no capacity curves; analyse a campaign with several treatments first")
	}
	byName := map[string]bool{}
	limit := math.Inf(1)
	for _, c := range curves {
		byName[c.Treatment] = true
		if _, ok := shapes[c.Treatment]; !ok {
			return nil, nil, fmt.Errorf("scaling: treatment %s has no Shape; give its server count (and size and price) in the shapes map", quote(c.Treatment))
		}
		if c.Knee != nil {
			limit = math.Min(limit, c.Knee.Level)
		}
	}
	for _, n := range sortedNames(shapes) {
		if !byName[n] {
			return nil, nil, fmt.Errorf("scaling: the shapes map names treatment %s, which has no curve; remove it or check the label", quote(n))
		}
	}
	load := commonLoad(curves, limit)
	var notes []string
	if math.IsNaN(load) {
		notes = append(notes, "the treatments share no load level below their knees: speed-up is undefined; run them at common levels")
	}
	out := make([]Treatment, 0, len(curves))
	for _, c := range curves {
		s := shapes[c.Treatment]
		t := Treatment{Name: c.Treatment, Servers: s.Servers, Size: s.Size, PricePerHour: s.PricePerHour,
			Throughput: c.MaxThroughput, ResponseTime: math.NaN()}
		if math.IsNaN(t.Throughput) {
			// Left NaN, not 0: Analyze then leaves its ratios undefined.
			notes = append(notes, fmt.Sprintf("treatment %s has no level free of client limits: its throughput is unknown", quote(c.Treatment)))
		} else if c.Knee == nil {
			notes = append(notes, fmt.Sprintf("treatment %s has no knee: its throughput is the highest measured, not a saturation point (see its capacity notes)", quote(c.Treatment)))
		}
		for _, p := range c.Points {
			if p.Level.Level == load && p.Latency.N > 0 {
				t.ResponseTime, t.Load = p.Latency.Mean, load
			}
		}
		out = append(out, t)
	}
	return out, notes, nil
}

// commonLoad is the highest level value with a latency in every curve and
// at most limit; NaN when there is none.
func commonLoad(curves []capacity.Curve, limit float64) float64 {
	count := map[float64]int{}
	for _, c := range curves {
		seen := map[float64]bool{}
		for _, p := range c.Points {
			if v := p.Level.Level; p.Latency.N > 0 && v <= limit && !seen[v] {
				seen[v] = true
				count[v]++
			}
		}
	}
	best := math.NaN()
	for v, n := range count {
		if n == len(curves) && (math.IsNaN(best) || v > best) {
			best = v
		}
	}
	return best
}
