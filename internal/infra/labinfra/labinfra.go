// Package labinfra is the infra provider of the emulated IaaS region
// (internal/lab): its hosts are the lab's, servers run inside a host's
// network namespace and cgroups, and the lab's faults and limit changes
// are its capabilities.
package labinfra

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/lab"
)

// Name is the provider's name.
const Name = "lab"

// Provider brings up one lab and gives its hosts.
type Provider struct {
	name  string
	hosts []lab.HostConfig
	cat   *lab.Catalog
	keep  bool
	lab   *lab.Lab // nil until Up
	// computeUnit is lab.compute_unit ("" = the default, machine).
	computeUnit string
}

// New returns the provider of lab name with hosts from cat. keep leaves a
// lab this provider brought up running after Down (the spec's lab.keep).
func New(name string, hosts []lab.HostConfig, cat *lab.Catalog, keep bool) *Provider {
	return &Provider{name: name, hosts: hosts, cat: cat, keep: keep}
}

// FromDefinition resolves a spec's lab: section (its catalog relative to
// specDir); name is the lab's name when the section does not give one.
func FromDefinition(d *lab.Definition, name, specDir string) (*Provider, error) {
	hosts, cat, err := d.Resolve(specDir)
	if err != nil {
		return nil, err
	}
	if d.Name != "" {
		name = d.Name
	}
	p := New(name, hosts, cat, d.Keep)
	p.computeUnit = d.ComputeUnit
	return p, nil
}

// Name implements infra.Provider.
func (p *Provider) Name() string { return Name }

// Up implements infra.Provider: it brings the lab up, or takes over the
// lab of that name when it is up with the same hosts (a killed campaign's
// included).
func (p *Provider) Up(_ context.Context, opt infra.UpOptions) (infra.Hosts, error) {
	if p.lab == nil {
		l, err := lab.Up(p.name, p.hosts, p.cat, lab.Options{Progress: opt.Note, ComputeUnit: p.computeUnit,
			Owner: lab.Owner{Campaign: opt.Campaign, Results: opt.Results}})
		if err != nil {
			return nil, err
		}
		p.lab = l
	}
	return p.Hosts(), nil
}

// Hosts are the lab's hosts in their defined order (nil before Up).
func (p *Provider) Hosts() infra.Hosts {
	if p.lab == nil {
		return nil
	}
	var out infra.Hosts
	for _, h := range p.lab.State().Hosts {
		out = append(out, &Host{lab: p.lab, name: h.Name})
	}
	return out
}

// Down implements infra.Provider: it takes the lab down when Up brought it
// up and the spec does not keep it; otherwise it only undoes the faults
// left in place.
func (p *Provider) Down() error {
	if p.lab == nil {
		return nil
	}
	err := p.lab.Close(p.keep)
	p.lab = nil
	return err
}

// Lab is the lab that is up (nil before Up): the campaign records its
// hosts' limits from its state.
func (p *Provider) Lab() *lab.Lab { return p.lab }

// Describe implements infra.Describer: the lab's hosts, limits and the
// catalog's prices, enough to price and describe every host afterwards.
func (p *Provider) Describe() (string, any) {
	if p.lab == nil {
		return "", nil
	}
	st := p.lab.State()
	d := map[string]any{"name": st.Name, "subnet": st.Subnet, "cgroups": st.Cgroups, "hosts": st.Hosts, "catalog": st.Catalog}
	if st.ComputeUnit != nil {
		d["compute_unit"] = st.ComputeUnit
	}
	// Hosts added or released since the lab came up (node events), when
	// it is described again.
	if a := p.AddedHosts(); len(a) > 0 {
		d["added"] = a
	}
	if r := p.RemovedHosts(); len(r) > 0 {
		d["removed"] = r
	}
	return "lab", d
}

func (p *Provider) up() (*lab.Lab, error) {
	if p.lab == nil {
		return nil, fmt.Errorf("lab %s is not up", p.name)
	}
	return p.lab, nil
}

