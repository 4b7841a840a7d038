package campaign

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/headroom-dev/headroom/internal/store"
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
	out, err := Start(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Runs != 3 || out.Completed != 3 {
		t.Errorf("outcome %+v", out)
	}
	st := openStore(t, out)
	runs, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		tr    string
		slot  int
		level float64
	}
	var got []key
	for _, r := range runs {
		got = append(got, key{r.Treatment, r.Slot, r.Level})
		if r.Status != store.StatusCompleted {
			t.Errorf("run %d: %s %s", r.ID, r.Status, r.Message)
		}
	}
	want := []key{{"base", 0, 50}, {"base", 1, 100}, {"more", 100000, 150}}
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
	evs, _ := st.Events(-1)
	var populated []string
	for _, e := range evs {
		if e.Kind == eventPopulated {
			var d populatedDetail
			if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
				t.Fatal(err)
			}
			populated = append(populated, d.Treatment)
		}
	}
	if len(populated) != 2 || populated[0] != "base" || populated[1] != "more" {
		t.Errorf("populated events by treatment: %v", populated)
	}
	// A resume has nothing left to do.
	again, err := Resume(context.Background(), out.Dir, Options{})
	if err != nil || again.Completed != 3 {
		t.Errorf("resume: %+v %v", again, err)
	}
	if runs2, _ := st.Runs(); len(runs2) != 3 {
		t.Errorf("resume ran again: %d runs", len(runs2))
	}
}
