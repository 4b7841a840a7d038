package stats

import (
	"math"
	"testing"
)

// The expected values were computed once with SciPy 1.x,
// scipy.stats.ttest_ind(a, b, equal_var=False) and its
// confidence_interval(0.90), and pasted here.
func TestWelchAgainstSciPy(t *testing.T) {
	for _, c := range []struct {
		name                 string
		a, b                 []float64
		t, p, df, lo90, hi90 float64
	}{
		// A noisy neighbour: tau 14.7 ms against 1.18 ms (issue 14).
		{"noisy", []float64{14.2, 15.1, 14.9, 14.6}, []float64{1.17, 1.19, 1.18, 1.20},
			68.9909072043045, 6.566742700413658e-06, 3.0065217314251758, 13.054394379049349, 13.975605620950649},
		{"spread", []float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10, 12},
			-2.3763541031440183, 0.04928433820673053, 6.972255729794934, -7.190961227994566, -0.8090387720054353},
		{"close", []float64{1.18, 1.21, 1.17, 1.19, 1.22}, []float64{1.20, 1.24, 1.19, 1.23, 1.25, 1.21, 1.22},
			-2.104268898751601, 0.06466939948368289, 8.999785478311857, -0.04864970300143522, -0.0033502969985648307},
	} {
		w, ok := WelchTest(c.a, c.b)
		if !ok {
			t.Fatalf("%s: undefined", c.name)
		}
		lo, hi := w.CI(0.90)
		for _, v := range []struct {
			what      string
			got, want float64
		}{{"t", w.T, c.t}, {"p", w.P, c.p}, {"df", w.DF, c.df}, {"CI low", lo, c.lo90}, {"CI high", hi, c.hi90}} {
			if math.Abs(v.got-v.want) > 1e-9*math.Max(1, math.Abs(v.want)) {
				t.Errorf("%s: %s = %.15g, SciPy says %.15g", c.name, v.what, v.got, v.want)
			}
		}
	}
}

func TestWelchUndefined(t *testing.T) {
	if _, ok := WelchTest([]float64{1}, []float64{1, 2}); ok {
		t.Error("one value on a side: want undefined")
	}
	w, ok := WelchTest([]float64{2, 2}, []float64{1, 1, 1})
	if ok || w.Diff != 1 {
		t.Errorf("no spread on either side: ok %v, diff %v; want undefined with the exact difference 1", ok, w.Diff)
	}
}
