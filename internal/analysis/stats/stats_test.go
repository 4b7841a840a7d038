package stats

import (
	"math"
	"testing"
)

func TestKnownValues(t *testing.T) {
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	if got := Mean(xs); got != 5 {
		t.Fatalf("mean = %v, want 5", got)
	}
	// Sample variance = 32/7.
	if got, want := StdDev(xs), math.Sqrt(32.0/7); math.Abs(got-want) > 1e-12 {
		t.Fatalf("sd = %v, want %v", got, want)
	}
	if got, want := StdErr(xs), math.Sqrt(32.0/7)/math.Sqrt(8); math.Abs(got-want) > 1e-12 {
		t.Fatalf("se = %v, want %v", got, want)
	}
	e := Summarize(xs)
	if e.N != 8 || e.Mean != 5 {
		t.Fatalf("estimate = %+v", e)
	}
}

func TestDegenerate(t *testing.T) {
	if !math.IsNaN(Mean(nil)) || !math.IsNaN(StdDev([]float64{1})) || !math.IsNaN(StdErr([]float64{1})) {
		t.Fatal("expected NaN for too few values")
	}
}
