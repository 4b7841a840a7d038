package probe

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func rates(ws []Window) []float64 {
	out := make([]float64, len(ws))
	for i, w := range ws {
		out[i] = w.Rate
	}
	return out
}

func phases(ws []Window) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Phase
	}
	return out
}

func fixedRTT(d time.Duration) *scriptedRTT { return &scriptedRTT{rest: d} }

// A step server of capacity 1000 from T0 = 100: ramp-up doubles to 800
// (accepted) and 1600 (rejected); fine-tuning restarts at 800 with inc =
// 0.2 x 800 = 160: 800 and 960 meet the SLA, 1120 misses it, so the
// estimate is 1120 - 160 = 960.
func TestStepServerWindowSequence(t *testing.T) {
	cfg := simConfig()
	cfg.StartRate = 100
	srv := &stepServer{capacity: 1000, fast: 7 * time.Millisecond, slow: 400 * time.Millisecond}
	var seen []int
	res, err := Run(context.Background(), cfg, srv, fixedRTT(5*time.Millisecond), Observer{Window: func(w Window) { seen = append(seen, w.Seq) }})
	if err != nil {
		t.Fatal(err)
	}
	wantRates := []float64{100, 200, 400, 800, 1600, 800, 960, 1120}
	if !slices.Equal(rates(res.Windows), wantRates) {
		t.Fatalf("rates %v, want %v", rates(res.Windows), wantRates)
	}
	wantPhases := []string{"ramp-up", "ramp-up", "ramp-up", "ramp-up", "ramp-up", "fine-tune", "fine-tune", "fine-tune"}
	if !slices.Equal(phases(res.Windows), wantPhases) {
		t.Fatalf("phases %v", phases(res.Windows))
	}
	if res.Stop != StopSLA || res.Estimate != 960 || res.LowerBound != 960 || res.ClientLimited {
		t.Fatalf("result %+v", res)
	}
	if res.Note != "p90 was 400.1 ms at 1120 req/s, over 150ms" {
		t.Fatalf("note %q", res.Note)
	}
	if res.BaselineRTT != 5 {
		t.Fatalf("baseline %v", res.BaselineRTT)
	}
	if !slices.Equal(seen, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("progress saw %v", seen)
	}
	// Per-window verdicts and the per-second pass rule: 7 ms <= 5 + 10 ms
	// passes, 400 ms does not.
	verdicts := []string{"accepted", "accepted", "accepted", "accepted", "rejected", "met SLA", "met SLA", "missed SLA"}
	for i, w := range res.Windows {
		if w.Verdict != verdicts[i] {
			t.Fatalf("window %d verdict %q, want %q", i, w.Verdict, verdicts[i])
		}
		wantPass := 10
		if w.Rate > 1000 {
			wantPass = 0
		}
		if w.PassedSeconds != wantPass || len(w.Seconds) != 10 {
			t.Fatalf("window %d passed %d of %d", i, w.PassedSeconds, len(w.Seconds))
		}
		if w.Sent != int64(w.Rate)*10 || w.Seconds[3].Sent != int64(w.Rate) {
			t.Fatalf("window %d sent %d", i, w.Sent)
		}
		if w.RTTBefore != 5 || w.RTTAfter != 5 {
			t.Fatalf("window %d rtt %v/%v", i, w.RTTBefore, w.RTTAfter)
		}
	}
	// Every latency of a fast window is 7 ms: every percentile reads 7 ms
	// (HdrHistogram reports the top of the 7000 µs bucket, 7.003 ms).
	for _, p := range res.Windows[0].Percentiles {
		if math.Abs(p-7) > 0.01 {
			t.Fatalf("percentiles %v", res.Windows[0].Percentiles)
		}
	}
	if s := res.Windows[4].SLALatency; math.Abs(s-400) > 0.5 {
		t.Fatalf("SLA latency of the rejected window %v", s)
	}
}

