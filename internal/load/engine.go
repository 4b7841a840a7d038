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
	Start        time.Time     // wall clock at the start of the run (interval 0)
	MeasureStart time.Duration // since Start
	MeasureEnd   time.Duration // since Start; earlier than planned when interrupted
	Warmup       Totals
	Measured     Totals
	// Unfinished counts requests still in flight when the run stopped:
	// interrupted, or at the end of a run whose target had answered
	// nothing for a while (see Run); they are neither errors nor dropped.
	Unfinished    int64
	TargetRate    float64 // open loop: the schedule's mean rate over the measured phase
	SentRate      float64 // requests started (or dropped) per second of the measured phase
	Throughput    float64 // successful completions per second within the measured window
	ClientCPU     float64 // this process's CPU use over the measured phase, % of one core
	Cores         int     // whole cores the process may use (scheduler slots, machine, budget)
	CPUs          float64 // CPU the process may use, in cores: Cores, or less under a cgroup quota (cpuquota.go)
	ClientLimited bool    // the load generator itself limited the load
	Note          string  // one sentence on late/dropped requests or client limits
	Interrupted   bool
	Reattributed  int64       // requests counted in a later interval than they completed in
	Client        ClientFacts // what the client-limit verdict was judged from (verdict.go)
	// Quiet is the closed loop's stall watch: the periods of the measured
	// phase in which no request completed (stall.go); nil for the open loop.
	Quiet *QuietWatch
	// ErrorKinds counts the run's errors (warmup and measured) by kind,
	// and FirstError is the first one's message: Failure reads them.
	ErrorKinds map[string]int64
	FirstError string
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
		for _, c := range clients { // until the workers own them
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

	// The cgroup's CPU quota is read once per run, before the clock starts
	// (cpuquota.go); a file that cannot be read or parsed leaves the whole
	// cores.
	quota, err := hostCgroups.readCPUQuota()
	if err != nil {
		quota = cpuQuota{}
	}

	iv := int64(cfg.Interval)
	measureStart := (int64(cfg.Warmup) + iv - 1) / iv * iv
	end := measureStart + int64(cfg.Measure)
	kinds := newKindTable()
	col := newCollector(cfg.Interval, measureStart, end, cfg.Ops, kinds)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	e := &run{cfg: cfg, col: col, measureStart: measureStart, end: end, ctx: runCtx, kinds: kinds, timeoutKind: kinds.id("timeout")}
	var src *arrivals
	if cfg.Model == "open" {
		src = newArrivals(cfg, gen, end, measureStart, newPacer(e.since, cfg.MaxInFlight), e.since)
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
			defer w.exit()
			<-begin
			w.resetCtx()
			if src != nil {
				w.open(src)
			} else {
				w.closed()
			}
		}()
	}
	defer func() {
		for _, w := range workers {
			w.release()
		}
	}()
	clients = nil // each worker closes its own, or Run does once it has left
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	e.t0 = time.Now()
	if cfg.Started != nil {
		cfg.Started(e.t0)
	}
	res := Result{Start: e.t0, MeasureStart: time.Duration(measureStart), Cores: cores()}
	res.CPUs = quota.limit(res.Cores)
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
	var schedStart, schedEnd *schedSnapshot // the scheduler's waits (clientdelay.go)
	var waited processorWait                // the client's wait for processors (pressure.go)
	var thrStart, thrEnd throttleStat       // the quota's cgroup's throttling (cpuquota.go)
	waitShare := -1.0
	if measureStart == 0 {
		cpuStart, cpuStartAt, schedStart = processCPUSeconds(), time.Now(), readSched()
		waited, thrStart = startProcessorWait(), quota.throttling()
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
	// An interval is handed out settle after its end: by then every
	// arrival due in it has been sent or dropped (drop_after after its
	// intended time at the latest) and every timeout that expired in it has
	// been recorded, so each is counted in the interval it was due in.
	grace := min(cfg.Interval/10, 50*time.Millisecond)
	settle := int64(grace + min(cfg.DropAfter, cfg.Interval))
	// The watchdog checks for expired requests a few times per timeout, but
	// never more often than every millisecond. It runs on its own
	// goroutine: a sink that takes long (a server-time query to a server
	// whose disk is stalled took 4 s) must not let the requests in flight
	// meanwhile outlive their timeout and count as successes.
	watch := max(min(cfg.Timeout/4, 100*time.Millisecond), time.Millisecond)
	stopWatchdog := startWatchdog(e, workers, watch)
	defer stopWatchdog()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	own := col.newHandle() // the engine's own records: arrivals dropped in bulk
	last := (end - 1) / iv // the last interval, handed out when the run stops
	next := int64(0)       // next interval index to hand out
	// The run lasts its phases whatever the schedule: the open loop's
	// workers leave early when no arrival is left before the end (a last
	// stretch at rate 0), and a target that stopped answering cannot
	// stretch it (drained).
	workersDone := (<-chan struct{})(done)
	for {
		now := e.since()
		if cpuStart < 0 && now >= measureStart {
			cpuStart, cpuStartAt, schedStart = processCPUSeconds(), time.Now(), readSched()
			waited, thrStart = startProcessorWait(), quota.throttling()
		}
		if cpuEnd < 0 && now >= end {
			cpuEnd, cpuEndAt, schedEnd = processCPUSeconds(), time.Now(), readSched()
			waitShare, thrEnd = waited.perSecond(), quota.throttling()
		}
		for next < last && now >= (next+1)*iv+settle && runCtx.Err() == nil {
			e.expire(workers, now)
			if src != nil {
				src.sweep(now, own)
			}
			emit(col.take(next, 0))
			next++
		}
		if runCtx.Err() != nil || now >= end && (workersDone == nil || e.drained(workers, now)) {
			break
		}
		wake := end
		if now >= end {
			wake = now + int64(watch)
		}
		if next < last {
			wake = min(wake, (next+1)*iv+settle)
		}
		if cpuStart < 0 {
			wake = min(wake, measureStart)
		}
		timer.Reset(time.Duration(wake - now))
		select {
		case <-timer.C:
		case <-workersDone:
			workersDone = nil
		case <-runCtx.Done():
		}
		timer.Stop()
	}
	// The workers may all have left because of the interrupt while this
	// goroutine was busy (storing an interval), so that the loop saw them
	// done before it saw the cancellation: ask the context itself.
	res.Interrupted = ctx.Err() != nil
	stopWatchdog()
	stopped := e.since()
	if cpuEnd < 0 {
		cpuEnd, cpuEndAt, schedEnd = processCPUSeconds(), time.Now(), readSched()
		if cpuStart >= 0 {
			waitShare, thrEnd = waited.perSecond(), quota.throttling()
		}
	}
	e.expire(workers, stopped)
	// A run that was not interrupted covers its planned time, and the
	// arrivals no slot took before its end are dropped where they were
	// due (before the cancel, so that no slot takes one to fail it).
	// Answers that came after the end (the drain) count in the last
	// interval.
	finished := !res.Interrupted && sinkErr == nil
	if finished && src != nil {
		src.close(own)
	}
	stop() // cancels what is still in flight
	e.letGo(workers, done)
	if finished {
		stopped = end
	}
	emit(col.take(next, max(min(stopped, end), 1)))

	res.MeasureEnd = time.Duration(min(stopped, end))
	tot, windowDone := col.snapshotTotals()
	res.Warmup, res.Measured = tot[Warmup], tot[Measure]
	res.Unfinished = e.unfinished.Load()
	res.ErrorKinds = col.errorKinds()
	if m := e.firstErr.Load(); m != nil {
		res.FirstError = *m
	}
	res.Reattributed = col.reattributed
	if secs := (res.MeasureEnd - res.MeasureStart).Seconds(); secs > 0 {
		m := res.Measured
		res.SentRate = float64(m.Sent()+m.Dropped) / secs
		res.Throughput = float64(windowDone) / secs
		if wall := cpuEndAt.Sub(cpuStartAt).Seconds(); cpuStart >= 0 && wall > 0 {
			res.ClientCPU = 100 * (cpuEnd - cpuStart) / wall
		}
	}
	res.Client.Delay = delaySince(schedStart, schedEnd)
	res.Client.ProcessorWait = waitShare
	res.Client.Throttling = thrEnd.since(thrStart, cpuEndAt.Sub(cpuStartAt))
	res.judge(cfg, &e.facts)
	if res.Failure() != "" {
		// Late and dropped requests of a target that answered nothing say
		// nothing about slots or the client: Failure says what happened.
		res.ClientLimited, res.Note = false, ""
	}
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
	timeoutKind  uint8                  // the kind table's index of "timeout"
	firstErr     atomic.Pointer[string] // the first error's message, for Result.FirstError
	facts        verdictFacts           // the client's own delays and the measured latency (verdict.go)
	stalls       stallSet               // closed loop: the clients' silences (stall.go)
}

