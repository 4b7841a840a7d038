package regions

import (
	"math"
	"sort"

	"github.com/headroom-dev/headroom/internal/analysis/resources"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// HostRegion is one region's monitored hosts over a run's measured window.
type HostRegion struct {
	Name  string   // the region label, or NoRegion
	Hosts []string // sorted
	// CPUMean is the mean over the region's hosts of each host's mean CPU
	// utilisation (percent of its own processors: a lab host's vCPUs), so
	// a region of one busy and one idle host reads half busy. NaN when no
	// host of the region had CPU samples.
	CPUMean float64
	// CPUMax is the highest one-interval CPU utilisation of any host of
	// the region (NaN as CPUMean).
	CPUMax float64
	// NetBytes is the region's network throughput: the sum over its hosts
	// of each host's mean rx+tx bytes per second. NaN when no host of the
	// region had network samples.
	NetBytes float64
}

// HostResult is one run's monitored hosts grouped by region.
type HostResult struct {
	Run     store.Run
	Regions []HostRegion // by name, NoRegion last
}

// Split reports whether the run's hosts with a region label span two or
// more regions: only then is there something to break down.
func (r HostResult) Split() bool {
	n := 0
	for _, g := range r.Regions {
		if g.Name != NoRegion {
			n++
		}
	}
	return n >= 2
}

// ByHostRegion groups a run's host summaries (resources.Summarize over the
// measured window) by the hosts' regions; of maps a host to its region,
// and hosts absent from it (the machine Headroom runs on, hosts without a
// label) form NoRegion.
func ByHostRegion(run store.Run, hosts []resources.Host, of map[string]string) HostResult {
	type acc struct {
		g                 HostRegion
		cpuSum, cpuMax    float64
		cpuHosts, netHost int
		net               float64
	}
	byName := map[string]*acc{}
	for _, h := range hosts {
		name := of[h.Host]
		if name == "" {
			name = NoRegion
		}
		a := byName[name]
		if a == nil {
			a = &acc{g: HostRegion{Name: name}}
			byName[name] = a
		}
		a.g.Hosts = append(a.g.Hosts, h.Host)
		if h.CPUSamples > 0 {
			a.cpuSum += h.CPUMean
			if a.cpuHosts == 0 || h.CPUMax > a.cpuMax {
				a.cpuMax = h.CPUMax
			}
			a.cpuHosts++
		}
		if h.NetSamples > 0 {
			a.net += h.NetBytes
			a.netHost++
		}
	}
	res := HostResult{Run: run}
	for _, a := range byName {
		g := a.g
		sort.Strings(g.Hosts)
		g.CPUMean, g.CPUMax, g.NetBytes = math.NaN(), math.NaN(), math.NaN()
		if a.cpuHosts > 0 {
			g.CPUMean, g.CPUMax = a.cpuSum/float64(a.cpuHosts), a.cpuMax
		}
		if a.netHost > 0 {
			g.NetBytes = a.net
		}
		res.Regions = append(res.Regions, g)
	}
	sortRegions(res.Regions, func(g HostRegion) string { return g.Name })
	return res
}

// sortRegions orders groups by name with NoRegion last.
func sortRegions[T any](gs []T, name func(T) string) {
	sort.Slice(gs, func(i, j int) bool {
		a, b := name(gs[i]), name(gs[j])
		if (a == NoRegion) != (b == NoRegion) {
			return b == NoRegion
		}
		return a < b
	})
}

// HostsFromResults groups every completed run's monitored hosts by region
// (results.AllCompletedRuns: a plan slot's last completed run), in run
// order. It returns nothing when no host carries a region label.
func HostsFromResults(r *results.Results) ([]HostResult, error) {
	of, err := r.HostRegions()
	if err != nil || len(of) == 0 {
		return nil, err
	}
	runs := r.AllCompletedRuns()
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID })
	var out []HostResult
	for _, run := range runs {
		from, to := run.Summary.MeasureStart, run.Summary.MeasureEnd
		if from.IsZero() || !to.After(from) {
			continue
		}
		samples, err := r.Samples(results.SampleFilter{RunID: run.ID})
		if err != nil {
			return nil, err
		}
		hosts := resources.Summarize(samples, from, to)
		if len(hosts) == 0 {
			continue
		}
		out = append(out, ByHostRegion(run, hosts, of))
	}
	return out, nil
}
