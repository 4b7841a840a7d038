package spec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/load"
)

const relativeHead = "name: r\ntarget: {type: fake}\nworkload: {ycsb: a}\nslo: {percentile: 99, threshold: 10ms}\nphases: {measure: 8s}\n"

func TestRelativeRatesParse(t *testing.T) {
	s := mustParse(t, relativeHead+"repetitions: 2\norder: randomized\nload:\n  model: open\n  rates:\n    relative_to: probe\n    fractions: [0.4, 0.7, 1.1]\n")
	r := s.Relative()
	if r == nil || r.To != RelativeToProbe || !reflect.DeepEqual(r.Fractions, []float64{0.4, 0.7, 1.1}) || r.Base != 0 {
		t.Fatalf("relative %+v, want probe with fractions [0.4 0.7 1.1] and no base yet", r)
	}
	// Until the probe ran, the levels are the fractions, so that the plan
	// is known: its size and its randomized order.
	if got := s.Levels(); !reflect.DeepEqual(got, []float64{0.4, 0.7, 1.1}) {
		t.Errorf("levels before the probe %v, want the fractions", got)
	}
	before := s.Plan()
	if len(before) != 6 {
		t.Fatalf("%d planned runs, want 3 levels x 2 repetitions", len(before))
	}
	if !strings.Contains(r.String(), "0.4, 0.7, 1.1 x the rate a short probe finds first") {
		t.Errorf("String() = %q", r.String())
	}

	got := s.WithBaseRate(5184)
	if want := []float64{2070, 3630, 5700}; !reflect.DeepEqual(got.Levels(), want) {
		t.Errorf("levels of 5184 req/s: %v, want %v (three significant digits)", got.Levels(), want)
	}
	if got.Relative().Base != 5184 || s.Relative().Base != 0 {
		t.Errorf("base %g on the copy and %g on the spec, want 5184 and 0 (the spec is not changed)", got.Relative().Base, s.Relative().Base)
	}
	after := got.Plan()
	for i, p := range after {
		q := before[i]
		if p.Slot != q.Slot || p.LevelIndex != q.LevelIndex || p.Repetition != q.Repetition || p.Level != got.Levels()[p.LevelIndex] {
			t.Errorf("run %d: %+v after the probe, %+v before: same slots and order, the level's rate", i, p, q)
		}
	}
}

// A block's spec (treatments) plans its own runs: they get rates too.
func TestRelativeRatesInBlocks(t *testing.T) {
	s := mustParse(t, relativeHead+"load: {model: open, rates: {relative_to: probe, fractions: [0.5, 1]}}\ntreatments: [{name: one}, {name: two}]\n")
	for _, b := range s.Blocks() {
		rs := b.Spec.WithBaseRate(300).Plan()
		if len(rs) != 2 || rs[0].Level != 150 || rs[1].Level != 300 {
			t.Errorf("treatment %d: plan %+v, want 150 and 300 req/s", b.Treatment, rs)
		}
	}
}

func TestRoundRate(t *testing.T) {
	s := mustParse(t, relativeHead+"load: {model: open, rates: {relative_to: probe, fractions: [1]}}\n")
	for _, tt := range []struct{ in, want float64 }{
		{123456, 123000}, {7257.6, 7260}, {99.94, 99.9}, {12.345, 12.3}, {0.3333333, 0.333},
		{0.01, 0.125},                    // one request in the 8 s measured phase at least
		{2 * load.MaxRate, load.MaxRate}, // at most what the engine paces
	} {
		if got := RoundRate(tt.in, s); got != tt.want {
			t.Errorf("RoundRate(%g) = %g, want %g", tt.in, got, tt.want)
		}
	}
}

func TestRelativeRatesErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no slo",
			"name: r\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: {relative_to: probe, fractions: [0.5, 1]}}\n",
			"t.yaml:4: load.rates.relative_to: the probe that finds the base rate judges the campaign's SLO, and this campaign has no slo: section; add one, e.g. slo: {percentile: 99, threshold: 10ms}, or list the rates"},
		{"unknown source",
			relativeHead + "load: {model: open, rates: {relative_to: sweep, fractions: [0.5]}}\n",
			`t.yaml:6: load.rates.relative_to: unknown value "sweep"; the one source of a base rate is relative_to: probe`},
		{"no fractions",
			relativeHead + "load: {model: open, rates: {relative_to: probe}}\n",
			"t.yaml:6: load.rates.fractions: required with relative_to; list the levels as fractions of the probe's rate, e.g. fractions: [0.4, 0.7, 0.9, 1.1, 1.4]"},
		{"a zero fraction",
			relativeHead + "load:\n  model: open\n  rates:\n    relative_to: probe\n    fractions: [0.5, 0]\n",
			"t.yaml:10: load.rates.fractions[1]: must be a fraction of the probe's rate above 0 and at most 10, got 0"},
		{"a rate written as a fraction",
			relativeHead + "load: {model: open, rates: {relative_to: probe, fractions: [5000]}}\n",
			"t.yaml:6: load.rates.fractions[0]: must be a fraction of the probe's rate above 0 and at most 10, got 5000"},
		{"a fraction twice",
			relativeHead + "load: {model: open, rates: {relative_to: probe, fractions: [0.5, 1, 0.5]}}\n",
			"t.yaml:6: load.rates.fractions[2]: 0.5 is listed twice; remove one"},
		{"not a number",
			relativeHead + "load: {model: open, rates: {relative_to: probe, fractions: [half]}}\n",
			`t.yaml:6: load.rates.fractions[0]: expected a number, got "half"`},
		{"an unknown key",
			relativeHead + "load: {model: open, rates: {relative_to: probe, fractions: [1], until: saturated}}\n",
			"t.yaml:6: load.rates.until: unknown field"},
		{"clients",
			relativeHead + "load: {model: closed, clients: {relative_to: probe, fractions: [0.5, 1]}}\n",
			"t.yaml:6: load.clients.relative_to: levels relative to a probe are request rates of the open model; list the client counts, or use model: open with rates: {relative_to: probe, fractions: [...]}"},
	}
	for _, tt := range tests {
		lines := parseErrors(t, tt.src)
		if len(lines) != 1 || !strings.HasPrefix(lines[0], tt.want) {
			t.Errorf("%s: got %q\nwant %q", tt.name, lines, tt.want)
		}
	}
}

