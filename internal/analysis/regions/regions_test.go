package regions

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/store"
)

// Four agents, two in eu, one in us, one without a region, each with
// four measured seconds of two operation types (and a warmup second that
// must not count), latencies drawn from known lists. The test's own
// answer per region: one histogram recorded from the union of the
// region's latency values, and the sums of its counters.
func TestRegionsExactMerge(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	run := store.Run{ID: 7, Summary: store.RunSummary{MeasureSecs: 4}}
	agents := []Agent{{"a1", "eu"}, {"a2", "eu"}, {"a3", "us"}, {"a4", ""}}
	// Each agent's latencies differ in scale so that the regions differ.
	scale := map[string]float64{"a1": 800, "a2": 3000, "a3": 25000, "a4": 400}
	rng := rand.New(rand.NewPCG(1, 2))
	values := map[string][]int64{} // region -> every measured latency (µs)
	var ivs []store.AgentInterval
	var total, errs, dropped int64
	for _, a := range agents {
		region := a.Region
		if region == "" {
			region = NoRegion
		}
		for sec := -1; sec < 4; sec++ {
			for _, op := range []string{"read", "update"} {
				n := 50 + rng.IntN(100)
				h := store.NewHistogram()
				for range n {
					v := int64(scale[a.Name]*rng.ExpFloat64()) + 50
					if err := h.RecordValue(v); err != nil {
						t.Fatal(err)
					}
					if sec >= 0 {
						values[region] = append(values[region], v)
					}
				}
				phase := "measure"
				if sec < 0 {
					phase = "warmup"
				}
				iv := store.AgentInterval{Agent: a.Name, Interval: store.Interval{RunID: run.ID, Phase: phase, Op: op,
					Start: t0.Add(time.Duration(sec) * time.Second), Duration: time.Second, Count: int64(n), Errors: int64(sec + 1), Dropped: int64(2 * (sec + 1)), Hist: h}}
				ivs = append(ivs, iv)
				if sec >= 0 {
					total += iv.Count
					errs += iv.Errors
					dropped += iv.Dropped
				}
			}
		}
	}
	res, err := Analyze(Input{Run: run, Agents: agents, Intervals: ivs})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Split() || len(res.Regions) != 3 || res.Regions[0].Name != "eu" || res.Regions[1].Name != "us" || res.Regions[2].Name != NoRegion {
		t.Fatalf("regions %+v", res.Regions)
	}
	if got := strings.Join(res.Regions[0].Agents, ","); got != "a1,a2" {
		t.Errorf("eu's agents: %s", got)
	}
	var sumC, sumE, sumD int64
	var sumTput float64
	for _, g := range res.Regions {
		want := store.NewHistogram()
		for _, v := range values[g.Name] {
			if err := want.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		if g.Completed != int64(len(values[g.Name])) || g.Hist.TotalCount() != g.Completed {
			t.Errorf("%s: %d completed, histogram %d, want %d", g.Name, g.Completed, g.Hist.TotalCount(), len(values[g.Name]))
		}
		for _, c := range []struct {
			name string
			got  int64
			q    float64
		}{{"p50", g.P50, 50}, {"p95", g.P95, 95}, {"p99", g.P99, 99}, {"max", g.Max, 100}} {
			if w := want.ValueAtQuantile(c.q); c.got != w {
				t.Errorf("%s %s: %d µs, union of its latencies %d µs", g.Name, c.name, c.got, w)
			}
		}
		for _, q := range []float64{10, 90, 99.9} {
			if a, b := g.Hist.ValueAtQuantile(q), want.ValueAtQuantile(q); a != b {
				t.Errorf("%s p%v: merged %d, union %d", g.Name, q, a, b)
			}
		}
		sumC += g.Completed
		sumE += g.Errors
		sumD += g.Dropped
		sumTput += g.Throughput
		t.Logf("%s: %d agents, %.1f ok/s, p50 %d µs, p95 %d µs, p99 %d µs, max %d µs", g.Name, len(g.Agents), g.Throughput, g.P50, g.P95, g.P99, g.Max)
	}
	if sumC != total || sumE != errs || sumD != dropped {
		t.Errorf("regions sum to %d/%d/%d completed/errors/dropped; the run's measured intervals %d/%d/%d", sumC, sumE, sumD, total, errs, dropped)
	}
	if math.Abs(sumTput-float64(total)/4) > 1e-9 {
		t.Errorf("regions' ok/s sum to %v, the run's %v", sumTput, float64(total)/4)
	}
	// Percentiles of a histogram are ordered.
	if eu := res.Regions[0]; eu.P99 <= 0 || eu.Max < eu.P99 || eu.P99 < eu.P95 || eu.P95 < eu.P50 {
		t.Errorf("eu percentiles out of order: %+v", eu)
	}
}

// No table for a run without agents or with every agent in one region,
// or none in any: a note instead. A histogram of another geometry is an
// error, never an approximation.
func TestRegionsNotes(t *testing.T) {
	run := store.Run{ID: 3, Summary: store.RunSummary{MeasureSecs: 1}}
	for _, c := range []struct {
		agents []Agent
		note   string
	}{
		{nil, "without load agents"},
		{[]Agent{{"a", "eu"}, {"b", "eu"}}, "every agent of run 3 is in region eu"},
		{[]Agent{{"a", ""}, {"b", ""}}, "no agent of run 3 has a region label"},
	} {
		res, err := Analyze(Input{Run: run, Agents: c.agents})
		if err != nil || res.Split() || len(res.Regions) != 0 || !strings.Contains(res.Note, c.note) {
			t.Errorf("%v: %+v %v; want the note %q", c.agents, res, err, c.note)
		}
	}
	other := hdrhistogram.New(1, 1000, 2)
	_ = other.RecordValue(5)
	_, err := Analyze(Input{Run: run, Agents: []Agent{{"a", "eu"}, {"b", "us"}},
		Intervals: []store.AgentInterval{{Agent: "a", Interval: store.Interval{Phase: "measure", Op: "read", Start: time.Unix(1, 0), Duration: time.Second, Count: 1, Hist: other}}}})
	if err == nil || !strings.Contains(err.Error(), "cannot be merged exactly") {
		t.Errorf("another geometry: %v", err)
	}
}
