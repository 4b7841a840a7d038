package lab

import (
	"errors"
	"slices"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/monitor/procfs"
)

// Monitor samples every lab host as a host of its own: CPU, memory and
// volume I/O from the host's cgroup, network from its link. It implements
// monitor.Source. Its samples are tagged with the lab host's name and use
// the machine-level resource names ("cpu", "memory", "volume:NAME",
// "net:eth0"), so analyses treat lab hosts like real ones; the raw cgroup
// counters are kept too under "cgroup:PATH".
type Monitor struct {
	lab   *Lab
	hosts []*hostSampler
}

type hostSampler struct {
	name   string
	cgroup string
	veth   string
	volume string
	s      *procfs.Sampler
}

// NewMonitor opens the counters of the named hosts of l, or of every host
// when no name is given.
func (l *Lab) NewMonitor(hosts ...string) (*Monitor, error) {
	m := &Monitor{lab: l}
	for _, h := range l.State().Hosts {
		if len(hosts) > 0 && !slices.Contains(hosts, h.Name) {
			continue
		}
		s, err := procfs.New(procfs.Config{Host: h.Name, Cgroups: []string{h.Cgroup}, Interfaces: []string{h.Veth}})
		if err != nil {
			m.Close()
			return nil, err
		}
		hs := &hostSampler{name: h.Name, cgroup: h.Cgroup, veth: h.Veth, s: s}
		if len(h.Volumes) > 0 {
			hs.volume = h.Volumes[0].Name
		}
		m.hosts = append(m.hosts, hs)
	}
	return m, nil
}

// Sample implements monitor.Source.
func (m *Monitor) Sample(at time.Time) ([]monitor.Sample, error) {
	var out []monitor.Sample
	var errs []error
	for _, h := range m.hosts {
		ss, err := h.s.Sample(at)
		if err != nil {
			errs = append(errs, err)
		}
		quota := 0.0 // the host's CPU quota in this machine's cores
		if hs, err := m.lab.Host(h.name); err == nil {
			quota = hs.Now.Cores
			if quota == 0 { // a lab made before compute units
				quota = hs.Now.VCPUs
			}
		}
		for _, s := range ss {
			if s.Resource != monitor.ResourceNetPrefix+h.veth {
				out = append(out, s) // the link's own counters are mirrored: only the host's view below
			}
			if d, ok := h.derive(s, quota); ok {
				out = append(out, d)
			}
		}
	}
	return out, errors.Join(errs...)
}

// derive turns a cgroup or link sample into the host-level one.
func (h *hostSampler) derive(s monitor.Sample, quota float64) (monitor.Sample, bool) {
	d := s
	switch {
	case s.Resource == monitor.ResourceCgroupPrefix+h.cgroup:
		switch s.Metric {
		case monitor.ProcCPUPct:
			// Utilisation of the host's vCPUs, as a guest's own CPU
			// counters would show it: 100% = the whole quota.
			if quota <= 0 {
				return d, false
			}
			d.Resource, d.Metric, d.Value = monitor.ResourceCPU, monitor.CPUUtilPct, s.Value/quota
		case monitor.CgroupMemoryBytes:
			d.Resource, d.Metric = monitor.ResourceMemory, monitor.MemUsedBytes
		case monitor.CgroupIOReadOps, monitor.CgroupIOWriteOps, monitor.CgroupIOReadBytes, monitor.CgroupIOWriteBytes:
			if h.volume == "" {
				return d, false
			}
			d.Resource = monitor.ResourceVolumePrefix + h.volume
		default:
			return d, false
		}
	case s.Resource == monitor.ResourceNetPrefix+h.veth:
		// The machine-side end of the link sees the host's traffic mirrored.
		d.Resource = monitor.ResourceNetPrefix + "eth0"
		switch s.Metric {
		case monitor.NetRxBytes:
			d.Metric = monitor.NetTxBytes
		case monitor.NetTxBytes:
			d.Metric = monitor.NetRxBytes
		case monitor.NetRxPackets:
			d.Metric = monitor.NetTxPackets
		case monitor.NetTxPackets:
			d.Metric = monitor.NetRxPackets
		default:
			return d, false
		}
		return d, true
	default:
		return d, false
	}
	return d, true
}

// Warnings returns the samplers' notes (a host whose cgroup disappeared).
func (m *Monitor) Warnings() []string {
	var out []string
	for _, h := range m.hosts {
		out = append(out, h.s.Warnings()...)
	}
	return out
}

// Close releases the counters.
func (m *Monitor) Close() {
	for _, h := range m.hosts {
		h.s.Close()
	}
}
