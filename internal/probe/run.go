package probe

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
)

// Run probes the server behind w and returns the estimate with every window
// (seed-digest §3, seed 004 Algorithm 1):
//
//  1. Baseline RTT: rtt is measured once at the start, and before and after
//     every window. Then (Headroom's addition) the unloaded latency: a
//     short window at a low rate (measureBaseline), unless BaselineWindow
//     is 0.
//  2. Fast ramp-up: hold T for a window; a second passes when its median
//     latency <= RTT + m, plus the unloaded latency beyond the RTT
//     (passLimit); the window is accepted when more than half of its
//     seconds pass. Accepted: T = 2T. Rejected: fine-tuning.
//  3. RTT guard: a window during which the RTT rose more than the spike
//     limit for at least half of the measurements is discarded and repeated
//     at the same T, at most MaxRetries times in a row.
//  4. Fine-tuning: T = last accepted rate, inc = r x that rate. Hold T; if
//     the P-th percentile <= L, T = T + inc and repeat; otherwise stop with
//     T_estimate = T - inc. Headroom's unstable-queue rule (Trend): a
//     window whose per-second medians rise significantly and materially
//     is not accepted even when its percentile met the SLA.
//  5. A rejected first window halves T until a window is accepted (below
//     FloorRate: no estimate). The doubled rate was then just rejected, so
//     fine-tuning starts from the accepted rate at once. A window in which the
//     client could not send more than ClientShortfall of the scheduled
//     requests while its latency stayed low stops the probe: the client is
//     the bottleneck. So does a window that failed its phase's test while
//     the runner reports that the client could not keep the schedule (its
//     latency may then be the client's own); when such a window passes,
//     the probe goes on with the runner's note on the window.
//
// rtt may be nil (a target without a network address): the pass rule then
// compares the median with the unloaded latency + m and the RTT guard is
// off. obs hears the baseline and every window as soon as they are
// measured. When ctx is cancelled Run returns the windows so far with Stop
// StopInterrupted and no error. An error means the probe could not go on
// (bad configuration, an unreachable RTT address, a runner failure); the
// Result then holds the windows run before it.
func Run(ctx context.Context, cfg Config, w WindowRunner, rtt RTTMeter, obs Observer) (Result, error) {
	res := Result{Estimate: math.NaN(), LowerBound: math.NaN(), BaselineRTT: math.NaN()}
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	progress := obs.Window
	if progress == nil {
		progress = func(Window) {}
	}
	if rtt != nil {
		d, err := rtt.Measure(ctx)
		if err != nil {
			if ctx.Err() != nil {
				res.Stop = StopInterrupted
				return res, nil
			}
			return res, fmt.Errorf("measuring the baseline RTT (is the server up, and is its address right?): %w", err)
		}
		res.BaselineRTT = ms(d.Nanoseconds())
	}
	limit := ms(cfg.RTTSpike.Nanoseconds())
	unloaded := 0.0 // the baseline's latency beyond the RTT, ms
	if cfg.BaselineWindow > 0 {
		b, out, err := measureBaseline(ctx, cfg, w, rtt, res.BaselineRTT)
		if err != nil {
			return res, err
		}
		if out != nil {
			res.Stop, res.Note = out.stop, out.note
			return res, nil
		}
		res.Baseline, unloaded = b, b.Unloaded
		if obs.Baseline != nil {
			obs.Baseline(*b)
		}
	}

	phase := PhaseRampUp
	rate := cfg.StartRate
	lastAccepted := math.NaN() // last rate accepted by the pass rule
	inc := 0.0                 // fine-tuning step
	lastMet := math.NaN()      // last fine-tuning rate that met the SLA
	discards := 0              // discarded windows in a row at this rate

	stop := func(why, note string) (Result, error) {
		res.Stop, res.Note = why, note
		return res, nil
	}
	for {
		if ctx.Err() != nil {
			return stop(StopInterrupted, "interrupted; the windows so far are kept")
		}
		if len(res.Windows) >= cfg.MaxWindows {
			return stop(StopMaxWindows, fmt.Sprintf("stopped after %d windows (max windows) before the SLA was crossed", cfg.MaxWindows))
		}
		before, after := math.NaN(), math.NaN()
		if rtt != nil {
			before = measureRTT(ctx, rtt)
		}
		sampler := startSampler(ctx, rtt, cfg.RTTEvery, int(cfg.Window/time.Second))
		wr, err := w.RunWindow(ctx, rate, cfg.Window)
		samples := sampler.stop()
		if rtt != nil && ctx.Err() == nil {
			after = measureRTT(ctx, rtt)
		}
		if err != nil && ctx.Err() == nil {
			return res, fmt.Errorf("window %d at %.6g req/s: %w", len(res.Windows)+1, rate, err)
		}
		win := measure(cfg, wr, passLimit(cfg, finite(before), unloaded), finite(before), finite(after), samples)
		win.Seq, win.Phase, win.Rate = len(res.Windows), phase, rate
		emit := func(verdict string) {
			win.Verdict = verdict
			res.Windows = append(res.Windows, win)
			progress(win)
		}

		if err != nil || wr.Interrupted || ctx.Err() != nil {
			win.Discarded = true
			emit("interrupted")
			return stop(StopInterrupted, "interrupted; the windows so far are kept")
		}
		if rtt != nil {
			if spiked, why := rttSpiked(limit, res.BaselineRTT, before, after, samples); spiked {
				win.Discarded = true
				win.Note = joinNote(win.Note, why)
				emit("discarded (RTT)")
				discards++
				if discards > cfg.MaxRetries {
					return stop(StopRTT, fmt.Sprintf("the network RTT was unstable for %d windows in a row at %.6g req/s: %s", discards, rate, why))
				}
				continue
			}
		}
		discards = 0
		if win.Completed == 0 && win.Errors > 0 {
			emit("target failing")
			return stop(StopTargetFailing, fmt.Sprintf("every request of the window at %.6g req/s failed (%s); check that the target is up and the workload fits it", rate, kinds(win.ErrorKinds)))
		}
		lowLatency := majorityPassed(win)
		passed := lowLatency
		if phase == PhaseFineTune {
			passed = win.MetSLA && !win.Trend.Unstable
		}
		short := shortfall(win)
		if (lowLatency && short > cfg.ClientShortfall) || (wr.ClientLimited && !passed) {
			// seed-digest §3 step 5: the client could not send the rate
			// while latency stayed low, so the server was not what held it
			// back; or the window failed while the load generator reports
			// that it could not keep the schedule, so the failure may be
			// the client's own.
			res.ClientLimited = true
			why := wr.Note
			if lowLatency && short > cfg.ClientShortfall {
				why = fmt.Sprintf("%.1f%% of the requests scheduled at %.6g req/s could not be sent while latency stayed low", 100*short, rate)
			}
			emit("client-limited")
			return stop(StopClientLimited, fmt.Sprintf("the client is the bottleneck: %s; measure from a bigger client or several", why))
		}
		if win.MetSLA && !win.Trend.Unstable {
			res.LowerBound = maxDefined(res.LowerBound, rate)
		}
		if win.Trend.Unstable && phase != PhaseFineTune {
			// The seed's ramp-up rule stands; the window says what it saw.
			win.Note = joinNote(win.Note, "unstable queue: "+win.Trend.String())
		}

		switch phase {
		case PhaseRampUp, PhaseBackOff:
			if lowLatency {
				win.Accepted = true
				emit("accepted")
				lastAccepted = rate
				if phase == PhaseBackOff {
					// The doubled rate is the one just rejected: fine-tune.
					phase, inc = PhaseFineTune, cfg.FineRate*rate
					continue
				}
				if rate >= cfg.MaxRate {
					return stop(StopMaxRate, fmt.Sprintf("the server kept up at the max rate (%.6g req/s); raise it to find the limit", cfg.MaxRate))
				}
				rate = math.Min(2*rate, cfg.MaxRate)
				continue
			}
			emit("rejected")
			if math.IsNaN(lastAccepted) {
				phase, rate = PhaseBackOff, rate/2
				if rate < cfg.FloorRate {
					return stop(StopNoEstimate, noEstimateNote(cfg, res.Baseline))
				}
				continue
			}
			phase, rate, inc = PhaseFineTune, lastAccepted, cfg.FineRate*lastAccepted
		case PhaseFineTune:
			if win.MetSLA && win.Trend.Unstable {
				// Headroom's rule: the percentile met the SLA only because
				// the window ended before the growing queue took it over.
				win.Note = joinNote(win.Note, "unstable queue: "+win.Trend.String())
				emit("unstable queue")
				res.Estimate = rate - inc
				note := fmt.Sprintf("p%g was %.1f ms at %.6g req/s, within %v, but the queue grew through the window: %s", cfg.Percentile, win.SLALatency, rate, cfg.Threshold, win.Trend)
				if math.IsNaN(lastMet) {
					note += fmt.Sprintf("; the first fine-tuning window was already unstable, so the estimate (T - inc = %.6g req/s) was not itself probed", res.Estimate)
				}
				return stop(StopSLA, note)
			}
			if win.MetSLA {
				win.Accepted = true
				emit("met SLA")
				lastMet = rate
				if rate+inc > cfg.MaxRate {
					return stop(StopMaxRate, fmt.Sprintf("the SLA still held at %.6g req/s and the next step would pass the max rate (%.6g req/s)", rate, cfg.MaxRate))
				}
				rate += inc
				continue
			}
			emit("missed SLA")
			res.Estimate = rate - inc
			note := fmt.Sprintf("p%g was %.1f ms at %.6g req/s, over %v", cfg.Percentile, win.SLALatency, rate, cfg.Threshold)
			if !(win.SLALatency > ms(cfg.Threshold.Nanoseconds())) {
				note = fmt.Sprintf("%.2f%% of the requests at %.6g req/s failed, more than the %.2f%% allowed", 100*errorRatio(win.Completed, win.Errors), rate, 100*cfg.MaxErrorRatio)
			}
			if math.IsNaN(lastMet) {
				note += fmt.Sprintf("; the first fine-tuning window already missed the SLA, so the estimate (T - inc = %.6g req/s) was not itself probed", res.Estimate)
			}
			return stop(StopSLA, note)
		}
	}
}

