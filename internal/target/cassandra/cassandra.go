// Package cassandra drives an Apache Cassandra cluster over CQL with YCSB
// workloads, through the Apache Cassandra Go driver (gocql v2): an
// existing cluster named by its contact points, or a managed one Headroom
// runs for the campaign (internal/deploy: one node, or a ring of
// managed.cluster.nodes that can grow and shrink during a run).
//
// The data set is one table of a keyspace of replication factor rf
// (SimpleStrategy), laid out as YCSB's CQL binding does:
//
//	CREATE TABLE usertable (y_id text PRIMARY KEY, field0 text, ..., fieldN text)
//
// and every operation is a prepared statement on it, routed to a replica
// of its key (token-aware, replicas shuffled), at the read or write
// consistency level of the options:
//
//	read    SELECT field0, ..., fieldN FROM t WHERE y_id = ?   (or one field)
//	update  UPDATE t SET fieldI = ? WHERE y_id = ?             (or every field)
//	insert  INSERT INTO t (y_id, field0, ..., fieldN) VALUES (?, ...)
//	scan    SELECT ... FROM t WHERE token(y_id) >= token(?) LIMIT ?
//	rmw     the read, then the update (not atomic, as in YCSB)
//
// A scan is a walk of the token ring from the start key's token: it
// returns the next scan-length records in token order (Murmur3 hashes of
// the keys), not in key order, as YCSB's binding does. A read that finds
// no row is target.ErrNotFound; an update of a missing key creates it
// (CQL writes are upserts).
//
// The target reports no server-side time (target.ServerTimer): Cassandra 5
// exposes its coordinator latencies over CQL only as system_views tables
// of counts and decaying percentiles (count, p50th_ms, p99th_ms, max_ms),
// with no summed time to take differences of; the summed counters
// (TotalLatency) are JMX-only, and reading them per interval would mean a
// JVM (nodetool) per poll on the machine under test. Query tracing gives
// per-request server time, but every traced request writes trace rows,
// which would change the load it measures.
package cassandra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	registry.Register(registry.Factory{
		Name:         "cassandra",
		Summary:      "Apache Cassandra over CQL (existing cluster, or managed: one node or a ring), YCSB records as rows of a table",
		NewOptions:   func() any { return defaultOptions() },
		Validate:     validate,
		Open:         func(o any, env registry.Env) (target.Target, error) { return Open(*o.(*Options), env) },
		ClusterModes: []string{"ring"},
	})
}

// Target is an open driver session to a Cassandra cluster.
type Target struct {
	opts     Options
	contact  []string // host:port of the contact points
	user     string
	password string
	rf       int // the keyspace's replication factor; 0 = min(3, nodes), decided by Prepare
	read     gocql.Consistency
	write    gocql.Consistency

	// admin has no keyspace: it creates and checks the keyspace and table.
	admin *gocql.Session

	// Set by Prepare.
	mu     sync.Mutex
	sess   *gocql.Session // the workload's session, in the keyspace
	fields []string       // field0, field1, ...
	stmts  statements
}

