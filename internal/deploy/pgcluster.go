package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL cluster modes (managed.cluster.mode of the postgres target).
const (
	// PostgresModeAsync is a primary (node1) with asynchronous streaming
	// replicas: a commit returns once the primary has it, and a replica
	// replays it a little later (its replay lag).
	PostgresModeAsync = "async"
	// PostgresModeSync makes replicas synchronous standbys
	// (synchronous_standby_names = ANY k (node2, node3, ...)): a commit
	// waits until k of them confirm it, where confirm means what the
	// synchronous_commit setting says (on: flushed to disk; remote_write:
	// written; remote_apply: replayed, so visible to their readers).
	PostgresModeSync = "sync"
)

// PostgresClusterModes are the postgres target's cluster modes, default
// first.
var PostgresClusterModes = []string{PostgresModeAsync, PostgresModeSync}

// PostgresReplicationUser is the role the replicas stream WAL as; it has a
// generated password of its own, apart from the workload's.
const PostgresReplicationUser = "headroom_replication"

// pgMaxWalSenders bounds the replicas (and base backups in progress, each
// of which takes two WAL senders for a moment) a primary can feed. It is
// also each replica's value: a hot standby refuses to start with less
// than its primary has.
const pgMaxWalSenders = 2*MaxClusterNodes + 2

// pgReplicationConf are the lines every node of a cluster gets after its
// managed.settings; replicas need the same values as their primary.
var pgReplicationConf = []string{
	"# replication (internal/deploy/pgcluster.go)",
	"wal_level = replica",
	fmt.Sprintf("max_wal_senders = %d", pgMaxWalSenders),
	fmt.Sprintf("max_replication_slots = %d", pgMaxWalSenders),
	"hot_standby = on",
}

// postgresClusterReserved are settings a cluster's nodes get from
// Headroom, on top of postgresReserved.
var postgresClusterReserved = map[string]string{
	"wal_level":                 "replicas need wal_level replica",
	"max_wal_senders":           "Headroom sizes it for the cluster's nodes",
	"max_replication_slots":     "every replica streams from a slot of its own",
	"hot_standby":               "replicas serve reads",
	"synchronous_standby_names": "managed.cluster.mode and replication_factor decide it",
	"primary_conninfo":          "pg_basebackup -R writes it",
	"primary_slot_name":         "pg_basebackup -R writes it",
}

// CheckPostgresCluster reports the first problem of a postgres cluster
// block and its settings as one sentence.
func CheckPostgresCluster(c *Cluster, settings map[string]string) error {
	if c == nil {
		return nil
	}
	for _, s := range append([]map[string]string{settings}, nodeSettingsOf(c)...) {
		if err := CheckPostgresSettings(s); err != nil {
			return err
		}
		for _, k := range sortedKeys(s) {
			if why, ok := postgresClusterReserved[strings.ToLower(k)]; ok {
				return fmt.Errorf("managed.settings.%s: Headroom sets this itself in a cluster (%s); remove it", k, why)
			}
		}
	}
	n, rf := c.NodeCount(), c.ReplicationFactor
	switch c.ModeOr(PostgresModeAsync) {
	case PostgresModeAsync:
		if rf != 0 && rf != n {
			return fmt.Errorf("managed.cluster.replication_factor: %d does not fit mode async, where every one of the %d nodes holds the whole data set; remove it, or use mode: sync to make commits wait for replication_factor - 1 replicas", rf, n)
		}
	case PostgresModeSync:
		if n < 2 {
			return fmt.Errorf("managed.cluster.nodes: mode sync needs at least 2 nodes (a primary and a replica), got %d", n)
		}
		if rf == 1 {
			return fmt.Errorf("managed.cluster.replication_factor: 1 copy means no replica confirms a commit, which is mode async; use 2..%d, or 0 for 2", n)
		}
	}
	return nil
}

// PostgresCluster is a managed PostgreSQL primary (node1) with streaming
// replicas (node2, node3, ...), each made with pg_basebackup -R from the
// primary and streaming from a replication slot of its own. Each node is
// an Instance in dir/nodeN, on a lab host of the cluster's or on this
// machine's loopback with a port of its own. Every node has the same
// roles and passwords (a replica is a copy of the primary), so the
// workload logs in to each one alike; replicas accept reads only.
type PostgresCluster struct {
	mode     string
	dir      string
	base     Managed // settings, keep and start timeout of every node
	spec     *Cluster
	syncK    int    // sync mode: how many replicas confirm each commit
	replPass string // the replication role's password

	ops sync.Mutex // one AddReplica or RemoveReplica at a time

	mu     sync.Mutex
	nodes  []Node // in start order; nodes[0] is the primary
	seq    int    // nodes started so far: new names continue the count
	onStop func(ctx context.Context, n Node)
	lost   []Node // left out by a failover until rebuilt (pgcluster_promote.go)
}

