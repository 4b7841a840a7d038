package stats

import (
	"math"
	"testing"
)

// Two-sided critical values from the standard t table (e.g. NIST/SEMATECH
// e-Handbook Table 1.3.6.7.2), to the six decimals the table prints.
func TestTCriticalTable(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		df, level, want float64
	}{
		{1, 0.95, 12.706205}, {2, 0.95, 4.302653}, {5, 0.95, 2.570582},
		{10, 0.95, 2.228139}, {30, 0.95, 2.042272}, {inf, 0.95, 1.959964},
		{1, 0.99, 63.656741}, {2, 0.99, 9.924843}, {5, 0.99, 4.032143},
		{10, 0.99, 3.169273}, {30, 0.99, 2.749996}, {inf, 0.99, 2.575829},
		{19, 0.95, 2.093024}, {100, 0.95, 1.983972}, {1000, 0.95, 1.962339},
	}
	for _, c := range cases {
		if got := TCritical(c.level, c.df); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("t(df=%v, %v%%) = %.7f, want %.6f", c.df, 100*c.level, got, c.want)
		}
	}
}

// df = 1 (Cauchy) and df = 2 have closed-form quantiles:
// tan(π(p-½)) and (2p-1)/√(2p(1-p)).
func TestTQuantileClosedForms(t *testing.T) {
	for _, p := range []float64{0.001, 0.1, 0.3, 0.5, 0.6, 0.9, 0.975, 0.999, 0.99999} {
		want1 := math.Tan(math.Pi * (p - 0.5))
		want2 := (2*p - 1) / math.Sqrt(2*p*(1-p))
		if got := TQuantile(p, 1); math.Abs(got-want1) > 1e-9*math.Max(1, math.Abs(want1)) {
			t.Errorf("df=1 p=%v: %v, want %v", p, got, want1)
		}
		if got := TQuantile(p, 2); math.Abs(got-want2) > 1e-9*math.Max(1, math.Abs(want2)) {
			t.Errorf("df=2 p=%v: %v, want %v", p, got, want2)
		}
	}
}

func TestTQuantileDomain(t *testing.T) {
	for _, c := range [][2]float64{{0, 5}, {1, 5}, {-0.1, 5}, {math.NaN(), 5}, {0.9, 0}, {0.9, -1}, {0.9, math.NaN()}} {
		if got := TQuantile(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("TQuantile(%v, %v) = %v, want NaN", c[0], c[1], got)
		}
	}
	if !math.IsNaN(TCritical(1, 5)) || !math.IsNaN(TCritical(0, 5)) {
		t.Error("a confidence level outside (0, 1) must give NaN")
	}
	// Fractional df lies between its integer neighbours.
	if q := TCritical(0.95, 2.5); !(q < 4.302653 && q > 3.182446) {
		t.Errorf("t(df=2.5) = %v, want between t(3) and t(2)", q)
	}
}

func TestRegIncBetaIdentities(t *testing.T) {
	for _, x := range []float64{0.01, 0.2, 0.5, 0.77, 0.99} {
		checks := []struct {
			name      string
			got, want float64
		}{
			{"I_x(1,1) = x", RegIncBeta(x, 1, 1), x},
			{"I_x(3,1) = x^3", RegIncBeta(x, 3, 1), x * x * x},
			{"I_x(1,4) = 1-(1-x)^4", RegIncBeta(x, 1, 4), 1 - math.Pow(1-x, 4)},
			// I_x(2,2) = 3x² - 2x³
			{"I_x(2,2)", RegIncBeta(x, 2, 2), 3*x*x - 2*x*x*x},
			{"symmetry", RegIncBeta(x, 2.5, 7) + RegIncBeta(1-x, 7, 2.5), 1},
		}
		for _, c := range checks {
			if math.Abs(c.got-c.want) > 1e-12 {
				t.Errorf("x=%v %s: %v, want %v", x, c.name, c.got, c.want)
			}
		}
	}
	if got := RegIncBeta(0.5, 40, 40); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("I_0.5(a,a) = %v, want 0.5", got)
	}
	if !math.IsNaN(RegIncBeta(1.5, 1, 1)) || !math.IsNaN(RegIncBeta(0.5, 0, 1)) {
		t.Error("out-of-domain arguments must give NaN")
	}
}

// xs = 10, 12, 14: mean 12, s = 2, SE = 2/√3; 95% t with 2 df = 4.302653,
// so the half-width is 4.302653·2/√3 = 4.968275.
func TestCI(t *testing.T) {
	m, h := CI([]float64{10, 12, 14}, 0.95)
	if m != 12 || math.Abs(h-4.968275) > 1e-6 {
		t.Fatalf("CI = %v ± %v, want 12 ± 4.968275", m, h)
	}
	if e := Summarize([]float64{10, 12, 14}); math.Abs(e.HalfWidth(0.95)-h) > 1e-12 {
		t.Fatalf("Estimate.HalfWidth %v differs from CI %v", e.HalfWidth(0.95), h)
	}
	if m, h := CI([]float64{7}, 0.95); m != 7 || !math.IsNaN(h) {
		t.Fatalf("one value: %v ± %v, want 7 ± NaN", m, h)
	}
	if m, h := CI(nil, 0.95); !math.IsNaN(m) || !math.IsNaN(h) {
		t.Fatalf("no values: %v ± %v, want NaN", m, h)
	}
}
