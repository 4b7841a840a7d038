package apptier

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/apptier"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
)

func TestValidateDBCluster(t *testing.T) {
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.DB.Engine = "mariadb"; o.DB.Cluster = &deploy.Cluster{Nodes: 2} }, "db.cluster: engine mariadb runs one server here (replicas are PostgreSQL's streaming replicas); remove db.cluster, or use engine: postgres"},
		{func(o *Options) { o.DB.Host = "db1"; o.DB.Cluster = &deploy.Cluster{Hosts: "db"} }, "db.host: with db.cluster the database's nodes are placed by db.cluster.hosts"},
		{func(o *Options) { o.DB.Port = 5432; o.DB.Cluster = &deploy.Cluster{} }, "db.port"},
		{func(o *Options) { o.DB.Reads = "primary" }, "db.reads: reads go to the replicas of db.cluster, and there is none"},
		{func(o *Options) { o.DB.Cluster = &deploy.Cluster{}; o.DB.Reads = "any" }, `db.reads: "any" is not a valid value`},
		{func(o *Options) { o.DB.Cluster = &deploy.Cluster{Nodes: 17} }, "db.cluster.nodes: 17 is outside 1..16"},
		{func(o *Options) { o.DB.Cluster = &deploy.Cluster{Mode: "ring"} }, `db.cluster.mode: "ring" is not a postgres cluster mode`},
		{func(o *Options) { o.DB.Cluster = &deploy.Cluster{Nodes: 1, Mode: "sync"} }, "db.cluster.nodes: mode sync needs at least 2 nodes"},
		{func(o *Options) {
			o.DB.Cluster = &deploy.Cluster{}
			o.DB.Settings = map[string]string{"wal_level": "logical"}
		}, "db.settings.wal_level: Headroom sets this itself in a cluster"},
		{func(o *Options) { o.DB.Cluster = &deploy.Cluster{Hosts: "db"}; o.App.Hosts = []string{"app1", "db2"} }, `app.hosts[1]: "db2" is a host of the database tier`},
		{func(o *Options) { o.DB.Cluster = &deploy.Cluster{}; o.App.Prefix = "db" }, `app.prefix: "db" and db.cluster.hosts "db" name the same lab hosts`},
	} {
		o := defaultOptions()
		c.edit(o)
		if err := validate(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	o := defaultOptions()
	o.DB.Cluster, o.DB.Reads, o.App.Prefix = &deploy.Cluster{Nodes: 1, Hosts: "db"}, "replicas", "app"
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{"db": true, "db2": true, "db10": true, "dbx": false, "db-2": false, "app2": false, "d": false} {
		if got := o.DB.inDBTier(host); got != want {
			t.Errorf("inDBTier(%q) = %v", host, got)
		}
	}
}

// readCounts asks application server a how many reads each replica and
// the primary answered (GET /admin/replicas).
func readCounts(t *testing.T, a *appServer) map[string]int {
	t.Helper()
	resp, err := http.Get(a.base + apptier.PathReplicas)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		var n int
		fmt.Sscan(v, &n)
		out[k] = n
	}
	return out
}

