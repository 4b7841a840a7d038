package scaling

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/results"
)

// Comparison is a scaling comparison of treatments on different lab
// deployments.
type Comparison struct {
	Result Result
	// Deployments are the compared treatments' deployments, by name.
	Deployments map[string]Deployment
	// Notes say where an estimate is weaker than it looks, then the
	// analysis's own notes (Result.Notes).
	Notes []string
	// Problem is why the comparison could not be made (a treatment without
	// a curve, say); nil when it was. Result is then empty.
	Problem error
}

// FromResults compares the capacity curves of the treatments whose runs
// ran on lab deployments (TreatmentDeployment): throughput is each curve's
// capacity estimate, response time the mean latency at a common load
// below the knees (FromCurves), cost from the lab's prices. It returns nil
// unless at least two such treatments differ in server count or size.
func FromResults(r *results.Results, curves []capacity.TreatmentCurve) *Comparison {
	var names []string
	var ds []Deployment
	var cs []capacity.Curve
	for _, tc := range curves {
		d, ok := TreatmentDeployment(r, tc.Treatment)
		if !ok {
			continue
		}
		names, ds, cs = append(names, tc.Treatment.Name), append(ds, d), append(cs, tc.Curve)
	}
	if len(cs) < 2 || !Differ(ds) {
		return nil
	}
	out := newComparison(names, ds)
	ts, notes, err := FromCurves(cs, Shapes(names, ds))
	if err != nil {
		out.Problem = err
		return out
	}
	out.finish(ts, notes)
	return out
}

// FromProbes compares the latest completed probe of every treatment whose
// probe ran on a lab deployment (DeploymentAt the probe's start):
// throughput is the probe's estimate (seed 004), unknown when it found
// none. It returns nil unless at least two such treatments differ in
// server count or size; the error is a failure to read the results.
func FromProbes(r *results.Results) (*Comparison, error) {
	ps, err := r.Probes()
	if err != nil {
		return nil, err
	}
	var names []string
	var ds []Deployment
	var ts []Treatment
	var notes []string
	seen := map[string]bool{}
	for i := len(ps) - 1; i >= 0; i-- { // the latest probe of each treatment
		p := ps[i]
		name := results.SettingsOf(p).Treatment
		if seen[name] || p.Status != results.StatusCompleted {
			continue
		}
		t, _ := r.Treatment(name)
		d, ok := DeploymentAt(r, p.Start, t.Target.Hosts)
		if !ok {
			continue
		}
		seen[name] = true
		if math.IsNaN(p.Estimate) {
			// Unknown, not 0: a probe stopped by the client or a cap says
			// nothing about the server's limit (Analyze leaves its ratios
			// undefined).
			notes = append(notes, fmt.Sprintf("the probe of %s has no estimate (%s): its throughput is unknown", label(name), p.Stop))
		}
		names = append([]string{name}, names...)
		ds = append([]Deployment{d}, ds...)
		ts = append([]Treatment{{Name: name, Throughput: p.Estimate}}, ts...)
	}
	if len(ts) < 2 || !Differ(ds) {
		return nil, nil
	}
	shapes := Shapes(names, ds)
	for i := range ts {
		s := shapes[ts[i].Name]
		ts[i].Servers, ts[i].Size, ts[i].PricePerHour = s.Servers, s.Size, s.PricePerHour
	}
	out := newComparison(names, ds)
	out.finish(ts, notes)
	return out, nil
}

func newComparison(names []string, ds []Deployment) *Comparison {
	out := &Comparison{Deployments: map[string]Deployment{}}
	for i, n := range names {
		out.Deployments[n] = ds[i]
	}
	return out
}

// finish runs the analysis with the fewest capacity units as baseline.
func (c *Comparison) finish(ts []Treatment, notes []string) {
	res, err := Analyze(ts, "")
	if err != nil {
		c.Problem = err
		return
	}
	c.Result = res
	c.Notes = append(notes, res.Notes...)
}

// label names a treatment in prose.
func label(name string) string {
	if name == "" {
		return "the campaign"
	}
	return name
}
