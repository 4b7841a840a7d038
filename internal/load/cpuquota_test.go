package load

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/workload"
)

// fakeCgroups writes files (paths relative to a fake root holding proc/
// and sys/fs/cgroup/) into a temporary directory and returns the roots.
func fakeCgroups(t *testing.T, files map[string]string) cgroupFS {
	t.Helper()
	root := t.TempDir()
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cgroupFS{proc: filepath.Join(root, "proc"), cgroup: filepath.Join(root, "sys/fs/cgroup")}
}

const (
	v1Self = "12:pids:/lab/host\n4:cpu,cpuacct:/lab/host\n3:memory:/lab/host\n1:name=systemd:/\n0::/\n"
	v1cc   = "sys/fs/cgroup/cpu,cpuacct/"
	v2Self = "0::/lab/host\n"
	v2cg   = "sys/fs/cgroup/"
)

// v1Level is a cgroup v1 level's quota and period files.
func v1Level(files map[string]string, dir, quota, period string) map[string]string {
	files[dir+"cpu.cfs_quota_us"] = quota
	files[dir+"cpu.cfs_period_us"] = period
	return files
}

func TestReadCPUQuota(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		cores float64 // want; 0: no quota
		stat  string  // the cpu.stat the quota's cgroup keeps, under the fake root
	}{
		{"v1 quota on the process's cgroup",
			v1Level(v1Level(v1Level(map[string]string{"proc/self/cgroup": v1Self},
				v1cc, "-1\n", "100000\n"), v1cc+"lab/", "-1\n", "100000\n"), v1cc+"lab/host/", "50000\n", "100000\n"),
			0.5, v1cc + "lab/host/cpu.stat"},
		// The cpu controller mounted on its own, as on the development
		// machine, and a 0.02-vCPU lab host.
		{"v1 cpu hierarchy alone",
			v1Level(map[string]string{"proc/self/cgroup": "3:cpuset:/\n2:cpuacct:/\n1:cpu:/headroom-lab/l/agent\n0::/\n"},
				"sys/fs/cgroup/cpu/headroom-lab/l/agent/", "2000\n", "100000\n"),
			0.02, "sys/fs/cgroup/cpu/headroom-lab/l/agent/cpu.stat"},
		{"v1 parent's quota is smaller",
			v1Level(v1Level(map[string]string{"proc/self/cgroup": v1Self},
				v1cc+"lab/", "20000\n", "100000\n"), v1cc+"lab/host/", "150000\n", "100000\n"),
			0.2, v1cc + "lab/cpu.stat"},
		{"v1 child's quota is smaller",
			v1Level(v1Level(map[string]string{"proc/self/cgroup": v1Self},
				v1cc+"lab/", "50000\n", "100000\n"), v1cc+"lab/host/", "5000\n", "50000\n"),
			0.1, v1cc + "lab/host/cpu.stat"},
		{"v1 no quota",
			v1Level(v1Level(map[string]string{"proc/self/cgroup": v1Self},
				v1cc, "-1\n", "100000\n"), v1cc+"lab/host/", "-1\n", "100000\n"),
			0, ""},
		// A container sees its own cgroup at the mount point, not the
		// path /proc/self/cgroup names: the levels that are not there set
		// no limit, and the mount's own quota counts.
		{"v1 container",
			v1Level(map[string]string{"proc/self/cgroup": "4:cpu,cpuacct:/docker/0123abcd\n"}, v1cc, "150000\n", "100000\n"),
			1.5, v1cc + "cpu.stat"},
		{"v2 quota on the process's cgroup",
			map[string]string{"proc/self/cgroup": v2Self, v2cg + "lab/cpu.max": "max 100000\n", v2cg + "lab/host/cpu.max": "50000 100000\n"},
			0.5, v2cg + "lab/host/cpu.stat"},
		{"v2 parent's quota is smaller",
			map[string]string{"proc/self/cgroup": v2Self, v2cg + "lab/cpu.max": "2000 100000\n", v2cg + "lab/host/cpu.max": "50000 100000\n"},
			0.02, v2cg + "lab/cpu.stat"},
		{"v2 no quota",
			map[string]string{"proc/self/cgroup": v2Self, v2cg + "lab/cpu.max": "max 100000\n", v2cg + "lab/host/cpu.max": "max 100000\n"},
			0, ""},
		{"no cgroups", map[string]string{}, 0, ""},
		{"no cpu controller", map[string]string{"proc/self/cgroup": "3:memory:/x\n"}, 0, ""},
	}
	for _, c := range cases {
		fs := fakeCgroups(t, c.files)
		q, err := fs.readCPUQuota()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		root := filepath.Dir(fs.proc)
		wantStat := ""
		if c.stat != "" {
			wantStat = filepath.Join(root, c.stat)
		}
		if math.Abs(q.cores-c.cores) > 1e-12 || q.stat != wantStat {
			t.Errorf("%s: %g cores, cpu.stat %q; want %g cores, %q", c.name, q.cores, q.stat, c.cores, wantStat)
		}
		if got, want := q.limit(2), map[bool]float64{true: 2, false: c.cores}[c.cores == 0 || c.cores > 2]; got != want {
			t.Errorf("%s: limit of 2 cores is %g, want %g", c.name, got, want)
		}
	}
}

