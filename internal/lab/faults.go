package lab

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrStartService is returned by Apply for a start event: starting a
// service again is up to whoever runs it (the campaign restarts its
// managed server), not the lab.
var ErrStartService = errors.New("start the host's service again")

// Apply carries out one event now and returns a one-line description for
// the record.
func (l *Lab) Apply(e Event) (string, error) {
	switch e.Action {
	case ActKill:
		n, err := l.Signal(e.Host, syscall.SIGKILL)
		return fmt.Sprintf("killed %d processes on %s", n, e.Host), err
	case ActStop:
		n, err := l.Signal(e.Host, syscall.SIGSTOP)
		if err == nil {
			err = l.update(e.Host, func(h *HostState) error { h.Now.Stopped = true; return nil })
		}
		return fmt.Sprintf("stopped %d processes on %s", n, e.Host), err
	case ActContinue:
		n, err := l.Signal(e.Host, syscall.SIGCONT)
		if err == nil {
			err = l.update(e.Host, func(h *HostState) error { h.Now.Stopped = false; return nil })
		}
		return fmt.Sprintf("continued %d processes on %s", n, e.Host), err
	case ActStart:
		return "start the service on " + e.Host, ErrStartService
	case ActAddNode, ActRemoveNode, ActPromote:
		return e.Action + " " + e.Host, fmt.Errorf("%s %s: %w", e.Action, e.Host, ErrClusterEvent)
	case ActLinkDown:
		return "link of " + e.Host + " down", l.SetLinkUp(e.Host, false)
	case ActLinkUp:
		return "link of " + e.Host + " up", l.SetLinkUp(e.Host, true)
	case ActPartition:
		return fmt.Sprintf("partition %v | %v", e.Groups[0], e.Groups[1]), l.Partition(e.Groups[0], e.Groups[1])
	case ActHeal:
		return "partitions healed", l.Heal()
	case ActSetCPU:
		return fmt.Sprintf("%s: %g vCPUs", e.Host, e.VCPUs), l.SetCPU(e.Host, e.VCPUs)
	case ActSetVolume:
		return fmt.Sprintf("%s volume: iops %g, MiB/s %g", e.Host, e.IOPS, e.MiBps), l.SetVolume(e.Host, e.IOPS, e.MiBps)
	case ActSetLink:
		return fmt.Sprintf("%s link: %g Mbit/s", e.Host, e.NetworkMbit), l.SetLink(e.Host, e.NetworkMbit)
	case ActStallDisk:
		return "volume of " + e.Host + " stalled", l.SetDiskStalled(e.Host, true)
	case ActResumeDisk:
		return "volume of " + e.Host + " resumed", l.SetDiskStalled(e.Host, false)
	}
	return "", fmt.Errorf("unknown lab event action %q", e.Action)
}

// Signal sends sig to every process on host and returns how many got it.
func (l *Lab) Signal(host string, sig syscall.Signal) (int, error) {
	h, err := l.Host(host)
	if err != nil {
		return 0, err
	}
	return l.cg.signal(h.Cgroup, sig), nil
}

// PIDs lists the processes running on host.
func (l *Lab) PIDs(host string) ([]int, error) {
	h, err := l.Host(host)
	if err != nil {
		return nil, err
	}
	return l.cg.pids(h.Cgroup), nil
}

// update changes host's state under the lock and saves it.
func (l *Lab) update(host string, fn func(h *HostState) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.state.Hosts {
		if l.state.Hosts[i].Name == host {
			if err := fn(&l.state.Hosts[i]); err != nil {
				return err
			}
			return writeState(&l.state)
		}
	}
	return fmt.Errorf("lab %s has no host %q", l.state.Name, host)
}

// SetCPU changes host's CPU quota.
func (l *Lab) SetCPU(host string, vcpus float64) error {
	if !(vcpus > 0) {
		return fmt.Errorf("vcpus must be positive, got %v", vcpus)
	}
	return l.update(host, func(h *HostState) error {
		cores := l.state.ComputeUnit.CoresFor(vcpus)
		if err := l.cg.setCPU(h.Cgroup, cores); err != nil {
			return err
		}
		h.Now.VCPUs, h.Now.Cores = vcpus, cores
		return nil
	})
}

// SetVolume changes the provisioned IOPS and/or the bandwidth cap of
// host's volume (0 keeps the current value), within its type's rules.
func (l *Lab) SetVolume(host string, iops, mibps float64) error {
	return l.update(host, func(h *HostState) error {
		if len(h.Volumes) == 0 || h.Device == "" {
			return fmt.Errorf("lab host %s has no volume", host)
		}
		v := h.Volumes[0]
		if vt, ok := l.catalog().Volume(v.Type); ok && iops > 0 {
			if err := CheckIOPS(vt, v.SizeGiB, iops); err != nil {
				return fmt.Errorf("volume %s of %s: %v", v.Name, host, err)
			}
		}
		next := h.Now
		if iops > 0 {
			next.IOPS = iops
		}
		if mibps > 0 {
			next.MiBps = mibps
		}
		prev := h.Now
		h.Now = next
		if err := l.setBudget(h); err != nil {
			h.Now = prev
			return err
		}
		return nil
	})
}

