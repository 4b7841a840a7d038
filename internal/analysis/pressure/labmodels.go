package pressure

import (
	"fmt"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// Lab-derived ESL qualities of a host's CPU and link, named like the
// monitor metrics they judge.
const (
	cpuQuality = esl.Quality(monitor.CPUUtilPct)
	rxQuality  = esl.Quality(monitor.NetRxBytes)
	txQuality  = esl.Quality(monitor.NetTxBytes)
)

// entriesInForce are the entries of a host's limit series in force at
// some time inside one of the windows, in time order.
func entriesInForce(series []results.HostLimits, windows []window) []results.HostLimits {
	var out []results.HostLimits
	for i, e := range series {
		end := time.Unix(1<<62, 0)
		if i+1 < len(series) {
			end = series[i+1].From
		}
		for _, w := range windows {
			if e.From.Before(w.to) && end.After(w.from) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// labTimelines are the ESL models the hosts' limits give each host
// resource of a lab over the windows assessed, one span per change of the
// limits (a set_volume, set_cpu or set_link event, and the undo after the
// run), merged where the model stays the same:
//
//   - each volume with provisioned IOPS the analytical provisioned-IOPS
//     model (esl.FromLabVolume) with the volume's limits in force and the
//     catalog's types; a volume without provisioned IOPS promises nothing
//     and is not assessed while it has none;
//   - cpu a single ESL of 100 for util_pct, which the lab monitor already
//     reports as a share of the host's vCPUs in force;
//   - net:eth0 the link rate, each direction (Mbit/s x 10^6 / 8 bytes/s).
//
// Without windows, every entry from the lab's start on counts. The notes say
// which volumes promise nothing.
func labTimelines(r *results.Results, l results.Lab, cat *results.Catalog, catFrom string, windows []window) (map[Key]Timeline, []string, error) {
	if len(windows) == 0 {
		windows = []window{{l.Up, time.Unix(1<<62, 0)}}
	}
	out := map[Key]Timeline{}
	var notes []string
	noted := map[Key]bool{}
	for _, h0 := range l.Hosts {
		entries := entriesInForce(r.HostLimitSeries(h0.Host), windows)
		if len(entries) == 0 {
			entries = []results.HostLimits{h0}
		}
		keys := map[Key]bool{}
		var perEntry []map[Key]Span
		for i, e := range entries {
			ms, err := entryModels(e, cat, catFrom, i == 0)
			if err != nil {
				return nil, nil, err
			}
			for _, v := range e.Volumes {
				k := Key{e.Host, monitor.ResourceVolumePrefix + v.Name}
				if _, ok := ms[k]; !ok && v.Stalled {
					notes = append(notes, fmt.Sprintf("%s volume:%s was stalled (stall_disk) from %s; those seconds are not assessed (the failures analysis judges them)", e.Host, v.Name, e.From.UTC().Format("15:04:05.000")))
					keys[k] = true
					continue
				}
				if _, ok := ms[k]; !ok && !noted[k] {
					noted[k] = true
					notes = append(notes, fmt.Sprintf("%s volume:%s has no provisioned IOPS, so no expected service level; it is not assessed", e.Host, v.Name))
				}
				keys[k] = true
			}
			for k := range ms {
				keys[k] = true
			}
			perEntry = append(perEntry, ms)
		}
		for k := range keys {
			var tl Timeline
			for i, ms := range perEntry {
				sp, ok := ms[k]
				if !ok {
					sp = Span{From: entries[i].From}
				}
				if n := len(tl); n > 0 && sameModel(tl[n-1].Model, sp.Model) {
					continue
				}
				tl = append(tl, sp)
			}
			if len(tl) == 1 {
				tl[0].From = time.Time{} // one model for the whole treatment
			}
			if len(tl) == 1 && tl[0].Model == nil {
				continue
			}
			out[k] = tl
		}
	}
	return out, notes, nil
}

// entryModels are the models one entry of a host's limits gives. The
// origin names the entry: the lab event for the limits the host came up
// with, else the change.
func entryModels(h results.HostLimits, cat *results.Catalog, catFrom string, first bool) (map[Key]Span, error) {
	from := "from the lab event"
	if !(first && (h.Cause == "" || h.Cause == "up")) {
		from = fmt.Sprintf("from the limits in force after %s at %s", causeOf(h), h.From.UTC().Format("15:04:05.000"))
	}
	out := map[Key]Span{}
	var it *results.InstanceType
	if t, ok := cat.Instance(h.Type); ok {
		it = &t
	}
	for _, v := range h.Volumes {
		var vt *results.VolumeType
		if t, ok := cat.VolumeType(v.Type); ok {
			vt = &t
		}
		m, err := esl.FromLabVolume(h.Host, v, it, vt)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		origin := fmt.Sprintf("analytical, %s: %s volume %s, %g GiB, %g IOPS, on a %s host", from, v.Type, v.Name, v.SizeGiB, v.IOPS, h.Type)
		if cat == nil {
			origin += " (no catalog: the recorded bandwidth cap stands for the volume's)"
		} else {
			origin += "; caps from " + catFrom
		}
		out[Key{h.Host, monitor.ResourceVolumePrefix + v.Name}] = Span{From: h.From, Model: m, Origin: origin}
	}
	if h.VCPUs > 0 {
		m, err := esl.NewSingleModel(h.Host+" vCPUs", map[esl.Quality]float64{cpuQuality: 100})
		if err != nil {
			return nil, err
		}
		out[Key{h.Host, monitor.ResourceCPU}] = Span{From: h.From, Model: m, Origin: fmt.Sprintf("%s: 100%% of the host's %g vCPU (%s)", from, h.VCPUs, h.Type)}
	}
	if h.NetworkMbit > 0 {
		rate := h.NetworkMbit * 1e6 / 8
		m, err := esl.NewSingleModel(h.Host+" link", map[esl.Quality]float64{rxQuality: rate, txQuality: rate})
		if err != nil {
			return nil, err
		}
		out[Key{h.Host, monitor.ResourceNetPrefix + "eth0"}] = Span{From: h.From, Model: m,
			Origin: fmt.Sprintf("%s: the %g Mbit/s link of a %s host, each direction", from, h.NetworkMbit, h.Type)}
	}
	return out, nil
}

func causeOf(h results.HostLimits) string {
	if h.Cause == "" {
		return "a change"
	}
	return h.Cause
}
