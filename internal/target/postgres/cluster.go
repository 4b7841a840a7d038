package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Cluster is a target over a managed primary with streaming replicas
// (managed.cluster, internal/deploy/pgcluster.go). Writes, read-modify-
// writes and statement workloads go to the primary; YCSB reads and scans
// too, or with read_from: replicas (or any) to one node per client, the
// clients taken in turn, each through a pool of its node. A read sent to
// an async replica sees the data as far as that replica has replayed it:
// a key written a moment ago may not be found yet (not_found), which is
// what the study measures. So that a run's reads do find the population,
// opening a client first waits until every replica has replayed the
// writes made through the target since the last such wait.
//
// It adds and removes replicas while a run goes on (target.NodeScaler).
// Server-side time is pg_stat_statements summed over the nodes that serve
// requests: the primary, and the replicas that take reads (a replica
// replays its primary's writes without statements, so nothing is counted
// twice). A removed replica's counts up to its removal stay in the sums.
type Cluster struct {
	*ManagedTarget
	pc  *deploy.PostgresCluster
	env registry.Env

	mu    sync.Mutex               // pools
	pools map[string]*pgxpool.Pool // per replica name, with read_from

	replayMu sync.Mutex
	replayed int64 // t.writes when the replicas last caught up
}

// readerSet are the pools reads go to; a nil pool is the primary's, for
// read_from: any.
type readerSet struct{ pools []*pgxpool.Pool }

var (
	_ target.NodeScaler      = (*Cluster)(nil)
	_ target.ServerTimer     = (*Cluster)(nil)
	_ target.ServerProcesses = (*Cluster)(nil)
	_ target.Snapshotter     = (*Cluster)(nil)
	_ target.Restarter       = (*Cluster)(nil)
)

// openCluster starts the managed cluster on its lab hosts (or this
// machine) and connects to its primary, and to its replicas when reads go
// there.
func openCluster(opts Options, env registry.Env) (target.Target, error) {
	m, err := env.ClusterPlacements(opts.Managed)
	if err != nil {
		return nil, fmt.Errorf("postgres target: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pc, err := deploy.StartPostgresCluster(ctx, env.InstanceDir("postgres"), *m)
	if err != nil {
		return nil, fmt.Errorf("postgres target: managed: %w", err)
	}
	t, err := connect(opts, env.Dir, pc.Primary())
	if err != nil {
		_ = pc.Remove(context.Background())
		return nil, err
	}
	c := &Cluster{ManagedTarget: &ManagedTarget{t}, pc: pc, env: env, pools: map[string]*pgxpool.Pool{}}
	if opts.ReadFrom != readPrimary {
		t.readers = &atomic.Pointer[readerSet]{}
		for _, n := range pc.Replicas() {
			if err := c.addReader(ctx, n); err != nil {
				_ = c.Close()
				return nil, err
			}
		}
		c.publishReaders()
	}
	pc.OnStop(c.nodeLeaving)
	return c, nil
}

// addReader opens a pool to replica n; publishReaders makes the clients
// use it.
func (c *Cluster) addReader(ctx context.Context, n deploy.Node) error {
	cfg := c.cfg.Copy()
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = n.Inst.Host, uint16(n.Inst.Port)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, c.opts.ConnectTimeout.Duration+5*time.Second)
		err = pool.Ping(pctx)
		cancel()
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("postgres target: cannot connect to replica %s at %s: %w", n.Name, n.Inst.Addr(), err)
	}
	c.mu.Lock()
	c.pools[n.Name] = pool
	c.mu.Unlock()
	return nil
}

// publishReaders hands the clients the readers in node order: the
// replicas' pools, and the primary (nil) first for read_from: any.
func (c *Cluster) publishReaders() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var rs readerSet
	if c.opts.ReadFrom == readAny {
		rs.pools = append(rs.pools, nil)
	}
	for _, n := range c.pc.Replicas() {
		if p, ok := c.pools[n.Name]; ok {
			rs.pools = append(rs.pools, p)
		}
	}
	c.readers.Store(&rs)
}

// closeReaders closes every replica pool (reads go to the primary until
// openReaders).
func (c *Cluster) closeReaders() {
	if c.readers == nil {
		return
	}
	c.readers.Store(nil)
	c.mu.Lock()
	pools := c.pools
	c.pools = map[string]*pgxpool.Pool{}
	c.mu.Unlock()
	for _, p := range pools {
		p.Close()
	}
}

func (c *Cluster) openReaders(ctx context.Context) error {
	if c.readers == nil {
		return nil
	}
	for _, n := range c.pc.Replicas() {
		if err := c.addReader(ctx, n); err != nil {
			return err
		}
	}
	c.publishReaders()
	return nil
}

// Prepare implements target.Target on the primary; the replicas' pools
// start over too, since their connections may hold statements prepared on
// the old tables.
func (c *Cluster) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	c.closeReaders()
	if err := c.Target.Prepare(ctx, w, fresh); err != nil {
		return err
	}
	if c.readers == nil {
		return nil
	}
	c.writes.Add(1)
	if err := c.waitReplayed(ctx); err != nil {
		return err
	}
	return c.openReaders(ctx)
}

// NewClient returns a client once the replicas have replayed every write
// made through the target so far (see Cluster).
func (c *Cluster) NewClient(ctx context.Context) (target.Client, error) {
	if err := c.waitReplayed(ctx); err != nil {
		return nil, err
	}
	return c.Target.NewClient(ctx)
}

