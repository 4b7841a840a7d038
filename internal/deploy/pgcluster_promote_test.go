package deploy

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// A failover on loopback: the primary of three nodes is killed, node3 is
// promoted (it had replayed every write: nothing is lost here), takes
// writes, and node1 and node2 are left out until RestoreReplicas makes
// them replicas of node3 again.
func TestPostgresClusterPromote(t *testing.T) {
	ctx := context.Background()
	pc := startPostgresCluster(t, Managed{Cluster: &Cluster{Nodes: 3}})
	old := pgPool(t, pc.Primary())
	if _, err := old.Exec(ctx, "CREATE TABLE kv (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(ctx, "INSERT INTO kv SELECT g, 'x' FROM generate_series(1, 100) g"); err != nil {
		t.Fatal(err)
	}
	if err := pc.WaitReplayed(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	old.Close()
	pid := pc.Primary().PID()
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Promote(ctx, "node9"); err == nil {
		t.Fatal("promoting a node that does not exist worked")
	}
	ch, err := pc.Promote(ctx, "node3")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", ch)
	if ch.Action != EventPromote || ch.Node != "node3" || ch.Done.Before(ch.Started) || ch.Error != "" {
		t.Errorf("change %+v", ch)
	}
	nodes, lost := pc.Nodes(), pc.Lost()
	if len(nodes) != 1 || nodes[0].Name != "node3" || nodes[0].Role != "primary" || len(lost) != 2 {
		t.Fatalf("after promote: nodes %+v, lost %+v", nodes, lost)
	}
	if lost[1].Inst.Running() {
		t.Error("node2, a replica of the old primary, still runs")
	}
	primary := pgPool(t, pc.Primary())
	var n int
	if err := primary.QueryRow(ctx, "SELECT count(*) FROM kv").Scan(&n); err != nil || n != 100 {
		t.Fatalf("rows on the new primary: %d, %v", n, err)
	}
	if _, err := primary.Exec(ctx, "INSERT INTO kv VALUES (101, 'after')"); err != nil {
		t.Fatalf("the new primary takes no write: %v", err)
	}
	chs, err := pc.RestoreReplicas(ctx)
	if err != nil || len(chs) != 2 {
		t.Fatalf("restore: %+v, %v", chs, err)
	}
	if len(pc.Nodes()) != 3 || len(pc.Replicas()) != 2 || len(pc.Lost()) != 0 {
		t.Fatalf("after restore: %+v", pc.Nodes())
	}
	for _, r := range pc.Replicas() {
		if d := visibleWithin(ctx, pgPool(t, r.Inst), 101, 10*time.Second); d < 0 {
			t.Errorf("rebuilt replica %s never saw the write made after the failover", r.Name)
		}
	}
}
