// Package availability measures what failures did to the service a run's
// clients saw (seed 002 §III-C, seed-digest §5: "availability = uptime /
// (uptime + downtime) = MTTF / (MTTF + MTTR); request-level: successful
// requests / all requests during a failure scenario (yield); harvest =
// fraction of the requested data returned"; yield and harvest after Fox
// and Brewer, HotOS 1999). Analyze is a pure function of a run's
// per-interval timeline and its events; FromResults reads both from a
// results model.
//
// Definitions (every count is of requests that ended in an interval:
// completed, failed, timed out, or dropped by the load engine because
// they could not start within drop_after, each counted in the interval
// it ended in):
//
//   - due = successful + failed + dropped; availability of an interval =
//     successful / due (NaN when nothing was due);
//   - a failure scenario is a fault event and the first later event that
//     recovers it (pair.go): kill -> start or promote, stop -> continue,
//     link_down -> link_up, partition -> heal; a fault without one lasts
//     to the end of the run. Its failure window is [fault, recovery);
//     an interval belongs to the window when its midpoint does;
//   - yield = Σ successful / Σ due over the window's intervals;
//   - harvest = the fraction of the requested data the answered requests
//     returned: a point operation that succeeds returns its one record
//     (1), one answered "not found" returns none (0), so harvest =
//     Σ successful / Σ (successful + not found). The load engine counts
//     requests, not rows: a scan that returns fewer rows than asked for
//     counts as a full answer;
//   - the steady state before a fault is the median per-interval
//     throughput (successful requests per second) and median per-interval
//     p99 over the Config.Steady before it (after any earlier scenario's
//     recovery; a fault during an earlier outage takes that outage's
//     steady state), and the largest share of failed + dropped requests any
//     of those intervals had;
//   - time to detect = from the fault to the end of the first interval,
//     among those whose midpoint is before the window ends (and before
//     the next fault), that shows it: failed + dropped above the steady share, no request
//     succeeded, or p99 above k × the steady p99 (k =
//     Config.DetectFactor). The resolution is one interval;
//   - recovered = the start of the first Config.Stable consecutive
//     intervals, from the detecting one on, each with throughput ≥
//     (1 - x) × steady and failed + dropped not above the steady share,
//     and the first of them and the median of their p99s ≤ (1 + x) ×
//     steady (x = Config.Tolerance; the steady p99 is a median of
//     intervals' p99s too); MTTR = recovered -
//     fault (time to repair, as in Kuhlenkamp et al.'s "back within x% of
//     before"); a scenario never recovered within the run has MTTR up to
//     the end of the run, flagged;
//   - degraded-mode capacity = throughput over the window / steady
//     throughput;
//   - over the run: downtime = the union of [fault, recovered) of the
//     scenarios that showed, uptime = the timeline's length - downtime,
//     MTTF = uptime / failures, MTTR = downtime / failures, and
//     availability = MTTF / (MTTF + MTTR) = uptime / (uptime + downtime).
package availability

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Defaults of Config.
const (
	DefaultTolerance    = 0.20
	DefaultStable       = 5
	DefaultDetectFactor = 3
	DefaultSteady       = 10 * time.Second
)

// Config sets the definitions' parameters; zero fields take the defaults.
type Config struct {
	// Tolerance is x of "back within x% of the steady state before the
	// fault", a fraction (0.2 = 20%).
	Tolerance float64
	// Stable is y: how many consecutive intervals must be back within
	// the band for the service to count as recovered.
	Stable int
	// DetectFactor is k: an interval whose p99 exceeds k × the steady p99
	// shows the failure.
	DetectFactor float64
	// Steady is how long before a fault its steady state is taken over.
	Steady time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if c.Tolerance == 0 {
		c.Tolerance = DefaultTolerance
	}
	if c.Stable == 0 {
		c.Stable = DefaultStable
	}
	if c.DetectFactor == 0 {
		c.DetectFactor = DefaultDetectFactor
	}
	if c.Steady == 0 {
		c.Steady = DefaultSteady
	}
	switch {
	case !(c.Tolerance > 0 && c.Tolerance < 1):
		return c, fmt.Errorf("availability: tolerance %v is outside (0, 1); give it as a fraction, e.g. 0.2 for 20%%", c.Tolerance)
	case c.Stable < 1:
		return c, fmt.Errorf("availability: stable %d must be at least 1 interval", c.Stable)
	case !(c.DetectFactor > 1):
		return c, fmt.Errorf("availability: detect factor %v must be above 1 (a p99 above k times the one before the fault shows it)", c.DetectFactor)
	case c.Steady < 0:
		return c, fmt.Errorf("availability: steady window %v is negative", c.Steady)
	}
	return c, nil
}

