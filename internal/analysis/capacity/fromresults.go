package capacity

import (
	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/results"
)

// TreatmentCurve is one treatment's curve with what it was computed from.
type TreatmentCurve struct {
	Treatment results.Treatment
	// Input is the treatment's completed runs with the load model and SLO
	// the curve used.
	Input levels.Input
	Curve Curve
}

// Campaign is the curves of a campaign's treatments.
type Campaign struct {
	// Curves are the treatments with completed runs, in campaign order.
	Curves []TreatmentCurve
	// Problem is why the analysis could not run on these results (the
	// runs of a treatment mix load models, say); nil when it ran. Curves
	// is then empty.
	Problem error
}

// FromResults computes the curve of every treatment with completed runs,
// each with its own load model and SLO (treatments may set different
// ones). The error is a failure to read the results; a complaint about the
// data is Campaign.Problem.
func FromResults(r *results.Results, cfg Config) (Campaign, error) {
	ins, err := Inputs(r)
	if err != nil {
		return Campaign{}, err
	}
	var out Campaign
	for _, ti := range ins {
		cs, err := Analyze(ti.Input, cfg)
		if err != nil {
			return Campaign{Problem: err}, nil
		}
		out.Curves = append(out.Curves, TreatmentCurve{Treatment: ti.Treatment, Input: ti.Input, Curve: cs[0]})
	}
	return out, nil
}

// TreatmentInput is one treatment with its levels input.
type TreatmentInput struct {
	Treatment results.Treatment
	Input     levels.Input
}

// Inputs reads the levels input of every treatment with completed runs,
// in campaign order, with the treatment's load model and SLO
// (levels.FromResults).
func Inputs(r *results.Results) ([]TreatmentInput, error) {
	var out []TreatmentInput
	for _, t := range r.Treatments() {
		in, _, err := levels.FromResults(r, t.Name)
		if err != nil {
			return nil, err
		}
		if len(in.Runs) > 0 {
			out = append(out, TreatmentInput{Treatment: t, Input: in})
		}
	}
	return out, nil
}
