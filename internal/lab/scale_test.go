package lab

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// A new host's limits: the catalog's type, a volume like its peers' (the
// same type's first), a removed host back as it was.
func TestNewHostConfig(t *testing.T) {
	cat := DefaultCatalog()
	piops := VolumeConfig{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 200, MiBps: 320}
	std := VolumeConfig{Name: "scratch", Type: "standard", SizeGiB: 10}
	peers := []HostConfig{
		{Name: "app", Type: "medium", VCPUs: 1, Volumes: []VolumeConfig{std}},
		{Name: "db1", Type: "small", VCPUs: 0.5, Volumes: []VolumeConfig{piops}},
	}
	small, _ := cat.Instance("small")

	hc, err := newHostConfig(NewHost{Name: "db2", Type: "small"}, peers, nil, cat)
	if err != nil {
		t.Fatal(err)
	}
	if hc.Name != "db2" || hc.Type != "small" || hc.VCPUs != small.VCPUs || hc.MemoryBytes != small.MemoryMiB<<20 ||
		hc.PricePerHour != small.PricePerHour || len(hc.Volumes) != 1 || hc.Volumes[0].Type != "piops" || hc.Volumes[0].IOPS != 200 || hc.Volumes[0].SizeGiB != 20 {
		t.Errorf("db2 like db1: %+v", hc)
	}
	// No host of type large: the first host with a volume lends its shape.
	hc, err = newHostConfig(NewHost{Name: "big", Type: "large"}, peers, nil, cat)
	if err != nil || len(hc.Volumes) != 1 || hc.Volumes[0].Type != "standard" || hc.VCPUs != 2 {
		t.Errorf("large host: %+v, %v", hc, err)
	}
	hc, err = newHostConfig(NewHost{Name: "db2", Type: "small", IOPS: 500}, peers, nil, cat)
	pv, _ := cat.Volume("piops")
	if err != nil || hc.Volumes[0].IOPS != 500 || hc.Volumes[0].MonthlyPrice != pv.VolumeMonthlyPrice(20, 500) {
		t.Errorf("iops 500: %+v, %v", hc, err)
	}
	// A removed host returns with its own definition, type or not.
	gone := HostConfig{Name: "db3", Type: "small", VCPUs: 0.25, MemoryBytes: 96 << 20, Volumes: []VolumeConfig{piops}}
	for _, typ := range []string{"", "small"} {
		hc, err = newHostConfig(NewHost{Name: "db3", Type: typ}, peers, []HostConfig{gone}, cat)
		if err != nil || hc.VCPUs != 0.25 || hc.MemoryBytes != 96<<20 || hc.Volumes[0].IOPS != 200 {
			t.Errorf("db3 back (type %q): %+v, %v", typ, hc, err)
		}
	}
	// Without a volume anywhere the host has none.
	hc, err = newHostConfig(NewHost{Name: "w", Type: "small"}, []HostConfig{{Name: "web", Type: "small"}}, nil, cat)
	if err != nil || len(hc.Volumes) != 0 {
		t.Errorf("no volumes: %+v, %v", hc, err)
	}
	bad := []struct {
		n     NewHost
		peers []HostConfig
		want  string
	}{
		{NewHost{Name: "x"}, peers, "type: a new host needs an instance type; use one of large, medium, small, xlarge"},
		{NewHost{Name: "x", Type: "huge"}, peers, `type: "huge" is not in the lab's catalog`},
		{NewHost{Name: "x", Type: "small", IOPS: 5000}, peers, "iops: 5000 IOPS is more than 30 per GiB allows for 20 GiB"},
		{NewHost{Name: "x", Type: "small", IOPS: 100}, []HostConfig{{Name: "web", Type: "small"}}, "iops: no host of the lab has a volume"},
		{NewHost{Name: "x", Type: "small", IOPS: -1}, peers, "iops: must be positive"},
	}
	for _, b := range bad {
		_, err := newHostConfig(b.n, b.peers, nil, cat)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: %v, want %q", b.n, err, b.want)
		}
	}
}

