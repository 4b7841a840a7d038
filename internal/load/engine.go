// Package load is Headroom's load engine: it issues operations from a
// workload generator against a target in an open loop (requests arrive on a
// schedule, independent of responses) or a closed loop (N clients, each
// waiting for its response and an optional think time), and records latency
// per operation type and per interval in HdrHistograms.
//
// Measurement rules (seed-digest §1): in the open loop every request has an
// intended start time fixed by the arrival schedule, and its latency is
// measured from that time, so a stalled target cannot hide its stall
// (coordinated omission). A request that cannot start on time is counted as
// late; one that cannot start within drop_after of its intended time is not
// sent at all and is counted as dropped. The engine never catches up a
// deficit with a burst beyond that bound.
package load

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Config is one run's load.
type Config struct {
	Model string // "open" or "closed"
	// Schedule is the open loop's arrival schedule, a new value for each
	// run (it advances as the run reads it): Constant, Poisson, Steps or
	// Trace.
	Schedule    Schedule
	Clients     int           // closed: number of clients
	ThinkTime   time.Duration // closed: mean exponential think time; 0 = none
	MaxInFlight int           // open: concurrent request slots
	LateAfter   time.Duration // open: lateness beyond which a request counts as late
	DropAfter   time.Duration // open: lateness beyond which a request is dropped
	Timeout     time.Duration // per request
	Warmup      time.Duration // rounded up to whole intervals
	Measure     time.Duration
	Interval    time.Duration
	Seed        uint64 // closed: think times (the open loop's schedule has its own seed)
	// Ops lists the operation types of the workload mix, so that intervals in
	// which an operation completed nothing are still reported (as zero).
	Ops []workload.OpType
	// Started, when set, is called with the run's start time (interval 0's
	// boundary) before the first request, so that resource monitors can
	// sample on the same interval boundaries.
	Started func(t0 time.Time)
	// InProcess says the target runs inside this process, so that the
	// client-limit verdict separates the engine's CPU from the target's;
	// Percentile is the latency percentile the run is judged by (the
	// SLO's; 0 = 99). See verdict.go.
	InProcess  bool
	Percentile float64
}

// earlyTolerance: a worker whose next request is due within this much time
// starts it at once instead of sleeping, because a sleep that short would
// overshoot by more than it waits. Latency is then measured from the actual
// start, never from a later intended time, so it is not understated.
const earlyTolerance = 20 * time.Microsecond

// Validate reports the first problem with c in one sentence.
func (c Config) Validate() error {
	switch c.Model {
	case "open":
		if c.Schedule == nil {
			return errors.New("open loop needs an arrival schedule")
		}
		if s, ok := c.Schedule.(interface{ Check() error }); ok {
			if err := s.Check(); err != nil {
				return fmt.Errorf("arrival schedule %v: %w", c.Schedule, err)
			}
		}
		if c.MaxInFlight < 1 {
			return fmt.Errorf("max_in_flight must be at least 1, got %d", c.MaxInFlight)
		}
		if c.DropAfter <= c.LateAfter {
			return fmt.Errorf("drop_after (%v) must be longer than late_after (%v)", c.DropAfter, c.LateAfter)
		}
	case "closed":
		if c.Clients < 1 {
			return fmt.Errorf("closed loop needs at least 1 client, got %d", c.Clients)
		}
	default:
		return fmt.Errorf("load model must be open or closed, got %q", c.Model)
	}
	if c.Interval <= 0 || c.Measure <= 0 || c.Warmup < 0 || c.Timeout <= 0 {
		return fmt.Errorf("interval, measure and timeout must be positive and warmup not negative")
	}
	if len(c.Ops) == 0 {
		return errors.New("the workload has no operation types")
	}
	return nil
}

// Result summarises one run. Counts of the measured phase include requests
// that were intended during it and completed after it ended.
type Result struct {
	Start         time.Time     // wall clock at the start of the run (interval 0)
	MeasureStart  time.Duration // since Start
	MeasureEnd    time.Duration // since Start; earlier than planned when interrupted
	Warmup        Totals
	Measured      Totals
	Unfinished    int64   // requests still in flight when an interrupted run stopped
	TargetRate    float64 // open loop: the schedule's mean rate over the measured phase
	SentRate      float64 // requests started (or dropped) per second of the measured phase
	Throughput    float64 // successful completions per second within the measured window
	ClientCPU     float64 // this process's CPU use over the measured phase, % of one core
	Cores         int     // cores the process may use
	ClientLimited bool    // the load generator itself limited the load
	Note          string  // one sentence on late/dropped requests or client limits
	Interrupted   bool
	Reattributed  int64       // requests counted in a later interval than they completed in
	Client        ClientFacts // what the client-limit verdict was judged from (verdict.go)
	// Quiet is the closed loop's stall watch: the periods of the measured
	// phase in which no request completed (stall.go); nil for the open loop.
	Quiet *QuietWatch
}

