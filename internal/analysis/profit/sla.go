// Package profit turns measured response times and throughputs into money
// (seed 003 §7.2.1, seed-digest §7): an SLA model gives every request a
// revenue (or a penalty) as a step function of its response time, a cost
// model prices each configuration per hour, and profit = revenue − cost,
// per run, then per configuration and workload level with a confidence
// interval over repetitions. The core is pure; FromResults is its driver.
package profit

import (
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Step is one step of the revenue function: a request answered within
// UpTo (inclusive) earns Dollars, unless an earlier step took it. UpTo 0
// marks the last step, which takes every slower request.
type Step struct {
	UpTo    time.Duration `json:"up_to_ns"`
	Dollars float64       `json:"dollars"`
}

// Steps is a revenue function of response time (seed 003 eq. 22):
//
//	rev(rt) = v        if rt ≤ t1
//	        = v − c_j  if t_j < rt ≤ t_{j+1}
//	        = p        otherwise (the last step, a penalty when negative)
//
// written as the list of (t_j, earning) in ascending t_j. Without a last
// step, a request slower than every UpTo earns nothing.
type Steps []Step

// CentsPerDollar converts the spec's (and seed 003's) cents.
const CentsPerDollar = 100

// Table16 is seed 003 Table 16: 0.0033 cent up to 1 s, then 0.0027,
// 0.0020, 0.0013, 0.0007 per further second, and a penalty of 0.0033 cent
// beyond 5 s.
func Table16() Steps {
	c := func(up time.Duration, cents float64) Step { return Step{UpTo: up, Dollars: cents / CentsPerDollar} }
	return Steps{c(time.Second, 0.0033), c(2*time.Second, 0.0027), c(3*time.Second, 0.0020),
		c(4*time.Second, 0.0013), c(5*time.Second, 0.0007), c(0, -0.0033)}
}

// Check says what is wrong with the steps, in one sentence.
func (s Steps) Check() error {
	if len(s) == 0 {
		return fmt.Errorf("the SLA has no steps; give at least one, e.g. {up_to: 1s, cents: 0.0033}")
	}
	var prev time.Duration
	for i, st := range s {
		if math.IsNaN(st.Dollars) || math.IsInf(st.Dollars, 0) {
			return fmt.Errorf("step %d earns %v; give a number", i+1, st.Dollars)
		}
		if st.UpTo == 0 {
			if i != len(s)-1 {
				return fmt.Errorf("step %d has no up_to but is not the last; only the last step may take every slower request", i+1)
			}
			continue
		}
		if st.UpTo < 0 || st.UpTo <= prev {
			return fmt.Errorf("step %d's up_to %v does not follow %v; give up_to in ascending order", i+1, st.UpTo, prev)
		}
		prev = st.UpTo
	}
	return nil
}

// Earn is what one request answered in rt earns.
func (s Steps) Earn(rt time.Duration) float64 {
	_, d := s.step(rt)
	return d
}

// step returns the index of the step rt falls in (len(s) when it is
// slower than every bounded step and there is no last step) and its
// earning.
func (s Steps) step(rt time.Duration) (int, float64) {
	for i, st := range s {
		if st.UpTo == 0 || rt <= st.UpTo {
			return i, st.Dollars
		}
	}
	return len(s), 0
}

// Main is the first step's earning: what a fast request earns (seed 003's
// v). Sensitivity analyses vary it.
func (s Steps) Main() float64 {
	if len(s) == 0 {
		return 0
	}
	return s[0].Dollars
}

// SLA is the whole revenue model: the default steps, steps of their own
// for some operations, and optional availability and staleness terms.
type SLA struct {
	Steps Steps            `json:"steps"`
	Ops   map[string]Steps `json:"ops,omitempty"`
	// ErrorDollars is earned per failed or dropped request (a penalty when
	// negative); nil = availability is not priced.
	ErrorDollars *float64 `json:"error_dollars,omitempty"`
	// StaleDollars is earned per stale read; nil = staleness is not priced.
	StaleDollars *float64 `json:"stale_dollars,omitempty"`
}

// DefaultSLA is Table16 for every operation, without penalty terms.
func DefaultSLA() SLA { return SLA{Steps: Table16()} }

// For returns the steps that price op.
func (s SLA) For(op string) (steps Steps, own bool) {
	if st, ok := s.Ops[op]; ok {
		return st, true
	}
	return s.Steps, false
}

// Check checks every step list.
func (s SLA) Check() error {
	if err := s.Steps.Check(); err != nil {
		return fmt.Errorf("sla.steps: %v", err)
	}
	for op, st := range s.Ops {
		if err := st.Check(); err != nil {
			return fmt.Errorf("sla.ops.%s: %v", op, err)
		}
	}
	return nil
}

// HistRevenue is what the requests recorded in one histogram earn.
type HistRevenue struct {
	Requests int64 `json:"requests"`
	// Dollars prices every request at its bucket's highest equivalent
	// value (the value HdrHistogram reports for a percentile), so it never
	// credits a request with a step it may have missed.
	Dollars float64 `json:"dollars"`
	// Min and Max bound the exact revenue: a bucket that straddles a step
	// boundary holds requests that may have earned either step. With 3
	// significant figures a bucket is at most 0.1% of its value wide, so
	// only requests within 0.1% of a boundary are uncertain.
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
	Straddling int64   `json:"straddling"` // requests in buckets across a boundary
	// MainRequests are the requests the first step of the default steps
	// paid for (the sensitivity to the main step's value needs them);
	// requests of an operation with its own steps are not counted.
	MainRequests int64 `json:"main_requests"`
}

// Add accumulates another histogram's revenue.
func (h *HistRevenue) Add(o HistRevenue) {
	h.Requests += o.Requests
	h.Dollars += o.Dollars
	h.Min += o.Min
	h.Max += o.Max
	h.Straddling += o.Straddling
	h.MainRequests += o.MainRequests
}

// Revenue sums count × step(value) over the histogram's buckets (seed 003
// eq. 23: provider revenue = Σ rev(rt_i)), with values in unit (the store
// records microseconds). It is exact to the histogram's precision: see
// HistRevenue. main says whether these are priced by the default steps
// (their first-step requests count as MainRequests).
func Revenue(h *hdrhistogram.Histogram, s Steps, unit time.Duration, main bool) HistRevenue {
	var out HistRevenue
	if h == nil {
		return out
	}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		n := float64(b.Count)
		iHi, hi := s.step(time.Duration(b.To) * unit)
		iLo, lo := s.step(time.Duration(b.From) * unit)
		out.Requests += b.Count
		out.Dollars += n * hi
		out.Min += n * math.Min(lo, hi)
		out.Max += n * math.Max(lo, hi)
		if iHi != iLo {
			out.Straddling += b.Count
		}
		if main && iHi == 0 {
			out.MainRequests += b.Count
		}
	}
	return out
}
