package redistarget

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// Cluster is a Target over a managed cluster (managed.cluster,
// internal/deploy/rediscluster.go):
//
//   - mode replicas: writes go to the primary (node1, or the replica a
//     promote event made primary: promote.go); reads too, or with
//     read_from: replicas to the replicas, each client taking them in turn.
//   - mode cluster: a go-redis ClusterClient routes each key to its slot's
//     primary and follows -MOVED and -ASK replies (up to 3 per request)
//     while slots move. A request that still fails counts as an error of
//     its kind (classify): -TRYAGAIN and -CLUSTERDOWN as busy, refused
//     connections to a node that just left as connection errors. Unlike
//     the one-server target, go-redis's cluster client retries on its
//     own, whatever MaxRetries says: up to 4 attempts with back-off after
//     a network error or timeout, and on -TRYAGAIN, -CLUSTERDOWN,
//     -LOADING and -MASTERDOWN; only the last attempt's failure counts,
//     and the retries show as latency (docs/targets.md).
//
// It adds and removes nodes during a run (target.NodeScaler). Server-side
// time is INFO commandstats summed over the nodes that serve requests:
// Redis Cluster primaries; in replicas mode the primary, and the replicas'
// read commands only (their write commands are the primary's, replicated).
// A removed node's last counts stay in the sum, so it never goes back.
type Cluster struct {
	*Target
	rc  *deploy.RedisCluster
	env registry.Env

	mu      sync.Mutex
	admins  map[string]*redis.Client // per node name: INFO commandstats
	readers map[string]*redis.Client // per replica name, read_from: replicas
	retired map[string]cmdStat       // removed nodes' last commandstats
	// primary is the address new connections of the workload's pool
	// dial in replicas mode; a failover changes it (promote.go).
	primary *atomic.Pointer[string]
}

var (
	_ target.NodeScaler      = (*Cluster)(nil)
	_ target.ServerTimer     = (*Cluster)(nil)
	_ target.ServerProcesses = (*Cluster)(nil)
	_ target.ServerStarter   = (*Cluster)(nil)
)

// openCluster starts the managed cluster and connects to it.
func openCluster(opts Options, env registry.Env) (target.Target, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rc, err := deploy.StartRedisCluster(ctx, env.InstanceDir("redis"), *opts.Managed)
	if err != nil {
		return nil, fmt.Errorf("redis target: managed: %w", err)
	}
	c := &Cluster{rc: rc, env: env, admins: map[string]*redis.Client{}, readers: map[string]*redis.Client{}, retired: map[string]cmdStat{}}
	if rc.Mode() == deploy.RedisModeCluster {
		c.Target, err = openRedisCluster(opts, rc)
	} else {
		c.Target, err = open(opts, env.Dir, rc.Primary())
		if err == nil {
			c.followPrimary()
		}
		if err == nil && opts.ReadFrom == readReplicas {
			c.readFromReplicas()
		}
	}
	if err != nil {
		_ = rc.Remove(context.Background())
		return nil, err
	}
	rc.OnStop(c.nodeLeaving)
	return c, nil
}

// openRedisCluster connects a ClusterClient to every node.
func openRedisCluster(opts Options, rc *deploy.RedisCluster) (*Target, error) {
	addrs := rc.Addrs()
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: addrs, Password: rc.Password(), Protocol: 2,
		PoolSize:    opts.PoolSize, // per node
		MaxRetries:  -1,
		DialTimeout: opts.DialTimeout.Duration, DialerRetries: 1,
		ReadTimeout: noLimit(opts.ReadTimeout.Duration), WriteTimeout: noLimit(opts.WriteTimeout.Duration),
		ContextTimeoutEnabled: true, PoolTimeout: 30 * time.Second, PipelinePoolSize: -1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	opts.Address = addrs[0]
	t := &Target{opts: opts, addr: addrs[0], user: "default", rdb: cc, cc: cc, cluster: true,
		prefix: []byte(opts.KeyPrefix), index: opts.KeyPrefix + indexKey}
	ctx, cancel := context.WithTimeout(context.Background(), opts.DialTimeout.Duration+5*time.Second)
	defer cancel()
	if err := cc.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() }); err != nil {
		_ = cc.Close()
		return nil, t.connectError(err)
	}
	return t, nil
}

