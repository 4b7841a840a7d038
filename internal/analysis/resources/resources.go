// Package resources summarises what the monitored resources did during a
// run's measured window: per host, the mean and peak CPU utilisation, the
// busiest disk and its utilisation, and the network throughput. It is a pure
// function of samples read from the results store.
package resources

import (
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Host is one host's summary over a window.
type Host struct {
	Host        string
	CPUMean     float64 // util_pct of the whole-host "cpu" resource; NaN-free: 0 with CPUSamples = 0
	CPUMax      float64
	CPUSamples  int
	Disk        string  // busiest disk by mean utilisation ("" when none was sampled)
	DiskUtil    float64 // its mean util_pct
	DiskUtilMax float64
	NetBytes    float64 // mean of rx+tx bytes per second summed over interfaces
	NetSamples  int     // intervals with network samples (0: not sampled)
}

// Summarize returns one Host per host with samples in [from, to), sorted by
// host name. A sample belongs to the window when its interval starts in it.
func Summarize(samples []monitor.Sample, from, to time.Time) []Host {
	type acc struct {
		sum, max float64
		n        int
	}
	type hostAcc struct {
		cpu   acc
		disks map[string]*acc
		net   map[int64]float64 // interval start -> rx+tx summed over interfaces
	}
	hosts := map[string]*hostAcc{}
	for _, s := range samples {
		if s.Start.Before(from) || !s.Start.Before(to) {
			continue
		}
		h := hosts[s.Host]
		if h == nil {
			h = &hostAcc{disks: map[string]*acc{}, net: map[int64]float64{}}
			hosts[s.Host] = h
		}
		add := func(a *acc, v float64) {
			a.sum += v
			a.n++
			if a.n == 1 || v > a.max {
				a.max = v
			}
		}
		switch {
		case s.Resource == monitor.ResourceCPU && s.Metric == monitor.CPUUtilPct:
			add(&h.cpu, s.Value)
		case strings.HasPrefix(s.Resource, monitor.ResourceDiskPrefix) && s.Metric == monitor.DiskUtilPct:
			d := strings.TrimPrefix(s.Resource, monitor.ResourceDiskPrefix)
			if h.disks[d] == nil {
				h.disks[d] = &acc{}
			}
			add(h.disks[d], s.Value)
		case strings.HasPrefix(s.Resource, monitor.ResourceNetPrefix) && (s.Metric == monitor.NetRxBytes || s.Metric == monitor.NetTxBytes):
			h.net[s.Start.UnixNano()] += s.Value
		}
	}
	out := make([]Host, 0, len(hosts))
	for name, h := range hosts {
		r := Host{Host: name, CPUSamples: h.cpu.n, CPUMax: h.cpu.max}
		if h.cpu.n > 0 {
			r.CPUMean = h.cpu.sum / float64(h.cpu.n)
		}
		// Busiest disk: highest mean utilisation; ties go to the name that
		// sorts first, so the choice is stable.
		names := make([]string, 0, len(h.disks))
		for d := range h.disks {
			names = append(names, d)
		}
		sort.Strings(names)
		for _, d := range names {
			a := h.disks[d]
			if mean := a.sum / float64(a.n); r.Disk == "" || mean > r.DiskUtil {
				r.Disk, r.DiskUtil, r.DiskUtilMax = d, mean, a.max
			}
		}
		if len(h.net) > 0 {
			var sum float64
			for _, v := range h.net {
				sum += v
			}
			r.NetBytes = sum / float64(len(h.net))
			r.NetSamples = len(h.net)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}
