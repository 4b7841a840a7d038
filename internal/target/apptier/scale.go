package apptier

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
)

// The application tier grows and shrinks while the load runs: the spec's
// add_node and remove_node events and the elastic controller (seed 003
// ch. 8) add or remove one application server at a time through
// target.NodeScaler. Without db.cluster the database is not a node: it
// stays one server. With db.cluster its replicas are nodes too, and
// AddNode tells the tiers apart by the host's name (dbtier.go).

// roleApp is the Role of every node of the application tier.
const roleApp = "app"

// Nodes implements target.NodeScaler: one node per running application
// server, in start order, named by its lab host (local1, ... on this
// machine); then, with db.cluster, the database's nodes (node1, the
// primary, node2, ... its replicas, with their lab hosts and roles).
func (t *Target) Nodes() []deploy.Node {
	apps := t.servers()
	out := make([]deploy.Node, 0, len(apps))
	for _, a := range apps {
		out = append(out, deploy.Node{Name: a.name, Host: a.labHost(), Role: roleApp})
	}
	if t.pc != nil {
		out = append(out, t.pc.Nodes()...)
	}
	return out
}

// AddNode implements target.NodeScaler: an application server on the lab
// host named host (which the campaign has just brought up), or on this
// machine's loopback when host is "". The database admits the host's
// address first; the server joins the round-robin rotation only once it
// answers its health check (its database connection works) and has
// prepared its statements, so no request reaches it before it can serve.
// Started is when its process first answered; Done is when it joined the
// rotation. Nothing streams to an application server (BytesStreamed -1).
// With db.cluster a server gets the replica list before it joins, and a
// host of the database tier (db.cluster.hosts, or that prefix followed by
// digits: db, db2, ...) gets a database replica instead (addReplica).
func (t *Target) AddNode(ctx context.Context, host string) (deploy.NodeChange, error) {
	t.scale.Lock()
	defer t.scale.Unlock()
	if t.pc != nil && t.env.Lab != nil && t.opts.DB.inDBTier(host) {
		return t.addReplica(ctx, host)
	}
	ch := deploy.NodeChange{Action: "add_node", Host: host, Requested: time.Now(), BytesStreamed: -1}
	fail := func(err error) (deploy.NodeChange, error) {
		err = fmt.Errorf("apptier target: add_node: %w", err)
		ch.Error = err.Error()
		return ch, err
	}
	a, err := t.newServer(host)
	if err != nil {
		return fail(err)
	}
	ch.Node = a.name
	if t.env.Lab != nil {
		if err := t.allow(ctx, []string{a.host()}); err != nil {
			return fail(fmt.Errorf("letting %s's address %s into the database: %w", a.name, a.host(), err))
		}
	}
	a.log = filepath.Join(t.dir, a.name+".log")
	if err := t.start(a); err != nil {
		return fail(err)
	}
	t.setServers(append(slices.Clone(t.servers()), a))
	undo := func() {
		a.stop()
		t.setServers(slices.DeleteFunc(slices.Clone(t.servers()), func(x *appServer) bool { return x == a }))
	}
	accepting, err := t.waitReady(ctx, a)
	ch.Started = accepting
	if err != nil {
		undo()
		return fail(err)
	}
	if err := t.prepareOne(ctx, a); err != nil {
		undo()
		return fail(fmt.Errorf("preparing %s: %w", a.name, err))
	}
	if err := t.sendReplicas(ctx, a, t.replicaList("")); err != nil {
		undo()
		return fail(err)
	}
	rot := append(slices.Clone(t.serving()), a)
	t.rot.Store(rot)
	ch.Done = time.Now()
	ch.Detail = fmt.Sprintf("application server %s at %s answering after %v, in the rotation after %v; %d in the rotation now",
		a.name, a.addr, ch.Started.Sub(ch.Requested).Round(time.Millisecond), ch.Done.Sub(ch.Requested).Round(time.Millisecond), len(rot))
	return ch, nil
}

// newServer places the server AddNode starts: on a lab host, which must
// not run one already, or on this machine.
func (t *Target) newServer(host string) (*appServer, error) {
	if host == "" {
		if t.env.Lab != nil {
			return nil, fmt.Errorf("the application servers run on lab hosts; name the new server's lab host")
		}
		return t.localApp()
	}
	if t.env.Lab == nil {
		return nil, fmt.Errorf("%q names a lab host, but the campaign has no lab; without one, new application servers run on this machine and name no host", host)
	}
	for _, a := range t.servers() {
		if a.name == host {
			return nil, fmt.Errorf("lab host %s runs an application server already; add a new host", host)
		}
	}
	p, err := t.env.Lab(host)
	if err != nil {
		return nil, err
	}
	return newApp(host, p.Address, t.labPort(), p), nil
}

