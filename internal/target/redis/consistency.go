package redistarget

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/target"
)

// The consistency workload's versions are plain string keys beside the
// YCSB records: KEY_PREFIX + "version:" + key holds the version number.
// A read path is the primary, or a replica by its place among the
// replicas now serving (replica1, replica2, ...); WAIT is not a path (it
// is how a write waits, not where a read goes).
const pathPrimary = "primary"

var (
	_ target.VersionedStore = (*Target)(nil)
	_ target.VersionedStore = (*Cluster)(nil)
	_ target.ClockReader    = (*Target)(nil)
	_ target.ClockReader    = (*Cluster)(nil)
)

func (t *Target) versionKey(key string) string { return t.opts.KeyPrefix + "version:" + key }

// ReadPaths implements target.VersionedStore: the one server.
func (t *Target) ReadPaths() []string { return []string{pathPrimary} }

// ReadPaths implements target.VersionedStore: the primary and the replicas
// in replicas mode; a Redis Cluster reads on each key's primary only.
func (c *Cluster) ReadPaths() []string {
	out := []string{pathPrimary}
	for _, n := range c.replicaNodes() {
		out = append(out, n.path)
	}
	return out
}

type replicaPath struct {
	path string
	node deploy.Node
}

// replicaNodes are the replicas that serve now, with their paths.
func (c *Cluster) replicaNodes() []replicaPath {
	if c.rc.Mode() != deploy.RedisModeReplicas {
		return nil
	}
	var out []replicaPath
	for _, n := range c.rc.Nodes() {
		if n.Role == "replica" {
			out = append(out, replicaPath{path: "replica" + strconv.Itoa(len(out)+1), node: n})
		}
	}
	return out
}

// WriteLevel implements target.VersionedStore: writes are acknowledged by
// the primary alone.
func (t *Target) WriteLevel() string { return "" }

// PrepareVersions implements target.VersionedStore: every key to 0.
func (t *Target) PrepareVersions(ctx context.Context, keys []string) error {
	for _, k := range keys {
		cmd := redis.NewStatusCmd(ctx, "set", t.versionKey(k), "0")
		if err := t.rdb.Process(ctx, cmd); err != nil {
			return fmt.Errorf("redis target: setting the consistency key %q to version 0: %w", k, classify(err))
		}
	}
	return nil
}

// NewVersionedClient implements target.VersionedStore on the one server:
// the workload's pool serves every path, which is the primary.
func (t *Target) NewVersionedClient(_ context.Context, paths []string) (target.VersionedClient, error) {
	vc := newVersionedClient(t, t.rdb)
	for _, p := range paths {
		if p != pathPrimary {
			return nil, fmt.Errorf("redis target: workload.consistency.read_levels: no read path %q; use primary", p)
		}
		vc.paths[p] = readPath{conn: t.rdb, node: pathPrimary}
	}
	return vc, nil
}

// NewVersionedClient implements target.VersionedStore: the primary
// through the workload's pool, each replica through a connection of the
// session's own.
func (c *Cluster) NewVersionedClient(_ context.Context, paths []string) (target.VersionedClient, error) {
	vc := newVersionedClient(c.Target, c.Target.rdb)
	reps := c.replicaNodes()
	primary := "node1"
	if c.rc.Mode() == deploy.RedisModeCluster {
		primary = pathPrimary
	}
	for _, p := range paths {
		if p == pathPrimary {
			vc.paths[p] = readPath{conn: c.Target.rdb, node: primary}
			if n := c.rc.Nodes(); len(n) > 0 && n[0].Host != "" && primary != pathPrimary {
				vc.paths[p] = readPath{conn: c.Target.rdb, node: n[0].Host}
			}
			continue
		}
		i := 0
		for i < len(reps) && reps[i].path != p {
			i++
		}
		if i == len(reps) {
			_ = vc.Close()
			return nil, fmt.Errorf("redis target: workload.consistency.read_levels: no read path %q; use %v", p, c.ReadPaths())
		}
		o := clientOptions(c.opts, reps[i].node.Inst.Addr(), c.rc.Password(), nil)
		o.PoolSize = 1
		r := redis.NewClient(o)
		vc.owned = append(vc.owned, r)
		name := reps[i].node.Host // named as its clock is (ServerClocks)
		if name == "" {
			name = reps[i].node.Name
		}
		vc.paths[p] = readPath{conn: r, node: name}
	}
	return vc, nil
}

