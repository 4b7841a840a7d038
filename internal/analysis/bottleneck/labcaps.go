package bottleneck

import (
	"sort"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
)

// HostCapacities are the capacities that hosts' limits give (docs/lab.md):
// each host's link rate gives the capacity of its "net:eth0" (bytes per
// second per direction = Mbit/s x 10^6 / 8; the monitor's byte counters
// and the link's shaper both count Ethernet frames), and its first
// volume's provisioned IOPS and bandwidth the capacities of its
// "volume:NAME": one budget each for reads and writes together, the IOPS
// in normalized operations of 256 KiB, as the lab enforces them
// (internal/lab, iobudget.go) and the pressure analysis judges them. A
// limit of 0 (unlimited) gives no capacity, and neither does a stalled
// volume (stall_disk: it serves nothing whatever its limits, so its
// seconds are the failures analysis's, not a utilisation). CPU needs none:
// a lab host's "cpu" util_pct is already a share of the vCPU quota in
// force when it was sampled (the lab's monitor divides by it).
func HostCapacities(hosts []results.HostLimits) Capacities {
	caps := Capacities{Link: map[string]float64{}, NormalizedIOPS: map[string]float64{}, Bandwidth: map[string]float64{}}
	for _, h := range hosts {
		if h.Host == "" {
			continue
		}
		if h.NetworkMbit > 0 {
			caps.Link[ResourceID(h.Host, "net:eth0")] = h.NetworkMbit * 1e6 / 8
		}
		if v, ok := h.Volume(""); ok && !v.Stalled {
			id := ResourceID(h.Host, "volume:"+v.Name)
			if v.IOPS > 0 {
				caps.NormalizedIOPS[id] = v.IOPS
			}
			if v.MiBps > 0 {
				caps.Bandwidth[id] = v.MiBps * (1 << 20)
			}
		}
	}
	return caps
}

// RunCapacities is the capacities of the hosts over [from, to) as their
// limits were in force: those at from, then a step at every change of a
// host's limits inside the window (a set_volume, set_cpu or set_link
// event), from the moment it happened. The hosts are those of the lab
// that was up when run started (every host with limits when there was
// none); the first step also holds before from, so that a sample that
// began just before the window is judged by the limits of its start.
func RunCapacities(r *results.Results, run results.Run, from, to time.Time) CapacitySchedule {
	hosts := runHosts(r, run.Start)
	if len(hosts) == 0 {
		return nil
	}
	at := func(t time.Time) []results.HostLimits {
		var out []results.HostLimits
		for _, h := range hosts {
			if hl, ok := r.HostLimits(h, t); ok {
				out = append(out, hl)
			}
		}
		return out
	}
	sched := CapacitySchedule{{Caps: HostCapacities(at(from))}}
	var changes []time.Time
	for _, h := range hosts {
		for _, hl := range r.HostLimitSeries(h) {
			if hl.From.After(from) && hl.From.Before(to) {
				changes = append(changes, hl.From)
			}
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Before(changes[j]) })
	for i, t := range changes {
		if i > 0 && t.Equal(changes[i-1]) {
			continue
		}
		sched = append(sched, CapacityStep{From: t, Caps: HostCapacities(at(t))})
	}
	return sched
}

// runHosts are the hosts whose limits count for a run starting at t: the
// hosts of the lab up at t, i.e. whose limits in force at t were recorded
// when that lab came up or later (a host of an earlier treatment's lab
// keeps its last entry but is gone); every host with limits in force when
// no lab was up.
func runHosts(r *results.Results, t time.Time) []string {
	lab, labUp := r.LabAt(t)
	var out []string
	for _, h := range r.HostNames() {
		hl, ok := r.HostLimits(h, t)
		if !ok || labUp && hl.From.Before(lab.Up) {
			continue
		}
		out = append(out, h)
	}
	return out
}
