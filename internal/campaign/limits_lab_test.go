package campaign

import (
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// The designed cause: PostgreSQL on a lab host with too little memory for
// its table (a medium host, a whole vCPU, so that its CPU has room after
// the raise: on a small one a CI run of 2026-12-07 read and wrote 205/s
// before the raise and only 216/s after, for a cause it did not log) reads from a 200-IOPS volume; halfway through the measured
// phase a set_volume event raises the volume to 400 IOPS while 300 reads/s
// keep arriving. Before the event the volume serves about 200 reads and
// writes per second together, at its limit; after it, well above that. The
// results record the limit change at its moment, and both the bottleneck
// analysis (utilisation against the IOPS limit in force) and the pressure
// analysis (SLP = observed / ESL in force) judge each second by the limit
// of that second, which the test checks against the raw volume counters.
// Both count a volume's operations the same way: reads + writes in
// normalized operations against one budget, as the lab enforces it.
func TestSetVolumeMidRunChangesTheLimitTheAnalysesUse(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	dir := labtest.SearchableDir(t)
	s := parse(t, dir, `
name: lab-set-volume
lab:
  name: t-camp-setvol
  hosts:
    - {name: db1, type: medium, memory_mib: 96, volumes: [{name: data, type: piops, size_gib: 20, iops: 200}]}
target: {type: postgres, managed: {host: db1, settings: {shared_buffers: 16MB}}}
workload: {ycsb: c, record_count: 100000, request_distribution: uniform}
load: {model: open, arrival: constant, rates: [600], max_in_flight: 128}
phases: {warmup: 3s, measure: 16s}
events:
  - {at: 8s, action: set_volume, host: db1, iops: 400}
monitor: {disks: [], interfaces: []}
output: out
`)
	_, st := start(t, s)
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	runs := r.CompletedRuns("")
	if len(runs) != 1 {
		t.Fatalf("completed runs: %+v", runs)
	}
	run := runs[0]
	ms := run.Summary.MeasureStart

	// The limit series: up at 200, 400 from the event, 200 again after the run.
	var changedAt time.Time
	for _, h := range r.HostLimitSeries("db1") {
		if v, _ := h.Volume("data"); h.Cause == "set_volume" && v.IOPS == 400 {
			changedAt = h.From
		}
	}
	if changedAt.IsZero() || changedAt.Before(ms.Add(7*time.Second)) || changedAt.After(ms.Add(10*time.Second)) {
		t.Fatalf("no set_volume limit change about 8 s into the measured phase (starts %v): %+v", ms, r.HostLimitSeries("db1"))
	}
	if h, ok := r.HostLimits("db1", run.Summary.MeasureEnd.Add(time.Minute)); !ok || iopsOf(h) != 200 {
		t.Errorf("after the run the volume should be back at 200 IOPS: %+v", h)
	}
	// Seconds wholly before the event, and from one second after it (the
	// page cache and queue settle) to the end.
	before := func(start time.Time, period time.Duration) bool {
		return !start.Before(ms.Add(time.Second)) && !start.Add(period).After(changedAt)
	}
	after := func(start time.Time, period time.Duration) bool {
		return !start.Before(changedAt.Add(time.Second)) && !start.Add(period).After(run.Summary.MeasureEnd)
	}

	// The volume's own counters, second by second: what each analysis
	// judges, computed here from the raw samples.
	raw, err := r.Samples(results.SampleFilter{RunID: run.ID, Host: "db1", Resource: monitor.ResourceVolumePrefix + "data"})
	if err != nil {
		t.Fatal(err)
	}
	opsAt := func(at time.Time) (reads, writes float64, ok bool) {
		var got int
		for _, x := range raw {
			if at.Before(x.Start) || !at.Before(x.Start.Add(x.Period)) {
				continue
			}
			switch x.Metric {
			case monitor.DiskReadOps:
				reads, got = x.Value, got+1
			case monitor.DiskWriteOps:
				writes, got = x.Value, got+1
			}
		}
		return reads, writes, got == 2
	}
	limitAt := func(at time.Time) float64 {
		h, _ := r.HostLimits("db1", at)
		return iopsOf(h)
	}
	var rb, ra, wb, wa []float64 // reads and writes per second before and after
	for _, x := range raw {
		if x.Metric != monitor.DiskReadOps && x.Metric != monitor.DiskWriteOps {
			continue
		}
		bef, aft := &rb, &ra
		if x.Metric == monitor.DiskWriteOps {
			bef, aft = &wb, &wa
		}
		if before(x.Start, x.Period) {
			*bef = append(*bef, x.Value)
		} else if after(x.Start, x.Period) {
			*aft = append(*aft, x.Value)
		}
	}
	// Reads and writes share the volume's one budget (PostgreSQL writes
	// too, after population: hint bits, checkpoints), so the designed cause
	// is on their sum: at the limit before the event, well above it after.
	mb, ma := mean(rb)+mean(wb), mean(ra)+mean(wa)
	t.Logf("volume reads: %.0f/s over %d s before the event, %.0f/s over %d s after; writes %.0f/s and %.0f/s", mean(rb), len(rb), mean(ra), len(ra), mean(wb), mean(wa))
	// The lab follows the shared budget by feedback every 250 ms, and a
	// database writes in bursts: over a few seconds the sum lands within
	// about 15% of the budget (docs/lab.md), both before the event (200)
	// and after it (400; a CI run measured 448 over 3 s). The feedback's
	// gain, shrunk by write bursts the throttle does not hold back, needs a
	// few seconds to grow back after a raise: with a 10 s phase a CI run
	// measured 200 over the 3 s after it, so each side now has 7 s. Runs
	// here measured 203 and 232 before, 312 and 318 after.
	// The offered rate must want well over the raised budget, or "after"
	// measures the workload's demand instead of the limit: at 300 req/s
	// the CI rehearsal of 2026-12-07 14:00 read and wrote only 256/s after
	// the raise (0.85 operations per request, as the page cache in the
	// host's 96 MiB allowed that day), 1.16 times the 220 before, and the
	// test failed. At 600 req/s a run at 15:05 the same day read and wrote
	// 219/s before and 325/s after (1.48 times).
	if len(rb) < 2 || len(ra) < 2 || mb < 170 || mb > 245 || ma < 1.25*mb || ma > 1.15*400 {
		// What else could have held the server back after the raise: its
		// CPU (a share of its quota) and the requests it completed.
		cpu, err := r.Samples(results.SampleFilter{RunID: run.ID, Host: "db1", Resource: monitor.ResourceCPU})
		if err != nil {
			t.Fatal(err)
		}
		var cb, ca []float64
		for _, x := range cpu {
			if x.Metric != monitor.CPUUtilPct {
				continue
			}
			if before(x.Start, x.Period) {
				cb = append(cb, x.Value)
			} else if after(x.Start, x.Period) {
				ca = append(ca, x.Value)
			}
		}
		t.Fatalf("the designed cause did not happen: reads + writes %.0f/s before (want about 200, the limit) and %.0f/s after (want well above it, at most the new 400); db1's CPU %.0f%% before and %.0f%% after; %d requests completed, %d dropped",
			mb, ma, mean(cb), mean(ca), run.Summary.Completed, run.Summary.Dropped)
	}

	// Bottleneck: reads + writes against the one budget in force (8 KiB
	// pages: one normalized operation each), as for the pressure below.
	series, _, _, err := bottleneck.RunSeries(r, run, bottleneck.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var util []bottleneck.Point
	for _, x := range series {
		if x.Resource == "db1/volume:data#iops" {
			util = x.Points
		}
	}
	if len(util) == 0 {
		t.Fatalf("no IOPS utilisation of db1's volume among %d series", len(series))
	}
	checked := map[string]int{}
	for _, p := range util {
		mid := p.Start.Add(p.Period / 2)
		rd, wr, ok := opsAt(mid)
		if !ok || !(before(p.Start, p.Period) || after(p.Start, p.Period)) {
			continue
		}
		want := 100 * (rd + wr) / limitAt(mid)
		if math.Abs(p.Util-want) > 3 {
			t.Errorf("bottleneck utilisation at %v = %.1f%%; reads %.0f + writes %.0f against the %.0f IOPS in force give %.1f%%", mid, p.Util, rd, wr, limitAt(mid), want)
		}
		checked["bottleneck "+phaseOf(after(p.Start, p.Period))]++
	}

	// Pressure: SLP = observed ops (reads + writes) / the ESL of the
	// volume's limits in force (seed-digest §4, single-valued ESL).
	a, err := pressure.FromResults(r, pressure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tr := range a.Treatments {
		for _, sub := range tr.Subjects {
			if sub.Host != "db1" || sub.Resource != monitor.ResourceVolumePrefix+"data" || sub.Quality != esl.OpsPerS {
				continue
			}
			found = true
			for _, p := range sub.Series {
				mid := p.Start.Add(p.Period / 2)
				rd, wr, ok := opsAt(mid)
				if !ok || !(before(p.Start, p.Period) || after(p.Start, p.Period)) {
					continue
				}
				want := 100 * (rd + wr) / limitAt(mid)
				if math.Abs(p.Value-want) > 3 {
					t.Errorf("SLP at %v = %.1f%%; reads %.0f + writes %.0f against the %.0f IOPS in force give %.1f%%", mid, p.Value, rd, wr, limitAt(mid), want)
				}
				checked["pressure "+phaseOf(after(p.Start, p.Period))]++
			}
		}
	}
	if !found {
		t.Fatalf("no ops/s pressure of db1's volume; notes %v", a.Notes)
	}
	t.Logf("seconds checked: %v", checked)
	for _, k := range []string{"bottleneck before", "bottleneck after", "pressure before", "pressure after"} {
		if checked[k] < 2 {
			t.Errorf("only %d seconds checked for %s the event", checked[k], k)
		}
	}
}

func phaseOf(after bool) string {
	if after {
		return "after"
	}
	return "before"
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(max(len(xs), 1))
}

func iopsOf(h results.HostLimits) float64 {
	v, _ := h.Volume("data")
	return v.IOPS
}
