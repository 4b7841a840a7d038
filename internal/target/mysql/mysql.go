// Package mysql drives MySQL and MariaDB servers through
// go-sql-driver/mysql: an existing server, or a private MariaDB server that
// Headroom runs for the campaign (managed:). The YCSB workload maps to one
// InnoDB table laid out as YCSB's JDBC binding does; statement workloads
// run through internal/sqlwork. Server-side statement times come from
// performance_schema (timing.go).
package mysql

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	registry.Register(registry.Factory{
		Name:       "mysql",
		Summary:    "MySQL or MariaDB server: an existing one, or a private MariaDB server Headroom runs (managed:)",
		NewOptions: func() any { return defaultOptions() },
		Validate:   validate,
		Open: func(o any, env registry.Env) (target.Target, error) {
			opts := *o.(*Options)
			m, err := env.Managed(opts.Managed)
			if err != nil {
				return nil, fmt.Errorf("mysql target: %w", err)
			}
			opts.Managed = m
			return Open(context.Background(), opts, env.Dir)
		},
	})
}

// Target is a connection pool to one server and the workload's statements.
type Target struct {
	opts  Options
	cfg   *mysql.Config // holds the password: never print it
	inst  *deploy.Instance
	dir   string  // the campaign's results directory
	db    *sql.DB // shared by the request slots' clients
	admin *sql.DB // one connection for timing and restores, so they never queue behind the slots

	w        workload.Config
	prepared bool
	ycsb     *sqlycsb.Prepared
	ws       []wstmt // statement workload, by statement index
	timing   timing
	snapshot string // dump file once Snapshot has run
}

// managedTarget is a Target whose server Headroom runs: it can restart it
// and knows its process.
type managedTarget struct{ *Target }

// Restart implements target.Restarter.
func (m managedTarget) Restart(ctx context.Context) error { return m.restart(ctx) }

// ServerPIDs implements target.ServerProcesses.
func (m managedTarget) ServerPIDs() []int {
	if pid := m.inst.PID(); pid > 0 {
		return []int{pid}
	}
	return nil
}

// Ephemeral implements target.Ephemeral: each session starts its own empty
// server.
func (m managedTarget) Ephemeral() bool { return true }

// Open connects to the server the options name, or starts a managed MariaDB
// server under dir/instances. Relative file names in the options are
// resolved against dir.
func Open(ctx context.Context, opts Options, dir string) (target.Target, error) {
	t := &Target{opts: opts, dir: dir}
	if opts.Managed != nil {
		if err := t.startManaged(ctx); err != nil {
			return nil, err
		}
	} else {
		cfg, err := clientConfig(opts, dir)
		if err != nil {
			return nil, err
		}
		t.cfg = cfg
	}
	applyOptions(t.cfg, opts)
	if err := t.openPools(ctx); err != nil {
		t.Close()
		return nil, err
	}
	if t.inst != nil {
		return managedTarget{t}, nil
	}
	return t, nil
}

// startManaged starts a private MariaDB server. A results directory that
// already holds an earlier session's instance (its kept server.log) gets a
// new instance directory next to it.
func (t *Target) startManaged(ctx context.Context) error {
	m := *t.opts.Managed
	m.Settings = make(map[string]string, len(t.opts.Managed.Settings)+1)
	for k, v := range t.opts.Managed.Settings {
		m.Settings[k] = v
	}
	// Every pooled connection, plus the admin one and the tools', must fit
	// under max_connections (151 by default).
	if _, a := m.Settings["max_connections"]; !a {
		if _, b := m.Settings["max-connections"]; !b && t.opts.PoolSize+20 > 151 {
			m.Settings["max_connections"] = strconv.Itoa(t.opts.PoolSize + 20)
		}
	}
	inst, err := deploy.Start(ctx, deploy.MariaDB(), deploy.InstanceDir(t.dir, "mariadb"), m)
	if err != nil {
		return fmt.Errorf("mysql target: managed: %w", err)
	}
	t.inst = inst
	t.cfg = deploy.MariaDBConfig(inst)
	return nil
}

