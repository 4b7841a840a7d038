package spec

// VariabilityAnalysis is analysis.variability (see docs for the variability analysis).
type VariabilityAnalysis struct{}

// variabilityAnalysis checks analysis.variability.
func (c *checker) variabilityAnalysis(_ *Spec, _ *VariabilityAnalysis) {}
