package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/lab"
)

// Two Cassandra nodes on lab hosts (one on a volume, one without): each
// listens on its host's address, nodetool reaches their JMX ports from
// this machine, the heap follows the host's memory, and a client on this
// machine reaches both native ports.
func TestCassandraOnLabHosts(t *testing.T) {
	labtest.Need(t)
	if _, err := deploy.JarDir("cassandra"); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	const name = "t-deploy-cass"
	lab.Down(name)
	t.Cleanup(func() { lab.Down(name) })
	def := &lab.Definition{Hosts: []lab.HostSpec{
		{Name: "cas1", Type: "medium", Volumes: []lab.VolumeSpec{{Name: "data", Type: "standard", SizeGiB: 10}}},
		{Name: "cas2", Type: "medium"},
	}}
	p, err := labinfra.FromDefinition(def, name, "")
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := p.Up(context.Background(), infra.UpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Down() })
	var places []*deploy.Placement
	for _, h := range hosts {
		places = append(places, deploy.On(h))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := deploy.StartCassandra(ctx, filepath.Join(labtest.SearchableDir(t), "cassandra"),
		deploy.Managed{Cluster: &deploy.Cluster{Nodes: 2, Hosts: "cas", Placements: places}})
	if errors.Is(err, deploy.ErrMissingBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("2 nodes on lab hosts started in %.1f s", time.Since(start).Seconds())
	nodes := c.Nodes()
	cp := c.ContactPoints()
	for i, n := range nodes {
		h := hosts[i]
		if n.Host != h.Name() || n.Inst.Host != h.Address() || cp[i] != fmt.Sprintf("%s:9042", h.Address()) {
			t.Errorf("%s: host %q address %s contact %s; want %s at %s:9042", n.Name, n.Host, n.Inst.Host, cp[i], h.Name(), h.Address())
		}
		// The medium type's 1 GiB gives a 512 MiB heap.
		conf, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(n.Inst.PID()), "cmdline"))
		if err != nil || !strings.Contains(string(conf), "-Xmx512M") {
			t.Errorf("%s: command line %q (%v), want -Xmx512M", n.Name, conf, err)
		}
	}
	if d := nodes[0].Inst.DataDir(); !strings.HasPrefix(d, hosts[0].DataDir()) {
		t.Errorf("node1's data is in %s, not on cas1's volume %s", d, hosts[0].DataDir())
	}
	st, err := c.Status(ctx)
	if err != nil || fmt.Sprint(st) != "map[node1:UN node2:UN]" {
		t.Fatalf("status %v (%v)", st, err)
	}
	if _, err := c.AddNode(ctx, nil); err == nil || !strings.Contains(err.Error(), "name a lab host") {
		t.Errorf("adding a loopback node to a lab cluster: %v", err)
	}
}
