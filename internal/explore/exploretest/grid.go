// Package exploretest writes the designed results store the explorer's
// tests (and the command's) read: a campaign over two configuration
// parameters whose best configuration at each load is known by
// construction.
package exploretest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// The grid campaign: factors apptier.servers = App ∈ {1, 2} and
// managed.cluster.nodes = DB ∈ {1, 2, 4} (six treatments named
// "app<A>-db<D>"), open loop at Levels, Repetitions repetitions of a
// Measure-second measured phase after one warmup second, 1 s intervals.
// By construction:
//   - a configuration serves min(level, 100·A·D) requests/s, every one
//     within 1 s, so each earns seed 003 Table 16's first step, 0.0033
//     cent: revenue = throughput × 3600 × 0.000033 = 0.1188 × throughput
//     $/h;
//   - it runs on A+D cluster nodes at the planner's default $4 per
//     node-hour: cost = 4·(A+D) $/h;
//   - so profit = 0.1188·min(level, 100·A·D) − 4·(A+D), and the best
//     configuration is app1-db1 at 100 req/s, app1-db2 at 200 (tied with
//     app2-db1, same profit and cost: the text order decides) and
//     app2-db2 at 400; with A fixed to 2: app2-db1, app2-db1, app2-db2
//     (see Best);
//   - response times are 2 ms × level / capacity (more loaded, slower);
//   - repetition 1 of app1-db1 at 100 req/s was interrupted once before
//     it completed (the same plan slot, so only the completed run counts).
var (
	Apps        = []int{1, 2}
	DBs         = []int{1, 2, 4}
	Levels      = []float64{100, 200, 400}
	Repetitions = 2
	Measure     = 5 // seconds
)

// Params are the two parameters' field paths.
const (
	AppParam = "apptier.servers"
	DBParam  = "managed.cluster.nodes"
)

// Capacity is what a configuration serves at most, requests/s.
func Capacity(app, db int) float64 { return float64(100 * app * db) }

// Profit is a configuration's designed profit at a level, $/h.
func Profit(app, db int, level float64) float64 {
	return 0.1188*math.Min(level, Capacity(app, db)) - 4*float64(app+db)
}

// Name is the treatment name of a configuration.
func Name(app, db int) string { return fmt.Sprintf("app%d-db%d", app, db) }

// Best is the designed best configuration by profit at each level, with
// app fixed when app > 0, found by enumeration (ties: lower cost, then
// the parameters' text, as the wildcard engine breaks them).
func Best(app int) map[float64]string {
	out := map[float64]string{}
	for _, l := range Levels {
		best, bp, bc := "", math.Inf(-1), 0.0
		for _, a := range Apps {
			if app > 0 && a != app {
				continue
			}
			for _, d := range DBs {
				p, c := Profit(a, d, l), float64(4*(a+d))
				if p > bp+1e-9 || math.Abs(p-bp) <= 1e-9 && c < bc {
					best, bp, bc = Name(a, d), p, c
				}
			}
		}
		out[l] = best
	}
	return out
}

// T0 is when the campaign starts.
var T0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// Write writes the grid campaign into dir/results.db (dir is made when
// missing; a new temporary directory when dir is "") and returns the file's path; the store is
// closed when Write returns, so readers open it afresh.
func Write(t testing.TB, dir string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st := resultstest.Create(t, dir, store.Campaign{Name: "grid", SpecFile: "grid.yaml", Seed: 1, ToolVersion: "test", CreatedAt: T0})
	must := resultstest.Must(t)
	slo := &results.SLO{Percentile: 99, Threshold: 50 * time.Millisecond}
	now := T0
	slot := 0
	ti := 0
	for _, a := range Apps {
		for _, d := range DBs {
			tr := results.Treatment{Name: Name(a, d), Index: ti, SLO: slo,
				Set:      []results.Setting{{Path: AppParam, Value: strconv.Itoa(a)}, {Path: DBParam, Value: strconv.Itoa(d)}},
				Load:     results.Load{Model: "open", Arrival: "constant", Levels: Levels, Repetitions: Repetitions, Warmup: time.Second, Measure: time.Duration(Measure) * time.Second, Interval: time.Second},
				Workload: results.Workload{Kind: "ycsb", YCSB: "c", Mix: map[string]float64{"read": 1}, RecordCount: 1000, FieldCount: 10, FieldLength: 100},
				Target:   results.Target{Type: "null", Managed: true, Cluster: &results.Cluster{Nodes: a + d}}}
			ti++
			row, err := tr.Row()
			must(err)
			must(st.PutTreatment(row))
			for li, l := range Levels {
				tp := math.Min(l, Capacity(a, d))
				lat := int64(2000 * l / Capacity(a, d)) // µs
				for rep := 1; rep <= Repetitions; rep++ {
					if a == 1 && d == 1 && l == 100 && rep == 1 {
						id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: tr.Name, Model: "open", LevelIndex: li, Level: l, Repetition: rep, Start: now})
						must(err)
						must(st.FinishRun(id, store.StatusInterrupted, "interrupted by the user", now.Add(time.Second), store.RunSummary{}))
						now = now.Add(2 * time.Second)
					}
					now = writeRun(t, st, tr.Name, slot, li, l, rep, tp, lat, now)
					slot++
				}
			}
		}
	}
	must(st.Close())
	return filepath.Join(dir, "results.db")
}

// writeRun writes one completed run: a warmup second, then Measure
// seconds serving tp requests/s, each taking lat µs.
func writeRun(t testing.TB, st *store.Store, name string, slot, li int, level float64, rep int, tp float64, lat int64, start time.Time) time.Time {
	must := resultstest.Must(t)
	id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: name, Model: "open", LevelIndex: li, Level: level, Repetition: rep, Start: start})
	must(err)
	n := int64(tp)
	var ivs []store.Interval
	for k := 0; k <= Measure; k++ {
		phase := "measure"
		if k == 0 {
			phase = "warmup"
		}
		h := store.NewHistogram()
		must(h.RecordValues(lat, n))
		ivs = append(ivs, store.Interval{RunID: id, Phase: phase, Op: "read", Start: start.Add(time.Duration(k) * time.Second), Duration: time.Second, Count: n, Hist: h})
	}
	must(st.AddIntervals(ivs))
	ms, me := start.Add(time.Second), start.Add(time.Duration(Measure+1)*time.Second)
	must(st.FinishRun(id, store.StatusCompleted, "", me, store.RunSummary{Sent: n * int64(Measure), Completed: n * int64(Measure),
		MeasureStart: ms, MeasureEnd: me, MeasureSecs: float64(Measure), Throughput: tp}))
	return me.Add(time.Second)
}
