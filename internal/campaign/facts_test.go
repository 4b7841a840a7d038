package campaign

import (
	"path/filepath"
	"testing"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// Every treatment's facts are in the store before the first one runs, so
// a campaign stopped early still reports every treatment it planned; a
// row written later (with the target's address) is not replaced by a
// resume.
func TestAllTreatmentsAreRecordedBeforeTheFirstRuns(t *testing.T) {
	text := []byte(`name: two
target: {type: sqlite}
workload: {ycsb: c, record_count: 10}
load: {model: open, rates: [10, 20]}
phases: {warmup: 0s, measure: 1s}
slo: {percentile: 99, threshold: 5ms}
treatments:
  - {name: first}
  - {name: second, set: {slo.threshold: 9ms, load.rates: [30]}}
`)
	s, err := spec.Parse("two.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Create(filepath.Join(t.TempDir(), "results.db"), store.Campaign{Name: "two", SpecYAML: string(text)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := recordAllTreatments(st, s); err != nil {
		t.Fatal(err)
	}
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	ts := r.Treatments()
	if len(ts) != 2 || ts[0].Name != "first" || ts[1].Name != "second" {
		t.Fatalf("treatments = %+v", ts)
	}
	if legacy, _ := r.Legacy(); legacy {
		t.Error("a store with treatment rows is read from its facts, not its spec text")
	}
	if s := r.SLO("second"); s == nil || s.Threshold.Milliseconds() != 9 || len(ts[1].Load.Levels) != 1 || ts[1].Load.Levels[0] != 30 {
		t.Errorf("second = %+v, SLO %+v", ts[1], s)
	}
	if len(ts[1].Set) != 2 || ts[1].Set[1] != (results.Setting{Path: "load.rates", Value: "[30]"}) {
		t.Errorf("second's settings = %+v", ts[1].Set)
	}

	// The target opens and its row is rewritten with an address; a resume
	// records the treatments again without losing it.
	f := TreatmentFacts(s.Treatments[0].Spec, "first", 0, nil)
	f.Target.Address = "127.0.0.1:5432"
	row, err := f.Row()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutTreatment(row); err != nil {
		t.Fatal(err)
	}
	if err := recordAllTreatments(st, s); err != nil {
		t.Fatal(err)
	}
	if r, err = results.New(st); err != nil {
		t.Fatal(err)
	}
	if first, _ := r.Treatment("first"); first.Target.Address != "127.0.0.1:5432" {
		t.Errorf("after a resume, first's address = %q", first.Target.Address)
	}
}
