package consistency

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/history/historytest"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// A run's generated history with planted violations, stored with a
// measured clock offset, gives a valid section whose tables carry the
// plan's counts and the offset's uncertainty, and verdicts that lead with
// the violations.
func TestSectionFromStore(t *testing.T) {
	t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "consistency", CreatedAt: t0})
	must := resultstest.Must(t)
	id, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Treatment: "rf3", Model: "closed", Level: 1, Repetition: 1, Start: t0})
	must(err)
	plan := historytest.Generate(historytest.Config{Seed: 5, Keys: 2, Writes: 10, PeriodNS: 10e6, StepNS: 1e6,
		Levels: []string{"ONE", "QUORUM"}, MaxLag: map[string]int{"ONE": 5, "QUORUM": 0}, WriteLevel: "QUORUM",
		Replica: map[string]string{"ONE": "db2", "QUORUM": "db1"},
		Plant:   map[string]historytest.Plant{"ONE": {MonotonicRead: 2}}}, nil)
	must(st.AppendHistory(id, plan.Ops))
	must(st.AddEvent(store.Event{RunID: id, Time: t0, Kind: results.EventClockOffset, Detail: `{"host":"db2","offset_ns":-3000,"uncertainty_ns":150000}`}))
	r, err := results.New(st)
	must(err)

	secs, err := ReportSections(r)
	must(err)
	if len(secs) != 1 {
		t.Fatalf("%d sections, want 1", len(secs))
	}
	rep := page.Report{Sections: secs}
	must(rep.Validate())
	s := secs[0]
	if !strings.Contains(s.Summary, "2 session-guarantee violations") || !strings.Contains(s.Summary, "± ") {
		t.Errorf("summary %q", s.Summary)
	}
	stale := s.Blocks[0].Table
	// ONE reads are served by db2 (±150 µs) and writes by "primary",
	// which has no offset of its own and takes the largest: ±300 µs.
	if got := stale.Rows[0][1].Text + " " + stale.Rows[0][10].Text; got != "write QUORUM / read ONE 300 µs" {
		t.Errorf("first staleness row: %q", got)
	}
	viol := s.Blocks[3].Table
	if got := viol.Rows[0][3].Text; viol.Rows[0][1].Text != "ONE" || got != "2" || viol.Rows[0][3].Mark != "fail" {
		t.Errorf("violation row %+v", viol.Rows[0])
	}
	lin := s.Blocks[4].Table
	if lin.Rows[0][3].Text == "0" {
		t.Errorf("linearizability row %+v: the stale ONE reads make keys non-linearizable", lin.Rows[0])
	}

	var out bytes.Buffer
	must(Terminal(&out, r))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "! Session guarantees · rf3") || !strings.Contains(lines[1], "2 monotonic-read") {
		t.Errorf("terminal:\n%s", out.String())
	}
}

// A campaign without a history has no section and no verdicts.
func TestNoHistory(t *testing.T) {
	st := resultstest.Create(t, "", store.Campaign{Name: "plain", CreatedAt: time.Now()})
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := ReportSections(r)
	if err != nil || len(secs) != 0 {
		t.Fatalf("sections %v, %v; want none", secs, err)
	}
	var out bytes.Buffer
	if err := Terminal(&out, r); err != nil || out.Len() != 0 {
		t.Fatalf("terminal %q, %v; want nothing", out.String(), err)
	}
}
