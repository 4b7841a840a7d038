package bottleneck

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/bottleneck/bottlenecktest"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

func TestHostCapacities(t *testing.T) {
	caps := HostCapacities([]results.HostLimits{
		{Host: "app1", VCPUs: 0.25, NetworkMbit: 50},
		{Host: "db1", VCPUs: 1, NetworkMbit: 4, Volumes: []results.VolumeLimit{{Name: "data", Type: "piops", IOPS: 200, MiBps: 62.5}, {Name: "logs", IOPS: 100}}},
		{Host: "db2", Volumes: []results.VolumeLimit{{Name: "data", Type: "standard"}}},
	})
	// 50 Mbit/s = 6.25e6 bytes/s; 4 Mbit/s = 5e5; db2's link is unlimited.
	if caps.Link["app1/net:eth0"] != 6.25e6 || caps.Link["db1/net:eth0"] != 5e5 || len(caps.Link) != 2 {
		t.Fatalf("links %v", caps.Link)
	}
	// The first volume only (the lab throttles it); db2's is unthrottled.
	// One budget for reads and writes together, IOPS normalized.
	if caps.NormalizedIOPS["db1/volume:data"] != 200 || len(caps.NormalizedIOPS) != 1 {
		t.Fatalf("IOPS %v", caps.NormalizedIOPS)
	}
	if caps.Bandwidth["db1/volume:data"] != 62.5*(1<<20) || len(caps.Bandwidth) != 1 {
		t.Fatalf("bandwidth %v", caps.Bandwidth)
	}
	// A stalled volume has no capacity while stalled: its seconds are not
	// a utilisation.
	caps = HostCapacities([]results.HostLimits{{Host: "db1", Volumes: []results.VolumeLimit{{Name: "data", Type: "piops", IOPS: 200, MiBps: 62.5, Stalled: true}}}})
	if len(caps.NormalizedIOPS) != 0 || len(caps.Bandwidth) != 0 {
		t.Errorf("a stalled volume has capacities %v, %v", caps.NormalizedIOPS, caps.Bandwidth)
	}
}

// A lab volume's IOPS are one budget for reads and writes in normalized
// operations of 256 KiB (seed 000 §4.1), the quantity the pressure analysis
// judges: 60 reads/s and 40 writes/s of 4 KiB on a 200-IOPS volume use
// 50%; 30 reads/s of 1 MiB (4 normalized each) and 20 writes/s of 512 KiB
// (2 each, mean size 819.2 KiB -> 4 each) use 100 x 50 x 4 / 200 = 100%.
func TestNormalizedSharedUtilisation(t *testing.T) {
	var ss []monitor.Sample
	add := func(at time.Time, rd, wr, rdKiB, wrKiB float64) {
		for _, m := range []struct {
			metric string
			v      float64
		}{{monitor.DiskReadOps, rd}, {monitor.DiskWriteOps, wr}, {monitor.DiskReadBytes, rd * rdKiB * 1024}, {monitor.DiskWriteBytes, wr * wrKiB * 1024}} {
			ss = append(ss, monitor.Sample{Host: "db1", Resource: "volume:data", Metric: m.metric, Start: at, Period: time.Second, Value: m.v})
		}
		ss = append(ss, monitor.Sample{Host: "vm", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: at, Period: time.Second, Value: 99})
	}
	add(t0, 60, 40, 4, 4)
	add(t0.Add(time.Second), 30, 20, 1024, 512)
	add(t0.Add(2*time.Second), 0, 0, 0, 0)
	series, _, err := FromSamples(ss, Capacities{NormalizedIOPS: map[string]float64{"db1/volume:data": 200}}, Config{})
	if err != nil || len(series) != 2 || series[0].Resource != "db1/volume:data#iops" {
		t.Fatalf("normalized: %+v %v", series, err)
	}
	var got []float64
	for _, p := range series[0].Points {
		got = append(got, p.Util)
	}
	if len(got) != 3 || math.Abs(got[0]-50) > 1e-9 || math.Abs(got[1]-100) > 1e-9 || got[2] != 0 {
		t.Fatalf("utilisations %v, want [50 100 0]", got)
	}
	// Hosts keeps only the named hosts' resources.
	series, _, err = FromSamples(ss, Capacities{NormalizedIOPS: map[string]float64{"db1/volume:data": 200}}, Config{Hosts: []string{"db1"}})
	if err != nil || len(series) != 1 || series[0].Resource != "db1/volume:data#iops" {
		t.Fatalf("hosts filter: %+v %v", series, err)
	}
	res, err := Classify(series, Window{}, Config{Hosts: []string{"db1"}})
	// The 1 MiB second is saturated (100% > 95%): one of three intervals.
	if err != nil || len(res.Bottlenecks) != 1 || math.Abs(res.Resources[0].F-1.0/3) > 1e-9 || math.Abs(res.Resources[0].Mean-50) > 1e-9 {
		t.Fatalf("classification %+v %v", res, err)
	}
}

