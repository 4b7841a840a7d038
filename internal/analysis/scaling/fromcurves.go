package scaling

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
)

// FromCurves derives one Treatment per capacity curve. Throughput is the
// curve's MaxThroughput (its measured capacity under the SLO); when some
// treatment has an SLO that none of its levels met, every treatment's
// Throughput is its highest throughput at a level the client did not limit
// instead (seed-digest §5's T is a throughput, not an SLO capacity), so
// that the deployments are still compared, and alike, with a note saying
// so. ResponseTime is the mean
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
	peak := onPeak(curves)
	if peak != "" {
		notes = append(notes, fmt.Sprintf("no level of treatment %s met the SLO: every treatment's throughput here is the highest it served at a level the client did not limit (seed 002's T, its saturation throughput), not its capacity under the SLO", quote(peak)))
	}
	out := make([]Treatment, 0, len(curves))
	for _, c := range curves {
		s := shapes[c.Treatment]
		t := Treatment{Name: c.Treatment, Servers: s.Servers, Size: s.Size, PricePerHour: s.PricePerHour,
			Throughput: c.MaxThroughput, ResponseTime: math.NaN()}
		if peak != "" {
			t.Throughput = math.NaN()
			if i := peakIndex(c); i >= 0 {
				t.Throughput = c.Points[i].Throughput.Mean
			}
		}
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

// onPeak names the first treatment whose curve has an SLO that no level
// met but that served something: then the comparison is on peak
// throughput (FromCurves). "" when every curve has an SLO capacity, or
// lacks one only for client limits.
func onPeak(curves []capacity.Curve) string {
	for _, c := range curves {
		if math.IsNaN(c.MaxThroughput) && c.FirstFail >= 0 && c.LastPass < 0 && peakIndex(c) >= 0 {
			return c.Treatment
		}
	}
	return ""
}

// throughputIndex is the index of the level whose throughput stands for
// the curve: its capacity's (MaxIndex), or with peak its highest
// throughput's. -1 when none.
func throughputIndex(c capacity.Curve, peak bool) int {
	if peak {
		return peakIndex(c)
	}
	if c.MaxIndex >= 0 && c.MaxIndex < len(c.Points) {
		return c.MaxIndex
	}
	return -1
}

// peakIndex is the index of the level with the highest mean throughput
// among those measured and not limited by the client; -1 when none.
func peakIndex(c capacity.Curve) int {
	best := -1
	for i, p := range c.Points {
		if p.Throughput.N == 0 || p.ClientLimited > 0 {
			continue
		}
		if best < 0 || p.Throughput.Mean > c.Points[best].Throughput.Mean {
			best = i
		}
	}
	return best
}
