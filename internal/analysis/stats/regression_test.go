package stats

import (
	"math"
	"testing"
)

// x = 1..5, y = 2,4,5,4,5: x̄ = 3, ȳ = 4, Sxx = 10, Sxy = 6, Syy = 6, so
// b = 0.6, a = 2.2, r = 6/√60.
func TestRegressKnown(t *testing.T) {
	f, err := Regress([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 5, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	r := 6 / math.Sqrt(60)
	if f.N != 5 || math.Abs(f.Slope-0.6) > 1e-12 || math.Abs(f.Intercept-2.2) > 1e-12 ||
		math.Abs(f.R-r) > 1e-12 || math.Abs(f.R2-r*r) > 1e-12 {
		t.Fatalf("fit %+v; want a 2.2, b 0.6, r %v", f, r)
	}
}

// NaN and infinite pairs are skipped: the remaining points lie exactly on
// y = 1 - 2x, r = -1.
func TestRegressSkipsNaN(t *testing.T) {
	xs := []float64{0, 1, math.NaN(), 2, 3, math.Inf(1)}
	ys := []float64{1, -1, 7, -3, math.NaN(), 9}
	f, err := Regress(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	if f.N != 3 || math.Abs(f.Slope+2) > 1e-12 || math.Abs(f.Intercept-1) > 1e-12 || f.R != -1 || f.R2 != 1 {
		t.Fatalf("fit %+v; want y = 1 - 2x over 3 pairs, r = -1", f)
	}
	if p := Pearson(xs, ys); p != -1 {
		t.Fatalf("Pearson = %v", p)
	}
}

func TestRegressUndefined(t *testing.T) {
	if _, err := Regress([]float64{1, 2}, []float64{1}); err == nil {
		t.Fatal("different lengths must be an error")
	}
	if !math.IsNaN(Pearson([]float64{1, 2}, []float64{1})) {
		t.Fatal("Pearson of different lengths must be NaN")
	}
	f, _ := Regress([]float64{4}, []float64{1})
	if f.N != 1 || !math.IsNaN(f.Slope) || !math.IsNaN(f.R) {
		t.Fatalf("one pair: %+v", f)
	}
	f, _ = Regress([]float64{2, 2, 2}, []float64{1, 2, 3})
	if f.N != 3 || !math.IsNaN(f.Slope) || !math.IsNaN(f.Intercept) || !math.IsNaN(f.R) {
		t.Fatalf("constant x: %+v", f)
	}
	f, _ = Regress([]float64{1, 2, 3}, []float64{5, 5, 5})
	if f.Slope != 0 || f.Intercept != 5 || !math.IsNaN(f.R) || !math.IsNaN(f.R2) {
		t.Fatalf("constant y: %+v; want flat line at 5 and r NaN", f)
	}
}
