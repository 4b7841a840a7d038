package procfs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// cgroupMount is one mounted cgroup hierarchy.
type cgroupMount struct {
	point string // mount point, under the Sampler's root
	root  string // the hierarchy path mounted there (4th mountinfo field)
}

// dir returns the directory of cgroup p (relative to the hierarchy root).
func (m *cgroupMount) dir(p string) string {
	rel := p
	if m.root != "/" {
		if r, ok := strings.CutPrefix(p, m.root); ok && (r == "" || r[0] == '/') {
			rel = r
		}
	}
	return filepath.Join(m.point, rel)
}

// cgroupMounts are the hierarchies the sampler can use: v1 mounts by
// controller (cpu, cpuacct, memory, blkio) and the v2 mount.
type cgroupMounts struct {
	v1 map[string]*cgroupMount
	v2 *cgroupMount
}

// v1Controllers are the v1 controllers the sampler reads.
var v1Controllers = []string{"cpu", "cpuacct", "memory", "blkio"}

// useV1 reports whether the v1 files are used: when any of the v1
// controllers the sampler reads is mounted (a hybrid system keeps its
// controllers in v1 and an empty v2 hierarchy).
func (m *cgroupMounts) useV1() bool { return len(m.v1) > 0 }

// parseCgroupMounts reads /proc/self/mountinfo content.
func parseCgroupMounts(root string, b []byte) *cgroupMounts {
	ms := &cgroupMounts{v1: map[string]*cgroupMount{}}
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		// id parent maj:min root point options [optional...] - fstype source superoptions
		f := strings.Fields(string(line))
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(f) {
			continue
		}
		m := &cgroupMount{point: filepath.Join(root, unescapeMount(f[4])), root: unescapeMount(f[3])}
		switch f[sep+1] {
		case "cgroup2":
			if ms.v2 == nil {
				ms.v2 = m
			}
		case "cgroup":
			for _, opt := range strings.Split(f[sep+3], ",") {
				for _, c := range v1Controllers {
					if opt == c && ms.v1[c] == nil {
						ms.v1[c] = m
					}
				}
			}
		}
	}
	return ms
}

// unescapeMount undoes the octal escapes (\040 for a blank) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			v := 0
			okOct := true
			for _, c := range s[i+1 : i+4] {
				if c < '0' || c > '7' {
					okOct = false
					break
				}
				v = v*8 + int(c-'0')
			}
			if okOct {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func findCgroupMounts(root string) (*cgroupMounts, error) {
	p := filepath.Join(root, "proc/self/mountinfo")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("procfs: cannot read %s (%v); cgroup sampling needs a mounted /proc", p, err)
	}
	ms := parseCgroupMounts(root, b)
	if !ms.useV1() && ms.v2 == nil {
		return nil, fmt.Errorf("procfs: no cgroup hierarchy is mounted (none in %s); mount cgroup2 or the v1 cpu, cpuacct, memory and blkio controllers", p)
	}
	return ms, nil
}

// cgroupCounters are one reading, in common units.
type cgroupCounters struct {
	cpuNs                           uint64
	periods, throttled, throttledNs uint64
	memBytes                        uint64
	rdOps, wrOps, rdBytes, wrBytes  uint64
	hasCPU, hasThrottle, hasMem     bool
	hasIOOps, hasIOBytes            bool
}

// parseKeyValues calls fn for each "key value" line.
func parseKeyValues(b []byte, fn func(key []byte, v uint64)) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		k, rest := nextField(line)
		f, _ := nextField(rest)
		if v, ok := parseUint(f); ok {
			fn(k, v)
		}
	}
}

// parseBlkioV1 sums the Read and Write lines of a v1
// blkio.throttle.io_serviced or io_service_bytes file
// ("MAJ:MIN Read N" lines, then "Total N").
func parseBlkioV1(b []byte) (rd, wr uint64) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		_, rest := nextField(line)
		op, rest := nextField(rest)
		f, _ := nextField(rest)
		v, ok := parseUint(f)
		if !ok {
			continue
		}
		switch string(op) {
		case "Read":
			rd += v
		case "Write":
			wr += v
		}
	}
	return rd, wr
}

