package load

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/workload"
)

// BenchmarkRecord is the engine's cost of recording one finished request:
// the worker's buffered append plus its share of merging into the interval
// histogram (docs/performance.md, figure c).
func BenchmarkRecord(b *testing.B) {
	c := newCollector(time.Second, 0, 1<<62, []workload.OpType{workload.Read, workload.Update}, newKindTable())
	h := c.newHandle()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.record(entry{end: int64(i) * 100, lat: int64(50 + i&1023), op: workload.OpType(i & 1), phase: Measure})
	}
}

type nullClient struct{}

func (nullClient) Do(context.Context, *workload.Op) error { return nil }
func (nullClient) Close() error                           { return nil }

// BenchmarkClosedLoopNull is the harness's whole per-request cost with one
// closed-loop client against a target that does nothing: operation
// generation (YCSB A, zipfian, 10 x 100 B), two clock reads, the call and
// the recording.
func BenchmarkClosedLoopNull(b *testing.B) {
	cfg, _ := workload.Preset("a")
	g, _ := workload.New(cfg, 1)
	run := &run{cfg: Config{Timeout: time.Minute}, col: newCollector(time.Second, 0, 1<<62, []workload.OpType{workload.Read, workload.Update}, newKindTable()), kinds: newKindTable(), ctx: context.Background(), t0: time.Now(), end: 1 << 62}
	w := &worker{run: run, client: nullClient{}, op: g.NewOp(), gen: g, keys: g}
	w.rec = run.col.newHandle()
	w.resetCtx()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.gen.Next(w.op)
		now := run.since()
		w.do(now, now, Measure, 0)
	}
}

// BenchmarkScheduleNext is the cost of one intended start time from each
// arrival schedule, read under the engine's arrivals lock for every
// request; none may allocate.
func BenchmarkScheduleNext(b *testing.B) {
	steps := []Step{{1e6, time.Second}, {0, time.Second}, {3e6, time.Hour}}
	var points []TracePoint
	for i := range 3600 {
		points = append(points, TracePoint{At: time.Duration(i) * time.Second, Rate: float64(1e6 + i%7*1e5)})
	}
	for _, c := range []struct {
		name string
		new  func() Schedule
	}{
		{"constant", func() Schedule { return &Constant{Rate: 1e6} }},
		{"poisson", func() Schedule { return &Poisson{Rate: 1e6, Seed: 1} }},
		{"steps", func() Schedule { return &Steps{Spacing: Exponential, Seed: 1, Steps: steps} }},
		{"trace", func() Schedule { return &Trace{Spacing: Even, Points: points} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := c.new()
			s.Next() // builds the segments once
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Next()
			}
		})
	}
}
