package spec

// Analysis is the `analysis:` section: settings of the analyses that read a
// campaign's results (reports, headroom assess). Every part is optional;
// each analysis documents its defaults. Each part is defined, and checked,
// in its own file (analysis_*.go).
type Analysis struct {
	Variability VariabilityAnalysis `yaml:"variability"`
	ESL         ESLAnalysis         `yaml:"esl"`
	Bottleneck  BottleneckAnalysis  `yaml:"bottleneck"`
	Plan        PlanAnalysis        `yaml:"plan"`     // analysis_plan.go
	Failures    FailuresAnalysis    `yaml:"failures"` // writecheck.go
}

// analysis checks the analysis section.
func (c *checker) analysis(s *Spec) {
	c.variabilityAnalysis(s, &s.Analysis.Variability)
	c.eslAnalysis(s, &s.Analysis.ESL)
	c.bottleneckAnalysis(s, &s.Analysis.Bottleneck)
	c.planAnalysis(s, &s.Analysis.Plan)
	c.failuresAnalysis(s, &s.Analysis.Failures)
}
