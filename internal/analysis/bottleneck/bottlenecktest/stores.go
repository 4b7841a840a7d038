// Package bottlenecktest writes results stores whose bottlenecks are
// known by design, for the tests of the bottleneck analysis and of its
// report. The stores are written as a campaign writes them: treatment
// facts, the lab hosts' limits, a "lab" event per treatment, runs with
// intervals and samples.
package bottlenecktest

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// T0 is when the synthetic campaigns start.
var T0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// slotsPerTreatment spaces the treatments' plan slots as a campaign does.
const slotsPerTreatment = 100_000

// TwoTiers writes a campaign of two treatments, one application server
// (a1) or two (a2) in front of a database host db1 with 0.5 vCPU, swept
// over 10, 20, 30 and 40 req/s with two repetitions of 10 s, SLO p95 ≤
// 100 ms, links of 50 Mbit/s (6.25e6 bytes/s), and the maps' axes "DB
// vCPUs" (0.5 in both) and "app servers" (1 and 2). The causes:
//
//   - a1: app's CPU runs at 30, 70, 98 and 100% at levels 10 to 40 (one
//     percentage point apart in the two repetitions), the database's at a
//     quarter of that; at 40 half the requests take 500 ms. The single
//     bottleneck at 30 and 40 is app/cpu, and the sweep's intervention
//     point is 40.
//   - a2: two application servers at half that each; the database's CPU
//     runs at 2.5 x level percent, saturated at 40 (db1/cpu).
//   - the machine "vm" is busy at 100% everywhere: outside the hosts the
//     analysis judges (analysis.bottleneck.hosts).
//
// Throughput is 10, 20, 30 and 31 ok/s (a1), 10, 20, 30 and 35 (a2).
func TwoTiers(t testing.TB) *results.Results {
	t.Helper()
	st := resultstest.Create(t, "", store.Campaign{Name: "syn", CreatedAt: T0})
	must := resultstest.Must(t)
	axes := &results.BottleneckMap{X: results.MapAxis{Path: "lab.hosts[1].vcpus", Label: "DB vCPUs"},
		Y: results.MapAxis{Path: "lab.hosts[0].count", Label: "app servers"}}
	start := T0
	levels := []float64{10, 20, 30, 40}
	appUtil := []float64{30, 70, 98, 100}
	for ti, tr := range []string{"a1", "a2"} {
		apps := []string{"app"}
		if tr == "a2" {
			apps = []string{"app1", "app2"}
		}
		hosts := append(append([]string(nil), apps...), "db1")
		facts := results.Treatment{Name: tr, Index: ti,
			Load:     results.Load{Model: "open", Arrival: "poisson", Levels: levels, Repetitions: 2, Measure: 10 * time.Second, Interval: time.Second},
			SLO:      &results.SLO{Percentile: 95, Threshold: 100 * time.Millisecond},
			Workload: results.Workload{Kind: "ycsb", YCSB: "c", Mix: map[string]float64{"read": 1}},
			Target:   results.Target{Type: "null", InProcess: true},
			Analysis: results.Analysis{Bottleneck: results.Bottleneck{Hosts: []string{"app", "app1", "app2", "db1"}, Map: axes}},
			Lab:      &results.LabFacts{Name: "syn", Hosts: hosts},
			Numbers:  map[string]float64{axes.X.Path: 0.5, axes.Y.Path: float64(len(apps))}}
		if tr == "a2" {
			facts.Set = []results.Setting{{Path: axes.Y.Path, Value: "2"}}
		}
		row, err := facts.Row()
		must(err)
		must(st.PutTreatment(row))
		var limits []results.HostLimits
		for _, h := range hosts {
			vcpus := 1.0
			if h == "db1" {
				vcpus = 0.5
			}
			limits = append(limits, results.HostLimits{Host: h, From: start, Lab: "syn", Type: "small", VCPUs: vcpus, NetworkMbit: 50, Cause: "up"})
		}
		must(st.AddEvent(store.Event{Time: start, Kind: results.EventLab, Detail: LabEvent("syn", limits...)}))
		must(AddLimits(st, limits...))
		start = start.Add(time.Second)
		for li, level := range levels {
			for rep := 1; rep <= 2; rep++ {
				slot := ti*slotsPerTreatment + li*2 + rep - 1
				id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: tr, Model: "open", LevelIndex: li, Level: level, Repetition: rep, Start: start})
				must(err)
				h := store.NewHistogram()
				for i := range 100 {
					v := int64(10_000)
					if level == 40 && i%2 == 0 {
						v = 500_000
					}
					_ = h.RecordValue(v)
				}
				must(st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: start, Duration: 10 * time.Second, Count: 100, Hist: h}}))
				noise := float64(2*rep - 3) // -1 or +1
				var samples []monitor.Sample
				add := func(host, res, metric string, v float64, at time.Time) {
					samples = append(samples, monitor.Sample{Host: host, Resource: res, Metric: metric, Start: at, Period: time.Second, Value: v, Source: monitor.SourceSampled})
				}
				for sec := range 10 {
					at := start.Add(time.Duration(sec) * time.Second)
					u := math.Min(100, appUtil[li]+noise)
					if level == 40 {
						u = 100
					}
					db := u / 4
					for _, a := range apps {
						if tr == "a2" {
							add(a, "cpu", monitor.CPUUtilPct, u/2, at)
						} else {
							add(a, "cpu", monitor.CPUUtilPct, u, at)
						}
						add(a, "net:eth0", monitor.NetTxBytes, 1e4*level, at)
					}
					if tr == "a2" {
						db = math.Min(100, 2.5*level+noise)
					}
					add("db1", "cpu", monitor.CPUUtilPct, db, at)
					add("vm", "cpu", monitor.CPUUtilPct, 100, at)
				}
				must(st.AddSamples(id, samples))
				thr := level
				if level == 40 {
					thr = map[string]float64{"a1": 31, "a2": 35}[tr]
				}
				end := start.Add(10 * time.Second)
				must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{MeasureStart: start, MeasureEnd: end, MeasureSecs: 10, Completed: 100, Throughput: thr}))
				start = end.Add(time.Second)
			}
		}
	}
	r, err := results.New(st)
	must(err)
	return r
}