func (l *Lab) catalog() *Catalog {
	if l.state.Catalog != nil {
		return l.state.Catalog
	}
	return DefaultCatalog()
}

// SetDiskStalled stalls host's volume (no read or write gets through
// until it is resumed; requests already queued wait) or resumes it under
// the budget in force. The kernel's throttle has no "stop": 0 means no
// limit, so a stall is the smallest limits it takes, one operation and
// one byte per second in each direction, under which a single page takes
// over an hour.
func (l *Lab) SetDiskStalled(host string, stalled bool) error {
	return l.update(host, func(h *HostState) error {
		if len(h.Volumes) == 0 || h.Device == "" {
			return fmt.Errorf("lab host %s has no volume to stall", host)
		}
		prev := h.Now
		h.Now.DiskStalled = stalled
		if err := l.setStall(h); err != nil {
			h.Now = prev
			return err
		}
		return nil
	})
}

// SetLink changes host's link bandwidth (both directions).
func (l *Lab) SetLink(host string, mbit float64) error {
	return l.update(host, func(h *HostState) error {
		if err := l.setLinkRate(h, mbit); err != nil {
			return err
		}
		h.Now.NetworkMbit = mbit
		return nil
	})
}

// SetLinkUp takes host's link down or brings it up again.
func (l *Lab) SetLinkUp(host string, up bool) error {
	return l.update(host, func(h *HostState) error {
		state := "down"
		if up {
			state = "up"
		}
		if err := ipNS(h.Netns, "link", "set", "eth0", state); err != nil {
			return err
		}
		h.Now.LinkDown = !up
		return nil
	})
}

// Partition drops all traffic between the hosts of group a and those of
// group b (ClientHost is the machine's side), both ways, with iptables
// rules inside the hosts' namespaces. Packets are dropped, not refused, as
// in a real network partition: connections time out.
func (l *Lab) Partition(a, b []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	addr := map[string]string{ClientHost: l.state.Gateway}
	ns := map[string]string{}
	for _, h := range l.state.Hosts {
		addr[h.Name], ns[h.Name] = h.Addr, h.Netns
	}
	for _, pair := range [][2][]string{{a, b}, {b, a}} {
		for _, x := range pair[0] {
			if x == ClientHost {
				continue // the other side's rules cover the machine's traffic
			}
			if ns[x] == "" {
				return fmt.Errorf("lab %s has no host %q", l.state.Name, x)
			}
			for _, y := range pair[1] {
				if addr[y] == "" {
					return fmt.Errorf("lab %s has no host %q", l.state.Name, y)
				}
				l.state.Partition = true
				if err := iptablesNS(ns[x], "-A", "INPUT", "-s", addr[y], "-j", "DROP"); err != nil {
					return err
				}
				if err := iptablesNS(ns[x], "-A", "OUTPUT", "-d", addr[y], "-j", "DROP"); err != nil {
					return err
				}
			}
		}
	}
	return writeState(&l.state)
}

// Heal removes every partition.
func (l *Lab) Heal() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.state.Partition {
		return nil
	}
	for _, h := range l.state.Hosts {
		// The namespaces are the lab's own: no rule in them is anyone
		// else's.
		if err := iptablesNS(h.Netns, "-F", "INPUT"); err != nil {
			return err
		}
		if err := iptablesNS(h.Netns, "-F", "OUTPUT"); err != nil {
			return err
		}
	}
	l.state.Partition = false
	return writeState(&l.state)
}

// ResetFaults puts every host back as defined: processes continued, links
// up, partitions healed, CPU, volume and link limits as in the definition.
// Killed services are not started (that is the service owner's job).
func (l *Lab) ResetFaults() error {
	var errs []error
	if err := l.Heal(); err != nil {
		errs = append(errs, err)
	}
	for _, h := range l.State().Hosts {
		def := definedLimits(h.HostConfig)
		if h.Now.Stopped {
			if _, err := l.Signal(h.Name, syscall.SIGCONT); err != nil {
				errs = append(errs, err)
			}
			errs = append(errs, l.update(h.Name, func(x *HostState) error { x.Now.Stopped = false; return nil }))
		}
		if h.Now.LinkDown {
			errs = append(errs, l.SetLinkUp(h.Name, true))
		}
		if h.Now.DiskStalled {
			errs = append(errs, l.SetDiskStalled(h.Name, false))
		}
		if h.Now.VCPUs != def.VCPUs {
			errs = append(errs, l.SetCPU(h.Name, def.VCPUs))
		}
		if h.Now.NetworkMbit != def.NetworkMbit {
			errs = append(errs, l.SetLink(h.Name, def.NetworkMbit))
		}
		if h.Device != "" && (h.Now.IOPS != def.IOPS || h.Now.MiBps != def.MiBps) {
			errs = append(errs, l.update(h.Name, func(x *HostState) error {
				prev := x.Now
				x.Now.IOPS, x.Now.MiBps = def.IOPS, def.MiBps
				if err := l.setBudget(x); err != nil {
					x.Now = prev
					return err
				}
				return nil
			}))
		}
	}
	return errors.Join(errs...)
}
