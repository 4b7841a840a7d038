package probe

import (
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
)

// second returns a second whose successful requests took the given
// latencies (ms).
func second(errors int64, lats ...float64) SecondResult {
	h := load.NewHistogram()
	for _, l := range lats {
		_ = h.RecordValue(int64(l * 1000))
	}
	return SecondResult{Completed: int64(len(lats)), Errors: errors, Hist: h}
}

// Four seconds with RTT 5 ms and m = 10 ms: a second passes when its
// median is at most 15 ms. Exactly half pass, which is not "more than half".
func TestPassRuleHandCase(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Window = 4 * time.Second
	wr := WindowResult{Seconds: []SecondResult{
		second(0, 10, 12, 14),       // median 12: pass
		second(0, 14, 14.5, 100),    // median 14.5: pass
		second(0, 10, 16, 16),       // median 16: fail
		{Hist: load.NewHistogram()}, // nothing came back: fail
	}}
	w := measure(cfg, wr, passLimit(cfg, 5, 0), 5, 5, []float64{5, math.NaN(), 30, math.Inf(1)})
	want := []bool{true, true, false, false}
	for i, s := range w.Seconds {
		if s.Pass != want[i] {
			t.Fatalf("second %d pass %v (p50 %v)", i, s.Pass, s.P50)
		}
	}
	if w.PassedSeconds != 2 || majorityPassed(w) {
		t.Fatalf("passed %d, majority %v", w.PassedSeconds, majorityPassed(w))
	}
	if !math.IsNaN(w.Seconds[3].P50) || !math.IsNaN(w.Seconds[3].P90) {
		t.Fatal("an empty second has a latency")
	}
	if w.Seconds[0].RTT != 5 || !math.IsNaN(w.Seconds[1].RTT) || !math.IsInf(w.Seconds[3].RTT, 1) {
		t.Fatalf("rtt samples %v %v %v", w.Seconds[0].RTT, w.Seconds[1].RTT, w.Seconds[3].RTT)
	}
	// The window's nine latencies: 10 10 12 14 14 14.5 16 16 100.
	// HdrHistogram's p90 is the value at rank round(0.9 x 9) = 8: 16 ms.
	if w.Completed != 9 || w.Sent != 9 || math.Abs(w.SLALatency-16) > 0.02 || !w.MetSLA {
		t.Fatalf("window %d sent, SLA latency %v, met %v", w.Completed, w.SLALatency, w.MetSLA)
	}
	if p50 := w.Percentiles[3]; math.Abs(p50-14) > 0.02 {
		t.Fatalf("p50 %v", p50)
	}
	for i := 1; i < len(w.Percentiles); i++ {
		if w.Percentiles[i] < w.Percentiles[i-1] {
			t.Fatalf("percentiles not monotone: %v", w.Percentiles)
		}
	}
}

// Errors: 1 failure among 100 is within 1%; 2 are not. A window without
// an RTT meter compares the median with m alone.
func TestErrorBoundAndNoRTT(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Window = 2 * time.Second
	fast := make([]float64, 99)
	for i := range fast {
		fast[i] = 3
	}
	wr := WindowResult{Seconds: []SecondResult{second(1, fast...), second(2, fast[:98]...)}}
	w := measure(cfg, wr, passLimit(cfg, math.NaN(), 0), math.NaN(), math.NaN(), nil)
	if !w.Seconds[0].Pass || w.Seconds[1].Pass {
		t.Fatalf("pass %v %v", w.Seconds[0].Pass, w.Seconds[1].Pass)
	}
	// 3 errors in 200 = 1.5% > 1%: the SLA is missed although p90 is 3 ms.
	if w.MetSLA || w.Errors != 3 || w.Sent != 200 {
		t.Fatalf("met %v errors %d sent %d", w.MetSLA, w.Errors, w.Sent)
	}
	cfg.MaxErrorRatio = 0.02
	if w = measure(cfg, wr, passLimit(cfg, math.NaN(), 0), math.NaN(), math.NaN(), nil); !w.MetSLA || !w.Seconds[1].Pass {
		t.Fatal("2% bound rejected 1.5% errors")
	}
}
