package workload

import "testing"

// BenchmarkNext measures Next for YCSB workload A as preset: 50% reads, 50%
// updates of one 100-byte field, scrambled zipfian keys over 1000 records,
// hashed key names.
func BenchmarkNext(b *testing.B) {
	c, _ := Preset("a")
	g := mustNew(b, c, 1)
	op := g.NewOp()
	b.ReportAllocs()
	for b.Loop() {
		g.Next(op)
	}
}

// BenchmarkNextPreset measures Next for every core workload over 10^6 records.
func BenchmarkNextPreset(b *testing.B) {
	for _, name := range PresetNames() {
		b.Run(name, func(b *testing.B) {
			c, _ := Preset(name)
			c.RecordCount = 1_000_000
			g := mustNew(b, c, 1)
			op := g.NewOp()
			for b.Loop() {
				g.Next(op)
			}
		})
	}
}

// BenchmarkNextDistribution measures Next for workload A's mix under each
// request distribution over 10^6 records.
func BenchmarkNextDistribution(b *testing.B) {
	for _, d := range RequestDistributions() {
		b.Run(d, func(b *testing.B) {
			c, _ := Preset("a")
			c.RecordCount = 1_000_000
			c.RequestDistribution = d
			g := mustNew(b, c, 1)
			op := g.NewOp()
			for b.Loop() {
				g.Next(op)
			}
		})
	}
}

// BenchmarkPopulate measures filling one load-phase record of 10 x 100 B.
func BenchmarkPopulate(b *testing.B) {
	c, _ := Preset("a")
	g := mustNew(b, c, 1)
	op := g.NewOp()
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		g.Populate(i%c.RecordCount, op)
		i++
	}
}
