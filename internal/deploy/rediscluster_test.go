package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// startRedisCluster starts a cluster for the test and removes it when the
// test ends; it skips (fails under HEADROOM_REQUIRE_SERVERS=1) without
// redis-server.
func startRedisCluster(t *testing.T, c Cluster) *RedisCluster {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal("redis-server is not installed (HEADROOM_REQUIRE_SERVERS=1); apt-get install -y redis-server")
		}
		t.Skip("redis-server is not installed; apt-get install -y redis-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Now()
	rc, err := StartRedisCluster(ctx, serverTestDir(t, "redis"), Managed{Cluster: &c})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s of %d nodes ready in %v", rc.Mode(), len(rc.Nodes()), time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := rc.Remove(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return rc
}

func clusterClient(rc *RedisCluster) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: rc.Addrs(), Password: rc.Password(), Protocol: 2,
		DisableIdentity: true, MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
}

// dbsizes is DBSIZE per node name.
func dbsizes(t *testing.T, rc *RedisCluster) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, nd := range rc.snapshot() {
		n, err := nd.admin.DBSize(context.Background()).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[nd.Name] = n
	}
	return out
}

// A Redis Cluster of three primaries spreads keys over all three; a fourth
// primary joins and takes a quarter of the slots with their keys; removing
// a primary gives its slots back; no key is lost on the way.
func TestRedisClusterReshardsOnAddAndRemove(t *testing.T) {
	rc := startRedisCluster(t, Cluster{Nodes: 3, Mode: RedisModeCluster})
	ctx := context.Background()
	cc := clusterClient(rc)
	defer cc.Close()
	const keys = 600
	for i := range keys {
		if err := cc.Set(ctx, fmt.Sprintf("user%d", i), strings.Repeat("x", 100), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for name, n := range dbsizes(t, rc) {
		if n < keys/6 {
			t.Errorf("%s holds %d of %d keys; the slots are not spread", name, n, keys)
		}
	}

	ch, err := rc.AddNode(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("add: %s (started after %v, done after %v, %d bytes)", ch.Detail, ch.Started.Sub(ch.Requested), ch.Done.Sub(ch.Requested), ch.BytesStreamed)
	if ch.Node != "node4" || ch.Done.IsZero() || ch.Error != "" || ch.BytesStreamed <= 0 {
		t.Fatalf("add_node change %+v", ch)
	}
	nodes := rc.snapshot()
	if len(nodes) != 4 {
		t.Fatalf("%d nodes after add_node", len(nodes))
	}
	for _, nd := range nodes {
		s, err := nd.ownedSlots(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != redisSlots/4 {
			t.Errorf("%s owns %d slots, want %d", nd.Name, len(s), redisSlots/4)
		}
	}
	if n := dbsizes(t, rc)["node4"]; n < keys/8 {
		t.Errorf("node4 holds %d keys after the reshard", n)
	}
	checkKeys := func(when string) {
		t.Helper()
		// A fresh client: the test's own one sent nothing while the
		// slots moved, so its slot map is stale.
		cc := clusterClient(rc)
		defer cc.Close()
		var total int64
		for _, n := range dbsizes(t, rc) {
			total += n
		}
		if total != keys {
			t.Fatalf("%s: the nodes hold %d keys, want %d", when, total, keys)
		}
		for i := range keys {
			if err := cc.Get(ctx, fmt.Sprintf("user%d", i)).Err(); err != nil {
				t.Fatalf("%s: GET user%d: %v", when, i, err)
			}
		}
	}
	checkKeys("after add_node")

	ch, err = rc.RemoveNode(ctx, "node2")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("remove: %s", ch.Detail)
	if ch.Done.IsZero() || ch.BytesStreamed <= 0 || len(rc.Nodes()) != 3 {
		t.Fatalf("remove_node change %+v, %d nodes", ch, len(rc.Nodes()))
	}
	checkKeys("after remove_node")
	if _, err := rc.RemoveNode(ctx, "node9"); err == nil || !strings.Contains(err.Error(), "node1, node3, node4") {
		t.Fatalf("removing a node that is not there: %v", err)
	}
}

// Replicas mode: a write to the primary appears on the replica; an added
// replica syncs the data set; the primary cannot be removed, a replica can.
func TestRedisReplicas(t *testing.T) {
	rc := startRedisCluster(t, Cluster{Nodes: 2})
	ctx := context.Background()
	nodes := rc.snapshot()
	if nodes[0].Role != "primary" || nodes[1].Role != "replica" {
		t.Fatalf("roles %s, %s", nodes[0].Role, nodes[1].Role)
	}
	if err := nodes[0].admin.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := nodes[0].admin.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d, %v", n, err)
	}
	if v, err := nodes[1].admin.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("the replica has k = %q, %v", v, err)
	}

	ch, err := rc.AddNode(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("add: %s, %d bytes", ch.Detail, ch.BytesStreamed)
	if ch.Node != "node3" || ch.BytesStreamed <= 0 {
		t.Fatalf("add_node change %+v", ch)
	}
	if v, err := rc.snapshot()[2].admin.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("the added replica has k = %q, %v", v, err)
	}
	if _, err := rc.RemoveNode(ctx, "node1"); err == nil || !strings.Contains(err.Error(), "primary") {
		t.Fatalf("removing the primary: %v", err)
	}
	if _, err := rc.RemoveNode(ctx, "node2"); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.Nodes()); n != 2 {
		t.Fatalf("%d nodes after removing one of 3", n)
	}
}

func TestCheckRedisCluster(t *testing.T) {
	for _, tc := range []struct {
		c        Cluster
		settings map[string]string
		want     string
	}{
		{Cluster{Nodes: 3}, nil, ""},
		{Cluster{Nodes: 6, Mode: RedisModeCluster, ReplicationFactor: 2}, nil, ""},
		{Cluster{Nodes: 5, Mode: RedisModeCluster, ReplicationFactor: 2}, nil, "managed.cluster.nodes: 5 nodes cannot be split"},
		{Cluster{Nodes: 3, ReplicationFactor: 2}, nil, "managed.cluster.replication_factor: 2 does not fit mode replicas"},
		{Cluster{Nodes: 3}, map[string]string{"replicaof": "x 1"}, "managed.settings.replicaof: Headroom sets this itself"},
		{Cluster{Nodes: 3, NodeSettings: map[string]map[string]string{"node2": {"cluster-enabled": "no"}}}, nil, "managed.settings.cluster-enabled"},
	} {
		err := CheckRedisCluster(&tc.c, tc.settings)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("%+v %v: %v, want %q", tc.c, tc.settings, err, tc.want)
		}
	}
}

