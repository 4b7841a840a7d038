package probe

import (
	"context"
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/load"
)

// minBaselineRequests is the fewest successful requests whose median the
// probe takes as the unloaded latency. At the default 2 req/s for 5 s a
// Poisson schedule falls short of 5 about 3% of the time; the window is
// then repeated.
const minBaselineRequests = 5

// baselineOutcome is how measuring the baseline ended when it did not
// give one: a stop reason and its note, as Run reports them.
type baselineOutcome struct {
	stop, note string
}

// measureBaseline holds min(BaselineRate, StartRate) for BaselineWindow and
// returns the unloaded latency (Baseline). rttBase is the probe's baseline
// RTT (NaN without a meter). A window with fewer than minBaselineRequests
// successes, or after which the RTT stood more than the spike limit above
// rttBase, is repeated, at most MaxRetries times. A window in which every
// request failed stops the probe (the target is failing), as does an
// interruption; err is a runner failure.
func measureBaseline(ctx context.Context, cfg Config, w WindowRunner, rtt RTTMeter, rttBase float64) (*Baseline, *baselineOutcome, error) {
	rate := math.Min(cfg.BaselineRate, cfg.StartRate)
	limit := ms(cfg.RTTSpike.Nanoseconds())
	why := ""
	for try := 1; try <= cfg.MaxRetries+1; try++ {
		wr, err := w.RunWindow(ctx, rate, cfg.BaselineWindow)
		if ctx.Err() != nil || wr.Interrupted {
			return nil, &baselineOutcome{StopInterrupted, "interrupted while measuring the unloaded latency"}, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("the baseline window at %.6g req/s: %w", rate, err)
		}
		b := Baseline{Rate: rate, Duration: cfg.BaselineWindow, Start: wr.Start, RTT: rttBase, Tries: try, Hist: load.NewHistogram()}
		for _, s := range wr.Seconds {
			b.Completed += s.Completed
			b.Errors += s.Errors
			if s.Hist != nil {
				b.Hist.Merge(s.Hist)
			}
		}
		if b.Completed == 0 && b.Errors > 0 {
			return nil, &baselineOutcome{StopTargetFailing, fmt.Sprintf("every request of the baseline window at %.6g req/s failed (%s); check that the target is up and the workload fits it", rate, kinds(wr.ErrorKinds))}, nil
		}
		if rtt != nil {
			after := measureRTT(ctx, rtt)
			if ctx.Err() != nil {
				return nil, &baselineOutcome{StopInterrupted, "interrupted while measuring the unloaded latency"}, nil
			}
			if !(after-rttBase <= limit) { // a failed connect (+Inf) counts as a spike
				why = fmt.Sprintf("the RTT after the baseline window (%s) was more than %.0f ms over the baseline RTT (%.1f ms)", rttText(after), limit, rttBase)
				continue
			}
		}
		if b.Hist.TotalCount() < minBaselineRequests {
			why = fmt.Sprintf("only %d requests of the baseline window at %.6g req/s succeeded; %d are needed", b.Hist.TotalCount(), rate, minBaselineRequests)
			continue
		}
		b.Latency = quantileMs(b.Hist, 50)
		b.P90 = quantileMs(b.Hist, 90)
		b.Unloaded = b.Latency
		if !math.IsNaN(rttBase) {
			b.Unloaded = math.Max(0, b.Latency-rttBase)
		}
		return &b, nil, nil
	}
	return nil, &baselineOutcome{StopNoEstimate, fmt.Sprintf("no estimate: the unloaded latency could not be measured in %d tries (%s); give a longer --baseline-window, or --baseline-window 0 for seed 004's rule", cfg.MaxRetries+1, why)}, nil
}

// rttText is an RTT in ms for a sentence ("failed" for a failed connect).
func rttText(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "failed"
	}
	return fmt.Sprintf("%.1f ms", v)
}