func TestSlotsAndMACs(t *testing.T) {
	st := &State{Name: "s", Subnet: "10.201.3.0/24", Hosts: []HostState{{Addr: "10.201.3.10"}, {Addr: "10.201.3.12"}}, Pending: []HostState{{Addr: "10.201.3.11"}}}
	if i, err := freeSlot(st); err != nil || i != 3 {
		t.Errorf("free slot %d, %v; want 3 (slots 0-2 taken, one of them pending)", i, err)
	}
	st.Hosts = st.Hosts[:1]
	if i, _ := freeSlot(st); i != 2 {
		t.Errorf("free slot %d, want 2: a removed host's slot is taken again", i)
	}
	if m := macFor("10.201.3.12"); m != "02:48:0a:c9:03:0c" {
		t.Errorf("mac %s", m)
	}
}

// The cluster events' rules, checked in the order the events happen.
func TestCheckClusterEvents(t *testing.T) {
	hosts := []HostConfig{
		{Name: "db1", Type: "small", Volumes: []VolumeConfig{{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 200}}},
		{Name: "db2", Type: "small", Volumes: []VolumeConfig{{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 200}}},
	}
	cat := DefaultCatalog()
	ok := []Event{
		// Listed out of time order: remove_node db4 at 8s follows its add at 2s.
		{At: 8 * time.Second, Action: ActRemoveNode, Host: "db4"},
		{At: 2 * time.Second, Action: ActAddNode, Host: "db4", Type: "small", IOPS: 400},
		{At: 3 * time.Second, Action: ActSetVolume, Host: "db4", IOPS: 300}, // the added host has db1's volume
		{At: 4 * time.Second, Action: ActPartition, Groups: [][]string{{"client"}, {"db4"}}},
		{At: 5 * time.Second, Action: ActAddNode, Host: "db5"}, // type left to the campaign
		{At: 6 * time.Second, Action: ActRemoveNode, Host: "db2"},
		{At: 9 * time.Second, Action: ActAddNode, Host: "db4", Type: "medium"}, // added again after its removal
	}
	if err := CheckEventsWith(ok, hosts, cat, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		es   []Event
		want string
	}{
		{[]Event{{At: time.Second, Action: ActAddNode, Host: "db1", Type: "small"}},
			"events[0].host: db1 is a host of lab.hosts; add_node brings up a new host"},
		{[]Event{{At: time.Second, Action: ActAddNode, Host: "db9", Type: "huge"}},
			`events[0].type: "huge" is not in the lab's catalog; use one of large, medium, small, xlarge`},
		{[]Event{{At: time.Second, Action: ActAddNode, Type: "small"}},
			"events[0].host: add_node needs the new host's name, like db4"},
		{[]Event{{At: time.Second, Action: ActAddNode, Host: "9x", Type: "small"}},
			`events[0].host: "9x" must start with a letter`},
		{[]Event{{At: time.Second, Action: ActAddNode, Host: "db9", Type: "small", IOPS: 9000}},
			"events[0].iops: 9000 IOPS is more than 30 per GiB allows"},
		{[]Event{{At: time.Second, Action: ActAddNode, Host: "db9", VCPUs: 2}},
			"events[0].action: add_node takes host, type and iops"},
		{[]Event{{At: time.Second, Action: ActAddNode, Host: "db9"}, {At: 2 * time.Second, Action: ActAddNode, Host: "db9"}},
			"events[1].host: db9 is already added by events[0] at 1s"},
		{[]Event{{At: time.Second, Action: ActRemoveNode, Host: "db7"}},
			`events[0].host: "db7" is not a lab host; use one of db1, db2, or a host an earlier add_node brings up`},
		{[]Event{{At: 5 * time.Second, Action: ActAddNode, Host: "db9"}, {At: 2 * time.Second, Action: ActRemoveNode, Host: "db9"}},
			"events[1].host: db9 is added by events[0] at 5s, after this event at 2s"},
		{[]Event{{At: time.Second, Action: ActRemoveNode, Host: "db2"}, {At: 2 * time.Second, Action: ActRemoveNode, Host: "db2"}},
			"events[1].host: db2 is released by events[0] at 1s, before this event"},
		{[]Event{{At: time.Second, Action: ActRemoveNode, Host: "db2"}, {At: 2 * time.Second, Action: ActKill, Host: "db2"}},
			"events[1].host: db2 is released by events[0] at 1s"},
		{[]Event{{At: time.Second, Action: ActRemoveNode, Host: "db2", IOPS: 5}},
			"events[0].action: remove_node takes only host"},
		{[]Event{{At: time.Second, Action: ActKill, Host: "db2", Type: "small"}},
			"events[0].type: only add_node takes an instance type"},
		{[]Event{{At: time.Second, Action: ActRemoveNode, Host: "db2"}, {At: 2 * time.Second, Action: ActPartition, Groups: [][]string{{"db1"}, {"db2"}}}},
			`events[1].groups: "db2" is not a lab host at this event`},
	}
	for _, b := range bad {
		err := CheckEventsWith(b.es, hosts, cat, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v:\n got %v\nwant %q", b.es, err, b.want)
		}
	}
	// Without the catalog the type is left unchecked.
	if err := CheckEvents([]Event{{At: time.Second, Action: ActAddNode, Host: "db9", Type: "huge"}}, hosts, 10*time.Second); err != nil {
		t.Errorf("CheckEvents without a catalog: %v", err)
	}
}

