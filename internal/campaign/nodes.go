package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// The spec's cluster events (seed 002 §III, elasticity): a node joins or
// leaves a managed cluster while the load runs. The provider brings a new
// host up (or releases one), the target makes the node a member (or takes
// it out), and the campaign records the change with its times, so that the
// elasticity analysis can read on the run's timeline how long the node took
// to serve and what the change cost.
const (
	actAddNode    = lab.ActAddNode
	actRemoveNode = lab.ActRemoveNode
)

// isNodeEvent says whether e changes a cluster's membership.
func isNodeEvent(e infra.Event) bool { return e.Action == actAddNode || e.Action == actRemoveNode }

// nodeUndo is what a run's cluster events changed, to be put back after
// the run so that every run starts from the defined cluster.
type nodeUndo struct {
	added   []string      // nodes (their hosts' names, or node names on this machine) added, in order
	removed []removedNode // nodes taken out, in order
	hosts   []infra.Host  // hosts brought up for added nodes
	// changed says a node joined or left during the run, by an event or
	// the controller, so the run's acknowledged records are read back
	// (writecheck.go) even when the controller took its node out again.
	changed bool
}

type removedNode struct {
	node, host, hostType string
}

// applyNodeEvent carries out an add_node or remove_node event and records
// it. It returns a one-line description for the progress display.
func (ex *executor) applyNodeEvent(ctx context.Context, id int64, e infra.Event) (string, error) {
	ns, ok := ex.tgt.(target.NodeScaler)
	if !ok {
		return "", fmt.Errorf("the %s target runs no cluster that can grow or shrink; give it managed.cluster", ex.s.Target.Type)
	}
	requested := time.Now()
	var ch deploy.NodeChange
	var err error
	switch e.Action {
	case actAddNode:
		ch, err = ex.addNode(ctx, ns, e)
	case actRemoveNode:
		ch, err = ex.removeNode(ctx, ns, e)
	}
	ex.undo.changed = true
	// The change's lag is counted from the event, the host's provisioning
	// included: a new cloud node takes that long to be asked for and up.
	ch.Requested, ch.Action = requested, e.Action
	if ch.Host == "" && ex.setup != nil && e.Host != "" && ex.hostNamed(e.Host) {
		ch.Host = e.Host
	}
	if err != nil {
		ch.Error = err.Error()
	}
	if ch.BytesStreamed == 0 && err != nil {
		ch.BytesStreamed = -1
	}
	b, merr := json.Marshal(ch)
	if merr == nil {
		at := ch.Done
		if at.IsZero() {
			at = time.Now()
		}
		if aerr := ex.st.AddEvent(store.Event{RunID: id, Time: at, Kind: deploy.EventNodeChange, Detail: string(b)}); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	if err != nil {
		return "", err
	}
	took := ch.Done.Sub(requested).Round(100 * time.Millisecond)
	if e.Action == actAddNode {
		return fmt.Sprintf("added %s on %s: serving after %v", ch.Node, hostOrLocal(ch.Host), took), nil
	}
	return fmt.Sprintf("removed %s from %s: out after %v", ch.Node, hostOrLocal(ch.Host), took), nil
}

func hostOrLocal(h string) string {
	if h == "" {
		return "this machine"
	}
	return h
}

// addNode brings e.Host up through the provider (when the campaign has
// one that adds hosts) and asks the target for a node on it.
func (ex *executor) addNode(ctx context.Context, ns target.NodeScaler, e infra.Event) (deploy.NodeChange, error) {
	host := ""
	if e.Host != "" {
		sc, ok := ex.setup.Provider.(infra.Scaler)
		if !ok {
			return deploy.NodeChange{Host: e.Host}, fmt.Errorf("events: the %s provider cannot add hosts, so add_node cannot bring up %s", ex.setup.Provider.Name(), e.Host)
		}
		typ := e.Type
		if typ == "" {
			typ = ex.clusterHostType()
		}
		h, err := sc.AddHost(ctx, infra.HostSpec{Name: e.Host, Type: typ, IOPS: e.IOPS})
		if err != nil {
			return deploy.NodeChange{Host: e.Host}, fmt.Errorf("bringing up host %s: %w", e.Host, err)
		}
		ex.setup.Hosts = append(ex.setup.Hosts, h)
		ex.undo.hosts = append(ex.undo.hosts, h)
		host = h.Name()
		if err := ex.watchHost(h); err != nil {
			ex.noteEventProblem(fmt.Sprintf("monitoring the new host %s: %v", host, err))
		}
		if err := ex.setup.recordLimits(time.Now(), actAddNode); err != nil {
			ex.noteEventProblem(fmt.Sprintf("recording the new host's limits: %v", err))
		}
	}
	ch, err := ns.AddNode(ctx, host)
	ch.Host = host
	if err != nil {
		if host != "" {
			// A host without its node serves nothing but would still be
			// paid for and counted as one of its tier's nodes (a
			// controller would then try to remove a node that never
			// joined), so it goes back to the provider.
			if rerr := ex.releaseHost(context.WithoutCancel(ctx), host); rerr != nil {
				return ch, fmt.Errorf("%w; %v", err, rerr)
			}
			return ch, fmt.Errorf("%w; host %s was released again", err, host)
		}
		return ch, err
	}
	key := host
	if key == "" {
		key = ch.Node
	}
	ex.undo.added = append(ex.undo.added, key)
	if merr := ex.restartMonitor(); merr != nil {
		ex.noteEventProblem(fmt.Sprintf("monitoring the new node's processes: %v", merr))
	}
	return ch, nil
}

// removeNode takes the node named by e.Host (a lab host, or a node name on
// this machine) out of the cluster, then releases its host when the
// provider can.
func (ex *executor) removeNode(ctx context.Context, ns target.NodeScaler, e infra.Event) (deploy.NodeChange, error) {
	hostType := ""
	for _, h := range ex.setup.Hosts {
		if h.Name() == e.Host {
			hostType = h.Facts().Type
		}
	}
	ch, err := ns.RemoveNode(ctx, e.Host)
	if err != nil {
		return ch, err
	}
	if ex.hostNamed(e.Host) {
		ch.Host = e.Host
		if err := ex.releaseHost(ctx, e.Host); err != nil {
			return ch, err
		}
	}
	if i := slices.Index(ex.undo.added, e.Host); i >= 0 {
		// A node added and removed in the same run needs no undo.
		ex.undo.added = slices.Delete(ex.undo.added, i, i+1)
	} else {
		ex.undo.removed = append(ex.undo.removed, removedNode{node: ch.Node, host: ch.Host, hostType: hostType})
	}
	if merr := ex.restartMonitor(); merr != nil {
		ex.noteEventProblem(fmt.Sprintf("monitoring after removing a node: %v", merr))
	}
	return ch, nil
}

// hostNamed says whether the provider has a host of that name.
func (ex *executor) hostNamed(name string) bool {
	if ex.setup == nil {
		return false
	}
	_, err := ex.setup.Hosts.Get(name)
	return err == nil
}

// releaseHost stops watching a host and hands it back to the provider.
func (ex *executor) releaseHost(ctx context.Context, name string) error {
	sc, ok := ex.setup.Provider.(infra.Scaler)
	if !ok {
		return nil
	}
	ex.unwatchHost(name)
	if err := sc.RemoveHost(ctx, name); err != nil {
		return fmt.Errorf("releasing host %s: %w", name, err)
	}
	// Recorded while the host is still listed: its facts now say it is
	// removed, stopped and free, and that row ends its last limits and
	// price in the results.
	if err := ex.setup.recordLimits(time.Now(), actRemoveNode); err != nil {
		ex.noteEventProblem(fmt.Sprintf("recording the limits after removing %s: %v", name, err))
	}
	ex.setup.Hosts = slices.DeleteFunc(ex.setup.Hosts, func(h infra.Host) bool { return h.Name() == name })
	ex.undo.hosts = slices.DeleteFunc(ex.undo.hosts, func(h infra.Host) bool { return h.Name() == name })
	return nil
}

// clusterHostType is the instance type of the hosts the cluster's nodes
// run on, for an add_node event that names none.
func (ex *executor) clusterHostType() string {
	for _, n := range ex.clusterNodes() {
		if n.Host == "" {
			continue
		}
		if h, err := ex.setup.Hosts.Get(n.Host); err == nil && h.Facts().Type != "" {
			return h.Facts().Type
		}
	}
	return ""
}

func (ex *executor) clusterNodes() []deploy.Node {
	if ns, ok := ex.tgt.(target.NodeScaler); ok {
		return ns.Nodes()
	}
	return nil
}

// undoNodes puts the cluster back as the spec defines it after a run with
// cluster events: nodes added are removed and their hosts released, nodes
// removed are added again on hosts of the same names and types. Each step
// is recorded as a node change without a run.
func (ex *executor) undoNodes(ctx context.Context, id int64) error {
	u := ex.undo
	ex.undo = nodeUndo{}
	ns, ok := ex.tgt.(target.NodeScaler)
	if !ok || (len(u.added) == 0 && len(u.removed) == 0 && len(u.hosts) == 0) {
		return nil
	}
	var errs []error
	for i := len(u.added) - 1; i >= 0; i-- {
		name := u.added[i]
		ch, err := ns.RemoveNode(ctx, name)
		ex.recordUndo(id, actRemoveNode, ch, err)
		errs = append(errs, err)
	}
	for _, h := range u.hosts {
		if err := ex.releaseHost(ctx, h.Name()); err != nil {
			errs = append(errs, err)
		}
	}
	for _, r := range u.removed {
		host := ""
		if r.host != "" {
			sc, ok := ex.setup.Provider.(infra.Scaler)
			if !ok {
				continue
			}
			h, err := sc.AddHost(ctx, infra.HostSpec{Name: r.host, Type: r.hostType})
			if err != nil {
				errs = append(errs, fmt.Errorf("bringing host %s back: %w", r.host, err))
				continue
			}
			ex.setup.Hosts = append(ex.setup.Hosts, h)
			host = h.Name()
		}
		ch, err := ns.AddNode(ctx, host)
		ex.recordUndo(id, actAddNode, ch, err)
		errs = append(errs, err)
	}
	if err := ex.restartMonitor(); err != nil {
		errs = append(errs, err)
	}
	if err := ex.setup.recordLimits(time.Now(), "undo"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// recordUndo records a change made to put the cluster back: an event
// without the run's ID, so that no run's elasticity counts it.
func (ex *executor) recordUndo(id int64, action string, ch deploy.NodeChange, err error) {
	ch.Action = action
	if err != nil {
		ch.Error = err.Error()
	}
	ch.Detail = fmt.Sprintf("put back after run %d: %s", id, ch.Detail)
	b, _ := json.Marshal(ch)
	_ = ex.st.AddEvent(store.Event{Time: time.Now(), Kind: deploy.EventNodeChange + "_undo", Detail: string(b)})
}

// noteEventProblem records and shows a problem that does not stop the
// event (monitoring or limits of a host it brought up).
func (ex *executor) noteEventProblem(msg string) {
	_ = ex.st.AddEvent(store.Event{Time: time.Now(), Kind: "monitor_error", Detail: msg})
	ex.prog.Note(msg)
}

// liveSources samples a set of monitor sources that may change while a
// run is sampled: hosts join and leave with cluster events, and a server's
// processes change when a node is added.
type liveSources struct {
	mu   sync.Mutex
	list []monitor.Source
}

// Sample holds the lock while it samples, so that a source replaced or
// removed is not in use when its owner closes it.
func (l *liveSources) Sample(at time.Time) ([]monitor.Sample, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return sources(l.list).Sample(at)
}

func (l *liveSources) add(s monitor.Source) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, s)
}

func (l *liveSources) replace(old, now monitor.Source) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, s := range l.list {
		if s == old {
			l.list[i] = now
		}
	}
}

func (l *liveSources) remove(s monitor.Source) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = slices.DeleteFunc(l.list, func(x monitor.Source) bool { return x == s })
}

// watchHost opens the sampler of a host brought up during a run and adds
// it to the run's monitor.
func (ex *executor) watchHost(h infra.Host) error {
	m, err := h.Monitor()
	if err != nil || m == nil {
		return err
	}
	ex.hostMons = append(ex.hostMons, m)
	ex.hostMonOf[h.Name()] = m
	if ex.live != nil {
		ex.live.add(m)
	}
	return nil
}

// unwatchHost stops sampling a host about to be released.
func (ex *executor) unwatchHost(name string) {
	m, ok := ex.hostMonOf[name]
	if !ok {
		return
	}
	delete(ex.hostMonOf, name)
	if ex.live != nil {
		ex.live.remove(m)
	}
	ex.hostMons = slices.DeleteFunc(ex.hostMons, func(x infra.Monitor) bool { return x == m })
	m.Close()
}
