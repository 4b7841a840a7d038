package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultCatalogDoublesSizesAndPrices(t *testing.T) {
	c := DefaultCatalog()
	names := []string{"small", "medium", "large", "xlarge"}
	for i := 1; i < len(names); i++ {
		a, _ := c.Instance(names[i-1])
		b, ok := c.Instance(names[i])
		if !ok {
			t.Fatalf("no instance type %s", names[i])
		}
		if b.VCPUs != 2*a.VCPUs || b.MemoryMiB != 2*a.MemoryMiB || b.PricePerHour != 2*a.PricePerHour {
			t.Errorf("%s is not twice %s: %+v vs %+v", b.Name, a.Name, b, a)
		}
	}
	large, _ := c.Instance("large")
	if large.PricePerHour != 0.36 {
		t.Errorf("large costs %v/h; the catalog models m1.large at $0.36/h (seed 002)", large.PricePerHour)
	}
	v, ok := c.Volume("piops")
	if !ok || v.IOPSPerGiB != 30 || v.MaxIOPS != 20000 || v.MaxMiBps != 320 {
		t.Errorf("piops volume = %+v, want 30 IOPS/GiB, 20000 max, 320 MiB/s (seed 000 §4.1)", v)
	}
	if got := v.VolumeMonthlyPrice(100, 300); got != 0.125*100+0.065*300 {
		t.Errorf("monthly price of 100 GiB at 300 IOPS = %v", got)
	}
}

func TestLoadCatalogAddsAndReplaces(t *testing.T) {
	f := filepath.Join(t.TempDir(), "cat.yaml")
	if err := os.WriteFile(f, []byte("instance_types:\n  - {name: small, vcpus: 0.25, memory_mib: 128, network_mbit: 5, price_per_hour: 0.01}\n  - {name: tiny, vcpus: 0.1, memory_mib: 64, price_per_hour: 0.005}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCatalog(f)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := c.Instance("small"); s.VCPUs != 0.25 {
		t.Errorf("small was not replaced: %+v", s)
	}
	if _, ok := c.Instance("tiny"); !ok {
		t.Error("tiny was not added")
	}
	if _, ok := c.Instance("large"); !ok {
		t.Error("large disappeared")
	}
	if err := os.WriteFile(f, []byte("instance_types:\n  - {name: bad, vcpus: 0, memory_mib: 128}\n"), 0o644); err == nil {
		if _, err := LoadCatalog(f); err == nil || !strings.Contains(err.Error(), "vcpus") {
			t.Errorf("a type with 0 vcpus: %v", err)
		}
	}
	if err := os.WriteFile(f, []byte("instance_types:\n  - {name: x, vcpu: 1, memory_mib: 128}\n"), 0o644); err == nil {
		if _, err := LoadCatalog(f); err == nil || !strings.Contains(err.Error(), "vcpu") {
			t.Errorf("a misspelt field: %v", err)
		}
	}
}

func TestResolve(t *testing.T) {
	d := Definition{Hosts: []HostSpec{
		{Name: "db", Count: 3, Type: "medium", Volumes: []VolumeSpec{{Name: "data", Type: "piops", SizeGiB: 100, IOPS: 300}}},
		{Name: "app", Type: "small", VCPUs: 0.25},
	}}
	hosts, err := d.resolve(DefaultCatalog())
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 4 || hosts[0].Name != "db1" || hosts[2].Name != "db3" || hosts[3].Name != "app" {
		t.Fatalf("hosts = %+v", hosts)
	}
	v := hosts[1].Volumes[0]
	// medium's instance-to-volume connection (62.5 MiB/s) caps the
	// volume's own 320 MiB/s.
	if v.IOPS != 300 || v.MiBps != 62.5 || v.MonthlyPrice != 0.125*100+0.065*300 {
		t.Errorf("volume = %+v", v)
	}
	if hosts[3].VCPUs != 0.25 || hosts[3].MemoryBytes != 512<<20 {
		t.Errorf("app = %+v", hosts[3])
	}

	bad := []struct {
		d    Definition
		want string
	}{
		{Definition{}, "lab.hosts: required"},
		{Definition{Hosts: []HostSpec{{Name: "db1", Type: "huge"}}}, `lab.hosts[0].type: "huge" is not in the catalog; use one of large, medium, small, xlarge`},
		{Definition{Hosts: []HostSpec{{Name: "1db", Type: "small"}}}, "lab.hosts[0].name"},
		{Definition{Hosts: []HostSpec{{Name: "a", Type: "small"}, {Name: "a", Type: "small"}}}, "lab.hosts[1].name: host \"a\" is already defined"},
		{Definition{Hosts: []HostSpec{{Name: "a", Type: "small", Volumes: []VolumeSpec{{Name: "d", Type: "piops", SizeGiB: 10, IOPS: 301}}}}}, "lab.hosts[0].volumes[0].iops: 301 IOPS is more than 30 per GiB allows for 10 GiB (at most 300)"},
		{Definition{Hosts: []HostSpec{{Name: "a", Type: "small", Volumes: []VolumeSpec{{Name: "d", Type: "standard", IOPS: 100}}}}}, "has no provisioned IOPS"},
		{Definition{Hosts: []HostSpec{{Name: "a", Type: "small", Volumes: []VolumeSpec{{Name: "d", Type: "piops"}, {Name: "e", Type: "piops"}}}}}, "at most one volume"},
	}
	for _, b := range bad {
		_, err := b.d.resolve(DefaultCatalog())
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want it to contain %q", b.d, err, b.want)
		}
	}
}