// since returns nanoseconds since the start of the run on the monotonic clock.
func (e *run) since() int64 { return int64(time.Since(e.t0)) }

func (e *run) phase(intended int64) Phase {
	if intended < e.measureStart {
		return Warmup
	}
	return Measure
}

// expire records as a timeout, and cancels, each request that has run
// longer than the timeout. The timeout counts in the interval in which it
// expired, whenever the client returns: a client that ignores cancellation
// cannot hold the count back, and its late answer is ignored (worker.do).
// It works per worker rather than per request so that no context is
// allocated for each request.
func (e *run) expire(ws []*worker, now int64) {
	limit := int64(e.cfg.Timeout)
	for _, w := range ws {
		if s := w.busySince.Load(); s > 0 && now-s > limit {
			// Mark, record and cancel under the worker's lock, so that a
			// worker that sees the mark renews its context, and reuses its
			// request's fields, only after all three.
			w.mu.Lock()
			if w.busySince.CompareAndSwap(s, -s) {
				t := w.inflight
				t.end, t.kind = s+limit, e.timeoutKind
				w.rec.record(t)
				e.noteError(func() string { return fmt.Sprintf("no answer within the %v timeout", e.cfg.Timeout) })
				w.stop()
			}
			w.mu.Unlock()
		}
	}
}

