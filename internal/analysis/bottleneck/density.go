package bottleneck

import (
	"fmt"
	"math"
	"sort"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// LevelValues is one resource's utilisation at one workload level: the
// lambda-interval values (percent) of the level's runs, pooled.
type LevelValues struct {
	Level  float64
	Values []float64
}

// DensityConfig shapes the utilisation density map. Zero fields take
// their defaults.
type DensityConfig struct {
	// Step is the spacing of the utilisation grid 0..100, in percentage
	// points. Default 1.
	Step float64
	// MinBandwidth is the smallest kernel bandwidth, in percentage points.
	// The seed's bandwidth is 0 for a level whose values are all equal (a
	// resource pinned at 100%) and undefined for a single value; the floor
	// draws such a level as a narrow peak instead. Default: Step.
	MinBandwidth float64
}

// DensityMap is the utilisation density of one resource per workload level
// (003 Figures 29, 31, 34): a heat map with utilisation on one axis and
// the level on the other.
type DensityMap struct {
	Resource string
	Util     []float64 // grid, percent: 0, Step, ..., 100
	Levels   []float64 // ascending
	// Density[l][u] is the estimated density at Util[u] for Levels[l], per
	// percentage point; a row is all NaN when its level has no values.
	// Mass outside 0..100 (kernel tails, capacities exceeded) is not on the
	// grid, so a row sums to at most about 1/Step.
	Density   [][]float64
	Bandwidth []float64 // h used per level (after the floor)
	N         []int     // values per level
}

// Density estimates the utilisation density of a resource at each level by
// a Gaussian kernel density estimate with bandwidth
// h = max(cbrt(4) * s * n^(-1/3), MinBandwidth) (seed-digest §6, 003 eq.
// 18-19).
func Density(resource string, levels []LevelValues, cfg DensityConfig) (DensityMap, error) {
	if cfg.Step == 0 {
		cfg.Step = 1
	}
	if !(cfg.Step > 0 && cfg.Step <= 100) {
		return DensityMap{}, fmt.Errorf("bottleneck: density step %v is outside (0, 100]; give the grid spacing in percentage points, e.g. 1", cfg.Step)
	}
	if cfg.MinBandwidth == 0 {
		cfg.MinBandwidth = cfg.Step
	}
	if !(cfg.MinBandwidth > 0) || math.IsInf(cfg.MinBandwidth, 1) {
		return DensityMap{}, fmt.Errorf("bottleneck: minimum bandwidth %v is not a positive number; give it in percentage points, e.g. 1", cfg.MinBandwidth)
	}
	ls := append([]LevelValues(nil), levels...)
	sort.SliceStable(ls, func(a, b int) bool { return ls[a].Level < ls[b].Level })
	for i := 1; i < len(ls); i++ {
		if ls[i].Level == ls[i-1].Level {
			return DensityMap{}, fmt.Errorf("bottleneck: level %v of %s is given twice; pool its runs' values into one LevelValues", ls[i].Level, resource)
		}
	}
	m := DensityMap{Resource: resource}
	steps := int(math.Floor(100/cfg.Step + 1e-9))
	for i := 0; i <= steps; i++ {
		m.Util = append(m.Util, float64(i)*cfg.Step)
	}
	for _, l := range ls {
		n := 0
		for _, v := range l.Values {
			if !math.IsNaN(v) {
				n++
			}
		}
		h := stats.KDEBandwidth(l.Values)
		if math.IsNaN(h) || h < cfg.MinBandwidth {
			h = cfg.MinBandwidth
		}
		m.Levels = append(m.Levels, l.Level)
		m.Density = append(m.Density, stats.KDE(l.Values, h, m.Util))
		m.Bandwidth = append(m.Bandwidth, h)
		m.N = append(m.N, n)
	}
	return m, nil
}