// On this machine, a primary and a replica behind one application server:
// reads go to the replica, writes to the primary; removing the replica
// under load puts the reads back on the primary without a failed
// request; the primary cannot be removed; Close removes everything.
func TestLocalClusterReadsFromReplica(t *testing.T) {
	o := defaultOptions()
	o.DB.Cluster = &deploy.Cluster{Nodes: 2}
	o.App.Pool = 4
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tgt := openLocal(t, o)
	if pids := tgt.ServerPIDs(); len(pids) != 3 {
		t.Fatalf("server PIDs %v: want two database nodes and an application server", pids)
	}
	var names []string
	for _, n := range tgt.Nodes() {
		names = append(names, n.Name+"/"+n.Role)
	}
	if !slices.Equal(names, []string{"local1/app", "node1/primary", "node2/replica"}) {
		t.Fatalf("nodes %v", names)
	}
	gen := prepareAndLoad(t, tgt, 200)
	load := startLoad(t, tgt, gen, 8)
	app := tgt.servers()[0]
	replica := tgt.pc.Replicas()[0].Inst.Addr()
	c0 := readCounts(t, app)
	time.Sleep(500 * time.Millisecond)
	c1 := readCounts(t, app)
	if d, dp := c1[replica]-c0[replica], c1["primary"]-c0["primary"]; d < 50 || dp != 0 {
		t.Fatalf("in 0.5 s the replica %s answered %d reads and the primary %d; want them all on the replica", replica, d, dp)
	}
	load.check(t, "reading from the replica")

	ctx := context.Background()
	if _, err := tgt.RemoveNode(ctx, "node1"); err == nil || !strings.Contains(err.Error(), "node1 (on this machine) is the database's primary") {
		t.Fatalf("removing the primary: %v", err)
	}
	if _, err := tgt.RemoveNode(ctx, "node9"); err == nil || !strings.Contains(err.Error(), `"node9" is no node of this system; its application servers are local1, its database nodes node1 (primary), node2 (replica)`) {
		t.Fatalf("removing an unknown node: %v", err)
	}
	ch, err := tgt.RemoveNode(ctx, "node2")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Node != "node2" || ch.Error != "" || ch.Started.Before(ch.Requested) || ch.Done.Before(ch.Started) {
		t.Fatalf("change %+v", ch)
	}
	t.Logf("remove_node node2: out of the reads after %v, done after %v: %s", ch.Started.Sub(ch.Requested), ch.Done.Sub(ch.Requested), ch.Detail)
	c2 := readCounts(t, app)
	time.Sleep(300 * time.Millisecond)
	c3 := readCounts(t, app)
	if _, ok := c3[replica]; ok || c3["primary"]-c2["primary"] < 30 {
		t.Fatalf("after the removal: %v, then %v; want reads on the primary only", c2, c3)
	}
	load.end()
	load.check(t, "while removing the replica")
	if pids := tgt.ServerPIDs(); len(pids) != 2 {
		t.Fatalf("server PIDs %v after the removal", pids)
	}
	pids := tgt.ServerPIDs()
	if err := tgt.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if processRuns(pid) {
			t.Errorf("process %d still runs after Close", pid)
		}
	}
}

// With db.reads: all the primary takes reads in turn with the replica:
// both answer about half, through the server's read pools.
func TestLocalClusterReadsFromEveryNode(t *testing.T) {
	o := defaultOptions()
	o.DB.Cluster = &deploy.Cluster{Nodes: 2}
	o.DB.Reads = readsAll
	o.App.Pool = 4
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tgt := openLocal(t, o)
	gen := prepareAndLoad(t, tgt, 200)
	load := startLoad(t, tgt, gen, 8)
	app := tgt.servers()[0]
	primary, replica := tgt.pc.Primary().Addr(), tgt.pc.Replicas()[0].Inst.Addr()
	c0 := readCounts(t, app)
	time.Sleep(500 * time.Millisecond)
	c1 := readCounts(t, app)
	dp, dr := c1[primary]-c0[primary], c1[replica]-c0[replica]
	if dp < 25 || dr < 25 || float64(dp) < 0.7*float64(dr) || float64(dr) < 0.7*float64(dp) {
		t.Fatalf("in 0.5 s the primary %s answered %d reads and the replica %s %d; want about half each", primary, dp, replica, dr)
	}
	load.end()
	load.check(t, "reading from both nodes")
	if err := tgt.Close(); err != nil {
		t.Fatal(err)
	}
}

// processRuns says whether a process of that ID exists.
func processRuns(pid int) bool { return syscall.Kill(pid, 0) == nil }

// The spec's target section reads db.cluster and db.reads, and a spec
// that gives mariadb a cluster fails with the field and the fix.
func TestSpecReadsDBCluster(t *testing.T) {
	const src = `
name: dbtier
lab:
  hosts:
    - {name: app1, type: medium}
    - {name: db, count: 2, type: medium}
target:
  type: apptier
  db:
    engine: %s
    cluster: {nodes: 2, hosts: db, mode: sync, node_settings: {node2: {work_mem: 8MB}}}
    reads: primary
  app: {hosts: [app1]}
workload: {ycsb: c, record_count: 100}
load: {model: open, rates: [100]}
output: %s
`
	s, err := spec.Parse("t.yaml", []byte(fmt.Sprintf(src, "postgres", t.TempDir())))
	if err != nil {
		t.Fatal(err)
	}
	o := s.Target.Options.(*Options)
	if c := o.DB.Cluster; c == nil || c.Nodes != 2 || c.Hosts != "db" || c.Mode != "sync" || c.NodeSettings["node2"]["work_mem"] != "8MB" || o.DB.Reads != "primary" || o.DB.readsFromReplicas() {
		t.Fatalf("db options %+v, cluster %+v", o.DB, o.DB.Cluster)
	}
	_, err = spec.Parse("t.yaml", []byte(fmt.Sprintf(src, "mariadb", t.TempDir())))
	if err == nil || !strings.Contains(err.Error(), "db.cluster: engine mariadb runs one server here") {
		t.Fatalf("mariadb with a cluster: %v", err)
	}
}
