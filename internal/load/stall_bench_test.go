package load_test

import (
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
)

// BenchmarkEngineClosedNull is the engine's whole per-request cost in a
// real closed-loop run (one client, the null target, YCSB C): Run for
// b.N * 1 µs of measured time, reported as ns per completed request. It
// covers what BenchmarkClosedLoopNull does plus the closed loop's own
// bookkeeping (the stall watch among it).
func BenchmarkEngineClosedNull(b *testing.B) {
	gen := benchGen(b)
	measure := max(time.Duration(b.N)*time.Microsecond, 100*time.Millisecond)
	cfg := load.Config{Model: "closed", Clients: 1, Timeout: time.Second, Measure: measure,
		Interval: 100 * time.Millisecond, Seed: 1, Ops: gen.Config().Ops()}
	res := benchRun(b, cfg, gen)
	if n := res.Measured.Completed; n > 0 {
		b.ReportMetric(float64(measure.Nanoseconds())/float64(n), "ns/req")
	}
}
