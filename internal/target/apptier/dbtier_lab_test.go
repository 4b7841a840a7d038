package apptier

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
)

// xactCommits is the workload database's committed transactions on a
// database node, by its own statistics (a replica counts the reads it
// serves).
func xactCommits(t *testing.T, inst *deploy.Instance) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, deploy.PostgresDSN(inst))
	if err != nil {
		t.Fatalf("connecting to %s: %v", inst.Addr(), err)
	}
	defer c.Close(context.Background())
	var n int64
	if err := c.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// growsBy waits up to limit for f to grow by at least n from its value
// now (statistics reach pg_stat_database within about a second); it
// returns the growth seen.
func growsBy(f func() int64, n int64, limit time.Duration) int64 {
	start, v0 := time.Now(), f()
	for {
		d := f() - v0
		if d >= n || time.Since(start) > limit {
			return d
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The database tier scales in the lab: a primary on lab host db behind one
// application server; a replica added on db2 (a host brought up while the
// load runs, as add_node and the elastic controller do) takes the reads
// once AddNode returns, and when it is removed the reads go back to the
// primary, without a request failing either time; Close removes it all.
func TestLabAddAndRemoveDBReplica(t *testing.T) {
	needLab(t)
	p, env := scaleLab(t, "t-apptier-dbscale", "db")
	ctx := context.Background()
	o := defaultOptions()
	o.App.Hosts, o.App.Pool = []string{"app1"}, 4
	o.DB.Cluster = &deploy.Cluster{Nodes: 1, Hosts: "db"}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tgt, err := Open(ctx, *o, env)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = tgt.Close()
		}
	})
	primary := tgt.pc.Primary()
	app := tgt.servers()[0]
	gen := prepareAndLoad(t, tgt, 200)
	load := startLoad(t, tgt, gen, 8)
	onPrimary := func() int64 { return xactCommits(t, primary) }
	if d := growsBy(onPrimary, 100, 5*time.Second); d < 100 {
		t.Fatalf("the primary committed %d transactions in 5 s of load", d)
	}

	if _, err := p.AddHost(ctx, infra.HostSpec{Name: "db2", Type: "medium"}); err != nil {
		t.Fatal(err)
	}
	ch, err := tgt.AddNode(ctx, "db2")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Action != "add_node" || ch.Node != "node2" || ch.Host != "db2" || ch.Error != "" || ch.BytesStreamed <= 0 ||
		ch.Started.Before(ch.Requested) || ch.Done.Before(ch.Started) {
		t.Fatalf("add_node change %+v", ch)
	}
	t.Logf("add_node db2: accepting connections after %v, read from after %v: %s", ch.Started.Sub(ch.Requested), ch.Done.Sub(ch.Requested), ch.Detail)
	var nodes []string
	for _, n := range tgt.Nodes() {
		nodes = append(nodes, n.Name+"/"+n.Role+"/"+n.Host)
	}
	if !slices.Equal(nodes, []string{"app1/app/app1", "node1/primary/db", "node2/replica/db2"}) {
		t.Fatalf("nodes %v after adding db2", nodes)
	}
	if pids := tgt.ServerPIDs(); len(pids) != 3 {
		t.Fatalf("server PIDs %v: want two database nodes and the application server", pids)
	}
	replica := tgt.pc.Replicas()[0].Inst
	c0 := readCounts(t, app)
	if d := growsBy(func() int64 { return xactCommits(t, replica) }, 100, 5*time.Second); d < 100 {
		t.Fatalf("the replica on db2 committed %d transactions in 5 s of reads", d)
	}
	c1 := readCounts(t, app)
	if d, dp := c1[replica.Addr()]-c0[replica.Addr()], c1["primary"]-c0["primary"]; d < 100 || dp != 0 {
		t.Fatalf("the application server sent %d reads to the replica and %d to the primary; want them all on the replica", d, dp)
	}
	load.check(t, "while adding db2")

	ch, err = tgt.RemoveNode(ctx, "db2")
	if err != nil {
		t.Fatal(err)
	}
	if ch.Action != "remove_node" || ch.Node != "node2" || ch.Host != "db2" || ch.Error != "" || ch.Started.Before(ch.Requested) || ch.Done.Before(ch.Started) {
		t.Fatalf("remove_node change %+v", ch)
	}
	t.Logf("remove_node db2: out of the reads after %v, done after %v: %s", ch.Started.Sub(ch.Requested), ch.Done.Sub(ch.Requested), ch.Detail)
	if err := p.RemoveHost(ctx, "db2"); err != nil {
		t.Fatal(err)
	}
	c2 := readCounts(t, app)
	time.Sleep(time.Second)
	c3 := readCounts(t, app)
	if _, ok := c3[replica.Addr()]; ok || c3["primary"]-c2["primary"] < 100 {
		t.Fatalf("after removing db2 the application server counts %v, then %v; want the reads on the primary", c2, c3)
	}
	if _, err := tgt.RemoveNode(ctx, "db"); err == nil {
		t.Fatal("the primary was removed")
	}
	load.end()
	load.check(t, "while removing db2")
	t.Logf("%d requests, none failed; %d reads retried on the primary", load.ok.Load(), c3["retried"])

	pids := tgt.ServerPIDs()
	if len(pids) != 2 {
		t.Fatalf("server PIDs %v after removing db2", pids)
	}
	closed = true
	if err := tgt.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if processRuns(pid) {
			t.Errorf("process %d still runs after Close", pid)
		}
	}
	if n := len(tgt.pc.Nodes()); n != 0 {
		t.Errorf("%d database nodes left after Close", n)
	}
}