// Apply implements infra.Faulter.
func (p *Provider) Apply(e infra.Event) (string, error) {
	l, err := p.up()
	if err != nil {
		return "", err
	}
	return l.Apply(e)
}

// ResetFaults implements infra.Faulter.
func (p *Provider) ResetFaults() error {
	l, err := p.up()
	if err != nil {
		return err
	}
	return l.ResetFaults()
}

// SetCPU implements infra.Resizer.
func (p *Provider) SetCPU(host string, vcpus float64) error {
	l, err := p.up()
	if err != nil {
		return err
	}
	return l.SetCPU(host, vcpus)
}

// SetVolume implements infra.Resizer.
func (p *Provider) SetVolume(host string, iops, mibps float64) error {
	l, err := p.up()
	if err != nil {
		return err
	}
	return l.SetVolume(host, iops, mibps)
}

// SetLink implements infra.Resizer.
func (p *Provider) SetLink(host string, mbit float64) error {
	l, err := p.up()
	if err != nil {
		return err
	}
	return l.SetLink(host, mbit)
}

// AddHost implements infra.Scaler: the lab brings a host of the
// catalog's type up while it runs (lab.AddHost), with a volume like its
// peers' (h.IOPS provisions it). A host of the definition removed earlier
// comes back as defined when h names no type. The campaign opens the new
// host's monitor and records its limits.
func (p *Provider) AddHost(ctx context.Context, h infra.HostSpec) (infra.Host, error) {
	l, err := p.up()
	if err != nil {
		return nil, err
	}
	if _, err := l.AddHost(ctx, lab.NewHost{Name: h.Name, Type: h.Type, IOPS: h.IOPS}); err != nil {
		return nil, err
	}
	return &Host{lab: l, name: h.Name}, nil
}

// RemoveHost implements infra.Scaler: the host's processes are killed and
// the host released (lab.RemoveHost). Its infra.Host keeps its last facts,
// marked removed.
func (p *Provider) RemoveHost(ctx context.Context, name string) error {
	l, err := p.up()
	if err != nil {
		return err
	}
	return l.RemoveHost(ctx, name)
}

// AddedHosts lists the hosts up now that the definition does not have
// (added while the campaign ran), in the lab's order.
func (p *Provider) AddedHosts() []string {
	if p.lab == nil {
		return nil
	}
	var out []string
	for _, h := range p.lab.State().Hosts {
		if !slices.ContainsFunc(p.hosts, func(d lab.HostConfig) bool { return d.Name == h.Name }) {
			out = append(out, h.Name)
		}
	}
	return out
}

// RemovedHosts lists the defined hosts that are not up now (released
// while the campaign ran), in their defined order.
func (p *Provider) RemovedHosts() []string {
	if p.lab == nil {
		return nil
	}
	var out []string
	for _, d := range p.hosts {
		if _, err := p.lab.Host(d.Name); err != nil {
			out = append(out, d.Name)
		}
	}
	return out
}

// Restore puts the lab's hosts back as defined: hosts added are removed,
// defined hosts removed are brought up again as they were. It undoes the
// host changes of a run after its node events; the servers on them are
// the caller's.
func (p *Provider) Restore(ctx context.Context) error {
	var errs []error
	for _, name := range p.AddedHosts() {
		errs = append(errs, p.RemoveHost(ctx, name))
	}
	for _, name := range p.RemovedHosts() {
		_, err := p.AddHost(ctx, infra.HostSpec{Name: name})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Host is one lab host. Its address and limits are read from the lab's
// state on every call, so they follow the events that change them; once
// the host is removed, its last state stands, marked removed.
type Host struct {
	lab  *lab.Lab
	name string

	mu      sync.Mutex
	last    lab.HostState
	removed bool
}

func (h *Host) state() lab.HostState {
	s, err := h.lab.Host(h.name)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.removed = true
		if h.last.Name == "" {
			h.last.Name = h.name
		}
		return h.last
	}
	h.last, h.removed = s, false // a host removed and added again is back
	return s
}

// gone reports whether the host was removed (after a call to state).
func (h *Host) gone() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.removed
}

