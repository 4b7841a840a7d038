package cassandra

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Options are the cassandra target's spec fields (docs/targets.md). Either
// hosts names the contact points of an existing cluster, or managed asks
// Headroom to run one (one node, or managed.cluster.nodes of them).
type Options struct {
	// Hosts are contact points of an existing cluster, "host" or
	// "host:port" (default port 9042); the driver finds the other nodes
	// from them. Default 127.0.0.1.
	Hosts []string `yaml:"hosts"`
	// Keyspace holds the YCSB table (default headroom). Prepare creates it
	// with SimpleStrategy and replication_factor.
	Keyspace string `yaml:"keyspace"`
	// Table is the YCSB table (default usertable).
	Table string `yaml:"table"`
	// ReplicationFactor of the keyspace on an existing cluster (default:
	// min(3, the cluster's node count)). A managed cluster takes it from
	// managed.cluster.replication_factor.
	ReplicationFactor int `yaml:"replication_factor"`
	// ReadConsistency is the consistency level of reads and scans
	// (default: consistency, else QUORUM).
	ReadConsistency string `yaml:"read_consistency"`
	// WriteConsistency is the consistency level of inserts and updates
	// (default: consistency, else QUORUM).
	WriteConsistency string `yaml:"write_consistency"`
	// Consistency sets reads and writes to one level, so that one factor
	// of a factorial campaign sweeps both (seed 002 Table II); it cannot
	// be combined with read_consistency or write_consistency.
	Consistency string `yaml:"consistency"`
	// Timeout is how long the driver waits for one reply (default 12s:
	// above Cassandra's own read, write and range request timeouts, so
	// that a slow cluster answers with its read_timeout or write_timeout
	// error first).
	Timeout spec.Duration `yaml:"timeout"`
	// ConnectTimeout bounds opening one connection (default 10s).
	ConnectTimeout spec.Duration `yaml:"connect_timeout"`
	// ConnectionsPerHost is the driver's connections to each node (default
	// 2; each carries many requests at once).
	ConnectionsPerHost int `yaml:"connections_per_host"`
	// ProtocolVersion is the CQL native protocol version to speak: 3, 4 or
	// 5; 0 (the default) takes the highest the cluster and the driver
	// share, 5 on Cassandra 4 and later. Version 5 wraps frames in
	// checksummed segments, which costs the node CPU per request; drivers
	// that speak only 4 (the scylla driver latte uses) skip that cost, so
	// a comparison with them sets 4 (docs/performance.md (g)).
	ProtocolVersion int `yaml:"protocol_version"`
	// PopulateConcurrency is how many inserts a population keeps in flight
	// (default 32).
	PopulateConcurrency int `yaml:"populate_concurrency"`
	// User is the role to log in as (default: no login).
	User string `yaml:"user"`
	// PasswordEnv names an environment variable that holds the password.
	PasswordEnv string `yaml:"password_env"`
	// PasswordFile is a file whose first line is the password; relative
	// paths are inside the campaign's results directory.
	PasswordFile string `yaml:"password_file"`
	// Managed runs a private Cassandra cluster for the campaign instead of
	// connecting to an existing one.
	Managed *deploy.Managed `yaml:"managed"`
}

const (
	defaultHost = "127.0.0.1"
	defaultPort = 9042
)

func defaultOptions() *Options {
	return &Options{
		Keyspace:            "headroom",
		Table:               "usertable",
		Timeout:             spec.Duration{Duration: 12 * time.Second},
		ConnectTimeout:      spec.Duration{Duration: 10 * time.Second},
		ConnectionsPerHost:  2,
		PopulateConcurrency: 32,
	}
}

func validate(o any) error {
	opts := o.(*Options)
	if m := opts.Managed; m != nil {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"hosts", len(opts.Hosts) > 0}, {"user", opts.User != ""},
			{"password_env", opts.PasswordEnv != ""}, {"password_file", opts.PasswordFile != ""},
		} {
			if f.set {
				return fmt.Errorf("%s: a managed cluster has its own addresses, user and password; remove %s or remove managed", f.name, f.name)
			}
		}
		if opts.ReplicationFactor != 0 {
			return fmt.Errorf("replication_factor: a managed cluster's replication factor is managed.cluster.replication_factor; move it there")
		}
		if m.Port < 0 || m.Port > 65535 {
			return fmt.Errorf("managed.port: %d is out of range; use 1 to 65535, or 0 for the default", m.Port)
		}
		if err := deploy.CheckCassandraSettings(m.Settings); err != nil {
			return err
		}
	}
	for _, h := range opts.Hosts {
		if err := checkHost(h); err != nil {
			return err
		}
	}
	if !isIdentifier(opts.Keyspace) {
		return fmt.Errorf("keyspace: %q is not a CQL name; use letters, digits and underscores, starting with a letter (at most 48)", opts.Keyspace)
	}
	if !isIdentifier(opts.Table) {
		return fmt.Errorf("table: %q is not a CQL name; use letters, digits and underscores, starting with a letter (at most 48)", opts.Table)
	}
	if opts.ReplicationFactor < 0 || opts.ReplicationFactor > deploy.MaxClusterNodes {
		return fmt.Errorf("replication_factor: %d is outside 0..%d; 0 picks min(3, nodes)", opts.ReplicationFactor, deploy.MaxClusterNodes)
	}
	if opts.Consistency != "" && (opts.ReadConsistency != "" || opts.WriteConsistency != "") {
		return fmt.Errorf("consistency: sets both read_consistency and write_consistency; remove it or them")
	}
	read, err := parseLevel(opts.readLevel())
	if err != nil {
		return err
	}
	write, err := parseLevel(opts.writeLevel())
	if err != nil {
		return err
	}
	if rf := opts.knownRF(); rf > 0 {
		if err := checkLevels(read, write, rf, opts.levelFields()); err != nil {
			return err
		}
	}
	if opts.Timeout.Duration < time.Millisecond {
		return fmt.Errorf("timeout: must be at least 1ms, got %v", opts.Timeout.Duration)
	}
	if opts.ConnectTimeout.Duration < time.Millisecond {
		return fmt.Errorf("connect_timeout: must be at least 1ms, got %v", opts.ConnectTimeout.Duration)
	}
	if opts.ConnectionsPerHost < 1 || opts.ConnectionsPerHost > 64 {
		return fmt.Errorf("connections_per_host: must be 1 to 64, got %d", opts.ConnectionsPerHost)
	}
	if v := opts.ProtocolVersion; v != 0 && (v < 3 || v > 5) {
		return fmt.Errorf("protocol_version: %d is not a CQL protocol version this driver speaks; use 3, 4 or 5, or 0 to negotiate", v)
	}
	if opts.PopulateConcurrency < 1 || opts.PopulateConcurrency > 1024 {
		return fmt.Errorf("populate_concurrency: must be 1 to 1024, got %d", opts.PopulateConcurrency)
	}
	if opts.PasswordEnv != "" && opts.PasswordFile != "" {
		return fmt.Errorf("password_env: give either password_env or password_file, not both")
	}
	if (opts.PasswordEnv != "" || opts.PasswordFile != "") && opts.User == "" {
		return fmt.Errorf("user: a password is set but no user; add user")
	}
	return nil
}

