package resultstest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// ClusterLevel is one load level of a designed cluster treatment: one
// completed 10 s run whose requests succeed at Throughput per second, half
// of them taking LatA and half LatB (so the level's response times have
// mean (LatA+LatB)/2 and standard deviation |LatA-LatB|/2).
type ClusterLevel struct {
	Level, Throughput float64
	LatA, LatB        time.Duration
}

// ClusterTreatment is a designed treatment whose target is a managed
// cluster of Nodes lab hosts of one instance type (with no lab when Type
// is ""), measured open loop at Levels.
type ClusterTreatment struct {
	Name   string
	Nodes  int
	Type   string
	VCPUs  float64 // per node
	Price  float64 // per node-hour
	Levels []ClusterLevel
	Events []results.ScheduledEvent // the spec's events: section
}

// ClusterStore writes a campaign of cluster treatments with the fact
// tables as the campaign runner writes them: each treatment's facts (its
// cluster, its lab hosts, slo), then its lab coming up (hosts
// <name>-n1, <name>-n2, ...), then its runs one after another.
func ClusterStore(t testing.TB, name string, slo *results.SLO, ts []ClusterTreatment) *store.Store {
	t.Helper()
	now := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	st := Create(t, "", store.Campaign{Name: name, SpecFile: name + ".yaml", Seed: 1, ToolVersion: "test", CreatedAt: now})
	must := Must(t)
	slot := 0
	for ti, ct := range ts {
		var levels []float64
		for _, l := range ct.Levels {
			levels = append(levels, l.Level)
		}
		tr := results.Treatment{Name: ct.Name, Index: ti, SLO: slo,
			Load:   results.Load{Model: "open", Levels: levels, Repetitions: 1, Measure: 10 * time.Second, Interval: 10 * time.Second},
			Target: results.Target{Type: "cassandra", Managed: true, Cluster: &results.Cluster{Nodes: ct.Nodes}}, Events: ct.Events}
		if ct.Type != "" {
			tr.Target.Cluster.HostPrefix = ct.Name + "-n"
		}
		var hosts []map[string]any
		for i := range ct.Nodes {
			h := fmt.Sprintf("%s-n%d", ct.Name, i+1)
			hosts = append(hosts, map[string]any{"name": h, "type": ct.Type, "vcpus": ct.VCPUs, "price_per_hour": ct.Price, "addr": fmt.Sprintf("10.9.%d.%d", ti, i+1)})
			if ct.Type != "" {
				tr.Target.Hosts = append(tr.Target.Hosts, h)
			}
		}
		row, err := tr.Row()
		must(err)
		must(st.PutTreatment(row))
		if ct.Type != "" {
			detail, _ := json.Marshal(map[string]any{"name": name, "hosts": hosts})
			must(st.AddEvent(store.Event{Time: now, Kind: results.EventLab, Detail: string(detail)}))
			now = now.Add(time.Second)
		}
		for li, l := range ct.Levels {
			slot++
			id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: ct.Name, Model: "open", LevelIndex: li, Level: l.Level, Repetition: 1, Start: now})
			must(err)
			n := int64(l.Throughput * 10)
			h := store.NewHistogram()
			must(h.RecordValues(l.LatA.Microseconds(), n/2))
			must(h.RecordValues(l.LatB.Microseconds(), n-n/2))
			must(st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: now, Duration: 10 * time.Second, Count: n, Hist: h}}))
			end := now.Add(10 * time.Second)
			must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: int64(l.Level * 10), Completed: n,
				MeasureStart: now, MeasureEnd: end, MeasureSecs: 10, Throughput: l.Throughput, ClientCPU: 10}))
			now = end.Add(time.Second)
		}
	}
	return st
}
