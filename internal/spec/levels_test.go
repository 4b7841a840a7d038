package spec

import (
	"reflect"
	"testing"
)

func TestLevelRanges(t *testing.T) {
	tests := []struct {
		rng  string
		want []float64
	}{
		{"{from: 100, to: 500, step: 100}", []float64{100, 200, 300, 400, 500}},
		{"{from: 100, to: 450, step: 100}", []float64{100, 200, 300, 400}}, // "to" off the grid is not included
		{"{from: 0.1, to: 0.3, step: 0.1}", []float64{0.1, 0.2, 0.3}},      // float noise neither drops 0.3 nor shows
		{"{from: 0.5, to: 0.5, step: 1}", []float64{0.5}},
		{"{from: 1, to: 10000, step: 1}", nil},                                  // exactly 10000 levels is allowed
		{"{from: 99998, to: 100000, step: 1}", []float64{99998, 99999, 100000}}, // up to load.MaxRate
	}
	// Huge levels (past any rate a spec may ask for) keep their exact
	// value rather than 12 significant digits.
	if got := roundLevel(1e14+1, 1); got != 1e14+1 {
		t.Errorf("roundLevel(1e14+1, 1) = %v, want it unchanged", got)
	}
	for _, tt := range tests {
		s := mustParse(t, "name: r\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: "+tt.rng+"}\nbudget: {max_hours: 200}\n")
		got := s.Levels()
		if tt.want == nil {
			if len(got) != maxLevels || got[len(got)-1] != 10000 {
				t.Errorf("%s: %d levels ending in %g, want %d ending in 10000", tt.rng, len(got), got[len(got)-1], maxLevels)
			}
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: levels %v, want %v", tt.rng, got, tt.want)
		}
		if s.Load.Rates.Line != 4 {
			t.Errorf("%s: Levels.Line = %d, want 4", tt.rng, s.Load.Rates.Line)
		}
	}
}

func TestLevelsTooMany(t *testing.T) {
	lines := parseErrors(t, "name: r\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: {from: 1, to: 10001, step: 1}}\n")
	if len(lines) != 1 || lines[0] != "t.yaml:4: load.rates: this range gives more than 10000 levels; use a larger step" {
		t.Errorf("got %q", lines)
	}
}

func TestLevelsListKeepsOrder(t *testing.T) {
	s := mustParse(t, "name: r\ntarget: {type: fake}\nworkload: {ycsb: a}\nload:\n  model: closed\n  clients:\n    - 8\n    - 1\n    - 4\n")
	if got := s.Levels(); !reflect.DeepEqual(got, []float64{8, 1, 4}) || s.Load.Clients.Line != 6 {
		t.Errorf("levels %v line %d, want [8 1 4] at line 6", got, s.Load.Clients.Line)
	}
}
