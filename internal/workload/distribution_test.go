package workload

import (
	"math"
	"testing"
)

// readOnly returns a read-only Config over n records with distribution d.
func readOnly(n int64, d string) Config {
	c := Config{RecordCount: n, FieldCount: 1, FieldLength: 1, RequestDistribution: d,
		ZipfianConstant: 0.99, HotspotDataFraction: 0.2, HotspotOpnFraction: 0.8, ReadAllFields: true}
	c.Mix[Read] = 1
	return c
}

// keyCounts draws n operations from g and counts their key numbers (which
// must be below cells).
func keyCounts(t *testing.T, g *Generator, n, cells int) []int64 {
	t.Helper()
	counts := make([]int64, cells)
	op := g.NewOp()
	for range n {
		g.Next(op)
		if op.KeyNum >= uint64(cells) {
			t.Fatalf("key %d out of range [0, %d)", op.KeyNum, cells)
		}
		counts[op.KeyNum]++
	}
	return counts
}

func mustNew(t testing.TB, c Config, seed uint64) *Generator {
	t.Helper()
	g, err := New(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestUniformKeys(t *testing.T) {
	for _, n := range []int64{1, 7, 1000} {
		g := mustNew(t, readOnly(n, DistUniform), 1)
		counts := keyCounts(t, g, 300_000, int(n))
		if n == 1 {
			continue
		}
		p := make([]float64, n)
		for k := range p {
			p[k] = 1 / float64(n)
		}
		checkFit(t, "uniform keys", counts, p)
	}
}

// TestHotspotKeys: 80% of operations go to the first 20% of keys, uniformly
// within the hot and the cold set.
func TestHotspotKeys(t *testing.T) {
	const n, draws = 1000, 500_000
	g := mustNew(t, readOnly(n, DistHotspot), 2)
	counts := keyCounts(t, g, draws, n)
	var hot int64
	for k := range 200 {
		hot += counts[k]
	}
	if f := float64(hot) / draws; math.Abs(f-0.8) > 5*math.Sqrt(0.8*0.2/draws) {
		t.Errorf("fraction of operations on the hot set %.4f, want 0.8", f)
	}
	checkFit(t, "hot set uniform", counts[:200], uniformPMF(200))
	checkFit(t, "cold set uniform", counts[200:], uniformPMF(800))
	p := make([]float64, n)
	for k := range p {
		if k < 200 {
			p[k] = 0.8 / 200
		} else {
			p[k] = 0.2 / 800
		}
	}
	checkFit(t, "hotspot keys", counts, p)
}

// TestHotspotDegenerate: an empty hot or cold set is allowed.
func TestHotspotDegenerate(t *testing.T) {
	for _, c := range []struct{ data, opn float64 }{{0, 0.8}, {1, 0.8}, {0.2, 0}, {0.2, 1}} {
		cfg := readOnly(100, DistHotspot)
		cfg.HotspotDataFraction, cfg.HotspotOpnFraction = c.data, c.opn
		g := mustNew(t, cfg, 3)
		counts := keyCounts(t, g, 10_000, 100)
		var hot int64
		for k := range int(100 * c.data) {
			hot += counts[k]
		}
		switch {
		case c.data == 0 && hot != 0, c.data == 1 && hot != 10_000:
			t.Errorf("data %v: %d hot draws", c.data, hot)
		case c.data == 0.2 && c.opn == 0 && hot != 0, c.data == 0.2 && c.opn == 1 && hot != 10_000:
			t.Errorf("opn %v: %d hot draws", c.opn, hot)
		}
	}
}

func uniformPMF(n int) []float64 {
	p := make([]float64, n)
	for k := range p {
		p[k] = 1 / float64(n)
	}
	return p
}

// TestSequentialKeys: 0, 1, 2, ... wrapping at RecordCount, continued across
// forks.
func TestSequentialKeys(t *testing.T) {
	g := mustNew(t, readOnly(5, DistSequential), 4)
	f := g.Fork(1)
	op := g.NewOp()
	want := []uint64{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1}
	for i, w := range want {
		if i%3 == 2 {
			f.Next(op)
		} else {
			g.Next(op)
		}
		if op.KeyNum != w {
			t.Fatalf("draw %d: key %d, want %d", i, op.KeyNum, w)
		}
	}
}

// TestLatestKeys: after 500 run-phase inserts beyond 1000 records (made
// by a fork), the newest key is the most frequent and the recency rank
// newest - key follows the zipfian over all 1500 keys, and the key space
// keeps following the inserts.
func TestLatestKeys(t *testing.T) {
	const n, inserted, draws = 1000, 500, 300_000
	c := readOnly(n, DistLatest)
	c.Mix[Insert] = 1 // read 50%, insert 50%
	g := mustNew(t, c, 5)
	f := g.Fork(9)
	op := g.NewOp()
	for ins := 0; ins < inserted; {
		f.Next(op)
		if op.Type == Insert {
			f.Acknowledge(op.KeyNum) // as the engine does when the insert finishes
			ins++
		}
	}
	last := uint64(n + inserted - 1)
	if got := g.shared.nextInsert.Load() - 1; got != last {
		t.Fatalf("last inserted key %d, want %d", got, last)
	}
	// Draw keys as Next does for reads, without inserting more.
	counts := make([]int64, last+1)
	for range draws {
		k := g.nextKey()
		if k > last {
			t.Fatalf("key %d above the newest %d", k, last)
		}
		counts[last-k]++
	}
	for r := 1; r < len(counts); r++ {
		if counts[r] > counts[0] {
			t.Fatalf("recency rank %d drawn %d times, more than the newest key (%d)", r, counts[r], counts[0])
		}
	}
	z := newZipfian(last+1, 0.99, newZetaTable(0.99).zeta(last+1))
	checkFit(t, "latest recency ranks", counts, grayPMF(&z, int(last+1)))

	// One more insert moves the most popular key to the new record.
	for op.Type != Insert {
		g.Next(op)
	}
	g.Acknowledge(op.KeyNum)
	var newest int
	for range 10_000 {
		if g.nextKey() == op.KeyNum {
			newest++
		}
	}
	if want := 10_000 / z.zetan; math.Abs(float64(newest)-want) > 5*math.Sqrt(want) {
		t.Errorf("new record %d drawn %d times in 10000, want about %.0f", op.KeyNum, newest, want)
	}
}

// TestScanLengths: uniform over [1, MaxScanLength], or 1 + a zipfian rank.
func TestScanLengths(t *testing.T) {
	for _, d := range []string{DistUniform, DistZipfian} {
		c, _ := Preset("e")
		c.Mix[Insert] = 0
		c.ScanLengthDistribution = d
		g := mustNew(t, c, 6)
		op := g.NewOp()
		counts := make([]int64, c.MaxScanLength)
		for range 200_000 {
			g.Next(op)
			if op.Type != Scan || op.ScanLength < 1 || op.ScanLength > c.MaxScanLength {
				t.Fatalf("%s: %v with scan length %d", d, op.Type, op.ScanLength)
			}
			counts[op.ScanLength-1]++
		}
		if d == DistUniform {
			checkFit(t, "uniform scan lengths", counts, uniformPMF(c.MaxScanLength))
		} else {
			z := newZipfian(uint64(c.MaxScanLength), 0.99, newZetaTable(0.99).zeta(uint64(c.MaxScanLength)))
			checkFit(t, "zipfian scan lengths", counts, grayPMF(&z, c.MaxScanLength))
		}
	}
}

// TestKeysInRange: every distribution keeps keys below RecordCount (latest:
// at most the newest key), also for tiny and huge key spaces.
func TestKeysInRange(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 1 << 40} {
		for _, d := range RequestDistributions() {
			g := mustNew(t, readOnly(n, d), 1)
			op := g.NewOp()
			for range 5000 {
				g.Next(op)
				if op.KeyNum >= uint64(n) {
					t.Fatalf("%s over %d keys: key %d", d, n, op.KeyNum)
				}
			}
		}
	}
}

// "latest" never picks a record whose insert has not finished, nor one
// above an insert still outstanding; once the gap closes, it does.
func TestLatestWaitsForAcknowledgedInserts(t *testing.T) {
	c := readOnly(100, DistLatest)
	c.Mix[Insert] = 1
	g := mustNew(t, c, 3)
	op := g.NewOp()
	var inserts []uint64
	for len(inserts) < 3 {
		g.Next(op)
		if op.Type == Insert {
			inserts = append(inserts, op.KeyNum)
		}
	}
	g.Acknowledge(inserts[1]) // 101 done, 100 still outstanding
	g.Acknowledge(inserts[2])
	for range 20_000 {
		if k := g.nextKey(); k >= 100 {
			t.Fatalf("picked key %d while the insert of key 100 is outstanding", k)
		}
	}
	g.Acknowledge(inserts[0])
	seen := false
	for range 20_000 {
		k := g.nextKey()
		if k > 102 {
			t.Fatalf("picked key %d beyond the inserted ones", k)
		}
		seen = seen || k == 102
	}
	if !seen {
		t.Fatal("the newest acknowledged key was never picked")
	}
}
