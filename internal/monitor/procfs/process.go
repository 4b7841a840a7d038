package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat.
// It is 100 on every Linux architecture Go supports (sysconf(_SC_CLK_TCK)
// would need cgo).
const clockTicks = 100

// parseProcStat returns the state and utime+stime (in clock ticks) from
// /proc/PID/stat content. The command name may hold spaces and
// parentheses, so parsing starts after the last ')'.
func parseProcStat(b []byte) (state byte, ticks uint64, ok bool) {
	end := -1
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			end = i
			break
		}
	}
	if end < 0 {
		return 0, 0, false
	}
	rest := b[end+1:]
	// Field 3 is the state, fields 14 and 15 are utime and stime.
	var f []byte
	f, rest = nextField(rest)
	if len(f) != 1 {
		return 0, 0, false
	}
	state = f[0]
	for i := 4; i <= 13; i++ {
		_, rest = nextField(rest)
	}
	f, rest = nextField(rest)
	ut, ok1 := parseUint(f)
	f, _ = nextField(rest)
	st, ok2 := parseUint(f)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	return state, ut + st, true
}

// parseVmRSS returns VmRSS in bytes from /proc/PID/status content; a
// kernel thread has none.
func parseVmRSS(b []byte) (uint64, bool) {
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if hasPrefix(line, "VmRSS:") {
			return kBValue(line)
		}
	}
	return 0, false
}

// parseProcIO returns read_bytes and write_bytes from /proc/PID/io
// content (bytes the process caused to be fetched from / sent to storage).
func parseProcIO(b []byte) (rd, wr uint64, ok bool) {
	var okR, okW bool
	for len(b) > 0 && !(okR && okW) {
		var line []byte
		line, b = nextLine(b)
		switch {
		case hasPrefix(line, "read_bytes:"):
			rd, okR = parseUint(trimSpace(line[len("read_bytes:"):]))
		case hasPrefix(line, "write_bytes:"):
			wr, okW = parseUint(trimSpace(line[len("write_bytes:"):]))
		}
	}
	return rd, wr, okR && okW
}

type procSampler struct {
	pid      int
	resource string
	stat     *statFile
	status   *statFile
	io       *statFile // nil when not readable (another user's process)
	dead     bool

	havePrev       bool
	prevTicks      uint64
	prevRd, prevWr uint64
	havePrevIO     bool
}

func newProcSampler(root string, pid int) (*procSampler, error) {
	dir := filepath.Join(root, "proc", strconv.Itoa(pid))
	p := &procSampler{pid: pid, resource: monitor.ResourceProcPrefix + strconv.Itoa(pid)}
	var err error
	if p.stat, err = openStatFile(filepath.Join(dir, "stat"), 1024); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("procfs: process %d does not exist (no %s); check that it is running and pass its current PID", pid, dir)
		}
		return nil, fmt.Errorf("procfs: cannot open %s/stat (%v); check the PID and your permissions", dir, err)
	}
	if p.status, err = openStatFile(filepath.Join(dir, "status"), 2048); err != nil {
		p.close()
		return nil, fmt.Errorf("procfs: cannot open %s/status (%v); check that process %d is still running", dir, err, pid)
	}
	// /proc/PID/io needs ptrace access; without it the I/O rates are left out.
	p.io, _ = openStatFile(filepath.Join(dir, "io"), 512)
	if p.io != nil {
		if _, err := p.io.read(); err != nil {
			p.io.close()
			p.io = nil
		}
	}
	if _, _, ok := p.readStat(); !ok {
		p.close()
		return nil, fmt.Errorf("procfs: process %d has exited; pass the PID of a running process", pid)
	}
	return p, nil
}

func (p *procSampler) readStat() (state byte, ticks uint64, ok bool) {
	b, err := p.stat.read()
	if err != nil {
		return 0, 0, false // ESRCH once the process is gone
	}
	state, ticks, ok = parseProcStat(b)
	if !ok || state == 'Z' || state == 'X' {
		return state, ticks, false
	}
	return state, ticks, true
}

func (p *procSampler) sample(e *emitter, s *Sampler) {
	if p.dead {
		return
	}
	_, ticks, ok := p.readStat()
	if !ok {
		p.dead = true
		p.close()
		s.warn("procfs: process %d exited; its samples stop", p.pid)
		return
	}
	if e.emit && p.havePrev {
		if ticks >= p.prevTicks {
			e.add(p.resource, monitor.ProcCPUPct, 100*float64(ticks-p.prevTicks)/clockTicks/e.secs)
		}
		if b, err := p.status.read(); err == nil {
			if rss, ok := parseVmRSS(b); ok {
				e.add(p.resource, monitor.ProcRSSBytes, float64(rss))
			}
		}
	}
	if p.io != nil {
		if b, err := p.io.read(); err == nil {
			if rd, wr, ok := parseProcIO(b); ok {
				if e.emit && p.havePrevIO {
					e.rate(p.resource, monitor.ProcReadBytes, rd, p.prevRd, 1)
					e.rate(p.resource, monitor.ProcWriteBytes, wr, p.prevWr, 1)
				}
				p.prevRd, p.prevWr, p.havePrevIO = rd, wr, true
			}
		}
	}
	p.prevTicks = ticks
	p.havePrev = true
}

func (p *procSampler) close() {
	p.stat.close()
	p.status.close()
	p.io.close()
}
