// Package scaling compares treatments that differ in the number or size of
// servers (seed-digest §5, seed 002 §III-A): scale-up T(αs)/T(s), speed-up
// RT(s)/RT(αs), the linearity of throughput over server capacity (Pearson r
// of a linear regression), and the cost per req/s of each deployment.
// Analyze is a pure function of per-treatment estimates; FromCurves derives
// them from capacity curves. The drivers FromResults (campaign runs) and
// FromProbes (probe estimates) build them from a results model, with each
// treatment's lab deployment (DeploymentAt) and its prices.
package scaling

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// HoursPerMonth converts hourly prices to monthly ones: 365 × 24 / 12 = 730,
// the convention cloud price lists use.
const HoursPerMonth = 730

// Treatment is one deployment's estimates.
type Treatment struct {
	Name string
	// Servers is the number of servers (> 0).
	Servers float64
	// Size is each server's size relative to the reference type (e.g. 2 for
	// an instance type with twice the resources); 0 means 1.
	Size float64
	// Throughput is the deployment's throughput estimate (req/s), e.g. its
	// measured capacity; NaN when unknown (no estimate). An unknown
	// throughput is not 0: it leaves the row's scale-up, efficiency and cost
	// per req/s undefined and stays out of the linearity fit.
	Throughput float64
	// ResponseTime is the mean response time (µs) at Load; 0 or NaN when
	// unknown. Speed-up compares response times at the same load.
	ResponseTime float64
	// Load is the offered rate or client count ResponseTime was measured
	// at; 0 when unknown (then it is not checked).
	Load float64
	// PricePerHour is the price of one server per hour (0 = unknown).
	PricePerHour float64
}

// Row is one treatment compared with the baseline.
type Row struct {
	Treatment
	Units float64 // capacity units: Servers × Size
	Alpha float64 // Units / baseline Units
	// Kind: "baseline", "horizontal" (more or fewer servers of the same
	// size), "vertical" (same count, other size), "mixed" or "same".
	Kind string
	// ScaleUp = T(αs)/T(s), seed-digest §5.
	ScaleUp float64
	// SpeedUp = RT(s)/RT(αs) at the same load, seed-digest §5; NaN when a
	// response time is unknown or the loads differ.
	SpeedUp float64
	// Efficiency = ScaleUp/Alpha: 1 is linear scaling.
	Efficiency float64
	// CostPerMonth = Servers × PricePerHour × 730; NaN without a price.
	CostPerMonth float64
	// CostPerReqPerSec = CostPerMonth / Throughput ($ per month per req/s).
	CostPerReqPerSec float64
}

// Result is the scaling comparison.
type Result struct {
	Baseline string
	Rows     []Row // in input order
	// Linearity is the least-squares line of throughput over capacity
	// units across all treatments, with Pearson r (seed-digest §5: the
	// correlation coefficient of a linear regression of throughput over
	// server count; with every Size 1, units are the server count).
	Linearity stats.Fit
	Notes     []string
}

