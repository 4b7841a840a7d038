package spec

// ESLAnalysis is analysis.esl (see docs for the esl analysis).
type ESLAnalysis struct{}

// eslAnalysis checks analysis.esl.
func (c *checker) eslAnalysis(_ *Spec, _ *ESLAnalysis) {}