// startWatchdog times out the requests in flight every period until the
// returned function, which waits for it to end, is called (once or more).
// expire is safe beside the main loop's own calls: each request's timeout
// is recorded once, under its worker's lock.
func startWatchdog(e *run, ws []*worker, period time.Duration) func() {
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				e.expire(ws, e.since())
			case <-quit:
				return
			}
		}
	}()
	return sync.OnceFunc(func() { close(quit); <-ended })
}

// noteError keeps the first error's message; msg is only called for the
// first, so that later errors cost nothing.
func (e *run) noteError(msg func() string) {
	if e.firstErr.Load() == nil {
		m := msg()
		e.firstErr.CompareAndSwap(nil, &m)
	}
}

// drained says whether the run, past its end, should stop waiting for the
// requests still in flight: when none of them has answered for
// min(timeout, interval). A working target's last requests answer within
// that and are counted; a target that stopped answering, or never
// answered, cannot stretch the run (its requests in flight count as
// unfinished).
func (e *run) drained(ws []*worker, now int64) bool {
	var last int64
	for _, w := range ws {
		last = max(last, w.answered.Load())
	}
	return now-last >= int64(min(e.cfg.Timeout, e.cfg.Interval))
}

// letGo is how long Run waits, once it has cancelled the requests still in
// flight, for their clients to return before it leaves them behind.
const letGo = 100 * time.Millisecond

// letGo waits up to letGo for the workers to leave, then counts the
// requests still in flight as unfinished and leaves without them: a client
// that ignores cancellation cannot hold the run. Their workers ignore the
// answers when they come and close their own clients (worker.exit).
func (e *run) letGo(ws []*worker, done <-chan struct{}) {
	t := time.NewTimer(letGo)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	for _, w := range ws {
		if s := w.busySince.Load(); s > 0 && w.busySince.CompareAndSwap(s, leftBehind) {
			e.unfinished.Add(1)
		}
	}
}

// arrivals hands out the open loop's requests in schedule order. The
// operation is drawn under the same lock so that the k-th arrival is the
// same operation in every run with the same seed, as long as no arrival is
// dropped in bulk (dropOverdue draws no operations).
type arrivals struct {
	mu      sync.Mutex
	sched   Schedule
	gen     *workload.Generator
	end     int64
	done    bool
	pacer   *pacer
	since   func() int64
	pending int64 // the next arrival's intended time, drawn ahead

	dropAfter, interval, measureStart int64
	ops                               []workload.OpType
	shares                            []float64 // each operation's share of the mix
	carry                             []float64 // bulk drops owed to each operation, in fractions
	counts                            []int64   // spread's result
	bulk                              int64     // requests dropped in bulk so far
}

