package campaign

import (
	"testing"
)

// A closed-loop campaign stores each run's stall watch (one row per run,
// with every client watched and read); an open-loop one stores none.
func TestQuietWatchStored(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: quiet
target: {type: sqlite}
workload: {ycsb: c, record_count: 10}
load: {model: closed, clients: [1, 3]}
phases: {warmup: 0, measure: 300ms}
interval: 100ms
monitor: {enabled: false}
output: out
`)
	_, st := start(t, s)
	for _, r := range storedRuns(t, st, 2) {
		w, err := st.QuietWatch(r.ID)
		if err != nil || w == nil {
			t.Fatalf("run %d: watch %v, %v", r.ID, w, err)
		}
		if w.Clients != int(r.Level) || w.Left != w.Clients || w.Floor <= 0 {
			t.Errorf("run %d at %g clients: watch %+v", r.ID, r.Level, w)
		}
		for _, p := range w.Periods {
			if p.Start.Before(r.Summary.MeasureStart) || p.End.After(r.Summary.MeasureEnd) || p.End.Sub(p.Start) < w.Floor {
				t.Errorf("run %d: quiet period %v to %v outside the measured phase or under the floor %v", r.ID, p.Start, p.End, w.Floor)
			}
		}
	}

	open := parse(t, t.TempDir(), `
name: quiet-open
target: {type: sqlite}
workload: {ycsb: c, record_count: 10}
load: {model: open, rates: [100]}
phases: {warmup: 0, measure: 200ms}
interval: 100ms
monitor: {enabled: false}
output: out
`)
	_, st = start(t, open)
	for _, r := range storedRuns(t, st, 1) {
		if w, err := st.QuietWatch(r.ID); err != nil || w != nil {
			t.Errorf("open loop: watch %+v, %v", w, err)
		}
	}
}
