package campaign

import (
	"testing"

	_ "github.com/headroom-dev/headroom/internal/target/null"
)

// Treatments run one after another, each with its own plan; their runs
// carry the treatment's name and slots that never collide, the same
// level and repetition get the same request sequence (seed) in every
// treatment, and each treatment populates its own target.
func TestTreatmentsRunInOrderWithTheirOwnPlans(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: tr
target: {type: sqlite}
workload: {ycsb: a, record_count: 200}
load: {model: open, rates: [50, 100]}
phases: {warmup: 0, measure: 1s}
monitor: {enabled: false}
output: out
treatments:
  - name: base
  - name: more
    set:
      load.rates: [150]
      workload.ycsb: c
`)
	out, st := start(t, s)
	if out.Runs != 3 || out.Completed != 3 {
		t.Errorf("outcome %+v", out)
	}
	runs := storedRuns(t, st, 3)
	got := completedRunKeys(t, runs)
	want := []runKey{{"base", 0, 50, 1}, {"base", 1, 100, 1}, {"more", 100000, 150, 1}}
	if len(got) != len(want) {
		t.Fatalf("runs %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("run %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Treatment "more" is read-only: no update intervals.
	ivs, _ := st.Intervals(runs[2].ID, "measure")
	for _, iv := range ivs {
		if iv.Op != "read" {
			t.Errorf("treatment more ran a %s", iv.Op)
		}
	}
	if populated := populatedTreatments(t, st); len(populated) != 2 || populated[0] != "base" || populated[1] != "more" {
		t.Errorf("populated events by treatment: %v", populated)
	}
	// A resume has nothing left to do.
	resumeFindsNothingToDo(t, out, st, 3)
}