// Malformed files are errors, never a panic, and the engine then judges
// against the whole cores.
func TestReadCPUQuotaMalformed(t *testing.T) {
	cases := map[string]map[string]string{
		"cgroup line without a path": {"proc/self/cgroup": "4:cpu\n"},
		"relative cgroup path":       {"proc/self/cgroup": "4:cpu:lab/host\n", "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1"},
		"v1 hierarchy not mounted":   {"proc/self/cgroup": "4:cpu:/lab\n"},
		"v1 quota not a number":      v1Level(map[string]string{"proc/self/cgroup": v1Self}, v1cc+"lab/host/", "fifty\n", "100000\n"),
		"v1 quota empty":             v1Level(map[string]string{"proc/self/cgroup": v1Self}, v1cc+"lab/host/", "", "100000\n"),
		"v1 zero period":             v1Level(map[string]string{"proc/self/cgroup": v1Self}, v1cc+"lab/host/", "50000\n", "0\n"),
		"v1 period missing":          {"proc/self/cgroup": v1Self, v1cc + "lab/host/cpu.cfs_quota_us": "50000\n"},
		"v1 negative quota":          v1Level(map[string]string{"proc/self/cgroup": v1Self}, v1cc+"lab/", "-5\n", "100000\n"),
		"v2 one field":               {"proc/self/cgroup": v2Self, v2cg + "lab/host/cpu.max": "50000\n"},
		"v2 quota not a number":      {"proc/self/cgroup": v2Self, v2cg + "lab/host/cpu.max": "half 100000\n"},
		"v2 period not a number":     {"proc/self/cgroup": v2Self, v2cg + "lab/cpu.max": "max forever\n"},
		"v2 zero quota":              {"proc/self/cgroup": v2Self, v2cg + "lab/cpu.max": "0 100000\n"},
	}
	for name, files := range cases {
		q, err := fakeCgroups(t, files).readCPUQuota()
		if err == nil {
			t.Errorf("%s: no error, %g cores", name, q.cores)
		}
	}
	// A directory where a file should be is an error too.
	fs := fakeCgroups(t, map[string]string{"proc/self/cgroup": v2Self, v2cg + "lab/host/cpu.max/x": ""})
	if _, err := fs.readCPUQuota(); err == nil {
		t.Error("cpu.max a directory: no error")
	}
}

// The engine reads the quota of its cgroups once per run and falls back
// to the whole cores when it cannot.
func TestRunReadsCPUQuota(t *testing.T) {
	cfg := Config{Model: "closed", Clients: 1, Timeout: time.Second, Measure: 200 * time.Millisecond, Interval: 100 * time.Millisecond, Seed: 1,
		Ops: []workload.OpType{workload.Read, workload.Update}}
	run := func(fs cgroupFS) Result {
		t.Helper()
		saved := hostCgroups
		hostCgroups = fs
		defer func() { hostCgroups = saved }()
		res, _ := runCollect(t, context.Background(), cfg, &stallTarget{delay: time.Millisecond}, generator(t, "a"))
		return res
	}
	quarter := fakeCgroups(t, map[string]string{"proc/self/cgroup": v2Self, v2cg + "lab/host/cpu.max": "25000 100000\n",
		v2cg + "lab/host/cpu.stat": "usage_usec 1\nnr_periods 10\nnr_throttled 4\nthrottled_usec 300\n"})
	if res := run(quarter); res.CPUs != 0.25 || res.Cores < 1 || res.Client.Throttling != (Throttling{Wall: res.Client.Throttling.Wall}) {
		t.Errorf("quota 0.25: CPUs %g of %d cores, throttling %+v; want 0.25 and no throttling (cpu.stat unchanged)", res.CPUs, res.Cores, res.Client.Throttling)
	}
	broken := fakeCgroups(t, map[string]string{"proc/self/cgroup": v2Self, v2cg + "lab/host/cpu.max": "garbage\n"})
	if res := run(broken); res.CPUs != float64(res.Cores) || res.Cores < 1 {
		t.Errorf("malformed cpu.max: CPUs %g, want the %d whole cores", res.CPUs, res.Cores)
	}
}

