package pressure

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target/null"
	_ "github.com/headroom-dev/headroom/internal/target/postgres"
	"github.com/headroom-dev/headroom/internal/workload"
)

// shortAisle is examples/aisle-lab.yaml made short enough for CI: less
// memory and data (the reads still miss the cache), one offered rate far
// above what 300 IOPS serve, short phases. Everything else, the two
// treatments included, is the example's.
func shortAisle(t *testing.T, dir string) *spec.Spec {
	t.Helper()
	src, err := os.ReadFile("../../../examples/aisle-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	get := func(m any, k string) map[string]any {
		mm, ok := m.(map[string]any)[k].(map[string]any)
		if !ok {
			t.Fatalf("examples/aisle-lab.yaml has no mapping %s; update shortAisle", k)
		}
		return mm
	}
	lb := get(doc, "lab")
	lb["name"] = "esl-t-aisle"
	host := lb["hosts"].([]any)[0].(map[string]any)
	host["memory_mib"] = 96
	get(get(doc, "target"), "managed")["settings"] = map[string]any{"shared_buffers": "16MB"}
	get(doc, "workload")["record_count"] = 100000
	ld := get(doc, "load")
	// 700 req/s: far above what 300 IOPS serve, and at 1800 IOPS about
	// 60% of the volume's ops, so that the change is clear both ways.
	ld["rates"], ld["max_in_flight"], ld["drop_after"] = []any{700}, 64, "50ms"
	// Costs divide by each treatment's capacity figure, which with an SLO
	// needs a level that meets it: at this one rate the 300-IOPS volume
	// does not, so the short run judges no SLO. A busy test machine's
	// scheduling delays are not what this test is about: without an SLO
	// the client verdict judges the p99, and a client that sends more than
	// 1% of requests later than late_after by its own delay is limited.
	// At a fixed 5 ms, the 1800-IOPS run of a CI rehearsal on 2026-12-03
	// (test packages running beside it) was judged so, and had no
	// capacity; late_after is now measured on the machine at hand.
	delete(doc, "slo")
	ld["late_after"] = clientLateAfter(t, 700).String()
	doc["phases"] = map[string]any{"warmup": "3s", "measure": "8s"}
	// No process samples: the server's short-lived backends can exit
	// between being listed and being opened by the sampler, which fails a
	// treatment's start; the lab host's own samples are what is assessed.
	get(doc, "monitor")["processes"] = []any{}
	doc["output"] = "out"
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "aisle-short.yaml")
	s, err := spec.Parse(path, b)
	if err != nil {
		t.Fatalf("the shortened example does not parse: %v\n%s", err, b)
	}
	return s
}

