package monitor

import (
	"sync"
	"time"
)

// Source produces samples for the interval since its previous call. The
// first call only primes counters and may return nothing.
type Source interface {
	Sample(at time.Time) ([]Sample, error)
}

// Runner samples a Source on interval boundaries of a clock shared with the
// load engine: boundary k is origin + k*interval, where origin is the
// engine's run start, so that resource intervals line up with latency
// intervals (same clock, same boundaries). Each batch of samples is handed
// to sink with its Start set to the boundary that opened the interval.
type Runner struct {
	src      Source
	interval time.Duration
	sink     func([]Sample) error

	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// NewRunner returns a runner; Start begins sampling.
func NewRunner(src Source, interval time.Duration, sink func([]Sample) error) *Runner {
	return &Runner{src: src, interval: interval, sink: sink, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start primes the source and samples at every boundary after origin until
// Stop. It returns at once: the load engine calls it on its clock's start,
// and reading /proc there would delay the first requests.
func (r *Runner) Start(origin time.Time) {
	go r.loop(origin)
}

func (r *Runner) loop(origin time.Time) {
	defer close(r.done)
	_, _ = r.src.Sample(time.Now()) // prime the counters
	timer := time.NewTimer(time.Until(origin.Add(r.interval)))
	defer timer.Stop()
	prev := int64(0) // boundary of the previous sample (the priming one at first)
	for k := int64(1); ; k++ {
		select {
		case <-r.stop:
			return
		case <-timer.C:
		}
		samples, err := r.src.Sample(time.Now())
		// The counters cover everything since the previous sample: one
		// interval normally, several when boundaries were skipped.
		opened := origin.Add(time.Duration(prev) * r.interval)
		for i := range samples {
			samples[i].Start = opened
			samples[i].Period = time.Duration(k-prev) * r.interval
		}
		prev = k
		if err == nil && len(samples) > 0 {
			err = r.sink(samples)
		}
		if err != nil {
			r.mu.Lock()
			if r.err == nil {
				r.err = err
			}
			r.mu.Unlock()
		}
		// Skip boundaries that already passed (a slow sink or a suspended
		// process) rather than sampling twice in a row.
		next := k + 1
		if late := time.Since(origin) - time.Duration(next)*r.interval; late > 0 {
			next += int64(late/r.interval) + 1
			k = next - 1
		}
		timer.Reset(time.Until(origin.Add(time.Duration(next) * r.interval)))
	}
}

// Stop ends sampling and returns the first error the source or sink met.
// The interval in progress is not sampled: a partial interval would have a
// different length from its neighbours.
func (r *Runner) Stop() error {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
