package results

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// EventNodeChange is the store's event kind of a node joining or leaving
// a managed cluster during a run (internal/deploy.EventNodeChange; the
// campaign records one per add_node or remove_node event, with the run's
// ID and the change as JSON).
const EventNodeChange = "node_change"

// Node change actions.
const (
	ActionAddNode    = "add_node"
	ActionRemoveNode = "remove_node"
)

// NodeChange is what adding or removing a cluster node did (seed 002
// §III, elasticity), as the campaign recorded it: when the change was
// asked for, when the node's server accepted connections (add), when the
// node served (add: joined, or a replica streaming; remove: out and
// stopped), and what moved. A zero time means the change never got there.
type NodeChange struct {
	Action    string    `json:"action"` // ActionAddNode or ActionRemoveNode
	Node      string    `json:"node"`
	Host      string    `json:"host,omitempty"` // lab host; "" = this machine
	Requested time.Time `json:"requested"`
	Started   time.Time `json:"started"`
	Done      time.Time `json:"done"`
	// BytesStreamed is how much data moved to (add) or off (remove) the
	// node, as the server reports it; -1 = unknown.
	BytesStreamed int64  `json:"bytes_streamed"`
	Detail        string `json:"detail,omitempty"`
	Error         string `json:"error,omitempty"`
}

// Delta is the change in node count: +1 for an added node, -1 for a
// removed one, 0 for an action this reader does not know.
func (c NodeChange) Delta() int {
	switch c.Action {
	case ActionAddNode:
		return 1
	case ActionRemoveNode:
		return -1
	}
	return 0
}

// Served reports whether the change completed: the node served (add) or
// was out and stopped (remove).
func (c NodeChange) Served() bool { return c.Error == "" && !c.Done.IsZero() }

// NodeChanges returns the node changes recorded for a run, in the order
// they were asked for. A change whose JSON does not decode is an error
// naming the run: the elasticity of the run cannot be judged without it.
func (r *Results) NodeChanges(runID int64) ([]NodeChange, error) {
	evs, err := r.st.Events(runID)
	if err != nil {
		return nil, err
	}
	all, err := r.nodeChangesOf(evs)
	return all[runID], err
}

// AllNodeChanges returns every run's node changes by run ID, each run's in
// the order they were asked for (see NodeChanges), from one read of the
// events.
func (r *Results) AllNodeChanges() (map[int64][]NodeChange, error) {
	evs, err := r.st.Events(-1)
	if err != nil {
		return nil, err
	}
	return r.nodeChangesOf(evs)
}

func (r *Results) nodeChangesOf(evs []Event) (map[int64][]NodeChange, error) {
	out := map[int64][]NodeChange{}
	for _, e := range evs {
		if e.Kind != EventNodeChange || e.RunID <= 0 {
			continue
		}
		var c NodeChange
		if err := json.Unmarshal([]byte(e.Detail), &c); err != nil {
			return nil, fmt.Errorf("results database %s: the node change of run %d at %s is damaged: %v", r.st.Path(), e.RunID, e.Time.Format(time.RFC3339), err)
		}
		if c.Requested.IsZero() {
			c.Requested = e.Time // the event's time is the best known moment
		}
		out[e.RunID] = append(out[e.RunID], c)
	}
	for _, cs := range out {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Requested.Before(cs[j].Requested) })
	}
	return out, nil
}

// NodeCount is the number of servers a treatment's target started with:
// its cluster's node count, 1 for a single server.
func (t Treatment) NodeCount() int {
	if t.Target.Cluster == nil || t.Target.Cluster.Nodes <= 0 {
		return 1
	}
	return t.Target.Cluster.Nodes
}
