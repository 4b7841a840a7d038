package deploy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// How Redis Cluster nodes are joined and slots moved. Forming: node1 sends
// CLUSTER MEET to every other node, each primary takes its even share of
// the 16384 slots (CLUSTER ADDSLOTSRANGE), and replicas follow their
// primary (CLUSTER REPLICATE) once every node knows every other.
//
// Resharding moves slots one batch at a time from a donor to a taker, the
// way the Redis Cluster specification describes a live reshard: the taker
// marks the slots IMPORTING, the donor MIGRATING; then, while the donor
// has keys in them, CLUSTER GETKEYSINSLOT and MIGRATE ... KEYS move up to
// migrateKeys keys per slot and round trip; finally CLUSTER SETSLOT ...
// NODE gives the slots to the taker, on the taker first, then the donor,
// then every other primary. Meanwhile clients are redirected: a key still
// on the donor is served there, a missing one gets -ASK to the taker, and a
// slot already moved gets -MOVED. Commands are pipelined per node and batch,
// so a batch costs a few round trips, not a few per slot.

const (
	slotBatch      = 256   // slots moved per batch
	migrateKeys    = 100   // keys per MIGRATE
	migrateTimeout = 10000 // ms the donor waits for the taker in MIGRATE
)

// snapshot is the node list now.
func (rc *RedisCluster) snapshot() []*redisNode {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*redisNode(nil), rc.nodes...)
}

// form joins the started nodes into a Redis Cluster whose first primaries
// nodes own the slots and whose other nodes are their replicas, round
// robin.
func (rc *RedisCluster) form(ctx context.Context, primaries int) error {
	nodes := rc.snapshot()
	for _, nd := range nodes[1:] {
		if err := nodes[0].meet(ctx, nd); err != nil {
			return err
		}
	}
	for k := range primaries {
		lo, hi := k*redisSlots/primaries, (k+1)*redisSlots/primaries-1
		if err := nodes[k].do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER ADDSLOTSRANGE %d %d: %w", nodes[k].Name, lo, hi, err)
		}
	}
	if err := waitKnown(ctx, nodes); err != nil {
		return err
	}
	masters := map[string]string{}
	for i := primaries; i < len(nodes); i++ {
		p := nodes[(i-primaries)%primaries]
		if err := nodes[i].do(ctx, "CLUSTER", "REPLICATE", p.id).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER REPLICATE %s: %w", nodes[i].Name, p.Name, err)
		}
		masters[nodes[i].id] = p.id
	}
	if err := waitSlots(ctx, nodes, nil); err != nil {
		return err
	}
	// Every node learns the replicas' roles by gossip; wait for it, so
	// that the cluster is as formed from wherever it is looked at.
	err := waitFor(ctx, time.Minute, "every node to see the replicas follow their primaries", func() (bool, string, error) {
		for _, nd := range nodes {
			v, err := nd.view(ctx)
			if err != nil {
				return false, err.Error(), nil
			}
			for id, m := range masters {
				if v.master[id] != m {
					return false, nd.Name + " does not see " + id + " follow " + m + " yet", nil
				}
			}
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}
	for _, nd := range nodes[primaries:] {
		if err := nd.waitReplica(ctx); err != nil {
			return err
		}
	}
	return nil
}

// meet introduces other to nd.
func (nd *redisNode) meet(ctx context.Context, other *redisNode) error {
	if err := nd.do(ctx, "CLUSTER", "MEET", other.Inst.Host, other.Inst.Port, other.busPort).Err(); err != nil {
		return fmt.Errorf("%s: CLUSTER MEET %s: %w", nd.Name, other.Name, err)
	}
	return nil
}

// join introduces a new node to the cluster and waits until every node
// knows it and the new node sees the cluster ok (a primary that just
// started waits about 2 s before it does, and refuses MIGRATE's keys
// until then).
func (rc *RedisCluster) join(ctx context.Context, nd *redisNode) error {
	nodes := rc.snapshot()
	if err := nodes[0].meet(ctx, nd); err != nil {
		return err
	}
	if err := waitKnown(ctx, nodes); err != nil {
		return err
	}
	return waitSlots(ctx, nodes, nil)
}

// clusterView is one node's CLUSTER NODES: every node's ID with its
// primary's ID ("" for a primary) and the slots it owns.
type clusterView struct {
	master map[string]string
	slots  map[string]int
	raw    string
}

func (nd *redisNode) view(ctx context.Context) (clusterView, error) {
	s, err := nd.do(ctx, "CLUSTER", "NODES").Text()
	if err != nil {
		return clusterView{}, fmt.Errorf("%s: CLUSTER NODES: %w", nd.Name, err)
	}
	return parseClusterNodes(s), nil
}

// parseClusterNodes reads lines "<id> <addr> <flags> <master> <ping>
// <pong> <epoch> <link> <slot>...", where a slot is "lo-hi", "n", or a
// bracketed migration mark, which is not ownership.
func parseClusterNodes(s string) clusterView {
	v := clusterView{master: map[string]string{}, slots: map[string]int{}, raw: s}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || strings.Contains(f[2], "handshake") || strings.Contains(f[2], "noaddr") {
			continue
		}
		m := f[3]
		if m == "-" {
			m = ""
		}
		v.master[f[0]] = m
		n := 0
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			lo, hi, ok := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if ok {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 == nil && err2 == nil && b >= a {
				n += b - a + 1
			}
		}
		v.slots[f[0]] = n
	}
	return v
}

