package apptier

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// In a lab, an application server is added on a host the lab provider
// brings up while the load runs (app2, as the campaign's add_node and the
// elastic controller do): the database admits the new host's address, the
// server takes its share of the requests, and it leaves again without a
// request failing before its host is released.
func TestLabAddAndRemoveAppServer(t *testing.T) {
	needLab(t)
	p, env := scaleLab(t, "t-apptier-scale", "db1")
	ctx := context.Background()
	o := defaultOptions()
	o.App.Hosts, o.App.Pool, o.DB.Host = []string{"app1"}, 4, "db1"
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tgt, err := Open(ctx, *o, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tgt.Close(); err != nil {
			t.Error(err)
		}
	})
	gen := prepareAndLoad(t, tgt, 200)
	load := startLoad(t, tgt, gen, 8)

	app2, err := p.AddHost(ctx, infra.HostSpec{Name: "app2", Type: "medium"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := tgt.AddNode(ctx, "app2")
	if err != nil {
		t.Fatal(err)
	}
	checkChange(t, ch, "add_node", "app2", "app2")
	if got := nodeNames(t, tgt, true); !slices.Equal(got, []string{"app1", "app2"}) {
		t.Fatalf("nodes %v after adding app2", got)
	}
	added := tgt.serverNamed("app2")
	if host, _, _ := net.SplitHostPort(added.addr); host != app2.Address() || host == tgt.serverNamed("app1").host() {
		t.Fatalf("app2's server listens on %s; the host's address is %s", added.addr, app2.Address())
	}
	a0 := added.answered.Load()
	time.Sleep(time.Second)
	if n := added.answered.Load() - a0; n < 50 {
		t.Fatalf("app2 answered %d requests in 1 s in the rotation", n)
	}
	load.check(t, "while adding app2")

	ch, err = tgt.RemoveNode(ctx, "app2")
	if err != nil {
		t.Fatal(err)
	}
	checkChange(t, ch, "remove_node", "app2", "app2")
	if err := p.RemoveHost(ctx, "app2"); err != nil {
		t.Fatal(err)
	}
	before := load.ok.Load()
	time.Sleep(500 * time.Millisecond)
	if n := load.ok.Load() - before; n < 50 {
		t.Fatalf("%d requests succeeded in 0.5 s after app2 left", n)
	}
	load.end()
	load.check(t, "while removing app2")
	if got := nodeNames(t, tgt, true); !slices.Equal(got, []string{"app1"}) {
		t.Fatalf("nodes %v after removing app2", got)
	}
}

// scaleLab brings up a lab named name of two medium hosts, app1 and
// dbHost, which the test's cleanup takes down, and the target's
// environment on it.
func scaleLab(t *testing.T, name, dbHost string) (*labinfra.Provider, registry.Env) {
	t.Helper()
	lab.Down(name)
	p, err := labinfra.FromDefinition(&lab.Definition{Hosts: []lab.HostSpec{
		{Name: "app1", Type: "medium"},
		{Name: dbHost, Type: "medium"},
	}}, name, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(context.Background(), infra.UpOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Down(); err != nil {
			t.Error(err)
		}
	})
	env := registry.Env{
		Dir: labtest.SearchableDir(t),
		Lab: func(host string) (*deploy.Placement, error) {
			h, err := p.Hosts().Get(host)
			if err != nil {
				return nil, err
			}
			return deploy.On(h), nil
		},
		Hosts: func() []string { return p.Hosts().Names() },
	}
	return p, env
}
