package workload

import "testing"

// BenchmarkNext measures Next for YCSB workload A (50% read, 50% update of one
// 100-byte field, scrambled zipfian keys, hashed key names).
func BenchmarkNext(b *testing.B) {
	for _, name := range []string{"a", "d", "e"} {
		b.Run("workload_"+name, func(b *testing.B) {
			c, err := Preset(name)
			if err != nil {
				b.Fatal(err)
			}
			c.RecordCount = 1_000_000
			g, err := New(c, 1)
			if err != nil {
				b.Fatal(err)
			}
			op := g.NewOp()
			b.ReportAllocs()
			for b.Loop() {
				g.Next(op)
			}
		})
	}
}

// BenchmarkPopulate measures filling one 10 x 100 B load-phase record.
func BenchmarkPopulate(b *testing.B) {
	c, _ := Preset("a")
	g, err := New(c, 1)
	if err != nil {
		b.Fatal(err)
	}
	op := g.NewOp()
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		g.Populate(i%c.RecordCount, op)
		i++
	}
}
