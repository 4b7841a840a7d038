package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// startPostgresCluster starts a managed cluster for the test and removes
// it when the test ends; it skips the test when PostgreSQL is not
// installed (and fails it under HEADROOM_REQUIRE_SERVERS=1).
func startPostgresCluster(t *testing.T, m Managed) *PostgresCluster {
	t.Helper()
	dir := serverTestDir(t, "pgc")
	start := time.Now()
	pc, err := StartPostgresCluster(context.Background(), dir, m)
	if errors.Is(err, ErrMissingBinary) {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal(err)
		}
		t.Skip("PostgreSQL is not installed (apt-get install -y postgresql postgresql-contrib): ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s cluster of %d nodes started in %v", pc.Mode(), len(pc.Nodes()), time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		pids := pc.PIDs()
		if err := pc.Remove(context.Background()); err != nil {
			t.Error(err)
		}
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("server process %d still runs after Remove", pid)
			}
		}
		// Only the nodes' logs stay.
		_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && fi.Name() != "server.log" {
				t.Errorf("left behind: %s", p)
			}
			return nil
		})
	})
	return pc
}

func pgPool(t *testing.T, inst *Instance) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), PostgresDSN(inst))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// visibleWithin polls for row id on inst until it appears or limit ends;
// it returns how long that took (-1: never).
func visibleWithin(ctx context.Context, p *pgxpool.Pool, id int, limit time.Duration) time.Duration {
	start := time.Now()
	for {
		var n int
		if err := p.QueryRow(ctx, "SELECT count(*) FROM kv WHERE id = $1", id).Scan(&n); err == nil && n == 1 {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			return -1
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPostgresClusterAsyncAddRemove(t *testing.T) {
	pc := startPostgresCluster(t, Managed{Settings: map[string]string{"shared_buffers": "32MB"},
		Cluster: &Cluster{Nodes: 3, NodeSettings: map[string]map[string]string{"node3": {"work_mem": "5MB"}}}})
	ctx := context.Background()
	nodes := pc.Nodes()
	if len(nodes) != 3 || nodes[0].Role != "primary" || nodes[1].Role != "replica" || nodes[2].Name != "node3" || len(pc.Replicas()) != 2 {
		t.Fatalf("nodes: %+v", nodes)
	}
	if len(pc.PIDs()) != 3 {
		t.Fatalf("pids %v", pc.PIDs())
	}
	primary := pgPool(t, pc.Primary())
	if _, err := primary.Exec(ctx, "CREATE TABLE kv (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	// Each replica is a hot standby with its own port and settings, and
	// the workload's role and password work on it.
	for i, n := range pc.Replicas() {
		p := pgPool(t, n.Inst)
		var standby bool
		var port, wm string
		if err := p.QueryRow(ctx, "SELECT pg_is_in_recovery(), current_setting('port'), current_setting('work_mem')").Scan(&standby, &port, &wm); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "4MB", true: "5MB"}[i == 1]
		if !standby || port != fmt.Sprint(n.Inst.Port) || wm != want {
			t.Fatalf("%s: standby %v port %s work_mem %s (want %s)", n.Name, standby, port, wm, want)
		}
		if _, err := p.Exec(ctx, "CREATE TABLE w (id int)"); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("%s took a write: %v", n.Name, err)
		}
		// The replication password is in the pass file only.
		auto, err := os.ReadFile(filepath.Join(n.Inst.DataDir(), "postgresql.auto.conf"))
		if err != nil || !strings.Contains(string(auto), "passfile=") || strings.Contains(string(auto), pc.replPass) {
			t.Fatalf("%s: postgresql.auto.conf %q, %v", n.Name, auto, err)
		}
	}
	for _, n := range pc.Nodes() {
		if log, _ := os.ReadFile(n.Inst.LogPath()); strings.Contains(string(log), pc.replPass) || strings.Contains(string(log), n.Inst.Password) {
			t.Fatalf("%s's log holds a password", n.Name)
		}
	}
	// A write on the primary reaches each replica soon after.
	if _, err := primary.Exec(ctx, "INSERT INTO kv VALUES (1, 'one')"); err != nil {
		t.Fatal(err)
	}
	for _, n := range pc.Replicas() {
		d := visibleWithin(ctx, pgPool(t, n.Inst), 1, 5*time.Second)
		if d < 0 {
			t.Fatalf("%s never saw the write", n.Name)
		}
		t.Logf("%s saw the write after %v", n.Name, d)
	}
	lags, err := pc.ReplayLag(ctx)
	if err != nil || len(lags) != 2 || lags[0].Node != "node2" || lags[0].State != "streaming" || lags[1].Bytes < 0 {
		t.Fatalf("lags %+v, %v", lags, err)
	}

	// Add a replica while the primary takes writes; every write
	// acknowledged before and during the backup is on it afterwards.
	var wrote atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for id := 2; ; id++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := primary.Exec(ctx, "INSERT INTO kv VALUES ($1, repeat('v', 200))", id); err != nil {
				t.Errorf("write %d: %v", id, err)
				return
			}
			wrote.Store(int64(id))
		}
	}()
	time.Sleep(200 * time.Millisecond)
	ch, err := pc.AddReplica(ctx, nil)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("add_node: %s (%d writes went on meanwhile)", ch.Detail, wrote.Load())
	if ch.Node != "node4" || ch.BytesStreamed < 1<<20 || ch.Started.Before(ch.Requested) || ch.Done.Before(ch.Started) || ch.Error != "" {
		t.Fatalf("change %+v", ch)
	}
	if err := pc.WaitReplayed(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	p4 := pgPool(t, pc.Replicas()[2].Inst)
	var n int64
	if err := p4.QueryRow(ctx, "SELECT count(*) FROM kv").Scan(&n); err != nil || n != wrote.Load() {
		t.Fatalf("node4 holds %d rows, %d were written: %v", n, wrote.Load(), err)
	}
	p4.Close()

	// Removing a replica drops its slot; the primary cannot go.
	var stopped []string
	pc.OnStop(func(_ context.Context, n Node) { stopped = append(stopped, n.Name) })
	if _, err := pc.RemoveReplica(ctx, "node1"); err == nil || !strings.Contains(err.Error(), "primary") {
		t.Fatalf("removing the primary: %v", err)
	}
	if _, err := pc.RemoveReplica(ctx, "node9"); err == nil || !strings.Contains(err.Error(), "no node \"node9\"") {
		t.Fatalf("removing a missing node: %v", err)
	}
	ch, err = pc.RemoveReplica(ctx, "node2")
	if err != nil || ch.Node != "node2" || ch.Done.IsZero() {
		t.Fatalf("remove: %+v, %v", ch, err)
	}
	var slots []string
	rows, _ := primary.Query(ctx, "SELECT slot_name FROM pg_replication_slots ORDER BY 1")
	slots, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || strings.Join(slots, ",") != "headroom_node3,headroom_node4" {
		t.Fatalf("slots after removing node2: %v, %v", slots, err)
	}
	if len(stopped) != 1 || stopped[0] != "node2" || len(pc.Nodes()) != 3 {
		t.Fatalf("stopped %v, nodes %+v", stopped, pc.Nodes())
	}
	if _, err := os.Stat(filepath.Join(pc.dir, "node2", "data")); !os.IsNotExist(err) {
		t.Fatalf("node2's data is still there: %v", err)
	}
}

func TestPostgresClusterSyncRemoteApply(t *testing.T) {
	// replication_factor 3: a commit waits for both replicas; with
	// remote_apply, until they have replayed it.
	pc := startPostgresCluster(t, Managed{Settings: map[string]string{"synchronous_commit": "remote_apply"},
		Cluster: &Cluster{Nodes: 3, Mode: PostgresModeSync, ReplicationFactor: 3}})
	ctx := context.Background()
	primary := pgPool(t, pc.Primary())
	var names string
	if err := primary.QueryRow(ctx, "SHOW synchronous_standby_names").Scan(&names); err != nil || names != `ANY 2 ("node2", "node3")` {
		t.Fatalf("synchronous_standby_names %q, %v", names, err)
	}
	if _, err := primary.Exec(ctx, "CREATE TABLE kv (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	var replicas []*pgxpool.Pool
	for _, n := range pc.Replicas() {
		replicas = append(replicas, pgPool(t, n.Inst))
	}
	for id := 1; id <= 20; id++ {
		if _, err := primary.Exec(ctx, "INSERT INTO kv VALUES ($1, 'x')", id); err != nil {
			t.Fatal(err)
		}
		for i, p := range replicas {
			var n int
			if err := p.QueryRow(ctx, "SELECT count(*) FROM kv WHERE id = $1", id).Scan(&n); err != nil || n != 1 {
				t.Fatalf("write %d acknowledged by the primary is not on node%d yet: %d, %v", id, i+2, n, err)
			}
		}
	}
	lags, err := pc.ReplayLag(ctx)
	if err != nil || len(lags) != 2 || lags[0].SyncState != "quorum" {
		t.Fatalf("lags %+v, %v", lags, err)
	}
	// With one replica left, commits wait for it alone instead of for
	// ever.
	if _, err := pc.RemoveReplica(ctx, "node3"); err != nil {
		t.Fatal(err)
	}
	if err := primary.QueryRow(ctx, "SHOW synchronous_standby_names").Scan(&names); err != nil || names != `ANY 1 ("node2")` {
		t.Fatalf("after remove: synchronous_standby_names %q, %v", names, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := primary.Exec(wctx, "INSERT INTO kv VALUES (100, 'x')"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := replicas[0].QueryRow(ctx, "SELECT count(*) FROM kv WHERE id = 100").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the write is not on node2: %d, %v", n, err)
	}
}

func TestPostgresClusterChecks(t *testing.T) {
	for want, c := range map[string]struct {
		c *Cluster
		s map[string]string
	}{
		"managed.settings.wal_level: Headroom sets this itself":    {&Cluster{Nodes: 2}, map[string]string{"wal_level": "minimal"}},
		"managed.settings.primary_conninfo: Headroom sets":         {&Cluster{Nodes: 2, NodeSettings: map[string]map[string]string{"node2": {"primary_conninfo": "x"}}}, nil},
		"replication_factor: 2 does not fit mode async":            {&Cluster{Nodes: 3, ReplicationFactor: 2}, nil},
		"mode sync needs at least 2 nodes":                         {&Cluster{Nodes: 1, Mode: PostgresModeSync}, nil},
		"replication_factor: 1 copy means no replica confirms":     {&Cluster{Nodes: 3, Mode: PostgresModeSync, ReplicationFactor: 1}, nil},
		`managed.settings: "bad name" is not a PostgreSQL setting`: {&Cluster{Nodes: 2}, map[string]string{"bad name": "1"}},
	} {
		if err := CheckPostgresCluster(c.c, c.s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v %v: got %v, want %q", c.c, c.s, err, want)
		}
	}
	for _, c := range []*Cluster{{Nodes: 3, ReplicationFactor: 3}, {Nodes: 3, Mode: PostgresModeSync, ReplicationFactor: 2}, {Nodes: 2, Mode: PostgresModeSync}} {
		if err := CheckPostgresCluster(c, map[string]string{"synchronous_commit": "remote_apply"}); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
