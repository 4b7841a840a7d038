package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// snapshotSuffix names the database that holds a managed target's snapshot.
const snapshotSuffix = "_snapshot"

// ManagedTarget is a target whose PostgreSQL cluster Headroom runs. Besides
// the requests it can restart the server (reset policy restart), save and
// bring back the populated database (reset policy restore) and name the
// server's processes for monitoring.
type ManagedTarget struct{ *Target }

// Restart implements target.Restarter: the server stops (fast shutdown,
// which aborts open transactions), starts on the same port and data, and
// the target opens a new pool.
func (m *ManagedTarget) Restart(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Stopping first breaks every open connection, so closing the pool does
	// not wait for requests that would never finish.
	if err := m.inst.Stop(ctx); err != nil {
		return fmt.Errorf("postgres target: stopping the server: %w", err)
	}
	m.closePool()
	if err := m.inst.Restart(ctx); err != nil {
		return fmt.Errorf("postgres target: restarting the server: %w", err)
	}
	return m.openPool(ctx)
}

// ServerPIDs implements target.ServerProcesses: the postmaster and its
// children at the time of the call (backends of open connections,
// checkpointer, WAL writer, ...).
func (m *ManagedTarget) ServerPIDs() []int {
	pid := m.inst.PID()
	if pid == 0 {
		return nil
	}
	return append([]int{pid}, childPIDs(pid)...)
}

// Snapshot implements target.Snapshotter: a copy of the workload database
// made with CREATE DATABASE ... TEMPLATE, which copies its files and needs
// no dump. The pool is closed meanwhile, because PostgreSQL copies only a
// database nobody is connected to.
func (m *ManagedTarget) Snapshot(ctx context.Context) error {
	db := m.opts.Database
	return m.withMaintenance(ctx, "snapshot",
		"DROP DATABASE IF EXISTS "+db+snapshotSuffix,
		"CREATE DATABASE "+db+snapshotSuffix+" TEMPLATE "+db)
}

// Restore implements target.Snapshotter: the workload database is dropped
// and copied again from the snapshot.
func (m *ManagedTarget) Restore(ctx context.Context) error {
	db := m.opts.Database
	return m.withMaintenance(ctx, "restore",
		"DROP DATABASE IF EXISTS "+db+" WITH (FORCE)",
		"CREATE DATABASE "+db+" TEMPLATE "+db+snapshotSuffix)
}

// withMaintenance closes the pool, runs statements on a connection to the
// maintenance database "postgres", and opens the pool again.
func (m *ManagedTarget) withMaintenance(ctx context.Context, what string, stmts ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closePool()
	cc := m.cfg.ConnConfig.Copy()
	cc.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err == nil {
		for _, q := range stmts {
			if _, err = conn.Exec(ctx, q); err != nil {
				break
			}
		}
		conn.Close(context.Background())
	}
	if err != nil {
		// Reopen anyway so the target stays usable for a report.
		_ = m.openPool(ctx)
		return fmt.Errorf("postgres target: %s: %w", what, err)
	}
	return m.openPool(ctx)
}

// childPIDs lists the processes whose parent is ppid, from /proc.
func childPIDs(ppid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces; fields after its ')' are
		// state and ppid.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out
}

// Ephemeral implements target.Ephemeral: each session starts its own empty
// cluster, so a resumed campaign populates it again.
func (m *ManagedTarget) Ephemeral() bool { return true }

// StartServer implements target.ServerStarter: it starts the server again
// when it is not running (after a kill event), on the same port and data.
func (m *ManagedTarget) StartServer(ctx context.Context) error {
	if m.inst.Running() {
		return nil
	}
	return m.inst.Restart(ctx)
}