// readFromReplicas opens a pool to every replica and sends the reads there.
func (c *Cluster) readFromReplicas() {
	c.Target.readers = &atomic.Pointer[[]*redis.Client]{}
	for _, n := range c.rc.Nodes() {
		if n.Role == "replica" {
			c.addReader(n)
		}
	}
}

// addReader and dropReader change the replicas reads go to; the clients
// see the new list at their next read.
func (c *Cluster) addReader(n deploy.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readers[n.Name] = redis.NewClient(clientOptions(c.opts, n.Inst.Addr(), c.rc.Password(), nil))
	c.publishReaders()
}

func (c *Cluster) dropReader(name string) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.readers[name]
	delete(c.readers, name)
	c.publishReaders()
	return r
}

func (c *Cluster) publishReaders() {
	var rs []*redis.Client
	for _, n := range c.rc.Nodes() {
		if r, ok := c.readers[n.Name]; ok {
			rs = append(rs, r)
		}
	}
	c.Target.readers.Store(&rs)
}

// Nodes implements target.NodeScaler.
func (c *Cluster) Nodes() []deploy.Node { return c.rc.Nodes() }

// AddNode implements target.NodeScaler: a new replica (which then takes
// reads when read_from is replicas) or a new Redis Cluster primary, on the
// lab host named host ("" = this machine).
func (c *Cluster) AddNode(ctx context.Context, host string) (deploy.NodeChange, error) {
	var place *deploy.Placement
	if host != "" {
		if c.env.Lab == nil {
			err := fmt.Errorf("add_node: %q names a lab host, but the campaign has no lab", host)
			return deploy.NodeChange{Action: "add_node", Host: host, Requested: time.Now(), BytesStreamed: -1, Error: err.Error()}, err
		}
		p, err := c.env.Lab(host)
		if err != nil {
			err = fmt.Errorf("add_node: %w", err)
			return deploy.NodeChange{Action: "add_node", Host: host, Requested: time.Now(), BytesStreamed: -1, Error: err.Error()}, err
		}
		place = p
	}
	ch, err := c.rc.AddNode(ctx, place)
	if err != nil {
		return ch, fmt.Errorf("redis target: %w", err)
	}
	if c.cc != nil {
		c.cc.ReloadState(ctx)
	}
	if c.Target.readers != nil {
		for _, n := range c.rc.Nodes() {
			if n.Name == ch.Node {
				c.addReader(n)
			}
		}
	}
	return ch, nil
}

// RemoveNode implements target.NodeScaler (see deploy.RedisCluster's
// RemoveNode for which nodes can go).
func (c *Cluster) RemoveNode(ctx context.Context, node string) (deploy.NodeChange, error) {
	ch, err := c.rc.RemoveNode(ctx, node)
	if err != nil {
		return ch, fmt.Errorf("redis target: %w", err)
	}
	if c.cc != nil {
		c.cc.ReloadState(ctx)
	}
	return ch, nil
}

