package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// EventPromote is the action of a failover: a replica becomes the
// primary (the spec's promote event).
const EventPromote = "promote"

// Promote fails the cluster over to the replica named name (a node name
// or its lab host's; "" = the first replica): the old primary is fenced
// (stopped if it still runs, so that two primaries never take writes),
// the replica is promoted (pg_promote: it replays the WAL it has received
// and starts a new timeline) and becomes node list's first, the primary.
// The other replicas streamed from the old primary's timeline and cannot
// follow the new one without being pointed at it, so they are stopped and
// left out too; RestoreReplicas makes fresh replicas for every node left
// out, on their hosts, from the new primary.
//
// Writes the old primary acknowledged that an async replica had not
// received are gone after this: the failover is how an acknowledged write
// is lost (the write check finds them). In sync mode with
// synchronous_commit = remote_apply every acknowledged write was replayed
// on a synchronous standby first; promote then loses none as long as it
// picks one of those.
func (pc *PostgresCluster) Promote(ctx context.Context, name string) (NodeChange, error) {
	pc.ops.Lock()
	defer pc.ops.Unlock()
	ch := NodeChange{Action: EventPromote, Requested: time.Now(), BytesStreamed: -1}
	fail := func(err error) (NodeChange, error) {
		ch.Error = err.Error()
		return ch, fmt.Errorf("promote: %w", err)
	}
	nodes := pc.Nodes()
	if len(nodes) == 0 {
		return fail(errors.New("the cluster has been removed"))
	}
	i, err := replicaToPromote(nodes, name, "cluster")
	if err != nil {
		return fail(err)
	}
	nd, old := nodes[i], nodes[0]
	ch.Node, ch.Host = nd.Name, nd.Host
	fenced, err := fence(ctx, old.Inst, old.Name)
	if err != nil {
		return fail(err)
	}
	ch.Started = time.Now()
	if err := pgPromote(ctx, nd.Inst); err != nil {
		return fail(fmt.Errorf("%s: %w", nd.Name, err))
	}
	var dropped []Node
	for _, n := range nodes[1:] {
		if n.Name != nd.Name {
			dropped = append(dropped, n)
		}
	}
	for _, n := range dropped {
		if err := n.Inst.Stop(ctx); err != nil {
			return fail(fmt.Errorf("stopping replica %s of the old primary: %w", n.Name, err))
		}
	}
	pc.mu.Lock()
	nd.Role = "primary"
	pc.nodes = []Node{nd}
	pc.lost = append(pc.lost, old)
	pc.lost = append(pc.lost, dropped...)
	pc.mu.Unlock()
	// The new primary's standby list was the old one's; a sync cluster
	// has no standby left until RestoreReplicas.
	if err := pc.setSyncStandbys(ctx, ""); err != nil {
		return fail(err)
	}
	ch.Done = time.Now()
	ch.Detail = fmt.Sprintf("%s promoted to primary in %v; old primary %s %s", nd.Name, ch.Done.Sub(ch.Started).Round(time.Millisecond), old.Name, fenced)
	if len(dropped) > 0 {
		ch.Detail += fmt.Sprintf("; %d other replica(s) stopped until they are rebuilt", len(dropped))
	}
	return ch, nil
}

// fence stops the old primary of a failover if it still runs (promote
// without a kill, a partitioned primary), so that two primaries never take
// writes, and says what became of it. A stopped (SIGSTOP) or hung primary
// cannot shut down: after a few seconds Stop kills it, which is what
// fencing needs.
func fence(ctx context.Context, inst *Instance, name string) (string, error) {
	if !inst.Running() {
		return "was down", nil
	}
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := inst.Stop(fctx)
	cancel()
	if err != nil && inst.Running() {
		return "", fmt.Errorf("fencing the old primary %s: %w", name, err)
	}
	return "stopped", nil
}

// pgPromote promotes a standby and waits until it takes writes.
func pgPromote(ctx context.Context, inst *Instance) error {
	cctx, cancel := context.WithTimeout(ctx, 70*time.Second)
	defer cancel()
	c, err := postgresConnect(cctx, inst, PostgresAdmin, "postgres")
	if err != nil {
		return fmt.Errorf("connecting to the replica: %w", err)
	}
	defer c.Close(context.Background())
	var ok bool
	if err := c.QueryRow(cctx, "SELECT pg_promote(true, 60)").Scan(&ok); err != nil {
		return fmt.Errorf("pg_promote: %w", err)
	}
	if !ok {
		return errors.New("pg_promote did not finish within 60 s")
	}
	return nil
}

// Lost are the nodes a failover left out (the old primary and the
// replicas that streamed from it), not yet rebuilt.
func (pc *PostgresCluster) Lost() []Node {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return slices.Clone(pc.lost)
}

// RestoreReplicas puts the cluster back to its node count after
// failovers: every node left out is removed (its data deleted) and a new
// replica is made on its host (or this machine) from a base backup of the
// current primary, as AddReplica does. It returns one change per replica
// made.
func (pc *PostgresCluster) RestoreReplicas(ctx context.Context) ([]NodeChange, error) {
	pc.mu.Lock()
	lost := pc.lost
	pc.lost = nil
	pc.mu.Unlock()
	var out []NodeChange
	var errs []error
	for _, n := range lost {
		if err := n.Inst.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", n.Name, err))
		}
		ch, err := pc.AddReplica(ctx, n.Inst.Placement())
		ch.Detail = fmt.Sprintf("in place of %s (left out by a failover): %s", n.Name, ch.Detail)
		out = append(out, ch)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}
