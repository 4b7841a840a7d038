package load

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Steps is a rate that changes in steps over the run: Steps[0].Rate
// requests per second for Steps[0].For from the start of the run (the start
// of warmup), then Steps[1].Rate for Steps[1].For, and so on; the last
// step's rate holds until the run ends. A step may have rate 0: nothing is
// sent during it, and the run still lasts its phases. Within a step the
// arrivals are evenly or exponentially spaced (see piecewise for the maths).
type Steps struct {
	Steps   []Step
	Spacing Spacing
	Seed    uint64 // exponential spacing: the gaps are the same for the same seed
	pw      piecewise
}

// Step is one step of a Steps schedule.
type Step struct {
	Rate float64       // requests per second, >= 0
	For  time.Duration // > 0
}

// Next implements Schedule.
func (s *Steps) Next() int64 { s.init(); return s.pw.next() }

// Skip implements Schedule.
func (s *Steps) Skip(t int64) int64 { s.init(); return s.pw.skip(t) }

// MeanRate implements Schedule.
func (s *Steps) MeanRate(from, to time.Duration) float64 { s.init(); return s.pw.meanRate(from, to) }

func (s *Steps) init() {
	if s.pw.segs != nil {
		return
	}
	segs := make([]segment, len(s.Steps))
	var at time.Duration
	for i, st := range s.Steps {
		segs[i] = segment{start: int64(at), rate: st.Rate}
		at += st.For
	}
	s.pw.start(segs, s.Spacing, s.Seed)
}

// Check reports the first step that is not a rate held for a positive time.
func (s *Steps) Check() error {
	if len(s.Steps) == 0 {
		return errors.New("a steps schedule needs at least one step")
	}
	for i, st := range s.Steps {
		if err := checkSegmentRate(st.Rate); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
		if st.For <= 0 {
			return fmt.Errorf("step %d: its duration must be positive, got %v", i+1, st.For)
		}
	}
	return nil
}

// String lists the steps, e.g. "poisson steps(100/s for 30s, 300/s for 30s)".
func (s *Steps) String() string {
	const show = 8
	parts := make([]string, 0, min(len(s.Steps), show)+1)
	for i, st := range s.Steps {
		if i == show {
			parts = append(parts, fmt.Sprintf("%d more", len(s.Steps)-show))
			break
		}
		parts = append(parts, fmt.Sprintf("%g/s for %v", st.Rate, st.For))
	}
	return fmt.Sprintf("%v steps(%s)", s.Spacing, strings.Join(parts, ", "))
}

// Trace replays recorded rates: Points[i].Rate requests per second from
// Points[i].At (an offset from the start of the run) until Points[i+1].At;
// the last rate holds until the run ends, and before the first point
// nothing is sent. Within each stretch the arrivals are evenly or
// exponentially spaced (see piecewise for the maths). ParseTrace reads the
// points from a CSV file.
type Trace struct {
	Name    string // where the points came from (a file name), for String
	Points  []TracePoint
	Spacing Spacing
	Seed    uint64 // exponential spacing: the gaps are the same for the same seed
	pw      piecewise
}

// TracePoint is one row of a trace: the rate from At on.
type TracePoint struct {
	At   time.Duration // since the start of the run, >= 0
	Rate float64       // requests per second, >= 0
}

// Next implements Schedule.
func (t *Trace) Next() int64 { t.init(); return t.pw.next() }

// Skip implements Schedule.
func (t *Trace) Skip(before int64) int64 { t.init(); return t.pw.skip(before) }

// MeanRate implements Schedule.
func (t *Trace) MeanRate(from, to time.Duration) float64 { t.init(); return t.pw.meanRate(from, to) }

func (t *Trace) init() {
	if t.pw.segs != nil {
		return
	}
	segs := make([]segment, 0, len(t.Points)+1)
	if len(t.Points) == 0 || t.Points[0].At > 0 {
		segs = append(segs, segment{}) // nothing before the first point
	}
	for _, p := range t.Points {
		segs = append(segs, segment{start: int64(p.At), rate: p.Rate})
	}
	t.pw.start(segs, t.Spacing, t.Seed)
}

// Check reports the first point that is out of order or has a bad rate.
func (t *Trace) Check() error {
	if len(t.Points) == 0 {
		return errors.New("a trace needs at least one row")
	}
	for i, p := range t.Points {
		if err := checkSegmentRate(p.Rate); err != nil {
			return fmt.Errorf("row %d: %w", i+1, err)
		}
		if p.At < 0 || (i > 0 && p.At <= t.Points[i-1].At) {
			return fmt.Errorf("row %d: its time %v must be after the previous row's and not negative", i+1, p.At)
		}
	}
	return nil
}

