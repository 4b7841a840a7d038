package postgres

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Options are the postgres target's spec fields (docs/targets.md). Either
// the connection fields name an existing server, or managed asks Headroom
// to run a private one.
type Options struct {
	// Host is a host name, an address or a Unix socket directory
	// (default 127.0.0.1).
	Host string `yaml:"host"`
	// Port is the server's port (default 5432).
	Port int `yaml:"port"`
	// User is the role to connect as (default postgres).
	User string `yaml:"user"`
	// Database to connect to (default: the user's name).
	Database string `yaml:"database"`
	// PasswordEnv names an environment variable that holds the password.
	PasswordEnv string `yaml:"password_env"`
	// PasswordFile is a file whose first line is the password; relative
	// paths are inside the campaign's results directory.
	PasswordFile string `yaml:"password_file"`
	// SSLMode is libpq's sslmode: disable, allow, prefer (default),
	// require, verify-ca or verify-full.
	SSLMode string `yaml:"sslmode"`
	// CAFile is the CA certificate (PEM) for verify-ca and verify-full;
	// relative paths are inside the campaign's results directory.
	CAFile string `yaml:"ca_file"`
	// PoolSize is the most connections open at once (default 32). Request
	// slots beyond it wait for a free connection, and that wait is part of
	// their latency.
	PoolSize int `yaml:"pool_size"`
	// MinConnections are opened before the first run and kept open (at
	// most pool_size; default 0: the pool opens connections as requests
	// need them). Opened ahead, they keep connection set-up out of the
	// measured latency, and requests go on over them while the server
	// cannot start a backend (a stalled disk, docs/failures.md).
	MinConnections int `yaml:"min_connections"`
	// ConnectTimeout bounds opening one connection (default 10s).
	ConnectTimeout spec.Duration `yaml:"connect_timeout"`
	// StatementTimeout, when above 0, is the server's statement_timeout for
	// Headroom's sessions: the server cancels longer statements, which count
	// as errors of kind timeout.
	StatementTimeout spec.Duration `yaml:"statement_timeout"`
	// Table is the YCSB table (default usertable).
	Table string `yaml:"table"`
	// Managed runs a private PostgreSQL cluster for the campaign instead of
	// connecting to an existing server; with managed.cluster, a primary
	// and streaming replicas (modes async and sync).
	Managed *deploy.Managed `yaml:"managed"`
	// ReadFrom is where a managed cluster's YCSB reads and scans go:
	// primary (default), replicas, or any node (the primary too). Each
	// client keeps to one of them, the clients taken in turn; writes and
	// read-modify-writes always go to the primary.
	ReadFrom string `yaml:"read_from"`
	// ServerTiming reads pg_stat_statements for server-side execution time
	// per operation (default true).
	ServerTiming bool `yaml:"server_timing"`
	// QueryMode is prepared (default: extended protocol, each statement
	// prepared once per connection) or simple (simple protocol, parameters
	// inlined as literals by the client).
	QueryMode string `yaml:"query_mode"`
}

// read_from values.
const (
	readPrimary  = "primary"
	readReplicas = "replicas"
	readAny      = "any"
)

// Defaults of the connection fields, applied when the target opens so that
// Validate can tell a written field from a default one.
const (
	defaultHost = "127.0.0.1"
	defaultPort = 5432
	defaultUser = "postgres"
)

func defaultOptions() *Options {
	return &Options{
		SSLMode:        "prefer",
		PoolSize:       32,
		ConnectTimeout: spec.Duration{Duration: 10 * time.Second},
		Table:          "usertable",
		ServerTiming:   true,
		QueryMode:      "prepared",
		ReadFrom:       readPrimary,
	}
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s: %q is not a valid value; use one of %s", field, v, strings.Join(allowed, ", "))
}

