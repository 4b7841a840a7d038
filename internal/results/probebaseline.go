package results

import "github.com/headroom-dev/headroom/internal/store"

// The probe's unloaded latency (Probe.Baseline) and each window's
// unstable-queue reading (ProbeWindow.Trend), as stored; see docs/probe.md.
type (
	ProbeBaseline = store.ProbeBaseline
	ProbeTrend    = store.ProbeTrend
)
