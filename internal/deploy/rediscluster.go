package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Redis cluster modes (managed.cluster.mode of the redis target).
const (
	// RedisModeReplicas is one primary (node1) and the other nodes its
	// replicas (replicaof), every node holding the whole data set.
	RedisModeReplicas = "replicas"
	// RedisModeCluster is Redis Cluster: the 16384 hash slots spread evenly
	// over the primaries, each with replication_factor - 1 replicas.
	RedisModeCluster = "cluster"
)

// RedisClusterModes are the redis target's cluster modes, default first.
var RedisClusterModes = []string{RedisModeReplicas, RedisModeCluster}

// redisSlots is the number of hash slots of Redis Cluster.
const redisSlots = 16384

// redisClusterReserved are config directives a cluster node's configuration
// sets itself, on top of redisReserved.
var redisClusterReserved = map[string]string{
	"cluster-enabled":                 "managed.cluster.mode picks it",
	"cluster-config-file":             "each node keeps nodes.conf in its data directory",
	"cluster-port":                    "Headroom picks a free cluster bus port",
	"replicaof":                       "Headroom makes the other nodes replicas of node1",
	"slaveof":                         "Headroom makes the other nodes replicas of node1",
	"masterauth":                      "the nodes share the generated password",
	"masteruser":                      "replicas authenticate as the default user",
	"cluster-allow-replica-migration": "remove_node needs a primary without slots to stay a primary until it stops",
}

// CheckRedisCluster reports the first problem of a redis cluster block and
// its settings as one sentence: the node count must fit the mode, and the
// settings Headroom needs to join the nodes cannot be changed.
func CheckRedisCluster(c *Cluster, settings map[string]string) error {
	if c == nil {
		return nil
	}
	for _, s := range append([]map[string]string{settings}, nodeSettingsOf(c)...) {
		for _, k := range sortedKeys(s) {
			if why, ok := redisClusterReserved[strings.ToLower(k)]; ok {
				return fmt.Errorf("managed.settings.%s: Headroom sets this itself in a cluster (%s); remove it", k, why)
			}
		}
	}
	n := c.NodeCount()
	switch c.ModeOr(RedisModeReplicas) {
	case RedisModeReplicas:
		if c.ReplicationFactor != 0 && c.ReplicationFactor != n {
			return fmt.Errorf("managed.cluster.replication_factor: %d does not fit mode replicas, where every one of the %d nodes holds the whole data set; remove it, or use mode: cluster", c.ReplicationFactor, n)
		}
	case RedisModeCluster:
		r := max(c.ReplicationFactor, 1)
		if n%r != 0 {
			return fmt.Errorf("managed.cluster.nodes: %d nodes cannot be split into primaries with %d copies each (replication_factor %d); use a multiple of %d", n, r, r, r)
		}
	}
	return nil
}

func nodeSettingsOf(c *Cluster) []map[string]string {
	var out []map[string]string
	for _, k := range sortedKeys(stringKeys(c.NodeSettings)) {
		out = append(out, c.NodeSettings[k])
	}
	return out
}

func stringKeys(m map[string]map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = ""
	}
	return out
}

// RedisCluster is a group of managed Redis servers that share one data set
// and one generated password: a primary with replicas, or a Redis Cluster
// (see RedisModeReplicas, RedisModeCluster). Each node is an Instance of
// its own, in dir/node1, dir/node2, ..., placed on the cluster's lab hosts
// or on this machine's loopback with ports of its own.
type RedisCluster struct {
	mode     string
	dir      string
	base     Managed // settings, keep and start timeout of every node
	spec     *Cluster
	password string

	mu     sync.Mutex
	nodes  []*redisNode // in start order; after a failover the new primary first
	lost   []*redisNode // old primaries left out by failovers (Promote)
	seq    int          // nodes started so far: new names continue the count
	onStop func(ctx context.Context, n Node)
}

// OnStop sets f to be called with a node that RemoveNode is about to stop,
// once it is out of the cluster and serves no more (a target's last look
// at its statistics, or the moment to stop sending it reads).
func (rc *RedisCluster) OnStop(f func(ctx context.Context, n Node)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.onStop = f
}

// redisNode is one server of the cluster with its admin connection.
type redisNode struct {
	Node
	id      string // Redis Cluster node ID ("" in replicas mode)
	busPort int
	admin   *redis.Client
}

// redisNodeRecipe is the Redis recipe with the shared password and a
// node's cluster lines appended to its redis.conf.
type redisNodeRecipe struct {
	redisRecipe
	password string
	extra    func(inst *Instance) []string
}

