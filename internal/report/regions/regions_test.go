package regions

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// A run of three agents on lab hosts in two regions (two in eu at 1 ms,
// one in us at 80 ms, 100 ok per second each over 4 s) and a run of one
// process: the section has one table for the first run, eu's row 2 agents
// at 200 ok/s, us's 1 agent at 100 ok/s, and renders in report.html and
// report.json; the terminal prints one line for it.
func TestRegionsSection(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "regions", SpecYAML: "name: regions\n", CreatedAt: t0})
	must := resultstest.Must(t)
	must(st.AddEvent(store.Event{Time: t0, Kind: results.EventLab,
		Detail: `{"name":"l","hosts":[{"name":"eu1","type":"small","region":"eu"},{"name":"eu2","type":"small","region":"eu"},{"name":"us1","type":"small","region":"us"}]}`}))
	id, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Model: "open", Level: 300, Repetition: 1, Start: t0})
	must(err)
	for i, a := range []struct {
		name string
		us   int64
	}{{"eu1", 1000}, {"eu2", 1000}, {"us1", 80000}} {
		must(st.PutAgentRun(store.AgentRun{RunID: id, Agent: a.name, Host: a.name, Index: i, Status: store.AgentCompleted, Detail: []byte(`{"share":{"rate":100}}`)}))
		for s := range 4 {
			h := store.NewHistogram()
			must(h.RecordValues(a.us, 100))
			must(st.AddAgentIntervals(a.name, []store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: t0.Add(time.Duration(s) * time.Second),
				Duration: time.Second, Count: 100, Errors: 1, Hist: h}}))
		}
	}
	must(st.FinishRun(id, store.StatusCompleted, "", t0.Add(4*time.Second), store.RunSummary{MeasureStart: t0, MeasureEnd: t0.Add(4 * time.Second), MeasureSecs: 4}))
	id2, err := st.StartRun(store.Run{Seq: 2, Slot: 2, Model: "open", Level: 300, Repetition: 2, Start: t0.Add(time.Minute)})
	must(err)
	must(st.FinishRun(id2, store.StatusCompleted, "", t0.Add(time.Minute+4*time.Second), store.RunSummary{MeasureSecs: 4}))
	r, err := results.New(st)
	must(err)

	secs, err := ReportSections(r)
	must(err)
	if len(secs) != 1 || secs[0].ID != SectionID || secs[0].Title != "Regions" {
		t.Fatalf("sections %+v", secs)
	}
	sec := secs[0]
	if len(sec.Blocks) != 1 || sec.Blocks[0].Table == nil {
		t.Fatalf("blocks %+v; want one table (run 2 had no agents)", sec.Blocks)
	}
	tb := sec.Blocks[0].Table
	if len(tb.Rows) != 2 {
		t.Fatalf("rows %+v", tb.Rows)
	}
	for i, want := range [][]string{{"eu", "2 (eu1, eu2)", "200.0", "1.00 ms", "1.00 ms", "8", "0"}, {"us", "1 (us1)", "100.0", "80.06 ms", "80.06 ms", "4", "0"}} {
		for j, w := range want {
			if got := tb.Rows[i][j].Text; got != w {
				t.Errorf("row %d %s = %q, want %q", i, tb.Columns[j].Title, got, w)
			}
		}
	}
	if !strings.Contains(sec.Summary, "run 1 span 2 regions") {
		t.Errorf("summary %q", sec.Summary)
	}
	rep := &page.Report{Format: page.FormatVersion, Title: "t"}
	rep.Add(sec)
	must(rep.Validate())
	var html, js bytes.Buffer
	must(page.WriteHTML(&html, rep))
	must(page.WriteJSON(&js, rep))
	if !strings.Contains(html.String(), `id="regions-run1"`) || !strings.Contains(html.String(), "80.06 ms") {
		t.Errorf("report.html lacks the regions table")
	}
	var back page.Report
	must(json.Unmarshal(js.Bytes(), &back))
	if len(back.Sections) != 1 || back.Sections[0].Blocks[0].Table.Rows[1][2].Value == nil || *back.Sections[0].Blocks[0].Table.Rows[1][2].Value != 100 {
		t.Errorf("report.json: %s", js.String())
	}

	var out bytes.Buffer
	must(Terminal(&out, r))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "run 1 (300 req/s, repetition 1): eu 2 agents 200.0 ok/s p50 1.00ms p99 1.00ms (8 errors, 0 dropped); us 1 agent 100.0 ok/s p50 80.06ms p99 80.06ms (4 errors, 0 dropped)") {
		t.Errorf("terminal:\n%s", out.String())
	}
}

