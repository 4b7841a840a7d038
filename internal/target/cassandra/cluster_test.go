package cassandra

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/workload"
)

// ringStatus waits until nodetool status reads want, for up to a minute
// (gossip takes a few seconds to tell every node).
func ringStatus(t *testing.T, m *Managed, want string) {
	t.Helper()
	var st map[string]string
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if st, err = m.cluster.Status(context.Background()); err == nil && fmt.Sprint(st) == want {
			return
		}
	}
	t.Fatalf("ring status %v (%v), want %s", st, err, want)
}

// copiesOf is the replication factor in a keyspace's replication map
// (SimpleStrategy's replication_factor or the one data centre's count).
func copiesOf(repl map[string]string) string {
	for k, v := range repl {
		if k != "class" {
			return v
		}
	}
	return ""
}

// coordinated is how many requests on the table the node at addr
// coordinated so far (reads and writes), from its own system_views.
func coordinated(t *testing.T, m *Managed, addr string) int64 {
	t.Helper()
	var id string
	for _, h := range m.sess.GetHosts() {
		if net.JoinHostPort(h.ConnectAddress().String(), strconv.Itoa(h.Port())) == addr {
			id = h.HostID()
		}
	}
	if id == "" {
		t.Fatalf("the driver does not know the node at %s", addr)
	}
	var total int64
	for _, view := range []string{"coordinator_read_latency", "coordinator_write_latency"} {
		var n int64
		err := m.sess.Query("SELECT count FROM system_views."+view+" WHERE keyspace_name = ? AND table_name = ?", m.opts.Keyspace, m.opts.Table).
			SetHostID(id).Consistency(gocql.One).Scan(&n)
		if err != nil && err != gocql.ErrNotFound {
			t.Fatalf("%s on %s: %v", view, addr, err)
		}
		total += n
	}
	return total
}

