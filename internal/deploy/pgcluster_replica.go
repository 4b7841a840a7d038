package deploy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgReplicaRecipe makes a replica of primary: Init takes a base backup of
// it (pg_basebackup -R, from a replication slot named after the node) in
// place of initdb, and writes the node's own listen address, port and
// settings over the primary's.
type pgReplicaRecipe struct {
	postgresRecipe
	name     string
	primary  *Instance
	replPass string
	// backupBytes is the size of the base backup, set by Init.
	backupBytes *int64
}

func (pgReplicaRecipe) Binaries() []Binary {
	dirs := []string{"/usr/lib/postgresql/*/bin"}
	return []Binary{
		{Name: "postgres", Dirs: dirs, Package: "postgresql"},
		{Name: "pg_basebackup", Dirs: dirs, Package: "postgresql"},
	}
}

// pgSlot is the replication slot node streams from.
func pgSlot(node string) string { return "headroom_" + node }

// pgPassFile holds the replication role's password in a replica's instance
// directory: pg_basebackup and then the replica's WAL receiver read it
// from there, so it is on no command line (which ps shows) and in no
// configuration file.
const pgPassFile = "replication.pgpass"

func (r pgReplicaRecipe) Init(ctx context.Context, inst *Instance) error {
	if err := CheckPostgresSettings(inst.Settings); err != nil {
		return err
	}
	p := r.primary
	inst.User, inst.Database, inst.Password = p.User, p.Database, p.Password
	pass := filepath.Join(inst.Dir, pgPassFile)
	line := fmt.Sprintf("%s:%d:*:%s:%s\n", pgPassEscape(p.Host), p.Port, PostgresReplicationUser, pgPassEscape(r.replPass))
	if err := os.WriteFile(pass, []byte(line), 0o600); err != nil {
		return err
	}
	uid, gid := inst.Owner()
	if err := os.Chown(pass, uid, gid); err != nil {
		return err
	}
	conninfo := fmt.Sprintf("host=%s port=%d user=%s passfile=%s application_name=%s connect_timeout=10",
		p.Host, p.Port, PostgresReplicationUser, pgConnValue(pass), r.name)
	// -c fast: the backup starts with an immediate checkpoint instead of
	// a spread one, which could take minutes. -X stream: the WAL written
	// meanwhile comes along, so the copy is consistent on its own. -C -S:
	// the slot keeps the primary's WAL until this replica has it.
	_, err := runOn(ctx, inst, inst.Bin("pg_basebackup"), "-d", conninfo, "-D", inst.DataDir(),
		"-R", "-X", "stream", "-c", "fast", "-C", "-S", pgSlot(r.name), "-w")
	if err != nil {
		return fmt.Errorf("base backup of the primary %s: %w", p.Addr(), err)
	}
	*r.backupBytes = dirSize(inst.DataDir())
	conf := postgresConf(inst) + strings.Join(pgReplicationConf, "\n") + "\n"
	if !hasSetting(inst.Settings, "wal_retrieve_retry_interval") {
		// After the primary restarts (reset: restart, or a kill fault)
		// the replica reconnects within a second instead of five.
		conf += "wal_retrieve_retry_interval = 1s\n"
	}
	return os.WriteFile(filepath.Join(inst.DataDir(), postgresConfFile), []byte(conf), 0o600)
}

// Ready waits until the replica accepts connections (a hot standby does
// once it has replayed up to a consistent state) and is in recovery.
func (r pgReplicaRecipe) Ready(ctx context.Context, inst *Instance) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := postgresConnect(cctx, inst, PostgresAdmin, inst.Database)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	var standby bool
	if err := c.QueryRow(cctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil {
		return err
	}
	if !standby {
		return fmt.Errorf("%s is not in recovery: it is no replica", r.name)
	}
	return nil
}

// runOn runs a helper program as the service user where the server runs:
// on the instance's lab host (its network address and volume limits), or
// on this machine.
func runOn(ctx context.Context, inst *Instance, path string, args ...string) ([]byte, error) {
	p := inst.Placement()
	if p == nil || p.Wrap == nil {
		return inst.RunAs(ctx, path, args...)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env = inst.Dir, inst.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	uid, gid := inst.Owner()
	if err := p.Wrap(cmd, uid, gid); err != nil {
		return nil, fmt.Errorf("placing %s on host %s: %w", filepath.Base(path), p.Host, err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s on host %s: %w: %s", filepath.Base(path), p.Host, err, lastLines(out, 5))
	}
	return out, nil
}

// pgPassEscape escapes a .pgpass field.
func pgPassEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `:`, `\:`).Replace(s)
}

