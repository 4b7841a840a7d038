package target

import (
	"context"

	"github.com/headroom-dev/headroom/internal/deploy"
)

// NodeScaler is a target that runs a managed cluster (managed.cluster) and
// can add and remove nodes while a run goes on: the spec's add_node and
// remove_node events (seed 002 §III, elasticity). The campaign provides
// the host (a lab host it has just brought up, or "" for this machine) and
// records the returned change; the target keeps serving the workload
// through it, and its clients find the new node on their own (a driver's
// topology refresh, a router's node list).
type NodeScaler interface {
	// Nodes lists the cluster's nodes now, in start order.
	Nodes() []deploy.Node
	// AddNode starts a new node on host and returns once it serves (a
	// Cassandra node is normal in the ring, a replica streams, a Redis
	// Cluster primary owns its slots), or ctx ends.
	AddNode(ctx context.Context, host string) (deploy.NodeChange, error)
	// RemoveNode takes node (a node name or its host's name) out of the
	// cluster (decommission, or failover and stop), stops it and removes
	// its data, and returns once it is gone.
	RemoveNode(ctx context.Context, node string) (deploy.NodeChange, error)
}

// StrongReader is a target that can read at the strongest consistency it
// offers (Cassandra at ALL, PostgreSQL and Redis on the primary), which
// the campaign uses to check, after a run whose cluster changed, that
// every write the target acknowledged is still there.
type StrongReader interface {
	StrongClient(ctx context.Context) (Client, error)
}
