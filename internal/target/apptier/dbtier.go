package apptier

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/apptier"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// The database tier as a cluster (db.cluster): a PostgreSQL primary with
// streaming replicas (internal/deploy/pgcluster.go), as the n-tier systems
// of seed 003 put web and application servers in front of replicated
// databases and balance reads over the replicas. Every application server
// writes to the primary; with db.reads: replicas it sends reads and scans
// round-robin over the replicas the target lists to it (POST
// /admin/replicas, internal/apptier/replicas.go). add_node on a lab host of
// the database tier (db.cluster.hosts, or that prefix and digits) adds a
// replica; remove_node of a replica takes it out of every application
// server's list before it stops.

// startCluster starts db.cluster's nodes: on the lab hosts of the database
// tier in the lab's order, or on this machine without a lab.
func (t *Target) startCluster(ctx context.Context, env registry.Env) error {
	c := *t.opts.DB.Cluster
	c.Placements = nil
	if env.Lab != nil {
		prefix := t.opts.DB.clusterHosts()
		var names []string
		if env.Hosts != nil {
			for _, h := range env.Hosts() {
				if t.opts.DB.inDBTier(h) {
					names = append(names, h)
				}
			}
		}
		if len(names) < c.NodeCount() {
			return fmt.Errorf("db.cluster.hosts: the cluster has %d nodes but the lab has %d hosts of the database tier (%s, %s1, %s2, ...): %s; add hosts to lab.hosts or lower db.cluster.nodes",
				c.NodeCount(), len(names), prefix, prefix, prefix, strings.Join(names, ", "))
		}
		for _, h := range names[:c.NodeCount()] {
			p, err := env.Lab(h)
			if err != nil {
				return fmt.Errorf("db.cluster.hosts: %w", err)
			}
			c.Placements = append(c.Placements, p)
		}
	} else if c.Hosts != "" {
		return fmt.Errorf("db.cluster.hosts: %q names lab hosts, but the spec has no lab: section; add one, or leave db.cluster.hosts out to run the nodes on this machine", c.Hosts)
	}
	m := deploy.Managed{Settings: t.opts.DB.Settings, Keep: t.opts.DB.Keep, Cluster: &c}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	pc, err := deploy.StartPostgresCluster(cctx, env.InstanceDir("postgres"), m)
	if err != nil {
		return fmt.Errorf("db: %w", err)
	}
	t.pc = pc
	t.db = pc.Primary()
	return nil
}

// dbNodes are the database's servers: the cluster's nodes, primary first,
// or the one server.
func (t *Target) dbNodes() []deploy.Node {
	if t.pc != nil {
		return t.pc.Nodes()
	}
	if t.db != nil {
		return []deploy.Node{{Name: "db", Inst: t.db}}
	}
	return nil
}

// dbNode finds a node of the cluster by its name (node1, node2, ...) or
// its lab host's name.
func (t *Target) dbNode(name string) (deploy.Node, bool) {
	if t.pc == nil {
		return deploy.Node{}, false
	}
	for _, n := range t.pc.Nodes() {
		if n.Name == name || n.Host != "" && n.Host == name {
			return n, true
		}
	}
	return deploy.Node{}, false
}

// replicaList is the body of POST /admin/replicas: the replicas reads go
// to, without the one named leaving ("" = none); empty with db.reads:
// primary. With db.reads: all the primary is on the list too, so the
// servers' rotation takes it in turn with the replicas (its reads then use
// a pool of their own beside the writes').
func (t *Target) replicaList(leaving string) []byte {
	if t.pc == nil || !t.opts.DB.readsFromReplicas() {
		return nil
	}
	var b []byte
	if t.opts.DB.Reads == readsAll {
		b = append(b, t.pc.Primary().Addr()...)
		b = append(b, '\n')
	}
	for _, n := range t.pc.Replicas() {
		if n.Name != leaving {
			b = append(b, n.Inst.Addr()...)
			b = append(b, '\n')
		}
	}
	return b
}

