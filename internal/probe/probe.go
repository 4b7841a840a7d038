// Package probe is Headroom's black-box capacity probe (seed-digest §3, seed
// 004 ch.3 Algorithm 1): it holds an open-loop request rate for a window of
// a few seconds, judges the window by its end-to-end latency, doubles the
// rate while the server keeps up (fast ramp-up), then climbs linearly from
// the last rate that kept up (fine-tuning) until the SLA percentile crosses
// the SLA threshold. The rate before that window is the estimate.
//
// The algorithm (Run) is separate from load generation: it talks to a
// WindowRunner, which holds one rate for one window and returns per-second
// counts and latency histograms, and to an RTTMeter, which times TCP
// connects to the target (tcpping). EngineRunner drives Headroom's load
// engine against any registered target; TCPPinger dials host:port. Tests
// drive Run with simulated servers.
package probe

import (
	"context"
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Config is the probe's parameters (seed-digest §3 "Inputs"). DefaultConfig
// gives the seed's values.
type Config struct {
	// Percentile P and Threshold L are the SLA: the P-th percentile latency
	// of a fine-tuning window must not exceed L. Seed 004 uses P90, 150 ms.
	Percentile float64
	Threshold  time.Duration
	// StartRate is T0, the first window's rate in requests per second
	// (seed 004 §3.1.2: 800, below the smallest server it measured).
	StartRate float64
	// Window is how long each rate is held; whole seconds, at least 1 s
	// (seed 004: 8-10 s).
	Window time.Duration
	// Margin is m: a second passes when its median latency is at most the
	// RTT before its window plus the unloaded latency over the RTT (the
	// baseline) plus m (10 ms). It is also the rise across a window that
	// makes a significant upward trend an unstable queue.
	Margin time.Duration
	// BaselineRate and BaselineWindow are the short window held before the
	// first one to measure the unloaded end-to-end latency (Headroom's
	// addition, docs/probe.md "The baseline"): 2 req/s for 5 s, about ten
	// requests on a server that is at most 10% busy when it takes 20 req/s
	// or more. The rate is capped at StartRate. BaselineWindow 0 skips the
	// baseline: the pass rule is then seed 004's, RTT + m.
	BaselineRate   float64
	BaselineWindow time.Duration
	// UnstableP is the unstable-queue rule's significance level (Trend,
	// 0.001); 0 turns the rule off, as in seed 004.
	UnstableP float64
	// RTTSpike is the rise of the RTT over its value before the window that
	// makes a sample count as a spike (20 ms).
	RTTSpike time.Duration
	// FineRate is r: fine-tuning adds r x the last accepted ramp-up rate per
	// window (0.2).
	FineRate float64
	// MaxRate caps the rate; a probe that would go beyond it stops and
	// reports the cap as a lower bound.
	MaxRate float64
	// MaxWindows caps the number of windows, discarded ones included.
	MaxWindows int
	// MaxRetries is how many discarded windows in a row one rate may have
	// before the probe stops because the network is unstable.
	MaxRetries int
	// FloorRate is the lowest rate the halving back-off tries; below it the
	// probe reports no estimate.
	FloorRate float64
	// ClientShortfall is the share of a window's scheduled requests that
	// the client may fail to send (dropped), while latency is low, before
	// the probe decides that the client, not the server, is the bottleneck
	// (0.05: "short of T by more than a few percent").
	ClientShortfall float64
	// MaxErrorRatio is the largest fraction of failed requests a second may
	// have and still pass, and a window may have and still meet the SLA.
	// Seed 004 does not treat errors; without this bound a server that
	// fails fast under overload would look fast (Headroom's addition).
	MaxErrorRatio float64
	// RTTEvery is how often the RTT is also sampled during a window, for
	// the spike rule's "at least half of the seconds"; 0 samples only
	// before and after each window.
	RTTEvery time.Duration
}

// DefaultConfig returns seed 004's parameters and Headroom's caps.
func DefaultConfig() Config {
	return Config{
		Percentile:      90,
		Threshold:       150 * time.Millisecond,
		StartRate:       800,
		Window:          10 * time.Second,
		Margin:          10 * time.Millisecond,
		BaselineRate:    2,
		BaselineWindow:  5 * time.Second,
		UnstableP:       0.001,
		RTTSpike:        20 * time.Millisecond,
		FineRate:        0.2,
		MaxRate:         100_000,
		MaxWindows:      40,
		MaxRetries:      3,
		FloorRate:       1,
		ClientShortfall: 0.05,
		MaxErrorRatio:   0.01,
		RTTEvery:        time.Second,
	}
}

// Validate reports the first bad field in one sentence naming the fix.
func (c Config) Validate() error {
	switch {
	case !(c.Percentile > 0 && c.Percentile < 100):
		return fmt.Errorf("percentile: %v is out of range; give a number between 0 and 100, e.g. 90", c.Percentile)
	case c.Threshold <= 0:
		return fmt.Errorf("threshold: must be a positive duration, e.g. 150ms")
	case !(c.FloorRate > 0) || math.IsInf(c.FloorRate, 0):
		return fmt.Errorf("floor rate: %v must be a positive number of requests per second", c.FloorRate)
	case !(c.StartRate >= c.FloorRate) || math.IsInf(c.StartRate, 0):
		return fmt.Errorf("start rate: %v must be a finite number of requests per second at least the floor rate (%v)", c.StartRate, c.FloorRate)
	case !(c.MaxRate >= c.StartRate) || math.IsInf(c.MaxRate, 0):
		return fmt.Errorf("max rate: %v must be at least the start rate (%v)", c.MaxRate, c.StartRate)
	case c.Window < time.Second || c.Window%time.Second != 0:
		return fmt.Errorf("window: %v must be a whole number of seconds, at least 1s (seed 004 uses 8-10s)", c.Window)
	case c.Margin < 0:
		return fmt.Errorf("margin: must not be negative")
	case !(c.BaselineRate > 0) || math.IsInf(c.BaselineRate, 0):
		return fmt.Errorf("baseline rate: %v must be a positive number of requests per second, e.g. 2", c.BaselineRate)
	case c.BaselineWindow < 0 || c.BaselineWindow%time.Second != 0:
		return fmt.Errorf("baseline window: %v must be a whole number of seconds (0 skips the baseline)", c.BaselineWindow)
	case !(c.UnstableP >= 0 && c.UnstableP < 0.5):
		return fmt.Errorf("unstable p: %v must be a significance level from 0 (rule off) to below 0.5, e.g. 0.001", c.UnstableP)
	case c.RTTSpike <= 0:
		return fmt.Errorf("rtt spike: must be a positive duration, e.g. 20ms")
	case !(c.FineRate > 0 && c.FineRate <= 1):
		return fmt.Errorf("fine rate: %v must be above 0 and at most 1, e.g. 0.2", c.FineRate)
	case c.MaxWindows < 1:
		return fmt.Errorf("max windows: must be at least 1, got %d", c.MaxWindows)
	case c.MaxRetries < 0:
		return fmt.Errorf("max retries: must not be negative, got %d", c.MaxRetries)
	case !(c.ClientShortfall > 0 && c.ClientShortfall < 1):
		return fmt.Errorf("client shortfall: %v must be a fraction between 0 and 1, e.g. 0.05", c.ClientShortfall)
	case !(c.MaxErrorRatio >= 0 && c.MaxErrorRatio <= 1):
		return fmt.Errorf("max error ratio: %v must be a fraction between 0 and 1", c.MaxErrorRatio)
	case c.RTTEvery < 0:
		return fmt.Errorf("rtt sampling period: must not be negative")
	}
	return nil
}

// WindowRunner holds one request rate for one window.
type WindowRunner interface {
	// RunWindow offers rate requests per second for dur (whole seconds) and
	// returns one SecondResult per second of the window. When ctx is
	// cancelled it stops at once and returns what it has with Interrupted
	// set; an error means the window could not be run at all.
	RunWindow(ctx context.Context, rate float64, dur time.Duration) (WindowResult, error)
}

// WindowResult is what a WindowRunner measured in one window.
type WindowResult struct {
	Start time.Time
	// Seconds has one entry per second of the window. Requests are counted
	// in the second in which they ended; those still running at the end of
	// the window count in its last second.
	Seconds []SecondResult
	// Offered is the rate of requests actually sent (started, not dropped),
	// per second of the window; Achieved is successful completions per
	// second within the window (the client-side throughput).
	Offered, Achieved float64
	ErrorKinds        map[string]int64
	// ClientLimited is the load generator's own verdict that it could not
	// keep the schedule because its CPU was saturated; Note is its sentence
	// on late or dropped requests, if any.
	ClientLimited bool
	Note          string
	Interrupted   bool
}

// SecondResult is one second of a window.
type SecondResult struct {
	Completed, Errors, Late, Dropped int64
	// Hist holds the latencies of the successful requests in microseconds
	// (Headroom's histogram geometry, load.NewHistogram).
	Hist *hdrhistogram.Histogram
}

// RTTMeter measures the network round trip to the target.
type RTTMeter interface {
	Measure(ctx context.Context) (time.Duration, error)
}

// Phases of the probe (seed-digest §3 steps 2, 4 and 5).
const (
	PhaseRampUp   = "ramp-up"   // doubling while windows are accepted
	PhaseBackOff  = "back-off"  // halving after a rejected first window
	PhaseFineTune = "fine-tune" // linear steps of r x the last accepted rate
)

// Why a probe ended (Result.Stop).
const (
	StopSLA           = "sla"            // a fine-tuning window missed the SLA: Estimate is set
	StopNoEstimate    = "no-estimate"    // back-off went below the floor rate
	StopClientLimited = "client-limited" // the client could not offer the rate
	StopMaxRate       = "max-rate"       // the next rate would pass the cap
	StopMaxWindows    = "max-windows"    // the window budget ran out
	StopRTT           = "rtt-unstable"   // too many windows in a row were discarded
	StopTargetFailing = "target-failing" // a window (or the baseline) had errors and no success at all
	StopInterrupted   = "interrupted"    // the context was cancelled
)

// Percentiles are the latency percentiles reported for every window (seed
// 004 §4.4 draws the latency/throughput surface over percentiles 2 to 99).
var Percentiles = []float64{2, 10, 25, 50, 75, 90, 95, 99}

// Second is one second of a window. Latencies are in milliseconds, NaN
// when the second had no successful request.
type Second struct {
	Index                            int
	Sent                             int64 // requests that ended in this second: Completed + Errors
	Completed, Errors, Late, Dropped int64
	P50, P90                         float64
	RTT                              float64 // ms sampled during this second (the highest); NaN when none, +Inf when the connect failed
	Pass                             bool    // median <= the window's Limit and errors within bound
}

// Window is one probed window. Latencies are in milliseconds, NaN when
// undefined (no successful request, or no RTT measured).
type Window struct {
	Seq      int    // 0-based order in the probe
	Phase    string // PhaseRampUp, PhaseBackOff or PhaseFineTune
	Rate     float64
	Offered  float64 // requests sent per second
	Achieved float64 // successful completions per second
	Start    time.Time
	Duration time.Duration
	// RTTBefore is measured just before the window; the pass rule and the
	// spike rule compare with it. RTTAfter is measured right after it.
	RTTBefore, RTTAfter float64
	// Limit is the pass rule's bound on a second's median: RTTBefore (0
	// without an RTT meter) + the baseline's unloaded latency over the RTT
	// + m.
	Limit         float64
	PassedSeconds int
	// Accepted is the window's verdict in its phase: more than half of the
	// seconds passed (ramp-up, back-off) or the SLA was met (fine-tune).
	Accepted                         bool
	MetSLA                           bool // P-th percentile <= L and errors within bound
	Discarded                        bool // the RTT spiked (the window is repeated) or the probe was interrupted
	Verdict                          string
	Sent                             int64 // Completed + Errors
	Completed, Errors, Late, Dropped int64
	ErrorKinds                       map[string]int64
	// Percentiles holds the latency at each of probe.Percentiles, in order.
	Percentiles []float64
	// SLALatency is the latency at the SLA percentile.
	SLALatency float64
	// Trend is the unstable-queue rule's reading of the per-second
	// medians; a fine-tuning window whose Trend is Unstable is not accepted
	// even when it met the SLA.
	Trend Trend
	// Hist is the whole window's latency histogram (microseconds), kept so
	// that any percentile can be drawn later.
	Hist    *hdrhistogram.Histogram
	Seconds []Second
	Note    string
}

// Baseline is the unloaded end-to-end latency, measured in a short window
// at a low rate before the first window (Headroom's addition to seed 004:
// the seed's pass rule, median <= RTT + m, assumes an unloaded request
// costs the server next to nothing, and rejects every rate of a server
// whose service time alone exceeds m). Latencies in milliseconds.
type Baseline struct {
	Rate     float64       // req/s held
	Duration time.Duration // how long
	Start    time.Time
	// Completed and Errors count the window's requests; Latency and P90 are
	// the median and 90th percentile of the successful ones.
	Completed, Errors int64
	Latency, P90      float64
	// RTT is the TCP connect time measured just before it (the probe's
	// baseline RTT); NaN without an RTT meter.
	RTT float64
	// Unloaded = max(0, Latency - RTT) (Latency without an RTT meter): what
	// an unloaded request costs beyond the network round trip. The pass
	// rule adds it to the RTT before each window.
	Unloaded float64
	// Tries is how many baseline windows it took (a window with too few
	// successful requests, or during an RTT spike, is repeated).
	Tries int
	Hist  *hdrhistogram.Histogram
}

// Observer hears a probe's progress as it happens; nil fields are not
// called.
type Observer struct {
	// Baseline is called once the unloaded latency is measured.
	Baseline func(Baseline)
	// Window is called for every window as soon as it is judged, discarded
	// ones included.
	Window func(Window)
}

// Result is a finished probe.
type Result struct {
	// Estimate is T_estimate in requests per second (seed-digest §3 step
	// 4); NaN unless Stop is StopSLA.
	Estimate float64
	// LowerBound is the highest rate whose window met the SLA and was not
	// discarded; NaN when none did. When the probe stopped at a cap or
	// because of the client, the server takes at least this much.
	LowerBound    float64
	Stop          string
	ClientLimited bool
	BaselineRTT   float64 // ms at the start; NaN without an RTT meter
	// Baseline is the unloaded latency measured before the first window;
	// nil when Config.BaselineWindow is 0 or the probe stopped before it.
	Baseline *Baseline
	Windows  []Window
	Note     string
}
