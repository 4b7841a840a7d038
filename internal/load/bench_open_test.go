package load_test

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target/null"
	"github.com/headroom-dev/headroom/internal/workload"
)

// BenchmarkEngineOpenNull is the open loop's whole per-request cost in a
// real run against the null target (YCSB C, 4 slots, constant arrivals
// 5 µs apart: 200,000/s, which two cores keep): Run for b.N x 5 µs, so
// that one op is one intended request. Allocations per op are the hot
// path's (the run's fixed set-up is spread over b.N requests).
func BenchmarkEngineOpenNull(b *testing.B) {
	gen := benchGen(b)
	const gap = 5 * time.Microsecond
	measure := max(time.Duration(b.N)*gap, 100*time.Millisecond)
	cfg := load.Config{Model: "open", Schedule: &load.Constant{Rate: float64(time.Second / gap)}, MaxInFlight: 4,
		LateAfter: time.Millisecond, DropAfter: 100 * time.Millisecond, Timeout: time.Second,
		Measure: measure, Interval: 100 * time.Millisecond, Seed: 1, Ops: gen.Config().Ops()}
	res := benchRun(b, cfg, gen)
	m := res.Measured
	if n := m.Sent() + m.Dropped; n > 0 {
		b.ReportMetric(100*float64(m.Late+m.Dropped)/float64(n), "%late+dropped")
	}
}

// benchGen is the engine benchmarks' workload: YCSB C over 1,000 records.
func benchGen(b *testing.B) *workload.Generator {
	b.Helper()
	w, err := workload.Preset("c")
	if err != nil {
		b.Fatal(err)
	}
	w.RecordCount = 1000
	gen, err := workload.New(w, 1)
	if err != nil {
		b.Fatal(err)
	}
	return gen
}

// benchRun times one real run of cfg against the null target, counting
// its allocations.
func benchRun(b *testing.B, cfg load.Config, gen *workload.Generator) load.Result {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	res, err := load.Run(context.Background(), cfg, null.New(null.Options{}), gen, func(load.Tick) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	return res
}
