package results_test

import (
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// The stores under testdata/v1 were written by Headroom before the fact
// tables existed (schema 1, commit ca9e32d), from the specs beside them.
func TestV1TreatmentsFromSpecText(t *testing.T) {
	r := resultstest.OpenV1(t, "treatments.db")
	if legacy, note := r.Legacy(); !legacy || note != "" {
		t.Fatalf("Legacy() = %v, %q; want a legacy store read without notes", legacy, note)
	}
	ts := r.Treatments()
	if len(ts) != 2 || ts[0].Name != "small" || ts[1].Name != "big" {
		t.Fatalf("treatments = %+v; want small, big", ts)
	}
	small, big := ts[0], ts[1]
	if small.Load.Model != "open" || small.Load.Arrival != "poisson" || len(small.Load.Levels) != 2 ||
		small.Load.Levels[1] != 2000 || small.Load.Repetitions != 2 || small.Load.Measure != 3*time.Second {
		t.Errorf("small load = %+v", small.Load)
	}
	if small.Workload.RecordCount != 2000 || big.Workload.RecordCount != 4000 {
		t.Errorf("record counts = %d, %d; want 2000, 4000 (big sets workload.record_count)", small.Workload.RecordCount, big.Workload.RecordCount)
	}
	if share, ok := small.Workload.ReadShare(); !ok || share != 0.95 {
		t.Errorf("YCSB B read share = %v, %v; want 0.95", share, ok)
	}
	if s := r.SLO("small"); s == nil || s.Percentile != 95 || s.Threshold != 5*time.Millisecond || s.Op != "read" {
		t.Errorf("SLO(small) = %+v", s)
	}
	if s := r.SLO("big"); s == nil || s.Threshold != 8*time.Millisecond {
		t.Errorf("SLO(big) = %+v; want the treatment's 8ms", s)
	}
	if !small.Target.InProcess || small.Target.Type != "sqlite" {
		t.Errorf("target = %+v", small.Target)
	}
	if len(big.Set) != 2 || big.Set[0].Path != "slo.threshold" || big.Set[0].Value != "8ms" {
		t.Errorf("big.Set = %+v", big.Set)
	}
	for _, name := range []string{"small", "big"} {
		runs := r.CompletedRuns(name)
		if len(runs) != 4 {
			t.Fatalf("CompletedRuns(%s) = %d runs; want 2 levels x 2 repetitions", name, len(runs))
		}
		for i := 1; i < len(runs); i++ {
			a, b := runs[i-1], runs[i]
			if a.LevelIndex > b.LevelIndex || a.LevelIndex == b.LevelIndex && a.Repetition >= b.Repetition {
				t.Errorf("runs out of level/repetition order: %+v then %+v", a, b)
			}
		}
	}
}

func TestV1ClosedLoop(t *testing.T) {
	r := resultstest.OpenV1(t, "closed.db")
	ts := r.Treatments()
	if len(ts) != 1 || ts[0].Name != "" {
		t.Fatalf("treatments = %+v; want one unnamed", ts)
	}
	l := ts[0].Load
	if l.Model != "closed" || len(l.Levels) != 2 || l.Levels[1] != 4 || l.Open() || l.LevelUnit() != "clients" {
		t.Errorf("load = %+v", l)
	}
	if ts[0].Workload.Mix["update"] != 0.5 {
		t.Errorf("mix = %v", ts[0].Workload.Mix)
	}
}

// The v1 lab store had a set_volume event 2 s into the measured phase that
// raised db1's volume from 200 to 400 IOPS; the limit series rebuilt from
// the events must have the change at the event's time and the defined
// limit back after the run's undo.
func TestV1HostLimitsFollowEvents(t *testing.T) {
	r := resultstest.OpenV1(t, "lab.db")
	series := r.HostLimitSeries("db1")
	if len(series) != 3 {
		t.Fatalf("db1 series = %+v; want up, set_volume, undo", series)
	}
	iops := func(h results.HostLimits) float64 { v, _ := h.Volume("data"); return v.IOPS }
	if series[0].Cause != "up" || iops(series[0]) != 200 || series[0].Type != "small" || series[0].VCPUs != 0.5 {
		t.Errorf("first entry = %+v", series[0])
	}
	if series[1].Cause != "set_volume" || iops(series[1]) != 400 {
		t.Errorf("second entry = %+v", series[1])
	}
	if series[2].Cause != "undo" || iops(series[2]) != 200 {
		t.Errorf("third entry = %+v", series[2])
	}
	runs := r.CompletedRuns("")
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	ms := runs[0].Summary.MeasureStart
	if h, ok := r.HostLimits("db1", ms.Add(time.Second)); !ok || iops(h) != 200 {
		t.Errorf("limits 1 s into the measured phase = %+v; want 200 IOPS", h)
	}
	if h, ok := r.HostLimits("db1", ms.Add(3*time.Second)); !ok || iops(h) != 400 {
		t.Errorf("limits 3 s into the measured phase = %+v; want 400 IOPS", h)
	}
	if _, ok := r.HostLimits("db1", series[0].From.Add(-time.Second)); ok {
		t.Error("limits before the lab came up should not exist")
	}
	tr := r.Treatments()[0]
	if tr.Lab == nil || len(tr.Lab.Hosts) != 1 || tr.Lab.Hosts[0] != "db1" || len(tr.Target.Hosts) != 1 || tr.Target.Hosts[0] != "db1" {
		t.Errorf("lab/target = %+v / %+v", tr.Lab, tr.Target)
	}
	labs := r.Labs()
	if len(labs) != 1 || labs[0].Catalog == nil {
		t.Fatalf("labs = %+v", labs)
	}
	if it, ok := labs[0].Catalog.Instance("small"); !ok || it.PricePerHour != 0.09 {
		t.Errorf("catalog small = %+v", it)
	}
	if c := series[0].HourlyCost(); c <= series[0].PricePerHour {
		t.Errorf("hourly cost %v should include the volume's monthly price", c)
	}
}

func TestReadShareCountsReadModifyWriteAsAReadAndAWrite(t *testing.T) {
	for _, c := range []struct {
		mix  map[string]float64
		want float64
	}{
		{map[string]float64{"read": 0.5, "update": 0.5}, 0.5},
		{map[string]float64{"scan": 0.95, "insert": 0.05}, 0.95},
		// 0.5 reads + 0.5 x (1 read + 1 write): 1 read of 1.5 operations.
		{map[string]float64{"read": 0.5, "read_modify_write": 0.5}, 1 / 1.5},
	} {
		if got, ok := (results.Workload{Mix: c.mix}).ReadShare(); !ok || got != c.want {
			t.Errorf("ReadShare(%v) = %v, %v; want %v", c.mix, got, ok, c.want)
		}
	}
	if _, ok := (results.Workload{}).ReadShare(); ok {
		t.Error("an unknown mix has no read share")
	}
}