type readPath struct {
	conn conn
	node string
}

// versionedClient keeps one GET command per path and key and sends it
// again for every read of them, so a read makes no command of its own.
type versionedClient struct {
	t     *Target
	write conn
	paths map[string]readPath
	owned []*redis.Client // the session's own connections, closed with it
	gets  map[[2]string]*redis.StringCmd
	keys  map[string]string // key -> its version key
}

func newVersionedClient(t *Target, write conn) *versionedClient {
	return &versionedClient{t: t, write: write, paths: map[string]readPath{}, gets: map[[2]string]*redis.StringCmd{}, keys: map[string]string{}}
}

func (vc *versionedClient) versionKey(key string) string {
	k, ok := vc.keys[key]
	if !ok {
		k = vc.t.versionKey(key)
		vc.keys[key] = k
	}
	return k
}

// WriteVersion implements target.VersionedClient: SET on the primary,
// acknowledged once the primary has it (replication is asynchronous).
func (vc *versionedClient) WriteVersion(ctx context.Context, key string, v int64) error {
	cmd := redis.NewStatusCmd(ctx, "set", vc.versionKey(key), v)
	if err := vc.write.Process(ctx, cmd); err != nil {
		return classify(err)
	}
	return nil
}

// ReadVersion implements target.VersionedClient: GET on the path's node.
func (vc *versionedClient) ReadVersion(ctx context.Context, path, key string) (int64, string, error) {
	rp, ok := vc.paths[path]
	if !ok {
		return 0, "", fmt.Errorf("redis target: the session was not opened to read on %q", path)
	}
	cmd := vc.gets[[2]string{path, key}]
	if cmd == nil {
		cmd = redis.NewStringCmd(ctx, "get", vc.versionKey(key))
		vc.gets[[2]string{path, key}] = cmd
	}
	cmd.SetErr(nil)
	cmd.SetVal("")
	err := rp.conn.Process(ctx, cmd)
	if errors.Is(err, redis.Nil) {
		return history.NoValue, rp.node, nil
	}
	if err != nil {
		return 0, "", classify(err)
	}
	v, err := strconv.ParseInt(cmd.Val(), 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("redis target: consistency key %q holds %q, not a version", key, cmd.Val())
	}
	return v, rp.node, nil
}

// Close implements target.VersionedClient.
func (vc *versionedClient) Close() error {
	var errs []error
	for _, r := range vc.owned {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// ServerClocks implements target.ClockReader: TIME (in microseconds) of
// the server.
func (t *Target) ServerClocks(context.Context) ([]target.ServerClock, error) {
	host, _, err := net.SplitHostPort(t.addr)
	if err != nil {
		host = t.addr
	}
	return []target.ServerClock{redisClock(host, t.rdb, func() error { return nil })}, nil
}

// ServerClocks implements target.ClockReader: TIME of every node.
func (m *Managed) ServerClocks(context.Context) ([]target.ServerClock, error) {
	return []target.ServerClock{redisClock(pathPrimary, m.rdb, func() error { return nil })}, nil
}

// ServerClocks implements target.ClockReader: TIME of every node, each
// through a connection of its own.
func (c *Cluster) ServerClocks(context.Context) ([]target.ServerClock, error) {
	var out []target.ServerClock
	for _, n := range c.rc.Nodes() {
		o := clientOptions(c.opts, n.Inst.Addr(), c.rc.Password(), nil)
		o.PoolSize = 1
		r := redis.NewClient(o)
		host := n.Host
		if host == "" {
			host = n.Name
		}
		out = append(out, redisClock(host, r, r.Close))
	}
	return out, nil
}

func redisClock(host string, c conn, closeFn func() error) target.ServerClock {
	return target.ServerClock{
		Host: host, Resolution: time.Microsecond, Close: closeFn,
		Now: func(ctx context.Context) (time.Time, error) {
			cmd := redis.NewTimeCmd(ctx, "time")
			if err := c.Process(ctx, cmd); err != nil {
				return time.Time{}, classify(err)
			}
			return cmd.Val(), nil
		},
	}
}
