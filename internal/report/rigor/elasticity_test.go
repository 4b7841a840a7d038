package rigor

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// elasticStore is a 3-node cluster at 300 req/s offered, SLO p99 ≤ 20 ms:
// run 1 without node changes, then run 2 of 40 one-second intervals at
// 300 ok/s, 5 ms, except 30 ms in [10, 15) s when node4 joined on db4
// (requested at 10 s, up at 11 s, serving at 14 s, 2 MiB streamed). The
// known answers (as internal/analysis/elasticity's TestFromResults): to
// start 1 s, to serve 4 s, p99 settled after 5 s, throughput at once,
// transition 5 s, 5 s in SLO violation, latency excess 125 ms·s, gain
// per node 0 (the offered rate bounded throughput, which a note says).
func elasticStore(t *testing.T) *store.Store {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	st := resultstest.Create(t, "", store.Campaign{Name: "elastic", CreatedAt: t0})
	must := resultstest.Must(t)
	tr := results.Treatment{Name: "", Load: results.Load{Model: "open", Levels: []float64{300}, Repetitions: 2, Interval: time.Second},
		SLO:    &results.SLO{Percentile: 99, Threshold: 20 * time.Millisecond},
		Target: results.Target{Type: "cassandra", Managed: true, Cluster: &results.Cluster{Nodes: 3}}}
	row, err := tr.Row()
	must(err)
	must(st.PutTreatment(row))
	for rep := 1; rep <= 2; rep++ {
		base := at(float64(100 * (rep - 1)))
		id, err := st.StartRun(store.Run{Seq: rep, Slot: rep, Model: "open", Level: 300, Repetition: rep, Start: base})
		must(err)
		var ivs []store.Interval
		for s := 0; s < 40; s++ {
			lat := int64(5000)
			if rep == 2 && s >= 10 && s < 15 {
				lat = 30000
			}
			h := store.NewHistogram()
			must(h.RecordValues(lat, 300))
			ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: "read", Start: base.Add(time.Duration(s) * time.Second), Duration: time.Second, Count: 300, Hist: h})
		}
		must(st.AddIntervals(ivs))
		if rep == 2 {
			ch := results.NodeChange{Action: "add_node", Node: "node4", Host: "db4", Requested: at(110), Started: at(111), Done: at(114), BytesStreamed: 2 << 20}
			b, _ := json.Marshal(ch)
			must(st.AddEvent(store.Event{RunID: id, Time: at(114), Kind: results.EventNodeChange, Detail: string(b)}))
		}
		end := base.Add(40 * time.Second)
		must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{MeasureStart: base, MeasureEnd: end, MeasureSecs: 40, Throughput: 300}))
	}
	return st
}

func TestElasticitySection(t *testing.T) {
	r := model(t, elasticStore(t))
	secs, err := ElasticitySections(r)
	if err != nil {
		t.Fatal(err)
	}
	validates(t, secs)
	sec := mustSection(t, secs, "elasticity")
	tb := table(t, secs, "elasticity-run2")
	if len(tb.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(tb.Rows))
	}
	row := tb.Rows[0]
	checks := map[string]float64{"requested at": 10, "to start": 1, "to serve": 4, "streamed": 2 << 20, "throughput before": 300, "throughput after": 300,
		"gain per node": 0, "p99 after": 5, "throughput settle": 0, "p99 settle": 5, "transition": 5, "SLO violation": 5}
	for title, want := range checks {
		if got := value(row[col(t, tb, title)]); !near(got, want, 0.01) {
			t.Errorf("%s = %v, want %v", title, got, want)
		}
	}
	if got := value(row[col(t, tb, "latency excess")]); !near(got, 125, 0.5) {
		t.Errorf("latency excess %v, want 125", got)
	}
	if !strings.Contains(sec.Summary, "Run 2 (300 req/s, repetition 2): adding node4 on db4 served after 4.0 s (2.0 MiB streamed), throughput 300 → 300 ok/s (0 per node)") ||
		!strings.Contains(sec.Summary, "5 s in SLO violation") {
		t.Errorf("summary %q", sec.Summary)
	}
	p99 := chartByID(t, secs, "elasticity-run2-p99")
	if len(p99.Line.Ranges) != 1 || p99.Line.Ranges[0].From != 10 || p99.Line.Ranges[0].To != 15 || len(p99.Line.Rules) != 3 {
		t.Errorf("p99 chart ranges %+v rules %+v; want the transition 10..15 s, request, serving and SLO rules", p99.Line.Ranges, p99.Line.Rules)
	}
	chartByID(t, secs, "elasticity-run2-throughput")
	if blockByID(secs, "elasticity-run1").Table != nil {
		t.Error("a table for the run without node changes")
	}
	if !strings.Contains(fmtBlocks(sec), "matched the offered 300 req/s") {
		t.Error("no note that the offered rate bounded the throughput")
	}
	fs, err := Findings(r, "")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range fs {
		found = found || (f.Label == "Elasticity" && strings.Contains(f.Text, "adding node4 on db4 served after 4.0 s"))
	}
	if !found {
		t.Errorf("findings %+v", fs)
	}
	// A campaign without node changes has no such section.
	st, _ := variationStore(t)
	if secs, err := ElasticitySections(model(t, st)); err != nil || len(secs) != 0 {
		t.Errorf("sections without node changes: %v, %v", secs, err)
	}
}

func fmtBlocks(sec *page.Section) string {
	var b strings.Builder
	for _, bl := range sec.Blocks {
		if bl.Note != nil {
			b.WriteString(bl.Note.Text + "\n")
		}
	}
	return b.String()
}