// StartPostgresCluster starts m.Cluster's nodes in dir: the primary, then
// each replica from a base backup of it, and returns once every replica
// streams and has replayed what the primary had written. In sync mode the
// replicas then become synchronous standbys. On failure every node started
// is removed again.
func StartPostgresCluster(ctx context.Context, dir string, m Managed) (*PostgresCluster, error) {
	if m.Cluster == nil {
		return nil, errors.New("postgres cluster: managed.cluster is not set")
	}
	if err := CheckPostgresCluster(m.Cluster, m.Settings); err != nil {
		return nil, err
	}
	if m.Host != "" || m.Port != 0 {
		return nil, errors.New("managed.host, managed.port: a cluster's nodes get their hosts from managed.cluster.hosts and free ports of their own; remove host and port")
	}
	pc := &PostgresCluster{mode: m.Cluster.ModeOr(PostgresModeAsync), dir: dir, base: m, spec: m.Cluster, replPass: randomPassword()}
	pc.base.Cluster, pc.base.Placement = nil, nil
	if pc.mode == PostgresModeSync {
		pc.syncK = max(m.Cluster.ReplicationFactor-1, 1)
	}
	n := m.Cluster.NodeCount()
	place := func(i int) *Placement {
		if i < len(m.Cluster.Placements) {
			return m.Cluster.Placements[i]
		}
		return nil
	}
	err := func() error {
		if err := pc.startPrimary(ctx, place(0)); err != nil {
			return err
		}
		for i := 1; i < n; i++ {
			nd, _, err := pc.startReplica(ctx, place(i))
			if err != nil {
				return err
			}
			if err := pc.waitStreaming(ctx, nd.Name, time.Minute); err != nil {
				return err
			}
		}
		return pc.setSyncStandbys(ctx, "")
	}()
	if err != nil {
		_ = pc.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("postgres %s cluster of %d nodes: %w", pc.mode, n, err)
	}
	return pc, nil
}

// pgPrimaryRecipe is the PostgreSQL recipe with the replication settings
// added and the replication role created.
type pgPrimaryRecipe struct {
	postgresRecipe
	replPass string
}

func (r pgPrimaryRecipe) Init(ctx context.Context, inst *Instance) error {
	if err := r.postgresRecipe.Init(ctx, inst); err != nil {
		return err
	}
	return appendLines(filepath.Join(inst.DataDir(), postgresConfFile), pgReplicationConf)
}

func (r pgPrimaryRecipe) Ready(ctx context.Context, inst *Instance) error {
	if err := r.postgresRecipe.Ready(ctx, inst); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	admin, err := postgresConnect(cctx, inst, PostgresAdmin, "postgres")
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	var exists bool
	if err := admin.QueryRow(cctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", PostgresReplicationUser).Scan(&exists); err != nil || exists {
		return err
	}
	// As for the workload role: the statement carries the password, which
	// no log or statistics view may keep.
	for _, q := range []string{"SET log_statement = 'none'", "SET log_min_duration_statement = -1", "SET log_min_error_statement = 'panic'",
		"SET pg_stat_statements.track_utility = off",
		fmt.Sprintf("CREATE ROLE %s LOGIN REPLICATION PASSWORD '%s'", pgx.Identifier{PostgresReplicationUser}.Sanitize(), strings.ReplaceAll(r.replPass, "'", "''"))} {
		if _, err := admin.Exec(cctx, q); err != nil {
			return fmt.Errorf("creating the replication role: %w", err)
		}
	}
	return nil
}

func appendLines(path string, lines []string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	return errors.Join(err, f.Close())
}

// nextNode names the next node and gives its settings on place.
func (pc *PostgresCluster) nextNode(place *Placement) (name, host string, m Managed) {
	pc.mu.Lock()
	pc.seq++
	name = NodeName(pc.seq - 1)
	pc.mu.Unlock()
	if place != nil {
		host = place.Host
	}
	m = pc.base
	m.Placement = place
	m.Settings = pc.spec.SettingsFor(pc.base.Settings, name, host)
	return name, host, m
}

func (pc *PostgresCluster) startPrimary(ctx context.Context, place *Placement) error {
	name, host, m := pc.nextNode(place)
	inst, err := Start(ctx, pgPrimaryRecipe{replPass: pc.replPass}, filepath.Join(pc.dir, name), m)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	pc.mu.Lock()
	pc.nodes = append(pc.nodes, Node{Name: name, Host: host, Role: "primary", Inst: inst})
	pc.mu.Unlock()
	return nil
}

