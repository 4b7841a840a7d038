package forecast

import (
	"math"
	"math/cmplx"
	"math/rand"
	"testing"
)

func TestFFTMatchesTheDefinition(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{1, 2, 8, 12, 375, 600} { // 375 = 3·5³ takes the direct path
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.Float64(), rng.Float64())
		}
		X := FFT(x)
		for k := 0; k < n; k++ {
			var want complex128
			for j := 0; j < n; j++ {
				want += x[j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j)*float64(k)/float64(n)))
			}
			if cmplx.Abs(X[k]-want) > 1e-8*float64(n) {
				t.Fatalf("n=%d k=%d: %v, want %v", n, k, X[k], want)
			}
		}
	}
}

// seasonal is 200 + 50·cos(2π·i/120 + 0.3) + 20·cos(2π·i/40 − 1): bins 5
// and 15 of a 600-sample history.
func seasonal(i int) float64 {
	x := float64(i)
	return 200 + 50*math.Cos(2*math.Pi*x/120+0.3) + 20*math.Cos(2*math.Pi*x/40-1)
}

func TestRecoversKnownComponents(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const n = 600
	s := make([]float64, n)
	for i := range s {
		s[i] = seasonal(i) + (rng.Float64()*2-1)*3 // uniform noise ±3 req/s
	}
	m := Default().Fit(s)
	if m.Short || len(m.Components) != 2 {
		t.Fatalf("components %+v, want exactly the two seasonal ones (noise is below 10%% of the largest)", m.Components)
	}
	want := []Component{{Bin: 5, Period: 120, Amplitude: 50, Phase: 0.3}, {Bin: 15, Period: 40, Amplitude: 20, Phase: -1}}
	for i, w := range want {
		g := m.Components[i]
		// Tolerances: noise ±3 spread over 600 samples moves an amplitude
		// by well under 1 and a phase by under 0.05 rad.
		if g.Bin != w.Bin || g.Period != w.Period || math.Abs(g.Amplitude-w.Amplitude) > 1 || math.Abs(g.Phase-w.Phase) > 0.05 {
			t.Errorf("component %d: %+v, want %+v", i, g, w)
		}
	}
	if math.Abs(m.Mean-200) > 0.5 {
		t.Errorf("mean %v, want 200 ± 0.5", m.Mean)
	}
	// Forecast error bound: over the next 120 s the forecast stays within
	// 2 req/s of the noise-free series.
	for h := 1; h <= 120; h++ {
		if d := math.Abs(m.At(h) - seasonal(n-1+h)); d > 2 {
			t.Fatalf("h=%d: forecast %v, truth %v (error %v > 2)", h, m.At(h), seasonal(n-1+h), d)
		}
	}
	// The peak over a horizon is the largest true value there, within the bound.
	var truePeak float64
	for h := 1; h <= 30; h++ {
		truePeak = math.Max(truePeak, seasonal(n-1+h))
	}
	if p := m.Peak(30); math.Abs(p-truePeak) > 2 {
		t.Errorf("peak over 30 s %v, truth %v", p, truePeak)
	}
}

func TestVectorAndShortHistory(t *testing.T) {
	c := Default()
	read := make([]float64, 240)
	write := make([]float64, 240)
	for i := range read {
		read[i] = 100 + 40*math.Sin(2*math.Pi*float64(i)/60)
		write[i] = 25
	}
	v := c.Vector(map[string][]float64{"read": read, "write": write, "scan": {7, 9}}, 16)
	// read peaks at 140 at sample 255 (255 mod 60 = 15, a quarter period), the 16th ahead.
	if math.Abs(v["read"]-140) > 1e-6 || math.Abs(v["write"]-25) > 1e-9 || v["scan"] != 9 {
		t.Fatalf("vector %v, want read 140, write 25, scan 9 (short history: last value)", v)
	}
	if m := c.Fit(nil); m.At(1) != 0 {
		t.Fatal("an empty history forecasts 0")
	}
	// A throughput forecast is never negative.
	neg := make([]float64, 120)
	for i := range neg {
		neg[i] = 10 + 50*math.Cos(2*math.Pi*float64(i)/60)
	}
	for h := 1; h <= 60; h++ {
		if c.Fit(neg).At(h) < 0 {
			t.Fatal("negative forecast")
		}
	}
}
