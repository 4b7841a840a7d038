// Package elasticity measures what adding or removing a cluster node
// during a run did to the service (seed 002 §III-A.3, seed-digest §5:
// "elasticity is the speed and performance impact of adding and removing
// servers"; after Kuhlenkamp et al., VLDB 2014). Analyze is a pure
// function of a run's per-interval timeline and its node changes;
// FromResults reads both from a results model.
//
// The run's measured phase is cut at every change's request time R1, R2,
// ... into windows W0 (to R1), W1 (R1 to R2), ..., Wn (Rn to the end); an
// interval belongs to the window it ends in, so the interval in which a
// change was requested counts after it. For change i:
//
//   - time to start = Started - Requested, time to serve = Done - Requested
//     (add: the node serves; remove: it is out and stopped);
//   - the steady state of a window is the median of its per-interval
//     throughput and the median of its per-interval p99 over its last
//     Config.Steady, counting only intervals that start once the window's
//     change was done (a new steady state begins when the node serves);
//   - before = the steady state of W(i-1), after = the steady state of Wi;
//   - back within x% (x = Config.Tolerance) means throughput ≥ (1-x) ×
//     after and p99 ≤ (1+x) × after: only a loss counts, not a gain;
//   - settle time of a metric = from Requested to the start of the first
//     interval of Wi, after the last excursion longer than
//     Config.Excursion intervals outside the band, that is inside it
//     (excursions of at most Config.Excursion intervals are noise, a
//     per-second p99 jumps); negative when the window ends in such an
//     excursion;
//   - the transition runs from Requested to the latest of Done and both
//     settle points (the window's end when a metric never settles);
//   - SLO seconds = the length of the transition's intervals that failed
//     the SLO rule (fewer than the SLO's share of offered requests within
//     its threshold, as the load-response table judges a level);
//   - latency excess = Σ max(0, p99 - after p99) × interval length over
//     the transition's intervals, in ms·s;
//   - gain per node = (after throughput - before throughput) / Δnodes with
//     Δnodes = +1 for an added node and -1 for a removed one, so a removal
//     that costs throughput shows a positive figure: the capacity one node
//     carried.
package elasticity

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Defaults of Config.
const (
	DefaultTolerance = 0.10
	DefaultSteady    = 10 * time.Second
	DefaultExcursion = 1
)

// Config sets the definitions' parameters; zero fields take the defaults.
type Config struct {
	// Tolerance is x of "back within x% of the new steady state", as a
	// fraction (0.10 = 10%).
	Tolerance float64
	// Steady is how much of the end of a window its steady state is the
	// median of.
	Steady time.Duration
	// Excursion is the longest run of intervals outside the band that
	// the settle test ignores, so that a single noisy interval does not
	// count as unsettled; 0 = the default, negative = none.
	Excursion int
}

func (c Config) withDefaults() (Config, error) {
	if c.Tolerance == 0 {
		c.Tolerance = DefaultTolerance
	}
	if c.Steady == 0 {
		c.Steady = DefaultSteady
	}
	switch {
	case c.Excursion == 0:
		c.Excursion = DefaultExcursion
	case c.Excursion < 0:
		c.Excursion = 0 // every interval counts
	}
	switch {
	case !(c.Tolerance > 0 && c.Tolerance < 1):
		return c, fmt.Errorf("elasticity: tolerance %v is outside (0, 1); give it as a fraction, e.g. 0.1 for 10%%", c.Tolerance)
	case c.Steady < 0:
		return c, fmt.Errorf("elasticity: steady window %v is negative; give the length of the end of a window to take the steady state from, e.g. 10s", c.Steady)
	}
	return c, nil
}

// Point is one interval of a run's measured phase, all operation types
// together.
type Point struct {
	Start      time.Time
	Dur        time.Duration
	Throughput float64 // successful requests per second
	P99        float64 // µs; NaN when no request succeeded
	SLOMiss    bool    // the interval failed the SLO rule (false without an SLO)
	// Offered is the requests due in the interval per second (answered,
	// failed or dropped); 0 when unknown.
	Offered float64
}