// parseIOStatV2 sums rbytes, wbytes, rios and wios over the devices of a
// v2 io.stat file ("MAJ:MIN rbytes=N wbytes=N rios=N wios=N ...").
func parseIOStatV2(b []byte) (rdBytes, wrBytes, rdOps, wrOps uint64) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		_, rest := nextField(line)
		for {
			var f []byte
			f, rest = nextField(rest)
			if len(f) == 0 {
				break
			}
			eq := -1
			for i, c := range f {
				if c == '=' {
					eq = i
					break
				}
			}
			if eq < 0 {
				continue
			}
			v, ok := parseUint(f[eq+1:])
			if !ok {
				continue
			}
			switch string(f[:eq]) {
			case "rbytes":
				rdBytes += v
			case "wbytes":
				wrBytes += v
			case "rios":
				rdOps += v
			case "wios":
				wrOps += v
			}
		}
	}
	return
}

type cgroupSampler struct {
	path     string
	resource string
	v2       bool

	// v1: cpuacct.usage, cpu.stat, memory.usage_in_bytes,
	// blkio.throttle.io_serviced, blkio.throttle.io_service_bytes.
	// v2: cpu.stat, memory.current, io.stat (usage, ioOps unused).
	usage, cpuStat, mem, ioOps, ioBytes *statFile

	cur, prev cgroupCounters
	havePrev  bool
	dead      bool
}

func newCgroupSampler(ms *cgroupMounts, p string) (*cgroupSampler, error) {
	clean := path.Clean("/" + p)
	c := &cgroupSampler{path: clean, resource: monitor.ResourceCgroupPrefix + clean}
	found := false
	open := func(m *cgroupMount, file string) *statFile {
		if m == nil {
			return nil
		}
		dir := m.dir(clean)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil
		}
		found = true
		f, err := openStatFile(filepath.Join(dir, file), 1024)
		if err != nil {
			return nil
		}
		return f
	}
	var where string
	if ms.useV1() {
		c.usage = open(ms.v1["cpuacct"], "cpuacct.usage")
		c.cpuStat = open(ms.v1["cpu"], "cpu.stat")
		c.mem = open(ms.v1["memory"], "memory.usage_in_bytes")
		c.ioOps = open(ms.v1["blkio"], "blkio.throttle.io_serviced")
		c.ioBytes = open(ms.v1["blkio"], "blkio.throttle.io_service_bytes")
		var pts []string
		for _, ctl := range v1Controllers {
			if m := ms.v1[ctl]; m != nil {
				pts = append(pts, m.point)
			}
		}
		where = "the cgroup v1 hierarchies (" + strings.Join(pts, ", ") + ")"
	} else {
		c.v2 = true
		c.cpuStat = open(ms.v2, "cpu.stat")
		c.mem = open(ms.v2, "memory.current")
		c.ioBytes = open(ms.v2, "io.stat")
		where = "the cgroup v2 hierarchy at " + ms.v2.point
	}
	if !found {
		c.close()
		return nil, fmt.Errorf("procfs: cgroup %q does not exist in %s; create it first or give its path relative to the hierarchy root as /proc/PID/cgroup shows it", clean, where)
	}
	if c.usage == nil && c.cpuStat == nil && c.mem == nil && c.ioOps == nil && c.ioBytes == nil {
		c.close()
		return nil, fmt.Errorf("procfs: cgroup %q exists but none of its cpu, memory or io statistics files can be opened; check the permissions under %s", clean, where)
	}
	return c, nil
}

