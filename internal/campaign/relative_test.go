package campaign

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/probe"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/null"
)

// relativeSpec is a campaign whose rates are fractions of a probed rate,
// against a simulated server of known capacity: one server of 1 ms, 1000
// req/s, which meets p99 <= 20 ms well below that and misses it near it.
const relativeSpec = `
name: around-probe
target: {type: null, service_time: 1ms, servers: 1}
workload: {ycsb: c, record_count: 100}
load:
  model: open
  rates: {relative_to: probe, fractions: [0.25, 0.5, 1.5]}
slo: {percentile: 99, threshold: 20ms}
repetitions: 2
order: randomized
phases: {warmup: 500ms, measure: 1s}
interval: 250ms
monitor: {enabled: false}
output: out
`

// The levels are the spec's fractions of the estimate of the probe the
// campaign ran first (stored like every probe), rounded; an interrupted
// campaign resumes with the same levels, from the stored result, without
// probing again; the treatment's facts say where the levels came from.
func TestAroundProbeLevelsAndResume(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, relativeSpec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := Start(ctx, s, Options{Progress: &cancelAfter{Reporter: progress.Quiet(), n: 2, cancel: cancel}})
	if !errors.Is(err, ErrInterrupted) {
		logFailedRuns(t, out)
		t.Fatalf("first session: %v, want interrupted after two runs", err)
	}
	st := openStore(t, out)
	ps, err := st.Probes()
	if err != nil || len(ps) != 1 {
		t.Fatalf("probes: %v, %d stored, want 1", err, len(ps))
	}
	p := ps[0]
	if p.Status != store.StatusCompleted || !(p.Estimate > 0) || p.SLAPercentile != 99 {
		t.Fatalf("probe %+v: want a completed probe with an estimate at the SLO's p99", p)
	}
	// The server's capacity is 1000 req/s: an estimate above it means the
	// probe did not judge the SLO.
	if p.Estimate > 1000 {
		t.Errorf("estimate %g req/s, want it below the capacity of 1000 req/s", p.Estimate)
	}
	// The base is the estimate, or the highest rate whose window met the
	// SLO when the estimate is a rate the probe did not run (baseRate).
	base, basis := p.Estimate, results.BasisEstimate
	if p.LowerBound < base {
		base, basis = p.LowerBound, results.BasisLowerBound
	}
	t.Logf("probe estimate %g req/s, highest rate that met the SLO %g", p.Estimate, p.LowerBound)
	var want []float64
	for _, f := range []float64{0.25, 0.5, 1.5} {
		want = append(want, roundTo3(f*base))
	}
	runs := storedRuns(t, st, 2)
	for _, r := range runs {
		if r.Level != want[r.LevelIndex] {
			t.Errorf("run at level %d: %g req/s, want %g (of %v)", r.LevelIndex, r.Level, want[r.LevelIndex], want)
		}
	}

	again, err := Resume(context.Background(), out.Dir, Options{})
	if err != nil {
		logFailedRuns(t, again)
		t.Fatalf("resume: %v", err)
	}
	if ps, _ := st.Probes(); len(ps) != 1 {
		t.Errorf("%d probes after resuming, want the first one only", len(ps))
	}
	all := storedRuns(t, st, 6)
	for _, r := range all {
		if r.Status != store.StatusCompleted || r.Level != want[r.LevelIndex] {
			t.Errorf("run %d (level %d): %s at %g req/s, want completed at %g", r.ID, r.LevelIndex, r.Status, r.Level, want[r.LevelIndex])
		}
	}
	evs, _ := st.Events(-1)
	n := 0
	for _, e := range evs {
		if e.Kind == eventProbedRates {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d probed_rates events, want 1", n)
	}

	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := r.Treatment("")
	rel := tr.Load.Relative
	if rel == nil || rel.Base != base || rel.Basis != basis || rel.ProbeID != p.ID || !slices.Equal(tr.Load.Levels, want) {
		t.Fatalf("facts: levels %v, relative %+v; want %v from probe %d's %g req/s (%s)", tr.Load.Levels, rel, want, p.ID, base, basis)
	}
	if !strings.Contains(rel.Text(), "the highest rate that met the SLO in a short probe") {
		t.Errorf("text %q", rel.Text())
	}
	resumeFindsNothingToDo(t, again, st, 6)
}

// roundTo3 rounds to three significant digits, as spec.RoundRate does
// for rates from 1 req/s up.
func roundTo3(x float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(x))-2)
	return math.Round(x/mag) * mag
}

