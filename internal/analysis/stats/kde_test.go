package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestKDEBandwidthKnownSample(t *testing.T) {
	// n = 8, mean 0, sum of squares 28: s = sqrt(28/7) = 2, n^(-1/3) = 1/2,
	// so h = cbrt(4) * 2 / 2 = cbrt(4) = 1.587401...
	xs := []float64{-3, -2, -1, 0, 0, 1, 2, 3}
	if h := KDEBandwidth(xs); math.Abs(h-1.5874010519681994) > 1e-12 {
		t.Fatalf("h = %.15f, want cbrt(4)", h)
	}
	// NaN values are ignored: the same sample with a NaN gives the same h.
	if h := KDEBandwidth(append(xs, math.NaN())); math.Abs(h-math.Cbrt(4)) > 1e-12 {
		t.Fatalf("h with a NaN = %v", h)
	}
	if h := KDEBandwidth([]float64{5, 5, 5}); h != 0 {
		t.Fatalf("constant sample: h = %v, want 0", h)
	}
	if h := KDEBandwidth([]float64{5}); !math.IsNaN(h) {
		t.Fatalf("one value: h = %v, want NaN", h)
	}
}

func TestKDEPointValues(t *testing.T) {
	// One point at 0 with h = 1 is the standard normal density.
	got := KDE([]float64{0}, 1, []float64{0, 1, -2})
	want := []float64{0.3989422804014327, 0.24197072451914337, 0.05399096651318806}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("g(%d) = %v, want %v", i, got[i], want[i])
		}
	}
	// Two points at 0 and 2 with h = 2, evaluated at 1: both at u = 1/2,
	// g = 1/(2*2) * 2 * phi(0.5) = phi(0.5)/2.
	phiHalf := math.Exp(-0.125) / math.Sqrt(2*math.Pi)
	if g := KDE([]float64{0, 2}, 2, []float64{1})[0]; math.Abs(g-phiHalf/2) > 1e-12 {
		t.Fatalf("g(1) = %v, want %v", g, phiHalf/2)
	}
}

func TestKDEIntegratesToOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 500)
	for i := range xs {
		// Bimodal, like an oscillating resource: half near 20%, half near 98%.
		if i%2 == 0 {
			xs[i] = 20 + 5*rng.NormFloat64()
		} else {
			xs[i] = 98 + rng.NormFloat64()
		}
	}
	h := KDEBandwidth(xs)
	grid := make([]float64, 0, 4001)
	for x := -100.0; x <= 300; x += 0.1 {
		grid = append(grid, x)
	}
	g := KDE(xs, h, grid)
	var area float64
	for i := 1; i < len(g); i++ {
		area += (g[i] + g[i-1]) / 2 * (grid[i] - grid[i-1])
	}
	if math.Abs(area-1) > 1e-6 {
		t.Fatalf("integral = %v, want 1", area)
	}
	// Both modes are visible: the density at 98 and at 20 is far above the
	// density in the gap at 60.
	m := KDE(xs, h, []float64{20, 60, 98})
	if !(m[0] > 10*m[1] && m[2] > 10*m[1]) {
		t.Fatalf("modes not resolved: g(20)=%v g(60)=%v g(98)=%v", m[0], m[1], m[2])
	}
}

func TestKDEUndefined(t *testing.T) {
	for _, c := range []struct {
		name   string
		sample []float64
		h      float64
	}{
		{"empty", nil, 1},
		{"only NaN", []float64{math.NaN()}, 1},
		{"h = 0", []float64{1, 2}, 0},
		{"h NaN", []float64{1, 2}, math.NaN()},
		{"h +Inf", []float64{1, 2}, math.Inf(1)},
	} {
		for _, v := range KDE(c.sample, c.h, []float64{0, 1}) {
			if !math.IsNaN(v) {
				t.Fatalf("%s: got %v, want NaN", c.name, v)
			}
		}
	}
}