// noEstimateNote says why the back-off found no rate, with the bound the
// seconds had to stay under.
func noEstimateNote(cfg Config, b *Baseline) string {
	bound := fmt.Sprintf("RTT + %v", cfg.Margin)
	hint := "raise the margin if every request takes longer than that even unloaded"
	if b != nil {
		bound = fmt.Sprintf("RTT + %.3g ms unloaded + %v", b.Unloaded, cfg.Margin)
		hint = "raise the margin if the latency varies more than that on a lightly loaded server"
	}
	return fmt.Sprintf("no estimate: no window down to the floor rate (%.6g req/s) had more than half of its seconds with median latency <= %s; %s", cfg.FloorRate, bound, hint)
}

// shortfall is the share of the window's scheduled requests that the
// client could not send: a runner counts a request it could not start in
// time as dropped. Comparing the sent count with rate x window instead
// would mistake a Poisson schedule's own variation for a shortfall.
func shortfall(w Window) float64 {
	if w.Sent+w.Dropped == 0 {
		return 0
	}
	return float64(w.Dropped) / float64(w.Sent+w.Dropped)
}

// measureRTT returns the RTT in ms, or +Inf when the measurement failed.
func measureRTT(ctx context.Context, rtt RTTMeter) float64 {
	d, err := rtt.Measure(ctx)
	if err != nil {
		return math.Inf(1)
	}
	return ms(d.Nanoseconds())
}

