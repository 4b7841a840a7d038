package spec

import (
	"fmt"
	"regexp"

	"github.com/headroom-dev/headroom/internal/target/registry"
)

// Cluster events (add_node, remove_node) change a managed cluster's
// membership while the load runs (seed 002 §III). They need a target that
// runs a cluster; without a lab the nodes are on this machine, so add_node
// names no host and remove_node names a node (node1, node2, ...).
const (
	eventAddNode    = "add_node"
	eventRemoveNode = "remove_node"
)

// nodeNamePattern: a cluster's nodes are node1, node2, ...; the apptier
// target's application servers on this machine local1, local2, ...
var nodeNamePattern = regexp.MustCompile(`^(node|local)[1-9][0-9]*$`)

func isClusterEvent(action string) bool {
	return action == eventAddNode || action == eventRemoveNode || action == eventPromote
}

// clusterEvents checks the cluster events of s. It reports whether every
// event is one (a spec without a lab may then have events).
func (c *checker) clusterEvents(s *Spec) (allCluster bool) {
	allCluster = true
	m := registry.ManagedOf(s.Target.Options)
	for i, e := range s.Events {
		p := fmt.Sprintf("events[%d]", i)
		if !isClusterEvent(e.Action) {
			allCluster = false
			continue
		}
		f, _ := registry.Lookup(s.Target.Type)
		if (m == nil || m.Cluster == nil) && !(f.ScalesNodes && e.Action != eventPromote) {
			c.fail(p+".action", "%s changes a managed cluster, but the target runs no cluster; add target.managed.cluster (cassandra, postgres or redis) or remove the event", e.Action)
			continue
		}
		if e.Action == eventPromote {
			c.promoteEvent(p, s, e.Host) // failover.go
		}
		if s.Lab != nil {
			continue // lab.CheckEvents checks the hosts
		}
		if e.At < 0 || e.At >= s.Phases.Measure.Duration {
			c.fail(p+".at", "%v is outside the measured phase (0 to %v); events happen while the run is measured", e.At, s.Phases.Measure.Duration)
		}
		switch e.Action {
		case eventAddNode:
			if e.Host != "" {
				c.fail(p+".host", "the spec has no lab, so the new node runs on this machine and has no host; remove host, or add a lab: section with hosts for the cluster")
			}
		case eventRemoveNode:
			if !nodeNamePattern.MatchString(e.Host) {
				c.fail(p+".host", "without a lab, remove_node names a node of the cluster (node1, node2, ... in start order; an apptier target's servers are local1, local2, ...), not %q", e.Host)
			}
		}
	}
	return allCluster
}
