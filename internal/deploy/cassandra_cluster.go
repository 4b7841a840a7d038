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
)

// CassandraCluster is a ring of managed Cassandra nodes (cassandra.go):
// one node per lab host, or, without the lab, node i on the loopback
// address 127.0.0.(i+1) with the cluster's ports. Nodes start one after
// another, each bootstrapping into the ring the earlier ones form. The
// workload logs in as User() with Password(), a role the cluster creates
// in place of Cassandra's default cassandra/cassandra superuser. Nodes can
// join (AddNode) and leave (RemoveNode) while a run goes on, for the
// spec's add_node and remove_node events.
type CassandraCluster struct {
	dir       string
	base      Managed
	password  string
	storage   int // storage port, the same on every node
	native    int // native (CQL) port, the same on every node
	lab       bool
	java      string
	classpath string

	ops sync.Mutex // one AddNode or RemoveNode at a time

	mu      sync.Mutex
	members []*cassandraMember // in the ring, in start order
	created int                // nodes ever started, for names and loopback addresses
}

type cassandraMember struct {
	node   Node
	recipe *cassandraNode
}

// CassandraUser is the role the workload logs in as.
const CassandraUser = "headroom"

// cassandraClusterName is every managed cluster's cluster_name.
const cassandraClusterName = "headroom"

// Ports of a node on its own lab host, where nothing else listens; on
// this machine the cluster picks free ones.
const (
	cassandraStoragePort = 7000
	cassandraNativePort  = 9042
	cassandraJMXPort     = 7199
)

// cassandraNodeStart bounds one initial node's start and join: about 10 s
// on an idle 2-core machine, several times that while other nodes start.
const cassandraNodeStart = 3 * time.Minute

// cassandraJoinTimeout bounds AddNode's bootstrap, which streams the new
// node's share of the data set.
const cassandraJoinTimeout = time.Hour

// cassandraRingDelay is the ring delay of the nodes a cluster starts with:
// they join idle seeds on one machine or a lab bridge, where gossip
// arrives within a second or two, so the default 30 s would only slow
// every start.
const cassandraRingDelay = 3 * time.Second

// cassandraJoinRingDelay is the ring delay of a node added to a running
// cluster (AddNode). Its seeds may be saturated by the very load that
// asked for it, and a node's first gossip with them (the shadow round) is
// given up, and the node exits with "Unable to gossip with any peers",
// after one ring delay. A seed at a quarter of a vCPU under 2,500 req/s
// took over 5 s just to accept the connection, so 3 s failed the join;
// the price is 15 s of the join's pending-range wait, half the default.
const cassandraJoinRingDelay = 15 * time.Second

// StartCassandra starts a Cassandra cluster in dir (one subdirectory per
// node, named like the node): m.Cluster's node count (nil = one node), on
// m.Cluster.Placements (one node per lab host) or m.Placement for a single
// node, else on loopback addresses. Nodes start one after another; each
// is waited for until its native port answers and it reports itself UN
// (up, normal). Then the workload's role is created and the default
// superuser dropped. On failure everything started is removed.
func StartCassandra(ctx context.Context, dir string, m Managed) (*CassandraCluster, error) {
	java, err := Java()
	if err != nil {
		return nil, err
	}
	cp, err := Classpath("cassandra")
	if err != nil {
		return nil, err
	}
	count := m.Cluster.NodeCount()
	places := []*Placement{m.Placement}
	if m.Cluster != nil {
		places = make([]*Placement, count)
		if len(m.Cluster.Placements) > 0 {
			if len(m.Cluster.Placements) < count {
				return nil, fmt.Errorf("managed.cluster: %d nodes need %d lab hosts named %s*, the lab has %d; add hosts or lower cluster.nodes", count, count, m.Cluster.Hosts, len(m.Cluster.Placements))
			}
			copy(places, m.Cluster.Placements)
		}
	}
	if err := CheckCassandraSettings(m.Settings); err != nil {
		return nil, err
	}
	c := &CassandraCluster{dir: dir, base: m, password: randomPassword(), java: java, classpath: cp,
		lab: places[0] != nil, storage: cassandraStoragePort, native: cassandraNativePort}
	if m.Port != 0 {
		c.native = m.Port
	}
	if !c.lab {
		if c.storage, err = FreePort(); err != nil {
			return nil, err
		}
		if m.Port == 0 {
			if c.native, err = FreePort(); err != nil {
				return nil, err
			}
		}
	}
	// system_auth gets min(3, nodes) replicas from the start, so that the
	// workload's login survives a node's failure without a repair.
	authRF := min(3, count)
	for i, p := range places {
		if (p != nil) != c.lab {
			return nil, fmt.Errorf("managed.cluster: node %d has no lab host while the others have one; give every node a host or none", i+1)
		}
		var seeds []string
		if i > 0 {
			seeds = []string{c.members[0].node.Inst.Host}
		}
		timeout := m.StartTimeout
		if timeout <= 0 {
			timeout = cassandraNodeStart
		}
		if _, err := c.startNode(ctx, p, seeds, authRF, cassandraRingDelay, timeout); err != nil {
			return nil, errors.Join(err, c.Remove())
		}
	}
	if err := c.setupRoles(ctx); err != nil {
		return nil, errors.Join(err, c.Remove())
	}
	return c, nil
}

