package esl

import (
	"fmt"
	"math"
)

// DefaultDisagreement is the relative difference above which Compare flags
// an analytical and an empirical ESL as disagreeing. Seed 000 §4.3 saw the
// documented model within a few percent at small ops (916 and 871 ops/s
// measured for 900 provisioned, 1788 for 1800) and far off at large ops
// and high PIOPS; 10% separates the two.
const DefaultDisagreement = 0.10

// Difference is the comparison of two models at one op size and quality.
type Difference struct {
	OpSizeKiB  float64
	Quality    Quality
	Analytical float64 // the analytical model's mean ESL
	Empirical  float64 // the empirical model's mean ESL, all mixes pooled
	P1, P99    float64 // the empirical distribution's 1st and 99th percentiles
	// Rel is (Empirical - Analytical) / Analytical: -0.2 means the service
	// delivered 20% less than documented.
	Rel      float64
	Disagree bool   // |Rel| > threshold
	Limit    string // what bounds the analytical value ("iops", "volume_bandwidth", ...) when the model says
}

// Compare evaluates the analytical model at every op size of the empirical
// one, for every quality both describe, and flags the pairs whose relative
// difference exceeds threshold (0 = DefaultDisagreement) (seed-digest §4:
// the empirical model corrects the documented one). Rows are ordered by op
// size, then quality.
func Compare(analytical Model, empirical *Empirical, threshold float64) ([]Difference, error) {
	if threshold == 0 {
		threshold = DefaultDisagreement
	}
	if !(threshold > 0) {
		return nil, fmt.Errorf("disagreement threshold %v must be a positive fraction (0.1 = 10%%)", threshold)
	}
	if analytical == nil || empirical == nil {
		return nil, fmt.Errorf("compare needs both an analytical and an empirical model")
	}
	known := map[Quality]bool{}
	for _, q := range analytical.Qualities() {
		known[q] = true
	}
	var out []Difference
	for _, size := range empirical.sizes {
		for _, q := range empirical.Qualities() {
			p, ok := empirical.pooled[pooledKey{size, q}]
			if !ok || !known[q] {
				continue
			}
			a, err := analytical.ESL(q, size)
			if err != nil {
				return nil, err
			}
			d := Difference{OpSizeKiB: size, Quality: q, Analytical: a.Mean(), Empirical: p.esl.Mean(),
				P1: p.esl.Quantile(0.01), P99: p.esl.Quantile(0.99)}
			d.Rel = (d.Empirical - d.Analytical) / d.Analytical
			d.Disagree = math.Abs(d.Rel) > threshold
			if v, ok := analytical.(*Analytical); ok {
				if x, err := v.Volume.Evaluate(size); err == nil {
					d.Limit = x.Limit
				}
			}
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the two models share no quality; the analytical model describes %v", analytical.Qualities())
	}
	return out, nil
}
