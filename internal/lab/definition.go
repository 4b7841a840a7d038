package lab

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Definition is the `lab:` section of a spec: the emulated hosts of one lab.
// It is decoded by the spec package's strict decoder; Resolve checks it
// against a catalog.
type Definition struct {
	// Name identifies the lab on this machine (default: the campaign's
	// name). Namespaces, links and cgroups are named after it.
	Name string `yaml:"name"`
	// Catalog is a file of extra instance and volume types (relative to the
	// spec file), added to the shipped catalog.
	Catalog string `yaml:"catalog"`
	// Keep leaves the lab up when the campaign ends (default: a lab the
	// campaign brought up is taken down at its end).
	Keep  bool       `yaml:"keep"`
	Hosts []HostSpec `yaml:"hosts"`
	// PopulateUnthrottled lifts the hosts' volume and CPU limits while the
	// campaign populates its target and puts them back, as defined, before
	// the first run, as restoring a cloud volume from a snapshot would
	// (unthrottle.go; docs/lab.md says how this departs from a provider).
	PopulateUnthrottled bool `yaml:"populate_unthrottled"`
	// ComputeUnit is what a vCPU means (computeunit.go): "machine"
	// (default) or "reference".
	ComputeUnit string `yaml:"compute_unit"`
	// Regions shape the links between hosts of different regions
	// (regions.go); hosts name theirs with region:.
	Regions []RegionSpec `yaml:"regions"`
}

// HostSpec is one lab host, or Count hosts named Name1..NameCount.
type HostSpec struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"` // default 1: one host called Name
	Type  string `yaml:"type"`  // instance type from the catalog
	// Region labels the host (results and reports group hosts by it);
	// lab.regions can shape its links to other regions.
	Region string `yaml:"region"`
	// Overrides of the instance type's limits (0 = the type's value).
	VCPUs       float64      `yaml:"vcpus"`
	MemoryMiB   int64        `yaml:"memory_mib"`
	NetworkMbit float64      `yaml:"network_mbit"`
	Volumes     []VolumeSpec `yaml:"volumes"`
}

// VolumeSpec is a provisioned volume attached to a host.
type VolumeSpec struct {
	Name    string  `yaml:"name"`
	Type    string  `yaml:"type"`     // volume type from the catalog
	SizeGiB float64 `yaml:"size_gib"` // default 100 (prices and the IOPS-per-GiB rule use it; no space is reserved)
	IOPS    float64 `yaml:"iops"`     // provisioned IOPS; default the type's default_iops
	MiBps   float64 `yaml:"mibps"`    // bandwidth cap below the type's and instance's; 0 = theirs
}

// HostConfig is a host with every limit resolved.
type HostConfig struct {
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	VCPUs        float64        `json:"vcpus"`
	MemoryBytes  int64          `json:"memory_bytes"`
	NetworkMbit  float64        `json:"network_mbit"` // 0 = unlimited
	PricePerHour float64        `json:"price_per_hour"`
	Volumes      []VolumeConfig `json:"volumes"`
	Region       string         `json:"region,omitempty"`
	// RegionLinkMbit caps the host's traffic to hosts of other regions
	// (regions.go); 0 = no cap.
	RegionLinkMbit float64 `json:"region_link_mbit,omitempty"`
}

// VolumeConfig is a volume with its limits resolved.
type VolumeConfig struct {
	Name         string  `json:"name"`
	Type         string  `json:"type"`
	SizeGiB      float64 `json:"size_gib"`
	IOPS         float64 `json:"iops"`  // 0 = unthrottled
	MiBps        float64 `json:"mibps"` // 0 = uncapped
	MonthlyPrice float64 `json:"monthly_price"`
}

// Resolve checks d against the catalog (loaded from d.Catalog relative to
// specDir) and returns the hosts with their limits. Errors name the field,
// as "lab.hosts[1].type: ...".
func (d *Definition) Resolve(specDir string) ([]HostConfig, *Catalog, error) {
	file := d.Catalog
	if file != "" && !filepath.IsAbs(file) {
		file = filepath.Join(specDir, file)
	}
	cat, err := LoadCatalog(file)
	if err != nil {
		return nil, nil, err
	}
	hosts, err := d.resolve(cat)
	return hosts, cat, err
}

