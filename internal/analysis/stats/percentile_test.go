package stats

import (
	"math"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Values below 2048 are exact at 3 significant digits, so percentiles of
// 1..200 split over two histograms are the textbook ranks.
func TestMergePercentile(t *testing.T) {
	a := hdrhistogram.New(1, 60_000_000, 3)
	b := hdrhistogram.New(1, 60_000_000, 3)
	for v := int64(1); v <= 100; v++ {
		_ = a.RecordValue(v)
		_ = b.RecordValue(v + 100)
	}
	m := Merge([]*hdrhistogram.Histogram{a, nil, b})
	if m.TotalCount() != 200 || a.TotalCount() != 100 || b.TotalCount() != 100 {
		t.Fatalf("merged %d values; inputs now %d and %d", m.TotalCount(), a.TotalCount(), b.TotalCount())
	}
	for _, c := range [][2]float64{{50, 100}, {99, 198}, {100, 200}, {0, 1}, {25, 50}} {
		if got := Percentile(m, c[0]); got != c[1] {
			t.Errorf("p%v = %v, want %v", c[0], got, c[1])
		}
	}
	if got := MergedPercentile([]*hdrhistogram.Histogram{a, b}, 75); got != 150 {
		t.Errorf("merged p75 = %v, want 150", got)
	}
}

// A histogram with a narrower range does not clip the merge: 5 s recorded
// in a wide histogram survives next to a 2-digit, 1 s-range one.
func TestMergeWidensGeometry(t *testing.T) {
	narrow := hdrhistogram.New(1, 1_000_000, 2)
	wide := hdrhistogram.New(1, 60_000_000, 3)
	_ = narrow.RecordValue(10)
	_ = wide.RecordValue(5_000_000)
	m := Merge([]*hdrhistogram.Histogram{narrow, wide})
	if m.TotalCount() != 2 || m.SignificantFigures() != 3 || m.HighestTrackableValue() < 5_000_000 {
		t.Fatalf("merged count %d digits %d highest %d", m.TotalCount(), m.SignificantFigures(), m.HighestTrackableValue())
	}
	if got := Percentile(m, 100); math.Abs(got-5_000_000) > 5_000 {
		t.Fatalf("p100 = %v, want 5 s within 0.1%%", got)
	}
}

func TestPercentileUndefined(t *testing.T) {
	if Merge(nil) != nil || Merge([]*hdrhistogram.Histogram{nil}) != nil {
		t.Fatal("merging nothing must give nil")
	}
	empty := hdrhistogram.New(1, 1000, 3)
	one := hdrhistogram.New(1, 1000, 3)
	_ = one.RecordValue(5)
	for name, got := range map[string]float64{
		"nil":      Percentile(nil, 50),
		"empty":    Percentile(empty, 50),
		"p<0":      Percentile(one, -1),
		"p>100":    Percentile(one, 101),
		"p=NaN":    Percentile(one, math.NaN()),
		"no hists": MergedPercentile(nil, 50),
	} {
		if !math.IsNaN(got) {
			t.Errorf("%s: %v, want NaN", name, got)
		}
	}
}
