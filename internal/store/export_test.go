package store

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// exportFixture holds a campaign with a completed run (two intervals, one
// with errors), a running run, and two events.
func exportFixture(t *testing.T) (*Store, []Interval) {
	s := newStore(t)
	id, _ := s.StartRun(testRun(0))
	start := testRun(0).Start
	ivs := []Interval{
		{RunID: id, Phase: "measure", Op: "read", Start: start.Add(2 * time.Second), Duration: 500 * time.Millisecond,
			Count: 1000, Hist: hist(t, 1, 1000), Errors: 3, ErrorKinds: map[string]int64{"timeout": 2, "refused": 1}},
		{RunID: id, Phase: "measure", Op: "update", Start: start.Add(2 * time.Second), Duration: 500 * time.Millisecond},
	}
	if err := s.AddIntervals(ivs); err != nil {
		t.Fatal(err)
	}
	sum := RunSummary{Sent: 1003, Completed: 1000, Errors: 3, MeasureSecs: 0.5, Throughput: 2000, ClientCPU: 12.5,
		ClientLimited: true, ClientNote: `client "CPU" bound, see host`}
	if err := s.FinishRun(id, StatusCompleted, "", start.Add(time.Minute), sum); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartRun(testRun(1)); err != nil {
		t.Fatal(err)
	}
	s.AddEvent(Event{Time: t0, Kind: "populate", Detail: "1000 records"})
	s.AddEvent(Event{RunID: id, Time: start, Kind: "phase", Detail: "line1\nline2, with comma"})
	return s, ivs
}

func exportCSV(t *testing.T, s *Store, table string) []map[string]string {
	t.Helper()
	var b bytes.Buffer
	if err := s.Export(&b, table, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatalf("%s csv does not parse: %v", table, err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			m[k] = rec[i]
		}
		rows = append(rows, m)
	}
	return rows
}

func exportJSON(t *testing.T, s *Store, table string) []map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := s.Export(&b, table, "json"); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	dec := json.NewDecoder(&b)
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("%s json does not parse: %v", table, err)
	}
	return rows
}

func check[V comparable](t *testing.T, what string, row map[string]V, want map[string]V) {
	t.Helper()
	for k, w := range want {
		if g, ok := row[k]; !ok || g != w {
			t.Errorf("%s %s = %v (present %v), want %v", what, k, g, ok, w)
		}
	}
}

func TestExportCSV(t *testing.T) {
	s, ivs := exportFixture(t)
	c := testCampaign()

	camp := exportCSV(t, s, "campaign")
	if len(camp) != 1 {
		t.Fatalf("campaign csv has %d rows", len(camp))
	}
	check(t, "campaign", camp[0], map[string]string{"name": c.Name, "spec_yaml": c.SpecYAML, "seed": "-42",
		"host_json": c.HostJSON, "created_at": "2025-03-14T09:26:53.589793238Z", "created_ns": "1741944413589793238"})

	runs := exportCSV(t, s, "runs")
	if len(runs) != 2 {
		t.Fatalf("runs csv has %d rows", len(runs))
	}
	check(t, "run 1", runs[0], map[string]string{"id": "1", "slot": "0", "treatment": "wal", "model": "open", "level": "1000.5",
		"repetition": "1", "status": "completed", "sent": "1003", "throughput": "2000", "client_cpu_pct": "12.5",
		"client_limited": "true", "client_note": `client "CPU" bound, see host`, "end_ns": "1741944473589793238"})
	check(t, "run 2 (running)", runs[1], map[string]string{"id": "2", "status": "running", "end_ns": "", "sent": "",
		"throughput": "", "client_limited": "", "level": "2001"})
	// The run's columns, then its merged percentiles: all operations, read
	// and update (export_runs_test.go checks their values).
	if len(runs[0]) != len(runColumnNames())+3*len(runLatencyCols) {
		t.Errorf("runs csv has columns %v", keys(runs[0]))
	}

	got := exportCSV(t, s, "intervals")
	if len(got) != 2 {
		t.Fatalf("intervals csv has %d rows", len(got))
	}
	h := ivs[0].Hist
	check(t, "interval read", got[0], map[string]string{"run_id": "1", "op": "read", "level": "1000.5", "repetition": "1",
		"run_status": "completed", "elapsed_secs": "2", "duration_ns": "500000000", "count": "1000", "errors": "3",
		"throughput": "2000", "p99_us": itoa(h.ValueAtQuantile(99)), "max_us": itoa(h.Max()),
		"error_kinds": `{"refused":1,"timeout":2}`})
	check(t, "interval update (empty)", got[1], map[string]string{"op": "update", "count": "0", "p50_us": "", "mean_us": "",
		"error_kinds": "{}"})
	if _, ok := got[0]["hist"]; ok {
		t.Error("intervals csv includes the histogram")
	}

	evs := exportCSV(t, s, "events")
	if len(evs) != 2 {
		t.Fatalf("events csv has %d rows", len(evs))
	}
	check(t, "event 0", evs[0], map[string]string{"run_id": "", "kind": "populate"})
	check(t, "event 1", evs[1], map[string]string{"run_id": "1", "detail": "line1\nline2, with comma"})
}

