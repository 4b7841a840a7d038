package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/results"
)

func TestWorkloadText(t *testing.T) {
	for _, c := range []struct {
		w    results.Workload
		want string
	}{
		{results.Workload{Kind: "ycsb", YCSB: "b", Mix: map[string]float64{"read": 0.95, "update": 0.05}, Distribution: "zipfian"}, "YCSB B (zipfian)"},
		// Stores written before the fact tables spell YCSB F's operation
		// without underscores.
		{results.Workload{Kind: "ycsb", YCSB: "f", Mix: map[string]float64{"read": 0.5, "readmodifywrite": 0.5}, Distribution: "zipfian"}, "YCSB F (zipfian)"},
		{results.Workload{Kind: "ycsb", YCSB: "f", Mix: map[string]float64{"read": 0.5, "read_modify_write": 0.5}, Distribution: "zipfian"}, "YCSB F (zipfian)"},
		{results.Workload{Kind: "ycsb", YCSB: "a", Mix: map[string]float64{"update": 1}, Distribution: "uniform"}, "custom mix (uniform)"},
		{results.Workload{Kind: "ycsb", Mix: map[string]float64{"read": 0.5, "update": 0.5}, Distribution: "zipfian"}, "custom mix (zipfian)"},
		{results.Workload{Kind: "statements", Statements: []string{"q"}, Mix: map[string]float64{"q": 1}}, "custom workload"},
		{results.Workload{}, "unknown workload"},
	} {
		if got := workloadText(c.w); got != c.want {
			t.Errorf("workloadText(%+v) = %q, want %q", c.w, got, c.want)
		}
	}
}

// The header says what the treatment's facts say: its load model and
// arrivals, workload, target, repetitions and phases.
func TestHeaderOfTreatment(t *testing.T) {
	tr := results.Treatment{Name: "big",
		Load:     results.Load{Model: "open", Arrival: "poisson", Levels: []float64{500}, Repetitions: 2, Measure: 3 * time.Second, Interval: time.Second},
		Workload: results.Workload{Kind: "ycsb", YCSB: "c", Mix: map[string]float64{"read": 1}, Distribution: "uniform"},
		Target:   results.Target{Type: "sqlite", InProcess: true}}
	h := HeaderOf("v1", tr)
	want := Header{Name: "v1", Model: "open loop, poisson arrivals", Workload: "YCSB C (uniform)", Target: "sqlite", Reps: 2,
		Interval: time.Second, Measure: 3 * time.Second, InProcess: true}
	if h != want {
		t.Fatalf("HeaderOf = %+v, want %+v", h, want)
	}
	var w bytes.Buffer
	Terminal(&w, h, levels.Summary{Model: "open", FirstFail: -1, LastPass: -1}, 1)
	for _, s := range []string{"v1 · open loop, poisson arrivals · YCSB C (uniform) on sqlite", "(3s, intervals of 1s)", "1 run(s) were interrupted or failed"} {
		if !strings.Contains(w.String(), s) {
			t.Errorf("terminal output lacks %q:\n%s", s, w.String())
		}
	}
	closed := HeaderOf("v1", results.Treatment{Load: results.Load{Model: "closed"}})
	if closed.Model != "closed loop" || closed.Target != "an unknown target" || closed.Workload != "unknown workload" {
		t.Errorf("a treatment known only from its runs: %+v", closed)
	}
}
