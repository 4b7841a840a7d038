package lab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Hosts come and go while a lab runs when a cluster grows or shrinks
// (seed 002 §III, elasticity): AddHost provisions a host from the catalog
// as Up does, RemoveHost releases one. Both are recorded in the lab's
// state before they touch the machine, so that `headroom lab down` (and
// Close) removes a host that was being added or removed when Headroom was
// killed.

// ErrClusterEvent is returned by Apply for add_node and remove_node: a
// cluster's membership changes through whoever runs the cluster (the
// campaign brings the host up with AddHost and asks the target to add the
// node), not through the lab's faults.
var ErrClusterEvent = errors.New("a cluster event is carried out by the campaign, not the lab")

// NewHost asks for a host added while the lab runs.
type NewHost struct {
	Name string
	// Type is an instance type of the lab's catalog. "" is allowed only
	// for a host removed earlier, which comes back as it was.
	Type string
	// Volume is the new host's volume; nil gives it one like its peers'
	// (the first host of the same type with a volume, else the first host
	// with one), or none when no host has one.
	Volume *VolumeSpec
	// IOPS provisions the volume (0 = as the volume, or its peer's, says).
	IOPS float64
}

// AddHost brings a new host up in the running lab: a network namespace
// with an address of the lab's subnet, a shaped link, a cgroup with the
// type's CPU and memory, and a volume whose budget the lab's governor
// splits like the others'. It returns the host as created.
func (l *Lab) AddHost(ctx context.Context, n NewHost) (HostState, error) {
	if err := ctx.Err(); err != nil {
		return HostState{}, err
	}
	unlock, err := lock()
	if err != nil {
		return HostState{}, err
	}
	defer unlock()
	hs, err := l.addHost(n)
	if err == nil && l.governed {
		l.startGovernor() // a governor whose volumes were all removed has ended
	}
	return hs, err
}

// addHost is AddHost for a caller that holds the lab lock.
func (l *Lab) addHost(n NewHost) (HostState, error) {
	l.mu.Lock()
	hs, err := l.planHost(n)
	if err == nil {
		l.state.Pending = append(l.state.Pending, hs)
		if err = writeState(&l.state); err != nil {
			l.state.Pending = l.state.Pending[:len(l.state.Pending)-1]
		}
	}
	subnet := netip.MustParsePrefix(l.state.Subnet)
	l.mu.Unlock()
	if err != nil {
		return HostState{}, err
	}
	if err := l.createHost(&hs, subnet.Bits()); err != nil {
		derr := l.removeHostParts(hs)
		if derr == nil {
			l.settle(hs.Name, nil)
		}
		return HostState{}, errors.Join(fmt.Errorf("adding host %s to lab %s: %w", hs.Name, l.state.Name, err), derr)
	}
	l.settle(hs.Name, &hs)
	return hs, nil
}

// planHost resolves n into a host with its address, names and limits, in
// a free slot of the lab. The caller holds l.mu.
func (l *Lab) planHost(n NewHost) (HostState, error) {
	st := &l.state
	if !validHostName(n.Name) {
		return HostState{}, fmt.Errorf("host name %q must start with a letter and have at most 16 letters, digits or '-'", n.Name)
	}
	for _, h := range append(slices.Clone(st.Hosts), st.Pending...) {
		if h.Name == n.Name {
			return HostState{}, fmt.Errorf("lab %s already has a host %s; give the new host another name", st.Name, n.Name)
		}
	}
	peers := make([]HostConfig, 0, len(st.Hosts))
	for _, h := range st.Hosts {
		peers = append(peers, h.HostConfig)
	}
	hc, err := newHostConfig(n, peers, st.Released, l.catalog())
	if err != nil {
		return HostState{}, fmt.Errorf("host %s: %w", n.Name, err)
	}
	i, err := freeSlot(st)
	if err != nil {
		return HostState{}, err
	}
	subnet := netip.MustParsePrefix(st.Subnet)
	hs := HostState{
		HostConfig: hc, Addr: hostAddr(subnet, i).String(),
		Netns:  "hr-" + st.Name + "-" + hc.Name,
		Veth:   fmt.Sprintf("hrv-%s-%02d", st.ID, i),
		Cgroup: "/" + cgroupRoot + "/" + st.Name + "/" + hc.Name,
		Now:    definedLimits(hc),
	}
	if len(hc.Volumes) > 0 {
		hs.VolumeDir = volumeDir(st.Name, hc.Name, hc.Volumes[0].Name)
	}
	return hs, nil
}

// settle ends a pending change of host name: the host (when not nil)
// joins the lab's hosts in address order, and it leaves the pending list.
func (l *Lab) settle(name string, h *HostState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state.Pending = slices.DeleteFunc(l.state.Pending, func(x HostState) bool { return x.Name == name })
	if h != nil {
		l.state.Hosts = append(l.state.Hosts, *h)
		slices.SortStableFunc(l.state.Hosts, func(a, b HostState) int { return slotOf(a) - slotOf(b) })
		l.state.Released = slices.DeleteFunc(l.state.Released, func(x HostConfig) bool { return x.Name == name })
	}
	_ = writeState(&l.state) // the machine is as the state says either way; a failed write leaves more to remove, not less
}

