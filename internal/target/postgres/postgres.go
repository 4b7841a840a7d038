// Package postgres is the PostgreSQL system under test, through the pgx v5
// driver: an existing server named by host, port, user and database, or a
// private cluster Headroom runs for the campaign (managed:, see
// internal/deploy). The YCSB workload maps to one table as YCSB's JDBC
// binding lays it out; statement workloads run their SQL as written, with ?
// placeholders rebound to $1, $2, .... Requests go through a connection
// pool; in the default prepared mode each statement is prepared once per
// connection and executed through pgx's protocol layer (pgconn) with text
// parameters, skipping pgx's type mapping, so the client adds little to
// the server's own time.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	registry.Register(registry.Factory{
		Name:         "postgres",
		Summary:      "PostgreSQL server: an existing one (host, port, user, database) or a private managed cluster",
		NewOptions:   func() any { return defaultOptions() },
		Validate:     validate,
		ClusterModes: deploy.PostgresClusterModes,
		Open: func(o any, env registry.Env) (target.Target, error) {
			opts := *o.(*Options)
			if opts.Managed != nil && opts.Managed.Cluster != nil {
				return openCluster(opts, env)
			}
			m, err := env.Managed(opts.Managed)
			if err != nil {
				return nil, fmt.Errorf("postgres target: %w", err)
			}
			opts.Managed = m
			return Open(opts, env.Dir)
		},
	})
}

// Target is a connection pool to one PostgreSQL database.
type Target struct {
	opts Options
	inst *deploy.Instance // the managed cluster, nil for an existing server
	cfg  *pgxpool.Config  // holds the password: never print it
	addr string           // user@host:port/database, for messages

	// pool is swapped when the server restarts or its database is
	// replaced; clients load it on every request.
	pool atomic.Pointer[pgxpool.Pool]
	mu   sync.Mutex // serialises Prepare, pool swaps and server timing

	qs    atomic.Pointer[querySet]
	timer *serverTimer

	// readers are the pools YCSB reads and scans go to (a cluster's
	// replicas, with read_from); nil sends every request to pool.
	readers *atomic.Pointer[readerSet]
	clients atomic.Int64 // clients made so far, for their place among readers
	writes  atomic.Int64 // with readers: write requests and loads so far
}

// Open connects to the server the options name, or starts a managed
// cluster under dir/instances/postgres. It fails when the server cannot be
// reached or refuses the credentials.
func Open(opts Options, dir string) (target.Target, error) {
	var inst *deploy.Instance
	if opts.Managed != nil {
		var err error
		inst, err = deploy.Start(context.Background(), deploy.Postgres(), deploy.InstanceDir(dir, "postgres"), *opts.Managed)
		if err != nil {
			return nil, fmt.Errorf("postgres target: managed: %w", err)
		}
	}
	t, err := connect(opts, dir, inst)
	if err != nil {
		if inst != nil {
			_ = inst.Remove(context.Background())
		}
		return nil, err
	}
	if t.inst != nil {
		return &ManagedTarget{t}, nil
	}
	return t, nil
}

// connect opens the pool to the server the options name, or to inst, a
// managed server (the primary of a managed cluster), when it is not nil.
func connect(opts Options, dir string, inst *deploy.Instance) (*Target, error) {
	t := &Target{opts: opts, inst: inst}
	ctx := context.Background()
	if inst != nil {
		opts.Host, opts.Port, opts.User, opts.Database, opts.SSLMode = inst.Host, inst.Port, inst.User, inst.Database, "disable"
	}
	if opts.Host == "" {
		opts.Host = defaultHost
	}
	if opts.Port == 0 {
		opts.Port = defaultPort
	}
	if opts.User == "" {
		opts.User = defaultUser
	}
	if opts.Database == "" {
		opts.Database = opts.User
	}
	t.opts = opts
	t.addr = fmt.Sprintf("%s@%s:%d/%s", opts.User, opts.Host, opts.Port, opts.Database)
	cfg, err := poolConfig(&opts, dir)
	if err == nil && t.inst != nil {
		cfg.ConnConfig.Password = t.inst.Password
	}
	if err == nil {
		t.cfg = cfg
		err = t.openPool(ctx)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// poolConfig turns the options into pgx's configuration; the connection
// string it parses carries everything but the password.
func poolConfig(o *Options, dir string) (*pgxpool.Config, error) {
	kv := []string{"host", o.Host, "port", fmt.Sprint(o.Port), "user", o.User, "dbname", o.Database, "sslmode", o.SSLMode}
	if o.CAFile != "" {
		kv = append(kv, "sslrootcert", inDir(dir, o.CAFile))
	}
	var b strings.Builder
	for i := 0; i < len(kv); i += 2 {
		fmt.Fprintf(&b, "%s='%s' ", kv[i], strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(kv[i+1]))
	}
	cfg, err := pgxpool.ParseConfig(b.String())
	if err != nil {
		return nil, fmt.Errorf("postgres target: %w", err)
	}
	pw, err := o.password(dir)
	if err != nil {
		return nil, err
	}
	if pw != "" {
		cfg.ConnConfig.Password = pw
	}
	cc := cfg.ConnConfig
	cc.ConnectTimeout = o.ConnectTimeout.Duration
	cc.RuntimeParams["application_name"] = "headroom"
	if d := o.StatementTimeout.Duration; d > 0 {
		cc.RuntimeParams["statement_timeout"] = fmt.Sprint(d.Milliseconds())
	}
	// A canceled request (the load section's timeout, or the end of a run)
	// asks the server to cancel the statement and keeps the connection,
	// instead of closing it and paying for a new one.
	cc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 2 * time.Second}
	}
	cfg.MaxConns = int32(o.PoolSize)
	// The pool replaces lost connections up to MinConns in the background.
	cfg.MinConns = int32(o.MinConnections)
	// Connections live as long as the campaign: recycling them would add
	// reconnections to the measured latency.
	cfg.MaxConnLifetime = 7 * 24 * time.Hour
	cfg.MaxConnIdleTime = 24 * time.Hour
	return cfg, nil
}