// A sample's capacity is the time-weighted mean of the limits in force
// during it: 300 ops/s in a second whose limit went from 200 to 400 at
// its middle used all of the 300 it could serve. Where the volume had no
// limit (unthrottled), its utilisation is unknown and left out.
func TestFromSamplesOverSchedule(t *testing.T) {
	sched := CapacitySchedule{
		{From: t0, Caps: Capacities{NormalizedIOPS: map[string]float64{"db1/volume:data": 200}}},
		{From: t0.Add(1500 * time.Millisecond), Caps: Capacities{NormalizedIOPS: map[string]float64{"db1/volume:data": 400}}},
		{From: t0.Add(3 * time.Second), Caps: Capacities{}},
	}
	var ss []monitor.Sample
	for i, v := range []float64{200, 200, 300, 200, 100} {
		ss = append(ss, monitor.Sample{Host: "db1", Resource: "volume:data", Metric: monitor.DiskReadOps,
			Start: t0.Add(time.Duration(i-1) * time.Second), Period: time.Second, Value: v})
	}
	series, notes, err := FromSamplesOver(ss, sched, Config{})
	if err != nil || len(series) != 1 {
		t.Fatalf("%+v %v", series, err)
	}
	// t0-1s: before the schedule; t0: 200/200; t0+1s: 300/300; t0+2s:
	// 200/400; t0+3s: unthrottled.
	var got []float64
	for _, p := range series[0].Points {
		got = append(got, p.Util)
	}
	if len(got) != 3 || got[0] != 100 || got[1] != 100 || got[2] != 50 {
		t.Fatalf("utilisations %v", got)
	}
	if len(notes) != 1 || notes[0] != "db1/volume:data#iops: 2 of its 5 samples fell where it had no capacity (unlimited), so they are left out" {
		t.Fatalf("notes %q", notes)
	}
}