func newArrivals(cfg Config, gen *workload.Generator, end, measureStart int64, p *pacer, since func() int64) *arrivals {
	a := &arrivals{sched: cfg.Schedule, gen: gen, end: end, pacer: p, since: since,
		dropAfter: int64(cfg.DropAfter), interval: int64(cfg.Interval), measureStart: measureStart,
		ops: cfg.Ops, shares: opShares(gen.Config(), cfg.Ops), carry: make([]float64, len(cfg.Ops)), counts: make([]int64, len(cfg.Ops))}
	a.pending = a.sched.Next()
	return a
}

// next claims the next arrival into op. When it is due later than
// earlyTolerance from now, w is queued with the pacer (under the same lock,
// so the pacer's queue stays in schedule order) and wait is true: the caller
// must then wait for w.wake. Arrivals already past drop_after are first
// dropped in bulk into h.
func (a *arrivals) next(op *workload.Op, w *waiter, h *handle) (intended int64, wait, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return 0, false, false
	}
	now := a.since()
	a.dropOverdue(now-a.dropAfter, h)
	t := a.pending
	if t >= a.end {
		a.done = true
		return 0, false, false
	}
	a.pending = a.sched.Next()
	a.gen.Next(op)
	if t-now > int64(earlyTolerance) {
		a.pacer.enqueue(w, t)
		return t, true, true
	}
	return t, false, true
}

// sweep drops, into h, the arrivals no slot took within drop_after: when
// every slot is held (a target that stopped answering) nobody else would
// count them before the interval they were due in is handed out.
func (a *arrivals) sweep(now int64, h *handle) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		a.dropOverdue(now-a.dropAfter, h)
	}
}

// close drops, into h, every arrival before the end that no slot took, and
// hands out no more.
func (a *arrivals) close(h *handle) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		a.dropOverdue(a.end, h)
		a.done = true
	}
}

// dropOverdue counts every arrival intended before limit (and before the
// end) as dropped, in the interval it was due in, by arithmetic on the
// schedule (Schedule.Skip) rather than one by one: a rate far beyond what
// the engine can send costs one call per interval, not one per request.
// Bulk drops are shared among the operations by the mix; no operation is
// drawn for them. Callers hold a.mu.
func (a *arrivals) dropOverdue(limit int64, h *handle) {
	limit = min(limit, a.end)
	for a.pending < limit {
		idx := a.pending / a.interval
		n := 1 + a.sched.Skip(min(limit, (idx+1)*a.interval))
		a.pending = a.sched.Next()
		// Bound the counts far from overflow (a schedule of 1e300/s).
		n = max(min(n, maxArrivals-a.bulk), 0)
		a.bulk += n
		at := idx * a.interval
		phase := Measure
		if at < a.measureStart {
			phase = Warmup
		}
		for i, k := range a.spread(n) {
			if k > 0 {
				h.record(droppedEntry(at, a.ops[i], phase, k))
			}
		}
	}
}

// spread shares n dropped requests among the operations by their share of
// the mix, carrying the fractions over so that many small bulks add up to
// the mix too. The counts it returns are valid until the next call.
func (a *arrivals) spread(n int64) []int64 {
	out := a.counts
	var given int64
	for i, s := range a.shares {
		a.carry[i] += float64(n) * s
		out[i] = int64(a.carry[i])
		a.carry[i] -= float64(out[i])
		given += out[i]
	}
	for ; given < n; given++ { // the rounding remainder: fewer than len(ops)
		j := 0
		for i := range a.carry {
			if a.carry[i] > a.carry[j] {
				j = i
			}
		}
		out[j]++
		a.carry[j]--
	}
	return out
}

// opShares is each operation's share of the workload's mix (or of its
// statements' weights).
func opShares(c workload.Config, ops []workload.OpType) []float64 {
	w := make([]float64, len(ops))
	var sum float64
	for i, op := range ops {
		switch {
		case int(op) < len(c.Mix):
			w[i] = c.Mix[op]
		case int(op)-len(c.Mix) < len(c.Statements):
			w[i] = c.Statements[int(op)-len(c.Mix)].Weight
		}
		sum += w[i]
	}
	for i := range w {
		if sum > 0 {
			w[i] /= sum
		} else {
			w[i] = 1 / float64(len(w))
		}
	}
	return w
}
