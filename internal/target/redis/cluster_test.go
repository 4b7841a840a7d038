package redistarget

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
	"github.com/headroom-dev/headroom/internal/workload"
)

// poolStats is the workload pool's statistics of a one-server target.
func poolStats(t *Target) *redis.PoolStats { return t.rdb.(*redis.Client).PoolStats() }

// openCluster opens the target with a managed cluster on loopback.
func openClusterTarget(t *testing.T, c deploy.Cluster, edit func(*Options)) *Cluster {
	t.Helper()
	needRedis(t)
	o := defaultOptions()
	o.Managed = &deploy.Managed{Cluster: &c}
	if edit != nil {
		edit(o)
	}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	tg, err := Open(*o, registry.Env{Dir: testDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s of %d nodes open in %v", c.ModeOr(deploy.RedisModeReplicas), c.NodeCount(), time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Error(err)
		}
	})
	return tg.(*Cluster)
}

// nodeClient is a connection to one node, closed when the test ends.
func nodeClient(t *testing.T, c *Cluster, n deploy.Node) *redis.Client {
	t.Helper()
	r := redis.NewClient(clientOptions(c.opts, n.Inst.Addr(), c.rc.Password(), nil))
	t.Cleanup(func() { r.Close() })
	return r
}

// ycsbA is workload A (50% reads, 50% updates) over small records.
func ycsbA(records int64) workload.Config {
	cfg, _ := workload.Preset("a")
	cfg.RecordCount = records
	cfg.FieldCount, cfg.FieldLength = 4, 25
	cfg.RequestDistribution = workload.DistUniform
	return cfg
}

