package results_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// A run's history comes back in the order it was appended, over several
// batches, and not mixed with another run's; clock offsets are the run's
// own, with campaign-level ones for hosts the run did not measure, the
// last measurement of a host counting.
func TestHistoryAndClockOffsets(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "consistency", CreatedAt: t0})
	must := resultstest.Must(t)
	r1, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Treatment: "", Model: "closed", Level: 1, Repetition: 1, Start: t0})
	must(err)
	r2, err := st.StartRun(store.Run{Seq: 2, Slot: 2, Treatment: "", Model: "closed", Level: 1, Repetition: 1, Start: t0.Add(time.Minute)})
	must(err)

	batch1 := []history.Op{
		{Process: 0, Kind: history.Write, Key: "k1", Value: 1, InvokeNS: 10, CompleteNS: 20, Outcome: history.OK, Level: "QUORUM"},
		{Process: 1, Kind: history.Read, Key: "k1", Value: history.NoValue, InvokeNS: 5, CompleteNS: 8, Outcome: history.OK, Replica: "db2", Level: "ONE"},
	}
	batch2 := []history.Op{
		{Process: 1, Kind: history.Read, Key: "k1", Value: 0, InvokeNS: 30, CompleteNS: 45, Outcome: history.Info},
	}
	must(st.AppendHistory(r1, batch1))
	must(st.AppendHistory(r2, []history.Op{{Process: 7, Kind: history.Write, Key: "other", Value: 3, Outcome: history.Fail}}))
	must(st.AppendHistory(r1, batch2))

	ev := func(run int64, d string) {
		must(st.AddEvent(store.Event{RunID: run, Time: t0, Kind: results.EventClockOffset, Detail: d}))
	}
	ev(0, `{"host":"db1","offset_ns":100,"uncertainty_ns":900}`)
	ev(0, `{"host":"db3","offset_ns":-5,"uncertainty_ns":50}`)
	ev(r1, `{"host":"db1","offset_ns":7,"uncertainty_ns":300}`)
	ev(r1, `{"host":"db2","offset_ns":1,"uncertainty_ns":100}`)
	ev(r1, `{"host":"db2","offset_ns":2,"uncertainty_ns":200}`)

	res, err := results.New(st)
	must(err)
	got, err := res.History(r1)
	must(err)
	if want := append(append([]history.Op{}, batch1...), batch2...); !reflect.DeepEqual(got, want) {
		t.Errorf("History(r1) =\n%+v\nwant\n%+v", got, want)
	}
	runs, err := res.HistoryRuns()
	must(err)
	if !reflect.DeepEqual(runs, []int64{r1, r2}) {
		t.Errorf("HistoryRuns = %v, want [%d %d]", runs, r1, r2)
	}
	offs, err := res.ClockOffsets(r1)
	must(err)
	want := []results.ClockOffset{{"db1", 7, 300}, {"db2", 2, 200}, {"db3", -5, 50}}
	if !reflect.DeepEqual(offs, want) {
		t.Errorf("ClockOffsets(r1) = %+v, want %+v", offs, want)
	}
	if m := results.MaxClockUncertainty(offs); m != 300 {
		t.Errorf("MaxClockUncertainty = %d, want 300", m)
	}
	offs2, err := res.ClockOffsets(r2)
	must(err)
	if len(offs2) != 2 || offs2[0].UncertaintyNS != 900 {
		t.Errorf("ClockOffsets(r2) = %+v, want the campaign's two", offs2)
	}
}

// A store written before the history table existed reads as having none.
func TestHistoryOfOldStore(t *testing.T) {
	st := resultstest.Create(t, "", store.Campaign{Name: "old", CreatedAt: time.Now()})
	must := resultstest.Must(t)
	res, err := results.New(st)
	must(err)
	ops, err := res.History(1)
	if err != nil || len(ops) != 0 {
		t.Fatalf("History on a store without the table = %v, %v; want none, nil", ops, err)
	}
	runs, err := res.HistoryRuns()
	if err != nil || len(runs) != 0 {
		t.Fatalf("HistoryRuns = %v, %v; want none", runs, err)
	}
}
