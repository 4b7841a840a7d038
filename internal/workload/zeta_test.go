package workload

import (
	"math"
	"testing"
	"time"
)

// TestZetaMatchesDirectSum compares zetaTable (exact head plus
// Euler–Maclaurin tail) with direct summation.
func TestZetaMatchesDirectSum(t *testing.T) {
	for _, theta := range []float64{0.1, 0.5, 0.9, 0.99} {
		zt := newZetaTable(theta)
		sum := 0.0
		next := 0
		for _, n := range []int{1, 2, 3, 100, zetaHead, zetaHead + 1, zetaHead + 2, 1000, 12345, 1_000_000} {
			for ; next < n; next++ {
				sum += math.Pow(float64(next+1), -theta)
			}
			got := zt.zeta(uint64(n))
			if rel := math.Abs(got-sum) / sum; rel > 1e-12 {
				t.Errorf("zeta(%d, %v) = %.17g, direct sum %.17g (relative error %.2g)", n, theta, got, sum, rel)
			}
		}
	}
}

// TestZetaYCSBConstant checks YCSB's precomputed zeta(10^10, 0.99), which
// New uses verbatim, against the Euler–Maclaurin value.
func TestZetaYCSBConstant(t *testing.T) {
	got := newZetaTable(0.99).zeta(scrambledItems)
	if rel := math.Abs(got-ycsbZeta10G) / ycsbZeta10G; rel > 1e-10 {
		t.Errorf("zeta(1e10, 0.99) = %.17g, YCSB's constant %.17g (relative difference %.2g)", got, ycsbZeta10G, rel)
	}
}

// largeN is New's set-up over 2^50 records with a theta that has no
// precomputed constant: a latest-distribution generator, whose zipfian spans
// every record.
func largeN(records int64) Config {
	c, _ := Preset("d")
	c.RecordCount = records
	c.ZipfianConstant = 0.7
	return c
}

// TestZetaLargeNIsConstantCost guards the promise that New is O(1) in
// RecordCount. Its allocations do not grow with the record count, and its
// time is judged against summing directTerms terms of the same zeta directly
// on this machine: a set-up that summed its 2^50 terms, or even their
// square root, could not come near that; a constant-cost one is far below
// it on any machine.
func TestZetaLargeNIsConstantCost(t *testing.T) {
	small, large := largeN(1<<10), largeN(1<<50)
	newOf := func(c Config) func() {
		return func() {
			if _, err := New(c, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a, b := testing.AllocsPerRun(20, newOf(small)), testing.AllocsPerRun(20, newOf(large)); b != a {
		t.Errorf("New allocates %v times with 2^10 records and %v with 2^50", a, b)
	}

	const directTerms = 1 << 16
	setup := time.Duration(math.MaxInt64)
	for range 5 { // the fastest of a few, so that a preemption does not count
		start := time.Now()
		newOf(large)()
		setup = min(setup, time.Since(start))
	}
	start := time.Now()
	sum := 0.0
	for i := 1; i <= directTerms; i++ {
		sum += math.Pow(float64(i), -large.ZipfianConstant)
	}
	direct := time.Since(start)
	// The sum is checked, which also keeps it from being optimised away.
	if got := newZetaTable(large.ZipfianConstant).zeta(directTerms); math.Abs(got-sum)/sum > 1e-12 {
		t.Fatalf("zeta(%d) = %v, direct sum %v", directTerms, got, sum)
	}
	if setup >= direct {
		t.Errorf("New with 2^50 records takes %v, as long as summing %d terms directly here (%v)", setup, directTerms, direct)
	}
}

// BenchmarkNewLargeRecordCount measures New's set-up over 2^50 records.
func BenchmarkNewLargeRecordCount(b *testing.B) {
	c := largeN(1 << 50)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(c, 1); err != nil {
			b.Fatal(err)
		}
	}
}