// runLoad drives the target closed-loop for measure and returns the result
// with the errors by kind.
func runLoad(t *testing.T, tg target.Target, gen *workload.Generator, measure time.Duration) (load.Result, map[string]int64) {
	t.Helper()
	cfg := load.Config{Model: "closed", Clients: 8, Timeout: 5 * time.Second, Measure: measure, Interval: 500 * time.Millisecond,
		Seed: 1, Ops: []workload.OpType{workload.Read, workload.Update}}
	var mu sync.Mutex
	kinds := map[string]int64{}
	res, err := load.Run(context.Background(), cfg, tg, gen, func(tk load.Tick) error {
		mu.Lock()
		defer mu.Unlock()
		for _, st := range tk.Stats {
			for k, n := range st.ErrorKinds {
				kinds[k] += n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, kinds
}

// A Redis Cluster of three primaries runs YCSB A through the engine with
// no errors and the keys on all three; then a fourth primary joins and a
// first one leaves while the load goes on, every request still succeeds,
// and every record is still there.
func TestRedisClusterYCSBAndScaling(t *testing.T) {
	c := openClusterTarget(t, deploy.Cluster{Nodes: 3, Mode: deploy.RedisModeCluster}, nil)
	ctx := context.Background()
	const records = 3000
	gen := ycsbtest.Populate(t, c, ycsbA(records), 100)

	res, kinds := runLoad(t, c, gen, time.Second)
	t.Logf("YCSB A on 3 primaries: %.0f req/s, %d errors %v", res.Throughput, res.Measured.Errors, kinds)
	if res.Measured.Completed == 0 || res.Measured.Errors != 0 || res.Warmup.Errors != 0 {
		t.Fatalf("completed %d, errors %d %v", res.Measured.Completed, res.Measured.Errors, kinds)
	}
	sizes := func() map[string]int64 {
		out := map[string]int64{}
		for _, n := range c.Nodes() {
			out[n.Name] = nodeClient(t, c, n).DBSize(ctx).Val()
		}
		return out
	}
	for name, n := range sizes() {
		// A third of the records each, give or take; the scan index is
		// one more key on one of them.
		if n < records/4 {
			t.Errorf("%s holds %d of %d records", name, n, records)
		}
	}
	st, err := c.ServerTimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || st[0].Calls == 0 || st[1].Calls == 0 {
		t.Fatalf("server times %+v, want read and update", st)
	}
	if pids := c.ServerPIDs(); len(pids) != 3 {
		t.Fatalf("ServerPIDs = %v", pids)
	}

	// Scale out and in under load.
	type change struct {
		ch  deploy.NodeChange
		err error
	}
	changes := make(chan change, 2)
	go func() {
		time.Sleep(500 * time.Millisecond)
		ch, err := c.AddNode(ctx, "")
		changes <- change{ch, err}
		ch, err = c.RemoveNode(ctx, "node1")
		changes <- change{ch, err}
	}()
	res, kinds = runLoad(t, c, gen, 7*time.Second)
	for range 2 {
		x := <-changes
		if x.err != nil {
			t.Fatal(x.err)
		}
		t.Logf("%s %s: serving after %v, %d bytes: %s", x.ch.Action, x.ch.Node, x.ch.Done.Sub(x.ch.Requested).Round(time.Millisecond), x.ch.BytesStreamed, x.ch.Detail)
	}
	t.Logf("YCSB A through add_node and remove_node: %.0f req/s, %d errors %v", res.Throughput, res.Measured.Errors, kinds)
	if res.Measured.Errors+res.Warmup.Errors != 0 {
		t.Errorf("%d requests failed while the slots moved: %v (first: %s)", res.Measured.Errors+res.Warmup.Errors, kinds, res.FirstError)
	}
	var names []string
	for _, n := range c.Nodes() {
		names = append(names, n.Name)
	}
	if got := strings.Join(names, " "); got != "node2 node3 node4" {
		t.Fatalf("nodes after the changes: %s", got)
	}
	var total int64
	for name, n := range sizes() {
		if n < records/4 {
			t.Errorf("%s holds %d of %d records after the reshards", name, n, records)
		}
		total += n
	}
	if total != records+1 {
		t.Errorf("the nodes hold %d keys, want %d records and the scan index", total, records+1)
	}
	// Every record is readable through the cluster client.
	cl, err := c.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	op := gen.NewOp()
	for i := range int64(records) {
		gen.Populate(i, op)
		if err := cl.Do(ctx, &workload.Op{Type: workload.Read, Key: op.Key, Field: -1}); err != nil {
			t.Fatalf("record %d (%s): %v", i, op.Key, err)
		}
	}
	if st2, err := c.ServerTimes(ctx); err != nil || st2[0].Calls < st[0].Calls {
		t.Fatalf("server times went back after a node left: %+v -> %+v, %v", st, st2, err)
	}

	// The other operations through the cluster client: an insert (its
	// record and the scan index are on different nodes), a scan whose
	// records are spread over the nodes, reads of one field and of a
	// missing key.
	cl2 := prepared(t, c.Target, testConfig(allOps), false)
	do(t, cl2, newOp(workload.Insert, "extra1", -1, "x0", "x1", "x2"))
	do(t, cl2, newOp(workload.Read, "extra1", 1))
	do(t, cl2, &workload.Op{Type: workload.Scan, Key: []byte("extra1"), Field: -1, ScanLength: 50})
	do(t, cl2, &workload.Op{Type: workload.Scan, Key: []byte("extra1"), Field: 2, ScanLength: 50})
	do(t, cl2, newOp(workload.ReadModifyWrite, "extra1", 0, "y0"))
	for _, field := range []int{-1, 1} {
		if err := cl2.Do(ctx, newOp(workload.Read, "nobody", field)); !errors.Is(err, target.ErrNotFound) {
			t.Fatalf("read (field %d) of a missing key: %v, want ErrNotFound", field, err)
		}
	}
	if v := c.cc.HGet(ctx, "extra1", "field0").Val(); v != "y0" {
		t.Fatalf("extra1.field0 = %q after read-modify-write", v)
	}
	if n := c.cc.ZCard(ctx, "_indices").Val(); n != records+1 {
		t.Fatalf("the scan index holds %d keys, want %d", n, records+1)
	}
}

// Replicas mode with read_from: replicas: a write goes to the primary and
// appears on the replica, where the read is served; a removed primary is
// refused; a new replica takes reads.
func TestRedisReplicasReadFromReplicas(t *testing.T) {
	c := openClusterTarget(t, deploy.Cluster{Nodes: 2}, func(o *Options) { o.ReadFrom = readReplicas })
	ctx := context.Background()
	cl := prepared(t, c.Target, testConfig(map[workload.OpType]float64{workload.Read: 1, workload.Insert: 1}), true)
	do(t, cl, newOp(workload.Insert, "user1", -1, "a", "b", "c"))
	if n, err := c.admin.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on the primary: %d, %v", n, err)
	}
	nodes := c.Nodes()
	if v := nodeClient(t, c, nodes[1]).HGet(ctx, "user1", "field1").Val(); v != "b" {
		t.Fatalf("the replica has user1.field1 = %q", v)
	}
	replicaReads := func(n deploy.Node) int64 {
		st, err := c.nodeStats(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return st["hgetall"].calls
	}
	before := replicaReads(nodes[1])
	do(t, cl, newOp(workload.Read, "user1", -1))
	if got := replicaReads(nodes[1]); got != before+1 {
		t.Fatalf("the replica served %d reads, want %d", got-before, 1)
	}
	if pids := c.ServerPIDs(); len(pids) != 2 {
		t.Fatalf("ServerPIDs = %v", pids)
	}

	ch, err := c.AddNode(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("add_node: %s", ch.Detail)
	added := c.Nodes()[2]
	for range 4 {
		do(t, cl, newOp(workload.Read, "user1", -1))
	}
	if n := replicaReads(added); n == 0 {
		t.Fatalf("the added replica %s served no reads", added.Name)
	}
	if _, err := c.RemoveNode(ctx, "node1"); err == nil || !strings.Contains(err.Error(), "primary") {
		t.Fatalf("removing the primary: %v", err)
	}
	if _, err := c.RemoveNode(ctx, "node2"); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		do(t, cl, newOp(workload.Read, "user1", -1))
	}
	if err := cl.Do(ctx, newOp(workload.Read, "user404", -1)); !errors.Is(err, target.ErrNotFound) {
		t.Fatalf("read of a missing key from a replica: %v", err)
	}
}

func TestClusterOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.ReadFrom = "nearest" }, "read_from: \"nearest\" is not a valid value"},
		{func(o *Options) { o.ReadFrom = readReplicas }, "read_from: replicas needs a managed cluster"},
		{func(o *Options) {
			o.Managed = &deploy.Managed{Cluster: &deploy.Cluster{Mode: deploy.RedisModeCluster}}
			o.ReadFrom = readReplicas
		}, "read_from: replicas needs a managed cluster"},
		{func(o *Options) {
			o.Managed = &deploy.Managed{Cluster: &deploy.Cluster{Mode: deploy.RedisModeCluster}}
			o.DB = 2
		}, "db: Redis Cluster has database 0 only"},
		{func(o *Options) { o.Managed = &deploy.Managed{Port: 7000, Cluster: &deploy.Cluster{}} }, "managed.port: a cluster's nodes"},
		{func(o *Options) {
			o.Managed = &deploy.Managed{Cluster: &deploy.Cluster{Nodes: 3, Mode: deploy.RedisModeCluster, ReplicationFactor: 2}}
		}, "managed.cluster.nodes: 3 nodes cannot be split"},
	} {
		o := defaultOptions()
		tc.edit(o)
		if err := validate(o); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
}
