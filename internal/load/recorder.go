package load

import (
	"sort"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/workload"
)

// Phase says which part of a run a request belongs to; a request's phase is
// fixed by its intended start time, while the interval that counts it is the
// one in which it completed (a timeout: in which it expired; a dropped
// request: in which it was due; an answer after the end of the run: the
// last). A request sent during the measured phase that completes after it
// therefore still counts as measured: nothing a stall delays is lost.
type Phase uint8

// Run phases under load.
const (
	Warmup Phase = iota
	Measure
	numPhases
)

func (p Phase) String() string {
	if p == Warmup {
		return "warmup"
	}
	return "measure"
}

const (
	flagLate     = 1 << iota // started more than late_after after its intended time
	flagDropped              // never sent: could not start within drop_after
	flagWokeLate             // late although a slot was waiting for it: the client woke late
)

// entry is one finished request, or one or more dropped requests, as a
// worker records it.
type entry struct {
	end   int64 // ns since run start: completion, or when a dropped one was due
	lat   int64 // µs; for dropped requests, how many (droppedEntry)
	op    workload.OpType
	phase Phase
	flags uint8
	kind  uint8 // error kind index into the kind table; 0 = success
}

// droppedEntry stands for n requests of operation op that were due at at
// and not sent.
func droppedEntry(at int64, op workload.OpType, phase Phase, n int64) entry {
	return entry{end: at, lat: n, op: op, phase: phase, flags: flagDropped}
}

// handleBufLen entries are buffered per worker before they are merged into
// the shared interval histograms, so that the shared lock is taken once per
// handleBufLen requests, not once per request.
const handleBufLen = 256

// handle is one worker's recorder. Its lock is only contended when the
// collector drains it at an interval boundary.
type handle struct {
	mu  sync.Mutex
	n   int
	buf [handleBufLen]entry
	c   *collector
}

func (h *handle) record(e entry) {
	h.mu.Lock()
	h.buf[h.n] = e
	h.n++
	if h.n == handleBufLen {
		h.c.absorb(h.buf[:])
		h.n = 0
	}
	h.mu.Unlock()
}

func (h *handle) drain() {
	h.mu.Lock()
	if h.n > 0 {
		h.c.absorb(h.buf[:h.n])
		h.n = 0
	}
	h.mu.Unlock()
}

// opStats accumulates one (phase, operation) pair over one interval.
type opStats struct {
	hist                         *hdrhistogram.Histogram
	count, errors, late, dropped int64
	kinds                        [maxKinds]int64
}

func (s *opStats) reset() {
	s.hist.Reset()
	s.count, s.errors, s.late, s.dropped = 0, 0, 0, 0
	s.kinds = [maxKinds]int64{}
}

type bucket struct {
	idx   int64
	stats [numPhases][workload.MaxOps]*opStats
}

// Totals are the run's request counts per phase, over all operations.
type Totals struct {
	Completed, Errors, Late, Dropped int64
	// LateWake counts the late requests whose slot was free and waiting at
	// the intended time but was woken too late: the client's own delay
	// (CPU or scheduling), not the target's. Late - LateWake requests found
	// every slot busy.
	LateWake int64
}

// Sent is the number of requests that were started (completed or failed).
func (t Totals) Sent() int64 { return t.Completed + t.Errors }

// collector merges worker buffers into per-interval statistics and hands
// each interval out once it is complete.
type collector struct {
	mu           sync.Mutex
	intervalNs   int64
	measureStart int64 // ns since run start
	measureEnd   int64 // ns since run start
	lastIdx      int64 // the run's last interval: it also holds what completed after the end
	ops          []workload.OpType
	handles      []*handle
	buckets      map[int64]*bucket
	last         *bucket
	emitted      int64 // every interval with a lower index has been handed out
	reattributed int64 // entries that arrived after their interval was handed out
	pool         []*opStats
	kinds        *kindTable
	totals       [numPhases]Totals
	kindTotals   [maxKinds]int64 // errors by kind, both phases
	// windowDone counts successful completions inside the measured window
	// [measureStart, measureEnd), whatever their phase: the throughput of
	// the window (seed-digest §1, T = ops / time). Latency statistics are
	// kept by intended phase instead, so that no stalled request is lost.
	windowDone int64
}

func newCollector(interval time.Duration, measureStart, measureEnd int64, ops []workload.OpType, kinds *kindTable) *collector {
	return &collector{
		intervalNs:   int64(interval),
		measureStart: measureStart,
		measureEnd:   measureEnd,
		lastIdx:      max(measureEnd-1, 0) / int64(interval),
		ops:          ops,
		buckets:      map[int64]*bucket{},
		kinds:        kinds,
	}
}

func (c *collector) newHandle() *handle {
	h := &handle{c: c}
	c.mu.Lock()
	c.handles = append(c.handles, h)
	c.mu.Unlock()
	return h
}

func (c *collector) bucket(idx int64) *bucket {
	if c.last != nil && c.last.idx == idx {
		return c.last
	}
	b := c.buckets[idx]
	if b == nil {
		b = &bucket{idx: idx}
		c.buckets[idx] = b
	}
	c.last = b
	return b
}