// Without an estimate the levels fall back to the highest rate that met
// the SLO, else to the lowest rate the probe tried.
func TestAroundProbeBaseRate(t *testing.T) {
	cfg := LevelProbeConfig(parse(t, t.TempDir(), relativeSpec))
	nan := math.NaN()
	tests := []struct {
		name  string
		res   probe.Result
		base  float64
		basis string
	}{
		{"estimate", probe.Result{Estimate: 5184, LowerBound: 5184, Stop: probe.StopSLA}, 5184, results.BasisEstimate},
		{"estimate run", probe.Result{Estimate: 6400, LowerBound: 12800, Stop: probe.StopSLA}, 6400, results.BasisEstimate},
		{"estimate not run", probe.Result{Estimate: 10240, LowerBound: 6400, Stop: probe.StopSLA}, 6400, results.BasisLowerBound},
		{"capped", probe.Result{Estimate: nan, LowerBound: 102400, Stop: probe.StopMaxRate}, 102400, results.BasisLowerBound},
		{"nothing met the SLO", probe.Result{Estimate: nan, LowerBound: nan, Stop: probe.StopNoEstimate,
			Windows: []probe.Window{{Rate: 800}, {Rate: 400}, {Rate: 1, Discarded: true}, {Rate: 200}}}, 200, results.BasisLowest},
		{"only the baseline ran", probe.Result{Estimate: nan, LowerBound: nan, Stop: probe.StopTargetFailing}, 5, results.BasisLowest},
	}
	for _, tt := range tests {
		base, basis, note := baseRate(cfg, tt.res)
		if base != tt.base || basis != tt.basis {
			t.Errorf("%s: base %g (%s), want %g (%s)", tt.name, base, basis, tt.base, tt.basis)
		}
		want := "the probe found no estimate (it stopped: " + tt.res.Stop + ")"
		if tt.res.Estimate > 0 {
			want = "the probe's estimate, 10240 req/s, was a rate it did not run"
		}
		if (basis == results.BasisEstimate) != (note == "") || (note != "" && !strings.Contains(note, want)) {
			t.Errorf("%s: note %q", tt.name, note)
		}
	}
}

// A schedule of fractions of the probed rate: the run sends each step at
// its fraction of the probe's base rate, and its level is their mean over
// the measured phase.
func TestAroundProbeSchedule(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: around-probe-steps
target: {type: null, service_time: 1ms, servers: 1}
workload: {ycsb: c, record_count: 100}
load:
  model: open
  arrival: constant
  schedule:
    relative_to: probe
    steps: [{fraction: 0.2, for: 1s}, {fraction: 0.6, for: 1s}]
slo: {percentile: 99, threshold: 20ms}
phases: {warmup: 500ms, measure: 1500ms}
interval: 250ms
monitor: {enabled: false}
output: out
`)
	out, err := Start(context.Background(), s, Options{Progress: progress.Quiet()})
	if err != nil {
		logFailedRuns(t, out)
		t.Fatal(err)
	}
	st := openStore(t, out)
	ps, err := st.Probes()
	if err != nil || len(ps) != 1 || !(ps[0].LowerBound > 0) {
		t.Fatalf("probes: %v, %+v, want one that met the SLO somewhere", err, ps)
	}
	base := ps[0].Estimate
	if !(base > 0) || ps[0].LowerBound < base {
		base = ps[0].LowerBound
	}
	// The measured phase runs from 0.5 s to 2 s: half a second of the
	// first step, a second of the second.
	low, high := roundTo3(0.2*base), roundTo3(0.6*base)
	mean := (0.5*low + high) / 1.5
	runs := storedRuns(t, st, 1)
	if math.Abs(runs[0].Level-mean) > 1e-9*mean {
		t.Errorf("level %g, want the steps' mean %g (steps %g and %g req/s of a %g base)", runs[0].Level, mean, low, high, base)
	}
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	done := r.CompletedRuns("")
	if len(done) != 1 {
		t.Fatalf("completed runs %+v", done)
	}
	// At a fifth and three fifths of what met the SLO, the simulated server
	// serves everything it is sent: the measured phase completes the
	// steps' requests (a request or two either side at the edges).
	want := 0.5*low + high
	if got := float64(done[0].Summary.Completed); math.Abs(got-want) > 0.05*want+2 {
		t.Errorf("completed %g requests in the measured phase, want about %g", got, want)
	}
	tr, _ := r.Treatment("")
	if tr.Load.Relative == nil || tr.Load.Relative.Base != base || !strings.Contains(tr.Load.Arrival, "steps(") {
		t.Errorf("facts: relative %+v, arrival %q", tr.Load.Relative, tr.Load.Arrival)
	}
}