func TestThrottling(t *testing.T) {
	fs := fakeCgroups(t, map[string]string{
		"v1/cpu.stat":  "nr_periods 100\nnr_throttled 10\nthrottled_time 2000000000\nnr_bursts 0\nburst_time 0\n",
		"v2/cpu.stat":  "usage_usec 5\nuser_usec 3\nsystem_usec 2\nnr_periods 100\nnr_throttled 10\nthrottled_usec 2000000\n",
		"bad/cpu.stat": "nr_periods 100\nnr_throttled x\nthrottled_time 0\n",
	})
	root := filepath.Dir(fs.proc)
	for _, c := range []struct {
		q  cpuQuota
		ok bool
	}{
		{cpuQuota{cores: 0.5, stat: filepath.Join(root, "v1/cpu.stat")}, true},
		{cpuQuota{cores: 0.5, stat: filepath.Join(root, "v2/cpu.stat"), v2: true}, true},
		{cpuQuota{cores: 0.5, stat: filepath.Join(root, "bad/cpu.stat")}, false},
		{cpuQuota{cores: 0.5, stat: filepath.Join(root, "missing/cpu.stat")}, false},
		{cpuQuota{}, false},
	} {
		s := c.q.throttling()
		if s.ok != c.ok || c.ok && (s.periods != 100 || s.throttled != 10 || s.time != 2*time.Second) {
			t.Errorf("%s: %+v, want ok=%v, 100 periods, 10 throttled for 2 s", c.q.stat, s, c.ok)
		}
	}
	a := throttleStat{periods: 100, throttled: 10, time: 2 * time.Second, ok: true}
	b := throttleStat{periods: 200, throttled: 90, time: 9 * time.Second, ok: true}
	got := b.since(a, 10*time.Second)
	if want := (Throttling{Periods: 100, Throttled: 80, Time: 7 * time.Second, Wall: 10 * time.Second}); got != want || got.Share() != 0.8 {
		t.Errorf("since: %+v (share %g), want %+v (share 0.8)", got, got.Share(), want)
	}
	if got := b.since(throttleStat{}, time.Second); got != (Throttling{}) || got.Share() != 0 {
		t.Errorf("since an unknown reading: %+v, want nothing", got)
	}
}

// The defect this fixes: an agent at a 0.1-core quota that used 0.095
// core-seconds per second (9.5% of one core) was judged against its 2
// whole cores and read as idle, so its full request slots blamed the
// target. Against its quota it is saturated: client-limited.
func TestVerdictFractionalQuota(t *testing.T) {
	open := Config{Model: "open", MaxInFlight: 128, LateAfter: time.Millisecond}
	// Every late request found all slots busy (no late wake): without
	// the quota, the verdict blames the target.
	starved := Result{Cores: 2, CPUs: 0.1, ClientCPU: 9.5, Client: ClientFacts{EngineCPU: 9.5, Latency: hist(t, 100000, 10000), ProcessorWait: 0.8},
		Measured: Totals{Completed: 7000, Late: 3000, Dropped: 1000}}
	old := starved
	old.CPUs = 0 // a result without the quota: judged against Cores, as before
	if limited, note := Verdict(old, open); limited || !strings.Contains(note, "the target fell behind") {
		t.Fatalf("against 2 whole cores: limited=%v %q; want the old verdict, the target fell behind", limited, note)
	}
	limited, note := Verdict(starved, open)
	if !limited || !strings.Contains(note, "client CPU saturated (client CPU 9.5% of 0.1 cores (its cgroup's CPU quota))") {
		t.Errorf("at a 0.1-core quota: limited=%v %q; want client-limited, saturated against the quota", limited, note)
	}
	if limited, _ := Verdict(starved, Config{Model: "closed"}); !limited {
		t.Error("closed loop at a 0.1-core quota, 9.5% of a core: not client-limited")
	}
	// At 5% of one core the quota is half used: not saturated by use.
	idle := starved
	idle.ClientCPU, idle.Client.EngineCPU = 5, 5
	if limited, note := Verdict(idle, open); limited || !strings.Contains(note, "the target fell behind") {
		t.Errorf("half the quota: limited=%v %q; want the target's", limited, note)
	}
	// The same use, but the cgroup that sets the quota (a parent shared
	// with other processes) was throttled in 80 of 100 periods: the
	// quota was the limit. The machine is not blamed for the wait.
	throttled := idle
	throttled.CPUs = 0.5
	throttled.Client.Throttling = Throttling{Periods: 100, Throttled: 80, Time: 7 * time.Second, Wall: 10 * time.Second}
	limited, note = Verdict(throttled, open)
	if !limited || !strings.Contains(note, "its cgroup was throttled in 80 of 100 quota periods (80%; 7.0 s throttled, summed over processors, in 10.0 s)") || strings.Contains(note, "machine") {
		t.Errorf("throttled in 80%% of periods: limited=%v %q; want client-limited with the throttling", limited, note)
	}
	// Throttled in 10% of the periods: shown, not a saturated CPU.
	throttled.Client.Throttling.Throttled = 10
	if limited, note := Verdict(throttled, open); limited || !strings.Contains(note, "the client's cgroup was throttled in 10 of 100") {
		t.Errorf("throttled in 10%% of periods: limited=%v %q; want kept, with the throttling shown", limited, note)
	}
}
