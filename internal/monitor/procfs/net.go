package procfs

import (
	"fmt"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Columns of /proc/net/dev after "name:".
const (
	ndRxBytes   = 0
	ndRxPackets = 1
	ndTxBytes   = 8
	ndTxPackets = 9
	ndCols      = 10
)

type netCounters [ndCols]uint64

// parseNetDevLine splits one /proc/net/dev line into the interface name
// and its counters. Header lines have no colon and are rejected. The name
// and the first number may touch ("eth0:123"), so the line is split at the
// colon.
func parseNetDevLine(line []byte, c *netCounters) (name []byte, ok bool) {
	colon := -1
	for i, ch := range line {
		if ch == ':' {
			colon = i
			break
		}
	}
	if colon < 0 {
		return nil, false
	}
	name = trimSpace(line[:colon])
	if len(name) == 0 || uintFields(line[colon+1:], c[:]) < ndCols {
		return nil, false
	}
	return name, true
}

type netState struct {
	name      string
	resource  string
	cur, prev netCounters
	seen      bool
	havePrev  bool
	gone      bool
}

type netSampler struct {
	f      *statFile
	ifs    []*netState
	byName map[string]*netState
}

func newNetSampler(path string, names []string, all bool) (*netSampler, error) {
	f, err := openStatFile(path, 8<<10)
	if err != nil {
		return nil, fmt.Errorf("procfs: cannot open %s (%v); network sampling needs a mounted /proc", path, err)
	}
	ns := &netSampler{f: f, byName: map[string]*netState{}}
	b, err := f.read()
	if err != nil {
		f.close()
		return nil, fmt.Errorf("procfs: %v", err)
	}
	var present []string
	var c netCounters
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		if name, ok := parseNetDevLine(line, &c); ok {
			present = append(present, string(name))
		}
	}
	isPresent := map[string]bool{}
	for _, n := range present {
		isPresent[n] = true
	}
	for _, n := range names {
		if !isPresent[n] {
			f.close()
			return nil, fmt.Errorf("procfs: network interface %q is not in /proc/net/dev (there: %s); name one of those or set AllInterfaces", n, listNames(present))
		}
		ns.add(n)
	}
	if all {
		for _, n := range present {
			if n != "lo" {
				ns.add(n)
			}
		}
	}
	return ns, nil
}

func (ns *netSampler) add(name string) {
	if ns.byName[name] != nil {
		return
	}
	st := &netState{name: name, resource: monitor.ResourceNetPrefix + name}
	ns.byName[name] = st
	ns.ifs = append(ns.ifs, st)
}

func (ns *netSampler) sample(e *emitter, s *Sampler) error {
	if len(ns.ifs) == 0 {
		return nil
	}
	b, err := ns.f.read()
	if err != nil {
		return fmt.Errorf("procfs: %v", err)
	}
	for _, st := range ns.ifs {
		st.seen = false
	}
	var c netCounters
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		name, ok := parseNetDevLine(line, &c)
		if !ok {
			continue
		}
		st := ns.byName[string(name)]
		if st == nil {
			continue
		}
		st.cur = c
		st.seen = true
	}
	for _, st := range ns.ifs {
		if !st.seen {
			if !st.gone {
				s.warn("procfs: network interface %s disappeared from /proc/net/dev; its samples stop until it returns", st.name)
				st.gone = true
			}
			st.havePrev = false
			continue
		}
		st.gone = false
		if e.emit && st.havePrev {
			e.rate(st.resource, monitor.NetRxBytes, st.cur[ndRxBytes], st.prev[ndRxBytes], 1)
			e.rate(st.resource, monitor.NetTxBytes, st.cur[ndTxBytes], st.prev[ndTxBytes], 1)
			e.rate(st.resource, monitor.NetRxPackets, st.cur[ndRxPackets], st.prev[ndRxPackets], 1)
			e.rate(st.resource, monitor.NetTxPackets, st.cur[ndTxPackets], st.prev[ndTxPackets], 1)
		}
		st.prev = st.cur
		st.havePrev = true
	}
	return nil
}
