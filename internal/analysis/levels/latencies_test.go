package levels

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// A run's Latencies answer exactly as the full histogram they were taken
// from, for the percentiles and threshold kept and for any other (which
// decode the kept encoding), and give the histogram itself back.
func TestLatenciesAnswerAsTheFullHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	slo := &SLO{Percentile: 97.5, Threshold: 12 * time.Millisecond}
	for trial := range 50 {
		h := store.NewHistogram()
		n := 1 + rng.IntN(5000)
		for range n {
			// Log-uniform from 10 µs to 10 s: every bucket width.
			v := int64(10 * math.Pow(10, rng.Float64()*6))
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		var s *SLO
		if trial%2 == 0 {
			s = slo
		}
		l := NewLatencies(h, s)
		if l.TotalCount() != h.TotalCount() || l.Mean() != h.Mean() || l.StdDev() != h.StdDev() || l.Max() != h.Max() {
			t.Fatalf("trial %d: count/mean/stddev/max %d %v %v %d, the histogram's %d %v %v %d", trial,
				l.TotalCount(), l.Mean(), l.StdDev(), l.Max(), h.TotalCount(), h.Mean(), h.StdDev(), h.Max())
		}
		for _, q := range []float64{0, 1, 50, 90, 95, 97.5, 99, 99.9, 99.99, 100} {
			if got, want := l.ValueAtQuantile(q), h.ValueAtQuantile(q); got != want {
				t.Fatalf("trial %d: p%v %d µs, the histogram's %d", trial, q, got, want)
			}
		}
		for _, limit := range []int64{0, 999, 12_000, 100_000, 20_000_000} {
			if got, want := l.CountAtMost(limit), countAtMost(h, limit); got != want {
				t.Fatalf("trial %d: %d at most %d µs, the histogram's %d", trial, got, limit, want)
			}
		}
		back, err := l.Histogram()
		if err != nil || !back.Equals(h) {
			t.Fatalf("trial %d: the kept histogram differs (%v)", trial, err)
		}
	}
}

// The fold keeps no full histogram per operation type once it is done:
// only Latencies, whose encoding is a small fraction of a full one.
func TestFoldedRunKeepsOnlyCompactLatencies(t *testing.T) {
	run := store.Run{ID: 1, Level: 100}
	var ivs []store.Interval
	t0 := time.Unix(1000, 0)
	for i := range 60 {
		for _, op := range []string{"read", "update"} {
			h := store.NewHistogram()
			for k := range 100 {
				_ = h.RecordValue(int64(500 + 37*k + i))
			}
			ivs = append(ivs, store.Interval{RunID: 1, Phase: "measure", Op: op, Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Count: 100, Hist: h})
		}
	}
	rd := Fold(run, ivs, &SLO{Percentile: 99, Threshold: 10 * time.Millisecond})
	full := len(store.NewHistogram().Export().Counts) * 8
	for op, l := range rd.Latencies {
		if l.TotalCount() == 0 || len(l.encoded) == 0 || len(l.encoded) > full/20 {
			t.Errorf("%s: %d requests, %d bytes kept; want them all in under %d bytes (a full histogram: %d)", op, l.TotalCount(), len(l.encoded), full/20, full)
		}
	}
	if len(rd.Latencies) != 3 || rd.Latencies["all"].TotalCount() != 12_000 {
		t.Errorf("latencies %v; want read, update and all (12,000)", rd.Latencies)
	}
}
