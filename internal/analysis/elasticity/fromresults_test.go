package elasticity

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// A stored run of a 3-node cluster at 300 req/s offered, SLO p99 ≤ 20 ms
// of all operations: 40 one-second intervals with reads and updates
// (200 + 100 per second), latency 5 ms except 30 ms for the updates from
// 10 s to 15 s, when node4 was added (requested at 10 s, up at 11 s,
// serving at 14 s, 2 MiB streamed). The known answers: throughput 300 in
// every interval; p99 of the merged reads and updates 5 ms, or 30 ms in
// [10, 15) (a third of the requests is above the 99th percentile's rank),
// where the SLO is missed (only 2/3 of requests within 20 ms); a trailing
// 0.2 s partial interval is left out. Settle: p99 smoothed over 3
// intervals is back at 5 ms from 15 s, so the transition is [10, 15): 5
// SLO seconds and an excess of 5 × 25 = 125 ms·s.
func TestFromResults(t *testing.T) {
	st := resultstest.Create(t, "", store.Campaign{Name: "elastic", CreatedAt: t0})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	tr := results.Treatment{Name: "", Load: results.Load{Model: "open", Levels: []float64{300}, Interval: time.Second},
		SLO:    &results.SLO{Percentile: 99, Threshold: 20 * time.Millisecond},
		Target: results.Target{Type: "cassandra", Managed: true, Cluster: &results.Cluster{Nodes: 3}}}
	row, err := tr.Row()
	must(err)
	must(st.PutTreatment(row))
	id, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Model: "open", Level: 300, Repetition: 1, Start: t0})
	must(err)
	var ivs []store.Interval
	for s := 0; s < 40; s++ {
		upd := int64(5000)
		if s >= 10 && s < 15 {
			upd = 30000
		}
		hr, hu := store.NewHistogram(), store.NewHistogram()
		must(hr.RecordValues(5000, 200))
		must(hu.RecordValues(upd, 100))
		at := sec(float64(s))
		ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: "read", Start: at, Duration: time.Second, Count: 200, Hist: hr},
			store.Interval{RunID: id, Phase: "measure", Op: "update", Start: at, Duration: time.Second, Count: 100, Hist: hu})
	}
	hp := store.NewHistogram()
	must(hp.RecordValues(5000, 60))
	ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: "read", Start: sec(40), Duration: 200 * time.Millisecond, Count: 60, Hist: hp})
	must(st.AddIntervals(ivs))
	ch := results.NodeChange{Action: "add_node", Node: "node4", Host: "db4", Requested: sec(10), Started: sec(11), Done: sec(14), BytesStreamed: 2 << 20, Detail: "joined"}
	b, _ := json.Marshal(ch)
	must(st.AddEvent(store.Event{RunID: id, Time: sec(14), Kind: results.EventNodeChange, Detail: string(b)}))
	must(st.FinishRun(id, store.StatusCompleted, "", sec(41), store.RunSummary{MeasureStart: t0, MeasureEnd: sec(40.2), MeasureSecs: 40.2, Throughput: 300}))
	r, err := results.New(st)
	must(err)

	if got := r.Treatments()[0].NodeCount(); got != 3 {
		t.Errorf("node count %d, want 3", got)
	}
	runs, err := FromResults(r, Config{})
	must(err)
	if len(runs) != 1 {
		t.Fatalf("%d runs with changes, want 1", len(runs))
	}
	x := runs[0]
	if x.Problem != nil || x.Skipped != 1 || len(x.Input.Points) != 40 || !x.Origin.Equal(t0) || x.Input.Offered != 300 || !x.Input.HasSLO {
		t.Fatalf("run: problem %v, skipped %d, %d points, origin %v, offered %v", x.Problem, x.Skipped, len(x.Input.Points), x.Origin, x.Input.Offered)
	}
	for s, p := range x.Input.Points {
		wantP99, miss := 5000.0, false
		if s >= 10 && s < 15 {
			wantP99, miss = 30000, true
		}
		if p.Throughput != 300 || math.Abs(p.P99-wantP99) > wantP99/500 || p.SLOMiss != miss {
			t.Errorf("interval %d: %+v; want 300 ok/s, p99 %v µs, SLO missed %v", s, p, wantP99, miss)
		}
	}
	m := x.Result.Changes[0]
	if m.Change.Node != "node4" || m.Change.BytesStreamed != 2<<20 || m.ToServe != 4*time.Second || m.ToStart != time.Second {
		t.Errorf("change %+v", m)
	}
	if m.P99Settle != 5*time.Second || !m.TransitionEnd.Equal(sec(15)) || m.SLOSeconds != 5 || math.Abs(m.LatencyExcess-125) > 0.5 {
		t.Errorf("p99 settle %v, transition to %v, SLO %v s, excess %v; want 5s, 15 s, 5, 125", m.P99Settle, m.TransitionEnd.Sub(t0), m.SLOSeconds, m.LatencyExcess)
	}

	// A damaged change is an error that names the run.
	must(st.AddEvent(store.Event{RunID: id, Time: sec(20), Kind: results.EventNodeChange, Detail: "{"}))
	if _, err := FromResults(r, Config{}); err == nil {
		t.Error("a damaged node change was read")
	}
}
