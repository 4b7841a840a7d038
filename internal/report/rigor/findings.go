package rigor

import (
	"slices"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/analysis/variability"
	"github.com/headroom-dev/headroom/internal/results"
)

// Finding is one headline finding for the terminal summary: a short label
// and the sentence the report's sections use.
type Finding struct {
	Label, Text string
}

// Findings are the headline findings of one treatment ("" = a campaign
// without treatments): where its levels came from when they are
// fractions of a probed rate, the knee and the capacity estimate, the SLO's first
// failure, the levels the client limited, repeatability (a), the valid
// modelling range (c) of the treatment's group of equal instances, a closed
// loop's stalls when they make its latency understate (stall.go), the
// elasticity of its runs with node changes (elasticity.go), its place in
// a comparison over node count (nodescaling.go), and the estimate of the
// treatment's probes. Analyses that cannot run on the data
// give a "note" finding instead of an error; err is a failure to read the
// results.
func Findings(r *results.Results, treatment string) ([]Finding, error) {
	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil {
		return nil, err
	}
	var out []Finding
	add := func(label, text string) {
		if text != "" {
			out = append(out, Finding{label, text})
		}
	}
	if t, ok := r.Treatment(treatment); ok && t.Load.Relative != nil {
		// Rates relative to a probe (spec relative_to: probe): say of what.
		add("Levels", t.Load.Relative.Text())
	}
	if cc.Problem != nil {
		add("note", "capacity analysis: "+cc.Problem.Error())
	}
	for _, tc := range cc.Curves {
		if tc.Treatment.Name != treatment {
			continue
		}
		add("Knee", kneeText(tc))
		add("Capacity", capacityText(tc))
		add("SLO", sloFinding(tc))
		add("Client", clientText(tc))
	}
	study, err := variability.FromResults(r)
	if err != nil {
		return nil, err
	}
	switch {
	case study == nil:
	case study.Problem != nil:
		add("note", "variation analysis: "+study.Problem.Error())
	case hasVariation(study.Result):
		res := study.Result
		for _, x := range res.Instances {
			if x.Name == treatment {
				add("Repeatable", "(a) "+repeatText(x, res.Config))
			}
		}
		for _, g := range res.Groups {
			if !slices.Contains(g.Instances, treatment) {
				continue
			}
			text := g.Range.Statement
			if len(g.Instances) > 1 {
				text = groupName(g.Instances) + ": " + text
			}
			if g.Range.Valid && g.Range.Reason != "" {
				text += "; it ends " + g.Range.Reason
			}
			add("Valid range", "(c) "+text)
		}
	}
	if err := addStallFinding(r, treatment, add); err != nil {
		return nil, err
	}
	if err := addElasticityFinding(r, treatment, add); err != nil { // elasticity.go
		return nil, err
	}
	if err := addNodeScalingFinding(r, cc, treatment, add); err != nil { // nodescaling.go
		return nil, err
	}
	prs, err := loadProbes(r)
	if err != nil {
		return nil, err
	}
	for _, pr := range prs {
		if pr.treatment == treatment {
			add("Probe", probeText(pr))
		}
	}
	return out, nil
}
