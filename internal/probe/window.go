package probe

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/load"
)

// measure turns what a runner returned into a judged window (everything but
// the phase verdict, which Run decides). limit is the pass rule's bound on
// a second's median in ms (passLimit). samples holds the RTT sampled during
// each second (NaN where none).
func measure(cfg Config, wr WindowResult, limit, rttBefore, rttAfter float64, samples []float64) Window {
	w := Window{
		Start: wr.Start, Duration: cfg.Window, Offered: wr.Offered, Achieved: wr.Achieved,
		RTTBefore: rttBefore, RTTAfter: rttAfter, Limit: limit, ErrorKinds: wr.ErrorKinds, Note: wr.Note,
		Hist: load.NewHistogram(),
	}
	for i, s := range wr.Seconds {
		sec := Second{
			Index: i, Sent: s.Completed + s.Errors, Completed: s.Completed, Errors: s.Errors,
			Late: s.Late, Dropped: s.Dropped, P50: math.NaN(), P90: math.NaN(), RTT: math.NaN(),
		}
		if i < len(samples) {
			sec.RTT = samples[i]
		}
		if s.Hist != nil && s.Hist.TotalCount() > 0 {
			sec.P50 = quantileMs(s.Hist, 50)
			sec.P90 = quantileMs(s.Hist, 90)
			w.Hist.Merge(s.Hist)
		}
		// seed-digest §3 step 2: a second passes when its median end-to-end
		// latency is at most RTT + m, where Headroom adds the baseline's
		// unloaded latency to the RTT (passLimit) and bounds the errors.
		sec.Pass = s.Completed > 0 && sec.P50 <= limit && errorRatio(s.Completed, s.Errors) <= cfg.MaxErrorRatio
		if sec.Pass {
			w.PassedSeconds++
		}
		w.Seconds = append(w.Seconds, sec)
		w.Completed += s.Completed
		w.Errors += s.Errors
		w.Late += s.Late
		w.Dropped += s.Dropped
	}
	w.Sent = w.Completed + w.Errors
	w.Percentiles = make([]float64, len(Percentiles))
	w.SLALatency = math.NaN()
	for i := range w.Percentiles {
		w.Percentiles[i] = math.NaN()
	}
	if w.Hist.TotalCount() > 0 {
		for i, p := range Percentiles {
			w.Percentiles[i] = quantileMs(w.Hist, p)
		}
		w.SLALatency = quantileMs(w.Hist, cfg.Percentile)
	}
	// seed-digest §3 step 4: the SLA holds when the window's P-th
	// percentile latency is at most L.
	w.MetSLA = w.Completed > 0 && w.SLALatency <= ms(cfg.Threshold.Nanoseconds()) &&
		errorRatio(w.Completed, w.Errors) <= cfg.MaxErrorRatio
	w.Trend = judgeTrend(w.Seconds, cfg.UnstableP, ms(cfg.Margin.Nanoseconds()))
	return w
}

// passLimit is the bound on a second's median latency, in ms: seed 004's
// RTT + m, with the unloaded latency beyond the RTT added (Baseline.
// Unloaded; 0 without a baseline), so that a server whose idle service
// time exceeds m is judged by how much load adds to it. rttBefore is NaN
// without an RTT meter; the bound is then the baseline plus m.
func passLimit(cfg Config, rttBefore, unloaded float64) float64 {
	ref := rttBefore
	if math.IsNaN(ref) {
		ref = 0
	}
	return ref + unloaded + ms(cfg.Margin.Nanoseconds())
}

// majorityPassed is the acceptance rule of seed-digest §3 step 2: more than
// half of the window's seconds passed.
func majorityPassed(w Window) bool { return 2*w.PassedSeconds > len(w.Seconds) }

// rttSpiked applies the RTT guard (seed-digest §3 step 3). The window is
// discarded when the RTT before it could not be measured or already stood
// more than the spike limit over the probe's baseline (the window would
// start inside a spike), or when at least half of the RTT observations
// during and at the end of the window rose more than the limit over the
// RTT before it. A failed measurement counts as a spike. samples are the
// per-second samples (NaN where none was taken, +Inf where it failed);
// after is the measurement at the end (+Inf when it failed).
func rttSpiked(limit, baseline, before, after float64, samples []float64) (bool, string) {
	if math.IsNaN(before) || math.IsInf(before, 0) {
		return true, "the RTT before the window could not be measured"
	}
	if before-baseline > limit {
		return true, fmt.Sprintf("the RTT before the window (%.1f ms) was more than %.0f ms over the baseline (%.1f ms)", before, limit, baseline)
	}
	obs := []float64{after}
	for _, s := range samples {
		if !math.IsNaN(s) {
			obs = append(obs, s)
		}
	}
	spikes := 0
	for _, o := range obs {
		if o-before > limit {
			spikes++
		}
	}
	if 2*spikes >= len(obs) {
		return true, fmt.Sprintf("the RTT rose more than %.0f ms over %.1f ms in %d of %d measurements", limit, before, spikes, len(obs))
	}
	return false, ""
}

func errorRatio(completed, errors int64) float64 {
	if completed+errors == 0 {
		return 0
	}
	return float64(errors) / float64(completed+errors)
}

// quantileMs reads a percentile of a microsecond histogram in milliseconds.
func quantileMs(h *hdrhistogram.Histogram, p float64) float64 {
	return float64(h.ValueAtQuantile(p)) / 1000
}

// ms converts nanoseconds to milliseconds.
func ms(ns int64) float64 { return float64(ns) / 1e6 }
