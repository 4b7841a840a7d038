package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/target"
)

// The consistency workload's versions live in a table of their own, apart
// from usertable: one row per key, its version in v.
const (
	versionsTable  = "headroom_versions"
	versionsCreate = "CREATE TABLE IF NOT EXISTS " + versionsTable + " (k text PRIMARY KEY, v bigint NOT NULL)"
	versionsRead   = "SELECT v FROM " + versionsTable + " WHERE k = $1"
	versionsWrite  = "UPDATE " + versionsTable + " SET v = $2 WHERE k = $1"
	versionsReset  = "INSERT INTO " + versionsTable + " (k, v) SELECT unnest($1::text[]), 0 ON CONFLICT (k) DO UPDATE SET v = 0"
	pathPrimary    = "primary"
)

var (
	_ target.VersionedStore = (*Target)(nil)
	_ target.VersionedStore = (*Cluster)(nil)
	_ target.ClockReader    = (*Target)(nil)
	_ target.ClockReader    = (*Cluster)(nil)
)

// versionNode is a node a read path goes to.
type versionNode struct {
	path, name string // read path, node name ("primary" for a single server)
	host       string // lab host, or the node name on this machine
	cfg        *pgx.ConnConfig
}

// versionNodes are the single server's read paths: its primary.
func (t *Target) versionNodes() []versionNode {
	host := t.opts.Host
	if t.inst != nil {
		host = pathPrimary
	}
	return []versionNode{{path: pathPrimary, name: pathPrimary, host: host, cfg: t.cfg.ConnConfig}}
}

// versionNodes are the cluster's read paths: the primary, then each
// replica now serving as replica1, replica2, ... in start order.
func (c *Cluster) versionNodes() []versionNode {
	var out []versionNode
	for _, n := range c.pc.Nodes() {
		cfg := c.cfg.ConnConfig.Copy()
		cfg.Host, cfg.Port = n.Inst.Host, uint16(n.Inst.Port)
		host := n.Host
		if host == "" {
			host = n.Name
		}
		path := pathPrimary
		if n.Role == "replica" {
			path = "replica" + strconv.Itoa(len(out))
		}
		out = append(out, versionNode{path: path, name: n.Name, host: host, cfg: cfg})
	}
	return out
}

// ReadPaths implements target.VersionedStore: "primary".
func (t *Target) ReadPaths() []string { return paths(t.versionNodes()) }

// ReadPaths implements target.VersionedStore: "primary", "replica1", ...
func (c *Cluster) ReadPaths() []string { return paths(c.versionNodes()) }

func paths(ns []versionNode) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.path
	}
	return out
}

// WriteLevel implements target.VersionedStore: a commit's durability is
// the cluster's (mode and synchronous_commit), not the request's.
func (t *Target) WriteLevel() string { return "" }

// PrepareVersions implements target.VersionedStore on the primary.
func (t *Target) PrepareVersions(ctx context.Context, keys []string) error {
	pool := t.pool.Load()
	if _, err := pool.Exec(ctx, versionsCreate); err != nil {
		return fmt.Errorf("postgres target: creating %s: %w", versionsTable, err)
	}
	if _, err := pool.Exec(ctx, versionsReset, keys); err != nil {
		return fmt.Errorf("postgres target: setting the consistency keys to version 0: %w", err)
	}
	return nil
}

// PrepareVersions implements target.VersionedStore on the primary, and
// returns once every replica has replayed it (the table must exist where
// the sessions prepare their reads).
func (c *Cluster) PrepareVersions(ctx context.Context, keys []string) error {
	if err := c.Target.PrepareVersions(ctx, keys); err != nil {
		return err
	}
	if err := c.pc.WaitReplayed(ctx, settleReplicas); err != nil {
		return fmt.Errorf("postgres target: before the consistency workload: %w", err)
	}
	return nil
}

// settleReplicas bounds the wait for the replicas to replay the versions'
// table.
const settleReplicas = 30 * time.Second

// NewVersionedClient implements target.VersionedStore.
func (t *Target) NewVersionedClient(ctx context.Context, paths []string) (target.VersionedClient, error) {
	return newVersionedClient(ctx, t.cfg.ConnConfig, t.versionNodes(), paths)
}

// NewVersionedClient implements target.VersionedStore: one connection to
// the primary for writes and one per path read.
func (c *Cluster) NewVersionedClient(ctx context.Context, paths []string) (target.VersionedClient, error) {
	return newVersionedClient(ctx, c.cfg.ConnConfig, c.versionNodes(), paths)
}

// versionedClient holds one connection per read path and one to the
// primary for writes, each with the statements prepared.
type versionedClient struct {
	primary *pgconn.PgConn
	conns   map[string]*pgconn.PgConn // by read path
	nodes   map[string]versionNode    // by read path
	pcfg    *pgx.ConnConfig           // the primary's
	keys    map[string][]byte         // the key's bytes, so that a read does not convert them
	params  [][]byte
	formats []int16
}

func newVersionedClient(ctx context.Context, primary *pgx.ConnConfig, nodes []versionNode, paths []string) (_ target.VersionedClient, err error) {
	vc := &versionedClient{conns: map[string]*pgconn.PgConn{}, nodes: map[string]versionNode{}, keys: map[string][]byte{},
		params: make([][]byte, 2), formats: []int16{0, 0}, pcfg: primary}
	defer func() {
		if err != nil {
			_ = vc.Close()
		}
	}()
	if vc.primary, err = dialVersions(ctx, primary, pathPrimary); err != nil {
		return nil, err
	}
	for _, p := range paths {
		i := indexOfPath(nodes, p)
		if i < 0 {
			return nil, fmt.Errorf("postgres target: workload.consistency.read_levels: no read path %q; use %v", p, pathsOf(nodes))
		}
		conn, err := dialVersions(ctx, nodes[i].cfg, nodes[i].name)
		if err != nil {
			return nil, err
		}
		vc.conns[p] = conn
		vc.nodes[p] = nodes[i]
	}
	return vc, nil
}

