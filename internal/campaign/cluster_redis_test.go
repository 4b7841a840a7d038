package campaign

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/results"
)

// Cluster events without a lab: a Redis Cluster of three primaries on
// loopback gains a fourth (which takes a quarter of the hash slots with
// their keys) and then loses node2 while an open loop runs. Each change is
// recorded with its times, the write check reads every acknowledged
// record back from the primaries, and after the run the cluster is put
// back (node4 out, node2's replacement in), recorded outside the run.
func TestRedisClusterScalesOutAndInWithoutALab(t *testing.T) {
	labtest.NeedServer(t, "redis-server", "redis-server")
	dir := labtest.SearchableDir(t)
	s := parse(t, dir, `
name: redis-scale
target:
  type: redis
  managed:
    cluster: {nodes: 3, mode: cluster}
workload: {record_count: 4000, field_count: 4, field_length: 20, operations: {read: 0.5, update: 0.4, insert: 0.1}}
load: {model: open, arrival: constant, rates: [2000], max_in_flight: 64}
phases: {warmup: 2s, measure: 10s}
events:
  - {at: 2s, action: add_node}
  - {at: 6s, action: remove_node, host: node2}
output: out
`)
	_, st := start(t, s)
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	runs := r.CompletedRuns("")
	if len(runs) != 1 {
		t.Fatalf("completed runs: %+v", runs)
	}
	run := runs[0]
	if run.Summary.Errors > run.Summary.Completed/100 {
		t.Errorf("the cluster should serve through the changes: %d completed, %d errors", run.Summary.Completed, run.Summary.Errors)
	}
	changes, err := r.NodeChanges(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Action != "add_node" || changes[1].Action != "remove_node" ||
		!changes[0].Served() || !changes[1].Served() || changes[1].Node != "node2" {
		t.Fatalf("an add_node then a remove_node of node2, both done: %+v", changes)
	}
	ms := run.Summary.MeasureStart
	for i, at := range []time.Duration{2 * time.Second, 6 * time.Second} {
		c := changes[i]
		if d := c.Requested.Sub(ms.Add(at)); d < -500*time.Millisecond || d > 3*time.Second {
			t.Errorf("%s requested %v after the measured phase began, want about %v", c.Action, c.Requested.Sub(ms), at)
		}
		if c.Done.Before(c.Requested) {
			t.Errorf("%s done before it was requested: %+v", c.Action, c)
		}
		t.Logf("%s %s: done after %v, %d bytes moved: %s", c.Action, c.Node, c.Done.Sub(c.Requested).Round(time.Millisecond), c.BytesStreamed, c.Detail)
	}
	evs, err := r.Events(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var wc *writeCheck
	for _, e := range evs {
		if e.Kind == EventWriteCheck {
			wc = new(writeCheck)
			if err := json.Unmarshal([]byte(e.Detail), wc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if wc == nil || !wc.Strong || wc.Lost != 0 || wc.Unreadable != 0 || wc.Checked < 4000 {
		t.Fatalf("every acknowledged record must read back from the primaries: %+v", wc)
	}
	// Put back after the run: node4 removed and a node added in node2's
	// place, recorded outside every run.
	all, err := st.Events(0)
	if err != nil {
		t.Fatal(err)
	}
	undo := 0
	for _, e := range all {
		if e.Kind == "node_change_undo" {
			undo++
		}
	}
	if undo != 2 {
		t.Errorf("want the cluster put back in two changes after the run, got %d node_change_undo events", undo)
	}
}