// read fills c.cur; gone is true when the cgroup was removed.
func (c *cgroupSampler) read() (gone bool) {
	cur := cgroupCounters{}
	opened, failed := 0, 0
	get := func(f *statFile) []byte {
		if f == nil {
			return nil
		}
		opened++
		b, err := f.read()
		if err != nil {
			failed++
			return nil
		}
		return b
	}
	if c.v2 {
		if b := get(c.cpuStat); b != nil {
			parseKeyValues(b, func(k []byte, v uint64) {
				switch string(k) {
				case "usage_usec":
					cur.cpuNs, cur.hasCPU = v*1000, true
				case "nr_periods":
					cur.periods, cur.hasThrottle = v, true
				case "nr_throttled":
					cur.throttled = v
				case "throttled_usec":
					cur.throttledNs = v * 1000
				}
			})
		}
		if b := get(c.mem); b != nil {
			cur.memBytes, cur.hasMem = parseUint(trimSpace(firstLine(b)))
		}
		if b := get(c.ioBytes); b != nil {
			cur.rdBytes, cur.wrBytes, cur.rdOps, cur.wrOps = parseIOStatV2(b)
			cur.hasIOOps, cur.hasIOBytes = true, true
		}
	} else {
		if b := get(c.usage); b != nil {
			cur.cpuNs, cur.hasCPU = parseUint(trimSpace(firstLine(b)))
		}
		if b := get(c.cpuStat); b != nil {
			parseKeyValues(b, func(k []byte, v uint64) {
				switch string(k) {
				case "nr_periods":
					cur.periods, cur.hasThrottle = v, true
				case "nr_throttled":
					cur.throttled = v
				case "throttled_time":
					cur.throttledNs = v
				}
			})
		}
		if b := get(c.mem); b != nil {
			cur.memBytes, cur.hasMem = parseUint(trimSpace(firstLine(b)))
		}
		if b := get(c.ioOps); b != nil {
			cur.rdOps, cur.wrOps = parseBlkioV1(b)
			cur.hasIOOps = true
		}
		if b := get(c.ioBytes); b != nil {
			cur.rdBytes, cur.wrBytes = parseBlkioV1(b)
			cur.hasIOBytes = true
		}
	}
	c.cur = cur
	return opened > 0 && failed == opened
}

func firstLine(b []byte) []byte {
	l, _ := nextLine(b)
	return l
}

func (c *cgroupSampler) sample(e *emitter, s *Sampler) {
	if c.dead {
		return
	}
	if c.read() {
		c.dead = true
		c.close()
		s.warn("procfs: cgroup %s was removed; its samples stop", c.path)
		return
	}
	if e.emit && c.havePrev {
		cur, prev, r := &c.cur, &c.prev, c.resource
		if cur.hasCPU && prev.hasCPU && cur.cpuNs >= prev.cpuNs {
			e.add(r, monitor.ProcCPUPct, 100*float64(cur.cpuNs-prev.cpuNs)/1e9/e.secs)
		}
		if cur.hasThrottle && prev.hasThrottle && cur.periods >= prev.periods && cur.throttled >= prev.throttled {
			pct := 0.0
			if dp := cur.periods - prev.periods; dp > 0 {
				pct = 100 * float64(cur.throttled-prev.throttled) / float64(dp)
			}
			e.add(r, monitor.CgroupThrottledPct, pct)
			if cur.throttledNs >= prev.throttledNs {
				e.add(r, monitor.CgroupThrottledMs, float64(cur.throttledNs-prev.throttledNs)/1e6/e.secs)
			}
		}
		e.addIf(cur.hasMem, r, monitor.CgroupMemoryBytes, float64(cur.memBytes))
		if cur.hasIOOps && prev.hasIOOps {
			e.rate(r, monitor.CgroupIOReadOps, cur.rdOps, prev.rdOps, 1)
			e.rate(r, monitor.CgroupIOWriteOps, cur.wrOps, prev.wrOps, 1)
		}
		if cur.hasIOBytes && prev.hasIOBytes {
			e.rate(r, monitor.CgroupIOReadBytes, cur.rdBytes, prev.rdBytes, 1)
			e.rate(r, monitor.CgroupIOWriteBytes, cur.wrBytes, prev.wrBytes, 1)
		}
	}
	c.prev = c.cur
	c.havePrev = true
}

func (c *cgroupSampler) close() {
	c.usage.close()
	c.cpuStat.close()
	c.mem.close()
	c.ioOps.close()
	c.ioBytes.close()
}
