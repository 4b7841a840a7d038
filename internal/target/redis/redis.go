// Package redistarget drives a Redis server with YCSB workloads, laid out as
// YCSB's Redis binding does: one hash per record, one hash field per YCSB
// field, and a sorted set "_indices" of every inserted key for scans. A
// second layout, mode: string, keeps each record as one string value, so
// that reads are plain GETs (the command redis-benchmark measures).
//
// The target either connects to an existing server (address) or runs a
// private one (managed, internal/deploy); the managed kind can restart,
// snapshot and restore the server and report its per-command execution
// time.
package redistarget

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	// go-redis logs dial failures and the like to stderr, over the
	// progress display; every failure reaches Do's caller anyway.
	redis.SetLogger(quietLogger{})
	registry.Register(registry.Factory{
		Name:       "redis",
		Summary:    "Redis server (existing, or managed: a private redis-server), YCSB records as hashes or strings",
		NewOptions: func() any { return defaultOptions() },
		Validate:   validate,
		// managed.cluster: a primary with replicas, or Redis Cluster
		// (cluster.go).
		ClusterModes: deploy.RedisClusterModes,
		Open: func(o any, env registry.Env) (target.Target, error) {
			opts := *o.(*Options)
			place := env.Managed
			if opts.Managed != nil && opts.Managed.Cluster != nil {
				place = env.ClusterPlacements
			}
			m, err := place(opts.Managed)
			if err != nil {
				return nil, fmt.Errorf("redis target: %w", err)
			}
			opts.Managed = m
			return Open(opts, env)
		},
	})
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// indexKey is the sorted set of every inserted key, scored by the key's
// hash, that YCSB's binding scans (its INDEX_KEY).
const indexKey = "_indices"

// Target is an open connection pool to one Redis server, or to the nodes
// of a managed cluster (cluster.go).
type Target struct {
	opts   Options
	addr   string
	user   string
	rdb    conn          // the workload's pool, shared by all clients
	admin  *redis.Client // one connection for FLUSHDB, INFO, SAVE, outside the pool; a Redis Cluster has none
	prefix []byte
	index  string

	// cc is the Redis Cluster client (the same as rdb), nil otherwise;
	// cluster says the clients make fresh commands (routing.go).
	cc      *redis.ClusterClient
	cluster bool
	// readers are the replicas reads go to (read_from: replicas), nil
	// when reads go with the writes.
	readers *atomic.Pointer[[]*redis.Client]

	// Set by Prepare.
	fields   []string // field0, field1, ...
	fieldLen int
	timing   []opCommands // server-time mapping, see servertime.go
}

// Managed is a Target with its own server instance: it adds the
// capabilities only a server Headroom runs has.
type Managed struct {
	*Target
	inst     *deploy.Instance
	snapshot string // the RDB file Snapshot saved, "" before
}