func TestCheckEvents(t *testing.T) {
	hosts := []HostConfig{{Name: "db1", Volumes: []VolumeConfig{{Name: "data"}}}, {Name: "app"}}
	ok := []Event{
		{At: time.Second, Action: ActStop, Host: "db1"},
		{At: 2 * time.Second, Action: ActPartition, Groups: [][]string{{"client", "app"}, {"db1"}}},
		{At: 3 * time.Second, Action: ActSetVolume, Host: "db1", IOPS: 1800},
		{At: 3 * time.Second, Action: ActSetLink, Host: "app", NetworkMbit: 5},
		{At: 4 * time.Second, Action: ActStallDisk, Host: "db1"},
		{At: 5 * time.Second, Action: ActResumeDisk, Host: "db1"},
	}
	if err := CheckEvents(ok, hosts, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		e    Event
		want string
	}{
		{Event{At: 11 * time.Second, Action: ActStop, Host: "db1"}, "events[0].at: 11s is outside the measured phase"},
		{Event{Action: "reboot", Host: "db1"}, `events[0].action: "reboot" is not an action`},
		{Event{Action: ActKill, Host: "db9"}, `events[0].host: "db9" is not a lab host; use one of db1, app`},
		{Event{Action: ActPartition, Groups: [][]string{{"db1"}}}, "events[0].groups: a partition needs two non-empty groups"},
		{Event{Action: ActPartition, Groups: [][]string{{"db1"}, {"db1"}}}, `"db1" is in both groups`},
		{Event{Action: ActSetVolume, Host: "app", IOPS: 5}, "events[0].host: app has no volume"},
		{Event{Action: ActSetCPU, Host: "app"}, "events[0].vcpus: set_cpu needs"},
		{Event{Action: ActStallDisk, Host: "app"}, "events[0].host: app has no volume to stall; give it one in lab.hosts[].volumes"},
		{Event{Action: ActStallDisk, Host: "db1", IOPS: 0.5}, "does not take"},
		{Event{Action: ActStop, Host: "app", IOPS: 3}, "does not take"},
	}
	for _, b := range bad {
		err := CheckEvents([]Event{b.e}, hosts, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want it to contain %q", b.e, err, b.want)
		}
	}
}

// A fake cgroup v2 tree: detection picks v2 and limits are written in its
// file formats.
func TestCgroupV2Files(t *testing.T) {
	root := t.TempDir()
	unified := filepath.Join(root, "sys/fs/cgroup")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "proc/self"), 0o755))
	must(os.MkdirAll(unified, 0o755))
	must(os.WriteFile(filepath.Join(root, "proc/self/mounts"), []byte("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n"), 0o644))
	must(os.WriteFile(filepath.Join(unified, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644))
	rel := "/headroom-lab/l/h"
	// The kernel makes these files; the fake tree must have them.
	for _, d := range []string{"", "headroom-lab", "headroom-lab/l", "headroom-lab/l/h"} {
		must(os.MkdirAll(filepath.Join(unified, d), 0o755))
		for _, f := range []string{"cgroup.subtree_control", "cpu.max", "memory.max", "io.max", "cgroup.procs"} {
			must(os.WriteFile(filepath.Join(unified, d, f), nil, 0o644))
		}
	}
	cg, err := detectCgroups(root)
	if err != nil {
		t.Fatal(err)
	}
	if cg.Version() != "v2" {
		t.Fatalf("detected %s", cg.Version())
	}
	must(cg.create(rel))
	must(cg.setCPU(rel, 0.5))
	must(cg.setMemory(rel, 256<<20))
	must(cg.setIO(rel, dirLimits{Dev: "254:0", IOPS: [2]uint64{200, 100}, BPS: [2]uint64{0, 1 << 20}}))
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(unified, f))
		must(err)
		return string(b)
	}
	for f, want := range map[string]string{
		"cgroup.subtree_control":                "+cpu +memory +io",
		"headroom-lab/l/cgroup.subtree_control": "+cpu +memory +io",
		"headroom-lab/l/h/cpu.max":              "50000 100000",
		"headroom-lab/l/h/memory.max":           "268435456",
		"headroom-lab/l/h/io.max":               "254:0 riops=200 wiops=100 rbps=max wbps=1048576",
	} {
		if got := read(f); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if files := cg.procsFiles(rel); len(files) != 1 || files[0] != filepath.Join(unified, rel, "cgroup.procs") {
		t.Errorf("procs files = %v", files)
	}
}

func TestCgroupV1MissingControllerIsNamed(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc/self"), 0o755); err != nil {
		t.Fatal(err)
	}
	mounts := "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\ncgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
	if err := os.WriteFile(filepath.Join(root, "proc/self/mounts"), []byte(mounts), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := detectCgroups(root)
	if err == nil || !strings.Contains(err.Error(), "cgroup v1 cpuacct controller is not mounted") {
		t.Errorf("error = %v", err)
	}
}
