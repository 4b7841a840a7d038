package cpuref

import (
	"math"
	"testing"
)

// The score is the geometric mean of the parts' ratios to the reference,
// each part the median of its tries: checked against the same arithmetic
// done here from the part scores the measurement reports.
func TestScoreIsTheGeometricMeanOfThePartScores(t *testing.T) {
	m, err := Measure(Options{Tries: 3})
	if err != nil {
		t.Fatal(err)
	}
	prod := 1.0
	for _, p := range Parts {
		s, ok := m.PartScores[p.Name]
		if !ok || !(s > 0) || math.IsInf(s, 0) {
			t.Fatalf("part %s: score %v", p.Name, s)
		}
		prod *= s
	}
	want := math.Pow(prod, 1/float64(len(Parts)))
	if math.Abs(m.Score-want) > 1e-9*want {
		t.Fatalf("score %v, geometric mean of parts %v", m.Score, want)
	}
	if m.Tries != 3 || m.Cores < 1 || m.Spread < 0 || m.CPUShare <= 0 || m.CPUShare > 1 || m.OthersCores < 0 {
		t.Fatalf("implausible measurement: %+v", m)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestReadStat(t *testing.T) {
	c, ok := readStat()
	if !ok {
		t.Skip("no /proc/stat")
	}
	if !(c.total() > 0) || c.busy() > c.total() {
		t.Fatalf("implausible /proc/stat: %+v", c)
	}
}