// Open connects to the server the options name, after starting it when they
// ask for a managed instance (in env.InstanceDir("redis")). It returns a
// *Managed for managed instances and a *Target otherwise.
func Open(opts Options, env registry.Env) (target.Target, error) {
	if opts.Managed != nil && opts.Managed.Cluster != nil {
		return openCluster(opts, env)
	}
	if opts.Managed == nil {
		t, err := open(opts, env.Dir, nil)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst, err := deploy.Start(ctx, deploy.Redis(), env.InstanceDir("redis"), *opts.Managed)
	if err != nil {
		return nil, fmt.Errorf("redis target: managed: %w", err)
	}
	t, err := open(opts, env.Dir, inst)
	if err != nil {
		_ = inst.Remove(context.Background())
		return nil, err
	}
	return &Managed{Target: t, inst: inst}, nil
}

func open(opts Options, dir string, inst *deploy.Instance) (*Target, error) {
	var password string
	var err error
	addr := opts.Address
	if inst != nil {
		addr, password = inst.Addr(), inst.Password
	} else {
		if addr == "" {
			addr = defaultAddress
		}
		if password, err = opts.password(dir); err != nil {
			return nil, err
		}
	}
	opts.Address = addr
	tlsCfg, err := opts.tlsConfig(dir)
	if err != nil {
		return nil, err
	}
	ro := clientOptions(opts, addr, password, tlsCfg)
	t := &Target{opts: opts, addr: addr, user: opts.Username, prefix: []byte(opts.KeyPrefix), index: opts.KeyPrefix + indexKey}
	if t.user == "" {
		t.user = "default"
	}
	t.rdb = redis.NewClient(ro)
	adminOpts := *ro
	adminOpts.PoolSize = 1
	t.admin = redis.NewClient(&adminOpts)
	ctx, cancel := context.WithTimeout(context.Background(), opts.DialTimeout.Duration+5*time.Second)
	defer cancel()
	if err := t.admin.Ping(ctx).Err(); err != nil {
		t.closePools()
		return nil, t.connectError(err)
	}
	return t, nil
}

// clientOptions are the workload pool's settings for one server.
func clientOptions(opts Options, addr, password string, tlsCfg *tls.Config) *redis.Options {
	return &redis.Options{
		Addr:     addr,
		Username: opts.Username,
		Password: password,
		DB:       opts.DB,
		// RESP2: its replies are the simplest to read, and push messages
		// (RESP3 only) are not needed.
		Protocol: 2,
		PoolSize: opts.PoolSize,
		// A failed request is a measurement, not something to hide: no
		// retries, and one dial attempt per new connection.
		MaxRetries:    -1,
		DialerRetries: 1,
		DialTimeout:   opts.DialTimeout.Duration,
		ReadTimeout:   noLimit(opts.ReadTimeout.Duration),
		WriteTimeout:  noLimit(opts.WriteTimeout.Duration),
		// A request's context deadline (the load section's timeout) also
		// bounds its socket reads and writes.
		ContextTimeoutEnabled: true,
		// Pool waits end with the request's context or after this long.
		PoolTimeout:              30 * time.Second,
		PipelinePoolSize:         -1, // pipelines (inserts, scans, loads) use the one pool
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		TLSConfig:                tlsCfg,
	}
}

// noLimit maps the spec's 0 (no limit) to go-redis's -1.
func noLimit(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// connectError explains a failed first PING. go-redis's messages carry the
// server's reply, never the password.
func (t *Target) connectError(err error) error {
	msg := err.Error()
	hint := ""
	switch {
	case strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "invalid password"):
		hint = "; the server rejected the user name or password: check username and the variable or file named by password_env or password_file"
	case strings.Contains(msg, "NOAUTH"):
		hint = "; the server requires a password: set password_env or password_file"
	case target.IsConnectionError(err):
		hint = "; is the server running and is address right?"
	}
	return fmt.Errorf("redis target: cannot connect to %s as %s: %v%s", t.addr, t.user, err, hint)
}

// Address is the server's host:port.
func (t *Target) Address() string { return t.addr }

// Prepare checks that the workload fits the target and, when fresh, empties
// the selected database (FLUSHDB: everything in it goes, not only keys
// with key_prefix).
func (t *Target) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	if w.IsStatements() {
		return errors.New("workload.statements: the redis target runs YCSB workloads, not SQL statements; use a YCSB workload, or the sqlite, postgres or mysql target")
	}
	if t.opts.Mode == modeString && w.Mix[workload.Scan] > 0 {
		return errors.New("mode: string records have no scan index, and the workload has scans; use mode: hash, or give scan a weight of 0")
	}
	if fresh {
		if err := t.flush(ctx); err != nil {
			return fmt.Errorf("redis target: emptying db %d (FLUSHDB): %w", t.opts.DB, classify(err))
		}
	}
	fields := make([]string, w.FieldCount)
	for i := range fields {
		fields[i] = fmt.Sprintf("field%d", i)
	}
	t.fields, t.fieldLen = fields, w.FieldLength
	t.timing = timingFor(t.opts.Mode, w.Mix)
	return nil
}