// limitChangeStore is a lab campaign of one run: db1's volume is limited
// to 200 IOPS until a set_volume event 10 s into the 20 s measured phase
// doubles it, while the server keeps reading at 200 ops/s (as if the load
// could not use more). Its CPU idles at 20%.
func limitChangeStore(t *testing.T) (*results.Results, time.Time, time.Time) {
	t.Helper()
	st := resultstest.Create(t, "", store.Campaign{Name: "iops", CreatedAt: t0})
	must := resultstest.Must(t)
	facts := results.Treatment{Load: results.Load{Model: "open", Levels: []float64{300}, Repetitions: 1, Measure: 20 * time.Second, Interval: time.Second},
		Target:   results.Target{Type: "postgres", Hosts: []string{"db1"}, Managed: true},
		Analysis: results.Analysis{Bottleneck: results.Bottleneck{Hosts: []string{"db1"}}},
		Lab:      &results.LabFacts{Name: "iops", Hosts: []string{"db1"}},
		Events:   []results.ScheduledEvent{{At: 10 * time.Second, Action: "set_volume", Host: "db1"}}}
	row, err := facts.Row()
	must(err)
	must(st.PutTreatment(row))
	up := results.HostLimits{Host: "db1", From: t0, Lab: "iops", Type: "small", VCPUs: 0.5,
		Volumes: []results.VolumeLimit{{Name: "data", Type: "piops", SizeGiB: 100, IOPS: 200}}, Cause: "up"}
	must(st.AddEvent(store.Event{Time: t0, Kind: results.EventLab, Detail: bottlenecktest.LabEvent("iops", up)}))
	must(bottlenecktest.AddLimits(st, up))

	start, ms := t0.Add(time.Second), t0.Add(5*time.Second)
	me := ms.Add(20 * time.Second)
	change := ms.Add(10 * time.Second)
	id, err := st.StartRun(store.Run{Model: "open", Level: 300, Repetition: 1, Start: start})
	must(err)
	raised := up
	raised.From, raised.Cause = change, "set_volume"
	raised.Volumes = []results.VolumeLimit{{Name: "data", Type: "piops", SizeGiB: 100, IOPS: 400}}
	must(st.AddEvent(store.Event{RunID: id, Time: change, Kind: results.EventFault, Detail: `{"action":"set_volume","host":"db1","detail":"db1 volume: iops 400, MiB/s 0"}`}))
	must(bottlenecktest.AddLimits(st, raised))
	var ss []monitor.Sample
	for at := start; at.Before(me); at = at.Add(time.Second) {
		ss = append(ss,
			monitor.Sample{Host: "db1", Resource: "volume:data", Metric: monitor.DiskReadOps, Start: at, Period: time.Second, Value: 200, Source: monitor.SourceSampled},
			monitor.Sample{Host: "db1", Resource: "volume:data", Metric: monitor.DiskWriteOps, Start: at, Period: time.Second, Value: 3, Source: monitor.SourceSampled},
			monitor.Sample{Host: "db1", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: at, Period: time.Second, Value: 20, Source: monitor.SourceSampled})
	}
	must(st.AddSamples(id, ss))
	must(st.FinishRun(id, store.StatusCompleted, "", me.Add(time.Second), store.RunSummary{MeasureStart: ms, MeasureEnd: me, MeasureSecs: 20, Throughput: 290}))
	undo := up
	undo.From, undo.Cause = me.Add(2*time.Second), "undo"
	must(bottlenecktest.AddLimits(st, undo))
	r, err := results.New(st)
	must(err)
	return r, change, me
}