// openPool creates the pool and checks that the server takes the
// credentials.
func (t *Target) openPool(ctx context.Context) error {
	pool, err := pgxpool.NewWithConfig(ctx, t.cfg)
	if err != nil {
		return fmt.Errorf("postgres target: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, t.opts.ConnectTimeout.Duration+5*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return fmt.Errorf("postgres target: cannot connect to %s: %w", t.addr, err)
	}
	if err := openAhead(ctx, pool, t.opts.MinConnections, t.opts.ConnectTimeout.Duration); err != nil {
		pool.Close()
		return fmt.Errorf("postgres target: min_connections: opening %d connections to %s: %w", t.opts.MinConnections, t.addr, err)
	}
	t.pool.Store(pool)
	return nil
}

// openAhead opens n connections of the pool now, all held at once so
// that none is reused, and returns them to it idle.
func openAhead(ctx context.Context, pool *pgxpool.Pool, n int, connectTimeout time.Duration) error {
	if n <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout+time.Duration(n)*time.Second)
	defer cancel()
	held := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for range n {
		c, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		held = append(held, c)
	}
	return nil
}

// closePool closes the current pool; requests already holding a connection
// finish first.
func (t *Target) closePool() {
	if p := t.pool.Load(); p != nil {
		p.Close()
	}
}

// Prepare creates the YCSB table, or the statement workload's tables
// through internal/sqlwork, dropping them first when fresh, and prepares
// the statements the clients will run.
func (t *Target) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	pool := t.pool.Load()
	var qs *querySet
	if w.IsStatements() {
		db := stdlib.OpenDBFromPool(pool)
		err := sqlwork.Setup(ctx, db, sqlwork.Postgres, w.Dataset, fresh)
		db.Close()
		if err != nil {
			return fmt.Errorf("postgres target: %w", err)
		}
		qs = statementQueries(w)
	} else {
		tbl := t.opts.Table
		if fresh {
			if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+tbl); err != nil {
				return fmt.Errorf("postgres target: dropping table %s: %w", tbl, err)
			}
		}
		if _, err := pool.Exec(ctx, sqlycsb.Postgres.CreateTable(tbl, w.FieldCount)); err != nil {
			return fmt.Errorf("postgres target: creating table %s: %w", tbl, err)
		}
		qs = ycsbQueries(tbl, w.FieldCount)
	}
	qs.simple = t.opts.QueryMode == "simple"
	if err := qs.check(ctx, pool); err != nil {
		return err
	}
	t.qs.Store(qs)
	if t.opts.ServerTiming {
		t.timer = newServerTimer(ctx, pool, qs)
	}
	// Connections opened before the tables changed may hold plans of the
	// old ones; start over with fresh ones.
	return t.resetPool(ctx)
}

// resetPool replaces the pool with a new one. The caller holds t.mu.
func (t *Target) resetPool(ctx context.Context) error {
	t.closePool()
	return t.openPool(ctx)
}

// NewClient returns a client; all clients share the pool.
func (t *Target) NewClient(context.Context) (target.Client, error) {
	if t.qs.Load() == nil {
		return nil, errors.New("postgres target: Prepare must run before clients are opened")
	}
	return newClient(t), nil
}

// LoadDataset implements target.DatasetLoader for statement workloads.
func (t *Target) LoadDataset(ctx context.Context, w workload.Config, seed uint64, progress func(done, total int64)) error {
	db := stdlib.OpenDBFromPool(t.pool.Load())
	defer db.Close()
	if err := sqlwork.Populate(ctx, db, sqlwork.Postgres, w.Dataset, seed, progress); err != nil {
		return fmt.Errorf("postgres target: %w", err)
	}
	// Fresh statistics, as after any bulk load, so that the first run's
	// plans do not depend on when autovacuum last looked.
	if _, err := t.pool.Load().Exec(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("postgres target: analyzing the loaded tables: %w", err)
	}
	return nil
}

// ServerTimes implements target.ServerTimer from pg_stat_statements.
func (t *Target) ServerTimes(ctx context.Context) ([]target.ServerTime, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer == nil {
		return nil, nil
	}
	return t.timer.read(ctx, t.pool.Load())
}

// Close closes the pool and stops and removes a managed cluster.
func (t *Target) Close() error {
	t.closePool()
	if t.inst != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return t.inst.Remove(ctx)
	}
	return nil
}
