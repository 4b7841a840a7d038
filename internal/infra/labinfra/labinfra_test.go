package labinfra

import (
	"context"
	"errors"
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
	var sc infra.Scaler = p
	if _, err := sc.AddHost(context.Background(), infra.HostSpec{Name: "db2", Type: "small"}); !errors.Is(err, infra.ErrNotSupported) {
		t.Errorf("AddHost: %v", err)
	}
	if err := sc.RemoveHost(context.Background(), "app1"); !errors.Is(err, infra.ErrNotSupported) {
		t.Errorf("RemoveHost: %v", err)
	}
	if kind, detail := p.Describe(); kind != "lab" || detail.(map[string]any)["name"] != name {
		t.Errorf("describe: %s %v", kind, detail)
	}

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
