package probe

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// A server whose unloaded latency is 26 ms (25 ms of network and work plus
// its 1 ms service slot: alone above the 10 ms margin) and whose capacity
// is 1000 req/s. Seed 004's rule, RTT + m, rejects every window down to
// the floor; with the baseline the probe measures 26 ms unloaded first,
// judges seconds against RTT + 25.95 ms + 10 ms, and lands within one step
// of 1000.
func TestBaselineRescuesSlowServer(t *testing.T) {
	rtt := fixedRTT(50 * time.Microsecond)
	seed := &queueServer{capacity: 1000, base: 25 * time.Millisecond, seed: 7}
	res, err := Run(context.Background(), simConfig(), seed, rtt, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopNoEstimate || res.Baseline != nil || !strings.Contains(res.Note, "RTT + 10ms") {
		t.Fatalf("seed 004's rule: %s %q, rates %v", res.Stop, res.Note, rates(res.Windows))
	}

	srv := &queueServer{capacity: 1000, base: 25 * time.Millisecond, seed: 7}
	var heard *Baseline
	var seen []int
	res, err = Run(context.Background(), defaultSim(), srv, rtt, Observer{
		Baseline: func(b Baseline) {
			if len(seen) > 0 {
				t.Error("the baseline was heard after a window")
			}
			heard = &b
		},
		Window: func(w Window) { seen = append(seen, w.Seq) },
	})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Baseline
	if b == nil || heard == nil || heard.Latency != b.Latency {
		t.Fatalf("baseline %+v, heard %+v", b, heard)
	}
	// 2 req/s for 5 s: about ten requests, each 26 ms (the top of its
	// histogram bucket, within 0.1%).
	if b.Rate != 2 || b.Duration != 5*time.Second || b.Completed < minBaselineRequests || b.Tries != 1 ||
		math.Abs(b.Latency-26) > 0.05 || b.RTT != 0.05 || math.Abs(b.Unloaded-(b.Latency-0.05)) > 1e-9 || b.Hist.TotalCount() != b.Completed {
		t.Fatalf("baseline %+v", *b)
	}
	if srv.rates[0] != 2 || srv.rates[1] != 800 {
		t.Fatalf("rates %v: the baseline window comes first", srv.rates)
	}
	if res.Stop != StopSLA || math.Abs(res.Estimate-1000) > 0.2*800 {
		t.Fatalf("%s %v %q, rates %v", res.Stop, res.Estimate, res.Note, rates(res.Windows))
	}
	for _, w := range res.Windows {
		if want := w.RTTBefore + b.Unloaded + 10; math.Abs(w.Limit-want) > 1e-9 {
			t.Fatalf("window %d limit %v, want %v", w.Seq, w.Limit, want)
		}
	}
	if w := res.Windows[1]; w.Rate != 1600 || w.Accepted || w.PassedSeconds != 0 {
		t.Fatalf("1600 req/s is over capacity: %+v", w.Seconds)
	}
}

// Without an RTT meter the whole unloaded latency is the baseline: the
// limit is latency + m.
func TestBaselineWithoutRTT(t *testing.T) {
	srv := &stepServer{capacity: 1000, fast: 30 * time.Millisecond, slow: 400 * time.Millisecond}
	cfg := defaultSim()
	cfg.StartRate = 100
	res, err := Run(context.Background(), cfg, srv, nil, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Baseline; b == nil || !math.IsNaN(b.RTT) || b.Unloaded != b.Latency || math.Abs(b.Latency-30) > 0.05 {
		t.Fatalf("baseline %+v", res.Baseline)
	}
	if res.Estimate != 960 || res.Windows[0].Limit != res.Baseline.Latency+10 {
		t.Fatalf("estimate %v, limit %v", res.Estimate, res.Windows[0].Limit)
	}
	// The baseline rate is capped at the start rate.
	cfg.StartRate = 1
	srv.rates = nil
	if _, err := Run(context.Background(), cfg, srv, nil, Observer{}); err != nil || srv.rates[0] != 1 {
		t.Fatalf("%v, rates %v", err, srv.rates)
	}
}

// A baseline window with too few successes, or after which the RTT spiked,
// is repeated; after MaxRetries repeats the probe stops with no estimate.
// One whose every request failed stops it at once: the target is failing.
func TestBaselineRetries(t *testing.T) {
	ms := time.Millisecond
	cfg := defaultSim()
	cfg.StartRate = 100
	few := windowOf(5, 0, 0, 20*ms)
	few.Seconds[2] = windowOf(1, 2, 0, 20*ms).Seconds[0] // 2 successes in 5 s
	enough := windowOf(5, 2, 0, 20*ms)
	r := &scriptedRunner{script: []WindowResult{few, enough, windowOf(10, 100, 0, 21*ms)}}
	cfg.MaxWindows = 1
	res, err := Run(context.Background(), cfg, r, fixedRTT(ms), Observer{})
	if err != nil || res.Baseline == nil || res.Baseline.Tries != 2 || res.Baseline.Completed != 10 || len(res.Windows) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if !slices.Equal(r.rates, []float64{2, 2, 100}) {
		t.Fatalf("rates %v", r.rates)
	}

	// The RTT after the first baseline window is 30 ms over the baseline
	// RTT of 1 ms: that baseline is measured again.
	meter := &scriptedRTT{script: []time.Duration{ms, 31 * ms}, rest: ms}
	r = &scriptedRunner{script: []WindowResult{enough, enough, windowOf(10, 100, 0, 21*ms)}}
	res, err = Run(context.Background(), cfg, r, meter, Observer{})
	if err != nil || res.Baseline == nil || res.Baseline.Tries != 2 {
		t.Fatalf("%v %+v", err, res)
	}

	r = &scriptedRunner{script: []WindowResult{few}}
	res, err = Run(context.Background(), cfg, r, fixedRTT(ms), Observer{})
	if err != nil || res.Stop != StopNoEstimate || len(r.rates) != cfg.MaxRetries+1 || len(res.Windows) != 0 ||
		!strings.Contains(res.Note, "only 2 requests of the baseline window") || !strings.Contains(res.Note, "--baseline-window") {
		t.Fatalf("%v %d tries %+v", err, len(r.rates), res)
	}

	r = &scriptedRunner{script: []WindowResult{windowOf(5, 0, 2, 0)}}
	res, err = Run(context.Background(), cfg, r, fixedRTT(ms), Observer{})
	if err != nil || res.Stop != StopTargetFailing || len(r.rates) != 1 || !strings.Contains(res.Note, "10 refused") {
		t.Fatalf("%v %+v", err, res)
	}
}

// Headroom's unstable-queue rule in fine-tuning: on a fluid queue of
// capacity 1000 with an SLA of p90 <= 2 s, the window at 1120 req/s meets
// the SLA (its latency reaches about 1.1 s by the window's end) although
// its queue grows 120 ms every second. Seed 004's rule accepts it and
// estimates 1120, over the capacity; with the rule the window is an
// unstable queue and the estimate is 960.
func TestUnstableQueueNotAcceptedInFineTuning(t *testing.T) {
	cfg := defaultSim()
	cfg.StartRate, cfg.Threshold = 100, 2*time.Second
	seedCfg := cfg
	seedCfg.UnstableP = 0
	res, err := Run(context.Background(), seedCfg, &driftServer{capacity: 1000, base: 7 * time.Millisecond}, fixedRTT(5*time.Millisecond), Observer{})
	if err != nil || res.Estimate != 1120 || !slices.Equal(rates(res.Windows), []float64{100, 200, 400, 800, 1600, 800, 960, 1120, 1280}) {
		t.Fatalf("without the rule: %v %v %v", err, res.Estimate, rates(res.Windows))
	}

	srv := &driftServer{capacity: 1000, base: 7 * time.Millisecond}
	res, err = Run(context.Background(), cfg, srv, fixedRTT(5*time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rates(res.Windows), []float64{100, 200, 400, 800, 1600, 800, 960, 1120}) || res.Stop != StopSLA || res.Estimate != 960 || res.LowerBound != 960 {
		t.Fatalf("rates %v, %s %v lower bound %v", rates(res.Windows), res.Stop, res.Estimate, res.LowerBound)
	}
	last := res.Windows[len(res.Windows)-1]
	if !last.MetSLA || last.Accepted || last.Verdict != "unstable queue" || !last.Trend.Unstable || last.SLALatency > 2000 ||
		math.Abs(last.Trend.Slope-120) > 1 || !strings.Contains(last.Note, "unstable queue: the median rose 120") {
		t.Fatalf("window at 1120: %+v", last)
	}
	if !strings.Contains(res.Note, "the queue grew through the window") {
		t.Fatalf("note %q", res.Note)
	}
	// Ramp-up keeps the seed's rule; the rejected window at 1600 says its
	// queue grew too.
	if w := res.Windows[4]; w.Verdict != "rejected" || !w.Trend.Unstable || !strings.Contains(w.Note, "unstable queue") {
		t.Fatalf("window at 1600: %s %q %+v", w.Verdict, w.Note, w.Trend)
	}
	for _, w := range res.Windows[:4] {
		if w.Trend.Unstable || !w.Trend.Judged || w.Trend.Rise != 0 {
			t.Fatalf("window at %v: %+v", w.Rate, w.Trend)
		}
	}
}
