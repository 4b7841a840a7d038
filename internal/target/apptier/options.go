package apptier

import (
	"fmt"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Options are the apptier target's spec fields (docs/bottleneck.md):
// a managed database and the application servers in front of it.
type Options struct {
	DB  DBOptions  `yaml:"db"`
	App AppOptions `yaml:"app"`
	// Table is the YCSB table (default usertable).
	Table string `yaml:"table"`
	// Timeout bounds each HTTP request (default 10s; 0 = only the load
	// section's timeout applies).
	Timeout spec.Duration `yaml:"timeout"`
	// MaxConnections caps Headroom's open connections to each application
	// server (default 0: one per request slot in flight).
	MaxConnections int `yaml:"max_connections"`
}

// DBOptions is the database tier: a private server Headroom runs.
type DBOptions struct {
	// Engine is postgres (default) or mariadb.
	Engine string `yaml:"engine"`
	// Host is the lab host the server runs on (default "db" in a lab;
	// must be empty without a lab: the server then runs on this machine).
	Host string `yaml:"host"`
	// Port to listen on; 0 (default) picks a free one.
	Port int `yaml:"port"`
	// Settings are server settings, as managed.settings of the postgres
	// and mysql targets.
	Settings map[string]string `yaml:"settings"`
	// Keep leaves the data directory when the campaign ends.
	Keep bool `yaml:"keep"`
}

// AppOptions is the application tier.
type AppOptions struct {
	// Hosts are the lab hosts that each run one application server.
	Hosts []string `yaml:"hosts"`
	// Prefix selects every lab host named Prefix, or Prefix1, Prefix2, ...
	// (a lab.hosts entry with count), so that a treatment that changes
	// the count changes the tier. Give Hosts or Prefix, not both.
	Prefix string `yaml:"prefix"`
	// Count is the number of application servers on this machine when the
	// spec has no lab (default 1).
	Count int `yaml:"count"`
	// Port is the servers' HTTP port (default 8080 on lab hosts; free
	// ports on this machine).
	Port int `yaml:"port"`
	// CPUWork is the CPU time each server spends on every request before it
	// queries the database (default 0).
	CPUWork spec.Duration `yaml:"cpu_work"`
	// Pool is each server's most database connections (default 16).
	Pool int `yaml:"pool"`
}

// Defaults.
const (
	defaultLabPort = 8080
	defaultDBHost  = "db"
)

func defaultOptions() *Options {
	return &Options{
		DB:      DBOptions{Engine: "postgres"},
		App:     AppOptions{Pool: 16},
		Table:   "usertable",
		Timeout: spec.Duration{Duration: 10 * time.Second},
	}
}

// recipe is the database engine's deploy recipe and the URL scheme the
// application servers read.
func (o *DBOptions) recipe() (deploy.Recipe, string) {
	if o.Engine == "mariadb" {
		return deploy.MariaDB(), "mysql"
	}
	return deploy.Postgres(), "postgres"
}

func validate(v any) error {
	o := v.(*Options)
	switch o.DB.Engine {
	case "postgres":
		if err := deploy.CheckPostgresSettings(o.DB.Settings); err != nil {
			return fmt.Errorf("db.settings: %w", err)
		}
	case "mariadb":
		if err := deploy.CheckMariaDBSettings(o.DB.Settings); err != nil {
			return fmt.Errorf("db.settings: %w", err)
		}
	default:
		return fmt.Errorf("db.engine: %q is not a valid value; use postgres or mariadb", o.DB.Engine)
	}
	if o.DB.Port < 0 || o.DB.Port > 65535 {
		return fmt.Errorf("db.port: %d is out of range; use 1 to 65535, or 0 for a free port", o.DB.Port)
	}
	a := o.App
	if len(a.Hosts) > 0 && a.Prefix != "" {
		return fmt.Errorf("app.prefix: give either app.hosts or app.prefix, not both")
	}
	seen := map[string]bool{}
	for i, h := range a.Hosts {
		if !hostName(h) {
			return fmt.Errorf("app.hosts[%d]: %q is not a lab host name (a letter, then letters, digits or '-')", i, h)
		}
		if seen[h] {
			return fmt.Errorf("app.hosts[%d]: %q is listed twice; each host runs one application server", i, h)
		}
		seen[h] = true
	}
	if a.Prefix != "" && !hostName(a.Prefix) {
		return fmt.Errorf("app.prefix: %q is not a lab host name (a letter, then letters, digits or '-')", a.Prefix)
	}
	if o.DB.Host != "" && (seen[o.DB.Host] || a.Prefix != "" && strings.HasPrefix(o.DB.Host, a.Prefix) && (o.DB.Host == a.Prefix || isDigits(o.DB.Host[len(a.Prefix):]))) {
		return fmt.Errorf("db.host: %q is also an application host; put the database on a host of its own", o.DB.Host)
	}
	if a.Count < 0 || a.Count > 64 {
		return fmt.Errorf("app.count: %d is out of range; run 1 to 64 application servers", a.Count)
	}
	if a.Count > 0 && (len(a.Hosts) > 0 || a.Prefix != "") {
		return fmt.Errorf("app.count: only for application servers on this machine (no lab); on lab hosts the tier is app.hosts or app.prefix")
	}
	if a.Port < 0 || a.Port > 65535 {
		return fmt.Errorf("app.port: %d is out of range; use 1 to 65535", a.Port)
	}
	if d := a.CPUWork.Duration; d < 0 || d > 10*time.Second {
		return fmt.Errorf("app.cpu_work: %v is out of range; give a CPU time per request from 0 to 10s, e.g. 2ms", d)
	}
	if a.Pool < 1 || a.Pool > 10000 {
		return fmt.Errorf("app.pool: must be from 1 to 10000 database connections per application server, got %d", a.Pool)
	}
	if !identifier(o.Table) {
		return fmt.Errorf("table: %q must be a name of letters, digits and underscores, not starting with a digit", o.Table)
	}
	if o.Timeout.Duration < 0 {
		return fmt.Errorf("timeout: must not be negative")
	}
	if o.MaxConnections < 0 {
		return fmt.Errorf("max_connections: must not be negative (0 = no cap)")
	}
	return nil
}

func hostName(s string) bool {
	if s == "" || len(s) > 16 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func identifier(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
