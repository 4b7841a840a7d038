package results_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// Node changes are read per run in request order (not in the order they
// were recorded, which is when each finished); a change without a request
// time takes its event's; other runs' changes and other events are not
// its.
func TestNodeChanges(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "nodes", CreatedAt: t0})
	must := resultstest.Must(t)
	id1, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Model: "open", Level: 10, Repetition: 1, Start: t0})
	must(err)
	id2, err := st.StartRun(store.Run{Seq: 2, Slot: 2, Model: "open", Level: 10, Repetition: 2, Start: t0.Add(time.Minute)})
	must(err)
	add := func(run int64, at time.Time, c results.NodeChange) {
		b, _ := json.Marshal(c)
		must(st.AddEvent(store.Event{RunID: run, Time: at, Kind: results.EventNodeChange, Detail: string(b)}))
	}
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// The removal was asked for later but finished first.
	add(id1, sec(8), results.NodeChange{Action: results.ActionRemoveNode, Node: "node2", Requested: sec(6), Done: sec(8), BytesStreamed: -1})
	add(id1, sec(9), results.NodeChange{Action: results.ActionAddNode, Node: "node4", Requested: sec(2), Started: sec(3), Done: sec(9), BytesStreamed: 4096})
	add(id2, sec(70), results.NodeChange{Action: results.ActionAddNode, Node: "node4", Error: "bootstrap failed"})
	must(st.AddEvent(store.Event{RunID: id1, Time: sec(5), Kind: "fault", Detail: "{}"}))
	r, err := results.New(st)
	must(err)

	cs, err := r.NodeChanges(id1)
	must(err)
	if len(cs) != 2 || cs[0].Node != "node4" || cs[1].Node != "node2" || cs[0].Delta() != 1 || cs[1].Delta() != -1 || !cs[0].Served() || cs[0].BytesStreamed != 4096 {
		t.Errorf("run 1: %+v", cs)
	}
	cs, err = r.NodeChanges(id2)
	must(err)
	if len(cs) != 1 || cs[0].Served() || !cs[0].Requested.Equal(sec(70)) {
		t.Errorf("run 2: %+v; want one failed change requested at its event's time", cs)
	}
	all, err := r.AllNodeChanges()
	must(err)
	if len(all) != 2 || len(all[id1]) != 2 || len(all[id2]) != 1 {
		t.Errorf("all: %v", all)
	}
}