// A schedule's steps can be fractions of the probe's rate too: the plan
// has its one run, whose level is the schedule's mean rate once the
// probe's rate is known.
func TestRelativeScheduleParse(t *testing.T) {
	s := mustParse(t, relativeHead+"load:\n  model: open\n  arrival: constant\n  schedule:\n    relative_to: probe\n    steps:\n      - {fraction: 0.1, for: 14s}\n      - {fraction: 2, for: 4s}\n      - {fraction: 0, for: 1s}\n")
	r := s.Relative()
	if r == nil || !r.Steps || !reflect.DeepEqual(r.Fractions, []float64{0.1, 2, 0}) || r.Base != 0 {
		t.Fatalf("relative %+v, want the steps' fractions [0.1 2 0] and no base yet", r)
	}
	if got := s.Load.ArrivalString(); got != "constant steps(0.1x for 14s, 2x for 4s, 0x for 1s) of the rate a short probe finds first" {
		t.Errorf("before the probe the arrivals read %q", got)
	}
	if !strings.Contains(r.String(), "schedule steps of 0.1, 2, 0 x the rate a short probe finds first") {
		t.Errorf("String() = %q", r.String())
	}
	got := s.WithBaseRate(1234)
	rates := []float64{}
	for _, st := range got.Load.Schedule.Steps {
		rates = append(rates, st.Rate)
	}
	// 0.1 x 1234 = 123.4 -> 123; 2 x 1234 = 2468 -> 2470 (three significant
	// digits); a pause stays a pause. The measured phase, 8 s after a
	// 10 s warmup, has 4 s at 123 and 4 s at 2470, so the level is their mean, 1296.5.
	if !reflect.DeepEqual(rates, []float64{123, 2470, 0}) {
		t.Errorf("rates of 1234 req/s: %v, want [123 2470 0]", rates)
	}
	if lv := got.Levels(); len(lv) != 1 || lv[0] != 1296.5 {
		t.Errorf("level %v, want the mean 1296.5", lv)
	}
	if p := got.Plan(); len(p) != 1 || p[0].Level != 1296.5 {
		t.Errorf("plan %+v, want one run at 1296.5", p)
	}
	if s.Load.Schedule.Steps[1].Rate != 0 || s.Relative().Base != 0 {
		t.Error("WithBaseRate changed the spec it copied")
	}
	if got.Relative().Base != 1234 {
		t.Errorf("base %g on the copy", got.Relative().Base)
	}
}

func TestRelativeScheduleErrors(t *testing.T) {
	head := "name: r\ntarget: {type: fake}\nworkload: {ycsb: a}\nslo: {percentile: 99, threshold: 10ms}\n"
	tests := []struct{ name, load, want string }{
		{"rate in a relative step", "schedule: {relative_to: probe, steps: [{rate: 100, for: 5s}]}",
			"load.schedule.steps[0].rate: with relative_to: probe a step gives a fraction of the probe's rate, not a rate; write fraction: 0.5"},
		{"no fraction", "schedule: {relative_to: probe, steps: [{for: 5s}]}",
			"load.schedule.steps[0].fraction: required with relative_to: probe"},
		{"too large", "schedule: {relative_to: probe, steps: [{fraction: 50, for: 5s}]}",
			"load.schedule.steps[0].fraction: must be a fraction of the probe's rate from 0 to 10, got 50"},
		{"fraction without relative_to", "schedule: {steps: [{fraction: 0.5, for: 5s}]}",
			"load.schedule.steps[0].fraction: a fraction is a share of a rate a probe measures first; add relative_to: probe"},
		{"unknown source", "schedule: {relative_to: sweep, steps: [{fraction: 0.5, for: 5s}]}",
			`load.schedule.relative_to: unknown value "sweep"`},
		{"trace", "schedule: {relative_to: probe, trace: x.csv}",
			"load.schedule.relative_to: a trace's rates are requests per second"},
		{"all pauses", "schedule: {relative_to: probe, steps: [{fraction: 0, for: 5s}]}",
			"load.schedule: sends nothing during the measured phase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(head+"load: {model: open, "+tt.load+"}\n"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
	_, err := Parse("t.yaml", []byte("name: r\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, schedule: {relative_to: probe, steps: [{fraction: 1, for: 5s}]}}\n"))
	if err == nil || !strings.Contains(err.Error(), "load.schedule.relative_to: the probe that finds the base rate judges the campaign's SLO") || !strings.Contains(err.Error(), "give the steps rates") {
		t.Errorf("without an SLO: %v", err)
	}
}
