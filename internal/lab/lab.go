// Package lab emulates an IaaS region on one Linux machine. A lab host is a
// network namespace with its own address on a lab bridge, plus a cgroup
// that limits its CPU (vCPUs as a CFS quota), memory and, for its volume,
// block-I/O operations and bytes per second on the machine's disk. A token
// bucket on the host's link limits its network bandwidth. Instance and
// volume types come from a catalog with prices (catalog.go).
//
// Everything a lab creates is recorded in a state file before it is
// created, so that `headroom lab down` removes it all even after Headroom
// was killed, and removing a lab that is not there does nothing.
package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Paths of the lab's own files; tests and unusual machines change them.
var (
	// StateDir holds one JSON state file per lab (tmpfs: a reboot clears
	// it together with the namespaces and cgroups it describes).
	StateDir = "/run/headroom/labs"
	// VolumeDir holds the lab volumes' directories.
	VolumeDir = "/var/lib/headroom/labs"
)

// State is what a lab is made of, written before any of it is created.
type State struct {
	Name      string      `json:"name"`
	ID        string      `json:"id"`     // 6 hex digits in interface names
	Subnet    string      `json:"subnet"` // e.g. 10.201.0.0/24
	Gateway   string      `json:"gateway"`
	Bridge    string      `json:"bridge"`
	Cgroups   string      `json:"cgroups"` // "v1" or "v2"
	Created   time.Time   `json:"created"`
	Hosts     []HostState `json:"hosts"`
	Catalog   *Catalog    `json:"catalog"`               // the types the lab was made from
	Owner     int         `json:"owner_pid,omitempty"`   // the campaign process that takes it down; 0 = kept until lab down
	OwnedBy   Owner       `json:"owner,omitzero"`        // who that is, in words (owner.go)
	Partition bool        `json:"partitioned,omitempty"` // partition rules may be in place
	// Pending are hosts being added or removed while the lab runs
	// (scale.go): lab down removes them too.
	Pending []HostState `json:"pending,omitempty"`
	// Released are the definitions of hosts removed while the lab ran, so
	// that a host added again under its name comes back as it was.
	Released []HostConfig `json:"released,omitempty"`
	// ComputeUnit is what a vCPU means on this machine (computeunit.go);
	// nil in labs made before it existed: a vCPU is a core.
	ComputeUnit *ComputeUnit `json:"compute_unit,omitempty"`
}

// HostState is one host as created, with its current (possibly changed)
// limits.
type HostState struct {
	HostConfig
	Addr      string `json:"addr"`
	Netns     string `json:"netns"`
	Veth      string `json:"veth"`   // the machine-side end of the host's link
	Cgroup    string `json:"cgroup"` // path relative to each hierarchy's root
	VolumeDir string `json:"volume_dir,omitempty"`
	Device    string `json:"device,omitempty"` // major:minor the volume is throttled on
	Now       Limits `json:"now"`              // limits and faults in force now
}

// Limits are a host's current limits and faults; events change them and
// ResetFaults puts back the definition's.
type Limits struct {
	VCPUs       float64 `json:"vcpus"`
	NetworkMbit float64 `json:"network_mbit"`
	IOPS        float64 `json:"iops"`
	MiBps       float64 `json:"mibps"`
	Stopped     bool    `json:"stopped,omitempty"`
	LinkDown    bool    `json:"link_down,omitempty"`
	DiskStalled bool    `json:"disk_stalled,omitempty"` // its volume serves no I/O (stall_disk)
	// Cores is the CPU quota in force, in this machine's cores: VCPUs
	// converted by the lab's compute unit (0 in labs made before it).
	Cores float64 `json:"cores,omitempty"`
}

func definedLimits(h HostConfig) Limits {
	lim := Limits{VCPUs: h.VCPUs, NetworkMbit: h.NetworkMbit}
	if len(h.Volumes) > 0 {
		lim.IOPS, lim.MiBps = h.Volumes[0].IOPS, h.Volumes[0].MiBps
	}
	return lim
}

// Lab is a lab that is up.
type Lab struct {
	mu    sync.Mutex
	state State
	cg    *cgroups
	owned bool // brought up by this process (and so taken down by it unless kept)
	gov   governor
	// governed: this process keeps the volume budgets split (Up started
	// the governor), so hosts added later join it.
	governed bool
}

