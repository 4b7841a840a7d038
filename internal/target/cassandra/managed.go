package cassandra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// Managed is a Target with its own cluster: it adds what only a cluster
// Headroom runs has (its processes, adding and removing nodes).
type Managed struct {
	*Target
	cluster *deploy.CassandraCluster
	env     registry.Env
}

// openManaged starts the cluster (its nodes on the lab hosts named by
// managed.cluster.hosts or managed.host, else on loopback addresses) and
// connects to it as the role the cluster created.
func openManaged(opts Options, env registry.Env) (*Managed, error) {
	m, err := env.Managed(opts.Managed)
	if err == nil {
		m, err = env.ClusterPlacements(m)
	}
	if err != nil {
		return nil, fmt.Errorf("cassandra target: %w", err)
	}
	opts.Managed = m
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(m.Cluster.NodeCount())*4*time.Minute)
	defer cancel()
	cl, err := deploy.StartCassandra(ctx, env.InstanceDir("cassandra"), *m)
	if err != nil {
		return nil, fmt.Errorf("cassandra target: managed: %w", err)
	}
	t, err := open(opts, cl.ContactPoints(), cl.User(), cl.Password())
	if err != nil {
		return nil, errors.Join(err, cl.Remove())
	}
	return &Managed{Target: t, cluster: cl, env: env}, nil
}

// Credentials are the role the workload logs in as and its generated
// password, for load agents (sent only over their connections).
func (m *Managed) Credentials() (user, password string) {
	return m.cluster.User(), m.cluster.Password()
}

// Cluster is the managed cluster.
func (m *Managed) Cluster() *deploy.CassandraCluster { return m.cluster }

// Close closes the sessions, then stops the nodes and removes their data
// (their logs stay).
func (m *Managed) Close() error {
	return errors.Join(m.Target.Close(), m.cluster.Remove())
}

// ServerPIDs implements target.ServerProcesses: every running node.
func (m *Managed) ServerPIDs() []int { return m.cluster.PIDs() }

// Ephemeral implements target.Ephemeral: each session starts its own
// empty cluster, so a resumed campaign populates it again.
func (m *Managed) Ephemeral() bool { return true }

// Nodes implements target.NodeScaler.
func (m *Managed) Nodes() []deploy.Node { return m.cluster.Nodes() }

// AddNode implements target.NodeScaler: the node bootstraps into the ring
// on host (a lab host; "" = the next loopback address), and AddNode
// returns once the workload's session routes requests to it.
func (m *Managed) AddNode(ctx context.Context, host string) (deploy.NodeChange, error) {
	var p *deploy.Placement
	if host != "" {
		if m.env.Lab == nil {
			return deploy.NodeChange{Action: "add_node", Host: host}, fmt.Errorf("add_node: host %s is a lab host, but the campaign has no lab", host)
		}
		var err error
		if p, err = m.env.Lab(host); err != nil {
			return deploy.NodeChange{Action: "add_node", Host: host}, fmt.Errorf("add_node: %w", err)
		}
	}
	before := m.cluster.ContactPoints()
	ch, err := m.cluster.AddNode(ctx, p)
	if err != nil {
		return ch, err
	}
	for _, addr := range m.cluster.ContactPoints() {
		if !slices.Contains(before, addr) {
			if err := m.waitRouted(ctx, addr, true); err != nil {
				err = fmt.Errorf("add_node: %s joined the ring, but %w", ch.Node, err)
				ch.Error = err.Error()
				return ch, err
			}
		}
	}
	return ch, nil
}

// RemoveNode implements target.NodeScaler: the node (by name or lab host)
// is decommissioned, stopped and its data removed; RemoveNode returns once
// the workload's session no longer routes to it.
func (m *Managed) RemoveNode(ctx context.Context, node string) (deploy.NodeChange, error) {
	name, addr := node, ""
	for _, n := range m.cluster.Nodes() {
		if n.Name == node || n.Host != "" && n.Host == node {
			name, addr = n.Name, n.Inst.Addr()
		}
	}
	ch, err := m.cluster.RemoveNode(ctx, name)
	if err != nil || addr == "" {
		return ch, err
	}
	if err := m.waitRouted(ctx, addr, false); err != nil {
		ch.Error = err.Error()
		return ch, err
	}
	return ch, nil
}

// routeWait bounds how long the driver may take to learn of a node that
// joined or left: it hears of both from the cluster's topology events
// on its control connection, normally within a second or two.
const routeWait = time.Minute

// waitRouted waits until the workload session sends requests to the
// node at addr (in: a query pinned to it succeeds, which needs the
// driver's connection pool to it, filled after the node is up) or no
// longer lists it as up (!in).
func (m *Managed) waitRouted(ctx context.Context, addr string, in bool) error {
	ctx, cancel := context.WithTimeout(ctx, routeWait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if in && m.answers(ctx, addr) || !in && !slices.Contains(m.hostAddrs(true), addr) {
			return nil
		}
		select {
		case <-ctx.Done():
			if in {
				return fmt.Errorf("the driver did not route to the node at %s within %v", addr, routeWait)
			}
			return fmt.Errorf("remove_node: the node at %s left the ring, but the driver still routed to it after %v", addr, routeWait)
		case <-tick.C:
		}
	}
}

// answers reports whether the workload session can send the node at addr
// a request.
func (m *Managed) answers(ctx context.Context, addr string) bool {
	m.mu.Lock()
	sess := m.sess
	m.mu.Unlock()
	if sess == nil {
		return slices.Contains(m.hostAddrs(true), addr)
	}
	for _, h := range sess.GetHosts() {
		if h.IsUp() && net.JoinHostPort(h.ConnectAddress().String(), strconv.Itoa(h.Port())) == addr {
			var v string
			return sess.Query("SELECT release_version FROM system.local").SetHostID(h.HostID()).
				Consistency(gocql.One).ScanContext(ctx, &v) == nil
		}
	}
	return false
}

// StartServer implements target.ServerStarter: every node that is not
// running (after a kill event) starts again on its address and data and
// rejoins the ring; it returns once each answers CQL and the driver
// routes to it again.
func (m *Managed) StartServer(ctx context.Context) error {
	for _, n := range m.cluster.Nodes() {
		if n.Inst.Running() {
			continue
		}
		if err := n.Inst.Restart(ctx); err != nil {
			return fmt.Errorf("cassandra target: starting %s again: %w", n.Name, err)
		}
		if err := m.waitRouted(ctx, n.Inst.Addr(), true); err != nil {
			return fmt.Errorf("cassandra target: %s started again, but %w", n.Name, err)
		}
	}
	return nil
}