// Point is one interval of a run's measured phase, every operation type
// together.
type Point struct {
	Start time.Time
	Dur   time.Duration
	// OK, Failed and Dropped are the requests that ended in the interval:
	// successful, failed (errors and timeouts), and never sent because
	// they could not start in time.
	OK, Failed, Dropped int64
	// NotFound are the failed reads answered "not found" (part of Failed).
	NotFound int64
	// P99 is the 99th percentile latency of the successful requests, µs;
	// NaN when none succeeded.
	P99 float64
}

// Due is every request that ended in the interval.
func (p Point) Due() int64 { return p.OK + p.Failed + p.Dropped }

func (p Point) end() time.Time { return p.Start.Add(p.Dur) }
func (p Point) mid() time.Time { return p.Start.Add(p.Dur / 2) }

// Throughput is successful requests per second.
func (p Point) Throughput() float64 {
	if p.Dur <= 0 {
		return math.NaN()
	}
	return float64(p.OK) / p.Dur.Seconds()
}

// Availability is OK / Due; NaN when nothing was due.
func (p Point) Availability() float64 { return ratio(p.OK, p.Due()) }

// failShare is the share of due requests that failed or were dropped.
func (p Point) failShare() float64 {
	if p.Due() == 0 {
		return 0
	}
	return float64(p.Failed+p.Dropped) / float64(p.Due())
}

// Event is one event of the run's timeline (a fault or a recovery).
type Event struct {
	At     time.Time
	Action string
	Host   string
	Detail string
	Error  string // the event failed to apply
}

// Steady is the steady state before a fault.
type Steady struct {
	From, To   time.Time
	N          int     // intervals
	Throughput float64 // req/s, median; NaN without intervals
	P99        float64 // µs, median; NaN without a p99
	FailShare  float64 // the largest share of failed + dropped requests
}

// Scenario is one failure and its recovery with their figures. Numbers
// that are unknown are NaN; Problem says why the figures that need a
// steady state are missing.
type Scenario struct {
	Fault Event
	// Recovery is the event that ended the failure window; zero Action
	// when none did (the window runs to the end of the timeline).
	Recovery Event
	From, To time.Time // the failure window
	N        int       // intervals in the window
	Due, OK  int64
	Yield    float64
	Harvest  float64
	Before   Steady
	// During is the throughput over the window, req/s; Degraded is During
	// / Before.Throughput.
	During, Degraded float64
	// Detected says whether any interval showed the failure; Detect is
	// from the fault to the end of the first that did, DetectedBy says
	// how it showed ("errors", "no success", "p99").
	Detected   bool
	Detect     time.Duration
	DetectedBy string
	// Recovered says whether the service came back within the band for
	// Stable intervals before the timeline ended; RecoveredAt is the
	// start of the first of them and MTTR = RecoveredAt - fault (to the
	// end of the timeline when not recovered). Zero when not detected.
	Recovered   bool
	RecoveredAt time.Time
	MTTR        time.Duration
	Problem     string
}

// Second is one interval of the availability timeline.
type Second struct {
	Start        time.Time
	Dur          time.Duration
	Availability float64 // NaN when nothing was due
	Throughput   float64
	P99          float64 // µs; NaN without successful requests
}

// Result is a run's availability.
type Result struct {
	Timeline  []Second
	Scenarios []Scenario
	// Unpaired are recovery events that closed no fault of the timeline.
	Unpaired []Event
	// Requests is the request-level availability over the whole timeline:
	// Σ successful / Σ due.
	Requests float64
	// Span is the timeline's length; Downtime the union of the detected
	// scenarios' [fault, recovered); Uptime = Span - Downtime.
	Span, Uptime, Downtime time.Duration
	// Failures counts the scenarios that showed (were detected).
	Failures int
	// MTTF = Uptime / Failures and MTTR = Downtime / Failures; zero
	// without failures.
	MTTF, MTTR time.Duration
	// Availability = MTTF / (MTTF + MTTR) = Uptime / Span; 1 without
	// failures.
	Availability float64
}

