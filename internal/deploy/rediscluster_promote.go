package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Promote fails a replica set (mode replicas) over to the replica named
// name (a node name or its lab host's; "" = the first replica): the old
// primary is fenced (stopped if it still runs, so that two primaries never
// take writes), the replica is promoted (REPLICAOF NO ONE: it keeps the
// data it has received and takes writes) and becomes the node list's
// first, the primary. Unlike PostgreSQL's streaming replicas, the other
// Redis replicas can follow the new primary (REPLICAOF host port; a
// partial resync when their offsets allow, a full one otherwise), so they
// stay in the set. Only the old primary is left out; RestoreReplicas
// makes a fresh replica on its host.
//
// Redis acknowledges a write before any replica has it (replication is
// asynchronous, and WAIT is not used): whatever the old primary
// acknowledged that the promoted replica had not received is gone after
// this, which is what the write check finds. Redis Cluster fails over by
// itself (its replicas vote) and is not promoted here.
func (rc *RedisCluster) Promote(ctx context.Context, name string) (NodeChange, error) {
	ch := NodeChange{Action: EventPromote, Requested: time.Now(), BytesStreamed: -1}
	fail := func(err error) (NodeChange, error) {
		ch.Error = err.Error()
		return ch, fmt.Errorf("promote: %w", err)
	}
	if rc.mode != RedisModeReplicas {
		return fail(errors.New("a Redis Cluster (mode cluster) elects its own primaries; Headroom promotes replicas of mode replicas only"))
	}
	rc.mu.Lock()
	nodes := slices.Clone(rc.nodes)
	rc.mu.Unlock()
	if len(nodes) == 0 {
		return fail(errors.New("the cluster has been removed"))
	}
	plain := make([]Node, len(nodes))
	for j, n := range nodes {
		plain[j] = n.Node
	}
	i, err := replicaToPromote(plain, name, "replica set")
	if err != nil {
		return fail(err)
	}
	nd, old := nodes[i], nodes[0]
	ch.Node, ch.Host = nd.Name, nd.Host
	fenced, err := fence(ctx, old.Inst, old.Name)
	if err != nil {
		return fail(err)
	}
	_ = old.admin.Close()
	ch.Started = time.Now()
	if err := nd.do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fail(fmt.Errorf("%s: REPLICAOF NO ONE: %w", nd.Name, err))
	}
	if err := waitFor(ctx, time.Minute, nd.Name+" to report role:master", func() (bool, string, error) {
		s, err := nd.admin.Info(ctx, "replication").Result()
		if err != nil {
			return false, err.Error(), nil
		}
		role := infoField(s, "role")
		return role == "master", "role " + role, nil
	}); err != nil {
		return fail(err)
	}
	// The configuration file still names the old primary; rewritten, a
	// restart of the node keeps its new role.
	rewrite := func(n *redisNode) error {
		if err := n.do(ctx, "CONFIG", "REWRITE").Err(); err != nil {
			return fmt.Errorf("%s: CONFIG REWRITE: %w", n.Name, err)
		}
		return nil
	}
	if err := rewrite(nd); err != nil {
		return fail(err)
	}
	var others []*redisNode
	for _, n := range nodes[1:] {
		if n != nd {
			others = append(others, n)
		}
	}
	port := strconv.Itoa(nd.Inst.Port)
	for _, n := range others {
		if err := n.do(ctx, "REPLICAOF", nd.Inst.Host, port).Err(); err != nil {
			return fail(fmt.Errorf("pointing replica %s at the new primary: %w", n.Name, err))
		}
	}
	for _, n := range others {
		if err := n.waitReplica(ctx); err != nil {
			return fail(err)
		}
		if err := rewrite(n); err != nil {
			return fail(err)
		}
	}
	rc.mu.Lock()
	nd.Role = "primary"
	rc.nodes = append([]*redisNode{nd}, others...)
	rc.lost = append(rc.lost, old)
	rc.mu.Unlock()
	ch.Done = time.Now()
	ch.Detail = fmt.Sprintf("%s promoted to primary in %v; old primary %s %s", nd.Name, ch.Done.Sub(ch.Started).Round(time.Millisecond), old.Name, fenced)
	if len(others) > 0 {
		ch.Detail += fmt.Sprintf("; %d other replica(s) now follow %s", len(others), nd.Name)
	}
	return ch, nil
}

// Lost are the nodes a failover left out (old primaries), not yet rebuilt.
func (rc *RedisCluster) Lost() []Node {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]Node, len(rc.lost))
	for i, n := range rc.lost {
		out[i] = n.Node
	}
	return out
}

// RestoreReplicas puts the replica set back to its node count after
// failovers: every node left out is removed (its data deleted) and a new
// replica of the current primary is started on its host (or this
// machine), with a full sync, as AddNode does. It returns one change per
// replica made.
func (rc *RedisCluster) RestoreReplicas(ctx context.Context) ([]NodeChange, error) {
	rc.mu.Lock()
	lost := rc.lost
	rc.lost = nil
	rc.mu.Unlock()
	var out []NodeChange
	var errs []error
	for _, n := range lost {
		if err := n.Inst.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", n.Name, err))
		}
		ch, err := rc.AddNode(ctx, n.Inst.Placement())
		ch.Detail = fmt.Sprintf("in place of %s (left out by a failover): %s", n.Name, ch.Detail)
		out = append(out, ch)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}