// startNode starts the next node on p (nil: the next loopback address)
// with seeds (none: the node is the first and seeds itself) and waits
// until it is UN. The node joins the members when it runs, even if the
// wait fails, so that Remove stops it.
func (c *CassandraCluster) startNode(ctx context.Context, p *Placement, seeds []string, authRF int, ringDelay, timeout time.Duration) (*cassandraMember, error) {
	c.mu.Lock()
	idx := c.created
	c.created++
	c.mu.Unlock()
	name := NodeName(idx)
	host := ""
	place := p
	if p == nil {
		if idx > 250 {
			return nil, fmt.Errorf("cassandra: no loopback address left for %s", name)
		}
		place = &Placement{Address: "127.0.0." + strconv.Itoa(idx+1), ClientAddress: "127.0.0.1"}
	} else {
		host = p.Host
	}
	if len(seeds) == 0 {
		seeds = []string{place.Address}
	}
	settings := c.base.Cluster.SettingsFor(c.base.Settings, name, host)
	if err := CheckCassandraSettings(settings); err != nil {
		return nil, fmt.Errorf("managed.cluster.node_settings of %s: %w", name, err)
	}
	jmx := cassandraJMXPort
	if !c.lab {
		var err error
		if jmx, err = FreePort(); err != nil {
			return nil, err
		}
	}
	recipe := &cassandraNode{name: name, cluster: cassandraClusterName, seeds: seeds, storage: c.storage,
		jmxPort: jmx, jmxRemote: c.lab, heapMiB: cassandraHeapMiB(settings, p), authRF: authRF,
		ringDelay: ringDelay, java: c.java, classpath: c.classpath}
	nodeDir := filepath.Join(c.dir, name)
	inst, err := Start(ctx, recipe, nodeDir, Managed{Settings: settings, Port: c.native, Keep: c.base.Keep,
		StartTimeout: timeout, Placement: place})
	if err != nil {
		c.discardFailedStart(nodeDir, place)
		return nil, fmt.Errorf("cassandra %s: %w", name, err)
	}
	inst.User, inst.Password = CassandraUser, c.password
	if err := os.WriteFile(filepath.Join(inst.Dir, "nodetool-logback.xml"), []byte(nodetoolLogback), 0o644); err != nil {
		_ = inst.Remove(context.Background())
		return nil, err
	}
	mem := &cassandraMember{node: Node{Name: name, Host: host, Role: "member", Inst: inst}, recipe: recipe}
	c.mu.Lock()
	c.members = append(c.members, mem)
	c.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.waitNormal(wctx, mem); err != nil {
		return mem, fmt.Errorf("cassandra %s answers CQL but is not UN: %w; its log is %s", name, err, inst.LogPath())
	}
	return mem, nil
}

