package bottleneck

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

func TestDensity(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	// Level 100: normal around 40. Level 200: bimodal, like 003's
	// oscillating database CPU (half near 20, half near 98). Level 300:
	// pinned at 100 (bandwidth 0 -> the floor). Level 400: no values.
	var normal, bimodal, pinned []float64
	for i := range 400 {
		normal = append(normal, 40+5*rng.NormFloat64())
		if i%2 == 0 {
			bimodal = append(bimodal, 20+5*rng.NormFloat64())
		} else {
			bimodal = append(bimodal, math.Min(100, 98+rng.NormFloat64()))
		}
		pinned = append(pinned, 100)
	}
	m, err := Density("db1/cpu", []LevelValues{{300, pinned}, {100, normal}, {200, bimodal}, {400, nil}}, DensityConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Util) != 101 || m.Util[0] != 0 || m.Util[100] != 100 || len(m.Levels) != 4 || m.Levels[0] != 100 || m.Levels[3] != 400 {
		t.Fatalf("grid %v levels %v", m.Util, m.Levels)
	}
	if m.Bandwidth[0] != stats.KDEBandwidth(normal) || m.Bandwidth[2] != 1 || m.N[0] != 400 || m.N[3] != 0 {
		t.Fatalf("bandwidth %v n %v", m.Bandwidth, m.N)
	}
	argmax := func(row []float64) int {
		best := 0
		for i, v := range row {
			if v > row[best] {
				best = i
			}
		}
		return best
	}
	if a := argmax(m.Density[0]); a < 38 || a > 42 {
		t.Fatalf("normal peak at %d", a)
	}
	// Bimodal: both modes stand above the gap at 60.
	if b := m.Density[1]; !(b[20] > 10*b[60] && b[98] > 10*b[60]) {
		t.Fatalf("bimodal: g(20)=%v g(60)=%v g(98)=%v", b[20], b[60], b[98])
	}
	// Mass on the grid (trapezoid rule): about 1 for the normal level,
	// about half for the pinned level (its kernel's upper half is past 100).
	sum := func(row []float64) float64 {
		var s float64
		for i := 1; i < len(row); i++ {
			s += (row[i] + row[i-1]) / 2
		}
		return s
	}
	if s := sum(m.Density[0]); math.Abs(s-1) > 0.01 {
		t.Fatalf("normal row sums to %v", s)
	}
	if s := sum(m.Density[2]); math.Abs(s-0.5) > 0.01 || argmax(m.Density[2]) != 100 {
		t.Fatalf("pinned row sums to %v, peak %d", s, argmax(m.Density[2]))
	}
	for _, v := range m.Density[3] {
		if !math.IsNaN(v) {
			t.Fatal("a level without values must be NaN")
		}
	}
	if _, err := Density("x", []LevelValues{{1, nil}, {1, nil}}, DensityConfig{}); err == nil || !strings.Contains(err.Error(), "level 1 of x is given twice") {
		t.Fatalf("duplicate level: %v", err)
	}
	if _, err := Density("x", nil, DensityConfig{Step: -1}); err == nil {
		t.Fatal("negative step accepted")
	}
	m, _ = Density("x", nil, DensityConfig{Step: 5})
	if len(m.Util) != 21 || m.Util[20] != 100 {
		t.Fatalf("step 5 grid %v", m.Util)
	}
}