// sendReplicas gives application server a the replica list. A replica
// that has just started may still be reloading its pg_hba.conf, so a
// refusal is tried again for up to 15 s.
func (t *Target) sendReplicas(ctx context.Context, a *appServer, list []byte) error {
	if t.pc == nil || !t.opts.DB.readsFromReplicas() || t.fields.Load() == 0 {
		return nil
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := t.post(ctx, a, apptier.PathReplicas, list)
		if err == nil || !time.Now().Before(deadline) || ctx.Err() != nil {
			if err != nil {
				return fmt.Errorf("giving %s the replica list: %w", a.name, err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// sendReplicasToAll gives every running application server the replica
// list; a server whose process has exited gets it when StartServer brings
// it back.
func (t *Target) sendReplicasToAll(ctx context.Context, leaving string) error {
	list := t.replicaList(leaving)
	for _, a := range t.servers() {
		if a.hasExited() {
			continue
		}
		if err := t.sendReplicas(ctx, a, list); err != nil {
			return err
		}
	}
	return nil
}

// hasExited says whether the server's process has ended.
func (a *appServer) hasExited() bool {
	a.mu.Lock()
	ex := a.exited
	a.mu.Unlock()
	if ex == nil {
		return true
	}
	select {
	case <-ex:
		return true
	default:
		return false
	}
}

// waitReplayed waits, when reads go to replicas, until they have replayed
// every write made through the target since the last wait (a population),
// so that a run's reads find the records: an async replica sees a record
// only once it has replayed its insert.
func (t *Target) waitReplayed(ctx context.Context) error {
	if t.pc == nil || !t.opts.DB.readsFromReplicas() {
		return nil
	}
	t.replayMu.Lock()
	defer t.replayMu.Unlock()
	w := t.loads.Load()
	if w == t.replayed {
		return nil
	}
	if err := t.pc.WaitReplayed(ctx, 2*time.Minute); err != nil {
		return fmt.Errorf("apptier target: before reading from the replicas: %w", err)
	}
	t.replayed = w
	return nil
}

// addReplica is AddNode on a lab host of the database tier: a replica
// from a base backup of the primary (deploy.PostgresCluster.AddReplica),
// which the application hosts may log in to, and which every application
// server then reads from (db.reads: replicas). Requested, Started and
// BytesStreamed are AddReplica's (Started: the replica accepts
// connections); Done is when every application server routes reads to
// it, or with db.reads: primary when it streams with a replay lag under
// 1 s (AddReplica's Done). t.scale is held.
func (t *Target) addReplica(ctx context.Context, host string) (deploy.NodeChange, error) {
	fail := func(ch deploy.NodeChange, err error) (deploy.NodeChange, error) {
		err = fmt.Errorf("apptier target: add_node: %w", err)
		ch.Error = err.Error()
		return ch, err
	}
	ch := deploy.NodeChange{Action: "add_node", Host: host, Requested: time.Now(), BytesStreamed: -1}
	if n, ok := t.dbNode(host); ok {
		return fail(ch, fmt.Errorf("lab host %s runs the database's %s already; add a new host", host, n.Name))
	}
	place, err := t.env.Lab(host)
	if err != nil {
		return fail(ch, err)
	}
	ch, err = t.pc.AddReplica(ctx, place)
	ch.Host = host
	if err != nil {
		if _, ok := t.dbNode(ch.Node); ok && ch.Node != "" {
			// Started but not streaming: it goes again with its host.
			_, _ = t.pc.RemoveReplica(context.WithoutCancel(ctx), ch.Node)
		}
		return fail(ch, err)
	}
	undo := func() {
		_ = t.sendReplicasToAll(context.WithoutCancel(ctx), ch.Node)
		_, _ = t.pc.RemoveReplica(context.WithoutCancel(ctx), ch.Node)
	}
	// pg_basebackup copied the primary's pg_hba.conf, lines for the
	// application hosts included; allowPostgres adds what is missing.
	if n, _ := t.dbNode(ch.Node); n.Inst != nil {
		if err := allowPostgres(n.Inst, t.appHosts()); err != nil {
			undo()
			return fail(ch, fmt.Errorf("letting the application hosts log in to %s: %w", n.Name, err))
		}
	}
	if t.opts.DB.readsFromReplicas() {
		if err := t.sendReplicasToAll(ctx, ""); err != nil {
			undo()
			return fail(ch, err)
		}
		ch.Done = time.Now()
		ch.Detail += fmt.Sprintf("; every application server (%d) read from it after %v", len(t.servers()), ch.Done.Sub(ch.Requested).Round(time.Millisecond))
	} else {
		ch.Detail += "; reads stay on the primary (db.reads: primary)"
	}
	return ch, nil
}

// removeReplica is RemoveNode of a database node: every application
// server first stops reading from the replica (each answers once the
// reads it had sent there are over), then it stops, and its data and
// replication slot go (deploy.PostgresCluster.RemoveReplica). The primary
// stays. Requested is the call; Started is when no application server
// reads from it any more; Done is when it has stopped and its data is
// removed. t.scale is held.
func (t *Target) removeReplica(ctx context.Context, n deploy.Node) (deploy.NodeChange, error) {
	ch := deploy.NodeChange{Action: "remove_node", Node: n.Name, Host: n.Host, Requested: time.Now(), BytesStreamed: -1}
	fail := func(err error) (deploy.NodeChange, error) {
		err = fmt.Errorf("apptier target: remove_node: %w", err)
		ch.Error = err.Error()
		return ch, err
	}
	if n.Role == "primary" {
		return fail(fmt.Errorf("%s (%s) is the database's primary, which takes every write, and Headroom does not fail over; remove a replica or an application server", n.Name, hostOrThisMachine(n.Host)))
	}
	if err := t.sendReplicasToAll(ctx, n.Name); err != nil {
		_ = t.sendReplicasToAll(context.WithoutCancel(ctx), "")
		return fail(err)
	}
	ch.Started = time.Now()
	rc, err := t.pc.RemoveReplica(ctx, n.Name)
	if err != nil {
		// Whatever is still a replica is read from again.
		_ = t.sendReplicasToAll(context.WithoutCancel(ctx), "")
		return fail(err)
	}
	ch.Done = rc.Done
	ch.Detail = fmt.Sprintf("replica %s out of every application server's (%d) reads after %v; %s", n.Name, len(t.servers()), ch.Started.Sub(ch.Requested).Round(time.Millisecond), rc.Detail)
	return ch, nil
}

func hostOrThisMachine(h string) string {
	if h == "" {
		return "on this machine"
	}
	return "on " + h
}

// appHosts are the addresses of the running application servers' hosts.
func (t *Target) appHosts() []string {
	var out []string
	for _, a := range t.servers() {
		out = append(out, a.host())
	}
	return out
}