// Name implements infra.Host.
func (h *Host) Name() string { return h.name }

// Address implements infra.Host: the host's address on the lab bridge.
func (h *Host) Address() string { return h.state().Addr }

// ClientAddress implements infra.Host: the machine's own address in the
// lab, which Headroom's connections come from.
func (h *Host) ClientAddress() string { return h.lab.ClientAddr() }

// DataDir implements infra.Host: the directory of the host's first
// volume, whose I/O the lab throttles ("" without a volume).
func (h *Host) DataDir() string { return h.state().VolumeDir }

// Command implements infra.Host: the process joins the host's cgroups and
// network namespace, then drops to uid:gid (lab.Command).
func (h *Host) Command(cmd *exec.Cmd, uid, gid int) error {
	return h.lab.Command(h.name, cmd, uid, gid)
}

// CPUTimeFor converts CPU work written for the lab's reference core (an
// application server's cpu_work) into CPU time on this machine under the
// lab's compute unit (lab.ComputeUnit.CPUTimeFor).
func (h *Host) CPUTimeFor(d time.Duration) time.Duration {
	st := h.lab.State()
	return st.ComputeUnit.CPUTimeFor(d)
}

// Monitor implements infra.Host: CPU, memory and volume I/O from the
// host's cgroup and network from its link, as a guest would see them.
func (h *Host) Monitor() (infra.Monitor, error) {
	m, err := h.lab.NewMonitor(h.name)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Facts implements infra.Host: the host's definition with the limits in
// force now.
func (h *Host) Facts() infra.Facts {
	s := h.state()
	f := infra.Facts{Provider: Name, Group: h.lab.Name(), Name: s.Name, Address: s.Addr, Type: s.Type, Region: s.Region, VCPUs: s.Now.VCPUs,
		MemoryBytes: s.MemoryBytes, NetworkMbit: s.Now.NetworkMbit, PricePerHour: s.PricePerHour,
		Stopped: s.Now.Stopped, LinkDown: s.Now.LinkDown}
	for i, v := range s.Volumes {
		fv := infra.Volume{Name: v.Name, Type: v.Type, SizeGiB: v.SizeGiB, IOPS: v.IOPS, MiBps: v.MiBps, MonthlyPrice: v.MonthlyPrice}
		if i == 0 {
			// The lab keeps the first volume's limits in force in Now.
			fv.IOPS, fv.MiBps, fv.Stalled = s.Now.IOPS, s.Now.MiBps, s.Now.DiskStalled
		}
		f.Volumes = append(f.Volumes, fv)
	}
	if h.gone() {
		// Released: nothing runs on it, nothing reaches it, nothing is
		// paid for it any more.
		f.Removed, f.Stopped, f.LinkDown, f.PricePerHour, f.Volumes = true, true, true, 0, nil
	}
	return f
}

// PricePerHour implements infra.Host: the instance's hourly price plus its
// volumes' monthly prices spread over lab.HoursPerMonth hours.
func (h *Host) PricePerHour() float64 {
	s := h.state()
	if h.gone() {
		return 0
	}
	p := s.PricePerHour
	for _, v := range s.Volumes {
		p += v.MonthlyPrice / lab.HoursPerMonth
	}
	return p
}

// OOMKills is how many processes the host's memory limit has killed
// (lab.OOMKills), and the limit in MiB, so that a managed server's death
// by SIGKILL can be named as the limit's and point at memory_mib.
func (h *Host) OOMKills() (kills, limitMiB int64, ok bool) {
	n, ok := h.lab.OOMKills(h.name)
	return n, h.state().MemoryBytes >> 20, ok
}
