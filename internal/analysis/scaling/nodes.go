package scaling

import (
	"fmt"
	"math"
	"sort"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// Scaling over node count (seed-digest §5, seed 002 §V): treatments that
// run a database cluster of different node counts (horizontal) or node
// sizes (vertical). AnalyzeNodes adds to Analyze what a cluster study asks:
// the linearity of throughput over the node count itself, per node type,
// and the spread of response time under each deployment (seed 002 §V
// found the vertically scaled cluster's response times more variable).

// RTDist is the response-time distribution of every successful request
// of one load level, pooled over the level's runs and operation types.
type RTDist struct {
	Level             float64 // the level (req/s or clients); NaN when none
	N                 int64   // requests
	Mean, StdDev, P99 float64 // µs; NaN when N is 0
}

// NoRT is the distribution of a level that was not measured.
var NoRT = RTDist{Level: math.NaN(), Mean: math.NaN(), StdDev: math.NaN(), P99: math.NaN()}

// Variance is StdDev², in µs².
func (d RTDist) Variance() float64 { return d.StdDev * d.StdDev }

// CV is the coefficient of variation StdDev / Mean; NaN when undefined.
func (d RTDist) CV() float64 {
	if !(d.Mean > 0) {
		return math.NaN()
	}
	return d.StdDev / d.Mean
}

// NodeTreatment is one cluster deployment's estimates: Treatment.Servers
// is the node count, Size a node's size relative to the smallest node
// type, PricePerHour one node's price.
type NodeTreatment struct {
	Treatment
	Type string // the nodes' instance type; "" when unknown
	// AtLoad is the response time at Treatment.Load (the common load the
	// speed-up compares), AtCapacity at the level of the deployment's
	// throughput estimate.
	AtLoad, AtCapacity RTDist
}

// NodeRow is one deployment compared with the baseline.
type NodeRow struct {
	Row
	Type string
	// Strategy is how the deployment differs from the baseline's:
	// "horizontal" (nodes of the baseline's size, another count),
	// "vertical" (nodes of another size, whatever their count: Kind says
	// whether the count is the same), "baseline" or "same".
	Strategy           string
	AtLoad, AtCapacity RTDist
}

// NodeFit is the least-squares line of throughput over node count of the
// deployments of one node type: Slope is the throughput one more node
// adds, R2 how well a line fits.
type NodeFit struct {
	Type       string
	Size       float64
	Treatments []string
	Fit        stats.Fit
}

// NodeResult is the comparison over node count.
type NodeResult struct {
	Baseline string
	Rows     []NodeRow // in input order
	// Linearity is Analyze's fit over capacity units (nodes × size).
	Linearity stats.Fit
	// ByType are the fits of throughput over node count, one per node
	// type with at least two node counts that have a throughput.
	ByType []NodeFit
	// HorizontalCV and VerticalCV are the mean coefficients of variation
	// of response time at capacity of the rows of each Strategy (the
	// baseline in neither); NaN without such rows.
	HorizontalCV, VerticalCV float64
	Notes                    []string
}

// AnalyzeNodes compares cluster deployments with the baseline (the named
// one, or the one with the fewest capacity units when baseline is "").
func AnalyzeNodes(ts []NodeTreatment, baseline string) (NodeResult, error) {
	plain := make([]Treatment, len(ts))
	for i, t := range ts {
		plain[i] = t.Treatment
		if t.Servers != math.Trunc(t.Servers) {
			return NodeResult{}, fmt.Errorf("scaling: treatment %s has %v nodes; a node count is a whole number", quote(t.Name), t.Servers)
		}
	}
	res, err := Analyze(plain, baseline)
	if err != nil {
		return NodeResult{}, err
	}
	out := NodeResult{Baseline: res.Baseline, Linearity: res.Linearity, Notes: res.Notes}
	var hcv, vcv []float64
	for i, r := range res.Rows {
		nr := NodeRow{Row: r, Type: ts[i].Type, AtLoad: ts[i].AtLoad, AtCapacity: ts[i].AtCapacity, Strategy: strategy(r, res.Rows, res.Baseline)}
		out.Rows = append(out.Rows, nr)
		cv := nr.AtCapacity.CV()
		switch {
		case math.IsNaN(cv):
		case nr.Strategy == "horizontal":
			hcv = append(hcv, cv)
		case nr.Strategy == "vertical":
			vcv = append(vcv, cv)
		}
	}
	out.HorizontalCV, out.VerticalCV = stats.Mean(hcv), stats.Mean(vcv)
	out.ByType, out.Notes = nodeFits(out.Rows, out.Notes)
	return out, nil
}

// strategy says whether r scales the baseline out (more or fewer nodes of
// its size) or up (nodes of another size).
func strategy(r Row, rows []Row, baseline string) string {
	var b Row
	for _, x := range rows {
		if x.Name == baseline {
			b = x
		}
	}
	switch {
	case r.Name == baseline:
		return "baseline"
	case r.Size != b.Size:
		return "vertical"
	case r.Servers != b.Servers:
		return "horizontal"
	}
	return "same"
}

// nodeFits regresses throughput over node count among the rows of each
// node size, in order of size.
func nodeFits(rows []NodeRow, notes []string) ([]NodeFit, []string) {
	bySize := map[float64][]NodeRow{}
	for _, r := range rows {
		bySize[r.Size] = append(bySize[r.Size], r)
	}
	sizes := make([]float64, 0, len(bySize))
	for s := range bySize {
		sizes = append(sizes, s)
	}
	sort.Float64s(sizes)
	var out []NodeFit
	for _, s := range sizes {
		rs := bySize[s]
		f := NodeFit{Type: rs[0].Type, Size: s}
		counts := map[float64]bool{}
		var xs, ys []float64
		for _, r := range rs {
			f.Treatments = append(f.Treatments, r.Name)
			if r.Type != f.Type {
				f.Type = "" // equal sizes of different names: name none
			}
			xs, ys = append(xs, r.Servers), append(ys, r.Throughput)
			if !math.IsNaN(r.Throughput) {
				counts[r.Servers] = true
			}
		}
		if len(counts) < 2 {
			continue
		}
		fit, err := stats.Regress(xs, ys)
		if err != nil {
			continue // xs and ys have one entry per row: cannot happen
		}
		f.Fit = fit
		out = append(out, f)
		if len(counts) < 3 {
			notes = append(notes, fmt.Sprintf("the line of throughput over node count for %s rests on %d node counts; with fewer than three, R² is 1 or undefined and says nothing about linearity",
				typeName(f), len(counts)))
		}
	}
	return out, notes
}

func typeName(f NodeFit) string {
	if f.Type == "" {
		return fmt.Sprintf("nodes of size %s", num(f.Size))
	}
	return f.Type + " nodes"
}