// pgConnValue quotes a value of a libpq connection string.
func pgConnValue(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// startReplica starts a replica on place (nil = this machine) and adds it
// to the node list once it accepts connections; it returns the node and
// its base backup's size. On a lab host the primary first lets the
// replica's address in for replication.
func (pc *PostgresCluster) startReplica(ctx context.Context, place *Placement) (Node, int64, error) {
	primary := pc.Primary()
	if primary == nil {
		return Node{}, -1, errors.New("the cluster has been removed")
	}
	name, host, m := pc.nextNode(place)
	if place != nil && place.Address != primary.Host {
		if err := pc.allowReplication(ctx, place.Address); err != nil {
			return Node{}, -1, fmt.Errorf("%s: %w", name, err)
		}
	}
	size := int64(-1)
	inst, err := Start(ctx, pgReplicaRecipe{name: name, primary: primary, replPass: pc.replPass, backupBytes: &size}, filepath.Join(pc.dir, name), m)
	if err != nil {
		// A backup that failed half way may have left its slot, which
		// would keep WAL on the primary for ever.
		pc.dropSlot(context.WithoutCancel(ctx), name, 5*time.Second)
		return Node{}, -1, fmt.Errorf("%s: %w", name, err)
	}
	nd := Node{Name: name, Host: host, Role: "replica", Inst: inst}
	pc.mu.Lock()
	pc.nodes = append(pc.nodes, nd)
	pc.mu.Unlock()
	return nd, size, nil
}

// allowReplication adds a pg_hba.conf line to the primary for replication
// connections from addr and reloads it.
func (pc *PostgresCluster) allowReplication(ctx context.Context, addr string) error {
	p := pc.Primary()
	line := fmt.Sprintf("host replication %s %s/32 scram-sha-256", PostgresReplicationUser, addr)
	hba := filepath.Join(p.DataDir(), "pg_hba.conf")
	b, err := os.ReadFile(hba)
	if err != nil {
		return err
	}
	if strings.Contains(string(b), line+"\n") {
		return nil
	}
	if err := appendLines(hba, []string{"# a replica's host (internal/deploy/pgcluster.go)", line}); err != nil {
		return err
	}
	admin, err := pc.admin(ctx)
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	_, err = admin.Exec(ctx, "SELECT pg_reload_conf()")
	return err
}

// ReplicaLag is where one replica stands, as its primary sees it
// (pg_stat_replication).
type ReplicaLag struct {
	Node string
	// State is the WAL sender's state: streaming, catchup, startup or
	// backup; "" when the replica is not connected.
	State string
	// SyncState is async, potential, sync or quorum (sync mode).
	SyncState string
	// Bytes is how much WAL the primary has written that the replica
	// has not replayed yet; -1 when it is not connected.
	Bytes int64
	// Replay is the primary's replay_lag: how long ago the primary wrote
	// what the replica has just replayed. PostgreSQL keeps it while WAL
	// flows and clears it once the replica has caught up with an idle
	// primary; -1 when unknown (then Bytes says more).
	Replay time.Duration
}

// ReplayLag reports every replica's lag, in start order.
func (pc *PostgresCluster) ReplayLag(ctx context.Context) ([]ReplicaLag, error) {
	admin, err := pc.admin(ctx)
	if err != nil {
		return nil, err
	}
	defer admin.Close(context.Background())
	return pc.replayLag(ctx, admin)
}

func (pc *PostgresCluster) replayLag(ctx context.Context, admin *pgx.Conn) ([]ReplicaLag, error) {
	rows, err := admin.Query(ctx, `SELECT application_name, state, sync_state,
			coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), -1)::bigint,
			coalesce((extract(epoch FROM replay_lag) * 1000000)::bigint, -1)
		FROM pg_stat_replication`)
	if err != nil {
		return nil, fmt.Errorf("reading pg_stat_replication: %w", err)
	}
	type row struct {
		Name, State, Sync string
		Bytes, Micros     int64
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return nil, fmt.Errorf("reading pg_stat_replication: %w", err)
	}
	var out []ReplicaLag
	for _, n := range pc.Replicas() {
		l := ReplicaLag{Node: n.Name, Bytes: -1, Replay: -1}
		for _, r := range got {
			// A base backup in progress has a WAL sender of its own,
			// under pg_basebackup's name.
			if r.Name == n.Name {
				l.State, l.SyncState, l.Bytes = r.State, r.Sync, r.Bytes
				if r.Micros >= 0 {
					l.Replay = time.Duration(r.Micros) * time.Microsecond
				}
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// waitStreaming waits until the replica named name streams and has nearly
// caught up: its replay lag under a second, or no WAL left to replay.
func (pc *PostgresCluster) waitStreaming(ctx context.Context, name string, limit time.Duration) error {
	admin, err := pc.admin(ctx)
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	return waitFor(ctx, limit, name+" to stream from the primary with a replay lag under 1s", func() (bool, string, error) {
		lags, err := pc.replayLag(ctx, admin)
		if err != nil {
			return false, "", err
		}
		for _, l := range lags {
			if l.Node == name {
				caught := l.Bytes == 0 || l.Replay >= 0 && l.Replay < time.Second
				return l.State == "streaming" && caught, fmt.Sprintf("state %q, %d bytes and %v behind", l.State, l.Bytes, l.Replay), nil
			}
		}
		return false, "not in the node list", nil
	})
}

// WaitStreaming waits until every replica streams from the primary with
// a replay lag under a second, e.g. after the primary restarted (a
// replica's WAL receiver retries every wal_retrieve_retry_interval, 5 s by
// default).
func (pc *PostgresCluster) WaitStreaming(ctx context.Context, limit time.Duration) error {
	for _, n := range pc.Replicas() {
		if err := pc.waitStreaming(ctx, n.Name, limit); err != nil {
			return err
		}
	}
	return nil
}

// WaitReplayed waits until every replica has replayed all the WAL the
// primary had written when it was called (a population, say), so that
// reads sent to replicas afterwards find it. It gives up after limit.
func (pc *PostgresCluster) WaitReplayed(ctx context.Context, limit time.Duration) error {
	if len(pc.Replicas()) == 0 {
		return nil
	}
	admin, err := pc.admin(ctx)
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	var target string
	if err := admin.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&target); err != nil {
		return err
	}
	return waitFor(ctx, limit, "every replica to replay the primary's WAL up to "+target, func() (bool, string, error) {
		rows, err := admin.Query(ctx, `SELECT application_name, pg_wal_lsn_diff($1::pg_lsn, replay_lsn)::bigint FROM pg_stat_replication`, target)
		if err != nil {
			return false, "", err
		}
		behind := map[string]*int64{} // nil: nothing replayed yet
		for rows.Next() {
			var name string
			var n *int64
			if err := rows.Scan(&name, &n); err != nil {
				rows.Close()
				return false, "", err
			}
			behind[name] = n
		}
		if err := rows.Err(); err != nil {
			return false, "", err
		}
		var late []string
		for _, nd := range pc.Replicas() {
			n, ok := behind[nd.Name]
			switch {
			case !ok:
				late = append(late, nd.Name+" not connected")
			case n == nil:
				late = append(late, nd.Name+" has replayed nothing yet")
			case *n > 0:
				late = append(late, fmt.Sprintf("%s %d bytes behind", nd.Name, *n))
			}
		}
		return len(late) == 0, strings.Join(late, ", "), nil
	})
}

// AddReplica starts a new replica on place (nil = this machine) from a
// base backup taken while the primary goes on serving, and returns once
// it streams with a replay lag under a second. Started is when it accepts
// connections (the backup restored and replayed to a consistent state),
// Done when it has caught up; BytesStreamed is the base backup's size. In
// sync mode it then joins the synchronous standbys.
func (pc *PostgresCluster) AddReplica(ctx context.Context, place *Placement) (NodeChange, error) {
	pc.ops.Lock()
	defer pc.ops.Unlock()
	ch := NodeChange{Action: "add_node", Requested: time.Now(), BytesStreamed: -1}
	if place != nil {
		ch.Host = place.Host
	}
	nd, size, err := pc.startReplica(ctx, place)
	if err != nil {
		ch.Error = err.Error()
		return ch, fmt.Errorf("add_node: %w", err)
	}
	ch.Node, ch.Started, ch.BytesStreamed = nd.Name, time.Now(), size
	if err := pc.waitStreaming(ctx, nd.Name, 5*time.Minute); err != nil {
		ch.Error = err.Error()
		return ch, fmt.Errorf("add_node %s: %w", nd.Name, err)
	}
	ch.Done = time.Now()
	if err := pc.setSyncStandbys(ctx, ""); err != nil {
		ch.Error = err.Error()
		return ch, fmt.Errorf("add_node %s: %w", nd.Name, err)
	}
	ch.Detail = fmt.Sprintf("%s: a replica of %s on %s from a base backup of %d bytes; accepted connections after %v, streamed with a replay lag under 1s after %v",
		nd.Name, pc.Primary().Addr(), nd.Inst.Addr(), size, ch.Started.Sub(ch.Requested).Round(time.Millisecond), ch.Done.Sub(ch.Requested).Round(time.Millisecond))
	return ch, nil
}

// RemoveReplica takes the replica named name (or on the lab host name) out
// of the synchronous standbys, stops it, removes its data and drops its
// replication slot. The primary cannot go: it takes every write, and
// Headroom does not fail over.
func (pc *PostgresCluster) RemoveReplica(ctx context.Context, name string) (NodeChange, error) {
	pc.ops.Lock()
	defer pc.ops.Unlock()
	ch := NodeChange{Action: "remove_node", Node: name, Requested: time.Now(), BytesStreamed: -1}
	fail := func(err error) (NodeChange, error) {
		ch.Error = err.Error()
		return ch, err
	}
	nd, err := pc.node(name)
	if err != nil {
		return fail(err)
	}
	ch.Node, ch.Host = nd.Name, nd.Host
	if nd.Role == "primary" {
		return fail(fmt.Errorf("remove_node: %s is the primary, which takes every write, and Headroom does not fail over; remove a replica", nd.Name))
	}
	if err := pc.setSyncStandbys(ctx, nd.Name); err != nil {
		return fail(fmt.Errorf("remove_node %s: %w", nd.Name, err))
	}
	ch.Started = time.Now()
	pc.mu.Lock()
	for i, x := range pc.nodes {
		if x.Name == nd.Name {
			pc.nodes = append(pc.nodes[:i:i], pc.nodes[i+1:]...)
			break
		}
	}
	onStop := pc.onStop
	pc.mu.Unlock()
	if onStop != nil {
		onStop(ctx, nd)
	}
	if err := nd.Inst.Remove(ctx); err != nil {
		return fail(fmt.Errorf("remove_node %s: %w", nd.Name, err))
	}
	if err := pc.dropSlot(ctx, nd.Name, 30*time.Second); err != nil {
		return fail(fmt.Errorf("remove_node %s: %w", nd.Name, err))
	}
	ch.Done = time.Now()
	ch.Detail = fmt.Sprintf("replica %s stopped, its data and replication slot removed, in %v", nd.Name, ch.Done.Sub(ch.Requested).Round(time.Millisecond))
	return ch, nil
}

// dropSlot drops node's replication slot on the primary once its WAL
// sender has gone (it lingers a moment after the replica stops).
func (pc *PostgresCluster) dropSlot(ctx context.Context, node string, limit time.Duration) error {
	admin, err := pc.admin(ctx)
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	slot := pgSlot(node)
	return waitFor(ctx, limit, "replication slot "+slot+" to be released", func() (bool, string, error) {
		var exists, active bool
		err := admin.QueryRow(ctx, "SELECT count(*) > 0, coalesce(bool_or(active), false) FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&exists, &active)
		if err != nil || !exists {
			return !exists, "", err
		}
		if active {
			return false, "still active", nil
		}
		_, err = admin.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot)
		return err == nil, fmt.Sprint(err), nil
	})
}

// node finds a node by its name or its lab host's name.
func (pc *PostgresCluster) node(name string) (Node, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	names := make([]string, 0, len(pc.nodes))
	for _, n := range pc.nodes {
		if n.Name == name || n.Host != "" && n.Host == name {
			return n, nil
		}
		names = append(names, n.Name)
	}
	return Node{}, fmt.Errorf("remove_node: the postgres cluster has no node %q; its nodes are %s", name, strings.Join(names, ", "))
}