// RemoveHost releases host name: its processes are killed, and its
// namespace, link, cgroup and volume directory removed. Its definition is
// kept, so that AddHost with the same name and no type brings it back as
// it was. Other hosts, their monitors and the governor carry on.
func (l *Lab) RemoveHost(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := lock()
	if err != nil {
		return err
	}
	defer unlock()
	return l.removeHost(name)
}

// removeHost is RemoveHost for a caller that holds the lab lock.
func (l *Lab) removeHost(name string) error {
	l.mu.Lock()
	i := slices.IndexFunc(l.state.Hosts, func(h HostState) bool { return h.Name == name })
	if i < 0 {
		names := make([]string, 0, len(l.state.Hosts))
		for _, h := range l.state.Hosts {
			names = append(names, h.Name)
		}
		l.mu.Unlock()
		return fmt.Errorf("lab %s has no host %q to remove; its hosts are %s", l.state.Name, name, strings.Join(names, ", "))
	}
	h := l.state.Hosts[i]
	l.state.Hosts = slices.Delete(l.state.Hosts, i, i+1)
	l.state.Pending = append(l.state.Pending, h)
	l.state.Released = append(slices.DeleteFunc(l.state.Released, func(x HostConfig) bool { return x.Name == name }), h.HostConfig)
	if err := writeState(&l.state); err != nil {
		l.mu.Unlock()
		return err
	}
	l.mu.Unlock()
	l.gov.mu.Lock()
	delete(l.gov.budgets, name)
	l.gov.mu.Unlock()
	if err := l.removeHostParts(h); err != nil {
		// It stays pending: lab down tries again.
		return fmt.Errorf("removing host %s from lab %s left something behind (headroom lab down %s removes it): %w", name, l.state.Name, l.state.Name, err)
	}
	l.settle(name, nil)
	return nil
}

