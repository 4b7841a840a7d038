package pressure

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/pressure/pressuretest"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	_ "github.com/headroom-dev/headroom/internal/lab" // registers the shipped catalog, as the binary does
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func openResults(t *testing.T, path string) *results.Results {
	t.Helper()
	r, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func synthLab(t *testing.T) *results.Results {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	if err := pressuretest.SynthLab(path); err != nil {
		t.Fatal(err)
	}
	return openResults(t, path)
}

func subject(t *testing.T, tr Treatment, label string) Subject {
	t.Helper()
	for _, s := range tr.Subjects {
		if s.Label() == label {
			return s
		}
	}
	var have []string
	for _, s := range tr.Subjects {
		have = append(have, s.Label())
	}
	t.Fatalf("treatment %s has no subject %q; it has %v", tr.Name, label, have)
	return Subject{}
}

// The designed two-treatment lab campaign of pressuretest.SynthLab, by
// hand (see its comment): models from the lab event, SLP, critical times,
// findings, actions and the cost comparison.
func TestAssessSynthLab(t *testing.T) {
	a, err := FromResults(synthLab(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Treatments) != 2 || a.Base != "piops-300" || a.Treatments[1].Name != "piops-1800" {
		t.Fatalf("treatments %+v, base %q", a.Treatments, a.Base)
	}
	before, after := a.Treatments[0], a.Treatments[1]
	// volume, cpu and the link's two directions; the cgroup and the
	// machine's own samples have no model.
	if len(before.Subjects) != 5 {
		t.Fatalf("subjects %d: %+v", len(before.Subjects), before.Subjects)
	}
	// P_op against 300 ops/s (4 KiB, limited by iops): 50 s at 100%, 10 s
	// at 80% (seconds 20-29).
	op := subject(t, before, "db1 volume:data ops_per_s")
	b := op.Summary.Box
	if op.ESLMean != 300 || !strings.Contains(op.ESL, "at 4 KiB, limited by iops") || !strings.Contains(op.Model, "from the lab event: piops volume data, 100 GiB, 300 IOPS, on a medium host") {
		t.Errorf("ESL %v %q, model %q", op.ESLMean, op.ESL, op.Model)
	}
	if !near(b.Mean, 580.0/6, 1e-9) || b.P1 != 80 || b.P25 != 100 || b.P99 != 100 || b.Covered != time.Minute || op.Observed != 290 {
		t.Errorf("P_op box %+v, observed %v", b, op.Observed)
	}
	c70, c95 := op.Summary.Critical[0], op.Summary.Critical[1]
	if c70.TCPT != time.Minute || c70.MCPT != time.Minute || c95.TCPT != 50*time.Second || c95.MCPT != 30*time.Second || !near(c95.TCPTPct, 500.0/6, 1e-9) || c95.MCPTPct != 50 {
		t.Errorf("critical times %+v %+v", c70, c95)
	}
	if len(c95.Periods) != 2 || !c95.Periods[1].Start.Equal(pressuretest.SynthStart.Add(31*time.Second)) {
		t.Errorf("critical periods at 95%%: %+v", c95.Periods)
	}
	// P_bw against 62.5 MiB/s (the medium instance's connection, first
	// reached at 256 KiB): 300 x 8 KiB is 3.75%, 240 x 8 KiB 3%.
	bw := subject(t, before, "db1 volume:data bytes_per_s")
	if bw.ESLMean != 62.5*(1<<20) || !strings.Contains(bw.ESL, "at 256 KiB, limited by instance_bandwidth") || !near(bw.Summary.Box.Mean, (50*3.75+10*3)/60.0, 1e-9) {
		t.Errorf("P_bw ESL %v %q, mean %v", bw.ESLMean, bw.ESL, bw.Summary.Box.Mean)
	}
	if cpu := subject(t, before, "db1 cpu util_pct"); cpu.Summary.Box.Mean != 30 || cpu.ESLMean != 100 {
		t.Errorf("cpu %+v", cpu.Summary.Box)
	}
	if rx := subject(t, before, "db1 net:eth0 rx_bytes_per_s"); !near(rx.Summary.Box.Mean, 16, 1e-9) || rx.ESLMean != 6.25e6 {
		t.Errorf("link %v of %v", rx.Summary.Box.Mean, rx.ESLMean)
	}
	// Before: provision more ops/s; CPU and link over-provisioned.
	classes := func(tr Treatment) string {
		var out []string
		for _, f := range tr.Findings {
			out = append(out, f.Service+" "+string(f.Quality)+" "+string(f.Class))
		}
		return strings.Join(out, "; ")
	}
	if got := classes(before); got != "cpu  over_provisioned; net:eth0  over_provisioned; volume:data ops_per_s provision_more" {
		t.Errorf("findings before: %s", got)
	}
	act := before.Findings[2].Action
	if !strings.Contains(act, "from 300 to 1800 (+$97.50 per volume-month at $0.065 per IOPS-month)") || !strings.Contains(act, "iops: 1800") {
		t.Errorf("action %q", act)
	}
	// After: 630 of 1800 ops/s (35%); bandwidth 630 x 8 KiB of 62.5 MiB/s
	// (7.875%); the volume has room to spare.
	op2, bw2 := subject(t, after, "db1 volume:data ops_per_s"), subject(t, after, "db1 volume:data bytes_per_s")
	if op2.Summary.Box.Mean != 35 || !near(bw2.Summary.Box.Mean, 7.875, 1e-9) || op2.ESLMean != 1800 {
		t.Errorf("after: P_op %v (ESL %v), P_bw %v", op2.Summary.Box.Mean, op2.ESLMean, bw2.Summary.Box.Mean)
	}
	if got := classes(after); got != "cpu  over_provisioned; net:eth0  over_provisioned; volume:data  over_provisioned" {
		t.Errorf("findings after: %s", got)
	}
	// Cost: medium $0.18/h x 730 = 131.40; volume 100 x 0.125 + IOPS x 0.065.
	if before.Cost == nil || !near(before.Cost.MonthlyCost, 163.4, 1e-9) || !near(before.Cost.PerReqPerS, 163.4/220, 1e-12) {
		t.Fatalf("base cost %+v (%s)", before.Cost, before.CostNote)
	}
	// The highest achieved throughput and its level, open loop: the
	// fallback of a comparison without capacity (campaign.Compare).
	if before.Achieved != 220 || before.AchievedLevel != before.Level || !before.OpenLoop {
		t.Errorf("achieved %v at %v (capacity level %v), open loop %v", before.Achieved, before.AchievedLevel, before.Level, before.OpenLoop)
	}
	if len(a.Costs) != 1 {
		t.Fatalf("costs %+v, notes %v", a.Costs, a.Notes)
	}
	c := a.Costs[0].Comparison
	// B: 220 req/s per node; the largest cluster below 600 is 2 nodes.
	if c.A.Nodes != 1 || c.B.Nodes != 2 || !near(c.A.MonthlyCost, 260.9, 1e-9) || !near(c.B.PerReqPerS, 326.8/440, 1e-12) ||
		!near(c.Savings, 260.9/600-326.8/440, 1e-12) || !strings.Contains(a.Costs[0].Prices, "$0.065 per IOPS-month from the shipped lab catalog") {
		t.Errorf("comparison %+v, prices %q", c, a.Costs[0].Prices)
	}
	if len(a.Notes) != 0 || len(a.FromFiles) != 0 {
		t.Errorf("notes %v, models from files %v", a.Notes, a.FromFiles)
	}
}

// Imported data only: the models come from the command line (and are
// offered for saving), the iostat series is assessed, and the CloudWatch
// series that counts 16 KiB units fits a factor of 16 and a 16 KiB unit.
// Once saved, a later assessment without the file uses the stored copy.
func TestAssessImportedWithModelAndFit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "imported.db")
	if err := pressuretest.SynthImported(path); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "io1.yaml")
	if err := os.WriteFile(model, []byte("kind: single\nname: io1-300\nqualities: {ops_per_s: 300, bytes_per_s: 78643200}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openResults(t, path)
	a, err := FromResults(r, Options{Models: []ModelFile{{Host: "db1", Resource: "disk:xvdf", File: model}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Treatments) != 1 || !a.Treatments[0].Imported {
		t.Fatalf("treatments %+v", a.Treatments)
	}
	tr := a.Treatments[0]
	// 20 and 40 ops/s half of the time each: mean 30/300 = 10%; bandwidth
	// 30 x 256 KiB of 75 MiB/s = 10%.
	op := subject(t, tr, "db1 disk:xvdf @iostat ops_per_s")
	bw := subject(t, tr, "db1 disk:xvdf @iostat bytes_per_s")
	if !near(op.Summary.Box.Mean, 10, 1e-9) || !near(bw.Summary.Box.Mean, 10, 1e-9) || op.Summary.Box.P99 != 40.0/3 {
		t.Errorf("P_op %+v, P_bw %+v", op.Summary.Box, bw.Summary.Box)
	}
	if len(tr.Findings) != 1 || tr.Findings[0].Class != slp.OverProvisioned || !strings.Contains(tr.Findings[0].Action, "room to spare") {
		t.Errorf("findings %+v", tr.Findings)
	}
	if len(a.Fits) != 1 || !a.Fits[0].Auto || a.Fits[0].Provider != "db1/volume:vol-1@cloudwatch" {
		t.Fatalf("fits %+v", a.Fits)
	}
	f := a.Fits[0]
	if !near(f.Ops.Factor, 16, 1e-9) || f.Ops.Points != 10 || !near(f.Bytes.Factor, 1, 1e-9) || f.Unit.UnitKiB != 16 || f.Unit.RelRMS > 1e-9 {
		t.Errorf("fit ops %+v bytes %+v unit %+v", f.Ops, f.Bytes, f.Unit)
	}
	// Assessing wrote nothing; the model read from the file is offered.
	if ms, err := r.ESLModels(); err != nil || len(ms) != 0 {
		t.Fatalf("the assessment stored models %+v, %v", ms, err)
	}
	if len(a.FromFiles) != 1 || a.FromFiles[0].Resource != "disk:xvdf" || !strings.Contains(a.FromFiles[0].Origin, "io1.yaml") {
		t.Fatalf("models from files %+v", a.FromFiles)
	}
	if err := r.Store().PutESLModel(a.FromFiles[0]); err != nil { // what headroom assess --save does
		t.Fatal(err)
	}
	if err := os.Remove(model); err != nil {
		t.Fatal(err)
	}
	again, err := FromResults(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if op2 := subject(t, again.Treatments[0], "db1 disk:xvdf @iostat ops_per_s"); op2.Summary.Box.Mean != op.Summary.Box.Mean || !strings.Contains(op2.Model, "stored with the results") {
		t.Errorf("from the stored model: %+v", op2)
	}
}

// Bad settings are one clear sentence each.
func TestAssessRejectsBadSettings(t *testing.T) {
	r := synthLab(t)
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{OpSize: "largest"}, `op_size: "largest" is not a policy`},
		{Options{Thresholds: []float64{-1}}, "critical threshold -1 is not a positive SLP percentage"},
		{Options{Models: []ModelFile{{Host: "db1", Resource: "cpu", File: "/nonexistent/m.yaml"}}}, "/nonexistent/m.yaml"},
	} {
		if _, err := FromResults(r, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
	if _, err := Analyze(Input{Treatments: []TreatmentInput{{Name: "a"}}}, results.ESL{Base: "b"}); err == nil || !strings.Contains(err.Error(), `"b" is not a treatment with completed runs; name one of "a"`) {
		t.Errorf("base: %v", err)
	}
}

// Levels with the same mean throughput: the lowest level is reported,
// every time (the levels are kept in a map).
func TestBestThroughputTieIsDeterministic(t *testing.T) {
	var runs []store.Run
	for i, l := range []float64{100, 200, 400, 800} {
		tp := 150.0
		if l == 100 {
			tp = 90
		}
		runs = append(runs, store.Run{LevelIndex: i, Level: l, Summary: store.RunSummary{Throughput: tp}})
	}
	for range 50 {
		if best, level := bestThroughput(runs); best != 150 || level != 200 {
			t.Fatalf("best %v at level %v, want 150 at 200", best, level)
		}
	}
}