// Change is one node change on the run's timeline. Zero Started or Done
// mean the change never got there.
type Change struct {
	Action                   string // "add_node" or "remove_node"
	Node, Host               string
	Delta                    int // +1 added, -1 removed
	Requested, Started, Done time.Time
	BytesStreamed            int64 // -1 = unknown
	Error                    string
}

// Steady is a steady state: the medians over its N intervals, from From
// to To.
type Steady struct {
	From, To   time.Time
	N          int     // intervals
	Throughput float64 // req/s; NaN without intervals
	P99        float64 // µs; NaN without an interval with a p99
	Offered    float64 // req/s due, median; NaN when unknown
}

// Metrics are one change's elasticity figures. Durations that are unknown
// are negative; numbers that are unknown are NaN.
type Metrics struct {
	Change Change
	Served bool // the node served (add) or was out and stopped (remove)
	// ToStart = Started - Requested, ToServe = Done - Requested.
	ToStart, ToServe time.Duration
	Before, After    Steady
	// ThroughputSettle and P99Settle are from Requested to the first
	// interval from which the metric stayed within the tolerance of After;
	// negative when it never did within the window.
	ThroughputSettle, P99Settle time.Duration
	// TransitionEnd ends the transition [Requested, TransitionEnd).
	TransitionEnd time.Time
	// SLOSeconds is how long the transition failed the SLO; NaN without an
	// SLO.
	SLOSeconds float64
	// LatencyExcess is the integral of p99 above After.P99 over the
	// transition, ms·s.
	LatencyExcess float64
	// GainPerNode = (After.Throughput - Before.Throughput) / Delta.
	GainPerNode float64
	Notes       []string
}

// Transition is the transition's length.
func (m Metrics) Transition() time.Duration { return m.TransitionEnd.Sub(m.Change.Requested) }

// Settled reports whether both metrics settled within the window.
func (m Metrics) Settled() bool { return m.ThroughputSettle >= 0 && m.P99Settle >= 0 }

// Result is the elasticity of one run.
type Result struct {
	Config  Config
	Changes []Metrics // in request order; none for a run without changes
	Notes   []string
}

// Input is one run's timeline and changes.
type Input struct {
	Points  []Point  // in time order
	Changes []Change // in request order
	// HasSLO says whether Point.SLOMiss was judged (the treatment has an
	// SLO).
	HasSLO bool
	// Offered is the open loop's offered rate (req/s); 0 for a closed
	// loop. When throughput matches it before and after a change, the
	// change's capacity gain cannot be seen.
	Offered float64
}

// Analyze computes the elasticity metrics of every change of a run.
func Analyze(in Input, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	res := Result{Config: cfg}
	if len(in.Changes) == 0 {
		return res, nil
	}
	if len(in.Points) == 0 {
		return Result{}, fmt.Errorf("elasticity: the run has %d node changes but no measured intervals; it cannot be judged", len(in.Changes))
	}
	for i := 1; i < len(in.Points); i++ {
		if in.Points[i].Start.Before(in.Points[i-1].Start) {
			return Result{}, fmt.Errorf("elasticity: interval %d starts before interval %d; pass the intervals in time order", i, i-1)
		}
	}
	for i := 1; i < len(in.Changes); i++ {
		if in.Changes[i].Requested.Before(in.Changes[i-1].Requested) {
			return Result{}, fmt.Errorf("elasticity: change %d was requested before change %d; pass the changes in request order", i, i-1)
		}
	}
	last := in.Points[len(in.Points)-1]
	start, end := in.Points[0].Start, last.Start.Add(last.Dur)
	// bounds[i] .. bounds[i+1] is window Wi (W0 starts with the run).
	bounds := []time.Time{start}
	for _, c := range in.Changes {
		bounds = append(bounds, c.Requested)
	}
	bounds = append(bounds, end)
	steady := make([]Steady, len(bounds)-1)
	for w := range steady {
		var done time.Time // a window's steady state begins when its change is done
		if w > 0 {
			if c := in.Changes[w-1]; c.Error == "" {
				done = c.Done
			}
		}
		steady[w] = steadyOf(in.Points, bounds[w], bounds[w+1], cfg.Steady, done)
	}
	for i, c := range in.Changes {
		m := metrics(in, cfg, c, steady[i], steady[i+1], bounds[i+1], bounds[i+2])
		res.Changes = append(res.Changes, m)
	}
	return res, nil
}

