package deploy

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A replica set of three fails over to node3 while its primary is
// SIGSTOPped: the primary cannot shut down and is killed by the fencing;
// node3 takes writes, node2 follows it, node1 is left out until
// RestoreReplicas starts a fresh replica of node3 in its place.
func TestRedisReplicasPromote(t *testing.T) {
	rc := startRedisCluster(t, Cluster{Nodes: 3})
	ctx := context.Background()
	nodes := rc.snapshot()
	if err := nodes[0].admin.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := nodes[0].admin.Wait(ctx, 2, 5000).Result(); err != nil || n != 2 {
		t.Fatalf("WAIT 2: %d, %v", n, err)
	}
	if _, err := rc.Promote(ctx, "node1"); err == nil || !strings.Contains(err.Error(), "not a replica") {
		t.Fatalf("promoting the primary: %v", err)
	}
	if err := syscall.Kill(nodes[0].Inst.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ch, err := rc.Promote(ctx, "node3")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("promote: %s", ch.Detail)
	if ch.Action != EventPromote || ch.Node != "node3" || ch.Done.Before(ch.Started) || !strings.Contains(ch.Detail, "old primary node1 stopped") {
		t.Fatalf("promote change %+v", ch)
	}
	if nodes[0].Inst.Running() {
		t.Fatal("the old primary still runs after the failover")
	}
	now := rc.snapshot()
	if len(now) != 2 || now[0].Name != "node3" || now[0].Role != "primary" || now[1].Name != "node2" || now[1].Role != "replica" {
		t.Fatalf("nodes after the failover: %+v", rc.Nodes())
	}
	if lost := rc.Lost(); len(lost) != 1 || lost[0].Name != "node1" {
		t.Fatalf("left out: %+v", lost)
	}
	// node3 takes writes and node2 replicates them.
	if err := now[0].admin.Set(ctx, "k2", "v2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := now[0].admin.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on the new primary: %d, %v", n, err)
	}
	if v, err := now[1].admin.Get(ctx, "k2").Result(); err != nil || v != "v2" {
		t.Fatalf("node2 has k2 = %q, %v", v, err)
	}

	chs, err := rc.RestoreReplicas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(chs) != 1 || chs[0].Node != "node4" || !strings.Contains(chs[0].Detail, "in place of node1") {
		t.Fatalf("restore: %+v", chs)
	}
	t.Logf("restore: %s", chs[0].Detail)
	if len(rc.Lost()) != 0 {
		t.Fatalf("still left out after the restore: %+v", rc.Lost())
	}
	now = rc.snapshot()
	if len(now) != 3 || now[2].Name != "node4" || now[2].Role != "replica" {
		t.Fatalf("nodes after the restore: %+v", rc.Nodes())
	}
	info, err := now[2].admin.Info(ctx, "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	if role, port := infoField(info, "role"), infoField(info, "master_port"); role != "slave" || port != strconv.Itoa(now[0].Inst.Port) {
		t.Fatalf("node4: role %s of port %s, want a replica of node3 (port %d)", role, port, now[0].Inst.Port)
	}
	for _, k := range []string{"k", "k2"} {
		if v, err := now[2].admin.Get(ctx, k).Result(); err != nil || v == "" {
			t.Fatalf("the rebuilt replica has %s = %q, %v", k, v, err)
		}
	}
}

// Redis Cluster elects its own primaries: promote refuses it.
func TestRedisClusterPromoteRefused(t *testing.T) {
	rc := &RedisCluster{mode: RedisModeCluster}
	if _, err := rc.Promote(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "elects its own primaries") {
		t.Fatalf("promote in mode cluster: %v", err)
	}
}
