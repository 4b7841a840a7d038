package store

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func testWindow(probeID int64, seq int) ProbeWindow {
	h := NewHistogram()
	for v := int64(1000); v <= 100000; v += 1000 {
		_ = h.RecordValue(v) // 1 ms .. 100 ms
	}
	nan := math.NaN()
	return ProbeWindow{
		ProbeID: probeID, Seq: seq, Phase: "ramp-up", Rate: 800, Offered: 799.5, Achieved: 798.25,
		Start: t0.Add(time.Duration(seq) * 10 * time.Second), Duration: 2 * time.Second,
		RTTBeforeUs: 5000, RTTAfterUs: nan, PassedSeconds: 1, Accepted: false, MetSLA: true, Discarded: false,
		Verdict: "rejected", Sent: 1600, Completed: 1598, Errors: 2, Late: 3, Dropped: 1,
		ErrorKinds:  map[string]int64{"timeout": 2},
		Percentiles: []float64{2000, 10000, 25000, 50000, 75000, 90000, 95000, nan},
		SLAUs:       90000, Hist: h, Note: "a note",
		Seconds: []ProbeSecond{
			{Index: 0, Sent: 800, Completed: 800, P50Us: 4000, P90Us: 9000, RTTUs: 5100, Pass: true},
			{Index: 1, Sent: 800, Completed: 798, Errors: 2, Late: 3, Dropped: 1, P50Us: nan, P90Us: nan, RTTUs: nan},
		},
	}
}

func TestProbeRoundTrip(t *testing.T) {
	s := newStore(t)
	if ps, err := s.Probes(); err != nil || ps != nil {
		t.Fatalf("a new file has probes %v, %v", ps, err)
	}
	if ws, err := s.ProbeWindows(1); err != nil || ws != nil {
		t.Fatalf("a new file has windows %v, %v", ws, err)
	}
	id, err := s.StartProbe(Probe{Start: t0, Target: "http", RTTAddr: "127.0.0.1:8080", ConfigJSON: `{"window":"2s"}`,
		SLAPercentile: 90, SLAThreshold: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for seq := 0; seq < 2; seq++ {
		if err := s.AddProbeWindow(testWindow(id, seq)); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := s.Probes()
	if err != nil || len(ps) != 1 {
		t.Fatalf("%v %v", ps, err)
	}
	p := ps[0]
	if p.Status != StatusRunning || !p.End.IsZero() || !math.IsNaN(p.Estimate) || p.SLAThreshold != 150*time.Millisecond || p.Target != "http" {
		t.Fatalf("running probe %+v", p)
	}
	if err := s.FinishProbe(id, Probe{Status: StatusCompleted, End: t0.Add(time.Minute), Stop: "sla", Estimate: 960,
		LowerBound: 960, BaselineRTTUs: 4900, Note: "p90 exceeded"}); err != nil {
		t.Fatal(err)
	}
	ps, _ = s.Probes()
	p = ps[0]
	if p.Status != StatusCompleted || p.Stop != "sla" || p.Estimate != 960 || p.LowerBound != 960 || p.ClientLimited ||
		p.BaselineRTTUs != 4900 || !p.End.Equal(t0.Add(time.Minute)) || !p.Start.Equal(t0) {
		t.Fatalf("finished probe %+v", p)
	}
	ws, err := s.ProbeWindows(id)
	if err != nil || len(ws) != 2 {
		t.Fatalf("%d windows, %v", len(ws), err)
	}
	want := testWindow(id, 1)
	got := ws[1]
	if got.Seq != 1 || got.Phase != want.Phase || got.Rate != 800 || got.Offered != 799.5 || got.Achieved != 798.25 ||
		!got.Start.Equal(want.Start) || got.Duration != want.Duration || got.RTTBeforeUs != 5000 || !math.IsNaN(got.RTTAfterUs) ||
		got.PassedSeconds != 1 || got.Accepted || !got.MetSLA || got.Discarded || got.Verdict != "rejected" ||
		got.Sent != 1600 || got.Completed != 1598 || got.Errors != 2 || got.Late != 3 || got.Dropped != 1 ||
		got.ErrorKinds["timeout"] != 2 || got.SLAUs != 90000 || got.Note != "a note" {
		t.Fatalf("window %+v", got)
	}
	for i, v := range want.Percentiles[:7] {
		if got.Percentiles[i] != v {
			t.Fatalf("percentiles %v", got.Percentiles)
		}
	}
	if !math.IsNaN(got.Percentiles[7]) {
		t.Fatal("NaN percentile did not come back as NaN")
	}
	if got.Hist.TotalCount() != 100 || got.Hist.ValueAtQuantile(50) != want.Hist.ValueAtQuantile(50) {
		t.Fatalf("histogram %d values", got.Hist.TotalCount())
	}
	if len(got.Seconds) != 2 {
		t.Fatalf("seconds %+v", got.Seconds)
	}
	s0, s1 := got.Seconds[0], got.Seconds[1]
	if s0 != want.Seconds[0] || s1.Index != 1 || s1.Errors != 2 || s1.Dropped != 1 || !math.IsNaN(s1.P50Us) || !math.IsNaN(s1.RTTUs) || s1.Pass {
		t.Fatalf("seconds %+v", got.Seconds)
	}
}

func TestProbeWriteErrors(t *testing.T) {
	s := newStore(t)
	id, _ := s.StartProbe(Probe{Target: "null"})
	w := testWindow(id, 0)
	w.Percentiles = w.Percentiles[:3]
	if err := s.AddProbeWindow(w); err == nil || !strings.Contains(err.Error(), "3 percentiles given, want 8") {
		t.Fatalf("short percentile list: %v", err)
	}
	if err := s.AddProbeWindow(testWindow(id+7, 0)); err == nil {
		t.Fatal("a window of a probe that does not exist was stored")
	}
	if err := s.FinishProbe(id, Probe{Status: "done"}); err == nil {
		t.Fatal("bad status accepted")
	}
	if err := s.FinishProbe(id+7, Probe{Status: StatusFailed}); err == nil || !strings.Contains(err.Error(), "no such probe") {
		t.Fatalf("missing probe: %v", err)
	}
}

func TestProbeExport(t *testing.T) {
	s := newStore(t)
	if err := s.EnsureProbeTables(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Export(&buf, "probe_windows", "csv"); err != nil || strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("empty export %q, %v", buf.String(), err)
	}
	id, _ := s.StartProbe(Probe{Target: "null", ConfigJSON: `{"window":"2s"}`})
	_ = s.AddProbeWindow(testWindow(id, 0))
	buf.Reset()
	if err := s.Export(&buf, "probe_seconds", "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 3 || recs[0][9] != "p90_us" || recs[1][9] != "9000" || recs[2][9] != "" || recs[1][11] != "true" {
		t.Fatalf("%v %v", recs, err)
	}
	buf.Reset()
	if err := s.Export(&buf, "probe_windows", "json"); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v %s", err, buf.String())
	}
	r := rows[0]
	if r["rate"] != 800.0 || r["p99_us"] != nil || r["error_kinds"].(map[string]any)["timeout"] != 2.0 || r["hist"] == "" || r["accepted"] != false {
		t.Fatalf("row %v", r)
	}
	buf.Reset()
	if err := s.Export(&buf, "probes", "json"); err != nil || !strings.Contains(buf.String(), `"config_json":{"window":"2s"}`) {
		t.Fatalf("%v %s", err, buf.String())
	}
}