// Analyze compares the treatments with the baseline, the named one or, when
// baseline is "", the one with the fewest capacity units (the first such).
func Analyze(ts []Treatment, baseline string) (Result, error) {
	if len(ts) == 0 {
		return Result{}, fmt.Errorf("scaling: no treatments to compare; pass at least two deployments")
	}
	seen := map[string]bool{}
	rows := make([]Row, len(ts))
	for i, t := range ts {
		if seen[t.Name] {
			return Result{}, fmt.Errorf("scaling: treatment %q appears twice; give each deployment its own name", t.Name)
		}
		seen[t.Name] = true
		if t.Size == 0 {
			t.Size = 1
		}
		switch {
		case !(t.Servers > 0) || math.IsInf(t.Servers, 0):
			return Result{}, fmt.Errorf("scaling: treatment %q has Servers %v; set it to the number of servers (> 0)", t.Name, t.Servers)
		case !(t.Size > 0) || math.IsInf(t.Size, 0):
			return Result{}, fmt.Errorf("scaling: treatment %q has Size %v; set it to the server size relative to the reference type (> 0), or 0 for 1", t.Name, t.Size)
		case t.Throughput < 0 || math.IsInf(t.Throughput, 0):
			return Result{}, fmt.Errorf("scaling: treatment %q has Throughput %v; set it to the measured req/s (>= 0), or NaN when unknown", t.Name, t.Throughput)
		case t.PricePerHour < 0 || math.IsNaN(t.PricePerHour):
			return Result{}, fmt.Errorf("scaling: treatment %q has PricePerHour %v; set it to the price of one server per hour, or 0 when unknown", t.Name, t.PricePerHour)
		}
		rows[i] = Row{Treatment: t, Units: t.Servers * t.Size}
	}
	b := -1
	for i, r := range rows {
		if (baseline != "" && r.Name == baseline) || (baseline == "" && (b < 0 || r.Units < rows[b].Units)) {
			b = i
		}
	}
	if b < 0 {
		return Result{}, fmt.Errorf("scaling: baseline %q is not among the treatments; name one of them or pass \"\" for the smallest", baseline)
	}
	base := rows[b].Treatment
	res := Result{Baseline: base.Name}
	if !(base.Throughput > 0) {
		res.Notes = append(res.Notes, fmt.Sprintf("the baseline %s has no throughput: scale-up is undefined", quote(base.Name)))
	}
	for i := range rows {
		r := &rows[i]
		r.Alpha = r.Units / rows[b].Units
		r.Kind = kind(base, r.Treatment, i == b)
		r.ScaleUp, r.Efficiency = math.NaN(), math.NaN()
		if base.Throughput > 0 && !math.IsNaN(r.Throughput) {
			r.ScaleUp = r.Throughput / base.Throughput
			r.Efficiency = r.ScaleUp / r.Alpha
		}
		r.SpeedUp = math.NaN()
		switch {
		case !(r.ResponseTime > 0) || !(base.ResponseTime > 0):
		case r.Load != 0 && base.Load != 0 && r.Load != base.Load:
			res.Notes = append(res.Notes, fmt.Sprintf("speed-up of %s is undefined: its response time was measured at load %s, the baseline's at %s; speed-up compares the same load",
				quote(r.Name), num(r.Load), num(base.Load)))
		default:
			r.SpeedUp = base.ResponseTime / r.ResponseTime
		}
		r.CostPerMonth, r.CostPerReqPerSec = math.NaN(), math.NaN()
		if r.PricePerHour > 0 {
			r.CostPerMonth = r.Servers * r.PricePerHour * HoursPerMonth
			if r.Throughput > 0 {
				r.CostPerReqPerSec = r.CostPerMonth / r.Throughput
			}
		}
	}
	res.Rows = rows
	xs := make([]float64, len(rows))
	ys := make([]float64, len(rows))
	distinct := map[float64]bool{}
	for i, r := range rows {
		// Regress skips the NaN of an unknown throughput.
		xs[i], ys[i] = r.Units, r.Throughput
		if !math.IsNaN(r.Throughput) {
			distinct[r.Units] = true
		} else if i != b {
			res.Notes = append(res.Notes, fmt.Sprintf("%s has no throughput estimate: its scale-up and cost per req/s are undefined and it is left out of the linearity fit", quote(r.Name)))
		}
	}
	fit, err := stats.Regress(xs, ys)
	if err != nil {
		return Result{}, err
	}
	res.Linearity = fit
	if len(distinct) < 3 {
		res.Notes = append(res.Notes, fmt.Sprintf("linearity rests on %d distinct server capacities; with fewer than three, r is ±1 or undefined and says nothing about linearity", len(distinct)))
	}
	return res, nil
}

func kind(base, t Treatment, isBase bool) string {
	switch {
	case isBase:
		return "baseline"
	case t.Servers != base.Servers && t.Size == base.Size:
		return "horizontal"
	case t.Servers == base.Servers && t.Size != base.Size:
		return "vertical"
	case t.Servers != base.Servers:
		return "mixed"
	}
	return "same"
}

// Shape is how a treatment is deployed, for FromCurves.
type Shape struct {
	Servers, Size, PricePerHour float64
}

// sortedNames returns the keys of m in order.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func quote(name string) string {
	if name == "" {
		return "the single treatment"
	}
	return strconv.Quote(name)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
