package pressure

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/pressure/pressuretest"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// limitChangeStore writes a campaign as today's runner does (treatment
// facts, host limit rows, the lab event with its catalog): one 60 s run on
// db1, whose 100 GiB piops volume is provisioned at 300 IOPS until a
// set_volume event doubles it to 600 at 30 s into the measured phase; the
// volume serves 150 reads/s of 4 KiB throughout. It returns the moment
// of the change.
func limitChangeStore(t *testing.T, path string) time.Time {
	t.Helper()
	start := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	st, err := store.Create(path, store.Campaign{Name: "iops-double", SpecYAML: "name: iops-double\n", CreatedAt: start})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tr := results.Treatment{Name: "", Load: results.Load{Model: "open", Levels: []float64{200}, Repetitions: 1, Measure: time.Minute, Interval: time.Second},
		Workload: results.Workload{Kind: "ycsb", YCSB: "c", Mix: map[string]float64{"read": 1}},
		Target:   results.Target{Type: "postgres", Hosts: []string{"db1"}, Managed: true},
		Events:   []results.ScheduledEvent{{At: 30 * time.Second, Action: "set_volume", Host: "db1"}},
		Lab:      &results.LabFacts{Name: "double", Hosts: []string{"db1"}}}
	row, err := tr.Row()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutTreatment(row); err != nil {
		t.Fatal(err)
	}
	up := start.Add(-10 * time.Second)
	h := pressuretest.SynthHost(300)
	h.Lab, h.From, h.Cause = "double", up, "up"
	cat := &results.Catalog{
		InstanceTypes: []results.InstanceType{{Name: "medium", VCPUs: 1, MemoryMiB: 1024, NetworkMbit: 50, VolumeMiBps: 62.5, PricePerHour: 0.18}},
		VolumeTypes:   []results.VolumeType{{Name: "piops", IOPSPerGiB: 30, MaxIOPS: 20000, DefaultIOPS: 300, MaxMiBps: 320, PricePerGiBMonth: 0.125, PricePerIOPSMonth: 0.065}}}
	if err := st.AddEvent(store.Event{Time: up, Kind: results.EventLab, Detail: pressuretest.LabEvent("double", []results.HostLimits{h}, cat)}); err != nil {
		t.Fatal(err)
	}
	measure := start.Add(time.Second)
	change := measure.Add(30 * time.Second)
	end := measure.Add(time.Minute)
	doubled := h
	doubled.Volumes = append([]results.VolumeLimit(nil), h.Volumes...)
	doubled.Volumes[0].IOPS, doubled.From, doubled.Cause = 600, change, "set_volume"
	undone := h
	undone.From, undone.Cause = end.Add(time.Second), "undo"
	var rows []store.HostLimitRow
	for _, hl := range []results.HostLimits{h, doubled, undone} {
		r, err := hl.Row()
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if err := st.AddHostLimits(rows); err != nil {
		t.Fatal(err)
	}
	id, err := st.StartRun(store.Run{Treatment: "", Model: "open", Level: 200, Repetition: 1, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddEvent(store.Event{RunID: id, Time: change, Kind: results.EventFault,
		Detail: `{"at":"30s","action":"set_volume","host":"db1","detail":"db1 volume: iops 600, MiB/s 62.5"}`}); err != nil {
		t.Fatal(err)
	}
	var samples []monitor.Sample
	for sec := -1; sec < 60; sec++ {
		at := measure.Add(time.Duration(sec) * time.Second)
		mk := func(metric string, v float64) monitor.Sample {
			return monitor.Sample{Host: "db1", Resource: "volume:data", Metric: metric, Start: at, Period: time.Second, Value: v, Source: monitor.SourceSampled}
		}
		samples = append(samples, mk(monitor.DiskReadOps, 150), mk(monitor.DiskWriteOps, 0), mk(monitor.DiskReadBytes, 150*4096), mk(monitor.DiskWriteBytes, 0))
	}
	if err := st.AddSamples(id, samples); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: 200 * 60, Completed: 200 * 60,
		MeasureStart: measure, MeasureEnd: end, MeasureSecs: 60, Throughput: 200}); err != nil {
		t.Fatal(err)
	}
	return change
}

// A set_volume event that doubles the IOPS halfway through the run, with
// the observed ops/s unchanged: every interval is judged against the
// limit in force at its start, so the SLP of ops/s halves at the change.
func TestPressureFollowsTheLimitsInForce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	change := limitChangeStore(t, path)
	a, err := FromResults(openResults(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Treatments) != 1 {
		t.Fatalf("treatments %+v", a.Treatments)
	}
	op := subject(t, a.Treatments[0], "db1 volume:data ops_per_s")
	// SLP(o) = 100 o / s (seed-digest §4) with o = 150 ops/s and s the
	// provisioned IOPS at 4 KiB (one normalized op each, far below the
	// bandwidth caps): 300 before the change, 600 after.
	wantBefore, wantAfter := 100*150.0/300, 100*150.0/600
	if len(op.Series) != 60 {
		t.Fatalf("%d points, want the 60 measured seconds", len(op.Series))
	}
	for _, p := range op.Series {
		want := wantBefore
		if !p.Start.Before(change) {
			want = wantAfter
		}
		if !near(p.Value, want, 1e-9) {
			t.Errorf("SLP at %s: %v, want %v", p.Start.Sub(change), p.Value, want)
		}
	}
	if !near(op.Summary.Box.Mean, (wantBefore+wantAfter)/2, 1e-9) || op.Summary.Box.P1 != wantAfter || op.Summary.Box.P99 != wantBefore {
		t.Errorf("box %+v", op.Summary.Box)
	}
	if !math.IsNaN(op.ESLMean) || !strings.Contains(op.ESL, "300 ops/s") || !strings.Contains(op.ESL, "then 600 ops/s") {
		t.Errorf("ESL %v %q", op.ESLMean, op.ESL)
	}
	if !strings.Contains(op.Model, "from the lab event: piops volume data, 100 GiB, 300 IOPS") || !strings.Contains(op.Model, "after set_volume at 09:00:31.000: piops volume data, 100 GiB, 600 IOPS") {
		t.Errorf("model %q", op.Model)
	}
	var spans []string
	for _, m := range a.Treatments[0].Models {
		if m.Resource == "volume:data" {
			spans = append(spans, m.From.Format("15:04:05"))
		}
	}
	if strings.Join(spans, ",") != "08:59:50,09:00:31" {
		t.Errorf("volume model spans from %v", spans)
	}
	// The cost and the actions price the volume as the lab brought it up.
	if c := a.Treatments[0].Cost; c == nil || c.IOPS != 300 {
		t.Errorf("cost %+v", c)
	}
}

// The committed schema-1 lab store: a set_volume event halfway through
// the measured phase raised the volume's IOPS from 200 to 400. The
// volume's model changes at that moment; its reads were all served from
// the cache (0 ops/s), so the pressure is checked on the same intervals
// with a load of 100 reads/s put in: 50% before, 25% after.
func TestPressureOnV1LabStoreSeesTheLimitChange(t *testing.T) {
	r := resultstest.OpenV1(t, "lab.db")
	evs, err := r.Events(-1)
	if err != nil {
		t.Fatal(err)
	}
	var change time.Time
	for _, e := range evs {
		if e.Kind == results.EventFault {
			change = e.Time
		}
	}
	in, set, err := Gather(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Treatments) != 1 {
		t.Fatalf("treatments %+v", in.Treatments)
	}
	k := Key{"db1", "volume:data"}
	tl := in.Treatments[0].Models[k]
	if len(tl) != 2 || !tl[1].From.Equal(change) {
		t.Fatalf("volume models %+v; want two, the second from the set_volume at %s", tl, change)
	}
	for i, iops := range []float64{200, 400} {
		if e, err := tl[i].Model.ESL(esl.OpsPerS, 4); err != nil || e.Mean() != iops {
			t.Errorf("span %d: ESL %v, %v; want %g ops/s", i, e.Mean(), err, iops)
		}
	}
	if !strings.Contains(tl[1].Origin, "after set_volume") {
		t.Errorf("origin %q", tl[1].Origin)
	}
	samples := in.Treatments[0].Samples[k]
	for i, s := range samples {
		switch s.Metric {
		case monitor.DiskReadOps:
			samples[i].Value = 100
		case monitor.DiskReadBytes:
			samples[i].Value = 100 * 4096
		}
	}
	a, err := Analyze(in, set)
	if err != nil {
		t.Fatal(err)
	}
	op := subject(t, a.Treatments[0], "db1 volume:data ops_per_s")
	after := 0
	for _, p := range op.Series {
		want := 100 * 100 / 200.0
		if !p.Start.Before(change) {
			want, after = 100*100/400.0, after+1
		}
		if !near(p.Value, want, 1e-9) {
			t.Errorf("SLP at %s: %v, want %v", p.Start.Format(time.RFC3339Nano), p.Value, want)
		}
	}
	if after == 0 || after == len(op.Series) || !math.IsNaN(op.ESLMean) || !strings.Contains(op.ESL, "200 ops/s") || !strings.Contains(op.ESL, "then 400 ops/s") {
		t.Errorf("%d of %d points after the change at %s; ESL %v %q", after, len(op.Series), change, op.ESLMean, op.ESL)
	}
}