// Options tune Up.
type Options struct {
	Progress func(string) // one line per step; nil = quiet
	// Owner describes who brings the lab up (owner.go); an empty command
	// line is this process's.
	Owner Owner
	// Persistent labs (headroom lab up) stay until lab down; others belong
	// to the process that made them, which takes them down when it ends.
	Persistent bool
	// ComputeUnit is lab.compute_unit: "reference" calibrates a vCPU to
	// the reference core's work per second, "machine" (default) makes it
	// one core of this machine (computeunit.go).
	ComputeUnit string
}

// Preflight says why this process cannot make a lab (not root, a missing
// command or kernel feature), or nil.
func Preflight() error {
	if os.Geteuid() != 0 {
		return errors.New("the lab needs root (network namespaces, links and cgroups); run Headroom as root, or leave out the lab: section to run on this machine directly")
	}
	for _, c := range []string{"ip", "tc", "nsenter", "setpriv"} {
		if _, err := lookPath(c); err != nil {
			return fmt.Errorf("%s is not installed; the lab needs it (Debian: apt-get install %s)", c, packageOf(c))
		}
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return errors.New("this kernel has no network namespaces (/proc/self/ns/net is missing); the lab cannot run here")
	}
	_, err := detectCgroups("/")
	return err
}

// Up creates the lab name with hosts, or returns it when it is already up
// with the same hosts. A lab of that name with other hosts is an error.
func Up(name string, hosts []HostConfig, cat *Catalog, opt Options) (*Lab, error) {
	if !validLabName(name) {
		return nil, fmt.Errorf("lab name %q must be 1 to 24 letters, digits, '.', '_' or '-'", name)
	}
	if err := checkNameFree(name); err != nil {
		return nil, err
	}
	if err := Preflight(); err != nil {
		return nil, err
	}
	unlock, err := lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if st, err := readState(name); err == nil {
		if err := refuseTakeOver(st); err != nil {
			return nil, err
		}
		if st.Owner != 0 && !alive(st.Owner) {
			// Hosts its killed campaign added or removed are put back first.
			if err := restoreHosts(st, hosts); err != nil {
				return nil, fmt.Errorf("putting back the hosts of lab %s: %w", name, err)
			}
		}
		if sameHosts(st.Hosts, hosts) {
			l, err := open(st)
			if err != nil {
				return nil, err
			}
			progress(opt, "lab %s is already up", name)
			if st.Owner != 0 && !alive(st.Owner) {
				// Its campaign died (SIGKILL) and left it: this process takes
				// it over, faults it may have left included.
				l.owned = true
				l.state.Owner = os.Getpid()
				if opt.Persistent {
					l.state.Owner = 0
				}
				l.state.OwnedBy = ownerFor(opt, time.Now())
				if err := writeState(&l.state); err != nil {
					return nil, err
				}
			}
			if err := l.ResetFaults(); err != nil {
				return nil, err
			}
			l.startGovernor()
			return l, nil
		}
		return nil, fmt.Errorf("a lab named %s is up with other hosts; take it down first (headroom lab down %s) or give this one another lab.name", name, name)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	cg, err := detectCgroups("/")
	if err != nil {
		return nil, err
	}
	used, err := usedPrefixes()
	if err != nil {
		return nil, err
	}
	for _, other := range listStates() {
		if p, err := netip.ParsePrefix(other.Subnet); err == nil {
			used = append(used, p)
		}
	}
	subnet, err := pickSubnet(used)
	if err != nil {
		return nil, err
	}
	id := randomID()
	st := State{
		Name: name, ID: id, Subnet: subnet.String(), Gateway: gatewayAddr(subnet).String(),
		Bridge: "hrb-" + id, Cgroups: cg.Version(), Created: time.Now().UTC(), Catalog: cat,
	}
	if st.ComputeUnit, err = Calibrate(opt.ComputeUnit, hosts); err != nil {
		return nil, err
	}
	progress(opt, "lab %s: %s", name, st.ComputeUnit.Short())
	for _, n := range st.ComputeUnit.Notes {
		progress(opt, "lab %s: %s", name, n)
	}
	if !opt.Persistent {
		st.Owner = os.Getpid()
	}
	st.OwnedBy = ownerFor(opt, st.Created)
	for i, h := range hosts {
		hs := HostState{
			HostConfig: h, Addr: hostAddr(subnet, i).String(),
			Netns:  "hr-" + name + "-" + h.Name,
			Veth:   fmt.Sprintf("hrv-%s-%02d", id, i),
			Cgroup: "/" + cgroupRoot + "/" + name + "/" + h.Name,
			Now:    definedLimits(h),
		}
		if len(h.Volumes) > 0 {
			hs.VolumeDir = volumeDir(name, h.Name, h.Volumes[0].Name)
		}
		st.Hosts = append(st.Hosts, hs)
	}
	// The state is written before anything exists, so that whatever
	// follows can be undone even if this process dies half-way.
	if err := writeState(&st); err != nil {
		return nil, err
	}
	l := &Lab{state: st, cg: cg, owned: true}
	if err := l.create(opt); err != nil {
		derr := l.teardown()
		return nil, errors.Join(fmt.Errorf("bringing up lab %s: %w", name, err), derr)
	}
	if err := writeState(&l.state); err != nil {
		return nil, err
	}
	l.startGovernor()
	return l, nil
}

func progress(opt Options, format string, args ...any) {
	if opt.Progress != nil {
		opt.Progress(fmt.Sprintf(format, args...))
	}
}

func (l *Lab) create(opt Options) error {
	st := &l.state
	subnet := netip.MustParsePrefix(st.Subnet)
	progress(opt, "lab %s: bridge %s on %s (cgroup %s)", st.Name, st.Bridge, st.Subnet, st.Cgroups)
	if err := ipNS("", "link", "add", st.Bridge, "type", "bridge"); err != nil {
		return err
	}
	if err := ipNS("", "addr", "add", st.Gateway+"/"+fmt.Sprint(subnet.Bits()), "dev", st.Bridge); err != nil {
		return err
	}
	if err := ipNS("", "link", "set", st.Bridge, "up"); err != nil {
		return err
	}
	for i := range st.Hosts {
		h := &st.Hosts[i]
		progress(opt, "lab %s: host %s (%s, %s, %d MiB, %g Mbit/s) at %s", st.Name, h.Name, h.Type, st.ComputeUnit.Describe(h.VCPUs), h.MemoryBytes>>20, h.NetworkMbit, h.Addr)
		if err := l.createHost(h, subnet.Bits()); err != nil {
			return fmt.Errorf("host %s: %w", h.Name, err)
		}
	}
	return nil
}

func (l *Lab) createHost(h *HostState, bits int) error {
	peer := h.Veth + "p"
	if err := run("ip", "netns", "add", h.Netns); err != nil {
		return err
	}
	steps := [][]string{
		{"", "link", "add", h.Veth, "type", "veth", "peer", "name", peer},
		{"", "link", "set", peer, "netns", h.Netns},
		{h.Netns, "link", "set", peer, "name", "eth0"},
		{h.Netns, "link", "set", "eth0", "address", macFor(h.Addr)},
		{h.Netns, "addr", "add", fmt.Sprintf("%s/%d", h.Addr, bits), "dev", "eth0"},
		{h.Netns, "link", "set", "lo", "up"},
		{h.Netns, "link", "set", "eth0", "up"},
		{"", "link", "set", h.Veth, "master", l.state.Bridge},
		{"", "link", "set", h.Veth, "up"},
	}
	for _, s := range steps {
		if err := ipNS(s[0], s[1:]...); err != nil {
			return err
		}
	}
	if err := l.setLinkRate(h, h.Now.NetworkMbit); err != nil {
		return err
	}
	if err := l.cg.create(h.Cgroup); err != nil {
		return err
	}
	h.Now.Cores = l.state.ComputeUnit.CoresFor(h.Now.VCPUs)
	if err := l.cg.setCPU(h.Cgroup, h.Now.Cores); err != nil {
		return err
	}
	if err := l.cg.setMemory(h.Cgroup, h.MemoryBytes); err != nil {
		return err
	}
	if h.VolumeDir != "" {
		if err := os.MkdirAll(h.VolumeDir, 0o755); err != nil {
			return fmt.Errorf("cannot create the volume directory %s: %v", h.VolumeDir, err)
		}
		dev, err := wholeDisk(h.VolumeDir)
		if err != nil {
			return err
		}
		h.Device = dev
		if err := l.setBudget(h); err != nil {
			return err
		}
	}
	return nil
}

// setLinkRate shapes both directions of the host's link.
func (l *Lab) setLinkRate(h *HostState, mbit float64) error {
	if h.RegionLinkMbit > 0 {
		return l.shapeRegions(h, mbit) // regions.go
	}
	if err := shape("", h.Veth, mbit); err != nil { // towards the host
		return err
	}
	return shape(h.Netns, "eth0", mbit) // from the host
}

// Open returns the lab name that is up (made by this or another process).
func Open(name string) (*Lab, error) {
	st, err := readState(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no lab named %s is up; bring it up with headroom lab up", name)
	}
	if err != nil {
		return nil, err
	}
	return open(st)
}

func open(st *State) (*Lab, error) {
	cg, err := detectCgroups("/")
	if err != nil {
		return nil, err
	}
	return &Lab{state: *st, cg: cg}, nil
}

// Owned reports whether this process brought the lab up.
func (l *Lab) Owned() bool { return l.owned }

// Name is the lab's name.
func (l *Lab) Name() string { return l.state.Name }

// State returns a copy of the lab's state.
func (l *Lab) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state
	st.Hosts = append([]HostState(nil), l.state.Hosts...)
	return st
}

