package spec

import (
	"reflect"
	"strings"
	"testing"
)

const sweepHead = "name: r\ntarget: {type: fake}\nworkload: {ycsb: a}\n"

func TestSweepParses(t *testing.T) {
	tests := []struct {
		name, load string
		levels     []float64
		want       Sweep
	}{
		{"max caps the levels, SLO rule on with an slo",
			"load: {model: open, rates: {from: 10, step: 10, until: saturated, max: 50}}\nslo: {percentile: 99, threshold: 10ms}\n",
			[]float64{10, 20, 30, 40, 50}, Sweep{From: 10, Step: 10, Max: 50, CPUPct: 95, ErrorPct: 1, SLO: true}},
		{"max off the grid is not run, no slo leaves the SLO rule off",
			"load: {model: open, rates: {from: 10, step: 20, until: saturated, max: 75}}\n",
			[]float64{10, 30, 50, 70}, Sweep{From: 10, Step: 20, Max: 75, CPUPct: 95, ErrorPct: 1}},
		{"max_levels caps the count",
			"load: {model: closed, clients: {from: 1, step: 2, until: saturated, max_levels: 3}}\n",
			[]float64{1, 3, 5}, Sweep{From: 1, Step: 2, MaxLevels: 3, CPUPct: 95, ErrorPct: 1}},
		{"the lower of two caps wins",
			"load: {model: open, rates: {from: 100, step: 100, until: saturated, max: 1000, max_levels: 2}}\n",
			[]float64{100, 200}, Sweep{From: 100, Step: 100, Max: 1000, MaxLevels: 2, CPUPct: 95, ErrorPct: 1}},
		{"rules are configurable",
			"load: {model: open, rates: {from: 5, step: 5, until: saturated, max: 10, saturation: {cpu_pct: 80, error_pct: 0, slo: false}}}\nslo: {percentile: 99, threshold: 10ms}\n",
			[]float64{5, 10}, Sweep{From: 5, Step: 5, Max: 10, CPUPct: 80}},
	}
	for _, tt := range tests {
		s := mustParse(t, sweepHead+tt.load)
		if got := s.Levels(); !reflect.DeepEqual(got, tt.levels) {
			t.Errorf("%s: levels %v, want %v", tt.name, got, tt.levels)
		}
		sw := s.Sweep()
		if sw == nil {
			t.Fatalf("%s: no sweep", tt.name)
		}
		got := *sw
		got.sloWritten = nil
		if got != tt.want {
			t.Errorf("%s: sweep %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestSweepPlanIsInOrder(t *testing.T) {
	s := mustParse(t, sweepHead+"repetitions: 2\nload: {model: open, rates: {from: 10, step: 10, until: saturated, max: 30}}\n")
	var got []float64
	for _, p := range s.Plan() {
		got = append(got, p.Level)
	}
	if want := []float64{10, 10, 20, 20, 30, 30}; !reflect.DeepEqual(got, want) {
		t.Errorf("plan levels %v, want %v (each level's repetitions together, increasing)", got, want)
	}
}

func TestSweepNotOnAList(t *testing.T) {
	s := mustParse(t, sweepHead+"load: {model: open, rates: [10, 20]}\n")
	if s.Sweep() != nil {
		t.Error("a list of levels is not a sweep")
	}
}

func TestSweepString(t *testing.T) {
	s := mustParse(t, sweepHead+"load: {model: open, rates: {from: 10, step: 10, until: saturated, max: 400}}\nslo: {percentile: 99, threshold: 10ms}\n")
	got := s.Sweep().String("req/s")
	for _, want := range []string{"from 10 by 10 req/s", "the target's CPU >= 95%", "errors > 1% of requests", "the SLO fails", "at most 400 req/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

func TestSweepErrors(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"no cap", "load: {model: open, rates: {from: 10, step: 10, until: saturated}}\n",
			"t.yaml:4: load.rates: a sweep needs a cap so that it ends when the target never saturates; add max: (the highest level to try) or max_levels:"},
		{"max below from", "load: {model: open, rates: {from: 10, step: 10, until: saturated, max: 5}}\n",
			"t.yaml:4: load.rates.max: 5 is below from (10), so the sweep could not run a level; raise max or lower from"},
		{"zero max_levels", "load: {model: open, rates: {from: 10, step: 10, until: saturated, max_levels: 0}}\n",
			"t.yaml:4: load.rates.max_levels: must be at least 1, got 0"},
		{"unknown until", "load: {model: open, rates: {from: 10, step: 10, until: done, max: 50}}\n",
			`t.yaml:4: load.rates.until: unknown value "done"; a sweep runs until: saturated`},
		{"to in a sweep", "load: {model: open, rates: {from: 10, to: 50, step: 10, until: saturated}}\n",
			"t.yaml:4: load.rates.to: a sweep ends by until: saturated, not at to:; write max: for the highest level to try"},
		{"no step", "load: {model: open, rates: {from: 10, until: saturated, max: 50}}\n",
			"t.yaml:4: load.rates.step: required in a sweep; write {from: 10, step: 10, until: saturated, max: 400}"},
		{"negative step", "load: {model: open, rates: {from: 10, step: -1, until: saturated, max: 50}}\n",
			"t.yaml:4: load.rates.step: must be greater than 0, got -1"},
		{"too many levels", "load: {model: open, rates: {from: 1, step: 1, until: saturated, max: 20000}}\n",
			"t.yaml:4: load.rates: this sweep may run more than 10000 levels; use a larger step, a lower max or max_levels"},
		{"cap beyond what the engine paces", "load: {model: open, rates: {from: 500000, step: 500000, until: saturated, max: 2000000}}\n",
			"t.yaml:4: load.rates: 1.5e+06 requests per second is more than the 1000000 the load engine can pace; use at most 1000000"},
		{"fractional clients", "load: {model: closed, clients: {from: 1, step: 0.5, until: saturated, max: 3}}\n",
			"t.yaml:4: load.clients: the range includes 1.5 clients; use whole numbers of clients, 1 or more"},
		{"cpu out of range", "load: {model: open, rates: {from: 10, step: 10, until: saturated, max: 50, saturation: {cpu_pct: 120}}}\n",
			"t.yaml:4: load.rates.saturation.cpu_pct: must be a percentage from 0 (rule off) to 100, got 120"},
		{"error share out of range", "load: {model: open, rates: {from: 10, step: 10, until: saturated, max: 50, saturation: {error_pct: 100}}}\n",
			"t.yaml:4: load.rates.saturation.error_pct: must be a percentage from 0 (rule off) to below 100, got 100"},
		{"slo rule without an slo", "load: {model: open, rates: {from: 10, step: 10, until: saturated, max: 50, saturation: {slo: true}}}\n",
			"t.yaml:4: load.rates.saturation.slo: judges the campaign's SLO, and this campaign has no slo: section; add one or remove slo: true"},
		{"every rule off", "load: {model: open, rates: {from: 10, step: 10, until: saturated, max: 50, saturation: {cpu_pct: 0, error_pct: 0}}}\n",
			"t.yaml:4: load.rates.saturation: every saturation rule is off, so the sweep could only run to its cap; turn a rule on or list the levels instead"},
		{"randomized order", "order: randomized\nload: {model: open, rates: {from: 10, step: 10, until: saturated, max: 50}}\n",
			"t.yaml:4: order: a sweep raises the level in order and stops after the first level that saturates, which randomized order cannot do (it would run levels above the saturating one); remove order: randomized"},
		{"blocks by repetition", "repetitions: 2\nblocks: repetition\ntreatments: [{name: a}, {name: b, set: {phases.warmup: 2s}}]\nload: {model: open, rates: {from: 10, step: 10, until: saturated, max: 50}}\n",
			"t.yaml:5: blocks: treatment a sweeps its levels, which needs each level's repetitions before the next level, and blocks: repetition runs one repetition of every level at a time; remove blocks: repetition"},
	}
	for _, tt := range tests {
		lines := parseErrors(t, sweepHead+tt.doc)
		if len(lines) != 1 || lines[0] != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, lines, tt.want)
		}
	}
}
