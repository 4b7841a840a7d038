package cassandra

import (
	"context"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func op(typ workload.OpType, key string, field int, vals ...string) *workload.Op {
	o := &workload.Op{Type: typ, Key: []byte(key), Field: field, Values: make([][]byte, 4)}
	for i, v := range vals {
		o.Values[i] = []byte(v)
	}
	if field >= 0 && len(vals) == 1 {
		o.Values = make([][]byte, 4)
		o.Values[field] = []byte(vals[0])
	}
	return o
}

// row reads key's fields at ALL through the admin session ("" for a
// missing row).
func row(t *testing.T, tg *Target, key string) []string {
	t.Helper()
	var f [4]string
	err := tg.admin.Query("SELECT field0, field1, field2, field3 FROM "+tg.opts.Keyspace+"."+tg.opts.Table+" WHERE y_id = ?", key).
		Consistency(gocql.All).Scan(&f[0], &f[1], &f[2], &f[3])
	if err == gocql.ErrNotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return f[:]
}

// Every YCSB operation does what the package comment says, on the shared
// node.
func TestEveryOperation(t *testing.T) {
	m := sharedNode(t)
	ctx := context.Background()
	w := ycsb(t, "a", 0)
	if err := m.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	if rf := m.ReplicationFactor(); rf != 1 {
		t.Fatalf("a single node's keyspace has replication factor %d, want 1", rf)
	}
	c, err := m.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	do := func(o *workload.Op) {
		t.Helper()
		if err := c.Do(ctx, o); err != nil {
			t.Fatalf("%v %s: %v", o.Type, o.Key, err)
		}
	}
	for _, k := range []string{"user1", "user2", "user3", "user4", "user5"} {
		do(op(workload.Insert, k, -1, k+"-0", k+"-1", k+"-2", k+"-3"))
	}
	if got := strings.Join(row(t, m.Target, "user3"), ","); got != "user3-0,user3-1,user3-2,user3-3" {
		t.Fatalf("inserted row is %q", got)
	}
	do(op(workload.Read, "user1", -1))
	do(op(workload.Read, "user1", 2))
	cl := c.(*client)
	if got := string(cl.cols[2].b); got != "user1-2" {
		t.Fatalf("read of field2 gave %q", got)
	}
	for _, f := range []int{-1, 1} {
		if err := c.Do(ctx, op(workload.Read, "nobody", f)); err != target.ErrNotFound {
			t.Fatalf("read of a missing key (field %d): %v, want ErrNotFound", f, err)
		}
	}
	do(op(workload.Update, "user2", 1, "new-1"))
	if got := strings.Join(row(t, m.Target, "user2"), ","); got != "user2-0,new-1,user2-2,user2-3" {
		t.Fatalf("after updating field1: %q", got)
	}
	do(op(workload.Update, "user2", -1, "a", "b", "c", "d"))
	if got := strings.Join(row(t, m.Target, "user2"), ","); got != "a,b,c,d" {
		t.Fatalf("after updating every field: %q", got)
	}
	do(op(workload.ReadModifyWrite, "user4", 0, "rmw"))
	if got := row(t, m.Target, "user4")[0]; got != "rmw" {
		t.Fatalf("after RMW field0 is %q", got)
	}
	if err := c.Do(ctx, op(workload.ReadModifyWrite, "nobody", 0, "x")); err != target.ErrNotFound {
		t.Fatalf("RMW of a missing key: %v, want ErrNotFound", err)
	}
	if r := row(t, m.Target, "nobody"); r != nil {
		t.Fatalf("a failed RMW wrote %v", r)
	}
	// A scan from the first key in token order with LIMIT 3 returns 3 rows;
	// from the last key it returns 1.
	var byToken []string
	iter := m.admin.Query("SELECT y_id FROM " + m.opts.Keyspace + "." + m.opts.Table).Iter()
	for k := ""; iter.Scan(&k); {
		byToken = append(byToken, k)
	}
	if err := iter.Close(); err != nil || len(byToken) != 5 {
		t.Fatalf("listing keys: %v %v", byToken, err)
	}
	for _, tc := range []struct {
		key  string
		want int
	}{{byToken[0], 3}, {byToken[4], 1}} {
		for _, f := range []int{-1, 3} {
			o := &workload.Op{Type: workload.Scan, Key: []byte(tc.key), Field: f, ScanLength: 3}
			do(o)
			if n := cl.rows; n != tc.want {
				t.Fatalf("scan of 3 from %s (field %d) returned %d rows, want %d", tc.key, f, n, tc.want)
			}
		}
	}
}

// YCSB workloads a (reads and updates) and c (reads) run through the load
// engine on a populated node without errors, and a population loads every
// record.
func TestYCSBThroughEngine(t *testing.T) {
	m := sharedNode(t)
	for _, preset := range []string{"a", "c"} {
		w := ycsb(t, preset, 2000)
		g, rate := populate(t, m, w)
		var n int64
		if err := m.admin.Query("SELECT COUNT(*) FROM " + m.opts.Keyspace + "." + m.opts.Table).Consistency(gocql.All).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != w.RecordCount {
			t.Fatalf("populated %d records, want %d", n, w.RecordCount)
		}
		res, kinds := runLoad(t, m, g, w, 8, 2*time.Second)
		if res.Measured.Completed == 0 || res.Measured.Errors != 0 {
			t.Fatalf("workload %s: completed %d, errors %d %v", preset, res.Measured.Completed, res.Measured.Errors, kinds)
		}
		t.Logf("workload %s: populate %.0f records/s; %.0f ops/s from 8 clients", preset, rate, res.Throughput)
	}
}

// Prepare without fresh keeps the data; with fresh it empties the table.
// A keyspace left at another replication factor is refused unless fresh.
func TestPrepareFreshAndReplication(t *testing.T) {
	m := sharedNode(t)
	ctx := context.Background()
	w := ycsb(t, "c", 10)
	populate(t, m, w)
	if err := m.Prepare(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if row(t, m.Target, "user6284781860667377211") == nil {
		t.Fatal("Prepare without fresh emptied the table")
	}
	if err := m.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := m.admin.Query("SELECT COUNT(*) FROM " + m.opts.Keyspace + "." + m.opts.Table).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after a fresh Prepare the table has %d rows (%v)", n, err)
	}
	if err := m.ddl(ctx, "ALTER KEYSPACE "+m.opts.Keyspace+" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}"); err != nil {
		t.Fatal(err)
	}
	err := m.Prepare(ctx, w, false)
	if err == nil || !strings.HasPrefix(err.Error(), "keyspace: headroom exists with replication") {
		t.Fatalf("Prepare on a keyspace of another replication factor: %v", err)
	}
	if err := m.Prepare(ctx, w, true); err != nil {
		t.Fatalf("a fresh Prepare should put the replication factor back: %v", err)
	}
}

// An existing cluster: the options' hosts, user and password_env; a wrong
// password and a consistency level the replication factor cannot meet are
// refused with one sentence each.
func TestExistingClusterOptions(t *testing.T) {
	m := sharedNode(t)
	ctx := context.Background()
	tg := connectTo(t, m, func(o *Options) { o.Keyspace = "other" })
	w := ycsb(t, "c", 100)
	g, _ := populate(t, tg, w)
	if tg.ReplicationFactor() != 1 {
		t.Fatalf("replication factor on one node: %d", tg.ReplicationFactor())
	}
	c, _ := tg.NewClient(ctx)
	o := g.NewOp()
	g.Next(o)
	if err := c.Do(ctx, o); err != nil {
		t.Fatal(err)
	}
	if tg.Address() != m.cluster.ContactPoints()[0] {
		t.Fatalf("address %s, want %s", tg.Address(), m.cluster.ContactPoints()[0])
	}

	two := connectTo(t, m, func(o *Options) { o.ReadConsistency = "two" })
	err := two.Prepare(ctx, w, true)
	if err == nil || !strings.HasPrefix(err.Error(), "read_consistency: TWO waits for 2 replicas but the keyspace keeps 1") {
		t.Fatalf("TWO on one replica: %v", err)
	}
	rf2 := connectTo(t, m, func(o *Options) { o.ReplicationFactor = 2 })
	err = rf2.Prepare(ctx, w, true)
	if err == nil || !strings.HasPrefix(err.Error(), "replication_factor: 2 copies need 2 nodes") {
		t.Fatalf("replication factor 2 on one node: %v", err)
	}

	t.Setenv("HEADROOM_TEST_WRONG", "not-the-password")
	bad := defaultOptions()
	bad.Hosts, bad.User, bad.PasswordEnv = m.cluster.ContactPoints(), m.cluster.User(), "HEADROOM_TEST_WRONG"
	_, err = Open(*bad, registry.Env{})
	if err == nil || !strings.Contains(err.Error(), "rejected the user name or password") || strings.Contains(err.Error(), "not-the-password") {
		t.Fatalf("wrong password: %v", err)
	}
	anon := defaultOptions()
	anon.Hosts = m.cluster.ContactPoints()
	_, err = Open(*anon, registry.Env{})
	if err == nil || !strings.Contains(err.Error(), "requires a login") {
		t.Fatalf("no login: %v", err)
	}
}

// The managed node's process is known for monitoring, and it is ephemeral.
func TestManagedProcesses(t *testing.T) {
	m := sharedNode(t)
	if pids := m.ServerPIDs(); len(pids) != 1 || pids[0] <= 0 {
		t.Fatalf("server PIDs %v", pids)
	}
	if !m.Ephemeral() {
		t.Fatal("a managed cluster is ephemeral")
	}
	if n := m.Nodes(); len(n) != 1 || n[0].Name != "node1" {
		t.Fatalf("nodes %v", n)
	}
}

// A connection refused by every contact point is a connection error that
// says what to check.
func TestConnectionRefused(t *testing.T) {
	o := defaultOptions()
	o.Hosts = []string{"127.0.0.1:1"}
	o.ConnectTimeout.Duration = time.Second
	_, err := Open(*o, registry.Env{})
	if err == nil || !strings.Contains(err.Error(), "cannot connect to 127.0.0.1:1") || !strings.Contains(err.Error(), "is Cassandra running") {
		t.Fatalf("refused: %v", err)
	}
}

// protocol_version reaches the node: its clients table lists the
// connections of a target held to version 4 beside the version 5 the
// shared node's own target negotiated.
func TestProtocolVersion(t *testing.T) {
	m := sharedNode(t)
	v4 := connectTo(t, m, func(o *Options) { o.ProtocolVersion = 4 })
	versions := map[int]int{}
	it := v4.admin.Query("SELECT protocol_version FROM system_views.clients").Iter()
	var v int
	for it.Scan(&v) {
		versions[v]++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if versions[4] == 0 || versions[5] == 0 {
		t.Fatalf("connections per protocol version %v, want some at 4 (this target) and some at 5 (the negotiated default)", versions)
	}
}
