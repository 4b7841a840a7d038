package postgres

import (
	"context"
	"fmt"

	"github.com/headroom-dev/headroom/internal/deploy"
)

// Promote fails the managed cluster over to a replica (node name or lab
// host; "" = the first one; see deploy.PostgresCluster.Promote) and moves
// every client to it: the pool is replaced by one to the new primary,
// which clients pick up on their next request, and reads sent to
// replicas go to the replicas left (none until RestoreReplicas, so to the
// primary meanwhile). Requests in flight on the old primary fail.
func (c *Cluster) Promote(ctx context.Context, node string) (deploy.NodeChange, error) {
	ch, err := c.pc.Promote(ctx, node)
	if err != nil {
		return ch, fmt.Errorf("postgres target: %w", err)
	}
	c.closeReaders()
	if err := c.moveTo(ctx, c.pc.Primary()); err != nil {
		ch.Error = err.Error()
		return ch, err
	}
	if err := c.openReaders(ctx); err != nil {
		ch.Error = err.Error()
		return ch, err
	}
	return ch, nil
}

// RestoreReplicas rebuilds the nodes failovers left out as replicas of
// the current primary, on their hosts, and lets reads go to them again
// (read_from); the cluster then has its defined node count.
func (c *Cluster) RestoreReplicas(ctx context.Context) ([]deploy.NodeChange, error) {
	chs, err := c.pc.RestoreReplicas(ctx)
	if err != nil {
		return chs, fmt.Errorf("postgres target: rebuilding replicas after a failover: %w", err)
	}
	c.closeReaders()
	if err := c.openReaders(ctx); err != nil {
		return chs, err
	}
	return chs, nil
}

// moveTo points the target at inst, the new primary: address, messages
// and a new pool (the old one's connections went to the old primary).
func (t *Target) moveTo(ctx context.Context, inst *deploy.Instance) error {
	if inst == nil {
		return fmt.Errorf("postgres target: the cluster has no primary after the failover")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inst = inst
	t.opts.Host, t.opts.Port = inst.Host, inst.Port
	t.cfg.ConnConfig.Host, t.cfg.ConnConfig.Port = inst.Host, uint16(inst.Port)
	t.cfg.ConnConfig.Fallbacks = nil
	t.addr = fmt.Sprintf("%s@%s:%d/%s", t.opts.User, t.opts.Host, t.opts.Port, t.opts.Database)
	// A write counted now makes the next client wait until the new
	// replicas (if any) have replayed the data.
	t.writes.Add(1)
	if err := t.resetPool(ctx); err != nil {
		return fmt.Errorf("postgres target: moving to the new primary %s: %w", inst.Addr(), err)
	}
	return nil
}