// Mode is PostgresModeAsync or PostgresModeSync.
func (pc *PostgresCluster) Mode() string { return pc.mode }

// SyncReplicas is how many replicas confirm each commit in sync mode
// (fewer while the cluster has fewer replicas); 0 in async mode.
func (pc *PostgresCluster) SyncReplicas() int { return pc.syncK }

// Nodes lists the nodes now, in start order, the primary first.
func (pc *PostgresCluster) Nodes() []Node {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return append([]Node(nil), pc.nodes...)
}

// Primary is node1, which takes every write.
func (pc *PostgresCluster) Primary() *Instance {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.nodes) == 0 {
		return nil
	}
	return pc.nodes[0].Inst
}

// Replicas are the replica nodes now, in start order.
func (pc *PostgresCluster) Replicas() []Node {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	var out []Node
	for _, n := range pc.nodes {
		if n.Role == "replica" {
			out = append(out, n)
		}
	}
	return out
}

// PIDs are the running nodes' postmasters.
func (pc *PostgresCluster) PIDs() []int {
	var out []int
	for _, n := range pc.Nodes() {
		if pid := n.Inst.PID(); pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// OnStop sets f to be called with a replica that RemoveReplica is about to
// stop, once it no longer confirms commits (the moment to stop sending it
// reads).
func (pc *PostgresCluster) OnStop(f func(ctx context.Context, n Node)) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.onStop = f
}

// Remove stops every node and removes its data (the logs stay): the
// replicas first, so that the primary's fast shutdown does not wait to
// send them its last WAL.
func (pc *PostgresCluster) Remove(ctx context.Context) error {
	pc.mu.Lock()
	nodes := append(pc.nodes, pc.lost...)
	pc.nodes, pc.lost = nil, nil
	pc.mu.Unlock()
	if len(nodes) == 0 {
		return nil
	}
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = n.Inst.Remove(ctx)
		}()
	}
	wg.Wait()
	errs[0] = nodes[0].Inst.Remove(ctx)
	return errors.Join(errs...)
}

// admin opens a superuser connection to the primary's maintenance
// database.
func (pc *PostgresCluster) admin(ctx context.Context) (*pgx.Conn, error) {
	p := pc.Primary()
	if p == nil {
		return nil, errors.New("the cluster has been removed")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := postgresConnect(cctx, p, PostgresAdmin, "postgres")
	if err != nil {
		return nil, fmt.Errorf("connecting to the primary: %w", err)
	}
	return c, nil
}

// setSyncStandbys makes the replicas but leaving (a node name, or "")
// the primary's synchronous standbys in sync mode: ANY k of them, k
// lowered to their number when fewer are left. It waits until the primary
// runs with the new list, so that a leaving replica no longer holds up
// commits when it returns.
func (pc *PostgresCluster) setSyncStandbys(ctx context.Context, leaving string) error {
	if pc.mode != PostgresModeSync {
		return nil
	}
	var names []string
	for _, n := range pc.Replicas() {
		if n.Name != leaving {
			names = append(names, pgx.Identifier{n.Name}.Sanitize())
		}
	}
	value := ""
	if len(names) > 0 {
		value = fmt.Sprintf("ANY %d (%s)", min(pc.syncK, len(names)), strings.Join(names, ", "))
	}
	admin, err := pc.admin(ctx)
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	q := "ALTER SYSTEM SET synchronous_standby_names = '" + strings.ReplaceAll(value, "'", "''") + "'"
	if _, err := admin.Exec(ctx, q); err != nil {
		return fmt.Errorf("setting synchronous_standby_names: %w", err)
	}
	if _, err := admin.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reloading the primary's configuration: %w", err)
	}
	// The postmaster rereads the file and signals the other processes;
	// the WAL senders' sync_state shows when they have the new list.
	return waitFor(ctx, 10*time.Second, "the primary to take synchronous_standby_names = "+value, func() (bool, string, error) {
		rows, err := admin.Query(ctx, "SELECT application_name, sync_state FROM pg_stat_replication")
		if err != nil {
			return false, "", err
		}
		states, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Name, State string }])
		if err != nil {
			return false, "", err
		}
		ok := true
		var seen []string
		for _, s := range states {
			seen = append(seen, s.Name+" "+s.State)
			listed := strings.Contains(value, pgx.Identifier{s.Name}.Sanitize())
			if listed != (s.State == "sync" || s.State == "quorum" || s.State == "potential") {
				ok = false
			}
		}
		return ok, strings.Join(seen, ", "), nil
	})
}
