package resultstest

import (
	"fmt"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// MoneyConfig is a designed configuration for planning tests: Nodes
// servers that answer up to Capacity requests/s in Fast and every request
// beyond that in Slow, with the field paths Set as its factors' values.
type MoneyConfig struct {
	Name     string
	Nodes    int
	Capacity float64
	Set      []results.Setting
	Records  int64 // the workload's record_count; 0 = 1000
}

// MoneyStore writes, in dir ("" = a new temporary directory), a campaign
// whose configurations each run open loop at every level for reps
// repetitions of a 10 s measured phase. At level L a configuration
// completes 10·L requests: 10·min(L, Capacity) of them take Fast and the
// rest Slow (one "read" histogram per run; no errors). Every treatment
// carries plan as its analysis.plan and the workload YCSB a with
// Records records, so the revenue and cost of every cell are known by
// construction.
func MoneyStore(t testing.TB, dir, name string, cfgs []MoneyConfig, levels []float64, reps int, fast, slow time.Duration, plan results.Plan) *store.Store {
	t.Helper()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	st := Create(t, dir, store.Campaign{Name: name, SpecFile: name + ".yaml", Seed: 1, ToolVersion: "test", CreatedAt: now})
	must := Must(t)
	slot := 0
	for ti, c := range cfgs {
		records := c.Records
		if records == 0 {
			records = 1000
		}
		tr := results.Treatment{Name: c.Name, Index: ti, Set: c.Set,
			Load:     results.Load{Model: "open", Levels: levels, Repetitions: reps, Measure: 10 * time.Second, Interval: 10 * time.Second},
			Workload: results.Workload{Kind: "ycsb", YCSB: "a", Mix: map[string]float64{"read": 0.5, "update": 0.5}, RecordCount: records},
			Target:   results.Target{Type: "apptier", Managed: true}, Analysis: results.Analysis{Plan: plan}}
		for i := range c.Nodes {
			tr.Target.Hosts = append(tr.Target.Hosts, fmt.Sprintf("%s-%d", c.Name, i+1))
		}
		row, err := tr.Row()
		must(err)
		must(st.PutTreatment(row))
		for li, l := range levels {
			for rep := 1; rep <= reps; rep++ {
				slot++
				id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: c.Name, Model: "open", LevelIndex: li, Level: l, Repetition: rep, Start: now})
				must(err)
				nFast := int64(10 * min(l, c.Capacity))
				nSlow := int64(10*l) - nFast
				h := store.NewHistogram()
				must(h.RecordValues(fast.Microseconds(), nFast))
				if nSlow > 0 {
					must(h.RecordValues(slow.Microseconds(), nSlow))
				}
				must(st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: now, Duration: 10 * time.Second, Count: nFast + nSlow, Hist: h}}))
				end := now.Add(10 * time.Second)
				must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: nFast + nSlow, Completed: nFast + nSlow,
					MeasureStart: now, MeasureEnd: end, MeasureSecs: 10, Throughput: l, ClientCPU: 10}))
				now = end.Add(time.Second)
			}
		}
	}
	return st
}
