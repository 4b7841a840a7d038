package spec

// FailuresAnalysis is analysis.failures: the write check after runs and
// the definitions of the availability analysis (internal/analysis/
// availability; docs/failures.md). Every field is optional:
//
//	analysis:
//	  failures:
//	    write_check: true   # read back every acknowledged record after every run
//	                        # (default: after runs with a fault or cluster event)
//	    tolerance: 0.2      # x: recovered = back within 20% of the throughput and p99 before the fault
//	    stable: 5           # y: ... for 5 consecutive intervals
//	    detect_factor: 3    # k: an interval whose p99 is above 3x the one before shows the fault
//	    steady: 10s         # the steady state before a fault is taken over this long
type FailuresAnalysis struct {
	// WriteCheck reads back every record the target acknowledged, at its
	// strongest consistency, after every run (internal/campaign/
	// writecheck.go). Without it the check runs after runs whose events
	// include a fault (kill, stop, link_down, partition, promote) or a
	// cluster change (add_node, remove_node).
	WriteCheck bool `yaml:"write_check"`
	// Tolerance is x, a fraction in (0, 1); 0 = the default 0.2.
	Tolerance float64 `yaml:"tolerance"`
	// Stable is y, intervals; 0 = the default 5.
	Stable int `yaml:"stable"`
	// DetectFactor is k, above 1; 0 = the default 3.
	DetectFactor float64 `yaml:"detect_factor"`
	// Steady is the length of the steady state before a fault; 0 = the
	// default 10 s.
	Steady Duration `yaml:"steady"`
}

// failuresAnalysis checks analysis.failures.
func (c *checker) failuresAnalysis(s *Spec, f *FailuresAnalysis) {
	const p = "analysis.failures."
	if f.WriteCheck && s.Workload.Statements != nil {
		c.fail(p+"write_check", "the write check reads back YCSB records, and a statements workload has none; remove write_check or use a YCSB workload")
	}
	if f.Tolerance != 0 && !(f.Tolerance > 0 && f.Tolerance < 1) {
		c.fail(p+"tolerance", "%v is outside (0, 1); give it as a fraction, e.g. 0.2 for within 20%%", f.Tolerance)
	}
	if f.Stable < 0 {
		c.fail(p+"stable", "%d is negative; give how many consecutive intervals count as recovered, e.g. 5", f.Stable)
	}
	if f.DetectFactor != 0 && !(f.DetectFactor > 1) {
		c.fail(p+"detect_factor", "%v must be above 1: an interval whose p99 is above k times the one before the fault shows it", f.DetectFactor)
	}
	if f.Steady.Duration < 0 {
		c.fail(p+"steady", "%v is negative; give how long before a fault its steady state is taken over, e.g. 10s", f.Steady.Duration)
	}
}