// Sink receives each interval as it completes, in order. A sink error stops
// the run (for example when the results store cannot be written).
type Sink func(Tick) error

// Run drives one run: warmup then measure, reporting each interval to sink
// as it completes. When ctx is cancelled the run stops at once, the partial
// interval is still reported, and Result.Interrupted is set.
func Run(ctx context.Context, cfg Config, tgt target.Target, gen *workload.Generator, sink Sink) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	slots := cfg.Clients
	if cfg.Model == "open" {
		slots = cfg.MaxInFlight
	}
	clients := make([]target.Client, 0, slots)
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	for i := 0; i < slots; i++ {
		c, err := tgt.NewClient(ctx)
		if err != nil {
			return Result{}, fmt.Errorf("opening client %d of %d: %w", i+1, slots, err)
		}
		clients = append(clients, c)
	}

	iv := int64(cfg.Interval)
	measureStart := (int64(cfg.Warmup) + iv - 1) / iv * iv
	end := measureStart + int64(cfg.Measure)
	kinds := newKindTable()
	col := newCollector(cfg.Interval, measureStart, end, cfg.Ops, kinds)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	e := &run{cfg: cfg, col: col, measureStart: measureStart, end: end, ctx: runCtx, kinds: kinds}
	var src *arrivals
	if cfg.Model == "open" {
		src = &arrivals{sched: cfg.Schedule, gen: gen, end: end, pacer: newPacer(e.since, cfg.MaxInFlight), since: e.since}
	}

	// Workers start before the clock does and wait for it, so that the
	// first intended requests are not late by the time it takes to start
	// hundreds of goroutines.
	begin := make(chan struct{})
	var wg sync.WaitGroup
	workers := make([]*worker, slots)
	for i := range workers {
		w := &worker{run: e, client: clients[i], rec: col.newHandle(), op: gen.NewOp(), keys: gen}
		if cfg.Model == "closed" {
			w.gen = gen.Fork(uint64(i) + 1)
			w.rng = newRand(cfg.Seed, uint64(i)+1)
		}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			w.resetCtx()
			if src != nil {
				w.open(src)
			} else {
				w.closed()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	e.t0 = time.Now()
	if cfg.Started != nil {
		cfg.Started(e.t0)
	}
	res := Result{Start: e.t0, MeasureStart: time.Duration(measureStart), Cores: cores()}
	if src != nil {
		res.TargetRate = cfg.Schedule.MeanRate(time.Duration(measureStart), time.Duration(end))
	}
	if src != nil {
		go src.pacer.loop()
		defer close(src.pacer.stop)
	}
	// Client CPU is read at the start and the end of the measured window,
	// and divided by the wall time between the two readings.
	cpuStart, cpuEnd := -1.0, -1.0
	var cpuStartAt, cpuEndAt time.Time
	if measureStart == 0 {
		cpuStart, cpuStartAt = processCPUSeconds(), time.Now()
	}
	close(begin)

	var sinkErr error
	emit := func(ticks []Tick) {
		for _, t := range ticks {
			t.At = e.t0.Add(t.Start)
			if sinkErr == nil {
				sinkErr = sink(t)
				if sinkErr != nil {
					stop()
				}
			}
		}
		for _, t := range ticks {
			e.facts.tick(t)
		}
		col.release(ticks)
	}
	grace := min(cfg.Interval/10, 50*time.Millisecond)
	// The watchdog checks for expired requests a few times per timeout, but
	// never more often than every millisecond.
	watch := max(min(cfg.Timeout/4, 100*time.Millisecond), time.Millisecond)
	watchdog := time.NewTicker(watch)
	defer watchdog.Stop()
	timer := time.NewTimer(0)
	<-timer.C
	next := int64(0) // next interval index to hand out
	finished := false
	// The open loop's workers leave once the schedule has no arrival
	// before the end (its last stretch may have rate 0); the run still
	// lasts its phases, so that its intervals and the monitors cover the
	// planned time.
	workersDone, idle := (<-chan struct{})(done), false
	for !finished {
		due := time.Duration((next+1)*iv) + grace
		timer.Reset(time.Until(e.t0.Add(due)))
		select {
		case <-timer.C:
			now := e.since()
			if cpuStart < 0 && now >= measureStart {
				cpuStart, cpuStartAt = processCPUSeconds(), time.Now()
			}
			if cpuEnd < 0 && now >= end {
				cpuEnd, cpuEndAt = processCPUSeconds(), time.Now()
			}
			if idle && now >= end {
				finished = true // the last take below hands out the rest
				break
			}
			emit(col.take(next, 0))
			next++
		case <-watchdog.C:
			e.expire(workers)
		case <-workersDone:
			if src != nil && e.since() < end {
				workersDone, idle = nil, true
				continue
			}
			finished = true
		case <-runCtx.Done():
			res.Interrupted = ctx.Err() != nil
			for _, w := range workers {
				w.cancel()
			}
			<-done
			finished = true
		}
	}
	timer.Stop()
	// The workers may all have left because of the interrupt while this
	// goroutine was busy (storing an interval), so that the select above saw
	// them done before it saw the cancellation: ask the context itself.
	res.Interrupted = ctx.Err() != nil
	stopped := e.since()
	if cpuEnd < 0 {
		cpuEnd, cpuEndAt = processCPUSeconds(), time.Now()
	}
	// A run that was not interrupted covers its planned time even when its
	// last request finished early; requests still completing after the end
	// (drain) extend the last intervals.
	if !res.Interrupted && sinkErr == nil {
		stopped = max(stopped, end)
	}
	if idle {
		stopped = min(stopped, end) // nothing was in flight to drain
	}
	emit(col.take(next, max(stopped, 1)))

	res.MeasureEnd = time.Duration(min(stopped, end))
	tot, windowDone := col.snapshotTotals()
	res.Warmup, res.Measured = tot[Warmup], tot[Measure]
	res.Unfinished = e.unfinished.Load()
	res.Reattributed = col.reattributed
	if secs := (res.MeasureEnd - res.MeasureStart).Seconds(); secs > 0 {
		m := res.Measured
		res.SentRate = float64(m.Sent()+m.Dropped) / secs
		res.Throughput = float64(windowDone) / secs
		if wall := cpuEndAt.Sub(cpuStartAt).Seconds(); cpuStart >= 0 && wall > 0 {
			res.ClientCPU = 100 * (cpuEnd - cpuStart) / wall
		}
	}
	res.judge(cfg, &e.facts)
	e.stalls.fill(&res)
	if sinkErr != nil {
		var stop *StopError
		if errors.As(sinkErr, &stop) {
			return res, sinkErr
		}
		return res, fmt.Errorf("storing interval results: %w", sinkErr)
	}
	return res, nil
}

// StopError is what a Sink returns to end a run early on purpose, for
// example because the target stopped answering. Run returns it as is.
type StopError struct{ Reason string }

func (e *StopError) Error() string { return e.Reason }

// cpuBudget is the number of cores the process may use, when the command
// line set it (see SetCPUBudget); 0 means "ask the scheduler".
var cpuBudget atomic.Int64

// SetCPUBudget tells the engine how many cores the process may use, for
// its client-limit verdict, when the caller runs the Go scheduler with more
// slots than that (headroom run doubles them; docs/measurement.md).
func SetCPUBudget(n int) { cpuBudget.Store(int64(n)) }

// cores is the CPU capacity the process can use: the budget when one was
// set, else its scheduler slots, but never more than the machine's cores.
func cores() int {
	if b := int(cpuBudget.Load()); b > 0 {
		return min(b, runtime.NumCPU())
	}
	return min(runtime.GOMAXPROCS(0), runtime.NumCPU())
}

// run is the state shared by the workers of one run.
type run struct {
	cfg          Config
	col          *collector
	kinds        *kindTable
	ctx          context.Context
	t0           time.Time
	measureStart int64
	end          int64
	unfinished   atomic.Int64
	facts        verdictFacts // the client's own delays and the measured latency (verdict.go)
	stalls       stallSet     // closed loop: the clients' silences (stall.go)
}

// since returns nanoseconds since the start of the run on the monotonic clock.
func (e *run) since() int64 { return int64(time.Since(e.t0)) }

func (e *run) phase(intended int64) Phase {
	if intended < e.measureStart {
		return Warmup
	}
	return Measure
}

// expire cancels requests that have run longer than the timeout. It works
// per worker rather than per request so that no context is allocated for
// each request.
func (e *run) expire(ws []*worker) {
	now := e.since()
	for _, w := range ws {
		if s := w.busySince.Load(); s > 0 && now-s > int64(e.cfg.Timeout) {
			// Mark and cancel under the worker's lock, so that a worker that
			// sees the mark and renews its context does so after the cancel.
			w.mu.Lock()
			if w.busySince.CompareAndSwap(s, -s) {
				w.stop()
			}
			w.mu.Unlock()
		}
	}
}

// arrivals hands out the open loop's requests in schedule order. The
// operation is drawn under the same lock so that the k-th arrival is the same
// operation in every run with the same seed.
type arrivals struct {
	mu    sync.Mutex
	sched Schedule
	gen   *workload.Generator
	end   int64
	done  bool
	pacer *pacer
	since func() int64
}

// next claims the next arrival into op. When it is due later than
// earlyTolerance from now, w is queued with the pacer (under the same lock,
// so the pacer's queue stays in schedule order) and wait is true: the caller
// must then wait for w.wake.
func (a *arrivals) next(op *workload.Op, w *waiter) (intended int64, wait, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return 0, false, false
	}
	t := a.sched.Next()
	if t >= a.end {
		a.done = true
		return 0, false, false
	}
	a.gen.Next(op)
	if t-a.since() > int64(earlyTolerance) {
		a.pacer.enqueue(w, t)
		return t, true, true
	}
	return t, false, true
}
