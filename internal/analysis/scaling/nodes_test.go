package scaling

import (
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/capacity"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

func rt(mean, sd float64) RTDist {
	return RTDist{Level: 1000, N: 100, Mean: mean, StdDev: sd, P99: mean + 2*sd}
}

// Seed 002 §V's design with a third large count: 2, 4 and 8 large nodes
// and 4 xlarge (twice the size), baseline 4 large. Large throughput 700,
// 1200, 2600: x̄ = 14/3, ȳ = 1500, Sxx = 168/9, Sxy = 6000, Syy = 1.94e6,
// so slope = 6000 / (168/9) = 321.43 req/s per node, R² = Sxy²/(Sxx·Syy).
// Response time at capacity (mean, sd in µs): 4 large (10000, 2000), 2
// large (20000, 5000) and 8 large (10000, 1500) scale horizontally (CV
// 0.25 and 0.15: mean 0.2), 4 xlarge vertically (10000, 4000: CV 0.4).
func TestAnalyzeNodes(t *testing.T) {
	ts := []NodeTreatment{
		{Treatment: Treatment{Name: "2-large", Servers: 2, Throughput: 700, PricePerHour: 0.36}, Type: "m1.large", AtCapacity: rt(20000, 5000)},
		{Treatment: Treatment{Name: "4-large", Servers: 4, Throughput: 1200, PricePerHour: 0.36}, Type: "m1.large", AtCapacity: rt(10000, 2000)},
		{Treatment: Treatment{Name: "8-large", Servers: 8, Throughput: 2600, PricePerHour: 0.36}, Type: "m1.large", AtCapacity: rt(10000, 1500)},
		{Treatment: Treatment{Name: "4-xlarge", Servers: 4, Size: 2, Throughput: 4000, PricePerHour: 0.72}, Type: "m1.xlarge", AtCapacity: rt(10000, 4000)},
	}
	res, err := AnalyzeNodes(ts, "4-large")
	if err != nil {
		t.Fatal(err)
	}
	strategies := []string{"horizontal", "baseline", "horizontal", "vertical"}
	for i, r := range res.Rows {
		if r.Strategy != strategies[i] || r.Type != ts[i].Type {
			t.Errorf("row %d: strategy %q type %q, want %q %q", i, r.Strategy, r.Type, strategies[i], ts[i].Type)
		}
	}
	if x := res.Rows[3]; x.Kind != "vertical" || !near(x.ScaleUp, 4000.0/1200, 1e-12) || !near(x.CostPerReqPerSec, 4*0.72*730/4000, 1e-12) {
		t.Errorf("4-xlarge: %+v", x)
	}
	if !near(res.HorizontalCV, 0.2, 1e-12) || !near(res.VerticalCV, 0.4, 1e-12) {
		t.Errorf("CV horizontal %v vertical %v, want 0.2 and 0.4", res.HorizontalCV, res.VerticalCV)
	}
	if v := res.Rows[3].AtCapacity.Variance(); v != 16e6 {
		t.Errorf("variance %v µs², want 1.6e7", v)
	}
	if len(res.ByType) != 1 {
		t.Fatalf("fits %+v, want one (large)", res.ByType)
	}
	f := res.ByType[0]
	sxx, sxy, syy := 168.0/9, 6000.0, 1.94e6
	if f.Type != "m1.large" || f.Size != 1 || len(f.Treatments) != 3 || f.Fit.N != 3 ||
		!near(f.Fit.Slope, sxy/sxx, 1e-9) || !near(f.Fit.Intercept, 1500-sxy/sxx*14/3, 1e-9) || !near(f.Fit.R2, sxy*sxy/(sxx*syy), 1e-12) {
		t.Errorf("fit %+v; want slope %v, R² %v", f, sxy/sxx, sxy*sxy/(sxx*syy))
	}
	if _, err := AnalyzeNodes([]NodeTreatment{{Treatment: Treatment{Name: "x", Servers: 2.5}}}, ""); err == nil {
		t.Error("2.5 nodes accepted")
	}
}

// The designed store (resultstest.ClusterStore): 4 small nodes, 8 small
// and 2 large (1 vCPU, twice a small's 0.5) at 100, 200, 400 and 800 req/s
// offered, SLO p99 ≤ 100 ms. 4-small serves 400 at 400 (10/30 ms: mean
// 20, sd 10) and 420 at 800 (200/400 ms: fails); 8-small serves every
// level, 800 at 800 (10/20 ms: mean 15, sd 5), at 400 8/12 ms; 2-large
// serves 400 at 400 (5/35 ms: mean 20, sd 15) and 600 at 800 (fails).
// Known answers: capacity 400, 800, 400; the common load 400 (the knees
// of 4-small and 2-large); baseline 4-small (4 units, first of the two
// with 4); 8-small horizontal with scale-up 2, speed-up 20/10 = 2; 2-large
// vertical ("mixed": fewer, bigger nodes) with scale-up 1, speed-up 1;
// costs 262.8, 525.6, 262.8 $/month, 0.657 $/month per req/s each; CV at
// capacity 10/20, 5/15, 15/20; the small nodes' line: 100 req/s per node.
func TestFromClusters(t *testing.T) {
	ms := time.Millisecond
	lv := func(level, tput float64, a, b time.Duration) resultstest.ClusterLevel {
		return resultstest.ClusterLevel{Level: level, Throughput: tput, LatA: a, LatB: b}
	}
	st := resultstest.ClusterStore(t, "nodes", &results.SLO{Percentile: 99, Threshold: 100 * ms}, []resultstest.ClusterTreatment{
		{Name: "4-small", Nodes: 4, Type: "small", VCPUs: 0.5, Price: 0.09, Levels: []resultstest.ClusterLevel{
			lv(100, 100, 8*ms, 12*ms), lv(200, 200, 8*ms, 12*ms), lv(400, 400, 10*ms, 30*ms), lv(800, 420, 200*ms, 400*ms)}},
		{Name: "8-small", Nodes: 8, Type: "small", VCPUs: 0.5, Price: 0.09, Levels: []resultstest.ClusterLevel{
			lv(100, 100, 8*ms, 12*ms), lv(200, 200, 8*ms, 12*ms), lv(400, 400, 8*ms, 12*ms), lv(800, 800, 10*ms, 20*ms)}},
		{Name: "2-large", Nodes: 2, Type: "large", VCPUs: 1, Price: 0.18, Levels: []resultstest.ClusterLevel{
			lv(100, 100, 8*ms, 12*ms), lv(200, 200, 8*ms, 12*ms), lv(400, 400, 5*ms, 35*ms), lv(800, 600, 150*ms, 450*ms)}},
	})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil || cc.Problem != nil {
		t.Fatal(err, cc.Problem)
	}
	cmp := FromClusters(r, cc.Curves)
	if cmp == nil || cmp.Problem != nil {
		t.Fatalf("comparison %+v", cmp)
	}
	res := cmp.Result
	if res.Baseline != "4-small" || len(res.Rows) != 3 || len(cmp.Deployments) != 3 {
		t.Fatalf("baseline %q, %d rows, %d deployments", res.Baseline, len(res.Rows), len(cmp.Deployments))
	}
	want := []struct {
		strategy, kind, typ        string
		nodes, size, tput, up, spd float64
		cv                         float64
	}{
		{"baseline", "baseline", "small", 4, 1, 400, 1, 1, 0.5},
		{"horizontal", "horizontal", "small", 8, 1, 800, 2, 2, 1.0 / 3},
		{"vertical", "mixed", "large", 2, 2, 400, 1, 1, 0.75},
	}
	for i, w := range want {
		x := res.Rows[i]
		if x.Strategy != w.strategy || x.Kind != w.kind || x.Type != w.typ || x.Servers != w.nodes || x.Size != w.size ||
			x.Throughput != w.tput || !near(x.ScaleUp, w.up, 1e-12) || !near(x.SpeedUp, w.spd, 0.01) || !near(x.CostPerReqPerSec, 0.657, 1e-9) ||
			!near(x.AtCapacity.CV(), w.cv, 0.01) || x.AtLoad.Level != 400 {
			t.Errorf("row %d: %+v (CV %v); want %+v", i, x, x.AtCapacity.CV(), w)
		}
	}
	if !near(res.HorizontalCV, 1.0/3, 0.01) || !near(res.VerticalCV, 0.75, 0.01) {
		t.Errorf("CV horizontal %v, vertical %v", res.HorizontalCV, res.VerticalCV)
	}
	if len(res.ByType) != 1 || !near(res.ByType[0].Fit.Slope, 100, 1e-9) || res.ByType[0].Type != "small" {
		t.Errorf("fits %+v", res.ByType)
	}
	// Without a second cluster treatment there is no comparison.
	if FromClusters(r, cc.Curves[:1]) != nil {
		t.Error("a comparison of one treatment")
	}
	if math.IsNaN(res.Rows[0].AtLoad.Mean) || !near(res.Rows[0].AtLoad.Mean, 20000, 100) {
		t.Errorf("baseline RT at 400: %+v", res.Rows[0].AtLoad)
	}
}

// Clusters on this machine (no lab): node counts 3 and 6 at size 1 and no
// price, with a note saying so; a treatment that adds a node during its
// runs is counted at its starting count, with a note.
func TestFromClustersWithoutLab(t *testing.T) {
	ms := time.Millisecond
	lv := func(level, tput float64) resultstest.ClusterLevel {
		return resultstest.ClusterLevel{Level: level, Throughput: tput, LatA: 4 * ms, LatB: 6 * ms}
	}
	st := resultstest.ClusterStore(t, "local", nil, []resultstest.ClusterTreatment{
		{Name: "three", Nodes: 3, Levels: []resultstest.ClusterLevel{lv(100, 100), lv(200, 150)}},
		{Name: "six", Nodes: 6, Levels: []resultstest.ClusterLevel{lv(100, 100), lv(200, 195)},
			Events: []results.ScheduledEvent{{At: 5 * time.Second, Action: results.ActionAddNode}}},
	})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := capacity.FromResults(r, capacity.Config{})
	if err != nil || cc.Problem != nil {
		t.Fatal(err, cc.Problem)
	}
	cmp := FromClusters(r, cc.Curves)
	if cmp == nil || cmp.Problem != nil {
		t.Fatalf("comparison %+v", cmp)
	}
	rows := cmp.Result.Rows
	if len(cmp.Deployments) != 0 || rows[1].Strategy != "horizontal" || rows[1].Servers != 6 || rows[1].Size != 1 || rows[1].Type != "" ||
		!math.IsNaN(rows[1].CostPerReqPerSec) || !near(rows[1].ScaleUp, 195.0/150, 1e-12) {
		t.Errorf("rows %+v", rows)
	}
	if !hasNote(cmp.Notes, "ran on this machine rather than on lab hosts") || !hasNote(cmp.Notes, `treatment "six" adds or removes nodes during its runs`) {
		t.Errorf("notes %v", cmp.Notes)
	}
}