// metrics is one change's figures; its window holds the intervals that
// end in (from, to].
func metrics(in Input, cfg Config, c Change, before, after Steady, from, to time.Time) Metrics {
	m := Metrics{Change: c, Before: before, After: after, ToStart: -1, ToServe: -1,
		ThroughputSettle: -1, P99Settle: -1, SLOSeconds: math.NaN(), GainPerNode: math.NaN()}
	m.Served = c.Error == "" && !c.Done.IsZero()
	if !c.Started.IsZero() {
		m.ToStart = c.Started.Sub(c.Requested)
	}
	if !c.Done.IsZero() {
		m.ToServe = c.Done.Sub(c.Requested)
	}
	if !m.Served {
		what := "never served"
		if c.Delta < 0 {
			what = "was never out and stopped"
		}
		n := fmt.Sprintf("%s %s", nodeName(c), what)
		if c.Error != "" {
			n += ": " + c.Error
		}
		m.Notes = append(m.Notes, n)
	}
	if last := in.Points[len(in.Points)-1]; c.Requested.Before(in.Points[0].Start) || !c.Requested.Before(last.Start.Add(last.Dur)) {
		m.Notes = append(m.Notes, fmt.Sprintf("the change to %s was requested outside the measured intervals: its before and after states are not both measured", nodeName(c)))
	}
	win := window(in.Points, from, to)
	if len(win) == 0 {
		m.TransitionEnd = to
		m.LatencyExcess = math.NaN()
		m.Notes = append(m.Notes, fmt.Sprintf("no whole interval starts between the change to %s and the end of its window: nothing to measure", nodeName(c)))
		return m
	}
	tput := make([]float64, len(win))
	p99 := make([]float64, len(win))
	for k, p := range win {
		tput[k], p99[k] = p.Throughput, p.P99
	}
	// Only a loss counts: throughput below, or p99 above, the band.
	m.ThroughputSettle = settle(win, tput, func(x float64) bool { return x >= (1-cfg.Tolerance)*after.Throughput }, cfg, c.Requested)
	m.P99Settle = settle(win, p99, func(x float64) bool { return x <= (1+cfg.Tolerance)*after.P99 }, cfg, c.Requested)
	m.TransitionEnd = c.Requested
	if m.Served && c.Done.After(m.TransitionEnd) {
		m.TransitionEnd = c.Done
	}
	for _, s := range []time.Duration{m.ThroughputSettle, m.P99Settle} {
		switch {
		case s < 0:
			m.TransitionEnd = to
		case c.Requested.Add(s).After(m.TransitionEnd):
			m.TransitionEnd = c.Requested.Add(s)
		}
	}
	if !m.Served || m.TransitionEnd.After(to) {
		m.TransitionEnd = to
	}
	var slo, excess float64
	for _, p := range win {
		if !p.Start.Before(m.TransitionEnd) {
			break
		}
		if p.SLOMiss {
			slo += p.Dur.Seconds()
		}
		if over := p.P99 - after.P99; over > 0 {
			excess += over / 1000 * p.Dur.Seconds()
		}
	}
	if in.HasSLO {
		m.SLOSeconds = slo
	}
	m.LatencyExcess = excess
	if math.IsNaN(after.P99) {
		m.LatencyExcess = math.NaN()
	}
	if c.Delta != 0 {
		m.GainPerNode = (after.Throughput - before.Throughput) / float64(c.Delta)
	}
	// A scheduled load (steps, a trace) can change between the two steady
	// states; their throughputs then answer different loads, and their
	// difference is no node's capacity.
	loadMoved := !math.IsNaN(before.Offered) && !math.IsNaN(after.Offered) && !near(after.Offered, before.Offered, cfg.Tolerance)
	if loadMoved {
		m.GainPerNode = math.NaN()
		m.Notes = append(m.Notes, fmt.Sprintf("the offered load moved from %.1f to %.1f req/s between the steady states before and after the change to %s: their throughputs answer different loads, so the gain per node is undefined",
			before.Offered, after.Offered, nodeName(c)))
	}
	short := m.Served && after.To.Sub(after.From) < cfg.Steady
	switch {
	case m.ThroughputSettle < 0 || m.P99Settle < 0:
		m.Notes = append(m.Notes, fmt.Sprintf("after the change to %s, %s was still more than %.0f%% worse than the new steady state when the window ended: the transition runs to the window's end",
			nodeName(c), unsettled(m), 100*cfg.Tolerance))
	case short:
	case m.TransitionEnd.After(after.From):
		m.Notes = append(m.Notes, fmt.Sprintf("the transition after the change to %s reaches into the last %v of its window, which its new steady state is taken from: leave more time after the change",
			nodeName(c), after.To.Sub(after.From).Round(100*time.Millisecond)))
	}
	if short {
		m.Notes = append(m.Notes, fmt.Sprintf("the new steady state after the change to %s rests on %s between the change being done and the window's end, less than the %v asked for: leave more time after the change",
			nodeName(c), plural(after.N, "interval"), cfg.Steady))
	}
	if !loadMoved && in.Offered > 0 && near(before.Throughput, in.Offered, cfg.Tolerance) && near(after.Throughput, in.Offered, cfg.Tolerance) {
		m.Notes = append(m.Notes, fmt.Sprintf("throughput matched the offered %g req/s before and after the change to %s: the load, not the cluster, bounded it, so the gain per node is not the capacity a node adds; offer more than the cluster's capacity to measure it",
			in.Offered, nodeName(c)))
	}
	return m
}