func TestExportJSON(t *testing.T) {
	s, ivs := exportFixture(t)
	camp := exportJSON(t, s, "campaign")
	if len(camp) != 1 {
		t.Fatalf("campaign json has %d rows", len(camp))
	}
	check(t, "campaign", camp[0], map[string]any{"name": "quickstart", "seed": json.Number("-42"),
		"spec_yaml": testCampaign().SpecYAML, "created_ns": json.Number("1741944413589793238")})
	if host, ok := camp[0]["host_json"].(map[string]any); !ok || host["hostname"] != "lab1" {
		t.Errorf("host_json = %#v; want the host object", camp[0]["host_json"])
	}

	runs := exportJSON(t, s, "runs")
	if len(runs) != 2 {
		t.Fatalf("runs json has %d rows", len(runs))
	}
	check(t, "run 1", runs[0], map[string]any{"id": json.Number("1"), "status": "completed", "level": json.Number("1000.5"),
		"throughput": json.Number("2000"), "client_limited": true, "measure_secs": json.Number("0.5")})
	check(t, "run 2", runs[1], map[string]any{"status": "running", "end_ns": nil, "sent": nil, "client_limited": nil})
	// The run's columns, then its merged percentiles: all operations, read
	// and update (export_runs_test.go checks their values).
	if len(runs[0]) != len(runColumnNames())+3*len(runLatencyCols) {
		t.Errorf("runs json has keys %v", keys(runs[0]))
	}

	got := exportJSON(t, s, "intervals")
	if len(got) != 2 {
		t.Fatalf("intervals json has %d rows", len(got))
	}
	check(t, "interval read", got[0], map[string]any{"op": "read", "run_status": "completed", "count": json.Number("1000"),
		"p99_us": json.Number(itoa(ivs[0].Hist.ValueAtQuantile(99)))})
	if ek, ok := got[0]["error_kinds"].(map[string]any); !ok || ek["timeout"] != json.Number("2") || ek["refused"] != json.Number("1") {
		t.Errorf("error_kinds = %#v", got[0]["error_kinds"])
	}
	check(t, "interval update", got[1], map[string]any{"p50_us": nil, "mean_us": nil})
	enc, _ := got[0]["hist"].(string)
	if h, err := decodeHist(enc); err != nil || !h.Equals(ivs[0].Hist) {
		t.Errorf("hist in json does not decode to the stored histogram: %v", err)
	}

	evs := exportJSON(t, s, "events")
	if len(evs) != 2 {
		t.Fatalf("events json has %d rows", len(evs))
	}
	check(t, "event 0", evs[0], map[string]any{"run_id": nil, "kind": "populate", "time_ns": json.Number("1741944413589793238")})
	check(t, "event 1", evs[1], map[string]any{"run_id": json.Number("1"), "detail": "line1\nline2, with comma"})
}

func TestExportEmptyAndErrors(t *testing.T) {
	s := newStore(t)
	for _, table := range ExportTables() {
		if table == "campaign" {
			continue
		}
		if rows := exportJSON(t, s, table); len(rows) != 0 {
			t.Errorf("empty %s json has %d rows", table, len(rows))
		}
		if rows := exportCSV(t, s, table); len(rows) != 0 {
			t.Errorf("empty %s csv has %d rows", table, len(rows))
		}
	}
	var b bytes.Buffer
	err := s.Export(&b, "histograms", "csv")
	if err == nil || !strings.Contains(err.Error(), `"histograms"`) || !strings.Contains(err.Error(), "campaign, runs, intervals, events") {
		t.Errorf("unknown table: %v", err)
	}
	err = s.Export(&b, "runs", "xml")
	if err == nil || !strings.Contains(err.Error(), `"xml"`) || !strings.Contains(err.Error(), "csv, json") {
		t.Errorf("unknown format: %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("a failed export wrote %q", b.String())
	}
}

// runColumnNames lists the run table's columns, to check the runs export has
// them all.
func runColumnNames() []string {
	return strings.Fields(strings.ReplaceAll(runColumns, ",", " "))
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
