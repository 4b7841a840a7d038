package load

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/cgroupself"
)

// A load agent on a lab host runs in a cgroup whose CPU quota may be a
// fraction of a core (0.02 or 0.5 vCPU): the kernel lets the cgroup run
// quota µs per period µs and then stops it until the next period. Such a
// client is starved while the CPU it uses is a few percent of one core, so
// the client-limit verdict must judge the client's CPU against the quota,
// not against whole cores (docs/measurement.md, "Client limits").
//
// The quota that applies to the process is the smallest on the way from
// its cgroup to the root: a parent's quota limits all its children. Where
// the cgroup is:
//
//   - cgroup v1: the line of /proc/self/cgroup whose controllers include
//     cpu ("4:cpu,cpuacct:/lab/host"), the path under the cpu hierarchy's
//     mount (/sys/fs/cgroup/cpu,cpuacct or /sys/fs/cgroup/cpu); the limit
//     is cpu.cfs_quota_us / cpu.cfs_period_us cores, none when the quota
//     is -1;
//   - cgroup v2: the "0::/path" line, under /sys/fs/cgroup; the limit is
//     cpu.max, "quota period" or "max period" (none).
//
// A level without the file (a container that sees only its own part of
// the hierarchy, the v2 root) sets no limit. The cgroup that sets the
// smallest quota also counts, in cpu.stat, the periods in which it used
// its quota up and was stopped (nr_throttled of nr_periods): read at the
// start and the end of the measured phase, they show whether the client
// was held back by its quota even when its own use looks low (a parent's
// quota shared with other processes).

// cgroupFS names the roots the quota is read under: the real /proc and
// /sys/fs/cgroup, or a fake tree in tests.
type cgroupFS struct {
	proc   string // /proc
	cgroup string // /sys/fs/cgroup
}

var hostCgroups = cgroupFS{proc: "/proc", cgroup: "/sys/fs/cgroup"}

// cpuQuota is the CPU bandwidth limit of the process's cgroups.
type cpuQuota struct {
	cores float64 // the smallest quota on the way to the root, in cores; 0: none
	stat  string  // cpu.stat of the cgroup that sets it
	v2    bool    // cgroup v2: throttled time in µs, not ns
}

// readCPUQuota finds the process's CPU quota under c. A machine without
// cgroups, or without the cpu controller, has none; an error means a file
// that should say what the limit is could not be read or parsed.
func (c cgroupFS) readCPUQuota() (cpuQuota, error) {
	m, err := cgroupself.Read(c.proc)
	if err != nil {
		return cpuQuota{}, err
	}
	if p, ok := m.V1("cpu"); ok {
		for _, name := range []string{"cpu,cpuacct", "cpu"} {
			mount := filepath.Join(c.cgroup, name)
			if st, err := os.Stat(mount); err == nil && st.IsDir() {
				return walkQuota(mount, p, readV1Quota, false)
			}
		}
		return cpuQuota{}, fmt.Errorf("the cgroup v1 cpu hierarchy is not mounted at %s/cpu,cpuacct or %s/cpu", c.cgroup, c.cgroup)
	}
	if p, ok := m.V2(); ok {
		return walkQuota(c.cgroup, p, readV2Quota, true)
	}
	return cpuQuota{}, nil
}

// walkQuota reads the quota of cgroup p and of each of its parents under
// mount, and keeps the smallest.
func walkQuota(mount, p string, read func(dir string) (float64, error), v2 bool) (cpuQuota, error) {
	dirs, err := cgroupself.Up(mount, p)
	if err != nil {
		return cpuQuota{}, err
	}
	var q cpuQuota
	for _, dir := range dirs {
		c, err := read(dir)
		if err != nil {
			return cpuQuota{}, err
		}
		if c > 0 && (q.cores == 0 || c < q.cores) {
			q = cpuQuota{cores: c, stat: filepath.Join(dir, "cpu.stat"), v2: v2}
		}
	}
	return q, nil
}

// readV1Quota is the cgroup v1 quota at dir in cores; 0 for none.
func readV1Quota(dir string) (float64, error) {
	quota, err := readInt(filepath.Join(dir, "cpu.cfs_quota_us"))
	if errors.Is(err, fs.ErrNotExist) || err == nil && quota == -1 {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	period, err := readInt(filepath.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		return 0, err
	}
	return quotaCores(quota, period, dir)
}

// readV2Quota is the cgroup v2 quota at dir (cpu.max) in cores; 0 for none.
func readV2Quota(dir string) (float64, error) {
	file := filepath.Join(dir, "cpu.max")
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, fmt.Errorf("%s: want \"quota period\", got %q", file, strings.TrimSpace(string(b)))
	}
	period, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: period: %v", file, err)
	}
	if f[0] == "max" {
		return 0, nil
	}
	quota, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: quota: %v", file, err)
	}
	return quotaCores(quota, period, dir)
}

func quotaCores(quota, period int64, dir string) (float64, error) {
	if quota <= 0 || period <= 0 {
		return 0, fmt.Errorf("%s: CPU quota %d µs per %d µs is not a limit", dir, quota, period)
	}
	return float64(quota) / float64(period), nil
}

// readInt reads a file holding one integer.
func readInt(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", file, err)
	}
	return v, nil
}

// limit is the CPU the process may use, in cores: the integer count
// (scheduler slots, machine, budget; see cores) or the quota when smaller.
func (q cpuQuota) limit(cores int) float64 {
	c := float64(cores)
	if q.cores > 0 && q.cores < c {
		return q.cores
	}
	return c
}

// throttleStat is a reading of the limiting cgroup's cpu.stat.
type throttleStat struct {
	periods, throttled int64
	time               time.Duration
	ok                 bool
}

// throttling reads the limiting cgroup's cpu.stat; not ok without a quota
// or when the file cannot be read.
func (q cpuQuota) throttling() throttleStat {
	if q.stat == "" {
		return throttleStat{}
	}
	f, err := os.Open(q.stat)
	if err != nil {
		return throttleStat{}
	}
	defer f.Close()
	var s throttleStat
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch {
		case k == "nr_periods":
			s.periods, seen = n, seen|1
		case k == "nr_throttled":
			s.throttled, seen = n, seen|2
		case k == "throttled_time" && !q.v2: // ns
			s.time, seen = time.Duration(n), seen|4
		case k == "throttled_usec" && q.v2:
			s.time, seen = time.Duration(n)*time.Microsecond, seen|4
		}
	}
	s.ok = sc.Err() == nil && seen == 7
	return s
}

// Throttling is what the cgroup that sets the client's CPU quota counted
// over the measured phase (cpu.stat).
type Throttling struct {
	// Periods is the number of quota periods in which the cgroup had
	// work, and Throttled those in which it used its quota up and was
	// stopped until the next one.
	Periods, Throttled int64
	// Time is how long the cgroup was stopped, summed over the processors
	// it was stopped on (so it may exceed Wall).
	Time time.Duration
	// Wall is the measured phase's length, between the two readings.
	Wall time.Duration
}

// since is the throttling between readings a and b, over wall.
func (b throttleStat) since(a throttleStat, wall time.Duration) Throttling {
	if !a.ok || !b.ok || b.periods < a.periods || b.throttled < a.throttled {
		return Throttling{}
	}
	return Throttling{Periods: b.periods - a.periods, Throttled: b.throttled - a.throttled,
		Time: max(b.time-a.time, 0), Wall: wall}
}

// Share is the share of the periods in which the cgroup was throttled; 0
// when unknown.
func (t Throttling) Share() float64 {
	if t.Periods <= 0 {
		return 0
	}
	return float64(t.Throttled) / float64(t.Periods)
}