// String names the trace and its extent, e.g.
// "poisson trace(load.csv: 3 rows from 0s to 1m0s, 0 to 300/s)".
func (t *Trace) String() string {
	if len(t.Points) == 0 {
		return fmt.Sprintf("%v trace(%s: no rows)", t.Spacing, t.Name)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range t.Points {
		lo, hi = min(lo, p.Rate), max(hi, p.Rate)
	}
	rows := "rows"
	if len(t.Points) == 1 {
		rows = "row"
	}
	return fmt.Sprintf("%v trace(%s: %d %s from %v to %v, %g to %g/s)", t.Spacing, t.Name, len(t.Points), rows,
		t.Points[0].At, t.Points[len(t.Points)-1].At, lo, hi)
}

func checkSegmentRate(r float64) error {
	if !(r >= 0) || math.IsInf(r, 0) {
		return fmt.Errorf("the rate must be 0 or a positive number of requests per second, got %v", r)
	}
	return nil
}

// segment is a stretch of constant rate, from start to the next segment's
// start (the last one never ends).
type segment struct {
	start int64   // ns since the start of the run
	rate  float64 // requests per second
	cum   float64 // Λ(start): the arrivals expected before start
}

// piecewise places arrivals under a piecewise constant rate λ(t) = r_i for
// s_i <= t < s_{i+1}. Its cumulative intensity is
//
//	Λ(t) = ∫_0^t λ(u) du = Λ(s_i) + r_i (t - s_i)   for s_i <= t < s_{i+1},
//
// the number of arrivals expected before t. Arrival k is intended at
//
//	t_k = Λ⁻¹(y_k) = s_i + (y_k - Λ(s_i)) / r_i   where Λ(s_i) <= y_k < Λ(s_{i+1}),
//
// the earliest time Λ reaches y_k (Λ is flat over a zero-rate segment, which
// therefore gets no arrivals). Even spacing takes y_k = k: arrivals are
// exactly 1/r_i apart within a segment, and segment i holds
// ⌈Λ(s_{i+1})⌉ - ⌈Λ(s_i)⌉ arrivals, r_i (s_{i+1} - s_i) when the Λ are whole
// numbers. Exponential spacing takes y_0 = 0 and y_{k+1} = y_k + E_k with
// E_k ~ Exp(1): by the time-rescaling theorem the arrivals are a Poisson
// process of rate λ(t), so segment i's count is Poisson with mean
// r_i (s_{i+1} - s_i). Both match Constant and Poisson when there is one
// segment. t_k depends only on k and the draws, never on when earlier
// requests were sent, so a stall is never caught up in a burst
// (seed-digest §1). The mean rate over [a, b) is (Λ(b) - Λ(a)) / (b - a).
type piecewise struct {
	segs []segment
	i    int        // the segment of the last arrival
	y    float64    // y of the next arrival
	last int64      // the last arrival, so that rounding never goes backwards
	rng  *rand.Rand // nil: even spacing
}

// start fills in Λ at each segment's start and resets the position.
func (p *piecewise) start(segs []segment, sp Spacing, seed uint64) {
	cum := 0.0
	for i := range segs {
		segs[i].cum = cum
		if i+1 < len(segs) {
			cum += segs[i].rate * float64(segs[i+1].start-segs[i].start) / 1e9
		}
	}
	*p = piecewise{segs: segs}
	if sp == Exponential {
		p.rng = newArrivalRand(seed)
	}
}

func (p *piecewise) next() int64 {
	if len(p.segs) == 0 {
		return math.MaxInt64
	}
	y := p.y
	if p.rng != nil {
		p.y += p.rng.ExpFloat64()
	} else {
		p.y++
	}
	for p.i+1 < len(p.segs) && p.segs[p.i+1].cum <= y {
		p.i++
	}
	s := &p.segs[p.i]
	if s.rate == 0 {
		return math.MaxInt64 // the last segment sends nothing: no arrival follows
	}
	t := float64(s.start) + (y-s.cum)*1e9/s.rate
	if t >= math.MaxInt64 {
		return math.MaxInt64
	}
	p.last = max(p.last, int64(t))
	return p.last
}

// skip passes over the arrivals before t: those with y_k < Λ(t). Even
// spacing has ⌈Λ(t) - y⌉ of them. Exponential spacing has the pending one
// plus a Poisson number with mean Λ(t) - y, and the next y is Λ(t) plus a
// fresh Exp(1) draw (the gaps are memoryless), so skipping leaves the same
// process as drawing every gap.
func (p *piecewise) skip(t int64) int64 {
	if len(p.segs) == 0 {
		return 0
	}
	target := p.cumAt(t)
	if !(p.y < target) {
		return 0
	}
	var n int64
	if p.rng == nil {
		n = int64(min(math.Ceil(target-p.y), maxArrivals))
		p.y += float64(n)
	} else {
		n = 1 + poissonCount(p.rng, target-p.y)
		p.y = target + p.rng.ExpFloat64()
	}
	return n
}

// cumAt is Λ(t).
func (p *piecewise) cumAt(t int64) float64 {
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].start > t }) - 1
	if i < 0 {
		return 0
	}
	s := p.segs[i]
	return s.cum + s.rate*float64(t-s.start)/1e9
}

func (p *piecewise) meanRate(from, to time.Duration) float64 {
	if len(p.segs) == 0 {
		return 0
	}
	if to <= from {
		i := max(sort.Search(len(p.segs), func(i int) bool { return p.segs[i].start > int64(from) })-1, 0)
		return p.segs[i].rate
	}
	return (p.cumAt(int64(to)) - p.cumAt(int64(from))) / (to - from).Seconds()
}