// Agents all in one region: no table, a note saying so, no terminal line.
func TestRegionsOneRegion(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "one", SpecYAML: "name: one\n", CreatedAt: t0})
	must := resultstest.Must(t)
	id, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Model: "open", Level: 100, Repetition: 1, Start: t0})
	must(err)
	must(st.PutAgentRun(store.AgentRun{RunID: id, Agent: "pod-0", Host: "k8s:default/p-0", Status: store.AgentCompleted, Detail: []byte(`{"region":"eu-west"}`)}))
	must(st.FinishRun(id, store.StatusCompleted, "", t0.Add(time.Second), store.RunSummary{MeasureSecs: 1}))
	r, err := results.New(st)
	must(err)
	secs, err := ReportSections(r)
	must(err)
	if len(secs) != 1 || len(secs[0].Blocks) != 1 || secs[0].Blocks[0].Note == nil || !strings.Contains(secs[0].Blocks[0].Note.Text, "Every agent of run 1 is in region eu-west") {
		t.Fatalf("sections %+v", secs)
	}
	var out bytes.Buffer
	must(Terminal(&out, r))
	if out.Len() != 0 {
		t.Errorf("terminal: %q", out.String())
	}
}

// A run on lab hosts in two regions, without agents: db1 (eu) at 80%
// CPU and 2 MiB/s, app1 and app2 (eu, us) at 20% and 60% with 1 KiB/s
// each, and the machine (no label) at 10%. The section has one table of
// hosts by region: eu 2 hosts at 50% mean CPU, 80% peak and 2 MiB/s +
// 1 KiB/s; us 1 host at 60%; (no region) the machine, network not
// sampled. The terminal prints one line for it.
func TestHostRegionsSection(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "hosts", SpecYAML: "name: hosts\n", CreatedAt: t0})
	must := resultstest.Must(t)
	must(st.AddEvent(store.Event{Time: t0, Kind: results.EventLab,
		Detail: `{"name":"l","hosts":[{"name":"db1","type":"medium","region":"eu"},{"name":"app1","type":"small","region":"eu"},{"name":"app2","type":"small","region":"us"}]}`}))
	id, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Model: "open", Level: 100, Repetition: 1, Start: t0})
	must(err)
	var ss []monitor.Sample
	for sec := range 4 {
		at := t0.Add(time.Duration(sec) * time.Second)
		for _, h := range []struct {
			name     string
			cpu, net float64
		}{{"db1", 80, 2 << 20}, {"app1", 20, 1024}, {"app2", 60, 1024}, {"machine", 10, -1}} {
			ss = append(ss, monitor.Sample{Host: h.name, Resource: monitor.ResourceCPU, Metric: monitor.CPUUtilPct, Start: at, Period: time.Second, Value: h.cpu, Source: monitor.SourceSampled})
			if h.net >= 0 {
				ss = append(ss, monitor.Sample{Host: h.name, Resource: "net:eth0", Metric: monitor.NetRxBytes, Start: at, Period: time.Second, Value: h.net, Source: monitor.SourceSampled})
			}
		}
	}
	must(st.AddSamples(id, ss))
	must(st.FinishRun(id, store.StatusCompleted, "", t0.Add(4*time.Second), store.RunSummary{MeasureStart: t0, MeasureEnd: t0.Add(4 * time.Second), MeasureSecs: 4}))
	r, err := results.New(st)
	must(err)

	secs, err := ReportSections(r)
	must(err)
	if len(secs) != 1 || len(secs[0].Blocks) != 1 || secs[0].Blocks[0].Table == nil {
		t.Fatalf("sections %+v; want one table of hosts", secs)
	}
	tb := secs[0].Blocks[0].Table
	if tb.ID != "region-hosts-run1" || len(tb.Rows) != 3 {
		t.Fatalf("table %s rows %+v", tb.ID, tb.Rows)
	}
	for i, want := range [][]string{{"eu", "2 (app1, db1)", "50.0%", "80.0%", "2.00 MiB/s"}, {"us", "1 (app2)", "60.0%", "60.0%", "1.0 KiB/s"}, {"(no region)", "1 (machine)", "10.0%", "10.0%", "–"}} {
		for j, w := range want {
			if got := tb.Rows[i][j].Text; got != w {
				t.Errorf("row %d %s = %q, want %q", i, tb.Columns[j].Title, got, w)
			}
		}
	}
	if !strings.Contains(secs[0].Summary, "The monitored hosts of 1 run carry labels of 2 regions") {
		t.Errorf("summary %q", secs[0].Summary)
	}
	rep := &page.Report{Format: page.FormatVersion, Title: "t"}
	rep.Add(secs[0])
	must(rep.Validate())
	var out bytes.Buffer
	must(Terminal(&out, r))
	if want := "hosts of run 1 (100 req/s, repetition 1): eu 2 hosts (app1, db1) CPU 50.0% mean, 80.0% peak network 2.00 MiB/s; us 1 host (app2) CPU 60.0% mean, 60.0% peak network 1.0 KiB/s; (no region) 1 host (machine) CPU 10.0% mean, 10.0% peak"; !strings.Contains(out.String(), want) {
		t.Errorf("terminal:\n%s\nwant a line %q", out.String(), want)
	}
}
