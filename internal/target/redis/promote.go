package redistarget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-dev/headroom/internal/deploy"
)

// followPrimary rebuilds the workload's pool and the admin connection of a
// replica set so that every new connection dials the current primary
// (c.primary), not the address they were opened with. The clients keep
// the pool they were made with for their whole life (client.rdb), so a
// failover cannot hand them a new pool; it changes where the pool's next
// connections go instead. Called once in openCluster, before any client
// exists.
func (c *Cluster) followPrimary() {
	c.primary = &atomic.Pointer[string]{}
	addr := c.rc.Primary().Addr()
	c.primary.Store(&addr)
	pool := func(size int) *redis.Client {
		o := clientOptions(c.opts, addr, c.rc.Password(), nil)
		o.PoolSize = size
		dial := o.NewDialer()
		o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dial(ctx, network, *c.primary.Load())
		}
		return redis.NewClient(o)
	}
	_ = c.Target.rdb.(io.Closer).Close()
	_ = c.Target.admin.Close()
	c.Target.rdb, c.Target.admin = pool(c.opts.PoolSize), pool(1)
}

// Promote implements the campaign's failover for a replica set (mode
// replicas): the cluster fails over to the replica node names (node name
// or lab host; "" = the first; see deploy.RedisCluster.Promote), and the
// writes follow. The pool's connections to the old primary, which is
// fenced (stopped), fail with the requests in flight on them and are
// dropped; every new connection goes to the new primary. Reads sent to
// replicas (read_from: replicas) go to the replicas left. Redis Cluster
// is not promoted.
func (c *Cluster) Promote(ctx context.Context, node string) (deploy.NodeChange, error) {
	ch, err := c.rc.Promote(ctx, node)
	if err != nil {
		return ch, fmt.Errorf("redis target: %w", err)
	}
	inst := c.rc.Primary()
	if inst == nil || c.primary == nil {
		err := errors.New("redis target: the replica set has no primary after the failover")
		ch.Error = err.Error()
		return ch, err
	}
	addr := inst.Addr()
	c.primary.Store(&addr)
	// The promoted replica takes every request now; its reader pool
	// goes (its connections finish what they carry).
	if c.Target.readers != nil {
		if r := c.dropReader(ch.Node); r != nil {
			_ = r.Close()
		}
	}
	c.mu.Lock()
	for name, a := range c.admins {
		if !c.isNode(name) {
			_ = a.Close()
			delete(c.admins, name)
		}
	}
	c.mu.Unlock()
	return ch, nil
}

// isNode says whether name is one of the cluster's nodes now.
func (c *Cluster) isNode(name string) bool {
	for _, n := range c.rc.Nodes() {
		if n.Name == name {
			return true
		}
	}
	return false
}

// RestoreReplicas implements the campaign's failover: the nodes failovers
// left out come back as replicas of the current primary on their hosts
// (a full sync of fresh servers), taking reads again with read_from:
// replicas; the set then has its defined node count.
func (c *Cluster) RestoreReplicas(ctx context.Context) ([]deploy.NodeChange, error) {
	chs, err := c.rc.RestoreReplicas(ctx)
	if c.Target.readers != nil {
		for _, ch := range chs {
			for _, n := range c.rc.Nodes() {
				if ch.Error == "" && n.Name == ch.Node {
					c.addReader(n)
				}
			}
		}
	}
	if err != nil {
		return chs, fmt.Errorf("redis target: rebuilding replicas after a failover: %w", err)
	}
	return chs, nil
}