func (c *collector) stats(b *bucket, p Phase, op workload.OpType) *opStats {
	s := b.stats[p][op]
	if s == nil {
		if n := len(c.pool); n > 0 {
			s = c.pool[n-1]
			c.pool = c.pool[:n-1]
		} else {
			s = &opStats{hist: NewHistogram()}
		}
		b.stats[p][op] = s
	}
	return s
}

func (c *collector) absorb(es []entry) {
	c.mu.Lock()
	for i := range es {
		e := &es[i]
		idx := min(e.end/c.intervalNs, c.lastIdx)
		if idx < c.emitted {
			// The interval was already handed out (the worker was descheduled
			// across the boundary for longer than the grace period): count the
			// entry in the earliest open interval rather than lose it.
			idx = c.emitted
			c.reattributed++
		}
		s := c.stats(c.bucket(idx), e.phase, e.op)
		t := &c.totals[e.phase]
		switch {
		case e.flags&flagDropped != 0:
			s.dropped += e.lat
			t.Dropped += e.lat
			continue
		case e.kind != 0:
			s.errors++
			s.kinds[e.kind]++
			t.Errors++
			c.kindTotals[e.kind]++
		default:
			s.count++
			t.Completed++
			_ = s.hist.RecordValue(e.lat) // e.lat is clamped to the range, so this cannot fail
			if e.end >= c.measureStart && e.end < c.measureEnd {
				c.windowDone++
			}
		}
		if e.flags&flagLate != 0 {
			s.late++
			t.Late++
			if e.flags&flagWokeLate != 0 {
				t.LateWake++
			}
		}
	}
	c.mu.Unlock()
}

// Tick is one completed interval: statistics per (phase, operation). The
// histograms belong to the engine and are valid only during the sink call.
type Tick struct {
	Index    int64
	At       time.Time     // wall clock at the interval's start
	Start    time.Duration // since the start of the run
	Duration time.Duration
	Phase    Phase // phase the interval's start falls in
	Stats    []OpStats
}

// OpStats is the statistics of one operation type in one interval. Latency
// covers successful requests only; errors are counted by kind.
type OpStats struct {
	Phase      Phase
	Op         workload.OpType
	Count      int64
	Errors     int64
	Late       int64
	Dropped    int64
	ErrorKinds map[string]int64
	Hist       *hdrhistogram.Histogram
}

// take drains every worker and removes the intervals with index <= upTo,
// returning them as ticks (including intervals nobody recorded in, so that a
// stalled second shows up as a second with zero completions). end, when
// positive, shortens the last interval to the end of the run.
func (c *collector) take(upTo int64, end int64) []Tick {
	c.mu.Lock()
	hs := append([]*handle(nil), c.handles...)
	c.mu.Unlock()
	for _, h := range hs {
		h.drain()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if end > 0 {
		// The last call hands out everything, including quiet intervals up
		// to the end of the run.
		upTo = max(upTo, (end-1)/c.intervalNs)
		for idx := range c.buckets {
			if idx > upTo {
				upTo = idx
			}
		}
	}
	var ticks []Tick
	for idx := c.emitted; idx <= upTo; idx++ {
		b := c.buckets[idx]
		delete(c.buckets, idx)
		if c.last == b {
			c.last = nil
		}
		start := idx * c.intervalNs
		t := Tick{Index: idx, Start: time.Duration(start), Duration: time.Duration(c.intervalNs)}
		if end > 0 && start+c.intervalNs > end && end > start {
			t.Duration = time.Duration(end - start)
		}
		if start >= c.measureStart {
			t.Phase = Measure
		}
		for p := Phase(0); p < numPhases; p++ {
			for _, op := range c.ops {
				var s *opStats
				if b != nil {
					s = b.stats[p][op]
				}
				if s == nil && p != t.Phase {
					continue
				}
				if s == nil {
					s = c.stats(&bucket{}, p, op) // empty row for a quiet interval
				}
				t.Stats = append(t.Stats, c.export(p, op, s))
			}
		}
		ticks = append(ticks, t)
	}
	if upTo >= c.emitted {
		c.emitted = upTo + 1
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Index < ticks[j].Index })
	return ticks
}

func (c *collector) export(p Phase, op workload.OpType, s *opStats) OpStats {
	o := OpStats{Phase: p, Op: op, Count: s.count, Errors: s.errors, Late: s.late, Dropped: s.dropped, Hist: s.hist}
	if s.errors > 0 {
		o.ErrorKinds = map[string]int64{}
		for k, n := range s.kinds {
			if n > 0 {
				o.ErrorKinds[c.kinds.name(uint8(k))] += n
			}
		}
	}
	return o
}

// release returns the ticks' histograms to the pool once the sink is done.
func (c *collector) release(ticks []Tick) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range ticks {
		for _, o := range t.Stats {
			s := &opStats{hist: o.Hist}
			s.reset()
			c.pool = append(c.pool, s)
		}
	}
}

// errorKinds is the run's errors by kind so far; nil when there were none.
func (c *collector) errorKinds() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m map[string]int64
	for k, n := range c.kindTotals {
		if n > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[c.kinds.name(uint8(k))] += n
		}
	}
	return m
}

func (c *collector) snapshotTotals() ([numPhases]Totals, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.totals, c.windowDone
}
