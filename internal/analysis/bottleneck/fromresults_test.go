package bottleneck

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// TestReaders writes a small sweep into a real results store of the
// first schema (its facts read from the spec text and the events): levels
// 10, 20, 30, two repetitions, 10 s measured windows. db1's CPU runs at 4
// x level percent with the top level pinned at 100; its link of 0.8 Mbit/s
// (1e5 bytes/s) carries 1000 x level bytes/s; at level 30 half the
// requests take 500 ms (SLO threshold 100 ms).
func TestReaders(t *testing.T) {
	st := resultstest.Create(t, "", store.Campaign{Name: "b", SpecYAML: "name: b", CreatedAt: t0})
	if err := st.AddEvent(store.Event{Time: t0.Add(-time.Second), Kind: results.EventLab,
		Detail: `{"name":"b","hosts":[{"name":"db1","type":"small","network_mbit":0.8,"volumes":null}]}`}); err != nil {
		t.Fatal(err)
	}
	start := t0
	slot := 0
	for li, level := range []float64{10, 20, 30} {
		for rep := 1; rep <= 2; rep++ {
			id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: "A", Model: "closed", LevelIndex: li, Level: level, Repetition: rep, Start: start})
			if err != nil {
				t.Fatal(err)
			}
			slot++
			h := store.NewHistogram()
			for i := range 100 {
				v := int64(10_000) // 10 ms
				if level == 30 && i%2 == 0 {
					v = 500_000 // 500 ms
				}
				_ = h.RecordValue(v)
			}
			if err := st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: start, Duration: 10 * time.Second, Count: 100, Hist: h}}); err != nil {
				t.Fatal(err)
			}
			var samples []monitor.Sample
			for sec := range 10 {
				u := math.Min(100, 4*level+float64(sec%2))
				at := start.Add(time.Duration(sec) * time.Second)
				samples = append(samples,
					monitor.Sample{Host: "db1", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: at, Period: time.Second, Value: u, Source: monitor.SourceSampled},
					monitor.Sample{Host: "db1", Resource: "net:eth0", Metric: monitor.NetTxBytes, Start: at, Period: time.Second, Value: 1000 * level, Source: monitor.SourceSampled})
			}
			if err := st.AddSamples(id, samples); err != nil {
				t.Fatal(err)
			}
			end := start.Add(10 * time.Second)
			if err := st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{MeasureStart: start, MeasureEnd: end, MeasureSecs: 10, Completed: 100}); err != nil {
				t.Fatal(err)
			}
			start = end.Add(time.Second)
		}
	}
	// A second treatment: analyses read one at a time.
	id, _ := st.StartRun(store.Run{Slot: 99, Treatment: "B", Model: "closed", Level: 10, Repetition: 1, Start: start})
	if err := st.FinishRun(id, store.StatusCompleted, "", start.Add(time.Second), store.RunSummary{MeasureStart: start, MeasureEnd: start.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	runs := r.CompletedRuns("A")
	if len(runs) != 6 || runs[0].Level != 10 || runs[5].Level != 30 || runs[5].Repetition != 2 {
		t.Fatalf("runs %+v", runs)
	}
	res, err := ClassifyRun(r, runs[5], Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Intervals != 10 || len(res.Bottlenecks) != 1 || res.Bottlenecks[0].Class != ClassSingle || res.Bottlenecks[0].Resources[0] != "db1/cpu" || res.Bottlenecks[0].F != 1 {
		t.Fatalf("level 30: %+v", res)
	}
	if st := stat(t, res, "db1/net:eth0"); math.Abs(st.Mean-30) > 1e-9 {
		t.Fatalf("link utilisation %+v", st)
	}

	trials, err := Trials(r, "A", levels.SLO{Percentile: 95, Threshold: 100 * time.Millisecond}, Config{})
	if err != nil || len(trials) != 6 {
		t.Fatalf("trials %+v, %v", trials, err)
	}
	for _, tr := range trials {
		wantS := 100.0
		if tr.Level == 30 {
			wantS = 50
		}
		wantCPU := 4*tr.Level + 0.5 // mean of +0 and +1 alternating
		if tr.Level == 30 {
			wantCPU = 100
		}
		if tr.Satisfaction != wantS || math.Abs(tr.Metrics["db1/cpu util_pct"]-wantCPU) > 1e-9 ||
			math.Abs(tr.Metrics["db1/net:eth0 util_pct"]-tr.Level) > 1e-9 || tr.Metrics["db1/net:eth0 tx_bytes_per_s"] != 1000*tr.Level {
			t.Fatalf("trial %+v", tr)
		}
	}
	in, err := AnalyzeIntervention(trials, InterventionConfig{})
	if err != nil || in.WStar != 30 {
		t.Fatalf("w* = %v, %v", in.WStar, err)
	}

	m, err := TreatmentDensity(r, "A", "db1/cpu", Config{}, DensityConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Levels) != 3 || m.N[0] != 20 || m.N[2] != 20 {
		t.Fatalf("density levels %v n %v", m.Levels, m.N)
	}
	if _, err := TreatmentDensity(r, "A", "db9/cpu", Config{}, DensityConfig{}); err == nil || !strings.Contains(err.Error(), "no run has utilisation samples of db9/cpu") {
		t.Fatalf("unknown resource: %v", err)
	}
}
