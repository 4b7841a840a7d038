package campaign

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
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
