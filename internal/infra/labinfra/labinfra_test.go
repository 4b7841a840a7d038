package labinfra

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/monitor"
)

func provider(t *testing.T, name string) *Provider {
	t.Helper()
	def := &lab.Definition{Hosts: []lab.HostSpec{
		{Name: "db1", Type: "small", Volumes: []lab.VolumeSpec{{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 300}}},
		{Name: "app1", Type: "small", VCPUs: 0.5},
	}}
	p, err := FromDefinition(def, name, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The lab's hosts as infra hosts: addresses on the lab's subnet, commands
// that run inside a host's namespace, the host's own samples, prices with
// the volume's share, limits that follow run-time changes, and a lab
// taken down again by the provider that brought it up.
func TestLabProvider(t *testing.T) {
	labtest.Need(t)
	const name = "t-infra-lab"
	lab.Down(name)
	t.Cleanup(func() { lab.Down(name) })
	p := provider(t, name)
	var notes []string
	hosts, err := p.Up(context.Background(), infra.UpOptions{Note: func(s string) { notes = append(notes, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(hosts.Names(), ","); got != "db1,app1" || len(notes) == 0 {
		t.Fatalf("hosts %s, notes %v", got, notes)
	}
	st := p.Lab().State()
	db, _ := hosts.Get("db1")
	if db.Address() != st.Hosts[0].Addr || db.ClientAddress() != st.Gateway || db.DataDir() != st.Hosts[0].VolumeDir || db.DataDir() == "" {
		t.Errorf("db1: address %s, client %s, data %s; lab state %+v", db.Address(), db.ClientAddress(), db.DataDir(), st.Hosts[0])
	}
	app, _ := hosts.Get("app1")
	if app.DataDir() != "" {
		t.Errorf("app1 has no volume, but a data directory %q", app.DataDir())
	}

	// A command on the host sees the host's address and none of the
	// machine's others.
	cmd := exec.Command("ip", "-o", "-4", "addr", "show")
	if err := db.Command(cmd, 0, 0); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), db.Address()+"/") || strings.Contains(string(out), app.Address()+"/") {
		t.Fatalf("addresses seen on db1: %s %v", out, err)
	}

	// Facts and price: the catalog's small type with a 300-IOPS volume.
	f := db.Facts()
	small, _ := st.Catalog.Instance("small")
	if f.Provider != Name || f.Type != "small" || f.VCPUs != small.VCPUs || len(f.Volumes) != 1 || f.Volumes[0].IOPS != 300 {
		t.Errorf("db1 facts %+v", f)
	}
	want := st.Hosts[0].PricePerHour + st.Hosts[0].Volumes[0].MonthlyPrice/lab.HoursPerMonth
	if db.PricePerHour() != want || f.PricePerHour != small.PricePerHour || f.Volumes[0].MonthlyPrice <= 0 || f.Group != name {
		t.Errorf("price %v, want %v; facts: instance %v (catalog %v), volume %v a month, group %q", db.PricePerHour(), want, f.PricePerHour, small.PricePerHour, f.Volumes[0].MonthlyPrice, f.Group)
	}

	// The host's monitor samples that host only.
	m, err := app.Monitor()
	if err != nil || m == nil {
		t.Fatalf("monitor %v, %v", m, err)
	}
	defer m.Close()
	m.Sample(time.Now())
	time.Sleep(200 * time.Millisecond)
	ss, err := m.Sample(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cpu := false
	for _, s := range ss {
		if s.Host != "app1" {
			t.Fatalf("app1's monitor sampled host %q", s.Host)
		}
		cpu = cpu || s.Resource == monitor.ResourceCPU
	}
	if !cpu {
		t.Errorf("no CPU sample of app1 in %d samples", len(ss))
	}

	// Run-time capabilities: a resize and an event change the facts, and
	// resetting the faults puts the definition back.
	var _ infra.Resizer = p
	var fl infra.Faulter = p
	if err := p.SetCPU("app1", 0.25); err != nil {
		t.Fatal(err)
	}
	if v := app.Facts().VCPUs; v != 0.25 {
		t.Errorf("after SetCPU: %v vCPUs", v)
	}
	if _, err := fl.Apply(infra.Event{Action: lab.ActSetVolume, Host: "db1", IOPS: 600}); err != nil {
		t.Fatal(err)
	}
	if v := db.Facts().Volumes[0].IOPS; v != 600 {
		t.Errorf("after set_volume: %v IOPS", v)
	}
	if _, err := fl.Apply(infra.Event{Action: lab.ActStart, Host: "db1"}); !errors.Is(err, infra.ErrStartService) {
		t.Errorf("start event: %v", err)
	}
	if err := fl.ResetFaults(); err != nil {
		t.Fatal(err)
	}
	if a, d := app.Facts().VCPUs, db.Facts().Volumes[0].IOPS; a != 0.5 || d != 300 {
		t.Errorf("after ResetFaults: app1 %v vCPUs, db1 %v IOPS", a, d)
	}
	if kind, detail := p.Describe(); kind != "lab" || detail.(map[string]any)["name"] != name {
		t.Errorf("describe: %s %v", kind, detail)
	}
	scaleHosts(t, p)

	// A second provider of the same lab takes the running lab as it is and
	// leaves it up; the one that brought it up takes it down.
	upThenDown(t, provider(t, name))
	if _, err := lab.Open(name); err != nil {
		t.Fatalf("a provider that found the lab up took it down: %v", err)
	}
	if err := p.Down(); err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Open(name); err == nil {
		t.Error("the provider that brought the lab up left it up")
	}
	if _, err := os.Stat(filepath.Join(lab.StateDir, name+".json")); !os.IsNotExist(err) {
		t.Errorf("the lab's state file is still there: %v", err)
	}
	if err := p.Down(); err != nil {
		t.Errorf("a second Down: %v", err)
	}
}

// The spec's keep leaves a lab up after Down.
func TestLabProviderKeep(t *testing.T) {
	labtest.Need(t)
	const name = "t-infra-keep"
	lab.Down(name)
	t.Cleanup(func() { lab.Down(name) })
	p, err := FromDefinition(&lab.Definition{Keep: true, Hosts: []lab.HostSpec{{Name: "h", Type: "small"}}}, name, "")
	if err != nil {
		t.Fatal(err)
	}
	upThenDown(t, p)
	if _, err := lab.Open(name); err != nil {
		t.Fatalf("lab.keep: the lab is gone: %v", err)
	}
}

// upThenDown brings p's lab up (or takes it as it is) and calls p.Down.
func upThenDown(t *testing.T, p *Provider) {
	t.Helper()
	if _, err := p.Up(context.Background(), infra.UpOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p.Down(); err != nil {
		t.Fatal(err)
	}
}

// scaleHosts adds a host to p's running lab and removes hosts, through
// infra.Scaler: the new host is one of the provider's hosts, with the
// catalog's limits and price and a volume like db1's, and is monitored;
// a removed host's facts say so; Restore puts the definition back.
func scaleHosts(t *testing.T, p *Provider) {
	t.Helper()
	ctx := context.Background()
	var sc infra.Scaler = p
	db2, err := sc.AddHost(ctx, infra.HostSpec{Name: "db2", Type: "medium", IOPS: 400})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Lab().State()
	medium, _ := st.Catalog.Instance("medium")
	f := db2.Facts()
	if f.Name != "db2" || f.Type != "medium" || f.VCPUs != medium.VCPUs || f.PricePerHour != medium.PricePerHour ||
		len(f.Volumes) != 1 || f.Volumes[0].IOPS != 400 || f.Volumes[0].Type != "piops" || db2.DataDir() == "" || f.Removed {
		t.Errorf("db2 facts %+v, data %q", f, db2.DataDir())
	}
	if db2.PricePerHour() <= medium.PricePerHour {
		t.Errorf("db2's price %v leaves out its volume", db2.PricePerHour())
	}
	if got := strings.Join(p.Hosts().Names(), ","); got != "db1,app1,db2" {
		t.Errorf("hosts after AddHost: %s", got)
	}
	if a := p.AddedHosts(); len(a) != 1 || a[0] != "db2" {
		t.Errorf("added hosts %v", a)
	}
	if _, detail := p.Describe(); fmt.Sprint(detail.(map[string]any)["added"]) != "[db2]" {
		t.Errorf("describe after AddHost: %v", detail)
	}
	cmd := exec.Command("ip", "-o", "-4", "addr", "show")
	if err := db2.Command(cmd, 0, 0); err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), db2.Address()+"/") {
		t.Errorf("addresses seen on db2: %s %v", out, err)
	}
	m, err := db2.Monitor()
	if err != nil || m == nil {
		t.Fatalf("db2's monitor: %v", err)
	}
	m.Sample(time.Now())
	ss, err := m.Sample(time.Now().Add(100 * time.Millisecond))
	m.Close()
	if err != nil || len(ss) == 0 || ss[0].Host != "db2" {
		t.Errorf("db2's samples: %d, %v", len(ss), err)
	}

	if err := sc.RemoveHost(ctx, "db2"); err != nil {
		t.Fatal(err)
	}
	if f := db2.Facts(); !f.Removed || !f.Stopped || f.PricePerHour != 0 || f.Name != "db2" || f.Type != "medium" || db2.PricePerHour() != 0 {
		t.Errorf("db2 removed: facts %+v, price %v", f, db2.PricePerHour())
	}
	if err := sc.RemoveHost(ctx, "app1"); err != nil {
		t.Fatal(err)
	}
	if a, r := p.AddedHosts(), p.RemovedHosts(); len(a) != 0 || len(r) != 1 || r[0] != "app1" {
		t.Errorf("after removing db2 and app1: added %v, removed %v", a, r)
	}
	if _, err := sc.AddHost(ctx, infra.HostSpec{Name: "db3"}); err == nil || !strings.Contains(err.Error(), "needs an instance type") {
		t.Errorf("a new host without a type: %v", err)
	}
	if _, err := sc.AddHost(ctx, infra.HostSpec{Name: "db4", Type: "small"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Hosts().Names(), ","); got != "db1,app1" || len(p.AddedHosts())+len(p.RemovedHosts()) != 0 {
		t.Errorf("hosts after Restore: %s", got)
	}
	app, _ := p.Hosts().Get("app1")
	if f := app.Facts(); f.VCPUs != 0.5 || f.Removed {
		t.Errorf("app1 back: %+v", f)
	}
}
