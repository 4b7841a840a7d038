package results

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// Event kinds the lab writes (internal/campaign), read here to know the
// labs of a campaign and, in files without the fact tables, to rebuild the
// hosts' limit series.
const (
	EventLab       = "lab"
	EventFault     = "fault"
	EventFaultUndo = "fault_undo"
)

// labEvent is the detail of a "lab" event: the lab's state as it came up.
type labEvent struct {
	Name        string         `json:"name"`
	Hosts       []labHostState `json:"hosts"`
	Catalog     *Catalog       `json:"catalog"`
	ComputeUnit *ComputeUnit   `json:"compute_unit"`
}

type labHostState struct {
	Name         string        `json:"name"`
	Type         string        `json:"type"`
	VCPUs        float64       `json:"vcpus"`
	MemoryBytes  int64         `json:"memory_bytes"`
	NetworkMbit  float64       `json:"network_mbit"`
	PricePerHour float64       `json:"price_per_hour"`
	Volumes      []VolumeLimit `json:"volumes"`
	Addr         string        `json:"addr"`
}

// labsOf reads the labs from the "lab" events, in time order. A lab event
// that does not decode is skipped: it cannot be priced or described.
func labsOf(evs []store.Event) []Lab {
	var out []Lab
	for _, e := range evs {
		if e.Kind != EventLab {
			continue
		}
		var le labEvent
		if json.Unmarshal([]byte(e.Detail), &le) != nil {
			continue
		}
		l := Lab{Name: le.Name, Up: e.Time, Catalog: le.Catalog, ComputeUnit: le.ComputeUnit}
		for _, h := range le.Hosts {
			l.Hosts = append(l.Hosts, h.limits(le.Name, e.Time))
		}
		out = append(out, l)
	}
	return out
}

func (h labHostState) limits(lab string, at time.Time) HostLimits {
	return HostLimits{Host: h.Name, From: at, Lab: lab, Type: h.Type, Address: h.Addr, VCPUs: h.VCPUs,
		MemoryBytes: h.MemoryBytes, NetworkMbit: h.NetworkMbit, PricePerHour: h.PricePerHour,
		Volumes: append([]VolumeLimit(nil), h.Volumes...), Cause: "up"}
}

// faultEvent is the detail of a "fault" event.
type faultEvent struct {
	Action string `json:"action"`
	Host   string `json:"host"`
	Detail string `json:"detail"`
	Error  string `json:"error"`
}

// legacyHostLimits rebuilds the hosts' limit series of a file written
// before the host_limit table: each lab's hosts as they came up, each
// applied limit change (set_cpu, set_volume, set_link, stop, continue,
// link_down, link_up) from the moment it happened, and the defined limits
// back after each run's undo.
func legacyHostLimits(labs []Lab, evs []store.Event) []HostLimits {
	var out []HostLimits
	cur := map[string]HostLimits{}     // host -> limits in force
	defined := map[string]HostLimits{} // host -> limits of the lab that is up
	li := 0
	for _, e := range evs {
		for li < len(labs) && !labs[li].Up.After(e.Time) {
			for _, h := range labs[li].Hosts {
				cur[h.Host], defined[h.Host] = h, h
				out = append(out, h)
			}
			li++
		}
		switch e.Kind {
		case EventFault:
			var f faultEvent
			if json.Unmarshal([]byte(e.Detail), &f) != nil || f.Error != "" {
				continue
			}
			h, ok := cur[f.Host]
			if !ok {
				continue
			}
			if applyLegacyFault(&h, f) {
				h.From, h.Cause = e.Time, f.Action
				h.Volumes = append([]VolumeLimit(nil), h.Volumes...)
				cur[f.Host] = h
				out = append(out, h)
			}
		case EventFaultUndo:
			for name, h := range cur {
				d := defined[name]
				if limitsEqual(h, d) {
					continue
				}
				d.From, d.Cause = e.Time, "undo"
				cur[name] = d
				out = append(out, d)
			}
		}
	}
	for ; li < len(labs); li++ {
		out = append(out, labs[li].Hosts...)
	}
	return out
}

// applyLegacyFault changes h as the fault did, reading the values from the
// fault's detail text as schema-1 Headroom wrote it.
func applyLegacyFault(h *HostLimits, f faultEvent) bool {
	rest := strings.TrimPrefix(f.Detail, f.Host)
	switch f.Action {
	case "set_cpu":
		var v float64
		if _, err := fmt.Sscanf(rest, ": %g vCPUs", &v); err != nil {
			return false
		}
		h.VCPUs = v
	case "set_volume":
		var iops, mibps float64
		if _, err := fmt.Sscanf(rest, " volume: iops %g, MiB/s %g", &iops, &mibps); err != nil {
			return false
		}
		if len(h.Volumes) == 0 {
			return false
		}
		h.Volumes = append([]VolumeLimit(nil), h.Volumes...)
		// The lab keeps a limit given as 0 as it was (lab.SetVolume).
		if iops > 0 {
			h.Volumes[0].IOPS = iops
		}
		if mibps > 0 {
			h.Volumes[0].MiBps = mibps
		}
	case "set_link":
		var v float64
		if _, err := fmt.Sscanf(rest, " link: %g Mbit/s", &v); err != nil {
			return false
		}
		h.NetworkMbit = v
	case "stop":
		h.Stopped = true
	case "continue":
		h.Stopped = false
	case "link_down":
		h.LinkDown = true
	case "link_up":
		h.LinkDown = false
	default:
		return false
	}
	return true
}

func limitsEqual(a, b HostLimits) bool {
	if a.VCPUs != b.VCPUs || a.NetworkMbit != b.NetworkMbit || a.MemoryBytes != b.MemoryBytes ||
		a.Stopped != b.Stopped || a.LinkDown != b.LinkDown || len(a.Volumes) != len(b.Volumes) {
		return false
	}
	for i := range a.Volumes {
		if a.Volumes[i] != b.Volumes[i] {
			return false
		}
	}
	return true
}
