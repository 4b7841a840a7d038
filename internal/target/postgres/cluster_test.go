package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
	"github.com/headroom-dev/headroom/internal/workload"
)

// openClusterTarget opens the postgres target with a managed cluster on
// loopback through its registered factory, as a campaign does, and checks
// when the test ends that closing it leaves only the nodes' logs.
func openClusterTarget(t *testing.T, c deploy.Cluster, settings map[string]string, readFrom string) *Cluster {
	t.Helper()
	f, ok := registry.Lookup("postgres")
	if !ok {
		t.Fatal("the postgres target is not registered")
	}
	o := defaultOptions()
	o.Managed = &deploy.Managed{Settings: settings, Cluster: &c}
	o.ReadFrom = readFrom
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	dir := reachableDir(t)
	t0 := time.Now()
	tg, err := f.Open(o, registry.Env{Dir: dir})
	skipWithoutServer(t, err)
	t.Logf("postgres %s cluster of %d nodes open in %v", c.ModeOr(deploy.PostgresModeAsync), c.NodeCount(), time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Error(err)
		}
		_ = filepath.Walk(filepath.Join(dir, "instances"), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && fi.Name() != "server.log" {
				t.Errorf("left behind: %s", p)
			}
			return nil
		})
	})
	return tg.(*Cluster)
}

// nodePool is a pool of the workload user on one node.
func nodePool(t *testing.T, n deploy.Node) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), deploy.PostgresDSN(n.Inst))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// statementCalls are the calls of the workload's statements that start
// with verb (SELECT, UPDATE) on one node, from its pg_stat_statements.
func statementCalls(t *testing.T, n deploy.Node, verb string) int64 {
	t.Helper()
	var calls int64
	err := nodePool(t, n).QueryRow(context.Background(),
		"SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements WHERE query ILIKE $1 AND query LIKE '%usertable%'", verb+" %").Scan(&calls)
	if err != nil {
		t.Fatalf("%s: pg_stat_statements: %v", n.Name, err)
	}
	return calls
}

// YCSB workload B (95% reads) through the engine on a primary with two
// async replicas and read_from: replicas: the reads arrive at the
// replicas, the updates at the primary, without errors; a third replica
// joins and the first leaves while the load goes on, and still no request
// fails.
func TestClusterReadFromReplicasAddRemove(t *testing.T) {
	c := openClusterTarget(t, deploy.Cluster{Nodes: 3}, map[string]string{"shared_buffers": "32MB"}, readReplicas)
	cfg, _ := workload.Preset("b")
	cfg.RecordCount, cfg.FieldCount, cfg.FieldLength = 2000, 4, 50
	cfg.RequestDistribution = workload.DistUniform
	gen := ycsbtest.Populate(t, c, cfg, 500)
	nodes := c.Nodes()
	if len(nodes) != 3 || len(c.ServerPIDs()) < 3*3 {
		t.Fatalf("nodes %+v, server processes %v", nodes, c.ServerPIDs())
	}
	ctx := context.Background()
	times0 := serverTimes(t, c)

	var ops map[workload.OpType]int64
	var kinds map[string]int64
	// The load runs until a second after both changes: on a slow machine
	// the base backup alone took over 3 s, and a fixed 4 s of load had
	// ended before node4 could serve a read.
	loadCtx, endLoad := context.WithCancel(ctx)
	defer endLoad()
	var ran sync.WaitGroup
	ran.Add(1)
	go func() {
		defer ran.Done()
		ops, kinds = runClusterLoad(loadCtx, t, c, gen, 2*time.Minute)
	}()
	time.Sleep(time.Second)
	add, err := c.AddNode(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("add_node under load: %s", add.Detail)
	rm, err := c.RemoveNode(ctx, "node2")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("remove_node under load: %s", rm.Detail)
	time.Sleep(time.Second)
	endLoad()
	ran.Wait()
	reads, updates := ops[workload.Read], ops[workload.Update]
	if len(kinds) > 0 || reads < 1000 || updates == 0 {
		t.Fatalf("errors %v, %d reads, %d updates", kinds, reads, updates)
	}
	if add.Node != "node4" || add.BytesStreamed <= 0 || add.Done.Before(add.Started) {
		t.Fatalf("add_node: %+v", add)
	}
	names := []string{}
	for _, n := range c.Nodes() {
		names = append(names, n.Name+":"+n.Role)
	}
	if strings.Join(names, " ") != "node1:primary node3:replica node4:replica" {
		t.Fatalf("nodes after the changes: %v", names)
	}
	// Reads reached both remaining replicas (node4 once it joined); the
	// primary served no reads, only the updates.
	now := c.Nodes()
	if r3, r4 := statementCalls(t, now[1], "SELECT"), statementCalls(t, now[2], "SELECT"); r3 == 0 || r4 == 0 {
		t.Fatalf("reads on node3 %d, node4 %d", r3, r4)
	}
	if r1, u1 := statementCalls(t, now[0], "SELECT"), statementCalls(t, now[0], "UPDATE"); r1 != 0 || u1 < updates {
		t.Fatalf("primary: %d reads (want 0), %d updates (want %d)", r1, u1, updates)
	}
	// Server-side time sums the nodes: every read and update the engine
	// counted, node2's reads up to its removal included, and at most one
	// more per client (a request in flight when the run ended, which the
	// engine does not count).
	times1 := serverTimes(t, c)
	for op, n := range map[string]int64{"read": reads, "update": updates} {
		if d := times1[op].Calls - times0[op].Calls; d < n || d > n+6 {
			t.Errorf("server-side %s calls grew by %d, the engine counted %d", op, d, n)
		}
	}
}

func serverTimes(t *testing.T, tg target.ServerTimer) map[string]target.ServerTime {
	t.Helper()
	ts, err := tg.ServerTimes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]target.ServerTime{}
	for _, x := range ts {
		out[x.Op] = x
	}
	return out
}