// RemoveNode implements target.NodeScaler: the server named node (its lab
// host's name, or local1, ...) leaves the rotation first, the requests
// already sent to it finish (for up to the request timeout), then it
// stops (SIGTERM; killed after 5 s). Started is when it left the
// rotation; Done is when it stopped. The last server in the rotation
// stays. With db.cluster, node may name a database replica (node2, ...,
// or its lab host): see removeReplica; the primary stays.
func (t *Target) RemoveNode(ctx context.Context, node string) (deploy.NodeChange, error) {
	t.scale.Lock()
	defer t.scale.Unlock()
	ch := deploy.NodeChange{Action: "remove_node", Node: node, Requested: time.Now(), BytesStreamed: -1}
	fail := func(err error) (deploy.NodeChange, error) {
		err = fmt.Errorf("apptier target: remove_node: %w", err)
		ch.Error = err.Error()
		return ch, err
	}
	apps := t.servers()
	i := slices.IndexFunc(apps, func(a *appServer) bool { return a.name == node })
	if i < 0 {
		if n, ok := t.dbNode(node); ok {
			return t.removeReplica(ctx, n)
		}
		names := make([]string, len(apps))
		for j, a := range apps {
			names[j] = a.name
		}
		if t.pc != nil {
			var db []string
			for _, n := range t.pc.Nodes() {
				db = append(db, n.Name+" ("+n.Role+hostSuffix(n.Host)+")")
			}
			return fail(fmt.Errorf("%q is no node of this system; its application servers are %s, its database nodes %s", node, strings.Join(names, ", "), strings.Join(db, ", ")))
		}
		return fail(fmt.Errorf("%q is not an application server of this tier; its servers are %s", node, strings.Join(names, ", ")))
	}
	a := apps[i]
	ch.Host = a.labHost()
	rot := slices.DeleteFunc(slices.Clone(t.serving()), func(x *appServer) bool { return x == a })
	if len(rot) == 0 {
		return fail(fmt.Errorf("%s is the tier's last application server, and the load needs one; add another before removing it", a.name))
	}
	// Out of the rotation, then marked, then drained (internal/rotation).
	t.rot.Store(rot)
	a.Retire()
	ch.Started = time.Now()
	left := t.drain(ctx, a)
	a.stop()
	t.setServers(slices.Delete(slices.Clone(apps), i, i+1))
	ch.Done = time.Now()
	ch.Detail = fmt.Sprintf("application server %s at %s out of the rotation; its requests in flight finished within %v; stopped after %v; %d in the rotation now",
		a.name, a.addr, left.waited, ch.Done.Sub(ch.Requested).Round(time.Millisecond), len(rot))
	if left.n > 0 {
		ch.Detail = fmt.Sprintf("application server %s at %s out of the rotation; %d requests still in flight after %v were cut off when it stopped after %v; %d in the rotation now",
			a.name, a.addr, left.n, left.waited, ch.Done.Sub(ch.Requested).Round(time.Millisecond), len(rot))
	}
	return ch, nil
}

// drained is what waiting for a leaving server's requests came to.
type drained struct {
	waited time.Duration
	n      int64 // requests still in flight when the wait ended
}

// drain waits until no request picked a (out of the rotation) is in
// flight, for up to the request timeout (10 s without one) or ctx's end.
func (t *Target) drain(ctx context.Context, a *appServer) drained {
	limit := t.opts.Timeout.Duration
	if limit <= 0 {
		limit = 10 * time.Second
	}
	start := time.Now()
	deadline := start.Add(limit)
	for {
		n := a.InFlight()
		if n <= 0 || !time.Now().Before(deadline) || ctx.Err() != nil {
			return drained{waited: time.Since(start).Round(time.Millisecond), n: max(n, 0)}
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// setServers replaces the list of running servers.
func (t *Target) setServers(apps []*appServer) { t.all.Store(&apps) }

// host is the address the server listens on, without the port.
func (a *appServer) host() string {
	h, _, _ := net.SplitHostPort(a.addr)
	return h
}

// labHost is the lab host the server runs on; "" on this machine.
func (a *appServer) labHost() string {
	if a.place == nil {
		return ""
	}
	return a.name
}

func hostSuffix(h string) string {
	if h == "" {
		return ""
	}
	return " on " + h
}