func (d *Definition) resolve(cat *Catalog) ([]HostConfig, error) {
	if d.Name != "" && !validLabName(d.Name) {
		return nil, fmt.Errorf("lab.name: %q must be 1 to 24 letters, digits, '.', '_' or '-'", d.Name)
	}
	if err := CheckComputeUnit(d.ComputeUnit); err != nil {
		return nil, err
	}
	if len(d.Hosts) == 0 {
		return nil, fmt.Errorf("lab.hosts: required; list at least one host like {name: db1, type: small}")
	}
	var out []HostConfig
	seen := map[string]string{}
	for i, h := range d.Hosts {
		p := fmt.Sprintf("lab.hosts[%d]", i)
		if !validHostName(h.Name) {
			return nil, fmt.Errorf("%s.name: %q must start with a letter and have at most 16 letters, digits or '-'", p, h.Name)
		}
		if h.Count < 0 || h.Count > MaxHostCount {
			return nil, fmt.Errorf("%s.count: must be from 1 to %d, got %d", p, MaxHostCount, h.Count)
		}
		it, ok := cat.Instance(h.Type)
		if !ok {
			return nil, fmt.Errorf("%s.type: %q is not in the catalog; use one of %s, or add it with lab.catalog", p, h.Type, strings.Join(cat.InstanceNames(), ", "))
		}
		hc := HostConfig{Type: it.Name, VCPUs: it.VCPUs, MemoryBytes: it.MemoryMiB << 20, NetworkMbit: it.NetworkMbit, PricePerHour: it.PricePerHour}
		if h.VCPUs < 0 || h.MemoryMiB < 0 || h.NetworkMbit < 0 {
			return nil, fmt.Errorf("%s: vcpus, memory_mib and network_mbit overrides must be positive (or left out)", p)
		}
		if h.VCPUs > 0 {
			hc.VCPUs = h.VCPUs
		}
		if h.MemoryMiB > 0 {
			if h.MemoryMiB < 16 {
				return nil, fmt.Errorf("%s.memory_mib: must be at least 16, got %d", p, h.MemoryMiB)
			}
			hc.MemoryBytes = h.MemoryMiB << 20
		}
		if h.NetworkMbit > 0 {
			hc.NetworkMbit = h.NetworkMbit
		}
		if len(h.Volumes) > 1 {
			return nil, fmt.Errorf("%s.volumes: a lab host has at most one volume, because block-I/O limits apply to a host's processes per disk, not per directory; put its data on one volume", p)
		}
		for j, v := range h.Volumes {
			vc, err := resolveVolume(fmt.Sprintf("%s.volumes[%d]", p, j), v, it, cat)
			if err != nil {
				return nil, err
			}
			hc.Volumes = append(hc.Volumes, vc)
		}
		n := h.Count
		names := []string{h.Name}
		if n > 1 {
			names = names[:0]
			for k := 1; k <= n; k++ {
				names = append(names, fmt.Sprintf("%s%d", h.Name, k))
			}
		}
		for _, name := range names {
			if prev, dup := seen[name]; dup {
				return nil, fmt.Errorf("%s.name: host %q is already defined by %s; give each host its own name", p, name, prev)
			}
			seen[name] = p
			c := hc
			c.Name = name
			c.Region = h.Region
			c.Volumes = append([]VolumeConfig(nil), hc.Volumes...)
			out = append(out, c)
		}
	}
	if len(out) > maxHosts {
		return nil, fmt.Errorf("lab.hosts: %d hosts is more than the %d a lab may have", len(out), maxHosts)
	}
	return out, d.resolveRegions(out)
}

const maxHosts = 64

// MaxHostCount bounds lab.hosts[].count.
const MaxHostCount = 32

func resolveVolume(p string, v VolumeSpec, it InstanceType, cat *Catalog) (VolumeConfig, error) {
	if !validHostName(v.Name) {
		return VolumeConfig{}, fmt.Errorf("%s.name: %q must start with a letter and have at most 16 letters, digits or '-'", p, v.Name)
	}
	vt, ok := cat.Volume(v.Type)
	if !ok {
		return VolumeConfig{}, fmt.Errorf("%s.type: %q is not in the catalog; use one of %s, or add it with lab.catalog", p, v.Type, strings.Join(cat.VolumeNames(), ", "))
	}
	vc := VolumeConfig{Name: v.Name, Type: vt.Name, SizeGiB: v.SizeGiB, IOPS: v.IOPS}
	if vc.SizeGiB == 0 {
		vc.SizeGiB = 100
	}
	if !(vc.SizeGiB > 0) || vc.SizeGiB > 1<<20 {
		return VolumeConfig{}, fmt.Errorf("%s.size_gib: must be positive, got %v", p, v.SizeGiB)
	}
	if v.IOPS < 0 || v.MiBps < 0 {
		return VolumeConfig{}, fmt.Errorf("%s: iops and mibps must be positive (or left out)", p)
	}
	if vc.IOPS == 0 {
		vc.IOPS = vt.DefaultIOPS
	}
	if err := CheckIOPS(vt, vc.SizeGiB, vc.IOPS); err != nil {
		return VolumeConfig{}, fmt.Errorf("%s.iops: %v", p, err)
	}
	vc.MiBps = capMiBps(vt.MaxMiBps, it.VolumeMiBps, v.MiBps)
	vc.MonthlyPrice = vt.VolumeMonthlyPrice(vc.SizeGiB, vc.IOPS)
	return vc, nil
}