// replication_factor 2 in cluster mode: two primaries with one replica
// each; a replica holds its primary's keys; a primary that replicas follow
// cannot be removed, its replica can.
func TestRedisClusterWithReplicas(t *testing.T) {
	rc := startRedisCluster(t, Cluster{Nodes: 4, Mode: RedisModeCluster, ReplicationFactor: 2})
	ctx := context.Background()
	nodes := rc.snapshot()
	v, err := nodes[0].view(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, nd := range nodes {
		wantRole, wantMaster, wantSlots := "member", "", redisSlots/2
		if i >= 2 {
			wantRole, wantMaster, wantSlots = "replica", nodes[i-2].id, 0
		}
		if nd.Role != wantRole || v.master[nd.id] != wantMaster || v.slots[nd.id] != wantSlots {
			t.Fatalf("%s: role %s, master %q, %d slots; want %s, %q, %d\n%s", nd.Name, nd.Role, v.master[nd.id], v.slots[nd.id], wantRole, wantMaster, wantSlots, v.raw)
		}
	}
	cc := clusterClient(rc)
	defer cc.Close()
	for i := range 50 {
		if err := cc.Set(ctx, fmt.Sprintf("k%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if n, err := nodes[i].admin.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
			t.Fatalf("WAIT 1 on %s: %d, %v", nodes[i].Name, n, err)
		}
		p, r := nodes[i].admin.DBSize(ctx).Val(), nodes[i+2].admin.DBSize(ctx).Val()
		if p == 0 || p != r {
			t.Fatalf("%s holds %d keys, its replica %s %d", nodes[i].Name, p, nodes[i+2].Name, r)
		}
	}
	if _, err := rc.RemoveNode(ctx, "node1"); err == nil || !strings.Contains(err.Error(), "with replicas (node3)") {
		t.Fatalf("removing a primary with a replica: %v", err)
	}
	if _, err := rc.RemoveNode(ctx, "node3"); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.RemoveNode(ctx, "node1"); err != nil {
		t.Fatal(err)
	}
	c2 := clusterClient(rc)
	defer c2.Close()
	for i := range 50 {
		if err := c2.Get(ctx, fmt.Sprintf("k%d", i)).Err(); err != nil {
			t.Fatalf("GET k%d after node1 left: %v", i, err)
		}
	}
}