// runClusterLoad drives the target closed-loop with 6 clients for measure
// and returns the requests done per operation and the errors by kind.
func runClusterLoad(ctx context.Context, t *testing.T, tg target.Target, gen *workload.Generator, measure time.Duration) (map[workload.OpType]int64, map[string]int64) {
	cfg := load.Config{Model: "closed", Clients: 6, Timeout: 5 * time.Second, Measure: measure, Interval: 500 * time.Millisecond,
		Seed: 1, Ops: []workload.OpType{workload.Read, workload.Update}}
	var mu sync.Mutex
	kinds := map[string]int64{}
	ops := map[workload.OpType]int64{}
	_, err := load.Run(ctx, cfg, tg, gen, func(tk load.Tick) error {
		mu.Lock()
		defer mu.Unlock()
		for _, st := range tk.Stats {
			ops[st.Op] += st.Count + st.Errors
			for k, n := range st.ErrorKinds {
				kinds[k] += n
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	return ops, kinds
}

// In sync mode with synchronous_commit remote_apply, a record the primary
// acknowledged is found at once by a read sent to the replica.
func TestClusterSyncRemoteApplyReadsOwnWrites(t *testing.T) {
	c := openClusterTarget(t, deploy.Cluster{Nodes: 2, Mode: deploy.PostgresModeSync}, map[string]string{"synchronous_commit": "remote_apply"}, readReplicas)
	cfg := ycsb(10)
	gen := ycsbtest.Populate(t, c, cfg, 10)
	ctx := context.Background()
	cl, err := c.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	op := gen.NewOp()
	for i := int64(100); i < 150; i++ {
		gen.Populate(i, op)
		op.Type = workload.Insert
		if err := cl.Do(ctx, op); err != nil {
			t.Fatal(err)
		}
		op.Type, op.Field = workload.Read, -1
		if err := cl.Do(ctx, op); err != nil {
			t.Fatalf("read of record %d right after its insert: %v", i, err)
		}
	}
	replica := c.Nodes()[1]
	if n := statementCalls(t, replica, "SELECT"); n < 50 {
		t.Fatalf("the replica served %d reads, want 50", n)
	}
	if _, err := c.RemoveNode(ctx, "node1"); err == nil || !strings.Contains(err.Error(), "primary") {
		t.Fatalf("removing the primary: %v", err)
	}
	if err := c.pc.WaitReplayed(ctx, time.Second); err != nil {
		t.Fatalf("a sync replica with remote_apply is behind: %v", err)
	}
}

func TestClusterValidate(t *testing.T) {
	for want, edit := range map[string]func(*Options){
		"read_from: replicas needs replicas":    func(o *Options) { o.ReadFrom = readReplicas },
		`read_from: "all" is not a valid value`: func(o *Options) { o.ReadFrom = "all" },
		"managed.settings.wal_level: Headroom sets": func(o *Options) {
			o.Managed = &deploy.Managed{Settings: map[string]string{"wal_level": "minimal"}, Cluster: &deploy.Cluster{}}
		},
		"managed.port: a cluster's nodes take free":    func(o *Options) { o.Managed = &deploy.Managed{Port: 5555, Cluster: &deploy.Cluster{}} },
		"mode sync needs at least 2 nodes (a primary ": func(o *Options) { o.Managed = &deploy.Managed{Cluster: &deploy.Cluster{Nodes: 1, Mode: "sync"}} },
	} {
		o := defaultOptions()
		edit(o)
		if err := validate(o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	o := defaultOptions()
	o.ReadFrom, o.Managed = readAny, &deploy.Managed{Cluster: &deploy.Cluster{Nodes: 2}}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
}

// Reset policies on a cluster: restore replaces the primary's database,
// which the replicas replay (dropping their sessions on the old one), and
// the reads that go to them afterwards find the snapshot's records;
// restart restarts the primary, and the replicas keep streaming from it.
func TestClusterRestoreAndRestart(t *testing.T) {
	c := openClusterTarget(t, deploy.Cluster{Nodes: 2}, nil, readReplicas)
	cfg := ycsb(200)
	gen := ycsbtest.Populate(t, c, cfg, 100)
	ctx := context.Background()
	if err := c.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	readAll := func(what string) {
		t.Helper()
		cl, err := c.NewClient(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		op := gen.NewOp()
		for i := int64(0); i < cfg.RecordCount; i++ {
			gen.Populate(i, op)
			op.Type, op.Field = workload.Read, -1
			if err := cl.Do(ctx, op); err != nil {
				t.Fatalf("%s: read of record %d: %v", what, i, err)
			}
		}
	}
	readAll("before the restore")
	before := statementCalls(t, c.Nodes()[1], "SELECT")
	if err := c.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	readAll("after the restore")
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	readAll("after the restart")
	if after := statementCalls(t, c.Nodes()[1], "SELECT"); after < before+2*cfg.RecordCount {
		t.Fatalf("the replica served %d reads after the restore, want %d", after-before, 2*cfg.RecordCount)
	}
	if lags, err := c.pc.ReplayLag(ctx); err != nil || len(lags) != 1 || lags[0].State != "streaming" {
		t.Fatalf("after the restart: %+v, %v", lags, err)
	}
}
