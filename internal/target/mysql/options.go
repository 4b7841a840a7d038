package mysql

import (
	"fmt"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Options are the mysql target's spec fields (docs/targets.md). Host,
// port, user, database and the password name an existing server; managed
// asks Headroom to run a MariaDB server of its own instead, and excludes
// them.
type Options struct {
	// Host of an existing server (default 127.0.0.1).
	Host string `yaml:"host"`
	// Port of an existing server (default 3306).
	Port int `yaml:"port"`
	// User to log in as; required unless managed.
	User string `yaml:"user"`
	// Database holding the workload's tables; required unless managed.
	Database string `yaml:"database"`
	// PasswordEnv names an environment variable holding the password.
	PasswordEnv string `yaml:"password_env"`
	// PasswordFile is a file whose first line is the password.
	PasswordFile string `yaml:"password_file"`
	// TLS is false (default), true (verify the certificate), skip-verify or
	// preferred (TLS when the server offers it, unverified).
	TLS string `yaml:"tls"`
	// CAFile is a PEM file of the CA that signed the server's certificate
	// (with tls: true).
	CAFile string `yaml:"ca_file"`
	// PoolSize is the most connections open at once, shared by every
	// request slot (default 32).
	PoolSize int `yaml:"pool_size"`
	// ConnectTimeout bounds establishing one connection (default 10s).
	ConnectTimeout spec.Duration `yaml:"connect_timeout"`
	// ReadTimeout and WriteTimeout bound one network read or write
	// (default 0: none; the load section's timeout still applies).
	ReadTimeout  spec.Duration `yaml:"read_timeout"`
	WriteTimeout spec.Duration `yaml:"write_timeout"`
	// Table is the YCSB table name (default usertable).
	Table string `yaml:"table"`
	// ServerTiming reads the server's statement times from
	// performance_schema (default true).
	ServerTiming bool `yaml:"server_timing"`
	// InterpolateParams sends statements as text with their arguments
	// inlined by the driver, one round trip each (default true); false
	// uses server-side prepared statements (binary protocol).
	InterpolateParams bool `yaml:"interpolate_params"`
	// Managed runs a private MariaDB server for the campaign.
	Managed *deploy.Managed `yaml:"managed"`
}

const (
	defaultHost = "127.0.0.1"
	defaultPort = 3306
	maxPoolSize = 10000
)

func defaultOptions() *Options {
	return &Options{
		PoolSize:          32,
		ConnectTimeout:    spec.Duration{Duration: 10 * time.Second},
		Table:             "usertable",
		ServerTiming:      true,
		InterpolateParams: true,
	}
}

// tlsModes are the accepted tls values, as go-sql-driver/mysql names them.
var tlsModes = []string{"false", "true", "skip-verify", "preferred"}

func validate(o any) error {
	opts := o.(*Options)
	if opts.Managed != nil {
		var set []string
		for _, f := range []struct {
			name string
			set  bool
		}{{"host", opts.Host != ""}, {"port", opts.Port != 0}, {"user", opts.User != ""}, {"database", opts.Database != ""},
			{"password_env", opts.PasswordEnv != ""}, {"password_file", opts.PasswordFile != ""},
			{"tls", opts.TLS != "" && !strings.EqualFold(opts.TLS, "false")}, {"ca_file", opts.CAFile != ""}} {
			if f.set {
				set = append(set, f.name)
			}
		}
		if len(set) > 0 {
			return fmt.Errorf("managed: cannot be combined with %s; Headroom creates the server, user, password and database of a managed instance, so remove them (or remove managed: to use an existing server)", strings.Join(set, ", "))
		}
		if p := opts.Managed.Port; p < 0 || p > 65535 {
			return fmt.Errorf("managed.port: %d is out of range; use 1 to 65535, or 0 for a free port", p)
		}
		if err := deploy.CheckMariaDBSettings(opts.Managed.Settings); err != nil {
			return err
		}
	} else {
		if opts.User == "" {
			return fmt.Errorf("user: required to connect to an existing server; give the account name, or add managed: {} to have Headroom run a MariaDB server")
		}
		if opts.Database == "" {
			return fmt.Errorf("database: required to connect to an existing server; name the database that holds (or will hold) the workload's tables")
		}
		if strings.ContainsAny(opts.Host, " /") {
			return fmt.Errorf("host: %q is not a host name or address", opts.Host)
		}
		if opts.Port < 0 || opts.Port > 65535 {
			return fmt.Errorf("port: %d is out of range; use 1 to 65535", opts.Port)
		}
	}
	if opts.PasswordEnv != "" && opts.PasswordFile != "" {
		return fmt.Errorf("password_env: give either password_env or password_file, not both")
	}
	if opts.PasswordEnv != "" && !isEnvName(opts.PasswordEnv) {
		// Not quoted: a user who misread the option may have written the
		// password itself here.
		return fmt.Errorf("password_env: must be the name of an environment variable (letters, digits, _), not the password itself")
	}
	if opts.TLS != "" && !oneOf(opts.TLS, tlsModes) {
		return fmt.Errorf("tls: %q is not a valid value; use one of %s", truncate(opts.TLS), strings.Join(tlsModes, ", "))
	}
	if opts.CAFile != "" && !strings.EqualFold(opts.TLS, "true") {
		return fmt.Errorf("ca_file: only used to verify the server's certificate; set tls: true as well")
	}
	if opts.PoolSize < 1 || opts.PoolSize > maxPoolSize {
		return fmt.Errorf("pool_size: %d is out of range; use 1 to %d", opts.PoolSize, maxPoolSize)
	}
	for _, d := range []struct {
		name string
		v    spec.Duration
	}{{"connect_timeout", opts.ConnectTimeout}, {"read_timeout", opts.ReadTimeout}, {"write_timeout", opts.WriteTimeout}} {
		if d.v.Duration < 0 {
			return fmt.Errorf("%s: must not be negative, got %v", d.name, d.v.Duration)
		}
	}
	if opts.Table == "" || len(opts.Table) > 64 {
		return fmt.Errorf("table: must be 1 to 64 characters")
	}
	for _, r := range opts.Table {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("table: %q may only contain letters, digits and underscores", truncate(opts.Table))
		}
	}
	if opts.ServerTiming && !opts.InterpolateParams {
		return fmt.Errorf("interpolate_params: false sends server-side prepared statements, whose executions MariaDB's performance_schema does not time per statement; set server_timing: false as well, or keep interpolate_params: true")
	}
	return nil
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return true
		}
	}
	return false
}

func isEnvName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