// On a queueing server of known capacity C the estimate lands within one
// fine-tuning step of C, for start rates below and above C (the latter
// exercises the halving back-off), with the defaults: the baseline window
// and the unstable-queue rule on.
func TestEstimateWithinOneStepOfCapacity(t *testing.T) {
	cases := []struct {
		capacity, start float64
		backOff         bool
	}{
		{1000, 800, false},
		{5000, 800, false},
		{12000, 100, false},
		{2500, 2000, false},
		{300, 800, true},
		{700, 5000, true},
		{150, 800, true},
	}
	for _, c := range cases {
		cfg := defaultSim()
		cfg.StartRate = c.start
		srv := &queueServer{capacity: c.capacity, base: 6 * time.Millisecond, seed: uint64(c.capacity)}
		res, err := Run(context.Background(), cfg, srv, fixedRTT(5*time.Millisecond), Observer{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stop != StopSLA {
			t.Fatalf("C=%v T0=%v: stop %s (%s), rates %v", c.capacity, c.start, res.Stop, res.Note, rates(res.Windows))
		}
		var first *Window
		for i := range res.Windows {
			if res.Windows[i].Phase == PhaseFineTune {
				first = &res.Windows[i]
				break
			}
		}
		inc := cfg.FineRate * first.Rate
		if math.Abs(res.Estimate-c.capacity) > inc {
			t.Fatalf("C=%v T0=%v: estimate %v is more than one step (%v) away; rates %v", c.capacity, c.start, res.Estimate, inc, rates(res.Windows))
		}
		if got := slices.Contains(phases(res.Windows), PhaseBackOff); got != c.backOff {
			t.Fatalf("C=%v T0=%v: back-off %v, rates %v", c.capacity, c.start, got, rates(res.Windows))
		}
		if c.backOff {
			// Halving from T0 until accepted: every back-off rate is T0/2^k.
			for _, w := range res.Windows {
				if w.Phase == PhaseBackOff {
					k := math.Log2(c.start / w.Rate)
					if k != math.Round(k) {
						t.Fatalf("back-off rate %v is not T0/2^k", w.Rate)
					}
				}
			}
		}
	}
}

// A window during which the RTT rose by more than 20 ms is discarded and
// repeated at the same rate; the estimate is what it would have been.
func TestRTTSpikeDiscardsAndRepeats(t *testing.T) {
	cfg := simConfig()
	cfg.StartRate = 100
	ms := time.Millisecond
	// Calls: baseline, w0 before/after, w1 before/after (spike at the end).
	meter := &scriptedRTT{script: []time.Duration{5 * ms, 5 * ms, 5 * ms, 5 * ms, 40 * ms}, rest: 5 * ms}
	srv := &stepServer{capacity: 1000, fast: 7 * ms, slow: 400 * ms}
	res, err := Run(context.Background(), cfg, srv, meter, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{100, 200, 200, 400, 800, 1600, 800, 960, 1120}
	if !slices.Equal(rates(res.Windows), want) {
		t.Fatalf("rates %v, want %v", rates(res.Windows), want)
	}
	w := res.Windows[1]
	if !w.Discarded || w.Accepted || w.Verdict != "discarded (RTT)" || w.RTTAfter != 40 || !strings.Contains(w.Note, "1 of 1 measurements") {
		t.Fatalf("spiked window %+v", w)
	}
	if res.Windows[2].Discarded || !res.Windows[2].Accepted {
		t.Fatalf("repeat %+v", res.Windows[2])
	}
	if res.Estimate != 960 || res.Stop != StopSLA {
		t.Fatalf("result %v %s", res.Estimate, res.Stop)
	}
}

// A window that starts while the RTT is already over the baseline by more
// than the limit is discarded too; too many discards in a row stop the probe.
func TestRTTUnstableStops(t *testing.T) {
	cfg := simConfig()
	cfg.StartRate = 100
	cfg.MaxRetries = 2
	ms := time.Millisecond
	meter := &scriptedRTT{script: []time.Duration{5 * ms, 5 * ms, 5 * ms}, rest: 30 * ms}
	srv := &stepServer{capacity: 1000, fast: 7 * ms, slow: 400 * ms}
	res, err := Run(context.Background(), cfg, srv, meter, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rates(res.Windows), []float64{100, 200, 200, 200}) || res.Stop != StopRTT {
		t.Fatalf("rates %v stop %s", rates(res.Windows), res.Stop)
	}
	for _, w := range res.Windows[1:] {
		if !w.Discarded || !strings.Contains(w.Note, "over the baseline") {
			t.Fatalf("window %+v", w)
		}
	}
	if !math.IsNaN(res.Estimate) || res.LowerBound != 100 || !strings.Contains(res.Note, "unstable for 3 windows") {
		t.Fatalf("result %v %v %q", res.Estimate, res.LowerBound, res.Note)
	}
}

func TestRTTSpikedRule(t *testing.T) {
	nan := math.NaN()
	inf := math.Inf(1)
	cases := []struct {
		name                    string
		baseline, before, after float64
		samples                 []float64
		want                    bool
	}{
		{"steady", 5, 5, 6, []float64{5, 6, 5, 7}, false},
		{"after only, spiked", 5, 5, 26, nil, true},
		{"after only, 20 ms is not more than 20", 5, 5, 25, nil, false},
		{"half of five spiked is not half", 5, 5, 5, []float64{30, 30, 5, 5}, false},
		{"three of five", 5, 5, 30, []float64{30, 30, 5, 5}, true},
		{"unsampled seconds ignored", 5, 5, 30, []float64{nan, nan, 30, 5, 5}, true},
		{"failed connects count", 5, 5, inf, []float64{inf, 5}, true},
		{"before unknown", 5, inf, 5, nil, true},
		{"before over baseline", 5, 26, 26, nil, true},
		{"before up by 20 is fine", 5, 25, 25, nil, false},
	}
	for _, c := range cases {
		got, why := rttSpiked(20, c.baseline, c.before, c.after, c.samples)
		if got != c.want || got != (why != "") {
			t.Errorf("%s: spiked %v (%q), want %v", c.name, got, why, c.want)
		}
	}
}

// The client can send 1500 req/s: at 1600 it drops 1/16 of the schedule
// (6.25% > 5%) while latency stays low, so the probe stops with the
// client-limited finding and the last SLA-meeting rate as lower bound.
func TestClientLimitStops(t *testing.T) {
	cfg := simConfig()
	srv := &queueServer{capacity: 100000, base: 6 * time.Millisecond, clientCap: 1500, seed: 3}
	res, err := Run(context.Background(), cfg, srv, fixedRTT(5*time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ClientLimited || res.Stop != StopClientLimited || !math.IsNaN(res.Estimate) || res.LowerBound != 800 {
		t.Fatalf("result %+v", res)
	}
	last := res.Windows[len(res.Windows)-1]
	if len(res.Windows) != 2 || last.Verdict != "client-limited" || last.Dropped == 0 || !strings.Contains(res.Note, "client is the bottleneck") {
		t.Fatalf("windows %v, last %+v, note %q", rates(res.Windows), last, res.Note)
	}
	if f := shortfall(last); math.Abs(f-1.0/16) > 0.01 {
		t.Fatalf("shortfall %v", f)
	}
	// Requests dropped while latency is high are the server's doing: with
	// the same client in front of a server of capacity 1000, the window at
	// 1600 is rejected and fine-tuning finds the server's capacity.
	srv = &queueServer{capacity: 1000, base: 6 * time.Millisecond, clientCap: 1500, seed: 3}
	res, err = Run(context.Background(), cfg, srv, fixedRTT(5*time.Millisecond), Observer{})
	if err != nil || res.ClientLimited || res.Stop != StopSLA || math.Abs(res.Estimate-1000) > 160 || res.Windows[1].Verdict != "rejected" {
		t.Fatalf("%v %v %+v", err, rates(res.Windows), res)
	}
	// The load generator's own verdict: a window that passes anyway keeps
	// the probe going with the note; the first one that fails stops it
	// (800 passes, 1600 is over the step server's capacity).
	step := &stepServer{capacity: 1000, fast: 7 * time.Millisecond, slow: 400 * time.Millisecond, limited: true}
	res, err = Run(context.Background(), cfg, step, nil, Observer{})
	if err != nil || res.Stop != StopClientLimited || !slices.Equal(rates(res.Windows), []float64{800, 1600}) || !strings.Contains(res.Note, "client CPU saturated") {
		t.Fatalf("%v %+v", err, res)
	}
	if w := res.Windows[0]; !w.Accepted || w.Note != "client CPU saturated" || res.Windows[1].Verdict != "client-limited" {
		t.Fatalf("windows %+v", res.Windows)
	}
}

func TestMaxRateCap(t *testing.T) {
	ms := time.Millisecond
	// Ramp-up reaches the cap and keeps up there.
	cfg := simConfig()
	cfg.MaxRate = 3000
	srv := &stepServer{capacity: 1e6, fast: 7 * ms, slow: 400 * ms}
	res, err := Run(context.Background(), cfg, srv, fixedRTT(5*ms), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rates(res.Windows), []float64{800, 1600, 3000}) || res.Stop != StopMaxRate || res.LowerBound != 3000 || !math.IsNaN(res.Estimate) {
		t.Fatalf("rates %v %+v", rates(res.Windows), res)
	}
	// Fine-tuning would step past the cap: 800, 960, then 1120 > 1100.
	cfg.StartRate, cfg.MaxRate = 100, 1100
	srv = &stepServer{capacity: 1000, fast: 7 * ms, slow: 400 * ms}
	res, err = Run(context.Background(), cfg, srv, fixedRTT(5*ms), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rates(res.Windows), []float64{100, 200, 400, 800, 1100, 800, 960}) || res.Stop != StopMaxRate || res.LowerBound != 960 {
		t.Fatalf("rates %v %+v", rates(res.Windows), res)
	}
}

func TestMaxWindowsCap(t *testing.T) {
	cfg := simConfig()
	cfg.StartRate, cfg.MaxWindows = 100, 3
	srv := &stepServer{capacity: 1000, fast: 7 * time.Millisecond, slow: 400 * time.Millisecond}
	res, err := Run(context.Background(), cfg, srv, fixedRTT(5*time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) != 3 || res.Stop != StopMaxWindows || res.LowerBound != 400 || !math.IsNaN(res.Estimate) {
		t.Fatalf("%v %+v", rates(res.Windows), res)
	}
}

// A server that is never fast enough: 8, 4, 2, 1 req/s are rejected and
// 0.5 is below the floor.
func TestNoEstimateBelowFloor(t *testing.T) {
	cfg := simConfig()
	cfg.StartRate = 8
	srv := &stepServer{capacity: 0.1, fast: 7 * time.Millisecond, slow: 400 * time.Millisecond}
	res, err := Run(context.Background(), cfg, srv, nil, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rates(res.Windows), []float64{8, 4, 2, 1}) || res.Stop != StopNoEstimate || !math.IsNaN(res.Estimate) || !math.IsNaN(res.LowerBound) {
		t.Fatalf("%v %+v", rates(res.Windows), res)
	}
	if !slices.Equal(phases(res.Windows), []string{"ramp-up", "back-off", "back-off", "back-off"}) {
		t.Fatalf("phases %v", phases(res.Windows))
	}
	if !math.IsNaN(res.BaselineRTT) || !math.IsNaN(res.Windows[0].RTTBefore) {
		t.Fatal("no meter, yet an RTT")
	}
}

// Without an RTT meter the pass rule compares the median with m alone:
// 7 ms passes a 10 ms margin, 12 ms does not.
func TestNoMeterUsesMarginAlone(t *testing.T) {
	cfg := simConfig()
	cfg.StartRate, cfg.MaxWindows = 100, 1
	for _, c := range []struct {
		fast time.Duration
		want bool
	}{{7 * time.Millisecond, true}, {12 * time.Millisecond, false}} {
		srv := &stepServer{capacity: 1000, fast: c.fast, slow: time.Second}
		res, err := Run(context.Background(), cfg, srv, nil, Observer{})
		if err != nil || res.Windows[0].Accepted != c.want {
			t.Fatalf("fast %v: %v %+v", c.fast, err, res.Windows)
		}
	}
}

// A server whose median stays low from 800 req/s while 40% of requests take
// 400 ms: ramp-up accepts 800 (median fast) and rejects 1600 (the slow
// server), then fine-tuning at 800 already misses p90 <= 150 ms, so the
// estimate is 800 - 160 = 640, a rate the probe did not itself run.
func TestFirstFineTuneWindowMisses(t *testing.T) {
	cfg := simConfig()
	cfg.StartRate = 100
	srv := &stepServer{capacity: 1000, fast: 7 * time.Millisecond, slow: 400 * time.Millisecond, fastShare: 0.6, slowFrom: 800}
	res, err := Run(context.Background(), cfg, srv, fixedRTT(5*time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rates(res.Windows), []float64{100, 200, 400, 800, 1600, 800}) || res.Estimate != 640 || res.Stop != StopSLA {
		t.Fatalf("%v %+v", rates(res.Windows), res)
	}
	if !strings.Contains(res.Note, "not itself probed") || res.LowerBound != 400 {
		t.Fatalf("note %q, lower bound %v", res.Note, res.LowerBound)
	}
}

// A server that fails 5% of requests at once above its capacity keeps its
// latency low, but the failed seconds do not pass.
func TestErrorsFailSeconds(t *testing.T) {
	cfg := simConfig()
	srv := &queueServer{capacity: 1000, base: 6 * time.Millisecond, errAbove: 0.05, seed: 9}
	res, err := Run(context.Background(), cfg, srv, fixedRTT(5*time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Windows[1] // 1600 req/s
	if w.Rate != 1600 || w.Accepted || w.Errors == 0 {
		t.Fatalf("window %+v", w)
	}
	if res.Stop != StopSLA || math.Abs(res.Estimate-1000) > 160 {
		t.Fatalf("%v %+v", rates(res.Windows), res)
	}
}

func TestTargetFailing(t *testing.T) {
	cfg := simConfig()
	srv := &stepServer{capacity: 1000, errors: true}
	res, err := Run(context.Background(), cfg, srv, fixedRTT(time.Millisecond), Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopTargetFailing || len(res.Windows) != 1 || !strings.Contains(res.Note, "8000 connection") {
		t.Fatalf("%+v", res)
	}
}

func TestInterruptKeepsWindows(t *testing.T) {
	cfg := simConfig()
	cfg.StartRate = 100
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &stepServer{capacity: 1000, fast: 7 * time.Millisecond, slow: 400 * time.Millisecond}
	res, err := Run(ctx, cfg, srv, fixedRTT(5*time.Millisecond), Observer{Window: func(w Window) {
		if w.Seq == 1 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopInterrupted || len(res.Windows) != 2 || res.LowerBound != 200 {
		t.Fatalf("%v %+v", rates(res.Windows), res)
	}
}

type interruptedRunner struct{}

func (interruptedRunner) RunWindow(context.Context, float64, time.Duration) (WindowResult, error) {
	return WindowResult{Interrupted: true, Seconds: make([]SecondResult, 10)}, nil
}

func TestRunnerInterruptionIsDiscarded(t *testing.T) {
	res, err := Run(context.Background(), simConfig(), interruptedRunner{}, nil, Observer{})
	if err != nil || res.Stop != StopInterrupted || len(res.Windows) != 1 || !res.Windows[0].Discarded || res.Windows[0].Verdict != "interrupted" {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Percentile = 100 }, "percentile"},
		{func(c *Config) { c.Threshold = 0 }, "threshold"},
		{func(c *Config) { c.StartRate = 0.5 }, "start rate"},
		{func(c *Config) { c.MaxRate = 100 }, "max rate"},
		{func(c *Config) { c.Window = 1500 * time.Millisecond }, "window"},
		{func(c *Config) { c.Window = 0 }, "window"},
		{func(c *Config) { c.FineRate = 0 }, "fine rate"},
		{func(c *Config) { c.MaxWindows = 0 }, "max windows"},
		{func(c *Config) { c.ClientShortfall = 1 }, "client shortfall"},
		{func(c *Config) { c.RTTSpike = 0 }, "rtt spike"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("want an error about %s, got %v", c.want, err)
		}
		if _, rerr := Run(context.Background(), cfg, interruptedRunner{}, nil, Observer{}); rerr == nil {
			t.Errorf("Run accepted a bad config (%s)", c.want)
		}
	}
}

// sleepyRunner takes real time for its window and tells the meter when the
// window runs, so that RTT samples taken during it can differ.
type sleepyRunner struct {
	took   time.Duration
	inside *atomic.Bool
}

func (r sleepyRunner) RunWindow(_ context.Context, rate float64, dur time.Duration) (WindowResult, error) {
	r.inside.Store(true)
	time.Sleep(r.took)
	r.inside.Store(false)
	n := int(dur / time.Second)
	w := WindowResult{Seconds: make([]SecondResult, n)}
	for i := range w.Seconds {
		w.Seconds[i] = second(0, 3, 3, 3)
	}
	return w, nil
}

type insideMeter struct {
	inside          *atomic.Bool
	normal, spiking time.Duration
}

func (m insideMeter) Measure(context.Context) (time.Duration, error) {
	if m.inside.Load() {
		return m.spiking, nil
	}
	return m.normal, nil
}

// With in-window sampling, RTT samples land in the seconds they were taken
// in; when the RTT spikes during the window (but not before or after it)
// the window is still discarded.
func TestInWindowRTTSampling(t *testing.T) {
	cfg := simConfig()
	cfg.Window, cfg.RTTEvery, cfg.MaxWindows = 2*time.Second, 200*time.Millisecond, 1
	inside := new(atomic.Bool)
	runner := sleepyRunner{took: 1500 * time.Millisecond, inside: inside}
	meter := insideMeter{inside: inside, normal: 5 * time.Millisecond, spiking: 40 * time.Millisecond}
	res, err := Run(context.Background(), cfg, runner, meter, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Windows[0]
	if w.Seconds[0].RTT != 40 || w.Seconds[1].RTT != 40 || w.RTTAfter != 5 || !w.Discarded || !strings.Contains(w.Note, "2 of 3 measurements") {
		t.Fatalf("window rtt %v %v after %v, discarded %v, note %q", w.Seconds[0].RTT, w.Seconds[1].RTT, w.RTTAfter, w.Discarded, w.Note)
	}
	// The same window without a spike is accepted.
	meter.spiking = 6 * time.Millisecond
	res, err = Run(context.Background(), cfg, runner, meter, Observer{})
	if err != nil || res.Windows[0].Discarded || !res.Windows[0].Accepted || res.Windows[0].Seconds[1].RTT != 6 {
		t.Fatalf("%v %+v", err, res.Windows[0])
	}
}