func validate(o any) error {
	opts := o.(*Options)
	if m := opts.Managed; m != nil {
		for field, set := range map[string]bool{
			"host": opts.Host != "", "port": opts.Port != 0, "user": opts.User != "", "database": opts.Database != "",
			"password_env": opts.PasswordEnv != "", "password_file": opts.PasswordFile != "",
		} {
			if set {
				return fmt.Errorf("%s: a managed instance has its own address, user and password; remove %s or remove managed", field, field)
			}
		}
		if m.Port < 0 || m.Port > 65535 {
			return fmt.Errorf("managed.port: %d is out of range; use 1 to 65535, or 0 for a free port", m.Port)
		}
		if err := deploy.CheckPostgresSettings(m.Settings); err != nil {
			return err
		}
		if m.Cluster != nil && m.Port != 0 {
			return fmt.Errorf("managed.port: a cluster's nodes take free ports of their own; remove managed.port")
		}
		if err := deploy.CheckPostgresCluster(m.Cluster, m.Settings); err != nil {
			return err
		}
	}
	if err := oneOf("read_from", opts.ReadFrom, readPrimary, readReplicas, readAny); err != nil {
		return err
	}
	if opts.ReadFrom != readPrimary && (opts.Managed == nil || opts.Managed.Cluster == nil) {
		return fmt.Errorf("read_from: %s needs replicas, which only a managed cluster has; add managed.cluster, or remove read_from", opts.ReadFrom)
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return fmt.Errorf("port: %d is out of range; use 1 to 65535", opts.Port)
	}
	if opts.PasswordEnv != "" && opts.PasswordFile != "" {
		return fmt.Errorf("password_env: give either password_env or password_file, not both")
	}
	if err := oneOf("sslmode", opts.SSLMode, "disable", "allow", "prefer", "require", "verify-ca", "verify-full"); err != nil {
		return err
	}
	if opts.CAFile != "" {
		if opts.SSLMode != "verify-ca" && opts.SSLMode != "verify-full" {
			return fmt.Errorf("ca_file: only used with sslmode verify-ca or verify-full, got sslmode %s", opts.SSLMode)
		}
		if _, err := os.Stat(opts.CAFile); err != nil && filepath.IsAbs(opts.CAFile) {
			return fmt.Errorf("ca_file: cannot read %s: %v", opts.CAFile, err)
		}
	}
	if opts.PoolSize < 1 || opts.PoolSize > 10000 {
		return fmt.Errorf("pool_size: must be at least 1 (and at most 10000), got %d", opts.PoolSize)
	}
	if opts.MinConnections < 0 || opts.MinConnections > opts.PoolSize {
		return fmt.Errorf("min_connections: must be 0 to pool_size (%d), got %d", opts.PoolSize, opts.MinConnections)
	}
	if opts.ConnectTimeout.Duration < 0 {
		return fmt.Errorf("connect_timeout: must not be negative")
	}
	if d := opts.StatementTimeout.Duration; d < 0 || d > 0 && d < time.Millisecond {
		return fmt.Errorf("statement_timeout: must be 0 (no limit) or at least 1ms, got %v", d)
	}
	if opts.Table == "" || !isIdentifier(opts.Table) {
		return fmt.Errorf("table: %q must be a name of letters, digits and underscores, not starting with a digit", opts.Table)
	}
	return oneOf("query_mode", opts.QueryMode, "prepared", "simple")
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return len(s) <= 63
}

// password reads the password from the environment variable or file the
// options name ("" when neither is set). Errors name the source, never the
// value.
func (o *Options) password(dir string) (string, error) {
	switch {
	case o.PasswordEnv != "":
		v, ok := os.LookupEnv(o.PasswordEnv)
		if !ok {
			return "", fmt.Errorf("password_env: the environment variable %s is not set; export it before running", o.PasswordEnv)
		}
		return v, nil
	case o.PasswordFile != "":
		b, err := os.ReadFile(inDir(dir, o.PasswordFile))
		if err != nil {
			return "", fmt.Errorf("password_file: cannot read %s: %v", o.PasswordFile, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimRight(line, "\r"), nil
	}
	return "", nil
}

// inDir resolves a relative path against the results directory.
func inDir(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
