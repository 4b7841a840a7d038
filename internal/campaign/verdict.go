package campaign

import (
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// verdictSettings are what the engine's client-limit verdict needs from
// the spec (load/verdict.go): whether the target runs inside this process,
// so that its CPU is told apart from the engine's, and the percentile the
// run is judged by (the SLO's; 0 lets the engine use p99).
func verdictSettings(s *spec.Spec) (inProcess bool, percentile float64) {
	if f, ok := registry.Lookup(s.Target.Type); ok {
		inProcess = f.InProcess
	}
	if s.SLO != nil {
		percentile = s.SLO.Percentile
	}
	return inProcess, percentile
}
