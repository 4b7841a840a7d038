package regions

import (
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/resources"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/store"
)

// Four hosts over a ten-second measured window, with a warm-up second
// before it whose samples (all at 100% and 1 GB/s) must not count:
//   - h1 (eu): CPU alternating 20/40 (mean 30, peak 40), eth0 1000 rx +
//     500 tx and eth1 100 rx bytes/s (1600 B/s);
//   - h2 (eu): CPU 70, eth0 2000 rx bytes/s;
//   - h3 (us): CPU 90 for five seconds then 10 (mean 50, peak 90), no
//     network samples;
//   - machine (no label): CPU 5.
//
// By hand: eu = hosts h1, h2, CPU mean (30+70)/2 = 50, peak 70, network
// 1600+2000 = 3600 B/s; us = h3, CPU 50, peak 90, network not sampled;
// (no region) = machine, CPU 5.
func TestHostsByRegion(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from, to := t0, t0.Add(10*time.Second)
	var ss []monitor.Sample
	add := func(host, res, metric string, sec int, v float64) {
		ss = append(ss, monitor.Sample{Host: host, Resource: res, Metric: metric,
			Start: t0.Add(time.Duration(sec) * time.Second), Period: time.Second, Value: v, Source: monitor.SourceSampled})
	}
	for _, h := range []string{"h1", "h2", "h3", "machine"} {
		add(h, monitor.ResourceCPU, monitor.CPUUtilPct, -1, 100)
		add(h, "net:eth0", monitor.NetRxBytes, -1, 1e9)
	}
	for sec := 0; sec < 10; sec++ {
		add("h1", monitor.ResourceCPU, monitor.CPUUtilPct, sec, float64(20+20*(sec%2)))
		add("h1", "net:eth0", monitor.NetRxBytes, sec, 1000)
		add("h1", "net:eth0", monitor.NetTxBytes, sec, 500)
		add("h1", "net:eth1", monitor.NetRxBytes, sec, 100)
		add("h2", monitor.ResourceCPU, monitor.CPUUtilPct, sec, 70)
		add("h2", "net:eth0", monitor.NetRxBytes, sec, 2000)
		cpu3 := 90.0
		if sec >= 5 {
			cpu3 = 10
		}
		add("h3", monitor.ResourceCPU, monitor.CPUUtilPct, sec, cpu3)
		add("machine", monitor.ResourceCPU, monitor.CPUUtilPct, sec, 5)
	}
	// h3 had network samples only in the warm-up second; drop them so
	// that the window holds none.
	kept := ss[:0]
	for _, s := range ss {
		if !(s.Host == "h3" && s.Resource == "net:eth0") {
			kept = append(kept, s)
		}
	}
	run := store.Run{ID: 3}
	got := ByHostRegion(run, resources.Summarize(kept, from, to), map[string]string{"h1": "eu", "h2": "eu", "h3": "us"})
	nan := math.NaN()
	want := []HostRegion{
		{Name: "eu", Hosts: []string{"h1", "h2"}, CPUMean: 50, CPUMax: 70, NetBytes: 3600},
		{Name: "us", Hosts: []string{"h3"}, CPUMean: 50, CPUMax: 90, NetBytes: nan},
		{Name: NoRegion, Hosts: []string{"machine"}, CPUMean: 5, CPUMax: 5, NetBytes: nan},
	}
	if !got.Split() {
		t.Error("hosts in eu and us: Split() = false")
	}
	if len(got.Regions) != len(want) {
		t.Fatalf("regions %+v, want %+v", got.Regions, want)
	}
	same := func(a, b float64) bool { return (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < 1e-9 }
	for i, w := range want {
		g := got.Regions[i]
		if g.Name != w.Name || len(g.Hosts) != len(w.Hosts) || !same(g.CPUMean, w.CPUMean) || !same(g.CPUMax, w.CPUMax) || !same(g.NetBytes, w.NetBytes) {
			t.Errorf("region %d: %+v, want %+v", i, g, w)
			continue
		}
		for j := range w.Hosts {
			if g.Hosts[j] != w.Hosts[j] {
				t.Errorf("region %s hosts %v, want %v", g.Name, g.Hosts, w.Hosts)
			}
		}
	}
}

// One labelled region and unlabelled hosts: nothing to break down.
func TestHostsOfOneRegionDoNotSplit(t *testing.T) {
	hosts := []resources.Host{{Host: "a", CPUSamples: 1, CPUMean: 10, CPUMax: 10}, {Host: "b"}, {Host: "machine"}}
	got := ByHostRegion(store.Run{ID: 1}, hosts, map[string]string{"a": "eu", "b": "eu"})
	if got.Split() {
		t.Errorf("one region and unlabelled hosts split: %+v", got.Regions)
	}
	if len(got.Regions) != 2 || got.Regions[0].Name != "eu" || !math.IsNaN(got.Regions[1].NetBytes) {
		t.Errorf("regions %+v, want eu then %s", got.Regions, NoRegion)
	}
}
