// Package null is a target that does nothing: every operation succeeds at
// once. It measures the harness's own overhead (docs/performance.md).
package null

import (
	"context"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Options of the null target: it has none.
type Options struct{}

func init() {
	registry.Register(registry.Factory{
		Name:       "null",
		Summary:    "does nothing and returns at once; measures the harness's own overhead",
		NewOptions: func() any { return &Options{} },
		Open:       func(any, registry.Env) (target.Target, error) { return Target{}, nil },
	})
}

// Target is the null target.
type Target struct{}

// Prepare implements target.Target.
func (Target) Prepare(context.Context, workload.Config, bool) error { return nil }

// NewClient implements target.Target.
func (Target) NewClient(context.Context) (target.Client, error) { return &client{}, nil }

// Close implements target.Target.
func (Target) Close() error { return nil }

type client struct{ sink uint64 }

// Do touches the operation so that the call cannot be optimised away, and
// returns.
//
//go:noinline
func (c *client) Do(_ context.Context, op *workload.Op) error {
	c.sink += op.KeyNum + uint64(op.Type)
	return nil
}

func (c *client) Close() error { return nil }

// LoadBatch implements target.Loader: nothing to store.
func (c *client) LoadBatch(context.Context, []*workload.Op) error { return nil }
