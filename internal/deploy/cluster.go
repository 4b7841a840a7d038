package deploy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Cluster is the `managed.cluster:` block of a target's options: instead of
// one server, Headroom runs a group of servers of the target's kind that
// serve one data set (seed 002 §III: a distributed database on rented
// hosts, sized by node count and replication). What a node is depends on
// the kind: a Cassandra ring member, a PostgreSQL primary or streaming
// replica, a Redis primary or replica, a Redis Cluster primary.
type Cluster struct {
	// Nodes is how many servers start with the campaign (default 3).
	Nodes int `yaml:"nodes"`
	// Hosts is a lab host name prefix: node i runs on the i-th lab host
	// (in the lab's order) whose name starts with it, one node per host.
	// "" runs every node on this machine (distinct loopback addresses or
	// ports, as the kind needs).
	Hosts string `yaml:"hosts"`
	// ReplicationFactor is how many copies of each record the cluster
	// keeps where the kind lets Headroom choose (Cassandra's keyspace;
	// Redis Cluster's replicas per primary is replication_factor - 1).
	// 0 = the kind's default (Cassandra: min(3, nodes); Redis Cluster: 1).
	ReplicationFactor int `yaml:"replication_factor"`
	// Mode picks the kind's topology where it has several, e.g. postgres
	// "async" (default) or "sync" streaming replicas, redis "replicas"
	// (default: one primary, the other nodes its replicas) or "cluster"
	// (Redis Cluster, hash slots over the primaries). Each target lists
	// its modes.
	Mode string `yaml:"mode"`
	// NodeSettings are server settings of single nodes, by node name
	// ("node1", "node2", ... in start order) or by lab host name, written
	// over managed.settings for that node.
	NodeSettings map[string]map[string]string `yaml:"node_settings"`

	// Placements are the nodes' hosts, filled from Hosts by whoever knows
	// the hosts (registry.Env.ClusterPlacements); empty runs the nodes on
	// this machine.
	Placements []*Placement `yaml:"-"`
}

// DefaultClusterNodes is the node count when cluster.nodes is not set.
const DefaultClusterNodes = 3

// MaxClusterNodes bounds cluster.nodes: every node is a server process on
// this machine or one of its lab hosts (a Cassandra node alone takes about
// 1 GB and a core to start).
const MaxClusterNodes = 16

// NodeCount is c.Nodes with its default.
func (c *Cluster) NodeCount() int {
	if c == nil {
		return 1
	}
	if c.Nodes <= 0 {
		return DefaultClusterNodes
	}
	return c.Nodes
}

// NodeName is the name of the i-th node (0-based) in start order.
func NodeName(i int) string { return fmt.Sprintf("node%d", i+1) }

// SettingsFor are the settings of node name on host (either may match a
// key of NodeSettings) over the managed settings base.
func (c *Cluster) SettingsFor(base map[string]string, name, host string) map[string]string {
	out := make(map[string]string, len(base))
	for k, v := range base {
		out[k] = v
	}
	if c == nil {
		return out
	}
	for _, key := range []string{name, host} {
		if key == "" {
			continue
		}
		for k, v := range c.NodeSettings[key] {
			out[k] = v
		}
	}
	return out
}

// CheckCluster reports the first problem of a cluster block for a target
// that offers modes (its first mode is the default), as one sentence that
// starts with the field path ("managed.cluster.nodes: ...").
func CheckCluster(c *Cluster, kind string, modes []string) error {
	if c == nil {
		return nil
	}
	if len(modes) == 0 {
		return fmt.Errorf("managed.cluster: a %s target runs one server; remove cluster:, or use a target that runs clusters (cassandra, postgres, redis)", kind)
	}
	if c.Nodes < 0 || c.Nodes > MaxClusterNodes {
		return fmt.Errorf("managed.cluster.nodes: %d is outside 1..%d; give the number of servers to start", c.Nodes, MaxClusterNodes)
	}
	if c.Mode != "" && !slices.Contains(modes, c.Mode) {
		return fmt.Errorf("managed.cluster.mode: %q is not a %s cluster mode; use one of: %s", c.Mode, kind, strings.Join(modes, ", "))
	}
	if c.ReplicationFactor < 0 || c.ReplicationFactor > c.NodeCount() {
		return fmt.Errorf("managed.cluster.replication_factor: %d is outside 0..%d (the node count); lower it or add nodes", c.ReplicationFactor, c.NodeCount())
	}
	names := make([]string, 0, len(c.NodeSettings))
	for k := range c.NodeSettings {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if strings.TrimSpace(k) == "" {
			return fmt.Errorf("managed.cluster.node_settings: a key is empty; name a node (node1, node2, ...) or a lab host")
		}
	}
	return nil
}

// ModeOr is c's mode, or def when it is not set.
func (c *Cluster) ModeOr(def string) string {
	if c == nil || c.Mode == "" {
		return def
	}
	return c.Mode
}

// Node is one member of a running cluster.
type Node struct {
	Name string // node1, node2, ... in start order (added nodes continue the count)
	Host string // the lab host it runs on; "" = this machine
	// Role is the node's part in the cluster: "primary", "replica",
	// "member" (a Cassandra ring member, a Redis Cluster primary).
	Role string
	Inst *Instance
}

// NodeChange is what adding or removing a node did, for the results
// (elasticity, seed 002 §III and seed-digest §5): when it was asked for,
// when the node was serving (joined: its state in the cluster is normal;
// left: it is out and stopped), and what moved.
type NodeChange struct {
	Action    string    `json:"action"`         // "add_node" or "remove_node"
	Node      string    `json:"node"`           // the node's name
	Host      string    `json:"host,omitempty"` // its lab host ("" = this machine)
	Requested time.Time `json:"requested"`      // when the change was asked for
	Started   time.Time `json:"started"`        // add: the server process accepts connections
	Done      time.Time `json:"done"`           // add: the node serves (joined, or a replica streaming); remove: it is out and stopped
	// BytesStreamed is how much data moved to (add) or off (remove) the
	// node, as the server reports it; -1 = unknown.
	BytesStreamed int64 `json:"bytes_streamed"`
	// Detail is one line of what happened, for the record.
	Detail string `json:"detail"`
	// Error is set when the change failed; the times say how far it got.
	Error string `json:"error,omitempty"`
}

// EventNodeChange is the results store's event kind of a NodeChange,
// recorded with the run's ID and NodeChange as its JSON detail.
const EventNodeChange = "node_change"