// Open connects to the cluster the options name, after starting it when
// they ask for a managed one (in env.InstanceDir("cassandra")). It returns
// a *Managed for managed clusters and a *Target otherwise.
func Open(opts Options, env registry.Env) (target.Target, error) {
	if opts.Managed != nil {
		return openManaged(opts, env)
	}
	password, err := opts.password(env.Dir)
	if err != nil {
		return nil, err
	}
	t, err := open(opts, opts.contactPoints(), opts.User, password)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// open makes the admin session to the contact points.
func open(opts Options, contact []string, user, password string) (*Target, error) {
	read, err := parseLevel(opts.readLevel())
	if err != nil {
		return nil, err
	}
	write, err := parseLevel(opts.writeLevel())
	if err != nil {
		return nil, err
	}
	t := &Target{opts: opts, contact: contact, user: user, password: password, rf: opts.knownRF(), read: read, write: write}
	t.admin, err = t.config("").CreateSession()
	if err != nil {
		return nil, t.connectError(err)
	}
	return t, nil
}

// config is the driver's configuration for a session in keyspace ("" =
// none).
func (t *Target) config(keyspace string) *gocql.ClusterConfig {
	cfg := gocql.NewCluster(t.contact...)
	// Nodes the driver discovers are dialled at this port; a cluster's
	// nodes share one (a managed cluster on loopback picks a free one).
	if _, port, err := net.SplitHostPort(t.contact[0]); err == nil {
		cfg.Port, _ = strconv.Atoi(port)
	}
	cfg.Keyspace = keyspace
	cfg.Consistency = t.read
	cfg.Timeout = t.opts.Timeout.Duration
	cfg.ConnectTimeout = t.opts.ConnectTimeout.Duration
	cfg.NumConns = t.opts.ConnectionsPerHost
	cfg.ProtoVersion = t.opts.ProtocolVersion // 0: negotiated
	// Token-aware: a request goes to a replica of its key, which
	// coordinates it without a hop. Shuffling the replicas spreads a key's
	// requests over all its replicas, as the Java driver does, so that
	// reads at ONE use every copy.
	cfg.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy(), gocql.ShuffleReplicas())
	// A failed request is a measurement: no retries (the driver's
	// default).
	cfg.RetryPolicy = nil
	// Writes are batched by the target's own connections, without the
	// driver's fixed wait (conn.go): its 200 µs window cost throughput at
	// low concurrency and gained none at high (YCSB c on one node, closed
	// loop: 3666 vs 2761 ops/s from 4 clients, 8955 vs 6952 from 16, 14315
	// vs 14296 from 64).
	cfg.WriteCoalesceWaitTime = 0
	cfg.HostDialer = &coalescingDialer{dialer: net.Dialer{Timeout: cfg.ConnectTimeout}, writeTimeout: cfg.Timeout}
	// A node that went down (a fault, a removed node) is tried again
	// every few seconds, not once a minute.
	cfg.ReconnectInterval = 2 * time.Second
	if t.user != "" {
		cfg.Authenticator = gocql.PasswordAuthenticator{Username: t.user, Password: t.password}
	}
	return cfg
}

// connectError explains a failed first connection. The driver's messages
// never carry the password.
func (t *Target) connectError(err error) error {
	// The driver flattens the errors of session creation into text, so
	// the text is what tells them apart.
	hint := ""
	var re gocql.RequestError
	msg := err.Error()
	switch {
	case errors.As(err, &re) && re.Code() == gocql.ErrCodeCredentials, strings.Contains(msg, "password are incorrect"):
		hint = "; the cluster rejected the user name or password: check user and the variable or file named by password_env or password_file"
	case strings.Contains(msg, "authentication required"), strings.Contains(msg, "Authenticator"):
		hint = "; the cluster requires a login: set user and password_env or password_file"
	case errors.Is(err, gocql.ErrNoConnectionsStarted), target.IsConnectionError(err), strings.Contains(msg, "connection refused"),
		strings.Contains(msg, "no route to host"), strings.Contains(msg, "i/o timeout"), strings.Contains(msg, "no connections were made"):
		hint = "; is Cassandra running and are hosts right (CQL port, default 9042)?"
	}
	who := ""
	if t.user != "" {
		who = " as " + t.user
	}
	return fmt.Errorf("cassandra target: cannot connect to %s%s: %v%s", strings.Join(t.contact, ", "), who, err, hint)
}

// Address is the first contact point's host:port.
func (t *Target) Address() string { return t.contact[0] }