// knownRF is the replication factor the options fix before the target
// opens (0 = decided by the cluster's node count then).
func (o *Options) knownRF() int {
	m := o.Managed
	if m == nil {
		return o.ReplicationFactor
	}
	if m.Cluster == nil {
		return 1
	}
	return managedRF(m.Cluster)
}

// managedRF is a managed cluster's keyspace replication factor:
// cluster.replication_factor, or min(3, nodes).
func managedRF(c *deploy.Cluster) int {
	if c == nil {
		return 1
	}
	if c.ReplicationFactor > 0 {
		return c.ReplicationFactor
	}
	return min(3, c.NodeCount())
}

func checkHost(h string) error {
	host, port := h, ""
	if strings.Contains(h, ":") {
		var err error
		host, port, err = net.SplitHostPort(h)
		if err != nil {
			return fmt.Errorf("hosts: %q is not host or host:port; write it like 10.0.0.5 or 10.0.0.5:9042", h)
		}
	}
	if host == "" {
		return fmt.Errorf("hosts: %q has no host; write it like 10.0.0.5 or 10.0.0.5:9042", h)
	}
	if strings.Contains(h, ":") {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("hosts: port %q of %q is not a number from 1 to 65535", port, h)
		}
	}
	return nil
}

// isIdentifier reports an unquoted CQL name Cassandra accepts for
// keyspaces and tables.
func isIdentifier(s string) bool {
	if s == "" || len(s) > 48 {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok || i == 0 && r == '_' {
			return false
		}
	}
	return true
}

// contactPoints are the options' hosts with the default port made
// explicit.
func (o *Options) contactPoints() []string {
	hosts := o.Hosts
	if len(hosts) == 0 {
		hosts = []string{defaultHost}
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		if !strings.Contains(h, ":") {
			h = net.JoinHostPort(h, strconv.Itoa(defaultPort))
		}
		out[i] = h
	}
	return out
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
		p := o.PasswordFile
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("password_file: cannot read %s: %v", p, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimRight(line, "\r"), nil
	}
	return "", nil
}

// defaultLevel is the consistency level of reads and writes when the spec
// names none: QUORUM, so that reads see acknowledged writes.
const defaultLevel = "QUORUM"

// readLevel and writeLevel are parseLevel's arguments for the levels in
// force: the direction's own option, else consistency, else QUORUM; the
// field named in errors is the one the level came from.
func (o Options) readLevel() (field, name string, write bool) {
	f, n := levelOf("read_consistency", o.ReadConsistency, o.Consistency)
	return f, n, false
}

func (o Options) writeLevel() (field, name string, write bool) {
	f, n := levelOf("write_consistency", o.WriteConsistency, o.Consistency)
	return f, n, true
}

func levelOf(field, own, both string) (string, string) {
	switch {
	case own != "":
		return field, own
	case both != "":
		return "consistency", both
	}
	return field, defaultLevel
}

// levelFields name the options the read and write levels come from.
func (o Options) levelFields() [2]string {
	r, _, _ := o.readLevel()
	w, _, _ := o.writeLevel()
	return [2]string{r, w}
}

// ForAgent turns a managed cluster's options into those a load agent uses
// to reach the coordinator's cluster (internal/campaign, agents): addr
// (a node's host:port) becomes the one contact point, from which the
// driver finds the other nodes, and the managed cluster's replication
// factor is kept, so that the agent's Prepare checks the keyspace the
// coordinator made rather than one of min(3, nodes) copies.
func (o *Options) ForAgent(addr string) error {
	if o.Managed == nil {
		return nil
	}
	if addr == "" {
		return fmt.Errorf("the cassandra target's managed cluster has no address the agent can dial")
	}
	o.ReplicationFactor = o.knownRF()
	o.Managed = nil
	o.Hosts = []string{addr}
	return nil
}
