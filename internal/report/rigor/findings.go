package rigor

import (
	"slices"

	"github.com/headroom-dev/headroom/internal/store"
)

// Finding is one headline finding for the terminal summary: a short label
// and the sentence the report's sections use.
type Finding struct {
	Label, Text string
}

// Findings are the headline findings of one treatment ("" = a campaign
// without treatments): the knee and the capacity estimate, the SLO's first
// failure, the levels the client limited, repeatability (a), the valid
// modelling range (c) of the treatment's group of equal instances, and the
// estimate of the treatment's probes. Analyses that cannot run on the data
// give a "note" finding instead of an error; err is a failure to read the
// store.
func Findings(st *store.Store, treatment string) ([]Finding, error) {
	_, tcs, aerr, err := loadCurves(st)
	if err != nil {
		return nil, err
	}
	var out []Finding
	add := func(label, text string) {
		if text != "" {
			out = append(out, Finding{label, text})
		}
	}
	if aerr != nil {
		add("note", "capacity analysis: "+aerr.Error())
	}
	for _, tc := range tcs {
		if tc.t.name != treatment {
			continue
		}
		add("Knee", kneeText(tc))
		add("Capacity", capacityText(tc))
		add("SLO", sloFinding(tc))
		add("Client", clientText(tc))
	}
	res, _, ok, aerr, err := loadVariability(st)
	if err != nil {
		return nil, err
	}
	switch {
	case !ok:
	case aerr != nil:
		add("note", "variation analysis: "+aerr.Error())
	case hasVariation(res):
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
	prs, err := loadProbes(st)
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