// CheckIOPS applies a volume type's provisioning rules (seed 000 §4.1: at
// most iops_per_gib per GiB of size and max_iops in all).
func CheckIOPS(vt VolumeType, sizeGiB, iops float64) error {
	if iops == 0 {
		return nil
	}
	if vt.IOPSPerGiB == 0 && vt.MaxIOPS == 0 {
		return fmt.Errorf("volume type %s has no provisioned IOPS; leave iops out or use a provisioned type", vt.Name)
	}
	if iops < 1 || iops != math.Trunc(iops) {
		return fmt.Errorf("must be a whole number of at least 1, got %v", iops)
	}
	if vt.IOPSPerGiB > 0 && iops > vt.IOPSPerGiB*sizeGiB {
		return fmt.Errorf("%v IOPS is more than %v per GiB allows for %v GiB (at most %v); make the volume larger or provision fewer IOPS", iops, vt.IOPSPerGiB, sizeGiB, math.Floor(vt.IOPSPerGiB*sizeGiB))
	}
	if vt.MaxIOPS > 0 && iops > vt.MaxIOPS {
		return fmt.Errorf("%v IOPS is above the %v a %s volume can have", iops, vt.MaxIOPS, vt.Name)
	}
	return nil
}

// capMiBps is the smallest positive cap of the volume type, the instance's
// connection and the spec's override; 0 when none caps.
func capMiBps(caps ...float64) float64 {
	out := 0.0
	for _, c := range caps {
		if c > 0 && (out == 0 || c < out) {
			out = c
		}
	}
	return out
}

func validLabName(s string) bool { return validName(s) && len(s) <= 24 }