// OneRun is a campaign of the first schema (its settings come from the
// stored Spec text, there are no fact tables) of one run at 10 req/s
// starting at T0, during whose measured Seconds the host Host ran at 99%
// CPU while the run served Throughput ok/s.
type OneRun struct {
	Name, Spec, Host string
	Seconds          int
	Throughput       float64
}

// Write writes the campaign into the store results.db in dir.
func (c OneRun) Write(t testing.TB, dir string) *results.Results {
	t.Helper()
	st := resultstest.Create(t, dir, store.Campaign{Name: c.Name, SpecYAML: c.Spec, CreatedAt: T0})
	must := resultstest.Must(t)
	id, err := st.StartRun(store.Run{Model: "open", Level: 10, Repetition: 1, Start: T0})
	must(err)
	var ss []monitor.Sample
	for i := range c.Seconds {
		ss = append(ss, monitor.Sample{Host: c.Host, Resource: "cpu", Metric: monitor.CPUUtilPct, Start: T0.Add(time.Duration(i) * time.Second),
			Period: time.Second, Value: 99, Source: monitor.SourceSampled})
	}
	must(st.AddSamples(id, ss))
	end := T0.Add(time.Duration(c.Seconds) * time.Second)
	must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{MeasureStart: T0, MeasureEnd: end, MeasureSecs: float64(c.Seconds), Throughput: c.Throughput}))
	r, err := results.New(st)
	must(err)
	return r
}

// NoMapNoSLO is a OneRun campaign without treatments, so without maps
// though its spec asks for one, and without an SLO, so without an
// intervention analysis: host h at 99% CPU for 1 s.
func NoMapNoSLO(t testing.TB) *results.Results {
	return OneRun{Name: "x", Host: "h", Seconds: 1,
		Spec: "name: x\ntarget: {type: null}\nworkload: {ycsb: c}\nload: {model: open, rates: [10]}\nanalysis: {bottleneck: {map: {x: {path: seed}, y: {path: repetitions}}}}\n"}.Write(t, "")
}

// LabEvent is the detail of a "lab" event recording hosts as they came up
// (the part of it the results model reads).
func LabEvent(lab string, hosts ...results.HostLimits) string {
	var hs []string
	for _, h := range hosts {
		vols := "null"
		if len(h.Volumes) > 0 {
			var vs []string
			for _, v := range h.Volumes {
				vs = append(vs, fmt.Sprintf(`{"name":%q,"type":%q,"iops":%g,"mibps":%g}`, v.Name, v.Type, v.IOPS, v.MiBps))
			}
			vols = "[" + strings.Join(vs, ",") + "]"
		}
		hs = append(hs, fmt.Sprintf(`{"name":%q,"type":%q,"vcpus":%g,"network_mbit":%g,"volumes":%s}`, h.Host, h.Type, h.VCPUs, h.NetworkMbit, vols))
	}
	return fmt.Sprintf(`{"name":%q,"hosts":[%s]}`, lab, strings.Join(hs, ","))
}

// AddLimits appends hosts' limits to the store's limit series.
func AddLimits(st *store.Store, limits ...results.HostLimits) error {
	var rows []store.HostLimitRow
	for _, hl := range limits {
		row, err := hl.Row()
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	return st.AddHostLimits(rows)
}
