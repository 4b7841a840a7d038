package campaign

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/null"
)

// A campaign with a time-varying schedule: each treatment has one level,
// the schedule's mean rate over the measured phase; the engine is handed
// the schedule, so the stored intervals follow its steps or trace rows;
// and the treatment facts name the schedule.
func TestCampaignScheduleStepsAndTrace(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "load.csv"), []byte("time,rate\n0,100\n1,0\n1.5,300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := parse(t, dir, `
name: sched
target: {type: null}
workload: {ycsb: c, record_count: 100}
load:
  model: open
  arrival: constant
  schedule: {steps: [{rate: 100, for: 1s}, {rate: 300, for: 1s}]}
phases: {warmup: 0s, measure: 2s}
interval: 500ms
monitor: {enabled: false}
output: out
treatments:
  - name: steps
  - name: traced
    set: {load.schedule: {trace: load.csv}}
`)
	out, st := start(t, s)
	if out.Runs != 2 || out.Completed != 2 {
		t.Fatalf("outcome %+v", out)
	}
	runs := storedRuns(t, st, 2)
	cases := []struct {
		treatment string
		level     float64   // mean rate over the 2 s measured phase
		perIv     []float64 // requests per 500 ms interval
		arrival   string
	}{
		{"steps", 200, []float64{50, 50, 150, 150}, "constant steps(100/s for 1s, 300/s for 1s)"},
		{"traced", 125, []float64{50, 50, 0, 150}, "constant trace(load.csv: 3 rows from 0s to 1.5s, 0 to 300/s)"},
	}
	for i, c := range cases {
		r := runs[i]
		if r.Treatment != c.treatment || r.Level != c.level || r.Status != store.StatusCompleted {
			t.Fatalf("run %d: treatment %s level %v status %s %s; want %s at %v", i, r.Treatment, r.Level, r.Status, r.Message, c.treatment, c.level)
		}
		ivs, err := st.Intervals(r.ID, "measure")
		if err != nil {
			t.Fatal(err)
		}
		byIndex := map[int]float64{}
		for _, iv := range ivs {
			byIndex[int(iv.Start.Sub(ivs[0].Start)/(500*time.Millisecond))] += float64(iv.Count + iv.Dropped)
		}
		var got []float64
		for k := range c.perIv {
			got = append(got, byIndex[k])
		}
		for k, want := range c.perIv {
			// One request either way: a request due on a boundary may
			// start a few microseconds early.
			if math.Abs(got[k]-want) > 1 || (want == 0 && got[k] != 0) {
				t.Errorf("%s: requests per interval %v, want %v", c.treatment, got, c.perIv)
				break
			}
		}
	}
	res, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range res.Treatments() {
		if tr.Load.Arrival != cases[i].arrival || len(tr.Load.Levels) != 1 || tr.Load.Levels[0] != cases[i].level {
			t.Errorf("treatment %s facts: arrival %q levels %v; want %q at %v", tr.Name, tr.Load.Arrival, tr.Load.Levels, cases[i].arrival, cases[i].level)
		}
	}
}