func (r redisNodeRecipe) Init(ctx context.Context, inst *Instance) error {
	inst.Password = r.password
	if err := r.redisRecipe.Init(ctx, inst); err != nil {
		return err
	}
	lines := append([]string{"# cluster (internal/deploy/rediscluster.go)", "masterauth " + r.password}, r.extra(inst)...)
	f, err := os.OpenFile(redisConfPath(inst), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	return errors.Join(err, f.Close())
}

// StartRedisCluster starts m.Cluster's nodes in dir and joins them:
// replicas follow node1 until their initial sync is done, or the Redis
// Cluster's primaries own their even share of the slots and its replicas
// follow them. On failure every node started is removed again.
func StartRedisCluster(ctx context.Context, dir string, m Managed) (*RedisCluster, error) {
	if m.Cluster == nil {
		return nil, errors.New("redis cluster: managed.cluster is not set")
	}
	if err := CheckRedisCluster(m.Cluster, m.Settings); err != nil {
		return nil, err
	}
	if m.Host != "" || m.Port != 0 {
		return nil, errors.New("managed.host, managed.port: a cluster's nodes get their hosts from managed.cluster.hosts and free ports of their own; remove host and port")
	}
	rc := &RedisCluster{mode: m.Cluster.ModeOr(RedisModeReplicas), dir: dir, base: m, spec: m.Cluster, password: randomPassword()}
	rc.base.Cluster, rc.base.Placement = nil, nil
	n := m.Cluster.NodeCount()
	primaries := n
	if rc.mode == RedisModeCluster {
		primaries = n / max(m.Cluster.ReplicationFactor, 1)
	}
	err := func() error {
		for i := range n {
			var place *Placement
			if i < len(m.Cluster.Placements) {
				place = m.Cluster.Placements[i]
			}
			role := "replica"
			switch {
			case rc.mode == RedisModeReplicas && i == 0:
				role = "primary"
			case rc.mode == RedisModeCluster && i < primaries:
				role = "member"
			}
			if _, err := rc.startNode(ctx, place, role); err != nil {
				return err
			}
		}
		if rc.mode == RedisModeCluster {
			return rc.form(ctx, primaries)
		}
		for _, nd := range rc.nodes[1:] {
			if err := nd.waitReplica(ctx); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		_ = rc.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("redis %s of %d nodes: %w", rc.mode, n, err)
	}
	return rc, nil
}

// startNode starts the next node on place (nil = this machine) in the
// given role and adds it to the cluster's list. A replicas-mode replica
// starts following the primary at once; a Redis Cluster node starts empty
// and alone.
func (rc *RedisCluster) startNode(ctx context.Context, place *Placement, role string) (*redisNode, error) {
	rc.mu.Lock()
	rc.seq++
	name := NodeName(rc.seq - 1)
	var primary *redisNode
	if rc.mode == RedisModeReplicas && len(rc.nodes) > 0 {
		primary = rc.nodes[0]
	}
	rc.mu.Unlock()
	host := ""
	if place != nil {
		host = place.Host
	}
	m := rc.base
	m.Placement = place
	m.Settings = rc.spec.SettingsFor(rc.base.Settings, name, host)
	busPort := 0
	if rc.mode == RedisModeCluster {
		var err error
		if busPort, err = FreePort(); err != nil {
			return nil, err
		}
	}
	recipe := redisNodeRecipe{password: rc.password, extra: func(inst *Instance) []string {
		var lines []string
		if !hasSetting(m.Settings, "repl-diskless-sync-delay") {
			// A primary otherwise waits 5 s for more replicas before it
			// streams its snapshot to a new one.
			lines = append(lines, "repl-diskless-sync-delay 0")
		}
		if rc.mode == RedisModeCluster {
			// A primary that gives its last slot away would otherwise
			// turn into a replica of the node that took it, in the
			// middle of remove_node.
			return append(lines, "cluster-enabled yes",
				fmt.Sprintf("cluster-config-file %q", filepath.Join(inst.DataDir(), "nodes.conf")),
				"cluster-port "+strconv.Itoa(busPort), "cluster-allow-replica-migration no")
		}
		if primary != nil {
			lines = append(lines, fmt.Sprintf("replicaof %s %d", primary.Inst.Host, primary.Inst.Port))
		}
		return lines
	}}
	inst, err := Start(ctx, recipe, filepath.Join(rc.dir, name), m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	nd := &redisNode{Node: Node{Name: name, Host: host, Role: role, Inst: inst}, busPort: busPort, admin: redisAdmin(inst)}
	if rc.mode == RedisModeCluster {
		id, err := nd.do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			_ = nd.remove(ctx)
			return nil, fmt.Errorf("%s: CLUSTER MYID: %w", name, err)
		}
		nd.id = id
	}
	rc.mu.Lock()
	rc.nodes = append(rc.nodes, nd)
	rc.mu.Unlock()
	return nd, nil
}

func hasSetting(settings map[string]string, name string) bool {
	for k := range settings {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// redisAdmin is one connection to inst for setting the cluster up.
func redisAdmin(inst *Instance) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr: inst.Addr(), Password: inst.Password, Protocol: 2, PoolSize: 1,
		MaxRetries: -1, DialTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
}

func (nd *redisNode) do(ctx context.Context, args ...any) *redis.Cmd {
	return nd.admin.Do(ctx, args...)
}

// remove closes the admin connection, stops the server and removes its data.
func (nd *redisNode) remove(ctx context.Context) error {
	_ = nd.admin.Close()
	return nd.Inst.Remove(ctx)
}

func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// waitReplica waits until the replica's link to its primary is up and its
// initial sync is done.
func (nd *redisNode) waitReplica(ctx context.Context) error {
	return waitFor(ctx, time.Minute, nd.Name+" to finish its sync with the primary", func() (bool, string, error) {
		s, err := nd.admin.Info(ctx, "replication").Result()
		if err != nil {
			return false, err.Error(), nil
		}
		link, sync := infoField(s, "master_link_status"), infoField(s, "master_sync_in_progress")
		return link == "up" && sync == "0", "master_link_status " + link + ", master_sync_in_progress " + sync, nil
	})
}

// waitFor polls cond every 50 ms until it holds, fails, or limit or ctx
// ends; the error then says what was awaited and the last state seen.
func waitFor(ctx context.Context, limit time.Duration, what string, cond func() (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	last := ""
	for {
		ok, state, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		last = state
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited %v for %s; last seen: %s", limit, what, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Mode is RedisModeReplicas or RedisModeCluster.
func (rc *RedisCluster) Mode() string { return rc.mode }

// Password is the password of every node's default user.
func (rc *RedisCluster) Password() string { return rc.password }

// Nodes lists the nodes now, in start order.
func (rc *RedisCluster) Nodes() []Node {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]Node, len(rc.nodes))
	for i, nd := range rc.nodes {
		out[i] = nd.Node
	}
	return out
}

// Addrs are the nodes' host:port addresses, in start order.
func (rc *RedisCluster) Addrs() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]string, len(rc.nodes))
	for i, nd := range rc.nodes {
		out[i] = nd.Inst.Addr()
	}
	return out
}

// Primary is node1 in replicas mode (after a failover the promoted
// replica), the node every write goes to.
func (rc *RedisCluster) Primary() *Instance {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.nodes) == 0 {
		return nil
	}
	return rc.nodes[0].Inst
}