// ownedSlots lists the slots nd owns, as its own CLUSTER NODES says.
func (nd *redisNode) ownedSlots(ctx context.Context) ([]int, error) {
	s, err := nd.do(ctx, "CLUSTER", "NODES").Text()
	if err != nil {
		return nil, fmt.Errorf("%s: CLUSTER NODES: %w", nd.Name, err)
	}
	var out []int
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[0] != nd.id {
			continue
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			lo, hi, ok := strings.Cut(r, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if ok {
				b, _ = strconv.Atoi(hi)
			}
			for x := a; x <= b; x++ {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

// waitKnown waits until every node knows every other by its ID.
func waitKnown(ctx context.Context, nodes []*redisNode) error {
	return waitFor(ctx, time.Minute, "every node to know the others", func() (bool, string, error) {
		for _, nd := range nodes {
			v, err := nd.view(ctx)
			if err != nil {
				return false, err.Error(), nil
			}
			for _, o := range nodes {
				if _, ok := v.master[o.id]; !ok {
					return false, nd.Name + " does not know " + o.Name + " yet", nil
				}
			}
		}
		return true, "", nil
	})
}

// waitSlots waits until every node's cluster state is ok and, when want is
// set, every node sees each primary own want[id] slots.
func waitSlots(ctx context.Context, nodes []*redisNode, want map[string]int) error {
	return waitFor(ctx, time.Minute, "the cluster to agree on its slots", func() (bool, string, error) {
		for _, nd := range nodes {
			info, err := nd.do(ctx, "CLUSTER", "INFO").Text()
			if err != nil {
				return false, err.Error(), nil
			}
			if st := infoField(info, "cluster_state"); st != "ok" {
				return false, nd.Name + " cluster_state " + st, nil
			}
			if want == nil {
				continue
			}
			v, err := nd.view(ctx)
			if err != nil {
				return false, err.Error(), nil
			}
			for id, n := range want {
				if v.slots[id] != n {
					return false, fmt.Sprintf("%s sees %s with %d slots, not %d", nd.Name, id, v.slots[id], n), nil
				}
			}
		}
		return true, "", nil
	})
}

// moves is what a reshard moved.
type moves struct {
	slots, keys    int
	bytes          int64 // the moved keys' MEMORY USAGE on their donor; -1 before any move
	donors, takers []string
}

// reshard spreads the slots evenly over the primaries, without leaving
// (nil: over every primary, a new one included); leaving gives all its
// slots away. Each primary's share is 16384/p, the first 16384 mod p
// primaries in start order one more.
func (rc *RedisCluster) reshard(ctx context.Context, leaving *redisNode) (moves, error) {
	mv := moves{bytes: -1}
	all := rc.snapshot()
	var prims, stay []*redisNode
	for _, nd := range all {
		if nd == leaving {
			continue
		}
		stay = append(stay, nd)
		if nd.Role == "member" {
			prims = append(prims, nd)
		}
	}
	if len(prims) == 0 {
		return mv, fmt.Errorf("no primary would be left to own the slots")
	}
	owned := map[*redisNode][]int{}
	for _, nd := range all {
		if nd.Role != "member" {
			continue
		}
		s, err := nd.ownedSlots(ctx)
		if err != nil {
			return mv, err
		}
		owned[nd] = s
	}
	want := map[*redisNode]int{}
	for i, nd := range prims {
		want[nd] = redisSlots / len(prims)
		if i < redisSlots%len(prims) {
			want[nd]++
		}
	}
	// Donors give their excess (all, when leaving), takers fill up to
	// their share, both in start order.
	type transfer struct {
		src, dst *redisNode
		slots    []int
	}
	var plan []transfer
	ti := 0
	for _, src := range all {
		excess := owned[src]
		if src != leaving {
			if len(excess) <= want[src] {
				continue
			}
			excess = excess[want[src]:]
		}
		for len(excess) > 0 {
			for ti < len(prims) && len(owned[prims[ti]]) >= want[prims[ti]] {
				ti++
			}
			if ti == len(prims) {
				return mv, fmt.Errorf("internal: no primary can take %d more slots", len(excess))
			}
			dst := prims[ti]
			n := min(len(excess), want[dst]-len(owned[dst]))
			plan = append(plan, transfer{src: src, dst: dst, slots: excess[:n]})
			owned[dst] = append(owned[dst], excess[:n]...)
			excess = excess[n:]
		}
	}
	var others []*redisNode
	for _, nd := range stay {
		if nd.Role == "member" {
			others = append(others, nd)
		}
	}
	mv.bytes = 0
	for _, t := range plan {
		mv.donors = appendOnce(mv.donors, t.src.Name)
		mv.takers = appendOnce(mv.takers, t.dst.Name)
		for i := 0; i < len(t.slots); i += slotBatch {
			batch := t.slots[i:min(i+slotBatch, len(t.slots))]
			keys, bytes, err := migrateSlots(ctx, t.src, t.dst, batch, others, rc.password)
			mv.keys += keys
			mv.bytes += bytes
			if err != nil {
				return mv, err
			}
			mv.slots += len(batch)
		}
	}
	target := map[string]int{}
	for nd, n := range want {
		target[nd.id] = n
	}
	if leaving != nil {
		target[leaving.id] = 0
	}
	return mv, waitSlots(ctx, stay, target)
}

func appendOnce(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// migrateSlots moves slots from src to dst with their keys and returns how
// many keys moved and their size (MEMORY USAGE on src just before the move:
// the key's value and its overhead in memory, near what MIGRATE sends).
func migrateSlots(ctx context.Context, src, dst *redisNode, slots []int, primaries []*redisNode, password string) (moved int, bytes int64, err error) {
	setslot := func(state string, id string) [][]any {
		out := make([][]any, len(slots))
		for i, s := range slots {
			out[i] = []any{"CLUSTER", "SETSLOT", s, state, id}
		}
		return out
	}
	if _, err := dst.pipe(ctx, setslot("IMPORTING", src.id)); err != nil {
		return 0, 0, err
	}
	if _, err := src.pipe(ctx, setslot("MIGRATING", dst.id)); err != nil {
		return 0, 0, err
	}
	pending := slots
	for len(pending) > 0 {
		get := make([][]any, len(pending))
		for i, s := range pending {
			get[i] = []any{"CLUSTER", "GETKEYSINSLOT", s, migrateKeys}
		}
		res, err := src.pipe(ctx, get)
		if err != nil {
			return moved, bytes, err
		}
		var mig, size [][]any
		var next []int
		for i, r := range res {
			keys, err := r.StringSlice()
			if err != nil {
				return moved, bytes, fmt.Errorf("%s: CLUSTER GETKEYSINSLOT: %w", src.Name, err)
			}
			if len(keys) == 0 {
				continue
			}
			next = append(next, pending[i])
			a := []any{"MIGRATE", dst.Inst.Host, dst.Inst.Port, "", 0, migrateTimeout, "AUTH", password, "KEYS"}
			for _, k := range keys {
				a = append(a, k)
				size = append(size, []any{"MEMORY", "USAGE", k, "SAMPLES", 0})
			}
			mig = append(mig, a)
			moved += len(keys)
		}
		if len(mig) > 0 {
			// A key gone since GETKEYSINSLOT has no size (a nil reply):
			// the pipeline's error is not the move's.
			sizes, _ := src.pipe(ctx, size)
			for _, c := range sizes {
				if n, err := c.Int64(); err == nil {
					bytes += n
				}
			}
			if _, err := src.pipe(ctx, mig); err != nil {
				return moved, bytes, err
			}
		}
		pending = next
	}
	owner := setslot("NODE", dst.id)
	if _, err := dst.pipe(ctx, owner); err != nil {
		return moved, bytes, err
	}
	if _, err := src.pipe(ctx, owner); err != nil {
		return moved, bytes, err
	}
	for _, p := range primaries {
		if p == src || p == dst {
			continue
		}
		// The others would learn it from gossip; telling them saves
		// clients a redirect. A failure here is not the reshard's.
		_, _ = p.pipe(ctx, owner)
	}
	return moved, bytes, nil
}

// pipe sends cmds to nd in one round trip; the error names the first
// command that failed (never MIGRATE's password).
func (nd *redisNode) pipe(ctx context.Context, cmds [][]any) ([]*redis.Cmd, error) {
	p := nd.admin.Pipeline()
	out := make([]*redis.Cmd, len(cmds))
	for i, a := range cmds {
		out[i] = p.Do(ctx, a...)
	}
	if _, err := p.Exec(ctx); err != nil {
		for i, c := range out {
			if c.Err() != nil {
				return out, fmt.Errorf("%s: %v %v: %w", nd.Name, cmds[i][0], cmds[i][1], c.Err())
			}
		}
		return out, fmt.Errorf("%s: %w", nd.Name, err)
	}
	return out, nil
}

// checkRemovable refuses to remove the last primary or one that replicas
// follow.
func (rc *RedisCluster) checkRemovable(ctx context.Context, nd *redisNode) error {
	var prims int
	var followers []string
	nodes := rc.snapshot()
	v, err := nd.view(ctx)
	if err != nil {
		return err
	}
	for _, o := range nodes {
		if o.Role == "member" {
			prims++
		}
		if v.master[o.id] == nd.id {
			followers = append(followers, o.Name)
		}
	}
	if prims <= 1 {
		return fmt.Errorf("remove_node: %s is the cluster's last primary; add a node before removing it", nd.Name)
	}
	if len(followers) > 0 {
		return fmt.Errorf("remove_node: %s is a primary with replicas (%s); remove them first", nd.Name, strings.Join(followers, ", "))
	}
	return nil
}

// forget makes every other node forget nd (CLUSTER FORGET also keeps it
// from being re-added by gossip for a minute, time enough to stop it).
func (rc *RedisCluster) forget(ctx context.Context, nd *redisNode) error {
	for _, o := range rc.snapshot() {
		if o == nd {
			continue
		}
		if err := o.do(ctx, "CLUSTER", "FORGET", nd.id).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER FORGET %s: %w", o.Name, nd.Name, err)
		}
	}
	return nil
}