// Prepare creates the keyspace (replication factor rf, SimpleStrategy)
// and the table for w's fields; fresh drops the table first and sets the
// keyspace's replication factor to rf when it differs.
func (t *Target) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	if w.IsStatements() {
		return errors.New("workload.statements: the cassandra target runs YCSB workloads, not SQL statements; use a YCSB workload, or the sqlite, postgres or mysql target")
	}
	if w.FieldCount < 1 {
		return errors.New("workload.field_count: the cassandra table needs at least one field")
	}
	rf, err := t.replicationFactor()
	if err != nil {
		return err
	}
	if err := checkLevels(t.read, t.write, rf, t.opts.levelFields()); err != nil {
		return err
	}
	ks, tbl := t.opts.Keyspace, t.opts.Table
	if err := t.ensureKeyspace(ctx, ks, rf, fresh); err != nil {
		return err
	}
	fields := make([]string, w.FieldCount)
	for i := range fields {
		fields[i] = "field" + strconv.Itoa(i)
	}
	if fresh {
		if err := t.ddl(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %s.%s", ks, tbl)); err != nil {
			return err
		}
	}
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f + " text"
	}
	if err := t.ddl(ctx, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (y_id text PRIMARY KEY, %s)", ks, tbl, strings.Join(cols, ", "))); err != nil {
		return err
	}
	if err := t.admin.AwaitSchemaAgreement(ctx); err != nil {
		return fmt.Errorf("cassandra target: the nodes do not agree on the schema after creating %s.%s: %w", ks, tbl, err)
	}
	sess, err := t.config(ks).CreateSession()
	if err != nil {
		return t.connectError(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess != nil {
		t.sess.Close()
	}
	t.sess, t.fields, t.rf = sess, fields, rf
	t.stmts = newStatements(tbl, fields)
	return nil
}

// replicationFactor is the keyspace's replication factor: the options'
// (or managed cluster's), else min(3, the nodes the driver sees). An
// existing cluster must have at least that many nodes.
func (t *Target) replicationFactor() (int, error) {
	nodes := len(t.admin.GetHosts())
	rf := t.rf
	if rf == 0 {
		rf = max(1, min(3, nodes))
	}
	if t.opts.Managed == nil && rf > nodes {
		return 0, fmt.Errorf("replication_factor: %d copies need %d nodes, but the cluster at %s has %d; lower replication_factor or add nodes", rf, rf, strings.Join(t.contact, ", "), nodes)
	}
	return rf, nil
}

// ensureKeyspace creates the keyspace with rf copies, or checks the one
// there: when fresh, a different replication is altered to rf (the table
// is about to be dropped, so no data needs repairing); otherwise it is an
// error, since running at another replication factor than asked would
// mislabel the results.
func (t *Target) ensureKeyspace(ctx context.Context, ks string, rf int, fresh bool) error {
	repl := fmt.Sprintf("{'class': 'SimpleStrategy', 'replication_factor': %d}", rf)
	if err := t.ddl(ctx, fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s", ks, repl)); err != nil {
		return err
	}
	var have map[string]string
	if err := t.admin.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?", ks).
		Consistency(gocql.One).ScanContext(ctx, &have); err != nil {
		return fmt.Errorf("cassandra target: reading keyspace %s: %w", ks, classify(err))
	}
	if strings.HasSuffix(have["class"], "SimpleStrategy") && have["replication_factor"] == strconv.Itoa(rf) {
		return nil
	}
	if !fresh {
		return fmt.Errorf("keyspace: %s exists with replication %v, not SimpleStrategy with %d copies; populate afresh (the campaign does when it loads the data) or use another keyspace", ks, have, rf)
	}
	return t.ddl(ctx, fmt.Sprintf("ALTER KEYSPACE %s WITH replication = %s", ks, repl))
}

// ddl runs one schema statement at ALL on the admin session; the driver
// waits for the nodes to agree on the new schema.
func (t *Target) ddl(ctx context.Context, stmt string) error {
	if err := t.admin.Query(stmt).Consistency(gocql.All).ExecContext(ctx); err != nil {
		return fmt.Errorf("cassandra target: %s: %w", stmt, classify(err))
	}
	return nil
}

// NewClient returns a client for one request slot; all clients share the
// workload session (its connections and routing).
func (t *Target) NewClient(context.Context) (target.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil {
		return nil, errors.New("cassandra target: Prepare must run before clients are opened")
	}
	return newClient(t), nil
}

// ReplicationFactor is the keyspace's replication factor Prepare set (0
// before it).
func (t *Target) ReplicationFactor() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess == nil {
		return 0
	}
	return t.rf
}

// Close closes the driver's sessions.
func (t *Target) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess != nil {
		t.sess.Close()
		t.sess = nil
	}
	t.admin.Close()
	return nil
}

// hostAddrs are the addresses of the nodes the workload session routes
// to now (up or not), as host:port of their CQL port.
func (t *Target) hostAddrs(up bool) []string {
	t.mu.Lock()
	sess := t.sess
	t.mu.Unlock()
	if sess == nil {
		sess = t.admin
	}
	var out []string
	for _, h := range sess.GetHosts() {
		if up && !h.IsUp() {
			continue
		}
		out = append(out, net.JoinHostPort(h.ConnectAddress().String(), strconv.Itoa(h.Port())))
	}
	return out
}