func validHostName(s string) bool {
	if s == "" || len(s) > 16 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Event actions (the spec's events: section).
const (
	ActKill      = "kill"      // SIGKILL a host's service
	ActStart     = "start"     // start a killed service again
	ActStop      = "stop"      // SIGSTOP every process of a host
	ActContinue  = "continue"  // SIGCONT them
	ActLinkDown  = "link_down" // take a host's link down
	ActLinkUp    = "link_up"
	ActPartition = "partition" // drop traffic between two groups of hosts
	ActHeal      = "heal"      // remove every partition
	ActSetCPU    = "set_cpu"   // change a host's vCPUs
	ActSetVolume = "set_volume"
	ActSetLink   = "set_link" // change a host's link bandwidth
	// A disk stall: the host's volume serves nothing (a stuck EBS volume)
	// until resume_disk, while its server keeps running.
	ActStallDisk  = "stall_disk"
	ActResumeDisk = "resume_disk"
	// Cluster events: the campaign carries them out (Apply refuses them
	// with ErrClusterEvent), bringing a host up with AddHost or releasing
	// it with RemoveHost around the target's own change.
	ActAddNode    = "add_node"    // a new host (host, type, iops) joins the cluster
	ActRemoveNode = "remove_node" // a host's node leaves the cluster and the host is released
	ActPromote    = "promote"     // the replica on host becomes the primary (a failover)
)

// ClientHost names the machine's own side of the lab (where Headroom's
// load generator runs) in partition groups.
const ClientHost = "client"

// Event is a fault or a change applied at an offset into each run's
// measured phase, then undone when the run ends.
type Event struct {
	At          time.Duration `yaml:"at"`           // offset from the start of the measured phase
	Action      string        `yaml:"action"`       // one of the Act constants
	Host        string        `yaml:"host"`         // the host acted on (all but partition and heal); add_node: the new host's name
	Groups      [][]string    `yaml:"groups"`       // partition: two groups of host names ("client" = Headroom's side)
	VCPUs       float64       `yaml:"vcpus"`        // set_cpu
	Volume      string        `yaml:"volume"`       // set_volume: default the host's only volume
	IOPS        float64       `yaml:"iops"`         // set_volume; add_node: the new host's volume (default its peers')
	MiBps       float64       `yaml:"mibps"`        // set_volume
	NetworkMbit float64       `yaml:"network_mbit"` // set_link
	Type        string        `yaml:"type"`         // add_node: instance type ("" = the caller decides, e.g. the cluster's hosts' type)
}

// Actions lists the event actions, for error messages.
func Actions() []string {
	return []string{ActKill, ActStart, ActStop, ActContinue, ActLinkDown, ActLinkUp, ActPartition, ActHeal, ActSetCPU, ActSetVolume, ActSetLink, ActStallDisk, ActResumeDisk, ActAddNode, ActRemoveNode, ActPromote}
}

// CheckEvents validates events against the resolved hosts; measure is the
// measured phase's length (an event must fall inside it). It does not
// check add_node's instance type; CheckEventsWith does.
func CheckEvents(events []Event, hosts []HostConfig, measure time.Duration) error {
	return CheckEventsWith(events, hosts, nil, measure)
}

// CheckEventsWith validates events against the resolved hosts and the
// lab's catalog (nil: add_node's type and volume are not checked). Events
// are checked in the order they happen (by at, then as listed), so that an
// event may act on a host an earlier add_node brings up, and none on a
// host an earlier remove_node released. Errors name the field, as
// "events[2].host: ...".
func CheckEventsWith(events []Event, hosts []HostConfig, cat *Catalog, measure time.Duration) error {
	defined := map[string]HostConfig{}
	var names []string
	for _, h := range hosts {
		defined[h.Name] = h
		names = append(names, h.Name)
	}
	hostList := strings.Join(names, ", ")
	order := make([]int, len(events))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return events[order[a]].At < events[order[b]].At })
	present := maps.Clone(defined) // hosts up at the current event
	lastChange := map[string]int{} // host -> the add_node or remove_node that last named it
	absent := func(p string, i int, name string) error {
		if j, ok := lastChange[name]; ok && events[j].Action == ActRemoveNode {
			return fmt.Errorf("%s.host: %s is released by events[%d] at %v, before this event; act on it before it is removed", p, name, j, events[j].At)
		}
		for j, x := range events {
			if x.Action == ActAddNode && x.Host == name && j != i {
				return fmt.Errorf("%s.host: %s is added by events[%d] at %v, after this event at %v; an event acts on a host only once it is added", p, name, j, x.At, events[i].At)
			}
		}
		return fmt.Errorf("%s.host: %q is not a lab host; use one of %s, or a host an earlier add_node brings up", p, name, hostList)
	}
	for _, i := range order {
		e := events[i]
		p := fmt.Sprintf("events[%d]", i)
		if e.At < 0 || e.At >= measure {
			return fmt.Errorf("%s.at: %v is outside the measured phase (0 to %v); events happen at an offset into it", p, e.At, measure)
		}
		if !slices.Contains(Actions(), e.Action) {
			return fmt.Errorf("%s.action: %q is not an action; use one of %s", p, e.Action, strings.Join(Actions(), ", "))
		}
		if e.Type != "" && e.Action != ActAddNode {
			return fmt.Errorf("%s.type: only add_node takes an instance type; remove it", p)
		}
		switch e.Action {
		case ActAddNode:
			if j, ok := lastChange[e.Host]; ok && events[j].Action == ActAddNode {
				return fmt.Errorf("%s.host: %s is already added by events[%d] at %v; remove it first or give this host another name", p, e.Host, j, events[j].At)
			}
			hc, err := checkAddNode(e, defined, hosts, cat)
			if err != nil {
				return fmt.Errorf("%s.%v", p, err)
			}
			present[e.Host] = hc
			lastChange[e.Host] = i
			continue
		case ActRemoveNode:
			if _, ok := present[e.Host]; !ok {
				return absent(p, i, e.Host)
			}
			if e.VCPUs != 0 || e.Volume != "" || e.IOPS != 0 || e.MiBps != 0 || e.NetworkMbit != 0 || len(e.Groups) > 0 {
				return fmt.Errorf("%s.action: remove_node takes only host; remove the other fields", p)
			}
			delete(present, e.Host)
			lastChange[e.Host] = i
			continue
		}
		needsHost := e.Action != ActPartition && e.Action != ActHeal
		if needsHost {
			h, ok := present[e.Host]
			if !ok {
				return absent(p, i, e.Host)
			}
			if err := checkEventValues(e, h); err != nil {
				return fmt.Errorf("%s.%v", p, err)
			}
		} else if e.Host != "" {
			return fmt.Errorf("%s.host: %s acts on groups, not one host; remove host", p, e.Action)
		}
		if e.Action == ActPartition {
			if len(e.Groups) != 2 || len(e.Groups[0]) == 0 || len(e.Groups[1]) == 0 {
				return fmt.Errorf("%s.groups: a partition needs two non-empty groups of hosts, like [[client, app1], [db1]]", p)
			}
			in := map[string]int{}
			for g, group := range e.Groups {
				for _, n := range group {
					if _, ok := present[n]; !ok && n != ClientHost {
						return fmt.Errorf("%s.groups: %q is not a lab host at this event; use %s, a host an earlier add_node brings up, or %q", p, n, hostList, ClientHost)
					}
					if prev, dup := in[n]; dup && prev != g {
						return fmt.Errorf("%s.groups: %q is in both groups", p, n)
					}
					in[n] = g
				}
			}
		} else if len(e.Groups) > 0 {
			return fmt.Errorf("%s.groups: only partition takes groups; remove it", p)
		}
	}
	return nil
}

