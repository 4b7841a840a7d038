package campaign

import (
	"reflect"
	"testing"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Factor treatments interleaved by repetition run in the spec's block
// order (repetition 1 of every treatment, then repetition 2, treatments
// shuffled per round), keep their slots (treatment i's at i x 100000), and
// record their factor settings. All treatments share one SQLite file, so
// a block that follows another treatment's loads its own data again.
func TestFactorTreatmentsInterleaveByRepetition(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: blocks
target: {type: sqlite}
workload: {ycsb: a, record_count: 200}
load: {model: open, rates: [50]}
phases: {warmup: 0, measure: 1s}
monitor: {enabled: false}
repetitions: 2
output: out
seed: 3
factors:
  - {path: workload.ycsb, name: mix, values: [a, c]}
  - {path: workload.record_count, name: records, values: [200, 300]}
treatment_order: randomized
blocks: repetition
`)
	out, st := start(t, s)
	if out.Runs != 8 || out.Completed != 8 {
		t.Errorf("outcome %+v", out)
	}
	got := completedRunKeys(t, storedRuns(t, st, 8))
	var want []runKey
	for _, b := range s.Blocks() {
		for _, p := range b.Runs {
			want = append(want, runKey{s.Treatments[b.Treatment].Name, b.Treatment*spec.SlotsPerTreatment + p.Slot, p.Level, p.Repetition})
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("runs in order\n%v\nwant the blocks' order\n%v", got, want)
	}
	for i, k := range got {
		if k.Repetition != 1+i/4 {
			t.Errorf("run %d is repetition %d; every treatment's repetition 1 should come first", i, k.Repetition)
		}
	}

	// Every block but the first follows another treatment's block on the
	// shared file, so each one loaded its treatment's data.
	populated := populatedTreatments(t, st)
	var blockOrder []string
	for _, b := range s.Blocks() {
		blockOrder = append(blockOrder, s.Treatments[b.Treatment].Name)
	}
	if !reflect.DeepEqual(populated, blockOrder) {
		t.Errorf("populated events %v, want one per block %v", populated, blockOrder)
	}

	// The results model has each treatment's factor settings.
	r, err := results.Open(out.StorePath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr, ok := r.Treatment("mix-c_records-300")
	if !ok {
		t.Fatalf("no treatment mix-c_records-300 in %v", r.Treatments())
	}
	wantSet := []results.Setting{{Path: "workload.ycsb", Value: "c"}, {Path: "workload.record_count", Value: "300"}}
	if !reflect.DeepEqual(tr.Set, wantSet) || tr.Workload.RecordCount != 300 || tr.Index != 3 {
		t.Errorf("treatment facts: set %v, records %d, index %d", tr.Set, tr.Workload.RecordCount, tr.Index)
	}

	// A resume has nothing left to do and opens no target.
	resumeFindsNothingToDo(t, out, st, 8)
}