// discardFailedStart removes what a node that did not start left behind
// (Start returns no instance then), except its log.
func (c *CassandraCluster) discardFailedStart(nodeDir string, p *Placement) {
	if c.base.Keep {
		return
	}
	entries, _ := os.ReadDir(nodeDir)
	for _, e := range entries {
		if e.Name() != "server.log" {
			_ = os.RemoveAll(filepath.Join(nodeDir, e.Name()))
		}
	}
	if p != nil && p.DataDir != "" {
		// Start's name for an instance's data directory on a volume.
		_ = os.RemoveAll(filepath.Join(p.DataDir, "cassandra-"+strconv.Itoa(c.native)))
	}
}

// waitNormal polls nodetool status on the node until it reports itself
// UN.
func (c *CassandraCluster) waitNormal(ctx context.Context, mem *cassandraMember) error {
	var last error
	for {
		st, err := c.statusVia(ctx, mem)
		if err == nil {
			if s := st[mem.node.Name]; s == "UN" {
				return nil
			} else {
				last = fmt.Errorf("nodetool status says %q", s)
			}
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(time.Second):
		}
	}
}

// setupRoles replaces Cassandra's default superuser (cassandra/cassandra,
// which the first node creates once system_auth has a quorum) with the
// workload's role and its generated password.
func (c *CassandraCluster) setupRoles(ctx context.Context) error {
	addr := c.members[0].node.Inst.Addr()
	deadline := time.Now().Add(2 * time.Minute)
	var conn *cqlConn
	var err error
	for {
		if conn, err = cqlDial(ctx, addr, "cassandra", "cassandra"); err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("cassandra: the default superuser did not appear on %s: %v", c.members[0].node.Name, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = conn.query(qctx, fmt.Sprintf("CREATE ROLE IF NOT EXISTS %s WITH PASSWORD = '%s' AND LOGIN = true AND SUPERUSER = true", CassandraUser, c.password), cqlQuorum)
	conn.Close()
	if err != nil {
		return fmt.Errorf("cassandra: creating the workload's role: %s", c.redact(err))
	}
	for {
		if conn, err = cqlDial(ctx, addr, CassandraUser, c.password); err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("cassandra: logging in as %s: %s", CassandraUser, c.redact(err))
		}
		time.Sleep(500 * time.Millisecond)
	}
	defer conn.Close()
	if _, err := conn.query(qctx, "DROP ROLE IF EXISTS cassandra", cqlQuorum); err != nil {
		return fmt.Errorf("cassandra: dropping the default superuser: %w", err)
	}
	// Nodes cache credentials for 2 s (credentials_validity): wait until
	// the default login is refused, so nobody uses it after we return.
	for {
		d, err := cqlDial(ctx, addr, "cassandra", "cassandra")
		var se *cqlServerError
		if errors.As(err, &se) && se.Code == cqlBadCredentials {
			return nil
		}
		if d != nil {
			d.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("cassandra: the default superuser still logs in after it was dropped (%v)", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// redact keeps the password out of an error the node may have echoed.
func (c *CassandraCluster) redact(err error) string {
	return strings.ReplaceAll(err.Error(), c.password, "***")
}

// Nodes lists the ring's members in start order (Role "member").
func (c *CassandraCluster) Nodes() []Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Node, len(c.members))
	for i, m := range c.members {
		out[i] = m.node
	}
	return out
}

// ContactPoints are host:port of every member's native (CQL) port.
func (c *CassandraCluster) ContactPoints() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.members))
	for i, m := range c.members {
		out[i] = m.node.Inst.Addr()
	}
	return out
}

// User is the role the workload logs in as.
func (c *CassandraCluster) User() string { return CassandraUser }

// Password is the workload role's generated password; it lives only in
// memory (never in a file, log or the results).
func (c *CassandraCluster) Password() string { return c.password }

// PIDs are the members' server processes that are running.
func (c *CassandraCluster) PIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, m := range c.members {
		if pid := m.node.Inst.PID(); pid != 0 {
			out = append(out, pid)
		}
	}
	return out
}

