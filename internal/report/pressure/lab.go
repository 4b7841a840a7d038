package pressure

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/store"
)

// EventLab is the kind of the store event a campaign records when it
// brings its lab up (internal/campaign): the hosts with their types,
// limits and prices.
const EventLab = "lab"

// LabRecord is the detail of a lab event.
type LabRecord struct {
	Time  time.Time       `json:"-"`
	Name  string          `json:"name"`
	Hosts []lab.HostState `json:"hosts"`
	// Catalog is the catalog the lab was made from, when the event holds
	// it; otherwise the shipped catalog stands in where its prices agree
	// with the recorded ones (CatalogFor).
	Catalog *lab.Catalog `json:"catalog,omitempty"`
}

// LabRecords decodes the store's lab events in time order.
func LabRecords(evs []store.Event) ([]LabRecord, error) {
	var out []LabRecord
	for _, e := range evs {
		if e.Kind != EventLab {
			continue
		}
		var r LabRecord
		if err := json.Unmarshal([]byte(e.Detail), &r); err != nil {
			return nil, fmt.Errorf("the lab event at %s is not a lab record (%v); it was written by another Headroom version", e.Time.Format(time.RFC3339), err)
		}
		r.Time = e.Time
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// Host returns the recorded host of that name.
func (r *LabRecord) Host(name string) (lab.HostState, bool) {
	for _, h := range r.Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return lab.HostState{}, false
}

// CatalogFor is the catalog whose types describe r: the recorded one, or
// the shipped one when every recorded host and volume has the shipped
// type's price (a spec's own catalog may have replaced a type). It says
// where the catalog came from; nil when none fits.
func CatalogFor(r *LabRecord) (*lab.Catalog, string) {
	if r.Catalog != nil {
		return r.Catalog, "the catalog recorded with the lab"
	}
	c := lab.DefaultCatalog()
	for _, h := range r.Hosts {
		it, ok := c.Instance(h.Type)
		if !ok || !samePrice(it.PricePerHour, h.PricePerHour) {
			return nil, ""
		}
		for _, v := range h.Volumes {
			vt, ok := c.Volume(v.Type)
			if !ok || !samePrice(vt.VolumeMonthlyPrice(v.SizeGiB, v.IOPS), v.MonthlyPrice) {
				return nil, ""
			}
		}
	}
	return c, "the shipped lab catalog (its prices match the recorded ones)"
}

func samePrice(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// VolumeModel is the analytical provisioned-IOPS model of a lab volume
// (seed-digest §4): the recorded size and provisioned IOPS, the instance
// type's volume connection as the instance cap and the volume type's
// bandwidth cap, from cat when known. Without a catalog the volume's
// recorded bandwidth cap (the smallest of the three) stands for the
// volume cap. A spec's lower mibps replaces the volume cap. It returns
// nil for a volume without provisioned IOPS (nothing is promised).
func VolumeModel(h lab.HostState, v lab.VolumeConfig, cat *lab.Catalog) (*esl.Analytical, error) {
	if !(v.IOPS > 0) {
		return nil, nil
	}
	p := esl.ProvisionedIOPSVolume{SizeGiB: v.SizeGiB, ProvisionedIOPS: v.IOPS, VolumeCapMiBPerS: v.MiBps}
	if cat != nil {
		if it, ok := cat.Instance(h.Type); ok {
			p.InstanceCapMiBPerS = it.VolumeMiBps
		}
		if vt, ok := cat.Volume(v.Type); ok {
			p.VolumeCapMiBPerS = vt.MaxMiBps
			p.MaxIOPS, p.MaxIOPSPerGiB = vt.MaxIOPS, vt.IOPSPerGiB
			if vt.IOPSPerGiB == 0 {
				p.MaxIOPSPerGiB = esl.DefaultMaxIOPSPerGiB
			}
		}
		// The spec's own cap, when lower than both.
		lowest := p.VolumeCapMiBPerS
		if p.InstanceCapMiBPerS > 0 && (lowest == 0 || p.InstanceCapMiBPerS < lowest) {
			lowest = p.InstanceCapMiBPerS
		}
		if v.MiBps > 0 && (lowest == 0 || v.MiBps < lowest-1e-9) {
			p.VolumeCapMiBPerS = v.MiBps
		}
	}
	name := fmt.Sprintf("%s/%s%s", h.Name, monitor.ResourceVolumePrefix, v.Name)
	m, err := esl.NewAnalytical(name, p)
	if err != nil {
		return nil, fmt.Errorf("the lab volume %s (%g IOPS, %g GiB) has no valid analytical model: %w", name, v.IOPS, v.SizeGiB, err)
	}
	return m, nil
}

// Lab-derived ESL qualities of a host's CPU and link, named like the
// monitor metrics they judge.
const (
	cpuQuality = esl.Quality(monitor.CPUUtilPct)
	rxQuality  = esl.Quality(monitor.NetRxBytes)
	txQuality  = esl.Quality(monitor.NetTxBytes)
)

// labModels are the ESL models a lab record gives for each host: the
// analytical model of its volume, its CPU (util_pct is already a share of
// the host's vCPUs, so the ESL is 100%) and its link (each direction at
// the link rate). The origin says what each is made from.
func labModels(r *LabRecord) (map[key]modelInfo, []string, error) {
	cat, catFrom := CatalogFor(r)
	out := map[key]modelInfo{}
	var notes []string
	for _, h := range r.Hosts {
		for _, v := range h.Volumes {
			m, err := VolumeModel(h, v, cat)
			if err != nil {
				return nil, nil, err
			}
			if m == nil {
				notes = append(notes, fmt.Sprintf("%s volume:%s has no provisioned IOPS, so no expected service level; it is not assessed", h.Name, v.Name))
				continue
			}
			origin := fmt.Sprintf("analytical, from the lab event: %s volume %s, %g GiB, %g IOPS, on a %s host", v.Type, v.Name, v.SizeGiB, v.IOPS, h.Type)
			if cat == nil {
				origin += " (no catalog: the recorded bandwidth cap stands for the volume's)"
			} else {
				origin += "; caps from " + catFrom
			}
			out[key{h.Name, monitor.ResourceVolumePrefix + v.Name}] = modelInfo{model: m, origin: origin}
		}
		if h.VCPUs > 0 {
			m, err := esl.NewSingleModel(h.Name+" vCPUs", map[esl.Quality]float64{cpuQuality: 100})
			if err != nil {
				return nil, nil, err
			}
			out[key{h.Name, monitor.ResourceCPU}] = modelInfo{model: m, origin: fmt.Sprintf("from the lab event: 100%% of the host's %g vCPU (%s)", h.VCPUs, h.Type)}
		}
		if h.NetworkMbit > 0 {
			rate := h.NetworkMbit * 1e6 / 8
			m, err := esl.NewSingleModel(h.Name+" link", map[esl.Quality]float64{rxQuality: rate, txQuality: rate})
			if err != nil {
				return nil, nil, err
			}
			out[key{h.Name, monitor.ResourceNetPrefix + "eth0"}] = modelInfo{model: m,
				origin: fmt.Sprintf("from the lab event: the %g Mbit/s link of a %s host, each direction", h.NetworkMbit, h.Type)}
		}
	}
	return out, notes, nil
}

// dataHosts are the hosts a cost comparison prices: those with a volume
// (the database's nodes), or all of them when none has one.
func dataHosts(r *LabRecord) []lab.HostState {
	var out []lab.HostState
	for _, h := range r.Hosts {
		if len(h.Volumes) > 0 {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return r.Hosts
	}
	return out
}

// describeHost is a host's configuration in a few words.
func describeHost(h lab.HostState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%g vCPU", h.Type, h.VCPUs)
	if h.NetworkMbit > 0 {
		fmt.Fprintf(&b, ", %g Mbit/s", h.NetworkMbit)
	}
	b.WriteString(")")
	for _, v := range h.Volumes {
		fmt.Fprintf(&b, " + %s %g GiB", v.Type, v.SizeGiB)
		if v.IOPS > 0 {
			fmt.Fprintf(&b, " at %g IOPS", v.IOPS)
		}
	}
	return b.String()
}