// PIDs are the running nodes' server processes.
func (rc *RedisCluster) PIDs() []int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []int
	for _, nd := range rc.nodes {
		if pid := nd.Inst.PID(); pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// Remove stops every node and removes its data (the logs stay).
func (rc *RedisCluster) Remove(ctx context.Context) error {
	rc.mu.Lock()
	nodes := append(rc.nodes, rc.lost...)
	rc.nodes, rc.lost = nil, nil
	rc.mu.Unlock()
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, nd := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = nd.remove(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// node finds a node by its name or its lab host's name.
func (rc *RedisCluster) node(name string) (*redisNode, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	names := make([]string, 0, len(rc.nodes))
	for _, nd := range rc.nodes {
		if nd.Name == name || nd.Host != "" && nd.Host == name {
			return nd, nil
		}
		names = append(names, nd.Name)
	}
	return nil, fmt.Errorf("remove_node: the redis cluster has no node %q; its nodes are %s", name, strings.Join(names, ", "))
}

// drop takes nd out of the node list.
func (rc *RedisCluster) drop(nd *redisNode) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, x := range rc.nodes {
		if x == nd {
			rc.nodes = append(rc.nodes[:i:i], rc.nodes[i+1:]...)
			return
		}
	}
}

// AddNode starts a node on place (nil = this machine) and returns once it
// serves. In replicas mode it is a new replica of node1, done when its link
// is up and its initial sync has finished; BytesStreamed is the size of the
// snapshot it received. In cluster mode it is a new primary that joins the
// cluster and takes an even share of the slots from the others (see
// reshard); BytesStreamed is the moved keys' MEMORY USAGE on their donors.
func (rc *RedisCluster) AddNode(ctx context.Context, place *Placement) (NodeChange, error) {
	ch := NodeChange{Action: "add_node", Requested: time.Now(), BytesStreamed: -1}
	if place != nil {
		ch.Host = place.Host
	}
	role := "replica"
	if rc.mode == RedisModeCluster {
		role = "member"
	}
	nd, err := rc.startNode(ctx, place, role)
	if err != nil {
		ch.Error = err.Error()
		return ch, err
	}
	ch.Node, ch.Started = nd.Name, time.Now()
	fail := func(err error) (NodeChange, error) {
		ch.Error = err.Error()
		return ch, fmt.Errorf("add_node %s: %w", nd.Name, err)
	}
	if rc.mode == RedisModeReplicas {
		if err := nd.waitReplica(ctx); err != nil {
			return fail(err)
		}
		ch.Done = time.Now()
		if fi, err := os.Stat(redisDumpPath(nd.Inst)); err == nil {
			ch.BytesStreamed = fi.Size()
		}
		ch.Detail = fmt.Sprintf("%s joined as a replica of %s on %s; initial sync took %v", nd.Name, rc.Primary().Addr(), nd.Inst.Addr(), ch.Done.Sub(ch.Started).Round(time.Millisecond))
		return ch, nil
	}
	if err := rc.join(ctx, nd); err != nil {
		return fail(err)
	}
	mv, err := rc.reshard(ctx, nil)
	ch.BytesStreamed = mv.bytes
	if err != nil {
		return fail(err)
	}
	ch.Done = time.Now()
	ch.Detail = fmt.Sprintf("%s joined as a primary on %s and took %d slots (%d keys) from %s in %v", nd.Name, nd.Inst.Addr(), mv.slots, mv.keys, strings.Join(mv.donors, ", "), ch.Done.Sub(ch.Started).Round(time.Millisecond))
	return ch, nil
}

// drainGrace is how long a primary that gave its slots away keeps running
// before it stops, redirecting the clients that still send it requests.
const drainGrace = time.Second

// RemoveNode takes the node named name (or on the lab host name) out and
// stops it. In replicas mode only a replica can go (the primary takes
// every write; a promote event fails over first). In cluster mode a primary's
// slots move to the other primaries first (a primary with replicas cannot
// go, nor the last one); then every other node forgets it.
func (rc *RedisCluster) RemoveNode(ctx context.Context, name string) (NodeChange, error) {
	ch := NodeChange{Action: "remove_node", Node: name, Requested: time.Now(), BytesStreamed: -1}
	fail := func(err error) (NodeChange, error) {
		ch.Error = err.Error()
		return ch, err
	}
	nd, err := rc.node(name)
	if err != nil {
		return fail(err)
	}
	ch.Node, ch.Host, ch.Started = nd.Name, nd.Host, time.Now()
	detail := ""
	if rc.mode == RedisModeReplicas {
		if nd.Role == "primary" {
			return fail(fmt.Errorf("remove_node: %s is the primary, which takes every write; remove a replica, or promote one first", nd.Name))
		}
		detail = fmt.Sprintf("replica %s stopped", nd.Name)
	} else {
		if nd.Role == "member" {
			if err := rc.checkRemovable(ctx, nd); err != nil {
				return fail(err)
			}
			mv, err := rc.reshard(ctx, nd)
			ch.BytesStreamed = mv.bytes
			if err != nil {
				return fail(fmt.Errorf("remove_node %s: %w", nd.Name, err))
			}
			detail = fmt.Sprintf("%s gave %d slots (%d keys) to %s, ", nd.Name, mv.slots, mv.keys, strings.Join(mv.takers, ", "))
		}
		if err := rc.forget(ctx, nd); err != nil {
			return fail(fmt.Errorf("remove_node %s: %w", nd.Name, err))
		}
		if nd.Role == "member" {
			// Clients whose slot map still names the node get -MOVED
			// from it to the new owners while it runs, and reload
			// their map; once it stops they would get refused
			// connections instead.
			select {
			case <-time.After(drainGrace):
			case <-ctx.Done():
			}
		}
		detail += fmt.Sprintf("forgotten by the other nodes, answered -MOVED for %v, and stopped", drainGrace)
	}
	rc.drop(nd)
	rc.mu.Lock()
	onStop := rc.onStop
	rc.mu.Unlock()
	if onStop != nil {
		onStop(ctx, nd.Node)
	}
	if err := nd.remove(ctx); err != nil {
		return fail(fmt.Errorf("remove_node %s: %w", nd.Name, err))
	}
	ch.Done = time.Now()
	ch.Detail = fmt.Sprintf("%s in %v", detail, ch.Done.Sub(ch.Requested).Round(time.Millisecond))
	return ch, nil
}
