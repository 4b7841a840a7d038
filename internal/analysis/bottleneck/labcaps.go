package bottleneck

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// EventLab is the kind of the store event in which a campaign records the
// lab it ran in (its hosts with their limits), once per treatment.
const EventLab = "lab"

// labRecord is the part of a "lab" event's detail the capacities need: the
// lab hosts as recorded (docs/lab.md), each with its defined limits and the
// limits in force when it was recorded ("now").
type labRecord struct {
	Hosts []struct {
		Name        string  `json:"name"`
		NetworkMbit float64 `json:"network_mbit"`
		Volumes     []struct {
			Name  string  `json:"name"`
			IOPS  float64 `json:"iops"`
			MiBps float64 `json:"mibps"`
		} `json:"volumes"`
		Now *struct {
			NetworkMbit float64 `json:"network_mbit"`
			IOPS        float64 `json:"iops"`
			MiBps       float64 `json:"mibps"`
		} `json:"now"`
	} `json:"hosts"`
}

// LabCapacities reads the capacities of the lab hosts from a "lab" event's
// detail: each host's link rate gives the capacity of its "net:eth0"
// (bytes per second per direction = Mbit/s x 10^6 / 8; the monitor's byte
// counters and the link's shaper both count Ethernet frames), and its
// volume's provisioned IOPS and bandwidth the capacities of its
// "volume:NAME", per direction, because the lab limits reads and writes
// separately. A limit of 0 (unlimited) gives no capacity. CPU needs none:
// a lab host's "cpu" util_pct is already a share of its vCPU quota.
func LabCapacities(detail string) (Capacities, error) {
	var rec labRecord
	if err := json.Unmarshal([]byte(detail), &rec); err != nil {
		return Capacities{}, fmt.Errorf("bottleneck: the lab event's detail is not the lab record Headroom writes (%v); was the store written by another tool?", err)
	}
	caps := Capacities{Link: map[string]float64{}, IOPSPerDirection: map[string]float64{}, BandwidthPerDirection: map[string]float64{}}
	for _, h := range rec.Hosts {
		if h.Name == "" {
			continue
		}
		mbit := h.NetworkMbit
		var iops, mibps float64
		if len(h.Volumes) > 0 {
			iops, mibps = h.Volumes[0].IOPS, h.Volumes[0].MiBps
		}
		if h.Now != nil {
			// The limits in force when the lab was recorded: the defined
			// ones, unless a fault of an earlier session was still there.
			mbit, iops, mibps = h.Now.NetworkMbit, h.Now.IOPS, h.Now.MiBps
		}
		if mbit > 0 {
			caps.Link[ResourceID(h.Name, "net:eth0")] = mbit * 1e6 / 8
		}
		if len(h.Volumes) > 0 {
			id := ResourceID(h.Name, "volume:"+h.Volumes[0].Name)
			if iops > 0 {
				caps.IOPSPerDirection[id] = iops
			}
			if mibps > 0 {
				caps.BandwidthPerDirection[id] = mibps * (1 << 20)
			}
		}
	}
	return caps, nil
}

// CapacitiesAt returns the capacities of the lab recorded last at or
// before t (the lab a run starting at t ran in); empty capacities when the
// campaign had no lab.
func CapacitiesAt(events []store.Event, t time.Time) (Capacities, error) {
	var last *store.Event
	for i := range events {
		e := &events[i]
		if e.Kind == EventLab && !e.Time.After(t) && (last == nil || !e.Time.Before(last.Time)) {
			last = e
		}
	}
	if last == nil {
		return Capacities{}, nil
	}
	return LabCapacities(last.Detail)
}

// TreatmentCapacities returns the lab capacities for the runs of one
// treatment: those of the lab recorded before its first run.
func TreatmentCapacities(st *store.Store, treatment string) (Capacities, error) {
	runs, err := CompletedRuns(st, treatment)
	if err != nil || len(runs) == 0 {
		return Capacities{}, err
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Start.Before(runs[j].Start) })
	evs, err := st.Events(0)
	if err != nil {
		return Capacities{}, err
	}
	return CapacitiesAt(evs, runs[0].Start)
}