// A three-node ring with replication factor 3 at QUORUM runs YCSB without
// errors; a fourth node joins (streaming data) and the driver sends it
// requests, then it leaves (stopped, its data deleted) and the driver
// stops using it; a removal below the keyspace's copies is refused; with
// one node stopped, requests at ALL fail as unavailable while QUORUM ones
// go on. One cluster serves every check, the deploy layer's ring checks
// too (starting a ring is the expensive part).
func TestThreeNodeRing(t *testing.T) {
	m := openManagedCluster(t, 3, nil)
	ctx := context.Background()
	w := ycsb(t, "a", 3000)
	g, rate := populate(t, m, w)
	if rf := m.ReplicationFactor(); rf != 3 {
		t.Fatalf("replication factor %d, want min(3, nodes) = 3", rf)
	}
	if up := m.hostAddrs(true); len(up) != 3 {
		t.Fatalf("the driver routes to %v, want the 3 nodes", up)
	}
	ringStatus(t, m, "map[node1:UN node2:UN node3:UN]")
	// system_auth is replicated to all three, so any node logs a client in.
	for _, h := range m.sess.GetHosts() {
		var repl map[string]string
		if err := m.sess.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'system_auth'").
			SetHostID(h.HostID()).Consistency(gocql.One).Scan(&repl); err != nil || copiesOf(repl) != "3" {
			t.Fatalf("system_auth replication on %s: %v (%v), want 3 copies", h.ConnectAddress(), repl, err)
		}
	}
	res, kinds := runLoad(t, m, g, w, 16, 3*time.Second)
	if res.Measured.Completed == 0 || res.Measured.Errors != 0 {
		t.Fatalf("3 nodes at QUORUM: completed %d, errors %d %v", res.Measured.Completed, res.Measured.Errors, kinds)
	}
	t.Logf("3 nodes, rf 3, QUORUM: populate %.0f records/s; workload a %.0f ops/s from 16 clients", rate, res.Throughput)

	// Scale out: the new node serves requests the driver sends it.
	start := time.Now()
	ch, err := m.AddNode(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("add_node: %s in %.1f s (%s)", ch.Node, time.Since(start).Seconds(), ch.Detail)
	if ch.Action != "add_node" || ch.Node != "node4" || ch.Host != "" || ch.Error != "" ||
		ch.Started.Before(ch.Requested) || ch.Done.Before(ch.Started) || ch.BytesStreamed <= 0 {
		t.Errorf("add_node change %+v: want node4, ordered times, bytes streamed > 0", ch)
	}
	ringStatus(t, m, "map[node1:UN node2:UN node3:UN node4:UN]")
	var added string
	for _, n := range m.Nodes() {
		if n.Name == ch.Node {
			added = n.Inst.Addr()
		}
	}
	if len(m.Nodes()) != 4 || added == "" {
		t.Fatalf("after add_node the nodes are %v", m.Nodes())
	}
	before := coordinated(t, m, added)
	res, kinds = runLoad(t, m, g, w, 16, 2*time.Second)
	if res.Measured.Errors != 0 {
		t.Fatalf("4 nodes: errors %d %v", res.Measured.Errors, kinds)
	}
	if n := coordinated(t, m, added) - before; n < res.Measured.Completed/10 {
		t.Fatalf("the new node coordinated %d of %d requests; token-aware routing should give it about a quarter", n, res.Measured.Completed)
	} else {
		t.Logf("the new node coordinated %d of %d requests", n, res.Measured.Completed)
	}

	// Scale in: the driver stops routing to the node that left, which is
	// stopped and its data deleted (its log stays).
	var leaving *deploy.Instance
	for _, n := range m.Nodes() {
		if n.Name == ch.Node {
			leaving = n.Inst
		}
	}
	start = time.Now()
	if ch, err = m.RemoveNode(ctx, ch.Node); err != nil {
		t.Fatal(err)
	}
	t.Logf("remove_node: %s in %.1f s (%s)", ch.Node, time.Since(start).Seconds(), ch.Detail)
	// Cassandra 5.0 keeps no byte counts of decommission streams, on
	// either side: the change says unknown (-1) rather than 0.
	if ch.Action != "remove_node" || ch.Node != "node4" || ch.Error != "" || ch.Done.Before(ch.Started) || ch.BytesStreamed == 0 || ch.BytesStreamed < -1 {
		t.Errorf("remove_node change %+v: want node4, ordered times, bytes streamed unknown (-1) or > 0", ch)
	}
	if leaving.Running() {
		t.Error("node4 still runs after RemoveNode")
	}
	if _, err := os.Stat(leaving.DataDir()); !os.IsNotExist(err) {
		t.Errorf("node4's data is still there: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(leaving.Dir)); len(entries) != 4 {
		t.Errorf("the cluster directory holds %d node directories, want 4 (node4's keeps its log)", len(entries))
	}
	ringStatus(t, m, "map[node1:UN node2:UN node3:UN]")
	// Three nodes left and the workload's keyspace keeps three copies:
	// Headroom refuses to go below that, naming the keyspace.
	if _, err := m.RemoveNode(ctx, "node1"); err == nil ||
		!strings.Contains(err.Error(), "keyspace "+m.opts.Keyspace+" keeps 3 copies of each row and 2 nodes would be left") {
		t.Errorf("removing one of three nodes with the keyspace at 3 copies: %v", err)
	}
	for _, a := range m.hostAddrs(false) {
		if a == added {
			t.Fatalf("the driver still lists the removed node %s", added)
		}
	}
	res, kinds = runLoad(t, m, g, w, 16, 2*time.Second)
	if res.Measured.Completed == 0 || res.Measured.Errors != 0 {
		t.Fatalf("back to 3 nodes: completed %d, errors %d %v", res.Measured.Completed, res.Measured.Errors, kinds)
	}

	// One node down: ALL cannot be met, QUORUM can.
	all := connectTo(t, m, func(o *Options) { o.ReadConsistency, o.WriteConsistency = "ALL", "ALL" })
	if err := all.Prepare(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	allClient, _ := all.NewClient(ctx)
	quorumClient, _ := m.NewClient(ctx)
	stopped := m.Nodes()[2]
	if err := stopped.Inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	o := g.NewOp()
	deadline := time.Now().Add(45 * time.Second)
	seen := map[string]int{}
	for {
		g.Next(o)
		o.Type = workload.Update
		kind := kindOfErr(allClient.Do(ctx, o))
		seen[kind]++
		if kind == KindUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("updates at ALL with %s stopped never failed as unavailable: %v", stopped.Name, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("updates at ALL after stopping %s: %v", stopped.Name, seen)
	for range 20 {
		g.Next(o)
		if err := quorumClient.Do(ctx, o); err != nil && kindOfErr(err) != "not_found" {
			t.Fatalf("%v at QUORUM with one of three replicas down: %v", o.Type, err)
		}
	}

	// A start event brings the node back, and ALL can be met again.
	start = time.Now()
	if err := m.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s started again in %.1f s", stopped.Name, time.Since(start).Seconds())
	deadline = time.Now().Add(30 * time.Second)
	for {
		g.Next(o)
		o.Type = workload.Update
		err := allClient.Do(ctx, o)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("updates at ALL after %s came back: %v", stopped.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