// clientConfig is the driver configuration for an existing server.
func clientConfig(opts Options, dir string) (*mysql.Config, error) {
	cfg := mysql.NewConfig()
	host, port := opts.Host, opts.Port
	if host == "" {
		host = defaultHost
	}
	if port == 0 {
		port = defaultPort
	}
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(port))
	cfg.User, cfg.DBName = opts.User, opts.Database
	pw, err := password(opts, dir)
	if err != nil {
		return nil, err
	}
	cfg.Passwd = pw
	switch mode := strings.ToLower(opts.TLS); {
	case mode == "true" && opts.CAFile != "":
		pem, err := os.ReadFile(resolve(dir, opts.CAFile))
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file: %s holds no PEM certificate", opts.CAFile)
		}
		cfg.TLS = &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12}
	case mode == "" || mode == "false":
	default:
		cfg.TLSConfig = mode
	}
	return cfg, nil
}

// password reads the password from the environment variable or file the
// options name ("" when neither is given).
func password(opts Options, dir string) (string, error) {
	switch {
	case opts.PasswordEnv != "":
		pw, ok := os.LookupEnv(opts.PasswordEnv)
		if !ok {
			return "", fmt.Errorf("password_env: the environment variable %s is not set; export it before running Headroom", opts.PasswordEnv)
		}
		return pw, nil
	case opts.PasswordFile != "":
		b, err := os.ReadFile(resolve(dir, opts.PasswordFile))
		if err != nil {
			return "", fmt.Errorf("password_file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimSuffix(line, "\r"), nil
	}
	return "", nil
}

func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// applyOptions sets what the options say about every connection.
func applyOptions(cfg *mysql.Config, opts Options) {
	cfg.Timeout = opts.ConnectTimeout.Duration
	cfg.ReadTimeout = opts.ReadTimeout.Duration
	cfg.WriteTimeout = opts.WriteTimeout.Duration
	cfg.InterpolateParams = opts.InterpolateParams
	// UPDATE reports matched rows, not changed ones, so an update that
	// writes the value a record already holds is not taken for a missing
	// key.
	cfg.ClientFoundRows = true
	// The driver would print to stderr over the progress display; every
	// error it logs is also returned.
	cfg.Logger = &mysql.NopLogger{}
}

// openPools opens the slots' pool and the admin connection and checks that
// the server accepts the login.
func (t *Target) openPools(ctx context.Context) error {
	conn, err := mysql.NewConnector(t.cfg)
	if err != nil {
		return fmt.Errorf("mysql target: %w", err)
	}
	t.db = sql.OpenDB(conn)
	t.db.SetMaxOpenConns(t.opts.PoolSize)
	t.db.SetMaxIdleConns(t.opts.PoolSize)
	t.admin = sql.OpenDB(conn)
	t.admin.SetMaxOpenConns(1)
	t.admin.SetMaxIdleConns(1)
	pctx, cancel := context.WithTimeout(ctx, t.opts.ConnectTimeout.Duration+5*time.Second)
	defer cancel()
	if err := t.admin.PingContext(pctx); err != nil {
		return fmt.Errorf("mysql target: cannot log in to %s as %s (database %s): %w", t.cfg.Addr, t.cfg.User, t.cfg.DBName, err)
	}
	return nil
}

func (t *Target) closePools() {
	if t.db != nil {
		t.db.Close()
	}
	if t.admin != nil {
		t.admin.Close()
	}
}

// Prepare creates the workload's tables (dropping them first when fresh)
// and its statements, and learns their performance_schema digests.
func (t *Target) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	if w.IsStatements() {
		if err := sqlwork.Setup(ctx, t.db, sqlwork.MySQL, w.Dataset, fresh); err != nil {
			return fmt.Errorf("mysql target: %w", err)
		}
	} else if err := t.createTable(ctx, w, fresh); err != nil {
		return err
	}
	// Digests depend only on the statements' text: a second Prepare of
	// the same workload (reset: repopulate) keeps what it learnt.
	relearn := !t.prepared || t.timing.err != nil || !reflect.DeepEqual(t.w, w)
	t.w = w
	if err := t.buildStatements(ctx); err != nil {
		return err
	}
	t.prepared = true
	if t.opts.ServerTiming && relearn {
		t.timing = t.learnDigests(ctx)
	}
	return nil
}

// createTable creates the YCSB table: a binary-collated key, so keys sort
// byte by byte as in every other target, and one TEXT column per field.
func (t *Target) createTable(ctx context.Context, w workload.Config, fresh bool) error {
	tbl := t.opts.Table
	if fresh {
		if _, err := t.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+tbl); err != nil {
			return fmt.Errorf("mysql target: dropping table %s: %w", tbl, err)
		}
	}
	if _, err := t.db.ExecContext(ctx, sqlycsb.MySQL.CreateTable(tbl, w.FieldCount)); err != nil {
		return fmt.Errorf("mysql target: creating table %s: %w", tbl, err)
	}
	// A table kept from an earlier campaign may have fewer fields.
	var n int
	err := t.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME LIKE 'field%'`, tbl).Scan(&n)
	if err != nil {
		return fmt.Errorf("mysql target: reading the columns of %s: %w", tbl, err)
	}
	if n < w.FieldCount {
		return fmt.Errorf("table: %s already exists with %d field columns but the workload has field_count %d; populate afresh (phases.populate: true) or use another table", tbl, n, w.FieldCount)
	}
	return nil
}

// buildStatements makes the workload's statements for the current pool.
func (t *Target) buildStatements(ctx context.Context) error {
	t.closeStatements()
	if !t.w.IsStatements() {
		p, err := sqlycsb.Prepare(ctx, t.db, sqlycsb.MySQL.Statements(t.opts.Table, t.w.FieldCount), t.opts.InterpolateParams, kindOf)
		if err != nil {
			return err
		}
		t.ycsb = p
		return nil
	}
	for i, st := range t.w.Statements {
		text := sqlwork.Rebind(sqlwork.MySQL, st.SQL)
		s, err := sqlycsb.NewStmt(ctx, t.db, text, t.opts.InterpolateParams)
		if err != nil {
			return fmt.Errorf("mysql target: statement %s (workload.statements[%d]): %w", st.Name, i, kindOf(err))
		}
		t.ws = append(t.ws, wstmt{Stmt: s, query: sqlwork.IsQuery(text)})
	}
	return nil
}

// closeStatements closes what buildStatements made.
func (t *Target) closeStatements() {
	if t.ycsb != nil {
		t.ycsb.Close()
		t.ycsb = nil
	}
	for _, s := range t.ws {
		s.Close()
	}
	t.ws = nil
}

// NewClient returns a client; all clients share the connection pool.
func (t *Target) NewClient(context.Context) (target.Client, error) {
	if !t.prepared {
		return nil, errors.New("mysql target: Prepare must run before clients are opened")
	}
	if t.ycsb != nil {
		return sqlycsb.NewClient(t.ycsb), nil
	}
	return newClient(t), nil
}

// LoadDataset implements target.DatasetLoader.
func (t *Target) LoadDataset(ctx context.Context, w workload.Config, seed uint64, progress func(done, total int64)) error {
	if err := sqlwork.Populate(ctx, t.db, sqlwork.MySQL, w.Dataset, seed, progress); err != nil {
		return fmt.Errorf("mysql target: %w", err)
	}
	return nil
}

// restart restarts the managed server and opens new pools: the old
// connections died with the server.
func (t *Target) restart(ctx context.Context) error {
	t.closePools()
	if err := t.inst.Restart(ctx); err != nil {
		return fmt.Errorf("mysql target: restarting the managed server: %w", err)
	}
	if err := t.openPools(ctx); err != nil {
		return err
	}
	if t.prepared {
		return t.buildStatements(ctx)
	}
	return nil
}

// Close closes the pools; a managed server is stopped and its data
// removed (its log stays).
func (t *Target) Close() error {
	t.closeStatements()
	t.closePools()
	var err error
	if t.inst != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		err = t.inst.Remove(ctx)
	} else if t.snapshot != "" {
		if rerr := os.Remove(t.snapshot); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = rerr
		}
	}
	return err
}

// StartServer implements target.ServerStarter: it starts the server again
// when it is not running (after a kill event), on the same port and data.
func (m managedTarget) StartServer(ctx context.Context) error {
	if m.inst.Running() {
		return nil
	}
	return m.inst.Restart(ctx)
}
