package spec

// BottleneckAnalysis is analysis.bottleneck (see docs for the bottleneck analysis).
type BottleneckAnalysis struct{}

// bottleneckAnalysis checks analysis.bottleneck.
func (c *checker) bottleneckAnalysis(_ *Spec, _ *BottleneckAnalysis) {}
