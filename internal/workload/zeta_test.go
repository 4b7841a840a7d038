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

// TestZetaLargeNIsFast guards the promise that New is O(1) in RecordCount:
// it builds a latest-distribution generator (whose zipfian spans all 2^50
// records) with a theta that has no precomputed constant.
func TestZetaLargeNIsFast(t *testing.T) {
	c, _ := Preset("d")
	c.RecordCount = 1 << 50
	c.ZipfianConstant = 0.7
	start := time.Now()
	for range 10 {
		if _, err := New(c, 1); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start) / 10; d > 20*time.Millisecond {
		t.Errorf("New with 2^50 records takes %v", d)
	}
}
