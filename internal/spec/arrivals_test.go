package spec

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
)

// A steps schedule replaces the level list with one level, its mean rate
// over the measured phase (after warmup rounded up to whole intervals),
// and each run gets the steps with its own seed.
func TestScheduleStepsLevelAndArrivals(t *testing.T) {
	s, err := Parse("t.yaml", []byte(noLoad+`load:
  model: open
  arrival: constant
  schedule:
    steps:
      - {rate: 100, for: 30s}
      - {rate: 0, for: 10s}
      - {rate: 300, for: 20s}
phases: {warmup: 10s, measure: 60s}
`))
	if err != nil {
		t.Fatal(err)
	}
	// Measured phase [10 s, 70 s): 100/s x 20 s + 0 x 10 s + 300/s x 30 s
	// (the last step holds to the end) = 11000 requests in 60 s.
	want := 11000 / 60.0
	if lv := s.Levels(); len(lv) != 1 || lv[0] != want {
		t.Fatalf("levels %v, want [%v]", lv, want)
	}
	if plan := s.Plan(); len(plan) != 1 || plan[0].Level != want {
		t.Fatalf("plan %+v", plan)
	}
	sched, err := s.Load.Arrivals(s.Levels()[0], 7)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := sched.(*load.Steps)
	if !ok || st.Spacing != load.Even || st.Seed != 7 || len(st.Steps) != 3 || st.Steps[2] != (load.Step{Rate: 300, For: 20 * time.Second}) {
		t.Fatalf("schedule %#v", sched)
	}
	if got := s.Load.ArrivalString(); got != "constant steps(100/s for 30s, 0/s for 10s, 300/s for 20s)" {
		t.Fatalf("arrival string %q", got)
	}
}

// A trace file is read relative to the spec file when the spec is checked.
func TestScheduleTraceRelativeToSpec(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "traces", "day.csv"), []byte("time,rate\n0,50\n5,150\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "spec.yaml")
	src := noLoad + "load: {model: open, schedule: {trace: traces/day.csv}}\nphases: {warmup: 0s, measure: 10s}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lv := s.Levels(); len(lv) != 1 || lv[0] != 100 {
		t.Fatalf("levels %v, want [100] (50/s for 5 s, 150/s for 5 s)", lv)
	}
	sched, err := s.Load.Arrivals(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if tr, ok := sched.(*load.Trace); !ok || tr.Spacing != load.Exponential || len(tr.Points) != 2 {
		t.Fatalf("schedule %#v", sched)
	}
	if got := s.Load.ArrivalString(); got != "poisson trace(traces/day.csv: 2 rows from 0s to 5s, 50 to 150/s)" {
		t.Fatalf("arrival string %q", got)
	}
	// Without a schedule the arrival string is the process alone: each
	// level has its own rate.
	plain, err := Parse("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Load.ArrivalString(); got != "poisson" {
		t.Fatalf("arrival string %q", got)
	}
}

func TestScheduleErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("neg.csv", "time,rate\n0,10\n30,-5\n")
	write("order.csv", "0,10\n30,20\n# pause\n20,0\n")
	write("words.csv", "0,10\nsoon,20\n")
	write("warm.csv", "0,100\n10,0\n")
	// A FIFO without a writer once made validate wait forever (issue 36).
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "t.yaml")
	for _, c := range []struct {
		name string
		load string
		want []string // each the start of one error line
	}{
		{"rates and schedule", "load: {model: open, rates: [100], schedule: {steps: [{rate: 1, for: 1s}]}}",
			[]string{spec + ":4: load.rates: a schedule sets the rate over the run and replaces rates; remove rates"}},
		{"neither", "load: {model: open, schedule: {}}",
			[]string{spec + ":4: load.schedule: give steps: [{rate: 100, for: 30s}, {rate: 300, for: 30s}] or trace: load.csv"}},
		{"both", "load: {model: open, schedule: {steps: [{rate: 1, for: 1s}], trace: x.csv}}",
			[]string{spec + ":4: load.schedule: give steps or a trace, not both"}},
		{"empty steps", "load: {model: open, schedule: {steps: []}}",
			[]string{spec + ":4: load.schedule.steps: the list is empty"}},
		{"bad step", "load:\n  model: open\n  schedule:\n    steps:\n      - {rate: -1, for: 1s}\n      - {for: 0s}\n",
			[]string{
				spec + ":8: load.schedule.steps[0].rate: must be 0 or more requests per second, got -1",
				spec + ":9: load.schedule.steps[1].rate: required; give the step's rate",
				spec + ":9: load.schedule.steps[1].for: must be longer than 0, got 0s",
			}},
		{"step without for", "load: {model: open, schedule: {steps: [{rate: 5}]}}",
			[]string{spec + ":4: load.schedule.steps[0].for: required; give how long the step lasts"}},
		{"unknown step field", "load: {model: open, schedule: {steps: [{rate: 5, for: 1s, ramp: true}]}}",
			[]string{spec + ":4: load.schedule.steps[0].ramp: unknown field"}},
		{"missing trace", "load: {model: open, schedule: {trace: nope.csv}}",
			[]string{spec + ":4: load.schedule.trace: cannot read " + filepath.Join(dir, "nope.csv") + " (no such file or directory); the path is relative to the spec file"}},
		{"trace is a FIFO", "load: {model: open, schedule: {trace: fifo.csv}}",
			[]string{spec + ":4: load.schedule.trace: cannot read " + filepath.Join(dir, "fifo.csv") + " (is a FIFO (named pipe), not a regular file; give a file); the path is relative to the spec file"}},
		{"negative rate in trace", "load: {model: open, schedule: {trace: neg.csv}}",
			[]string{filepath.Join(dir, "neg.csv") + ":3: load.schedule.trace: rate -5 is negative; use 0 for a pause"}},
		{"times out of order", "load: {model: open, schedule: {trace: order.csv}}",
			[]string{filepath.Join(dir, "order.csv") + ":4: load.schedule.trace: time 20 is not after the previous row's (30 s)"}},
		{"bad row", "load: {model: open, schedule: {trace: words.csv}}",
			[]string{filepath.Join(dir, "words.csv") + `:2: load.schedule.trace: time "soon" is not a number of seconds`}},
		{"nothing measured", "load: {model: open, schedule: {trace: warm.csv}}\nphases: {warmup: 10s, measure: 5s}",
			[]string{spec + ":4: load.schedule: sends nothing during the measured phase (10s to 15s from the start of the run); give it a positive rate there"}},
		{"closed", "load: {model: closed, clients: [1], schedule: {steps: [{rate: 1, for: 1s}]}}",
			[]string{spec + ":4: load.schedule: only applies to the open model"}},
	} {
		_, err := Parse(spec, []byte(noLoad+c.load+"\n"))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(c.want) {
			t.Errorf("%s: %d errors, want %d:\n%v", c.name, len(lines), len(c.want), err)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%s: error %q, want it to start with %q", c.name, lines[i], w)
			}
		}
	}
}

// A treatment swaps a level list for a schedule by clearing rates.
func TestScheduleInTreatment(t *testing.T) {
	s, err := Parse("t.yaml", []byte(base+`phases: {warmup: 0s, measure: 20s}
treatments:
  - name: levels
  - name: burst
    set: {load.rates: null, load.schedule: {steps: [{rate: 50, for: 10s}, {rate: 250, for: 10s}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if lv := s.Treatments[0].Spec.Levels(); len(lv) != 1 || lv[0] != 100 {
		t.Fatalf("levels %v", lv)
	}
	b := s.Treatments[1].Spec
	if lv := b.Levels(); len(lv) != 1 || lv[0] != 150 {
		t.Fatalf("burst levels %v, want [150]", lv)
	}
	if got := b.Load.ArrivalString(); got != "poisson steps(50/s for 10s, 250/s for 10s)" {
		t.Fatalf("arrival string %q", got)
	}
}
