// Package ycsbtest holds what the tests and benchmarks of the YCSB
// targets (sqlite, postgres, mysql) share: populating a target through
// its clients' LoadBatch, and a benchmark of one client per operation
// type (docs/performance.md).
package ycsbtest

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Config is the benchmarks' workload: YCSB's default record of 10 fields
// of 100 bytes, 1000 records, uniform keys, reads of the whole record,
// updates of one field, scans of up to 10 records.
func Config() workload.Config {
	cfg, _ := workload.Preset("a")
	cfg.RecordCount = 1000
	cfg.RequestDistribution = workload.DistUniform
	cfg.ReadAllFields, cfg.WriteAllFields = true, false
	cfg.MaxScanLength = 10
	return cfg
}

// Populate prepares tg afresh for cfg and loads cfg's records through a
// client's LoadBatch, batch records at a time. It returns the generator
// (seed 1) the records came from.
func Populate(tb testing.TB, tg target.Target, cfg workload.Config, batch int) *workload.Generator {
	tb.Helper()
	ctx := context.Background()
	if err := tg.Prepare(ctx, cfg, true); err != nil {
		tb.Fatal(err)
	}
	g, err := workload.New(cfg, 1)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := tg.NewClient(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	ops := make([]*workload.Op, cfg.RecordCount)
	for i := range ops {
		ops[i] = g.NewOp()
		g.Populate(int64(i), ops[i])
	}
	for i := 0; i < len(ops); i += batch {
		if err := c.(target.Loader).LoadBatch(ctx, ops[i:min(i+batch, len(ops))]); err != nil {
			tb.Fatal(err)
		}
	}
	return g
}

// Bench populates tg with Config's records and runs one sub-benchmark
// per operation type, with one client issuing requests back to back.
// Besides time and allocations per request it reports the process's CPU
// time per request (cpu-µs/op): what the client costs a machine whose
// cores it shares with the server.
func Bench(b *testing.B, tg target.Target) {
	ctx := context.Background()
	cfg := Config()
	Populate(b, tg, cfg, 100)
	c, err := tg.NewClient(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	next := uint64(cfg.RecordCount) // inserts go on from earlier rounds
	for t := workload.OpType(0); t < workload.NumOpTypes; t++ {
		b.Run(t.String(), func(b *testing.B) {
			w := cfg
			w.Mix = [workload.NumOpTypes]float64{}
			w.Mix[t] = 1
			g, err := workload.New(w, 2)
			if err != nil {
				b.Fatal(err)
			}
			g.ContinueInserts(next)
			op := g.NewOp()
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for range b.N {
				g.Next(op)
				if err := c.Do(ctx, op); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			next = g.NextInsert()
		})
	}
}

// processCPU is the user and system time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