// NewClient returns a client for one request slot; all clients share the
// target's connection pool.
func (t *Target) NewClient(context.Context) (target.Client, error) {
	if t.fields == nil {
		return nil, errors.New("redis target: Prepare must run before clients are opened")
	}
	return newClient(t), nil
}

// flush empties the selected database (on every primary of a Redis
// Cluster; replicas follow their primary).
func (t *Target) flush(ctx context.Context) error {
	if t.cc != nil {
		return t.cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return n.FlushDB(ctx).Err()
		})
	}
	return t.admin.FlushDB(ctx).Err()
}

func (t *Target) closePools() error {
	err := t.rdb.(io.Closer).Close()
	if t.admin != nil {
		err = errors.Join(err, t.admin.Close())
	}
	if t.readers != nil {
		if rs := t.readers.Load(); rs != nil {
			for _, r := range *rs {
				err = errors.Join(err, r.Close())
			}
		}
	}
	return err
}

// Close closes the connection pool.
func (t *Target) Close() error { return t.closePools() }

// Close closes the pool, then stops and removes the managed instance (its
// log stays).
func (m *Managed) Close() error {
	err := m.closePools()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return errors.Join(err, m.inst.Remove(ctx))
}

// Instance is the managed server.
func (m *Managed) Instance() *deploy.Instance { return m.inst }

// Restart implements target.Restarter. A clean stop saves the data set
// (shutdown-on-sigterm save), so the restarted server has the same data.
// The pool needs no rebuilding: go-redis checks each idle connection before
// handing it out and replaces the ones the old server closed.
func (m *Managed) Restart(ctx context.Context) error {
	if err := m.inst.Restart(ctx); err != nil {
		return fmt.Errorf("redis target: restarting the managed server: %w", err)
	}
	return nil
}

// ServerPIDs implements target.ServerProcesses.
func (m *Managed) ServerPIDs() []int {
	if pid := m.inst.PID(); pid > 0 {
		return []int{pid}
	}
	return nil
}

// Snapshot implements target.Snapshotter: SAVE, then a copy of dump.rdb in
// the instance directory.
func (m *Managed) Snapshot(ctx context.Context) error {
	path := filepath.Join(m.inst.Dir, "snapshot.rdb")
	if err := deploy.SaveRedisRDB(ctx, m.inst, path); err != nil {
		return fmt.Errorf("redis target: snapshot: %w", err)
	}
	m.snapshot = path
	return nil
}

// Restore implements target.Snapshotter: the server stops without saving,
// the snapshot replaces dump.rdb and the server starts and loads it.
func (m *Managed) Restore(ctx context.Context) error {
	if m.snapshot == "" {
		return errors.New("redis target: restore: no snapshot was taken")
	}
	if err := deploy.RestoreRedisRDB(ctx, m.inst, m.snapshot); err != nil {
		return fmt.Errorf("redis target: restore: %w", err)
	}
	return nil
}

// ServerTimes implements target.ServerTimer from INFO commandstats; see
// servertime.go for which operations it can report.
func (m *Managed) ServerTimes(ctx context.Context) ([]target.ServerTime, error) {
	info, err := m.admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, fmt.Errorf("redis target: INFO commandstats: %w", classify(err))
	}
	return serverTimes(m.timing, parseCommandStats(info)), nil
}

// Ephemeral implements target.Ephemeral: each session starts its own empty
// server, so a resumed campaign populates it again.
func (m *Managed) Ephemeral() bool { return true }

// StartServer implements target.ServerStarter: it starts the server again
// when it is not running (after a kill event), on the same port and data.
func (m *Managed) StartServer(ctx context.Context) error {
	if m.inst.Running() {
		return nil
	}
	return m.inst.Restart(ctx)
}
