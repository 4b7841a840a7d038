package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ConfigPoint is one configuration of a scale-out study and what it
// reached: its highest throughput over the workload sweep and the primary
// bottleneck there (seed-digest §6: maximum-throughput and bottleneck maps;
// 003 §3.2, Figures 4-12).
type ConfigPoint struct {
	// Config is the size of each tier separated by '/', e.g. "1/2/1/2": a
	// number of servers, or another measure of size such as vCPUs
	// ("2/0.5"); a tier may carry a node-type suffix, e.g. "1/2/1/2L".
	Config        string
	MaxThroughput float64 // req/s; NaN when not measured
	Bottleneck    string  // label of the primary bottleneck, e.g. Bottleneck.Label()
}

// MapCell is one cell of the maps.
type MapCell struct {
	Config        string // "" when no point falls in the cell
	MaxThroughput float64
	Bottleneck    string
}

// ConfigMap is the data of a maximum-throughput map and a bottleneck map
// over two tiers of a configuration grid, the other tiers fixed.
type ConfigMap struct {
	XTier, YTier   int       // tier index (0-based) on each axis
	XLabel, YLabel string    // the tiers' names, e.g. "DB servers"
	X, Y           []float64 // tier sizes on each axis, ascending
	// Cells[y][x] is the configuration with Y[y] servers in YTier and X[x]
	// in XTier; MaxThroughput is NaN in a cell without a point.
	Cells [][]MapCell
	// Fixed is the configuration with the axis tiers as '*', e.g. "1/*/1/*".
	Fixed string
	// MinThroughput and MaxThroughput bound the measured cells (the colour
	// scale of 003's throughput graphs); NaN when none is measured.
	MinThroughput, MaxThroughput float64
	Bottlenecks                  []string // distinct bottleneck labels, sorted (the legend)
}

// Maps lays configurations out on a grid with tier xTier on the x axis and
// tier yTier on the y axis (003 draws database servers across and
// application servers up). Every other tier must be the same in all
// points; labels name the tiers (may be nil).
func Maps(points []ConfigPoint, xTier, yTier int, labels []string) (ConfigMap, error) {
	if len(points) == 0 {
		return ConfigMap{}, fmt.Errorf("bottleneck: the configuration map needs at least one configuration")
	}
	if xTier == yTier {
		return ConfigMap{}, fmt.Errorf("bottleneck: the map's x and y tiers are both %d; choose two different tiers", xTier)
	}
	type parsed struct {
		tiers []string
		x, y  float64
	}
	ps := make([]parsed, len(points))
	var fixed []string
	for i, p := range points {
		tiers := strings.Split(p.Config, "/")
		if xTier < 0 || yTier < 0 || xTier >= len(tiers) || yTier >= len(tiers) {
			return ConfigMap{}, fmt.Errorf("bottleneck: configuration %q has %d tiers, so tiers %d and %d cannot be the map's axes; choose tiers between 0 and %d",
				p.Config, len(tiers), xTier, yTier, len(tiers)-1)
		}
		x, err := tierSize(tiers[xTier])
		if err != nil {
			return ConfigMap{}, fmt.Errorf("bottleneck: configuration %q: %v", p.Config, err)
		}
		y, err := tierSize(tiers[yTier])
		if err != nil {
			return ConfigMap{}, fmt.Errorf("bottleneck: configuration %q: %v", p.Config, err)
		}
		ps[i] = parsed{tiers, x, y}
		rest := append([]string(nil), tiers...)
		rest[xTier], rest[yTier] = "*", "*"
		if i == 0 {
			fixed = rest
			continue
		}
		if len(rest) != len(fixed) {
			return ConfigMap{}, fmt.Errorf("bottleneck: configurations %q and %q have different numbers of tiers; map one system at a time", points[0].Config, p.Config)
		}
		for t := range rest {
			if rest[t] != fixed[t] {
				return ConfigMap{}, fmt.Errorf("bottleneck: configurations %q and %q differ in tier %d, which is not an axis; map one setting of the other tiers at a time",
					points[0].Config, p.Config, t)
			}
		}
	}
	m := ConfigMap{XTier: xTier, YTier: yTier, Fixed: strings.Join(fixed, "/"), MinThroughput: math.NaN(), MaxThroughput: math.NaN()}
	if xTier < len(labels) {
		m.XLabel = labels[xTier]
	}
	if yTier < len(labels) {
		m.YLabel = labels[yTier]
	}
	xs, ys := map[float64]bool{}, map[float64]bool{}
	for _, p := range ps {
		xs[p.x], ys[p.y] = true, true
	}
	m.X, m.Y = sortedKeys(xs), sortedKeys(ys)
	xi, yi := index(m.X), index(m.Y)
	m.Cells = make([][]MapCell, len(m.Y))
	for y := range m.Cells {
		m.Cells[y] = make([]MapCell, len(m.X))
		for x := range m.Cells[y] {
			m.Cells[y][x].MaxThroughput = math.NaN()
		}
	}
	labelSet := map[string]bool{}
	for i, p := range ps {
		c := &m.Cells[yi[p.y]][xi[p.x]]
		if c.Config != "" {
			return ConfigMap{}, fmt.Errorf("bottleneck: configurations %q and %q fall into the same map cell; give each configuration once", c.Config, points[i].Config)
		}
		c.Config, c.MaxThroughput, c.Bottleneck = points[i].Config, points[i].MaxThroughput, points[i].Bottleneck
		if t := c.MaxThroughput; !math.IsNaN(t) {
			if math.IsNaN(m.MinThroughput) || t < m.MinThroughput {
				m.MinThroughput = t
			}
			if math.IsNaN(m.MaxThroughput) || t > m.MaxThroughput {
				m.MaxThroughput = t
			}
		}
		if c.Bottleneck != "" {
			labelSet[c.Bottleneck] = true
		}
	}
	for l := range labelSet {
		m.Bottlenecks = append(m.Bottlenecks, l)
	}
	sort.Strings(m.Bottlenecks)
	return m, nil
}

// tierSize reads a tier's size: a number (digits with an optional
// decimal point), then an optional node-type suffix ("2L" -> 2, "0.5" ->
// 0.5).
func tierSize(s string) (float64, error) {
	j := 0
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
		j++
	}
	n, err := strconv.ParseFloat(s[:j], 64)
	if j == 0 || err != nil || math.IsInf(n, 0) {
		return 0, fmt.Errorf("tier %q does not start with a size; write tiers like 2, 0.5 or 2L separated by '/'", s)
	}
	return n, nil
}

func sortedKeys(set map[float64]bool) []float64 {
	out := make([]float64, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Float64s(out)
	return out
}

func index(xs []float64) map[float64]int {
	m := make(map[float64]int, len(xs))
	for i, x := range xs {
		m[x] = i
	}
	return m
}

// Label names a bottleneck by its resources' tiers and kinds (see
// MetricResource) and, unless single, its class: "APP_CPU",
// "DB_DISK (oscillatory)", "APP_CPU+DB_NET (concurrent)".
func (b Bottleneck) Label() string {
	seen := map[string]bool{}
	var names []string
	for _, id := range b.Resources {
		n := MetricResource(id + " util_pct")
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	l := strings.Join(names, "+")
	if b.Class != ClassSingle {
		l += " (" + string(b.Class) + ")"
	}
	return l
}