// After a set_volume event mid-run, the new limit applies from that
// moment: the volume that was saturated at 200 IOPS is half used at 400,
// and the classification sees it saturated in half of the intervals.
func TestLimitChangeMidRun(t *testing.T) {
	r, change, end := limitChangeStore(t)
	run := r.CompletedRuns("")[0]
	series, w, _, err := RunSeries(r, run, Config{Lambda: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var vol *Series
	for i := range series {
		if series[i].Resource == "db1/volume:data#iops" {
			vol = &series[i]
		}
	}
	if vol == nil {
		t.Fatalf("no volume utilisation in %+v", series)
	}
	// The answer, computed from the design: 200 reads/s and 3 writes/s of 4
	// KiB (one normalized op each; no byte counts) share one budget: 203
	// of 200 before the change, of 400 after it, saturated (> 95%) where
	// the ratio is.
	saturated, observed := 0, 0
	for _, p := range vol.Points {
		limit := 200.0
		if !p.Start.Before(change) {
			limit = 400
		}
		if want := 100 * 203 / limit; math.Abs(p.Util-want) > 1e-9 {
			t.Errorf("utilisation at +%v = %v, want %v", p.Start.Sub(w.From), p.Util, want)
		}
		if !p.Start.Before(w.From) && p.Start.Before(end) {
			observed++
			if 100*203/limit > DefaultAlpha {
				saturated++
			}
		}
	}
	wantF := float64(saturated) / float64(observed)
	if observed != 20 || math.Abs(wantF-0.5) > 1e-9 {
		t.Fatalf("design: %d of %d intervals saturated", saturated, observed)
	}

	a, err := FromResults(r)
	if err != nil {
		t.Fatal(err)
	}
	ra := a.Treatments[0].Runs[0]
	if ra.Err != "" {
		t.Fatal(ra.Err)
	}
	var st *ResourceStat
	for i := range ra.Result.Resources {
		if ra.Result.Resources[i].Resource == "db1/volume:data#iops" {
			st = &ra.Result.Resources[i]
		}
	}
	if want := (101.5 + 50.75) / 2; st == nil || math.Abs(st.F-wantF) > 1e-9 || st.Saturation != SaturationPartial || math.Abs(st.Mean-want) > 1e-9 {
		t.Fatalf("volume %+v; want f_R = %v, partially saturated, mean %v%%", st, wantF, want)
	}
	if len(ra.Result.Bottlenecks) != 1 || ra.Result.Bottlenecks[0].Resources[0] != "db1/volume:data#iops" || math.Abs(ra.Result.Bottlenecks[0].F-wantF) > 1e-9 {
		t.Fatalf("bottlenecks %+v (%s)", ra.Result.Bottlenecks, ra.Result.Finding)
	}
	// Judged by the limit the lab came up with throughout (the first
	// schema's analysis), the volume would have been fully saturated.
	samples, err := r.Samples(results.SampleFilter{RunID: run.ID, From: w.From.Add(-time.Second), To: w.To})
	if err != nil {
		t.Fatal(err)
	}
	fixed, _, err := FromSamples(samples, Capacities{NormalizedIOPS: map[string]float64{"db1/volume:data": 200}}, Config{Hosts: []string{"db1"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Classify(fixed, w, Config{})
	if err != nil || res.Bottlenecks[0].F != 1 {
		t.Fatalf("with a fixed limit: %+v %v", res.Bottlenecks, err)
	}
}

// The committed schema-1 lab store (internal/results/testdata/v1/lab.db)
// still analyses: its set_volume event raised db1's volume from 200 to
// 400 IOPS 2 s into the measured phase, and the run's capacities follow.
func TestV1LabStore(t *testing.T) {
	r := resultstest.OpenV1(t, "lab.db")
	a, err := FromResults(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Treatments) != 1 || len(a.Treatments[0].Runs) != 1 || a.Map != nil {
		t.Fatalf("analysis %+v", a)
	}
	ra := a.Treatments[0].Runs[0]
	if ra.Err != "" || ra.Result.Intervals == 0 {
		t.Fatalf("run not classified: %q %+v", ra.Err, ra.Result)
	}
	run := ra.Run
	sched := RunCapacities(r, run, run.Summary.MeasureStart, run.Summary.MeasureEnd)
	if len(sched) != 2 || sched[0].Caps.NormalizedIOPS["db1/volume:data"] != 200 || sched[1].Caps.NormalizedIOPS["db1/volume:data"] != 400 {
		t.Fatalf("schedule %+v", sched)
	}
	// The event gave MiB/s 0, which the lab reads as "keep": 320 MiB/s
	// throughout.
	for _, st := range sched {
		if st.Caps.Bandwidth["db1/volume:data"] != 320*(1<<20) {
			t.Errorf("bandwidth from %v: %v", st.From, st.Caps.Bandwidth)
		}
	}
	for _, n := range ra.Result.Notes {
		if strings.Contains(n, "no capacity") {
			t.Errorf("note %q", n)
		}
	}
	if d := sched[1].From.Sub(run.Summary.MeasureStart); d < 1500*time.Millisecond || d > 2500*time.Millisecond {
		t.Errorf("the limit changed %v into the measured phase; the event was at 2s", d)
	}
	// db1 is a "small" host: 25 Mbit/s, so its link's utilisation is its
	// busier direction over 3.125e6 bytes/s.
	tx, err := r.Samples(results.SampleFilter{RunID: run.ID, Host: "db1", Resource: "net:eth0", Metric: monitor.NetTxBytes})
	if err != nil || len(tx) == 0 {
		t.Fatalf("samples %v", err)
	}
	found := false
	for _, s := range ra.Result.Resources {
		if s.Resource == "db1/net:eth0" {
			found = true
			if s.Mean <= 0 || s.Mean > 100*200e3/3.125e6 {
				t.Errorf("db1's link at %.2f%% of 25 Mbit/s; it carried under 200 kB/s", s.Mean)
			}
		}
	}
	if !found {
		t.Fatalf("no link utilisation in %+v", ra.Result.Resources)
	}
}
