package procfs

import (
	"fmt"
	"strconv"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Columns of a cpu line in /proc/stat. guest and guest_nice are already
// included in user and nice and are not read.
const (
	cpuUser = iota
	cpuNice
	cpuSystem
	cpuIdle
	cpuIowait
	cpuIRQ
	cpuSoftIRQ
	cpuSteal
	cpuCols
)

type cpuTimes struct {
	v     [cpuCols]uint64
	valid bool
}

// cpuStat holds one parse of /proc/stat: the total line and the per-core
// lines by core number (offline cores are not valid).
type cpuStat struct {
	total cpuTimes
	cores []cpuTimes
}

// parseCPUStat parses the cpu lines of /proc/stat content into st,
// reusing st.cores.
func parseCPUStat(b []byte, st *cpuStat) error {
	st.total.valid = false
	for i := range st.cores {
		st.cores[i].valid = false
	}
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if !hasPrefix(line, "cpu") {
			if len(line) > 0 && st.total.valid {
				break // the cpu lines come first
			}
			continue
		}
		name, rest := nextField(line)
		var t *cpuTimes
		if len(name) == 3 {
			t = &st.total
		} else {
			n, ok := parseUint(name[3:])
			if !ok || n > 1<<16 {
				continue
			}
			for int(n) >= len(st.cores) {
				st.cores = append(st.cores, cpuTimes{})
			}
			t = &st.cores[n]
		}
		var v [10]uint64
		if uintFields(rest, v[:]) < 4 {
			return fmt.Errorf("procfs: cannot parse %q in /proc/stat", line)
		}
		copy(t.v[:], v[:cpuCols])
		t.valid = true
	}
	if !st.total.valid {
		return fmt.Errorf("procfs: no cpu line in /proc/stat")
	}
	return nil
}

// cpuPcts computes the percentages of the interval from two readings.
// ok[i] is false for a metric a backwards counter made meaningless.
type cpuPcts struct {
	user, system, iowait, steal, idle, util             float64
	okUser, okSystem, okIowait, okSteal, okIdle, okUtil bool
}

func computeCPU(cur, prev *cpuTimes) (p cpuPcts, any bool) {
	var d [cpuCols]float64
	var bad [cpuCols]bool
	total := 0.0
	for i := 0; i < cpuCols; i++ {
		if cur.v[i] < prev.v[i] {
			bad[i] = true
			continue
		}
		d[i] = float64(cur.v[i] - prev.v[i])
		total += d[i]
	}
	if total <= 0 {
		return p, false
	}
	pct := func(x float64) float64 { return 100 * x / total }
	p.user, p.okUser = pct(d[cpuUser]+d[cpuNice]), !bad[cpuUser] && !bad[cpuNice]
	p.system, p.okSystem = pct(d[cpuSystem]+d[cpuIRQ]+d[cpuSoftIRQ]), !bad[cpuSystem] && !bad[cpuIRQ] && !bad[cpuSoftIRQ]
	p.iowait, p.okIowait = pct(d[cpuIowait]), !bad[cpuIowait]
	p.steal, p.okSteal = pct(d[cpuSteal]), !bad[cpuSteal]
	p.idle, p.okIdle = pct(d[cpuIdle]), !bad[cpuIdle]
	p.util, p.okUtil = 100-p.idle-p.iowait, p.okIdle && p.okIowait
	if p.util < 0 {
		p.util = 0
	}
	return p, true
}

type cpuSampler struct {
	f         *statFile
	total     bool
	perCore   bool
	cur, prev cpuStat
	coreNames []string
	havePrev  bool
}

func newCPUSampler(path string, total, perCore bool) (*cpuSampler, error) {
	f, err := openStatFile(path, 16<<10)
	if err != nil {
		return nil, fmt.Errorf("procfs: cannot open %s (%v); CPU sampling needs a mounted /proc", path, err)
	}
	return &cpuSampler{f: f, total: total, perCore: perCore}, nil
}

func (c *cpuSampler) sample(e *emitter) error {
	b, err := c.f.read()
	if err != nil {
		return fmt.Errorf("procfs: %v", err)
	}
	if err := parseCPUStat(b, &c.cur); err != nil {
		return err
	}
	if e.emit && c.havePrev {
		if c.total {
			emitCPU(e, monitor.ResourceCPU, &c.cur.total, &c.prev.total)
		}
		if c.perCore {
			for i := range c.cur.cores {
				if i >= len(c.prev.cores) || !c.cur.cores[i].valid || !c.prev.cores[i].valid {
					continue
				}
				emitCPU(e, c.coreName(i), &c.cur.cores[i], &c.prev.cores[i])
			}
		}
	}
	// Swap, keeping both core slices for reuse.
	c.cur, c.prev = c.prev, c.cur
	c.havePrev = true
	return nil
}

func (c *cpuSampler) coreName(i int) string {
	for len(c.coreNames) <= i {
		c.coreNames = append(c.coreNames, monitor.ResourceCPU+strconv.Itoa(len(c.coreNames)))
	}
	return c.coreNames[i]
}

func emitCPU(e *emitter, res string, cur, prev *cpuTimes) {
	p, ok := computeCPU(cur, prev)
	if !ok {
		return
	}
	e.addIf(p.okUser, res, monitor.CPUUserPct, p.user)
	e.addIf(p.okSystem, res, monitor.CPUSystemPct, p.system)
	e.addIf(p.okIowait, res, monitor.CPUIowaitPct, p.iowait)
	e.addIf(p.okSteal, res, monitor.CPUStealPct, p.steal)
	e.addIf(p.okIdle, res, monitor.CPUIdlePct, p.idle)
	e.addIf(p.okUtil, res, monitor.CPUUtilPct, p.util)
}
