package campaign

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// scalerProvider hands out hosts that do nothing and remembers which it
// was asked to take back.
type scalerProvider struct {
	infra.Provider
	removed []string
}

func (p *scalerProvider) Name() string { return "fake" }

func (p *scalerProvider) AddHost(_ context.Context, h infra.HostSpec) (infra.Host, error) {
	return idleHost{name: h.Name, typ: h.Type}, nil
}

func (p *scalerProvider) RemoveHost(_ context.Context, name string) error {
	p.removed = append(p.removed, name)
	return nil
}

type idleHost struct {
	infra.Host
	name, typ string
}

func (h idleHost) Name() string                    { return h.name }
func (h idleHost) Facts() infra.Facts              { return infra.Facts{Name: h.name, Type: h.typ} }
func (h idleHost) Monitor() (infra.Monitor, error) { return nil, nil }
func (h idleHost) PricePerHour() float64           { return 4 }

// failingCluster is a cluster whose new nodes never start.
type failingCluster struct{ target.Target }

func (failingCluster) Nodes() []deploy.Node { return []deploy.Node{{Name: "node1", Host: "cass"}} }
func (failingCluster) AddNode(context.Context, string) (deploy.NodeChange, error) {
	return deploy.NodeChange{Node: "node2"}, errors.New("the cassandra server exited while starting (exit status 3)")
}
func (failingCluster) RemoveNode(context.Context, string) (deploy.NodeChange, error) {
	return deploy.NodeChange{}, errors.New("no such node")
}

// A host brought up for a node that then failed to start goes back to the
// provider: it served nothing, and left in place it would be paid for and
// counted as one of its tier's nodes, so a controller would scale from a
// size the cluster does not have (it once tried, every period to the end
// of the run, to remove a node that had never joined).
func TestAFailedAddNodeReleasesItsHost(t *testing.T) {
	p := &scalerProvider{}
	first := idleHost{name: "cass", typ: "cassx"}
	ex := &executor{setup: &Setup{Provider: p, Hosts: infra.Hosts{first}}, hostMonOf: map[string]infra.Monitor{}}
	ch, err := ex.addNode(context.Background(), failingCluster{}, infra.Event{Action: actAddNode, Host: "cass2", Type: "cassx"})
	if err == nil || !strings.Contains(err.Error(), "exited while starting") || !strings.Contains(err.Error(), "host cass2 was released again") {
		t.Errorf("error %v: want the node's failure and that its host was released", err)
	}
	if ch.Host != "cass2" {
		t.Errorf("the change names host %q, want cass2", ch.Host)
	}
	if len(p.removed) != 1 || p.removed[0] != "cass2" {
		t.Errorf("hosts handed back: %v, want cass2", p.removed)
	}
	if len(ex.setup.Hosts) != 1 || ex.setup.Hosts[0].Name() != "cass" || len(ex.undo.hosts) != 0 || len(ex.undo.added) != 0 {
		t.Errorf("after the failed add: hosts %v, undo %+v; want only cass and nothing to undo", ex.setup.Hosts, ex.undo)
	}
}

// joiningCluster is a cluster on this machine whose nodes join and leave.
type joiningCluster struct{ target.Target }

func (joiningCluster) Nodes() []deploy.Node { return []deploy.Node{{Name: "node1"}} }
func (joiningCluster) AddNode(context.Context, string) (deploy.NodeChange, error) {
	return deploy.NodeChange{Node: "node2"}, nil
}
func (joiningCluster) RemoveNode(context.Context, string) (deploy.NodeChange, error) {
	return deploy.NodeChange{Node: "node2"}, nil
}

// A run whose cluster the controller changed has its acknowledged records
// read back like one whose spec's events changed it, even when the
// controller took its node out again before the run ended: the records
// had to survive the join and the leave (docs/failures.md). A run the
// controller left alone is not checked.
func TestAControllersNodeChangeTriggersTheWriteCheck(t *testing.T) {
	st, err := store.Create(filepath.Join(t.TempDir(), "r.db"), store.Campaign{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, err := st.StartRun(store.Run{Treatment: "t", Model: "open", Level: 100, Repetition: 1})
	if err != nil {
		t.Fatal(err)
	}
	ex := &executor{s: &spec.Spec{Controller: &spec.Controller{}}, st: st, tgt: joiningCluster{}, setup: &Setup{}, hostMonOf: map[string]infra.Monitor{}}
	if got := ex.writeCheckTrigger(); got != "" {
		t.Fatalf("before any change: trigger %q, want none", got)
	}
	ctx := context.Background()
	for _, a := range []string{actAddNode, actRemoveNode} {
		if _, err := ex.applyNodeEvent(ctx, id, infra.Event{Action: a}); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	if got := ex.writeCheckTrigger(); got != "cluster_change" {
		t.Errorf("after the controller's add and remove: trigger %q, want cluster_change", got)
	}
	if err := ex.undoNodes(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := ex.writeCheckTrigger(); got != "" {
		t.Errorf("the next run, which changed nothing: trigger %q, want none", got)
	}
}
