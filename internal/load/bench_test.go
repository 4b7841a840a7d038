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
