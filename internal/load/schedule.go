package load

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Schedule produces the intended start times of an open-loop arrival process
// as offsets from the start of the run. It is the one interface every arrival
// process implements (constant, Poisson; later steps or trace replay), in the
// spirit of a pacer: the engine asks for the next intended time and never
// changes it, so a slow target cannot move the schedule (seed-digest §1).
// Implementations are not safe for concurrent use; the engine serialises calls.
type Schedule interface {
	// Next returns the intended start of the next request, in nanoseconds
	// since the start of the run. Successive values never decrease.
	Next() int64
	String() string
}

// NewSchedule returns the arrival process named in the spec ("constant" or
// "poisson") at rate requests per second.
func NewSchedule(arrival string, rate float64, seed uint64) (Schedule, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("arrival rate must be a positive number of requests per second, got %v", rate)
	}
	switch arrival {
	case "constant":
		return &Constant{Rate: rate}, nil
	case "poisson", "":
		return &Poisson{Rate: rate, rng: rand.New(rand.NewPCG(seed, 0xa771a1))}, nil
	}
	return nil, fmt.Errorf("unknown arrival process %q: use constant or poisson", arrival)
}

// Constant spaces requests exactly 1/Rate apart: the k-th request (k = 0, 1,
// ...) is intended at k/Rate seconds. Computing k/Rate instead of summing
// the spacing keeps rounding error from accumulating over long runs.
type Constant struct {
	Rate float64
	k    int64
}

// Next implements Schedule.
func (c *Constant) Next() int64 {
	t := int64(float64(c.k) * 1e9 / c.Rate)
	c.k++
	return t
}

func (c *Constant) String() string { return fmt.Sprintf("constant(%g/s)", c.Rate) }

// Poisson is a Poisson arrival process: inter-arrival gaps are independent
// and exponentially distributed with mean 1/Rate (seed-digest §1, seed 001
// II-D). Deterministic for a given seed.
type Poisson struct {
	Rate float64
	rng  *rand.Rand
	t    float64 // current time in ns, kept in float64 so gaps below 1 ns are not lost
}

// Next implements Schedule.
func (p *Poisson) Next() int64 {
	t := p.t
	p.t += p.rng.ExpFloat64() * 1e9 / p.Rate
	return int64(t)
}

func (p *Poisson) String() string { return fmt.Sprintf("poisson(%g/s)", p.Rate) }
