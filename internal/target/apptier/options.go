package apptier

import (
	"errors"
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
	// Cluster runs the database as a PostgreSQL primary with streaming
	// replicas, the postgres target's managed.cluster block: nodes, hosts
	// (a lab host name prefix; default "db" in a lab), mode (async or
	// sync), node_settings. Its lab hosts are the database tier, which
	// add_node and remove_node grow and shrink (dbtier.go). nil: one
	// server, as without it.
	Cluster *deploy.Cluster `yaml:"cluster"`
	// Reads is where the application servers send reads and scans with a
	// cluster: replicas (default; round-robin over the replicas, the
	// primary while there is none), all (round-robin over the primary and
	// the replicas: every database node adds read capacity, as the read
	// balancing of seed 003's replicated database tiers does) or primary.
	// Writes always go to the primary.
	Reads string `yaml:"reads"`
}

// db.reads values.
const (
	readsReplicas = "replicas"
	readsAll      = "all"
	readsPrimary  = "primary"
)

// readsFromReplicas says whether the application servers read from the
// cluster's replicas.
func (o *DBOptions) readsFromReplicas() bool {
	return o.Cluster != nil && o.Reads != readsPrimary
}

// clusterHosts is the lab host name prefix of the database tier.
func (o *DBOptions) clusterHosts() string {
	if o.Cluster != nil && o.Cluster.Hosts != "" {
		return o.Cluster.Hosts
	}
	return defaultDBHost
}

// inDBTier says whether the lab host named host belongs to the database
// tier of a cluster: its name is the tier's prefix, or the prefix followed
// by digits (db, db1, db2, ... for the prefix db).
func (o *DBOptions) inDBTier(host string) bool {
	return o.Cluster != nil && inTier(o.clusterHosts(), host)
}

// inTier says whether host is prefix, or prefix followed by digits.
func inTier(prefix, host string) bool {
	return prefix != "" && strings.HasPrefix(host, prefix) && (host == prefix || isDigits(host[len(prefix):]))
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
	// queries the database (default 0): the reference core's CPU time in a
	// lab whose compute unit is reference, converted for this machine.
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
	if err := validateCluster(&o.DB); err != nil {
		return err
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
	if o.DB.Host != "" && (seen[o.DB.Host] || inTier(a.Prefix, o.DB.Host)) {
		return fmt.Errorf("db.host: %q is also an application host; put the database on a host of its own", o.DB.Host)
	}
	if c := o.DB.Cluster; c != nil {
		p := o.DB.clusterHosts()
		for i, h := range a.Hosts {
			if o.DB.inDBTier(h) {
				return fmt.Errorf("app.hosts[%d]: %q is a host of the database tier (db.cluster.hosts %q: %s, %s1, %s2, ...); give the application servers hosts of their own", i, h, p, p, p, p)
			}
		}
		if a.Prefix != "" && (o.DB.inDBTier(a.Prefix) || inTier(a.Prefix, p)) {
			return fmt.Errorf("app.prefix: %q and db.cluster.hosts %q name the same lab hosts; give the two tiers different prefixes", a.Prefix, p)
		}
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

// validateCluster checks db.cluster and db.reads.
func validateCluster(o *DBOptions) error {
	c := o.Cluster
	if c == nil {
		if o.Reads != "" {
			return fmt.Errorf("db.reads: reads go to the replicas of db.cluster, and there is none; remove db.reads, or add db.cluster")
		}
		return nil
	}
	if o.Engine != "postgres" {
		return fmt.Errorf("db.cluster: engine %s runs one server here (replicas are PostgreSQL's streaming replicas); remove db.cluster, or use engine: postgres", o.Engine)
	}
	if o.Host != "" {
		return fmt.Errorf("db.host: with db.cluster the database's nodes are placed by db.cluster.hosts (a lab host name prefix, default %s); remove db.host", defaultDBHost)
	}
	if o.Port != 0 {
		return fmt.Errorf("db.port: a cluster's nodes take free ports of their own; remove db.port")
	}
	if c.Hosts != "" && !hostName(c.Hosts) {
		return fmt.Errorf("db.cluster.hosts: %q is not a lab host name prefix (a letter, then letters, digits or '-')", c.Hosts)
	}
	switch o.Reads {
	case "", readsReplicas, readsAll, readsPrimary:
	default:
		return fmt.Errorf("db.reads: %q is not a valid value; use replicas (reads and scans round-robin over the replicas), all (over the primary and the replicas) or primary", o.Reads)
	}
	err := deploy.CheckCluster(c, "postgres", deploy.PostgresClusterModes)
	if err == nil {
		err = deploy.CheckPostgresCluster(c, o.Settings)
	}
	if err != nil {
		// deploy names the postgres target's fields (managed.cluster,
		// managed.settings); here they are under db.
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, "managed."); ok {
			msg = "db." + rest
		}
		return errors.New(msg)
	}
	return nil
}
