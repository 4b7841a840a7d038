// Package null is a target that does no work: every operation succeeds at
// once. It measures the harness's own overhead (docs/performance.md). With
// service_time and servers it becomes a simulated queueing server whose
// capacity is known in advance (servers / service_time requests per
// second), which tests use to check analyses end to end against a designed
// answer.
package null

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Options of the null target.
type Options struct {
	// ServiceTime is how long each operation takes (default 0: returns at once).
	ServiceTime spec.Duration `yaml:"service_time"`
	// Servers is how many operations are served at the same time; further
	// operations queue (default 0: no limit).
	Servers int `yaml:"servers"`
}

func init() {
	registry.Register(registry.Factory{
		Name:       "null",
		Summary:    "does no work; measures the harness's overhead, or simulates a server with service_time and servers",
		NewOptions: func() any { return &Options{} },
		Validate: func(o any) error {
			opts := o.(*Options)
			if opts.ServiceTime.Duration < 0 {
				return fmt.Errorf("service_time: must not be negative")
			}
			if opts.Servers < 0 {
				return fmt.Errorf("servers: must be 0 (no limit) or more")
			}
			return nil
		},
		Open: func(o any, _ registry.Env) (target.Target, error) { return New(*o.(*Options)), nil },
	})
}

// Target is the null target.
type Target struct {
	service time.Duration
	slots   chan struct{} // nil when the number of servers is unlimited
}

// New returns a null target with the given options.
func New(o Options) *Target {
	t := &Target{service: o.ServiceTime.Duration}
	if o.Servers > 0 {
		t.slots = make(chan struct{}, o.Servers)
	}
	return t
}

// Prepare implements target.Target.
func (*Target) Prepare(context.Context, workload.Config, bool) error { return nil }

// NewClient implements target.Target.
func (t *Target) NewClient(context.Context) (target.Client, error) {
	c := &client{t: t}
	if t.service > 0 {
		c.timer = time.NewTimer(time.Hour)
		c.timer.Stop()
	}
	return c, nil
}

// Close implements target.Target.
func (*Target) Close() error { return nil }

type client struct {
	t     *Target
	timer *time.Timer
	sink  uint64
}

// Do touches the operation so that the call cannot be optimised away and,
// when the target simulates a server, waits for a server and serves.
//
//go:noinline
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	c.sink += op.KeyNum + uint64(op.Type)
	if c.t.service == 0 && c.t.slots == nil {
		return nil
	}
	if c.t.slots != nil {
		select {
		case c.t.slots <- struct{}{}:
			defer func() { <-c.t.slots }()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.t.service > 0 {
		return c.serve(ctx)
	}
	return nil
}

// serve holds the request for the service time. Go's timers wake through
// epoll, whose timeout is a whole number of milliseconds, and late by up
// to about a millisecond more on an idle process: a timer of 1.1 ms fired
// after about 2 ms, and service times of 1.0 and 1.1 ms measured 80%
// apart. So only what lies more than a millisecond before the end is
// waited on a timer (a request can be cancelled during it); the rest, up
// to the end, is a nanosleep of its own, which blocks this goroutine's
// thread that long and ends within the kernel's timer slack (50 µs).
func (c *client) serve(ctx context.Context) error {
	deadline := time.Now().Add(c.t.service)
	if early := (c.t.service - time.Millisecond).Truncate(time.Millisecond); early > 0 {
		c.timer.Reset(early)
		select {
		case <-c.timer.C:
		case <-ctx.Done():
			c.timer.Stop()
			return ctx.Err()
		}
	}
	if rest := time.Until(deadline); rest > 0 {
		ts := syscall.NsecToTimespec(rest.Nanoseconds())
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
	}
	return nil
}

func (c *client) Close() error { return nil }

// LoadBatch implements target.Loader: nothing to store.
func (c *client) LoadBatch(context.Context, []*workload.Op) error { return nil }