// Stop stops every member (they keep their data), all at once.
func (c *CassandraCluster) Stop(ctx context.Context) error {
	return c.each(func(m *cassandraMember) error { return m.node.Inst.Stop(ctx) })
}

// Remove stops every member and deletes its data (unless managed.keep),
// keeping the server logs.
func (c *CassandraCluster) Remove() error {
	return c.each(func(m *cassandraMember) error { return m.node.Inst.Remove(context.Background()) })
}

func (c *CassandraCluster) each(f func(*cassandraMember) error) error {
	c.mu.Lock()
	members := append([]*cassandraMember(nil), c.members...)
	c.mu.Unlock()
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(m); err != nil {
				errs[i] = fmt.Errorf("cassandra %s: %w", m.node.Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// AddNode starts a new node on p (nil: the next loopback address, for a
// cluster on this machine) and waits until it has bootstrapped into the
// ring: joining, then normal. Started is when its storage port first
// answered (it gossips and streams), Done when it reports itself UN and
// answers CQL; BytesStreamed is what it received while bootstrapping, from
// its system_views.streaming table (-1 if unknown).
func (c *CassandraCluster) AddNode(ctx context.Context, p *Placement) (NodeChange, error) {
	c.ops.Lock()
	defer c.ops.Unlock()
	ch := NodeChange{Action: "add_node", Requested: time.Now(), BytesStreamed: -1}
	if p != nil {
		ch.Host = p.Host
	}
	fail := func(err error) (NodeChange, error) {
		ch.Error = err.Error()
		return ch, err
	}
	if (p != nil) != c.lab {
		if c.lab {
			return fail(fmt.Errorf("add_node: the cassandra cluster runs on lab hosts; name a lab host for the new node"))
		}
		return fail(fmt.Errorf("add_node: the cassandra cluster runs on this machine's loopback addresses, which lab host %s cannot reach; run the cluster on lab hosts (cluster.hosts)", p.Host))
	}
	seeds := c.seeds()
	if len(seeds) == 0 {
		return fail(fmt.Errorf("add_node: the cassandra cluster has no node left to join"))
	}
	timeout := cassandraJoinTimeout
	c.mu.Lock()
	ch.Node = NodeName(c.created)
	authRF := min(3, len(c.members))
	c.mu.Unlock()
	mem, err := c.startNode(ctx, p, seeds, authRF, cassandraJoinRingDelay, timeout)
	if mem != nil {
		ch.Started = mem.recipe.listeningSince()
	}
	if err != nil {
		if mem != nil {
			// A node that did not finish joining is stopped, so that the
			// ring goes back to what it was (the others forget a
			// joining node that goes away).
			c.forget(mem)
			err = errors.Join(err, mem.node.Inst.Remove(context.Background()))
		}
		return fail(err)
	}
	ch.Done = time.Now()
	if ch.Started.IsZero() {
		ch.Started = ch.Done
	}
	if n, err := c.streamed(ctx, mem, "Bootstrap", true); err == nil {
		ch.BytesStreamed = n
	}
	ch.Detail = fmt.Sprintf("%s joined the ring at %s in %.1f s after it came up (%s streamed)", ch.Node,
		mem.node.Inst.Host, ch.Done.Sub(ch.Started).Seconds(), bytesText(ch.BytesStreamed))
	return ch, nil
}

// seeds are up to three running members' addresses, which a new node
// contacts to join (the first node may be gone by now).
func (c *CassandraCluster) seeds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.members {
		if m.node.Inst.Running() && len(out) < 3 {
			out = append(out, m.node.Inst.Host)
		}
	}
	return out
}

// RemoveNode decommissions the named member (it streams its ranges to the
// others and leaves the ring), then stops it and deletes its data. Started
// is when the decommission began, Done when the node is out and stopped;
// BytesStreamed is what the remaining members received from it (-1 if
// unknown). Cassandra refuses when the remaining nodes are fewer than a
// keyspace's replication factor; that error is returned as it says it.
func (c *CassandraCluster) RemoveNode(ctx context.Context, name string) (NodeChange, error) {
	c.ops.Lock()
	defer c.ops.Unlock()
	ch := NodeChange{Action: "remove_node", Node: name, Requested: time.Now(), BytesStreamed: -1}
	fail := func(err error) (NodeChange, error) {
		ch.Error = err.Error()
		return ch, err
	}
	c.mu.Lock()
	var mem *cassandraMember
	running := 0
	for _, m := range c.members {
		if m.node.Name == name {
			mem = m
		}
		if m.node.Inst.Running() {
			running++
		}
	}
	c.mu.Unlock()
	if mem == nil {
		return fail(fmt.Errorf("remove_node: the cassandra cluster has no node %q; its nodes are %s", name, strings.Join(c.names(), ", ")))
	}
	ch.Host = mem.node.Host
	if !mem.node.Inst.Running() {
		return fail(fmt.Errorf("remove_node: cassandra %s is not running, so it cannot hand its data over; start it again first", name))
	}
	if running < 2 {
		return fail(fmt.Errorf("remove_node: cassandra %s is the cluster's last running node", name))
	}
	// Cassandra refuses a decommission while any keyspace keeps at least
	// as many copies as the ring has nodes, its own system_distributed (3
	// copies) and system_traces (2) too, so a ring of 2 or 3 nodes could
	// never shrink. The workload's keyspaces are checked here instead, and
	// the decommission is forced past the system keyspaces' check. When
	// the replication cannot be read, Cassandra's own check stands.
	decommission := []string{"decommission"}
	if ks, err := c.replication(ctx, mem); err == nil {
		for _, k := range ks {
			if k.copies > running-1 {
				left := fmt.Sprintf("%d nodes would be left", running-1)
				if running-1 == 1 {
					left = "1 node would be left"
				}
				return fail(fmt.Errorf("remove_node: keyspace %s keeps %d copies of each row and %s; lower its replication factor or keep %s", k.name, k.copies, left, name))
			}
		}
		decommission = append(decommission, "--force")
	}
	ch.Started = time.Now()
	if _, err := c.nodetool(ctx, mem, decommission...); err != nil {
		return fail(fmt.Errorf("remove_node: decommissioning cassandra %s: %w", name, err))
	}
	c.forget(mem)
	c.mu.Lock()
	others := append([]*cassandraMember(nil), c.members...)
	c.mu.Unlock()
	ch.BytesStreamed = c.decommissionBytes(ctx, mem, others)
	if err := mem.node.Inst.Remove(ctx); err != nil {
		return fail(fmt.Errorf("remove_node: cassandra %s left the ring but did not stop cleanly: %w", name, err))
	}
	ch.Done = time.Now()
	ch.Detail = fmt.Sprintf("%s left the ring in %.1f s (%s streamed to the others)", name,
		ch.Done.Sub(ch.Started).Seconds(), bytesText(ch.BytesStreamed))
	return ch, nil
}

// forget takes mem out of the members.
func (c *CassandraCluster) forget(mem *cassandraMember) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range c.members {
		if m == mem {
			c.members = append(c.members[:i:i], c.members[i+1:]...)
			return
		}
	}
}

// decommissionBytes is what a node that left sent in its Unbootstrap
// streams, as its own streaming table says (the receivers record such a
// stream without its byte counts), else what the others say they
// received from it; -1 when neither answers.
func (c *CassandraCluster) decommissionBytes(ctx context.Context, left *cassandraMember, others []*cassandraMember) int64 {
	if n, err := c.streamed(ctx, left, "Unbootstrap", false); err == nil {
		return n
	}
	var total int64
	for _, o := range others {
		n, err := c.streamedFrom(ctx, o, left.node.Inst.Host)
		if err != nil {
			return -1
		}
		total += n
	}
	return total
}

func (c *CassandraCluster) names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.members))
	for i, m := range c.members {
		out[i] = m.node.Name
	}
	return out
}

// bytesText is a byte count for a detail line.
func bytesText(n int64) string {
	switch {
	case n < 0:
		return "unknown bytes"
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
