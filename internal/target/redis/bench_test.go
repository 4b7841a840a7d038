package redistarget

import (
	"context"
	"syscall"
	"testing"

	"github.com/headroom-dev/headroom/internal/workload"
)

// benchClient opens a managed Redis holding 1000 YCSB records (10 fields
// of 100 bytes; mode string: one value of 100 bytes) and returns a client
// and a generator of the workload.
func benchClient(b *testing.B, mode string, mix map[workload.OpType]float64) (*client, *workload.Generator) {
	m := openManaged(b, func(o *Options) { o.Mode = mode })
	cfg := workload.Config{RecordCount: 1000, FieldCount: 10, FieldLength: 100, RequestDistribution: workload.DistUniform,
		MaxScanLength: 10, ReadAllFields: true}
	if mode == modeString {
		cfg.FieldCount = 1
	}
	for t, w := range mix {
		cfg.Mix[t] = w
	}
	ctx := context.Background()
	if err := m.Prepare(ctx, cfg, true); err != nil {
		b.Fatal(err)
	}
	gen, err := workload.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	tc, _ := m.NewClient(ctx)
	c := tc.(*client)
	batch := make([]*workload.Op, 100)
	for i := range batch {
		batch[i] = gen.NewOp()
	}
	for start := int64(0); start < cfg.RecordCount; start += 100 {
		for j, op := range batch {
			gen.Populate(start+int64(j), op)
		}
		if err := c.LoadBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	return c, gen
}

// benchOps runs b.N operations of the mix through one client. The figure
// includes the round trip to the server on loopback; allocations are the
// client's and go-redis's.
func benchOps(b *testing.B, mode string, mix map[workload.OpType]float64) {
	c, gen := benchClient(b, mode, mix)
	op := gen.NewOp()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		gen.Next(op)
		if err := c.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadHash(b *testing.B) {
	benchOps(b, modeHash, map[workload.OpType]float64{workload.Read: 1})
}

func BenchmarkUpdateHash(b *testing.B) {
	benchOps(b, modeHash, map[workload.OpType]float64{workload.Update: 1})
}

func BenchmarkInsertHash(b *testing.B) {
	benchOps(b, modeHash, map[workload.OpType]float64{workload.Insert: 1})
}

func BenchmarkScanHash(b *testing.B) {
	benchOps(b, modeHash, map[workload.OpType]float64{workload.Scan: 1})
}

func BenchmarkGetString(b *testing.B) {
	benchOps(b, modeString, map[workload.OpType]float64{workload.Read: 1})
}

func BenchmarkSetString(b *testing.B) {
	benchOps(b, modeString, map[workload.OpType]float64{workload.Update: 1})
}

// BenchmarkGetStringParallel is GET from 16 clients at once, as the closed
// loop's request slots issue them.
func BenchmarkGetStringParallel(b *testing.B) {
	c0, _ := benchClient(b, modeString, map[workload.OpType]float64{workload.Read: 1})
	b.SetParallelism(8) // x GOMAXPROCS goroutines
	b.ReportAllocs()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		tc, _ := c0.t.NewClient(context.Background())
		c := tc.(*client)
		gen, _ := workload.New(workload.Config{RecordCount: 1000, FieldCount: 1, FieldLength: 100, RequestDistribution: workload.DistUniform, Mix: [workload.NumOpTypes]float64{1}}, 2)
		op := gen.NewOp()
		ctx := context.Background()
		for pb.Next() {
			gen.Next(op)
			if err := c.Do(ctx, op); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user and system CPU time of this process so far, in
// nanoseconds (the server's is not included).
func processCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