// finite reports a failed measurement (+Inf) as unknown (NaN) in the
// window's fields; the guard sees the failure through the raw values.
func finite(v float64) float64 {
	if math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}

// sampler measures the RTT every period during a window, the first time at
// its start, so that sample i falls in second i.
type sampler struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	samples []float64
}

func startSampler(ctx context.Context, rtt RTTMeter, every time.Duration, seconds int) *sampler {
	s := &sampler{cancel: func() {}}
	s.samples = make([]float64, seconds)
	for i := range s.samples {
		s.samples[i] = math.NaN()
	}
	if rtt == nil || every <= 0 {
		return s
	}
	ctx, s.cancel = context.WithCancel(ctx)
	start := time.Now()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			at := time.Since(start)
			v := measureRTT(ctx, rtt)
			if ctx.Err() != nil {
				return // cut short by the end of the window, not by the network
			}
			if i := int(at / time.Second); i < seconds {
				s.mu.Lock()
				if math.IsNaN(s.samples[i]) || v > s.samples[i] {
					s.samples[i] = v
				}
				s.mu.Unlock()
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the samples per second.
func (s *sampler) stop() []float64 {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

func maxDefined(a, b float64) float64 {
	if math.IsNaN(a) || b > a {
		return b
	}
	return a
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// kinds lists error counts by kind, largest first, for a note.
func kinds(m map[string]int64) string {
	if len(m) == 0 {
		return "no error kinds reported"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		return m[a] > m[b] || m[a] == m[b] && a < b
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}