// removeHostParts removes what createHost made for h, tolerating parts
// that are not there: the cgroup (killing its processes first), the
// namespace (which takes the host's end of the link and its shaping with
// it), the machine's end of the link and the volume directory.
func (l *Lab) removeHostParts(h HostState) error {
	var errs []error
	if err := l.cg.remove(h.Cgroup); err != nil {
		errs = append(errs, err)
	}
	if err := run("ip", "netns", "del", h.Netns); err != nil && !notFound(err) {
		errs = append(errs, err)
	}
	if err := ipNS("", "link", "del", h.Veth); err != nil && !notFound(err) {
		errs = append(errs, err)
	}
	if h.VolumeDir != "" {
		if err := os.RemoveAll(h.VolumeDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// newHostConfig resolves a new host's limits against the catalog. A host
// removed earlier (in released) comes back with its own definition when n
// names no other type or volume; otherwise the type is required, and the
// volume is n's or a copy of a peer's (peerVolume), with n.IOPS when set.
func newHostConfig(n NewHost, peers, released []HostConfig, cat *Catalog) (HostConfig, error) {
	if i := slices.IndexFunc(released, func(h HostConfig) bool { return h.Name == n.Name }); i >= 0 &&
		(n.Type == "" || n.Type == released[i].Type) && n.Volume == nil {
		hc := released[i]
		hc.Volumes = slices.Clone(hc.Volumes)
		if n.IOPS > 0 {
			if len(hc.Volumes) == 0 {
				return HostConfig{}, fmt.Errorf("iops: the host has no volume to provision")
			}
			v := &hc.Volumes[0]
			vt, ok := cat.Volume(v.Type)
			if !ok {
				return HostConfig{}, fmt.Errorf("its volume type %q is not in the lab's catalog", v.Type)
			}
			if err := CheckIOPS(vt, v.SizeGiB, n.IOPS); err != nil {
				return HostConfig{}, fmt.Errorf("iops: %v", err)
			}
			v.IOPS, v.MonthlyPrice = n.IOPS, vt.VolumeMonthlyPrice(v.SizeGiB, n.IOPS)
		}
		return hc, nil
	}
	if n.Type == "" {
		return HostConfig{}, fmt.Errorf("type: a new host needs an instance type; use one of %s", strings.Join(cat.InstanceNames(), ", "))
	}
	it, ok := cat.Instance(n.Type)
	if !ok {
		return HostConfig{}, fmt.Errorf("type: %q is not in the lab's catalog; use one of %s", n.Type, strings.Join(cat.InstanceNames(), ", "))
	}
	if n.IOPS < 0 {
		return HostConfig{}, fmt.Errorf("iops: must be positive (or left out), got %v", n.IOPS)
	}
	hc := HostConfig{Name: n.Name, Type: it.Name, VCPUs: it.VCPUs, MemoryBytes: it.MemoryMiB << 20, NetworkMbit: it.NetworkMbit, PricePerHour: it.PricePerHour}
	vs := n.Volume
	if vs == nil {
		if pv, ok := peerVolume(it.Name, append(slices.Clone(peers), released...)); ok {
			vs = &VolumeSpec{Name: pv.Name, Type: pv.Type, SizeGiB: pv.SizeGiB, IOPS: pv.IOPS}
		}
	}
	if vs == nil {
		if n.IOPS > 0 {
			return HostConfig{}, fmt.Errorf("iops: no host of the lab has a volume, so the new host gets none to provision; leave iops out")
		}
		return hc, nil
	}
	v := *vs
	if n.IOPS > 0 {
		vt, ok := cat.Volume(v.Type)
		if !ok {
			return HostConfig{}, fmt.Errorf("volume type %q is not in the lab's catalog", v.Type)
		}
		size := v.SizeGiB
		if size == 0 {
			size = 100 // resolveVolume's default
		}
		if err := CheckIOPS(vt, size, n.IOPS); err != nil {
			return HostConfig{}, fmt.Errorf("iops: %v", err)
		}
		v.IOPS = n.IOPS
	}
	vc, err := resolveVolume("volume", v, it, cat)
	if err != nil {
		return HostConfig{}, err
	}
	hc.Volumes = []VolumeConfig{vc}
	return hc, nil
}

// peerVolume is the volume a new host of type typ gets when none is
// asked for: that of the first host of the same type with a volume, else
// of the first host with one. A cluster's hosts are alike, and a node
// added to it stores the same data.
func peerVolume(typ string, hosts []HostConfig) (VolumeConfig, bool) {
	for _, same := range []bool{true, false} {
		for _, h := range hosts {
			if len(h.Volumes) > 0 && (!same || h.Type == typ) {
				return h.Volumes[0], true
			}
		}
	}
	return VolumeConfig{}, false
}

// slotOf is a host's place in the lab's subnet (0 = .10), which also
// numbers its link.
func slotOf(h HostState) int {
	a, err := netip.ParseAddr(h.Addr)
	if err != nil || !a.Is4() {
		return -1
	}
	return int(a.As4()[3]) - 10
}

// freeSlot is the lowest slot no host (pending ones included) uses. A
// slot freed by a removed host is taken again: the host's link gets the
// same MAC address for the same IP address (macFor), so that the other
// hosts' neighbour caches stay right.
func freeSlot(st *State) (int, error) {
	used := map[int]bool{}
	for _, h := range append(slices.Clone(st.Hosts), st.Pending...) {
		used[slotOf(h)] = true
	}
	for i := 0; i < maxHosts; i++ {
		if !used[i] {
			return i, nil
		}
	}
	return 0, fmt.Errorf("lab %s has %d hosts, the most a lab may have; remove one first", st.Name, maxHosts)
}

// macFor is the link address of the host at addr: locally administered,
// and derived from the IPv4 address, so that a host brought up again at
// an address gets the MAC it had.
func macFor(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is4() {
		return ""
	}
	b := a.As4()
	return fmt.Sprintf("02:48:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3])
}

// hostsOf lists the hosts of st that processes may be on: up and pending.
func hostsOf(st State) []HostState {
	return append(slices.Clone(st.Hosts), st.Pending...)
}

// volumeDir is the directory of host's volume vol in lab name.
func volumeDir(name, host, vol string) string {
	return filepath.Join(VolumeDir, name, host+"-"+vol)
}

// restoreHosts puts an orphaned lab's hosts back as defined when they
// differ only by what node events changed while it ran (its campaign was
// killed before it undid them): hosts the definition does not have, and
// hosts left half-added or half-removed, are removed; defined hosts that
// were removed come back as they were. A lab that differs otherwise is
// left as it is (Up then refuses it). The caller holds the lab lock.
func restoreHosts(st *State, hosts []HostConfig) error {
	defined := map[string]bool{}
	for _, d := range hosts {
		defined[d.Name] = true
		i := slices.IndexFunc(st.Hosts, func(h HostState) bool { return h.Name == d.Name })
		j := slices.IndexFunc(st.Released, func(h HostConfig) bool { return h.Name == d.Name })
		switch {
		case i >= 0 && !sameHosts(st.Hosts[i:i+1], []HostConfig{d}):
			return nil
		case i < 0 && (j < 0 || !sameHosts([]HostState{{HostConfig: st.Released[j]}}, []HostConfig{d})):
			return nil
		}
	}
	l, err := open(st)
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range st.Pending {
		if err := l.removeHostParts(h); err != nil {
			errs = append(errs, err)
		} else {
			l.settle(h.Name, nil)
		}
	}
	for _, h := range st.Hosts {
		if !defined[h.Name] {
			errs = append(errs, l.removeHost(h.Name))
		}
	}
	for _, d := range hosts {
		if _, err := l.Host(d.Name); err != nil {
			_, err := l.addHost(NewHost{Name: d.Name})
			errs = append(errs, err)
		}
	}
	*st = l.State()
	return errors.Join(errs...)
}