func indexOfPath(ns []versionNode, p string) int {
	for i, n := range ns {
		if n.path == p {
			return i
		}
	}
	return -1
}

func pathsOf(ns []versionNode) []string { return paths(ns) }

// dialVersions connects to one node and prepares the read and the write.
func dialVersions(ctx context.Context, cfg *pgx.ConnConfig, node string) (*pgconn.PgConn, error) {
	conn, err := pgconn.ConnectConfig(ctx, &cfg.Config)
	if err != nil {
		return nil, fmt.Errorf("postgres target: connecting to %s for the consistency workload: %w", node, err)
	}
	for name, sql := range map[string]string{"vread": versionsRead, "vwrite": versionsWrite} {
		if _, err := conn.Prepare(ctx, name, sql, nil); err != nil {
			_ = conn.Close(ctx)
			return nil, fmt.Errorf("postgres target: preparing the consistency workload's statements on %s: %w", node, err)
		}
	}
	return conn, nil
}

func (vc *versionedClient) key(k string) []byte {
	b, ok := vc.keys[k]
	if !ok {
		b = []byte(k)
		vc.keys[k] = b
	}
	return b
}

// WriteVersion implements target.VersionedClient: an UPDATE on the primary,
// acknowledged as the cluster's synchronous_commit says.
func (vc *versionedClient) WriteVersion(ctx context.Context, key string, v int64) error {
	if vc.primary.IsClosed() { // lost with its server (a restart, a fault): dial again
		conn, err := dialVersions(ctx, vc.pcfg, pathPrimary)
		if err != nil {
			return &target.KindError{K: target.KindConnection, Err: err}
		}
		vc.primary = conn
	}
	vc.params[0] = vc.key(key)
	vc.params[1] = strconv.AppendInt(vc.params[1][:0], v, 10)
	res := vc.primary.ExecPrepared(ctx, "vwrite", vc.params, vc.formats, nil).Read()
	if res.Err != nil {
		return classify(ctx, res.Err, vc.primary)
	}
	if res.CommandTag.RowsAffected() != 1 {
		return fmt.Errorf("postgres target: consistency key %q is missing from %s", key, versionsTable)
	}
	return nil
}

// ReadVersion implements target.VersionedClient.
func (vc *versionedClient) ReadVersion(ctx context.Context, path, key string) (int64, string, error) {
	conn := vc.conns[path]
	n, ok := vc.nodes[path]
	if !ok {
		return 0, "", fmt.Errorf("postgres target: the session was not opened to read on %q", path)
	}
	if conn.IsClosed() {
		c, err := dialVersions(ctx, n.cfg, n.name)
		if err != nil {
			return 0, "", &target.KindError{K: target.KindConnection, Err: err}
		}
		conn, vc.conns[path] = c, c
	}
	vc.params[0] = vc.key(key)
	rr := conn.ExecPrepared(ctx, "vread", vc.params[:1], vc.formats[:1], nil)
	v, found := history.NoValue, false
	for rr.NextRow() {
		if vals := rr.Values(); len(vals) == 1 && !found {
			v, found = parseVersion(vals[0]), true
		}
	}
	if _, err := rr.Close(); err != nil {
		return 0, "", classify(ctx, err, conn)
	}
	return v, n.host, nil
}

// parseVersion reads a bigint's text form without making a string.
func parseVersion(b []byte) int64 {
	var v int64
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	for _, c := range b {
		v = v*10 + int64(c-'0')
	}
	if neg {
		return -v
	}
	return v
}

// Close implements target.VersionedClient.
func (vc *versionedClient) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if vc.primary != nil {
		errs = append(errs, vc.primary.Close(ctx))
	}
	for _, c := range vc.conns {
		errs = append(errs, c.Close(ctx))
	}
	return errors.Join(errs...)
}

// ServerClocks implements target.ClockReader: clock_timestamp() (in
// microseconds) of the server.
func (t *Target) ServerClocks(ctx context.Context) ([]target.ServerClock, error) {
	return serverClocks(ctx, t.versionNodes())
}

// ServerClocks implements target.ClockReader: clock_timestamp() of every
// node of the cluster.
func (c *Cluster) ServerClocks(ctx context.Context) ([]target.ServerClock, error) {
	return serverClocks(ctx, c.versionNodes())
}

func serverClocks(ctx context.Context, nodes []versionNode) ([]target.ServerClock, error) {
	var out []target.ServerClock
	for _, n := range nodes {
		conn, err := pgx.ConnectConfig(ctx, n.cfg)
		if err != nil {
			for _, c := range out {
				_ = c.Close()
			}
			return nil, fmt.Errorf("postgres target: connecting to %s to read its clock: %w", n.name, err)
		}
		out = append(out, target.ServerClock{
			Host: n.host, Resolution: time.Microsecond,
			Now: func(ctx context.Context) (time.Time, error) {
				var ts time.Time
				err := conn.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&ts)
				return ts, err
			},
			Close: func() error { return conn.Close(context.Background()) },
		})
	}
	return out, nil
}
