package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
)

// queueServer simulates a server of known capacity without a network: one
// FIFO queue served at capacity requests per second (deterministic service
// time 1/capacity), fed by a Poisson arrival process at the window's rate.
// Below capacity latency stays near base; above it the queue, and with it
// latency, grows through the window, which is the "transition state" seed
// 004 §3.1.1 expects of a real server. Each window starts with an empty
// queue (the engine drains between windows). Deterministic for a seed.
type queueServer struct {
	capacity float64       // C, requests per second
	base     time.Duration // latency of an unqueued request (network + work)
	// clientCap, when > 0, is the most requests per second the simulated
	// client can send; the rest of the schedule is dropped.
	clientCap float64
	// errAbove, when > 0, is the share of requests that fail at once when
	// the rate is above capacity (a server that sheds load quickly).
	errAbove float64
	seed     uint64
	calls    uint64
	rates    []float64
}

func (s *queueServer) RunWindow(ctx context.Context, rate float64, dur time.Duration) (WindowResult, error) {
	s.rates = append(s.rates, rate)
	rng := rand.New(rand.NewPCG(s.seed, s.calls))
	s.calls++
	n := int(dur / time.Second)
	w := WindowResult{Start: time.Unix(int64(s.calls)*100, 0), Seconds: make([]SecondResult, n)}
	for i := range w.Seconds {
		w.Seconds[i].Hist = load.NewHistogram()
	}
	end := dur.Seconds()
	service := 1 / s.capacity
	free := 0.0
	var sent, done int64
	for t := rng.ExpFloat64() / rate; t < end; t += rng.ExpFloat64() / rate {
		if s.clientCap > 0 && rate > s.clientCap && rng.Float64() > s.clientCap/rate {
			w.Seconds[int(t)].Dropped++
			continue
		}
		sent++
		if s.errAbove > 0 && rate > s.capacity && rng.Float64() < s.errAbove {
			w.Seconds[int(t)].Errors++
			continue
		}
		start := math.Max(t, free)
		free = start + service
		lat := free - t + s.base.Seconds()
		sec := &w.Seconds[min(int(free), n-1)]
		sec.Completed++
		_ = sec.Hist.RecordValue(int64(lat * 1e6))
		if free < end {
			done++
		}
	}
	w.Offered = float64(sent) / end
	w.Achieved = float64(done) / end
	return w, nil
}

// stepServer answers every request of a window in fast when the rate is at
// most capacity and in slow otherwise, with constant arrivals: a server
// whose answers are known exactly, for hand-computed window sequences.
// fastShare, when in (0, 1), makes only that share of requests fast at
// rates from slowFrom up (a server whose median stays low while its tail
// does not).
type stepServer struct {
	capacity   float64
	fast, slow time.Duration
	fastShare  float64
	slowFrom   float64
	errors     bool // every request fails
	limited    bool // the runner reports the client as the limit
	rates      []float64
}

func (s *stepServer) RunWindow(ctx context.Context, rate float64, dur time.Duration) (WindowResult, error) {
	s.rates = append(s.rates, rate)
	n := int(dur / time.Second)
	w := WindowResult{Seconds: make([]SecondResult, n), Offered: rate, Achieved: rate, ClientLimited: s.limited}
	if s.limited {
		w.Note = "client CPU saturated"
	}
	perSec := int64(math.Round(rate))
	if perSec == 0 {
		perSec = 1
	}
	for i := range w.Seconds {
		h := load.NewHistogram()
		w.Seconds[i].Hist = h
		if s.errors {
			w.Seconds[i].Errors = perSec
			w.ErrorKinds = map[string]int64{"connection": perSec * int64(n)}
			continue
		}
		w.Seconds[i].Completed = perSec
		lat := s.fast
		if rate > s.capacity {
			lat = s.slow
		}
		fastN := perSec
		if s.fastShare > 0 && rate >= s.slowFrom {
			fastN = int64(math.Round(s.fastShare * float64(perSec)))
		}
		_ = h.RecordValues(lat.Microseconds(), fastN)
		_ = h.RecordValues(s.slow.Microseconds(), perSec-fastN)
	}
	return w, nil
}

// scriptedRTT returns the scripted RTTs in order, then rest forever. Run
// calls it once for the baseline, then before and after every window.
type scriptedRTT struct {
	script []time.Duration
	rest   time.Duration
	calls  int
}

func (m *scriptedRTT) Measure(context.Context) (time.Duration, error) {
	m.calls++
	if m.calls <= len(m.script) {
		return m.script[m.calls-1], nil
	}
	return m.rest, nil
}

// simConfig is the default configuration without in-window RTT sampling,
// which would depend on wall time, and without the baseline window: the
// tests that use it check seed 004's own sequence of windows, whose pass
// rule is RTT + m. defaultSim keeps the baseline.
func simConfig() Config {
	c := defaultSim()
	c.BaselineWindow = 0
	return c
}

// defaultSim is the default configuration without in-window RTT sampling.
func defaultSim() Config {
	c := DefaultConfig()
	c.RTTEvery = 0
	return c
}

// driftServer is a fluid queue with constant arrivals: below capacity
// every request takes base; above it the backlog grows by rate - capacity
// requests per second, so a request ending in second i waited i x (rate -
// capacity)/capacity seconds more (its latency rises steadily through the
// window, from the first second to the last).
type driftServer struct {
	capacity float64
	base     time.Duration
	rates    []float64
}

func (s *driftServer) RunWindow(ctx context.Context, rate float64, dur time.Duration) (WindowResult, error) {
	s.rates = append(s.rates, rate)
	n := int(dur / time.Second)
	w := WindowResult{Seconds: make([]SecondResult, n), Offered: rate, Achieved: math.Min(rate, s.capacity)}
	growth := math.Max(0, (rate-s.capacity)/s.capacity) // seconds of wait added per second
	perSec := max(int64(math.Round(rate)), 1)
	for i := range w.Seconds {
		h := load.NewHistogram()
		w.Seconds[i].Hist, w.Seconds[i].Completed = h, perSec
		for k := int64(0); k < perSec; k++ {
			at := float64(i) + float64(k)/float64(perSec) // when the request was sent
			_ = h.RecordValue(s.base.Microseconds() + int64(growth*at*1e6))
		}
	}
	return w, nil
}

// scriptedRunner returns its windows in order (for the baseline's rules);
// after the script it repeats the last one.
type scriptedRunner struct {
	script []WindowResult
	calls  int
	rates  []float64
}

func (r *scriptedRunner) RunWindow(ctx context.Context, rate float64, dur time.Duration) (WindowResult, error) {
	r.rates = append(r.rates, rate)
	w := r.script[min(r.calls, len(r.script)-1)]
	r.calls++
	return w, nil
}

// window of n seconds each with the given successes of latency lat and
// errors.
func windowOf(n int, ok, errs int64, lat time.Duration) WindowResult {
	w := WindowResult{Seconds: make([]SecondResult, n)}
	for i := range w.Seconds {
		h := load.NewHistogram()
		_ = h.RecordValues(lat.Microseconds(), ok)
		w.Seconds[i] = SecondResult{Completed: ok, Errors: errs, Hist: h}
	}
	if errs > 0 {
		w.ErrorKinds = map[string]int64{"refused": errs * int64(n)}
	}
	return w
}