// ClientAddr is the machine's own address in the lab: connections from
// Headroom to lab hosts come from it.
func (l *Lab) ClientAddr() string { return l.state.Gateway }

// Host returns the host of that name.
func (l *Lab) Host(name string) (HostState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range l.state.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	var names []string
	for _, h := range l.state.Hosts {
		names = append(names, h.Name)
	}
	return HostState{}, fmt.Errorf("lab %s has no host %q; its hosts are %s", l.state.Name, name, strings.Join(names, ", "))
}

// Down removes the lab: its processes, namespaces, links, cgroups, volume
// directories and state file. Removing a lab that is not up does nothing;
// a lab whose owner is another process still running is refused
// (ForceDown takes it anyway).
func Down(name string) error { return down(name, false) }

func down(name string, force bool) error {
	unlock, err := lock()
	if err != nil {
		return err
	}
	defer unlock()
	st, err := readState(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := refuseDown(st, force); err != nil {
		return err
	}
	l, err := open(st)
	if err != nil {
		return err
	}
	return l.teardown()
}

// DownAll removes every lab that has a state file, except, unless force,
// those whose owner still runs: it says which it left.
func DownAll(force bool) error {
	var errs []error
	for _, st := range listStates() {
		if err := down(st.Name, force); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close takes the lab down if this process brought it up and keep is
// false; otherwise it only undoes the faults this process left in place.
func (l *Lab) Close(keep bool) error {
	l.stopGovernor()
	if l.owned && !keep {
		return Down(l.state.Name)
	}
	return l.ResetFaults()
}

// teardown removes everything in the state, tolerating parts that are
// already gone, and then the state file.
func (l *Lab) teardown() error {
	st := l.state
	var errs []error
	for _, h := range hostsOf(st) {
		if err := l.removeHostParts(h); err != nil {
			errs = append(errs, err)
		}
	}
	if err := ipNS("", "link", "del", st.Bridge); err != nil && !notFound(err) {
		errs = append(errs, err)
	}
	l.cg.removeIfEmpty("/" + cgroupRoot + "/" + st.Name)
	l.cg.removeIfEmpty("/" + cgroupRoot)
	_ = os.Remove(filepath.Join(VolumeDir, st.Name))
	if len(errs) > 0 {
		return fmt.Errorf("taking lab %s down left something behind (run headroom lab down %s again): %w", st.Name, st.Name, errors.Join(errs...))
	}
	if err := os.Remove(statePath(st.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func notFound(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find device") || strings.Contains(s, "No such file") ||
		strings.Contains(s, "does not exist") || strings.Contains(s, "No such device")
}

// List returns the state of every lab that is up, by name.
func List() []State {
	sts := listStates()
	out := make([]State, 0, len(sts))
	for _, st := range sts {
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func statePath(name string) string { return filepath.Join(StateDir, name+".json") }

func readState(name string) (*State, error) {
	b, err := os.ReadFile(statePath(name))
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("the lab state file %s is damaged (%v); remove the lab's namespaces (ip netns list) and that file by hand", statePath(name), err)
	}
	return &st, nil
}

func writeState(st *State) error {
	if err := os.MkdirAll(StateDir, 0o700); err != nil {
		return fmt.Errorf("cannot create the lab state directory %s: %v", StateDir, err)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(st.Name) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("cannot write the lab state file: %v", err)
	}
	return os.Rename(tmp, statePath(st.Name))
}

func listStates() []*State {
	entries, _ := os.ReadDir(StateDir)
	var out []*State
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		if st, err := readState(name); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// lock serialises lab changes between Headroom processes on this machine.
func lock() (func(), error) {
	if err := os.MkdirAll(StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the lab state directory %s: %v", StateDir, err)
	}
	f, err := os.OpenFile(filepath.Join(StateDir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

func sameHosts(a []HostState, b []HostConfig) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, _ := json.Marshal(a[i].HostConfig)
		y, _ := json.Marshal(b[i])
		if string(x) != string(y) {
			return false
		}
	}
	return true
}