// settle is the time from req to the first interval of win inside the
// band (ok) after the last run of more than cfg.Excursion intervals
// outside it; -1 when the window ends in such a run (or the target is
// unknown).
func settle(win []Point, xs []float64, ok func(float64) bool, cfg Config, req time.Time) time.Duration {
	lastOut, run := -1, 0
	for k, x := range xs {
		if ok(x) {
			run = 0
			continue
		}
		if run++; run > cfg.Excursion {
			lastOut = k
		}
	}
	for k := lastOut + 1; k < len(xs); k++ {
		if ok(xs[k]) {
			return max(0, win[k].Start.Sub(req))
		}
	}
	return -1
}

// window returns the points that end in (from, to].
func window(ps []Point, from, to time.Time) []Point {
	end := func(i int) time.Time { return ps[i].Start.Add(ps[i].Dur) }
	i := sort.Search(len(ps), func(i int) bool { return end(i).After(from) })
	j := sort.Search(len(ps), func(i int) bool { return end(i).After(to) })
	if j < i {
		return nil // an empty window: to is before from
	}
	return ps[i:j]
}

// steadyOf is the steady state of the window (from, to]: the medians over
// its intervals that end in its last span and start at or after done
// (when done is set).
func steadyOf(ps []Point, from, to time.Time, span time.Duration, done time.Time) Steady {
	s := Steady{From: from, To: to, Throughput: math.NaN(), P99: math.NaN(), Offered: math.NaN()}
	if to.Sub(from) > span {
		s.From = to.Add(-span)
	}
	var tput, p99, offered []float64
	for _, p := range window(ps, s.From, to) {
		if !done.IsZero() && p.Start.Before(done) {
			continue
		}
		if s.N == 0 && p.Start.After(s.From) {
			s.From = p.Start
		}
		s.N++
		tput, p99 = append(tput, p.Throughput), append(p99, p.P99)
		if p.Offered > 0 {
			offered = append(offered, p.Offered)
		}
	}
	s.Throughput, s.P99, s.Offered = median(tput), median(p99), median(offered)
	return s
}

// median of the values that are not NaN; NaN when there are none.
func median(xs []float64) float64 {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func near(x, target, tol float64) bool {
	return !math.IsNaN(x) && math.Abs(x-target) <= tol*math.Abs(target)
}

func unsettled(m Metrics) string {
	switch {
	case m.ThroughputSettle < 0 && m.P99Settle < 0:
		return "throughput and p99"
	case m.ThroughputSettle < 0:
		return "throughput"
	}
	return "p99"
}

func nodeName(c Change) string {
	if c.Node == "" {
		return "a node"
	}
	return c.Node
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