// nodeLeaving runs just before a removed node stops: reads stop going to
// it, and its last commandstats join the retired counts.
func (c *Cluster) nodeLeaving(ctx context.Context, n deploy.Node) {
	var r *redis.Client
	if c.Target.readers != nil {
		r = c.dropReader(n.Name)
	}
	if reads, counted := c.counts(n); counted {
		if st, err := c.nodeStats(ctx, n); err == nil {
			c.mu.Lock()
			addStats(c.retired, st, reads)
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	if a := c.admins[n.Name]; a != nil {
		_ = a.Close()
		delete(c.admins, n.Name)
	}
	c.mu.Unlock()
	if r != nil {
		// Requests that picked it before the list changed finish on
		// their own connections; this waits for none of them.
		_ = r.Close()
	}
}

// readCommands are the commands of reads; a replica's other commands are
// its primary's writes, replicated.
var readCommands = map[string]bool{"get": true, "hgetall": true, "hmget": true, "zrangebyscore": true}

// counts says whether n serves requests, and whether only its reads.
func (c *Cluster) counts(n deploy.Node) (readsOnly, counted bool) {
	switch n.Role {
	case "primary", "member":
		return false, true
	case "replica":
		return true, c.rc.Mode() == deploy.RedisModeReplicas && c.Target.readers != nil
	}
	return false, false
}

// nodeStats is n's INFO commandstats.
func (c *Cluster) nodeStats(ctx context.Context, n deploy.Node) (map[string]cmdStat, error) {
	c.mu.Lock()
	a := c.admins[n.Name]
	if a == nil {
		o := clientOptions(c.opts, n.Inst.Addr(), c.rc.Password(), nil)
		o.PoolSize = 1
		a = redis.NewClient(o)
		c.admins[n.Name] = a
	}
	c.mu.Unlock()
	info, err := a.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, fmt.Errorf("redis target: INFO commandstats of %s: %w", n.Name, classify(err))
	}
	return parseCommandStats(info), nil
}

func addStats(sum, st map[string]cmdStat, readsOnly bool) {
	for cmd, s := range st {
		if readsOnly && !readCommands[cmd] {
			continue
		}
		t := sum[cmd]
		t.calls += s.calls
		t.usec += s.usec
		sum[cmd] = t
	}
}

// ServerTimes implements target.ServerTimer, summed over the nodes that
// serve requests (see Cluster).
func (c *Cluster) ServerTimes(ctx context.Context) ([]target.ServerTime, error) {
	sum := map[string]cmdStat{}
	c.mu.Lock()
	addStats(sum, c.retired, false)
	c.mu.Unlock()
	for _, n := range c.rc.Nodes() {
		reads, counted := c.counts(n)
		if !counted {
			continue
		}
		st, err := c.nodeStats(ctx, n)
		if err != nil {
			return nil, err
		}
		addStats(sum, st, reads)
	}
	return serverTimes(c.timing, sum), nil
}

// ServerPIDs implements target.ServerProcesses: every node's server.
func (c *Cluster) ServerPIDs() []int { return c.rc.PIDs() }

// StartServer implements target.ServerStarter: every node that is not
// running (after a kill event) starts again on its port and data. A node
// a failover left out is not among them: RestoreReplicas rebuilds it as
// a replica, where started as it was it would be a second primary.
func (c *Cluster) StartServer(ctx context.Context) error {
	var errs []error
	for _, n := range c.rc.Nodes() {
		if !n.Inst.Running() {
			if err := n.Inst.Restart(ctx); err != nil {
				errs = append(errs, fmt.Errorf("redis target: starting %s again: %w", n.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Ephemeral implements target.Ephemeral: each session starts its own
// empty cluster.
func (c *Cluster) Ephemeral() bool { return true }

// Close closes the pools, then stops and removes every node (the logs
// stay).
func (c *Cluster) Close() error {
	err := c.closePools()
	c.mu.Lock()
	for _, a := range c.admins {
		err = errors.Join(err, a.Close())
	}
	c.admins = map[string]*redis.Client{}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return errors.Join(err, c.rc.Remove(ctx))
}

// Cluster is the managed cluster.
func (c *Cluster) Cluster() *deploy.RedisCluster { return c.rc }

// validateCluster checks managed.cluster against the target's options.
func validateCluster(opts *Options) error {
	c := opts.Managed.Cluster
	if c == nil {
		return nil
	}
	if err := deploy.CheckRedisCluster(c, opts.Managed.Settings); err != nil {
		return err
	}
	if opts.Managed.Port != 0 {
		return fmt.Errorf("managed.port: a cluster's nodes take free ports of their own; remove port")
	}
	if c.ModeOr(deploy.RedisModeReplicas) == deploy.RedisModeCluster && opts.DB != 0 {
		return fmt.Errorf("db: Redis Cluster has database 0 only; remove db")
	}
	return nil
}
