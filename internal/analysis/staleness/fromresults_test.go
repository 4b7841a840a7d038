package staleness

import (
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// The driver reads each run's history and clock offsets: a replica named
// like a measured host takes its uncertainty, the write (no replica) the
// largest measured.
func TestFromResults(t *testing.T) {
	t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "c", CreatedAt: t0})
	must := resultstest.Must(t)
	id, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Treatment: "async", Model: "closed", Level: 1, Repetition: 1, Start: t0})
	must(err)
	must(st.AppendHistory(id, []history.Op{
		{Process: 0, Kind: history.Write, Key: "a", Value: 1, InvokeNS: 100, CompleteNS: 200, Outcome: history.OK},
		{Process: 1, Kind: history.Read, Key: "a", Value: 0, InvokeNS: 1200, CompleteNS: 1300, Outcome: history.OK, Replica: "db2", Level: "replica"},
		{Process: 1, Kind: history.Read, Key: "a", Value: 1, InvokeNS: 2200, CompleteNS: 2300, Outcome: history.OK, Replica: "db2", Level: "replica"},
	}))
	for _, d := range []string{`{"host":"db1","offset_ns":5,"uncertainty_ns":70}`, `{"host":"db2","offset_ns":-9,"uncertainty_ns":30}`} {
		must(st.AddEvent(store.Event{RunID: id, Time: t0, Kind: results.EventClockOffset, Detail: d}))
	}
	r, err := results.New(st)
	must(err)
	runs, err := FromResults(r)
	must(err)
	if len(runs) != 1 || runs[0].Treatment != "async" || len(runs[0].Levels) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	w := runs[0].Levels[0].Windows[0]
	if w.VisibilityNS != 1000 || w.UncertaintyNS != 70+30 {
		t.Errorf("window %+v, want visibility 1000 ± 100", w)
	}
}
