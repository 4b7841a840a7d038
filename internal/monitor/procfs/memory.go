package procfs

import (
	"fmt"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// memInfo holds the /proc/meminfo lines the sampler uses, in bytes.
type memInfo struct {
	total, available, cached      uint64
	hasTotal, hasAvail, hasCached bool
}

// parseMeminfo reads MemTotal, MemAvailable and Cached (kB) from
// /proc/meminfo content.
func parseMeminfo(b []byte) (m memInfo) {
	for len(b) > 0 && !(m.hasTotal && m.hasAvail && m.hasCached) {
		var line []byte
		line, b = nextLine(b)
		var dst *uint64
		var has *bool
		switch {
		case hasPrefix(line, "MemTotal:"):
			dst, has = &m.total, &m.hasTotal
		case hasPrefix(line, "MemAvailable:"):
			dst, has = &m.available, &m.hasAvail
		case hasPrefix(line, "Cached:"):
			dst, has = &m.cached, &m.hasCached
		default:
			continue
		}
		v, ok := kBValue(line)
		if ok {
			*dst, *has = v, true
		}
	}
	return m
}

// kBValue parses "Name:   1234 kB" into bytes.
func kBValue(line []byte) (uint64, bool) {
	for i, c := range line {
		if c == ':' {
			line = line[i+1:]
			break
		}
	}
	f, rest := nextField(line)
	v, ok := parseUint(f)
	if !ok {
		return 0, false
	}
	if unit, _ := nextField(rest); string(unit) == "kB" {
		v *= 1024
	}
	return v, true
}

type memSampler struct {
	f *statFile
}

func newMemSampler(path string) (*memSampler, error) {
	f, err := openStatFile(path, 8<<10)
	if err != nil {
		return nil, fmt.Errorf("procfs: cannot open %s (%v); memory sampling needs a mounted /proc", path, err)
	}
	return &memSampler{f: f}, nil
}

func (m *memSampler) sample(e *emitter) error {
	if !e.emit {
		return nil // gauges: nothing to prime
	}
	b, err := m.f.read()
	if err != nil {
		return fmt.Errorf("procfs: %v", err)
	}
	mi := parseMeminfo(b)
	if mi.hasTotal && mi.hasAvail && mi.total >= mi.available {
		e.add(monitor.ResourceMemory, monitor.MemUsedBytes, float64(mi.total-mi.available))
	}
	e.addIf(mi.hasCached, monitor.ResourceMemory, monitor.MemCachedBytes, float64(mi.cached))
	e.addIf(mi.hasAvail, monitor.ResourceMemory, monitor.MemAvailableBytes, float64(mi.available))
	return nil
}