// checkAddNode checks an add_node event and returns the new host's
// configuration as far as it is known (its type may be left to the
// caller, which then decides its volume too).
func checkAddNode(e Event, defined map[string]HostConfig, hosts []HostConfig, cat *Catalog) (HostConfig, error) {
	if e.Host == "" {
		return HostConfig{}, fmt.Errorf("host: add_node needs the new host's name, like db4")
	}
	if !validHostName(e.Host) {
		return HostConfig{}, fmt.Errorf("host: %q must start with a letter and have at most 16 letters, digits or '-'", e.Host)
	}
	if _, ok := defined[e.Host]; ok {
		return HostConfig{}, fmt.Errorf("host: %s is a host of lab.hosts; add_node brings up a new host, so give it a name lab.hosts does not use", e.Host)
	}
	if e.VCPUs != 0 || e.Volume != "" || e.MiBps != 0 || e.NetworkMbit != 0 || len(e.Groups) > 0 {
		return HostConfig{}, fmt.Errorf("action: add_node takes host, type and iops; remove the other fields")
	}
	if e.IOPS < 0 {
		return HostConfig{}, fmt.Errorf("iops: must be positive (or left out), got %v", e.IOPS)
	}
	if cat == nil || e.Type == "" {
		hc := HostConfig{Name: e.Host, Type: e.Type}
		if v, ok := peerVolume(e.Type, hosts); ok {
			hc.Volumes = []VolumeConfig{v}
		}
		return hc, nil
	}
	return newHostConfig(NewHost{Name: e.Host, Type: e.Type, IOPS: e.IOPS}, hosts, nil, cat)
}

func checkEventValues(e Event, h HostConfig) error {
	switch e.Action {
	case ActSetCPU:
		if !(e.VCPUs > 0) {
			return fmt.Errorf("vcpus: set_cpu needs the new number of vCPUs, like 0.5")
		}
	case ActSetVolume:
		if len(h.Volumes) == 0 {
			return fmt.Errorf("host: %s has no volume to change", h.Name)
		}
		if e.Volume != "" && e.Volume != h.Volumes[0].Name {
			return fmt.Errorf("volume: %s has no volume %q; its volume is %q", h.Name, e.Volume, h.Volumes[0].Name)
		}
		if e.IOPS < 0 || e.MiBps < 0 || (e.IOPS == 0 && e.MiBps == 0) {
			return fmt.Errorf("iops: set_volume needs a new iops or mibps (or both), positive")
		}
	case ActStallDisk, ActResumeDisk:
		if len(h.Volumes) == 0 {
			return fmt.Errorf("host: %s has no volume to stall; give it one in lab.hosts[].volumes (the stall holds the volume's I/O)", h.Name)
		}
	case ActSetLink:
		if !(e.NetworkMbit > 0) {
			return fmt.Errorf("network_mbit: set_link needs the new bandwidth in Mbit/s, positive")
		}
	}
	if e.Action != ActSetCPU && e.VCPUs != 0 || e.Action != ActSetVolume && (e.IOPS != 0 || e.MiBps != 0 || e.Volume != "") ||
		e.Action != ActSetLink && e.NetworkMbit != 0 {
		return fmt.Errorf("action: %s does not take vcpus, volume, iops, mibps or network_mbit except set_cpu, set_volume and set_link respectively; remove the extra field", e.Action)
	}
	return nil
}
