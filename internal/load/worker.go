package load

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// worker is one request slot: in the open loop one of max_in_flight slots
// that take arrivals in schedule order, in the closed loop one client.
type worker struct {
	run    *run
	client target.Client
	rec    *handle
	op     *workload.Op
	gen    *workload.Generator // closed loop: this client's own stream
	keys   *workload.Generator // the key space inserts are acknowledged to
	rng    *rand.Rand          // closed loop: think times

	mu   sync.Mutex // guards stop: the watchdog cancels under it
	ctx  context.Context
	stop context.CancelFunc
	// busySince is the start (ns since run start) of the request in flight,
	// 0 when idle, negated by the watchdog when it recorded the request's
	// timeout, and leftBehind when the run ended without it.
	busySince atomic.Int64
	// inflight is the request in flight as the watchdog records its
	// timeout (operation, phase, flags); set before busySince.
	inflight entry
	// answered is when this worker last had an answer (success or the
	// target's error; ns since run start): a run past its end waits for
	// requests in flight only while answers come (run.drained).
	answered atomic.Int64
	// state says whether the worker's goroutine is running, has returned,
	// or was left behind by Run: who closes the client (exit, release).
	state atomic.Int32
}

// leftBehind marks busySince of a request that Run stopped waiting for.
const leftBehind = math.MinInt64

// Worker states.
const (
	running int32 = iota
	exited
	abandoned
)

// exit is the worker goroutine's last act: it closes its client itself
// when Run has already left without it.
func (w *worker) exit() {
	if !w.state.CompareAndSwap(running, exited) {
		_ = w.client.Close()
	}
}

// release is Run's last act for w: it closes the client unless the worker
// is still running (then exit will).
func (w *worker) release() {
	if !w.state.CompareAndSwap(running, abandoned) {
		_ = w.client.Close()
	}
}

func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream^0x70ad)) }

func (w *worker) resetCtx() {
	ctx, stop := context.WithCancel(w.run.ctx)
	w.mu.Lock()
	w.ctx, w.stop = ctx, stop
	w.mu.Unlock()
}

// do executes w.op, which was intended to start at intended and started at
// start, and records the outcome. Latency is measured from the earlier of the
// two: from the intended time when the request is late (so queueing in the
// client is charged to the system, seed-digest §1), from the actual start
// when it started slightly early.
func (w *worker) do(intended, start int64, phase Phase, flags uint8) {
	w.inflight = entry{op: w.op.Type, phase: phase, flags: flags}
	w.busySince.Store(max(start, 1))
	err := w.client.Do(w.ctx, w.op)
	end := w.run.since()
	if w.op.Type == workload.Insert {
		if err != nil {
			w.keys.AcknowledgeMissing(w.op.KeyNum)
		} else {
			w.keys.Acknowledge(w.op.KeyNum)
		}
	}
	switch busy := w.busySince.Swap(0); {
	case busy == leftBehind:
		return // counted unfinished when the run left it behind (run.letGo)
	case busy < 0:
		// The watchdog recorded the timeout when it expired (run.expire);
		// an answer this late is ignored.
		w.resetCtx() // waits for the watchdog's cancel to finish (w.mu)
		return
	}
	e := entry{end: end, lat: micros(end - min(intended, start)), op: w.op.Type, phase: phase, flags: flags}
	if err != nil {
		if w.run.ctx.Err() != nil {
			// The run was stopped under this request: not the target's error.
			w.run.unfinished.Add(1)
			return
		}
		e.kind = w.run.kinds.id(classify(err))
		w.run.noteError(err.Error)
	}
	w.answered.Store(end)
	w.rec.record(e)
}

// open takes arrivals from src until the schedule passes the end of the run.
func (w *worker) open(src *arrivals) {
	cfg := &w.run.cfg
	wt := &waiter{wake: make(chan struct{}, 1)}
	done := w.run.ctx.Done()
	first := true
	for {
		intended, wait, ok := src.next(w.op, wt, w.rec)
		if !ok {
			return
		}
		if wait {
			select {
			case <-wt.wake:
			case <-done:
				w.run.unfinished.Add(1) // claimed, never sent: the run stopped
				return
			}
		} else if w.run.ctx.Err() != nil {
			w.run.unfinished.Add(1)
			return
		}
		now := w.run.since()
		lateness := now - intended
		phase := w.run.phase(intended)
		if wait && lateness > int64(cfg.DropAfter) {
			// No catch-up burst: a request this far behind its schedule is
			// not sent, only counted, in the interval it was due in. (One
			// taken at once was checked when it was claimed: arrivals
			// already that late were dropped in bulk.)
			w.rec.record(droppedEntry(intended, w.op.Type, phase, 1))
			if w.op.Type == workload.Insert {
				w.keys.AcknowledgeMissing(w.op.KeyNum) // never sent: never to be read
			}
			continue
		}
		var flags uint8
		if lateness > int64(cfg.LateAfter) {
			flags = flagLate
			// A slot that was waiting for this request, or that was idle
			// because it had not started yet, was late by the client's
			// own fault; otherwise every slot was busy when it was due.
			if wait || first {
				flags |= flagWokeLate
				w.run.facts.clientLate(phase, lateness)
			}
		}
		first = false
		w.do(intended, now, phase, flags)
	}
}

// closed issues requests back to back, with an exponential think time
// between them when one is configured, until the end of the run.
func (w *worker) closed() {
	cfg := &w.run.cfg
	var timer *time.Timer
	done := w.run.ctx.Done()
	watch := w.run.stalls.join() // this client's silences, for the stall watch (stall.go)
	defer w.run.stalls.leave(watch)
	for {
		now := w.run.since()
		if cfg.ThinkTime == 0 {
			watch.done(now) // without think time the next start is the last completion
		}
		if now >= w.run.end || w.run.ctx.Err() != nil {
			return
		}
		watch.start(now)
		w.gen.Next(w.op)
		w.do(now, now, w.run.phase(now), 0)
		if cfg.ThinkTime > 0 {
			watch.done(w.run.since())
			think := time.Duration(w.rng.ExpFloat64() * float64(cfg.ThinkTime))
			if left := time.Duration(w.run.end - w.run.since()); think > left {
				think = max(left, 0)
			}
			watch.thought(think)
			if timer == nil {
				timer = time.NewTimer(think)
			} else {
				timer.Reset(think)
			}
			select {
			case <-timer.C:
			case <-done:
				return
			}
		}
	}
}