// Analyze computes the availability of a run from its intervals (in time
// order) and its events (any order; events that are neither a fault nor a
// recovery are ignored).
func Analyze(points []Point, events []Event, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if len(points) == 0 {
		return Result{}, fmt.Errorf("availability: the run has no intervals")
	}
	var res Result
	var ok, due int64
	for _, p := range points {
		res.Timeline = append(res.Timeline, Second{Start: p.Start, Dur: p.Dur, Availability: p.Availability(), Throughput: p.Throughput(), P99: p.P99})
		ok += p.OK
		due += p.Due()
	}
	res.Requests = ratio(ok, due)
	first, last := points[0].Start, points[len(points)-1].end()
	res.Span = last.Sub(first)
	pairs, unpaired := Pair(events)
	res.Unpaired = unpaired
	settled := first     // no steady state reaches back before this
	var outage *Scenario // the last detected scenario, while it lasts
	for i, pr := range pairs {
		next := last // a later fault starts a scenario of its own
		if i+1 < len(pairs) && pairs[i+1].Fault.At.Before(next) {
			next = pairs[i+1].Fault.At
		}
		var during *Steady // a fault during an earlier outage: that outage's steady state
		if outage != nil && (!outage.Recovered || outage.RecoveredAt.After(pr.Fault.At)) {
			during = &outage.Before
		}
		sc := scenario(points, pr, settled, next, last, during, cfg)
		if sc.Detected {
			settled = sc.RecoveredAt
			if !sc.Recovered {
				settled = last
			}
		}
		res.Scenarios = append(res.Scenarios, sc)
		if sc.Detected {
			x := sc
			outage = &x
		}
	}
	res.Downtime = downtime(res.Scenarios, last)
	res.Uptime = res.Span - res.Downtime
	res.Availability = 1
	for _, sc := range res.Scenarios {
		if sc.Detected {
			res.Failures++
		}
	}
	if res.Failures > 0 {
		res.MTTF = res.Uptime / time.Duration(res.Failures)
		res.MTTR = res.Downtime / time.Duration(res.Failures)
		res.Availability = float64(res.MTTF) / float64(res.MTTF+res.MTTR)
	}
	return res, nil
}

