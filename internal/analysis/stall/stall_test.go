package stall

import (
	"math"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60_000_000, 3) }

// A synthetic closed-loop run whose answer is known: 4 clients, 1 ms per
// request, 100 s measured, with 5 stalls of 2 s (every client waits
// through each) and a short quiet period that is not a stall.
//
// Each client sends (100 - 10) s / 1 ms = 90,000 ordinary requests and 5
// that wait 2 s. Pace E = 4 x (100 s - 10 s) / (360,020 - 20) = 1 ms;
// threshold 10 ms. Stalled 10 s of 100 s = 10%, longest 2 s, 5 x 4 = 20
// requests waited. The correction adds 1,999 requests per long one
// (2 s - k ms for k = 1..1999, all >= 1 ms), uniform on [1 ms, 2 s): over
// all clients 360,020 + 39,980 = 400,000 requests. Above x (between 1 ms
// and 2 s) lie about 20 x (2 s - x) / 1 ms + 20 of them; the p99 leaves
// 1% = 4,000 above it: 2 s - x = (4000 - 20) / 20 ms = 199 ms,
// x = 1.801 s.
func TestAnalyseKnownRun(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newHist()
	_ = h.RecordValues(1000, 4*90_000)
	_ = h.RecordValues(2_000_000, 20)
	w := &Watch{Clients: 4, Left: 4, Floor: 4 * time.Millisecond}
	for i := range 5 {
		a := from.Add(time.Duration(10+15*i) * time.Second)
		w.Periods = append(w.Periods, Period{Start: a, End: a.Add(2 * time.Second), Waiting: 4})
	}
	// Shorter than the threshold: not a stall.
	w.Periods = append(w.Periods, Period{Start: from.Add(90 * time.Second), End: from.Add(90*time.Second + 5*time.Millisecond), Waiting: 4})

	got := Analyse(Input{From: from, To: from.Add(100 * time.Second), Latency: h, Clients: 4, Watch: w})
	if got.Pace != time.Millisecond || got.Threshold != 10*time.Millisecond {
		t.Fatalf("pace %v threshold %v, want 1ms and 10ms", got.Pace, got.Threshold)
	}
	if len(got.Stalls) != 5 || got.Stalled != 10*time.Second || math.Abs(got.Share-0.1) > 1e-9 {
		t.Errorf("%d stalls, %v stalled (%.3f), want 5, 10s, 0.1", len(got.Stalls), got.Stalled, got.Share)
	}
	if got.Longest != 2*time.Second || got.Waited != 20 {
		t.Errorf("longest %v, waited %d; want 2s and 20", got.Longest, got.Waited)
	}
	if got.Phantoms < 39_900 || got.Phantoms > 40_100 {
		t.Errorf("the correction added %d requests, want about 39,980", got.Phantoms)
	}
	want := 1801 * time.Millisecond
	if d := got.Corrected.P99 - want; d < -want/200 || d > want/200 {
		t.Errorf("corrected p99 %v, want %v within 0.5%%", got.Corrected.P99, want)
	}
	if got.Measured.P99 > 1100*time.Microsecond || got.Corrected.P50 > 1100*time.Microsecond {
		t.Errorf("measured p99 %v, corrected p50 %v: both should stay at the 1 ms service", got.Measured.P99, got.Corrected.P50)
	}
	if !got.Understates() {
		t.Error("a run stalled 10% of the time understates")
	}

	// A quiet period that began before the measured phase counts from its
	// start only.
	w.Periods = []Period{{Start: from.Add(-time.Second), End: from.Add(2 * time.Second), Waiting: 4}}
	if got := Analyse(Input{From: from, To: from.Add(100 * time.Second), Latency: h, Clients: 4, Watch: w}); got.Stalled != 2*time.Second {
		t.Errorf("clipped stall: %v stalled, want 2s", got.Stalled)
	}
}

// Correct matches HdrHistogram's own corrected recording value by value,
// including for a long latency with a small pace (grouped steps).
func TestCorrectMatchesRecordCorrected(t *testing.T) {
	for _, c := range []struct {
		values []int64
		pace   int64
	}{
		{[]int64{500, 800, 1200, 5000, 250_000}, 1000},
		{[]int64{3, 7, 40_000_000}, 2},
	} {
		want, h := newHist(), newHist()
		for _, v := range c.values {
			_ = want.RecordCorrectedValue(v, c.pace)
			_ = h.RecordValue(v)
		}
		got := Correct(h, time.Duration(c.pace)*time.Microsecond)
		// A recorded value stands for its bucket (Correct uses its
		// midpoint): at 40 s the bucket is 33 ms wide, 0.04% of the value.
		if g, w := float64(got.TotalCount()), float64(want.TotalCount()); math.Abs(g-w) > 0.001*w {
			t.Errorf("pace %d: %.0f values, want %.0f", c.pace, g, w)
		}
		for _, q := range []float64{10, 50, 90, 99, 99.9} {
			g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q)
			if math.Abs(float64(g-w)) > 0.002*float64(w)+1 {
				t.Errorf("pace %d: p%g %d, want %d", c.pace, q, g, w)
			}
		}
	}
}

// Without a stall watch (a run stored before it existed) the percentiles
// are still corrected, and nothing is called a stall. One client for 1 s:
// 500 requests of 1 ms and one of 500 ms, so E = 1 s / 501 = 1,996 µs and
// the long one adds floor(500 ms / E) - 1 = 249. Without the clients the
// pace falls back to the median latency plus the think time.
func TestAnalyseWithoutWatch(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newHist()
	_ = h.RecordValues(1000, 500)
	_ = h.RecordValue(500_000)
	got := Analyse(Input{From: from, To: from.Add(time.Second), Latency: h, Clients: 1})
	if got.Watched || len(got.Stalls) != 0 || got.Understates() {
		t.Errorf("without a watch: %+v", got)
	}
	if got.Pace != 1996*time.Microsecond || got.Phantoms != 249 {
		t.Errorf("pace %v, %d added; want 1.996ms and 249", got.Pace, got.Phantoms)
	}
	if got := Analyse(Input{Latency: h, ThinkTime: time.Millisecond}); got.Pace != 2*time.Millisecond {
		t.Errorf("fallback pace %v, want 2ms (1 ms median + 1 ms think)", got.Pace)
	}
	if empty := Analyse(Input{}); empty.Requests != 0 || empty.Pace != 0 {
		t.Errorf("no latency: %+v", empty)
	}
}