// The lab does not carry out cluster events itself.
func TestApplyRefusesClusterEvents(t *testing.T) {
	l := &Lab{}
	for _, a := range []string{ActAddNode, ActRemoveNode} {
		if _, err := l.Apply(Event{Action: a, Host: "db4"}); !errors.Is(err, ErrClusterEvent) {
			t.Errorf("%s: %v, want ErrClusterEvent", a, err)
		}
	}
}

// A host added to a running lab is a host like the others: it runs
// commands in its own namespace, is reachable from the machine and from
// the other hosts, has its type's CPU quota and its volume's IOPS budget,
// and is monitored; removed, nothing of it is left, while the other hosts
// and their monitor carry on. Taken down with the lab, a host that was
// being added is removed too.
func TestAddAndRemoveHostWhileRunning(t *testing.T) {
	vol := VolumeConfig{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 200}
	l := upLab(t, "t-scale", []HostConfig{host("db1", "small", 0.5, 256, 0, vol)})
	h1, _ := l.Host("db1")
	ctx := context.Background()

	// db1 serves and is sampled the whole time.
	addr1 := h1.Addr + ":7200"
	_, out1 := startOn(t, l, "db1", "echo", "HEADROOM_LAB_ADDR="+addr1)
	if line, err := out1.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("echo server on db1: %q %v", line, err)
	}
	mon1, err := l.NewMonitor("db1")
	if err != nil {
		t.Fatal(err)
	}
	defer mon1.Close()
	var sampleErrs atomic.Int64
	var sampled atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := mon1.Sample(time.Now()); err != nil {
				sampleErrs.Add(1)
			} else {
				sampled.Add(1)
			}
			if err := echo(addr1, time.Second); err != nil {
				t.Errorf("db1 stopped answering while a host came or went: %v", err)
			}
		}
	}()
	stopSampling := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopSampling()

	start := time.Now()
	h2, err := l.AddHost(ctx, NewHost{Name: "db2", Type: "small"})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("adding a host with a volume took %v", took)
	if h2.VCPUs != 0.5 || len(h2.Volumes) != 1 || h2.Volumes[0].IOPS != 200 || h2.VolumeDir == "" || h2.Addr == h1.Addr {
		t.Fatalf("db2 as added: %+v", h2)
	}
	if st, err := readState("t-scale"); err != nil || len(st.Hosts) != 2 || st.Hosts[1].Name != "db2" || len(st.Pending) != 0 {
		t.Fatalf("state file after AddHost: %+v, %v", st, err)
	}
	if _, err := l.AddHost(ctx, NewHost{Name: "db2", Type: "small"}); err == nil || !strings.Contains(err.Error(), "already has a host db2") {
		t.Errorf("adding db2 twice: %v", err)
	}

	// A command on db2 sees db2's address, with its own MAC.
	cmd := exec.Command("ip", "-o", "link", "show", "eth0")
	if err := l.Command("db2", cmd, 0, 0); err != nil {
		t.Fatal(err)
	}
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), macFor(h2.Addr)) {
		t.Errorf("db2's eth0: %s %v", b, err)
	}
	addr2 := h2.Addr + ":7200"
	echo2, out2 := startOn(t, l, "db2", "echo", "HEADROOM_LAB_ADDR="+addr2)
	if line, err := out2.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("echo server on db2: %q %v", line, err)
	}
	if err := echo(addr2, time.Second); err != nil {
		t.Errorf("the machine cannot reach db2: %v", err)
	}
	if err := canDial(l, "db1", addr2); err != nil {
		t.Errorf("db1 cannot reach db2: %v", err)
	}
	if err := canDial(l, "db2", addr1); err != nil {
		t.Errorf("db2 cannot reach db1: %v", err)
	}

	// Its volume's budget and its CPU quota hold.
	file := filepath.Join(h2.VolumeDir, "disk.dat")
	if _, _, err := diskReads(file, "1ms"); err != nil {
		t.Fatal(err)
	}
	iops := readIOPS(t, l, "db2", file, 3*time.Second)
	t.Logf("db2's 200-IOPS volume: %.1f reads/s", iops)
	if iops < 180 || iops > 210 {
		t.Errorf("the added host's 200-IOPS volume delivered %.1f reads/s", iops)
	}
	mon2, err := l.NewMonitor("db2")
	if err != nil {
		t.Fatal(err)
	}
	defer mon2.Close()
	if _, err := mon2.Sample(time.Now()); err != nil {
		t.Fatal(err)
	}
	burn, _ := startOn(t, l, "db2", "burn")
	time.Sleep(200 * time.Millisecond)
	u0, t0 := cpuUsage(t, l, "db2"), time.Now()
	time.Sleep(2 * time.Second)
	used := (cpuUsage(t, l, "db2") - u0) / time.Since(t0).Seconds()
	added, _ := l.Host("db2")
	quota := added.Now.Cores // 0.5 vCPU in this machine's cores (computeunit.go)
	t.Logf("a busy loop on the added 0.5 vCPU host (%.3f cores) used %.3f of a core", quota, used)
	if quota != l.State().ComputeUnit.CoresFor(0.5) || used > 1.1*quota || used < 0.6*quota {
		t.Errorf("the added 0.5 vCPU host has a quota of %.3f cores and used %.3f of a core", quota, used)
	}
	ss, err := mon2.Sample(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cpu := false
	for _, s := range ss {
		cpu = cpu || s.Host == "db2" && s.Resource == monitor.ResourceCPU && s.Metric == monitor.CPUUtilPct && s.Value > 50
	}
	if !cpu {
		t.Errorf("db2's monitor saw no busy CPU in %d samples", len(ss))
	}

	// Removing it kills its processes and leaves nothing behind.
	pids, _ := l.PIDs("db2")
	start = time.Now()
	if err := l.RemoveHost(ctx, "db2"); err != nil {
		t.Fatal(err)
	}
	t.Logf("removing a host with 2 processes took %v", time.Since(start))
	_, _ = burn.Wait(), echo2.Wait() // children of this test: reaped, not zombies
	assertHostGone(t, h2, pids...)
	if _, err := l.Host("db2"); err == nil {
		t.Error("db2 is still a host of the lab")
	}
	if err := l.RemoveHost(ctx, "db2"); err == nil || !strings.Contains(err.Error(), `no host "db2" to remove; its hosts are db1`) {
		t.Errorf("removing db2 twice: %v", err)
	}
	if err := echo(addr1, time.Second); err != nil {
		t.Errorf("db1 after db2 left: %v", err)
	}

	// Added again without a type it comes back as it was, at its address.
	again, err := l.AddHost(ctx, NewHost{Name: "db2"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Addr != h2.Addr || again.Volumes[0].IOPS != 200 {
		t.Errorf("db2 again: %+v, was at %s", again, h2.Addr)
	}
	if err := canDial(l, "db1", addr2); err == nil {
		t.Error("db1 reached a server on the new db2 that nobody started")
	}

	stopSampling()
	if n := sampleErrs.Load(); n > 0 || sampled.Load() == 0 {
		t.Errorf("db1's monitor: %d errors in %d samples while hosts came and went", n, sampled.Load()+n)
	}

	// A host caught half-way (as if Headroom died while adding it) is in
	// the state's pending list: lab down removes it.
	l.mu.Lock()
	l.state.Pending = append(l.state.Pending, l.state.Hosts[1])
	l.state.Hosts = l.state.Hosts[:1]
	err = writeState(&l.state)
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	st := l.State()
	if err := Down("t-scale"); err != nil {
		t.Fatal(err)
	}
	assertHostGone(t, again)
	assertGone(t, st)
}

// assertHostGone checks that nothing of host h is left: its namespace
// (and its mount), link, cgroups, volume directory and processes.
func assertHostGone(t *testing.T, h HostState, pids ...int) {
	t.Helper()
	netns, _ := output("ip", "netns", "list")
	links, _ := output("ip", "-o", "link", "show")
	mounts, _ := os.ReadFile("/proc/self/mounts")
	if strings.Contains(string(netns), h.Netns) {
		t.Errorf("namespace %s is still there", h.Netns)
	}
	if strings.Contains(string(mounts), "/run/netns/"+h.Netns) {
		t.Errorf("the namespace %s is still mounted", h.Netns)
	}
	if strings.Contains(string(links), h.Veth) {
		t.Errorf("link %s is still there", h.Veth)
	}
	cg, err := detectCgroups("/")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range cg.dirs(h.Cgroup) {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s is still there", d)
		}
	}
	if h.VolumeDir != "" {
		if _, err := os.Stat(h.VolumeDir); err == nil {
			t.Errorf("volume directory %s is still there", h.VolumeDir)
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("process %d is still running", pid)
		}
	}
}

// The governor ends with the last volume's host and starts again for a
// volume added later.
func TestGovernorFollowsAddedHosts(t *testing.T) {
	vol := VolumeConfig{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 200}
	l := upLab(t, "t-scale-gov", []HostConfig{host("v1", "small", 0.5, 64, 0, vol)})
	ctx := context.Background()
	if err := l.RemoveHost(ctx, "v1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.gov.done:
	case <-time.After(2 * time.Second):
		t.Fatal("the governor runs on with no volume left")
	}
	// v2 gets the volume of v1, removed (the only one the lab had).
	h, err := l.AddHost(ctx, NewHost{Name: "v2", Type: "small"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Volumes) != 1 || h.Volumes[0].IOPS != 200 {
		t.Fatalf("v2's volume: %+v", h.Volumes)
	}
	time.Sleep(3 * budgetTick)
	select {
	case <-l.gov.done:
		t.Fatal("no governor for the added host's volume")
	default:
	}
	l.gov.mu.Lock()
	_, ok := l.gov.budgets["v2"]
	l.gov.mu.Unlock()
	if !ok {
		t.Error("the added host's volume has no budget")
	}
	if err := l.Close(false); err != nil {
		t.Fatal(err)
	}
	assertHostGone(t, h)
}

// A campaign killed between a node event and its undo leaves the lab with
// hosts added and removed (and one half-added): the next Up of the same
// definition puts the hosts back as defined and takes the lab over.
func TestUpPutsBackAKilledCampaignsHosts(t *testing.T) {
	vol := VolumeConfig{Name: "data", Type: "piops", SizeGiB: 20, IOPS: 200}
	defs := []HostConfig{host("a", "small", 0.5, 64, 0), host("b", "small", 0.5, 64, 0, vol)}
	l := upLab(t, "t-scale-orphan", defs)
	ctx := context.Background()
	b, _ := l.Host("b")
	c, err := l.AddHost(ctx, NewHost{Name: "c", Type: "small"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.AddHost(ctx, NewHost{Name: "d", Type: "small"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RemoveHost(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.state.Hosts = slices.DeleteFunc(l.state.Hosts, func(h HostState) bool { return h.Name == "d" })
	l.state.Pending = append(l.state.Pending, d)
	l.state.Owner = dead.Process.Pid
	err = writeState(&l.state)
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	l.stopGovernor()

	again, err := Up("t-scale-orphan", defs, DefaultCatalog(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.stopGovernor()
	st := again.State()
	if len(st.Hosts) != 2 || st.Hosts[0].Name != "a" || st.Hosts[1].Name != "b" || st.Hosts[1].Addr != b.Addr || len(st.Pending) != 0 || !again.Owned() {
		t.Fatalf("hosts after taking the lab over: %+v (pending %v, owned %v)", st.Hosts, st.Pending, again.Owned())
	}
	if _, err := os.Stat(st.Hosts[1].VolumeDir); err != nil {
		t.Errorf("b's volume is not back: %v", err)
	}
	assertHostGone(t, c)
	assertHostGone(t, d)
}
