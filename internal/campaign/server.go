package campaign

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// serverClock turns a target's cumulative server-side execution counters
// into per-interval differences (seed-digest §2: network delay mu = client
// response time minus server execution time).
type serverClock struct {
	timer  target.ServerTimer
	last   map[string]target.ServerTime
	failed bool // the target could not report; noted once per run
}

func newServerClock(tgt target.Target) *serverClock {
	t, ok := tgt.(target.ServerTimer)
	if !ok {
		return nil
	}
	return &serverClock{timer: t}
}

// start reads the counters at the beginning of a run.
func (c *serverClock) start(ctx context.Context) error {
	c.failed = false
	c.last = nil
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ts, err := c.timer.ServerTimes(qctx)
	if err != nil {
		c.failed = true
		return err
	}
	c.last = index(ts)
	return nil
}

// interval returns the differences since the last call, for the interval
// that just ended. Counters that went backwards (a server restart or a
// statistics reset) restart from zero.
func (c *serverClock) interval(ctx context.Context, runID int64, t load.Tick) ([]store.ServerInterval, error) {
	if c.failed {
		return nil, nil
	}
	// The last interval of an interrupted run still deserves its server
	// times: read them even when ctx is already cancelled.
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	ts, err := c.timer.ServerTimes(qctx)
	if err != nil {
		c.failed = true
		return nil, err
	}
	now := index(ts)
	var out []store.ServerInterval
	for op, cur := range now {
		prev := c.last[op]
		if cur.Calls < prev.Calls || cur.Total < prev.Total {
			prev = target.ServerTime{}
		}
		if cur.Calls == prev.Calls {
			continue
		}
		out = append(out, store.ServerInterval{RunID: runID, Op: op, Start: t.At, Duration: t.Duration,
			Calls: cur.Calls - prev.Calls, Exec: cur.Total - prev.Total})
	}
	c.last = now
	return out, nil
}

func index(ts []target.ServerTime) map[string]target.ServerTime {
	m := make(map[string]target.ServerTime, len(ts))
	for _, t := range ts {
		m[t.Op] = t
	}
	return m
}

// deadWatch ends a run when every request has failed with connection errors
// for dead_after: the target is gone, and more of the same teaches nothing.
type deadWatch struct {
	after time.Duration
	for_  time.Duration // how long every request has failed so far
	errs  int64
}

// observe takes one interval; it returns a StopError when the target has
// been unreachable for long enough.
func (d *deadWatch) observe(t load.Tick) error {
	if d.after <= 0 {
		return nil
	}
	var ok, conn, other int64
	for _, o := range t.Stats {
		ok += o.Count
		for kind, n := range o.ErrorKinds {
			if kind == target.KindConnection {
				conn += n
			} else {
				other += n
			}
		}
	}
	if ok > 0 || other > 0 || conn == 0 {
		d.for_, d.errs = 0, 0
		return nil
	}
	d.for_ += t.Duration
	d.errs += conn
	if d.for_ >= d.after {
		return &load.StopError{Reason: fmt.Sprintf("the target stopped answering: all %d requests of the last %v failed with connection errors (load.dead_after: %v)", d.errs, d.for_.Round(time.Millisecond), d.after)}
	}
	return nil
}
