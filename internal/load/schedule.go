package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Schedule produces the intended start times of an open-loop arrival process
// as offsets from the start of the run (the start of warmup). It is the one
// interface every arrival process implements (Constant, Poisson, Steps,
// Trace), in the spirit of a pacer: the engine is handed a Schedule, asks it
// for the next intended time and never changes that time, so a slow target
// cannot move the schedule and a deficit is never caught up in a burst
// (seed-digest §1).
//
// A Schedule value holds its position: give each run a new value.
// Implementations are not safe for concurrent use; the engine serialises
// calls to Next.
type Schedule interface {
	// Next returns the intended start of the next request, in nanoseconds
	// since the start of the run. Successive values never decrease;
	// math.MaxInt64 means that no request follows.
	Next() int64
	// Skip passes over the arrivals intended before t that Next has not
	// returned yet and says how many there were, by arithmetic rather than
	// one by one: the engine drops in bulk the requests it can no longer
	// send in time (engine.go, dropOverdue). Next then returns the first
	// arrival at or after t.
	Skip(t int64) int64
	// MeanRate is the mean intended rate in requests per second over
	// [from, to) since the start of the run: the expected number of
	// arrivals in the window divided by its length. It does not depend on
	// the schedule's position.
	MeanRate(from, to time.Duration) float64
	// String says what the schedule is, e.g. "poisson(200/s)" or
	// "constant steps(100/s for 30s, 300/s for 30s)".
	String() string
}

// Spacing is how arrivals are placed within a stretch of constant rate r.
type Spacing uint8

const (
	// Even spacing puts arrivals exactly 1/r apart.
	Even Spacing = iota
	// Exponential spacing draws independent gaps with mean 1/r: a Poisson
	// process (seed 001 II-D).
	Exponential
)

// String is the spec's name for the spacing: constant or poisson.
func (s Spacing) String() string {
	if s == Exponential {
		return "poisson"
	}
	return "constant"
}

// SpacingOf reads the spec's arrival name ("constant" or "poisson"; "" is
// poisson, the default).
func SpacingOf(arrival string) (Spacing, error) {
	switch arrival {
	case "constant":
		return Even, nil
	case "poisson", "":
		return Exponential, nil
	}
	return 0, fmt.Errorf("unknown arrival process %q: use constant or poisson", arrival)
}

// NewSchedule returns the arrival process named in the spec ("constant" or
// "poisson") at a fixed rate in requests per second: a Constant or a
// Poisson value.
func NewSchedule(arrival string, rate float64, seed uint64) (Schedule, error) {
	sp, err := SpacingOf(arrival)
	if err != nil {
		return nil, err
	}
	if err := checkRate(rate); err != nil {
		return nil, err
	}
	if sp == Even {
		return &Constant{Rate: rate}, nil
	}
	return &Poisson{Rate: rate, Seed: seed}, nil
}

func checkRate(rate float64) error {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return fmt.Errorf("arrival rate must be a positive number of requests per second, got %v", rate)
	}
	return nil
}

// newArrivalRand is the random source of a schedule's gaps; every Poisson
// schedule with the same seed draws the same gaps.
func newArrivalRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0xa771a1)) }

// maxArrivals bounds the arrivals a schedule hands out (2^53, where
// float64 stops counting exactly): a rate so high that a run would hold
// more is not one any engine paces, and the bound keeps the counts of a
// run's dropped requests far from overflowing.
const maxArrivals = 1 << 53

// at converts a time in nanoseconds held as float64 to int64, saturating at
// math.MaxInt64 ("never") instead of overflowing: a rate of 1e-300/s puts
// its second arrival beyond any time.
func at(ns float64) int64 {
	if !(ns < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(ns)
}

// Constant spaces requests exactly 1/Rate apart: the k-th request (k = 0, 1,
// ...) is intended at k/Rate seconds. Computing k/Rate instead of summing
// the spacing keeps rounding error from accumulating over long runs.
type Constant struct {
	Rate float64 // requests per second, > 0
	k    int64
}

// time is the intended start of arrival k.
func (c *Constant) time(k int64) int64 {
	if k >= maxArrivals {
		return math.MaxInt64
	}
	return at(float64(k) * 1e9 / c.Rate)
}

// Next implements Schedule.
func (c *Constant) Next() int64 {
	t := c.time(c.k)
	c.k++
	return t
}

// Skip implements Schedule: the first arrival at or after t is about
// k = t * Rate (an estimate corrected by a step or two for rounding).
func (c *Constant) Skip(t int64) int64 {
	k := c.k
	if c.time(k) >= t {
		return 0
	}
	g := math.Ceil(float64(t) * c.Rate / 1e9)
	if !(g < maxArrivals) {
		g = maxArrivals
	}
	n := max(int64(g), k+1)
	for n > k+1 && c.time(n-1) >= t {
		n--
	}
	for n < maxArrivals && c.time(n) < t {
		n++
	}
	c.k = n
	return n - k
}

// MeanRate implements Schedule.
func (c *Constant) MeanRate(from, to time.Duration) float64 { return c.Rate }

// Check reports a rate that is not a positive number.
func (c *Constant) Check() error { return checkRate(c.Rate) }

func (c *Constant) String() string { return fmt.Sprintf("constant(%g/s)", c.Rate) }

// Poisson is a Poisson arrival process: inter-arrival gaps are independent
// and exponentially distributed with mean 1/Rate (seed-digest §1, seed 001
// II-D); the first request is intended at the start of the run. The gaps
// are deterministic for a given Seed.
type Poisson struct {
	Rate float64 // requests per second, > 0
	Seed uint64
	rng  *rand.Rand
	t    float64 // current time in ns, kept in float64 so gaps below 1 ns are not lost
}

// Next implements Schedule.
func (p *Poisson) Next() int64 {
	if p.rng == nil {
		p.rng = newArrivalRand(p.Seed)
	}
	t := p.t
	p.t += p.rng.ExpFloat64() * 1e9 / p.Rate
	return at(t)
}

// Skip implements Schedule. The pending arrival at p.t is before t; the
// arrivals after it in (p.t, t) are Poisson with mean Rate (t - p.t), and
// by the memorylessness of the exponential gaps the first arrival after t
// is t plus a fresh gap: the same process as drawing every gap.
func (p *Poisson) Skip(t int64) int64 {
	if p.rng == nil {
		p.rng = newArrivalRand(p.Seed)
	}
	if !(p.t < float64(t)) {
		return 0
	}
	n := 1 + poissonCount(p.rng, (float64(t)-p.t)*p.Rate/1e9)
	p.t = float64(t) + p.rng.ExpFloat64()*1e9/p.Rate
	return n
}

// MeanRate implements Schedule.
func (p *Poisson) MeanRate(from, to time.Duration) float64 { return p.Rate }

// Check reports a rate that is not a positive number.
func (p *Poisson) Check() error { return checkRate(p.Rate) }

func (p *Poisson) String() string { return fmt.Sprintf("poisson(%g/s)", p.Rate) }
