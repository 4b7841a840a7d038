package store

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// The baseline and each window's pass limit and trend are written in
// their own tables and read back into Probe.Baseline and
// ProbeWindow.LimitUs/Trend; a file whose probe tables predate them reads
// as no baseline, an unknown limit and an unjudged trend.
func TestProbeBaselineAndRulesRoundTrip(t *testing.T) {
	s := newStore(t)
	id, err := s.StartProbe(Probe{Start: t0, Target: "http", ConfigJSON: `{}`, SLAPercentile: 90, SLAThreshold: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHistogram()
	_ = h.RecordValues(10200, 9)
	b := ProbeBaseline{Rate: 2, Duration: 5 * time.Second, Start: t0, Completed: 9, Errors: 1, LatencyUs: 10200, P90Us: 10300,
		RTTUs: 80, UnloadedUs: 10120, Tries: 2, Hist: h}
	if err := s.SetProbeBaseline(id, b); err != nil {
		t.Fatal(err)
	}
	w := testWindow(id, 0)
	w.LimitUs = 20200
	w.Trend = ProbeTrend{Seconds: 2, Judged: true, P: 0.0002, SlopeUs: 47600, RiseUs: 285700, Unstable: true}
	if err := s.AddProbeWindow(w); err != nil {
		t.Fatal(err)
	}
	ps, err := s.Probes()
	if err != nil || len(ps) != 1 || ps[0].Baseline == nil {
		t.Fatalf("%+v %v", ps, err)
	}
	got := *ps[0].Baseline
	if got.Rate != 2 || got.Duration != 5*time.Second || !got.Start.Equal(t0) || got.Completed != 9 || got.Errors != 1 ||
		got.LatencyUs != 10200 || got.P90Us != 10300 || got.RTTUs != 80 || got.UnloadedUs != 10120 || got.Tries != 2 || got.Hist.TotalCount() != 9 {
		t.Fatalf("baseline %+v", got)
	}
	ws, err := s.ProbeWindows(id)
	if err != nil || len(ws) != 1 {
		t.Fatalf("%v %v", ws, err)
	}
	if ws[0].LimitUs != 20200 || ws[0].Trend != w.Trend {
		t.Fatalf("limit %v trend %+v", ws[0].LimitUs, ws[0].Trend)
	}
	var buf bytes.Buffer
	if err := s.Export(&buf, "probe_window_rules", "csv"); err != nil || !strings.Contains(buf.String(), "285700") {
		t.Fatalf("export %q %v", buf.String(), err)
	}
	buf.Reset()
	if err := s.Export(&buf, "probe_baselines", "csv"); err != nil || !strings.Contains(buf.String(), "10120") {
		t.Fatalf("export %q %v", buf.String(), err)
	}

	// A file made before the two tables.
	for _, table := range []string{"probe_baseline", "probe_window_rule"} {
		if _, err := s.db.Exec("DROP TABLE " + table); err != nil {
			t.Fatal(err)
		}
	}
	ps, err = s.Probes()
	if err != nil || len(ps) != 1 || ps[0].Baseline != nil {
		t.Fatalf("old file: %+v %v", ps, err)
	}
	ws, err = s.ProbeWindows(id)
	if err != nil || len(ws) != 1 || !math.IsNaN(ws[0].LimitUs) || ws[0].Trend.Judged || !math.IsNaN(ws[0].Trend.P) {
		t.Fatalf("old file: %v %+v", err, ws)
	}
}
