package failures

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

const failureSpec = `name: synthfail
target: {type: postgres, managed: {cluster: {nodes: 2}}}
workload: {operations: {insert: 1}, record_count: 100}
load: {model: open, arrival: constant, rates: [100]}
phases: {warmup: 0s, measure: 30s}
events:
  - {at: 10s, action: kill, host: pg1}
  - {at: 14s, action: promote, host: pg2}
`

// A synthetic run written as the campaign writes one: 30 one-second
// intervals of 100 requests, seconds 10..13 all failing, the kill at
// 10.2 s and the promote at 14 s, and a write check that lost 42 of 1500
// acknowledged records. The known answers: one scenario kill -> promote,
// detected after 0.8 s, MTTR 3.8 s (back at 14 s), yield = 100 / 400
// (second 10's midpoint is inside the window, and it failed; 11, 12, 13
// failed; none of 14's), a red verdict first.
func TestFailureSection(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, t.TempDir(), store.Campaign{Name: "synthfail", SpecFile: "f.yaml", SpecYAML: failureSpec, Seed: 1, ToolVersion: "test", CreatedAt: t0})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	id, err := st.StartRun(store.Run{Model: "open", Level: 100, Start: t0})
	must(err)
	var ivs []store.Interval
	for i := 0; i < 30; i++ {
		iv := store.Interval{RunID: id, Phase: "measure", Op: "insert", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second, Count: 100, Hist: store.NewHistogram()}
		if i >= 10 && i < 14 {
			iv.Count, iv.Errors, iv.ErrorKinds = 0, 100, map[string]int64{"connection": 100}
		} else {
			must(iv.Hist.RecordValues(2000, 100))
		}
		ivs = append(ivs, iv)
	}
	must(st.AddIntervals(ivs))
	for _, e := range []struct {
		at           time.Duration
		action, host string
	}{{10200 * time.Millisecond, "kill", "pg1"}, {14 * time.Second, "promote", "pg2"}} {
		b, _ := json.Marshal(map[string]string{"at": e.at.String(), "action": e.action, "host": e.host, "detail": e.action})
		must(st.AddEvent(store.Event{RunID: id, Time: t0.Add(e.at), Kind: "fault", Detail: string(b)}))
	}
	must(st.AddEvent(store.Event{RunID: id, Time: t0.Add(31 * time.Second), Kind: results.EventWriteCheck,
		Detail: `{"trigger":"fault","checked":1500,"stable":1458,"lost":42,"unreadable":0,"first_lost":[1200,1201],"strong":true,"seconds":0.2}`}))
	must(st.FinishRun(id, store.StatusCompleted, "", t0.Add(30*time.Second), store.RunSummary{MeasureStart: t0, MeasureEnd: t0.Add(30 * time.Second), MeasureSecs: 30}))
	r, err := results.New(st)
	must(err)

	secs, err := ReportSections(r)
	must(err)
	if len(secs) != 1 || secs[0].ID != SectionID {
		t.Fatalf("sections %+v", secs)
	}
	sec := secs[0]
	first := sec.Blocks[0].Note
	if first == nil || first.Level != "warning" || !strings.Contains(first.Text, "LOST WRITES") || !strings.Contains(first.Text, "lost 42 of 1500") {
		t.Errorf("the section does not open with the red lost-write verdict: %+v", sec.Blocks[0])
	}
	var tb *page.Table
	charts := 0
	for _, b := range sec.Blocks {
		if b.Table != nil && strings.HasPrefix(b.Table.ID, "failures-run") {
			tb = b.Table
		}
		if b.Chart != nil {
			charts++
		}
	}
	if tb == nil || charts != 3 {
		t.Fatalf("scenario table %v, %d charts", tb, charts)
	}
	row := tb.Rows[0]
	cell := func(title string) string {
		for i, c := range tb.Columns {
			if c.Title == title {
				return row[i].Text
			}
		}
		t.Fatalf("no column %q", title)
		return ""
	}
	for title, want := range map[string]string{"fault": "kill pg1", "recovery": "promote pg2 at 14.0 s", "yield (%)": "0.0", "detect (s)": "0.8", "MTTR (s)": "3.8", "due": "400"} {
		if got := cell(title); got != want {
			t.Errorf("%s = %q, want %q", title, got, want)
		}
	}
	rep := &page.Report{Format: 1, Title: "t"}
	rep.Add(sec)
	if err := rep.Validate(); err != nil {
		t.Error(err)
	}
	var out bytes.Buffer
	must(Terminal(&out, r))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "! LOST WRITES: run 1") || !strings.Contains(lines[2], "MTTR 3.8 s") {
		t.Errorf("terminal:\n%s", out.String())
	}
}