// clientLateAfter measures, before the test judges anything, how late this
// machine's client sends requests by its own delay: the load engine sends
// rate req/s (constant arrivals, the test's 64 requests in flight) to the
// null target, which answers at once, for 3 s after a second of warmup.
// The test's late_after is four times the 99.9th percentile of those
// delays, and at least the engine's default of 5 ms: the test is about
// the volume, so its client must not be judged the limit for delays the
// machine shows with nothing else to do (docs/testing.md).
func clientLateAfter(t *testing.T, rate float64) time.Duration {
	t.Helper()
	wcfg := workload.Config{RecordCount: 1000, FieldCount: 10, FieldLength: 100, RequestDistribution: "uniform"}
	wcfg.Mix[workload.Read] = 1
	gen, err := workload.New(wcfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := load.NewSchedule("constant", rate, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The engine records the client's own delays beyond late_after only:
	// the calibration's is small, so that the histogram holds the tail.
	const seen = 100 * time.Microsecond
	cfg := load.Config{Model: "open", Schedule: sched, MaxInFlight: 64, LateAfter: seen, DropAfter: time.Second,
		Timeout: time.Second, Warmup: time.Second, Measure: 3 * time.Second, Interval: time.Second, Seed: 1, Ops: wcfg.Ops()}
	res, err := load.Run(context.Background(), cfg, null.New(null.Options{}), gen, func(load.Tick) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	// own is the delay that at most 0.1% of the requests sent exceeded.
	own := seen
	sent := float64(res.Measured.Sent())
	if h := res.Client.Lateness; h != nil && float64(h.TotalCount()) > 0.001*sent {
		q := 100 * (1 - 0.001*sent/float64(h.TotalCount()))
		own = time.Duration(h.ValueAtQuantile(q)) * time.Microsecond
	}
	late := max(5*time.Millisecond, (4 * own).Round(time.Millisecond))
	t.Logf("the client sent %.0f req/s to the null target: %d of %d requests more than %v late by its own delay, 0.1%% more than %v: late_after %v",
		res.SentRate, res.Measured.LateWake, res.Measured.Sent(), seen, own, late)
	return late
}

// The AISLE verification loop (issue 7, seed 000 Figs. 6-7) on a real lab,
// shortened: PostgreSQL on a 300-IOPS volume is told to provision more
// ops/s; with the recommendation applied (1800 IOPS) the ops/s pressure
// falls and stops being persistent, the bandwidth pressure rises with the
// bytes served, throughput rises, and a req/s costs less than both before
// and by scaling out. Only directions are asserted, with margins that hold
// on a busy 2-core machine.
func TestAisleLoopOnLab(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	dir := labtest.SearchableDir(t)
	out, err := campaign.Start(context.Background(), shortAisle(t, dir), campaign.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := results.Open(out.StorePath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := assess.FromResults(r, assess.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Treatments) != 2 {
		t.Fatalf("treatments %+v, notes %v", a.Treatments, a.Notes)
	}
	before, after := a.Treatments[0], a.Treatments[1]
	find := func(tr assess.Treatment, q esl.Quality) assess.Subject {
		for _, s := range tr.Subjects {
			if s.Host == "db1" && s.Service == "volume:data" && s.Quality == q {
				return s
			}
		}
		t.Fatalf("%s: no db1 volume:data %s subject; notes %v", tr.Name, q, a.Notes)
		return assess.Subject{}
	}
	opB, opA := find(before, esl.OpsPerS), find(after, esl.OpsPerS)
	bwB, bwA := find(before, esl.BytesPerS), find(after, esl.BytesPerS)
	t.Logf("P_op mean %.1f%% -> %.1f%% (p99 %.1f%% -> %.1f%%); P_bw mean %.2f%% -> %.2f%%; throughput %.1f -> %.1f req/s",
		opB.Summary.Box.Mean, opA.Summary.Box.Mean, opB.Summary.Box.P99, opA.Summary.Box.P99, bwB.Summary.Box.Mean, bwA.Summary.Box.Mean, before.Throughput, after.Throughput)
	var w strings.Builder
	Terminal(&w, a)
	t.Log("\n" + w.String())

	has := func(tr assess.Treatment, c slp.Class, q esl.Quality) bool {
		for _, f := range tr.Findings {
			if f.Service == "volume:data" && f.Class == c && f.Quality == q {
				return true
			}
		}
		return false
	}
	if !has(before, slp.ProvisionMore, esl.OpsPerS) {
		t.Errorf("before: no 'provision more ops_per_s' for db1 volume:data; findings %+v", before.Findings)
	}
	for _, f := range before.Findings {
		if f.Class == slp.ProvisionMore && f.Quality == esl.OpsPerS && !strings.Contains(f.Action, "from 300 to 1800") {
			t.Errorf("before: the action %q does not raise 300 to 1800 IOPS", f.Action)
		}
	}
	if has(after, slp.ProvisionMore, esl.OpsPerS) {
		t.Errorf("after 1800 IOPS the volume's ops/s is still under persistent pressure: %+v", after.Findings)
	}
	if !(opA.Summary.Box.Mean < 0.8*opB.Summary.Box.Mean) {
		t.Errorf("P_op mean did not fall: %.1f%% -> %.1f%%", opB.Summary.Box.Mean, opA.Summary.Box.Mean)
	}
	if !(bwA.Summary.Box.Mean > bwB.Summary.Box.Mean) {
		t.Errorf("P_bw mean did not rise with the bytes served: %.2f%% -> %.2f%%", bwB.Summary.Box.Mean, bwA.Summary.Box.Mean)
	}
	if !(after.Throughput > 1.3*before.Throughput) {
		t.Errorf("throughput did not rise: %.1f -> %.1f req/s", before.Throughput, after.Throughput)
	}
	if before.Cost == nil || after.Cost == nil || !(after.Cost.PerReqPerS < before.Cost.PerReqPerS) {
		t.Fatalf("cost per req/s did not fall: %+v -> %+v (%s %s)", before.Cost, after.Cost, before.CostNote, after.CostNote)
	}
	if len(a.Costs) != 1 || !(a.Costs[0].Comparison.Savings < 0) || !(a.Costs[0].Comparison.B.Throughput < after.Throughput) {
		t.Errorf("cost comparison %+v: option A should buy a req/s for less than scaling out", a.Costs)
	}
	rep := &page.Report{Title: "t"}
	rep.Add(Sections(a)...)
	if err := rep.Validate(); err != nil {
		t.Fatal(err)
	}
}