func (c *Cluster) waitReplayed(ctx context.Context) error {
	if c.readers == nil {
		return nil
	}
	c.replayMu.Lock()
	defer c.replayMu.Unlock()
	w := c.writes.Load()
	if w == c.replayed {
		return nil
	}
	if err := c.pc.WaitReplayed(ctx, 2*time.Minute); err != nil {
		return fmt.Errorf("postgres target: before reading from the replicas: %w", err)
	}
	c.replayed = w
	return nil
}

// Nodes implements target.NodeScaler.
func (c *Cluster) Nodes() []deploy.Node { return c.pc.Nodes() }

// AddNode implements target.NodeScaler: a new replica from a base backup
// of the primary, on the lab host named host ("" = this machine), which
// takes reads once it streams when read_from sends reads to replicas.
func (c *Cluster) AddNode(ctx context.Context, host string) (deploy.NodeChange, error) {
	var place *deploy.Placement
	if host != "" {
		fail := func(err error) (deploy.NodeChange, error) {
			return deploy.NodeChange{Action: "add_node", Host: host, Requested: time.Now(), BytesStreamed: -1, Error: err.Error()}, err
		}
		if c.env.Lab == nil {
			return fail(fmt.Errorf("add_node: %q names a lab host, but the campaign has no lab", host))
		}
		p, err := c.env.Lab(host)
		if err != nil {
			return fail(fmt.Errorf("add_node: %w", err))
		}
		place = p
	}
	ch, err := c.pc.AddReplica(ctx, place)
	if err != nil {
		return ch, fmt.Errorf("postgres target: %w", err)
	}
	if c.readers != nil {
		for _, n := range c.pc.Replicas() {
			if n.Name == ch.Node {
				if err := c.addReader(ctx, n); err != nil {
					ch.Error = err.Error()
					return ch, err
				}
			}
		}
		c.publishReaders()
	}
	return ch, nil
}

// RemoveNode implements target.NodeScaler: a replica leaves (the primary
// cannot; see deploy.PostgresCluster.RemoveReplica).
func (c *Cluster) RemoveNode(ctx context.Context, node string) (deploy.NodeChange, error) {
	ch, err := c.pc.RemoveReplica(ctx, node)
	if err != nil {
		return ch, fmt.Errorf("postgres target: %w", err)
	}
	return ch, nil
}

// readerGrace is how long a leaving replica's pool stays open after reads
// stopped going to it.
const readerGrace = 100 * time.Millisecond

// nodeLeaving runs just before a removed replica stops: its last
// statement counts join the sums, and reads stop going to it. Requests
// that picked its pool already finish, or fail when it stops.
func (c *Cluster) nodeLeaving(ctx context.Context, n deploy.Node) {
	if c.readers == nil {
		return
	}
	c.mu.Lock()
	pool := c.pools[n.Name]
	delete(c.pools, n.Name)
	c.mu.Unlock()
	c.publishReaders()
	if pool == nil {
		return
	}
	// A client that took the old reader list a moment ago is about to
	// acquire a connection from the pool: let it, before Close (which
	// waits for the connections in use) refuses new ones.
	time.Sleep(readerGrace)
	c.Target.mu.Lock()
	if c.timer != nil {
		_ = c.timer.readNode(ctx, pool, n.Name)
	}
	c.Target.mu.Unlock()
	pool.Close()
}

// ServerTimes implements target.ServerTimer over the nodes that serve
// requests (see Cluster).
func (c *Cluster) ServerTimes(ctx context.Context) ([]target.ServerTime, error) {
	c.Target.mu.Lock()
	defer c.Target.mu.Unlock()
	if c.timer == nil {
		return nil, nil
	}
	if err := c.timer.readNode(ctx, c.pool.Load(), "node1"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	pools := make(map[string]*pgxpool.Pool, len(c.pools))
	for k, v := range c.pools {
		pools[k] = v
	}
	c.mu.Unlock()
	for name, p := range pools {
		if err := c.timer.readNode(ctx, p, name); err != nil {
			return nil, err
		}
	}
	return c.timer.totals(), nil
}

// ServerPIDs implements target.ServerProcesses: every node's postmaster
// and its children.
func (c *Cluster) ServerPIDs() []int {
	var out []int
	for _, pid := range c.pc.PIDs() {
		out = append(append(out, pid), childPIDs(pid)...)
	}
	return out
}

// Restore implements target.Snapshotter: the primary's database is
// replaced from the snapshot (which the replicas replay, dropping their
// connections to the old one), then reads go to the replicas again once
// they have it.
func (c *Cluster) Restore(ctx context.Context) error {
	c.closeReaders()
	if err := c.ManagedTarget.Restore(ctx); err != nil {
		return err
	}
	if c.readers == nil {
		return nil
	}
	c.writes.Add(1)
	if err := c.waitReplayed(ctx); err != nil {
		return err
	}
	return c.openReaders(ctx)
}

// Restart implements target.Restarter: the primary restarts, and the
// target returns once every replica streams from it again.
func (c *Cluster) Restart(ctx context.Context) error {
	if err := c.ManagedTarget.Restart(ctx); err != nil {
		return err
	}
	if err := c.pc.WaitStreaming(ctx, time.Minute); err != nil {
		return fmt.Errorf("postgres target: after restarting the primary: %w", err)
	}
	return nil
}

// Close closes every pool and stops and removes the whole cluster.
func (c *Cluster) Close() error {
	c.closeReaders()
	c.closePool()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return c.pc.Remove(ctx)
}