// scenario computes one failure scenario's figures; settled is the
// earliest time its steady state may start from, next the next fault's
// time (or last): an interval whose midpoint is after the window's end or
// the next fault no longer shows this failure. during is the steady state
// of an earlier outage this fault came in (nil when none): a fault that
// strikes a service not yet recovered is judged against the steady state
// before the first failure.
func scenario(points []Point, pr Failure, settled, next, last time.Time, during *Steady, cfg Config) Scenario {
	sc := Scenario{Fault: pr.Fault, Recovery: pr.Recovery, From: pr.Fault.At, To: last,
		Yield: math.NaN(), Harvest: math.NaN(), During: math.NaN(), Degraded: math.NaN()}
	if pr.Recovery.Action != "" {
		sc.To = pr.Recovery.At
	}
	var nf int64
	var dur time.Duration
	for _, p := range points {
		if m := p.mid(); !m.Before(sc.From) && m.Before(sc.To) {
			sc.N++
			sc.Due += p.Due()
			sc.OK += p.OK
			nf += p.NotFound
			dur += p.Dur
		}
	}
	sc.Yield = ratio(sc.OK, sc.Due)
	sc.Harvest = ratio(sc.OK, sc.OK+nf)
	if dur > 0 {
		sc.During = float64(sc.OK) / dur.Seconds()
	}
	from := sc.From.Add(-cfg.Steady)
	if settled.After(from) {
		from = settled
	}
	sc.Before = steadyBefore(points, sc.From, from)
	if sc.Before.N == 0 && during != nil {
		sc.Before = *during
	}
	if sc.Before.N == 0 {
		sc.Problem = "no interval before the fault to compare with (the fault came at the start of the measured phase or during an earlier failure)"
		return sc
	}
	sc.Degraded = sc.During / sc.Before.Throughput
	// Detection and recovery look at the intervals that end after the
	// fault.
	after := slices.IndexFunc(points, func(p Point) bool { return p.end().After(sc.From) })
	if after < 0 {
		return sc
	}
	shows := func(p Point) string {
		switch {
		case p.Due() > 0 && p.OK == 0:
			return "no success"
		case p.failShare() > sc.Before.FailShare:
			return "errors"
		case !math.IsNaN(sc.Before.P99) && p.P99 > cfg.DetectFactor*sc.Before.P99:
			return "p99"
		}
		return ""
	}
	det := -1
	until := sc.To
	if next.Before(until) {
		until = next
	}
	for i := after; i < len(points) && points[i].mid().Before(until); i++ {
		if by := shows(points[i]); by != "" {
			det, sc.Detected, sc.DetectedBy = i, true, by
			sc.Detect = points[i].end().Sub(sc.From)
			break
		}
	}
	if !sc.Detected {
		return sc
	}
	// Throughput and failures are judged per interval. The p99 is judged
	// on the first interval of the Stable ones (recovery starts at a
	// second that is back) and on the median of their p99s, as the steady
	// p99 is a median of intervals' p99s too, not on each of them: at 20
	// req/s an interval's p99 is its slowest request, and requiring 5 in
	// a row under 1.2 x the median failed a CI run whose service was back
	// (1.3-2.1 ms against a steady 1.9 ms when run alone).
	band := (1 + cfg.Tolerance) * sc.Before.P99
	back := func(p Point) bool {
		return p.Throughput() >= (1-cfg.Tolerance)*sc.Before.Throughput && p.failShare() <= sc.Before.FailShare
	}
	latencyBack := func(win []Point) bool {
		if math.IsNaN(sc.Before.P99) {
			return true
		}
		var p99 []float64
		for _, p := range win {
			if math.IsNaN(p.P99) {
				return false
			}
			p99 = append(p99, p.P99)
		}
		return p99[0] <= band && median(p99) <= band
	}
	run := 0
	for i := det; i < len(points); i++ {
		if !back(points[i]) {
			run = 0
			continue
		}
		run++
		if run >= cfg.Stable && latencyBack(points[i-cfg.Stable+1:i+1]) {
			sc.Recovered = true
			sc.RecoveredAt = points[i-cfg.Stable+1].Start
			sc.MTTR = max(sc.RecoveredAt.Sub(sc.From), 0)
			return sc
		}
	}
	sc.MTTR = last.Sub(sc.From)
	return sc
}

// steadyBefore is the steady state of the intervals wholly within
// [from, fault).
func steadyBefore(points []Point, fault, from time.Time) Steady {
	s := Steady{From: from, To: fault, Throughput: math.NaN(), P99: math.NaN()}
	var tps, p99s []float64
	for _, p := range points {
		if p.Start.Before(from) || p.end().After(fault) || p.Dur <= 0 {
			continue
		}
		s.N++
		tps = append(tps, p.Throughput())
		if !math.IsNaN(p.P99) {
			p99s = append(p99s, p.P99)
		}
		s.FailShare = max(s.FailShare, p.failShare())
	}
	s.Throughput, s.P99 = median(tps), median(p99s)
	return s
}

// downtime is the length of the union of the detected scenarios'
// [fault, recovered) (to last when not recovered).
func downtime(scs []Scenario, last time.Time) time.Duration {
	type span struct{ a, b time.Time }
	var spans []span
	for _, sc := range scs {
		if !sc.Detected {
			continue
		}
		b := sc.RecoveredAt
		if !sc.Recovered {
			b = last
		}
		if b.After(sc.From) {
			spans = append(spans, span{sc.From, b})
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return x.a.Compare(y.a) })
	var total time.Duration
	var end time.Time
	for _, s := range spans {
		if s.a.Before(end) {
			s.a = end
		}
		if s.b.After(s.a) {
			total += s.b.Sub(s.a)
			end = s.b
		}
	}
	return total
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
