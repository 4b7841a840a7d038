package spec

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Cost adds up what Plan and the phases say, treatments included.
func TestCostMatchesPlan(t *testing.T) {
	s := mustParse(t, treatmentBase+"interval: 2s\nphases: {warmup: 3s, measure: 10s, cooldown: 1s}\n"+
		"factors:\n  - {path: load.rates, name: r, labels: [one, three], values: [[10], [10, 20, 30]]}\n")
	runs := 0
	for _, tr := range s.Treatments {
		runs += len(tr.Spec.Plan())
	}
	per := 4*time.Second + 10*time.Second + time.Second // warmup rounded up to the 2 s interval
	c := s.Cost()
	if c.Runs != runs || runs != 8 || c.Duration != time.Duration(runs)*per || math.Abs(c.Hours-c.Duration.Hours()) > 1e-9 {
		t.Errorf("cost %+v, want %d runs of %v", c, runs, per)
	}
}

// A spec built by hand, beyond every bound, saturates instead of wrapping.
func TestCostSaturates(t *testing.T) {
	s := &Spec{Repetitions: math.MaxInt / 2, Interval: Duration{time.Second}}
	s.Load.Model = "open"
	s.Load.Rates = &Levels{Values: []float64{1, 2, 3}}
	s.Phases.Measure = Duration{math.MaxInt64 / 2}
	c := s.Cost()
	if c.Runs != math.MaxInt || c.Duration != math.MaxInt64 || math.IsInf(c.Hours, 0) || c.Hours < 1e20 {
		t.Errorf("cost %+v, want saturated runs and duration and finite hours", c)
	}
	many := &Spec{}
	for range 3 {
		many.Treatments = append(many.Treatments, Treatment{Spec: s})
	}
	if c := many.Cost(); c.Runs != math.MaxInt || c.Duration != math.MaxInt64 {
		t.Errorf("treatments' cost %+v, want saturated", c)
	}
}

var suggestedBudget = regexp.MustCompile(`add (budget: \{[^}]*\})|raise it to (max_\w+: \d+)`)

// The default budget lets a day or 10000 runs through; past it the error
// names the budget to write, and writing it makes the spec validate.
func TestBudget(t *testing.T) {
	const open = "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\n"
	for _, c := range []struct {
		spec string
		want string // "" = accepted
	}{
		// 10000 runs of 1 s: at the default budget.
		{open + "load: {model: open, rates: {from: 1, to: 100, step: 1}}\nphases: {warmup: 0s, measure: 1s}\nrepetitions: 100\n", ""},
		{open + "load: {model: open, rates: {from: 1, to: 101, step: 1}}\nphases: {warmup: 0s, measure: 1s}\nrepetitions: 100\n",
			"t.yaml: budget: the campaign plans 10100 runs lasting about 2h48m20s, more than the 10000 runs and 24 hours a campaign may plan without a budget; if that is intended, add budget: {max_runs: 10100}, or plan fewer runs"},
		// 24 h exactly, then a second more.
		{open + "load: {model: open, rates: [100]}\nphases: {warmup: 0s, measure: 12h}\nrepetitions: 2\n", ""},
		{open + "load: {model: open, rates: [100]}\nphases: {warmup: 0s, measure: 12h, cooldown: 1s}\nrepetitions: 2\n",
			"t.yaml: budget: the campaign plans 2 runs lasting about 24h0m2s, more than the 10000 runs and 24 hours a campaign may plan without a budget; if that is intended, add budget: {max_hours: 25}, or plan fewer runs"},
		// Both over.
		{open + "load: {model: open, rates: {from: 1, to: 200, step: 1}}\nphases: {warmup: 0s, measure: 10s}\nrepetitions: 100\n",
			"add budget: {max_runs: 20000, max_hours: 56}"},
		// A budget lowers the bound too, and each field is checked.
		{open + "load: {model: open, rates: [100]}\nphases: {warmup: 0s, measure: 1h}\nrepetitions: 2\nbudget: {max_hours: 1.5}\n",
			"t.yaml:7: budget.max_hours: the campaign plans 2 runs lasting about 2h, more than the budget's 1.5 hours; raise it to max_hours: 2, or plan fewer or shorter runs"},
		{open + "load: {model: open, rates: [100]}\nbudget: {max_hours: 0}\n", "t.yaml:5: budget.max_hours: 0 is out of range; use more than 0 and at most 8760 hours (a year)"},
		{open + "load: {model: open, rates: [100]}\nbudget: {max_runs: -1}\n", "t.yaml:5: budget.max_runs: -1 is out of range; use 1 to 1000000 runs"},
		{open + "load: {model: open, rates: [100]}\nbudget: {max_minutes: 1}\n", "t.yaml:5: budget.max_minutes: unknown field"},
		// A year is the most any budget allows.
		{open + "load: {model: open, rates: {from: 1, to: 400, step: 1}}\nphases: {warmup: 0s, measure: 24h}\nrepetitions: 22\nbudget: {max_hours: 8760}\n",
			"t.yaml:7: budget: the campaign plans 8800 runs lasting about 211200h, more than any budget allows (1000000 runs, 8760 hours)"},
	} {
		_, err := Parse("t.yaml", []byte(c.spec))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("refused: %v\n%s", err, c.spec)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("got %v, want %q", err, c.want)
		}
		if err == nil {
			continue
		}
		// The budget the error suggests is enough.
		m := suggestedBudget.FindStringSubmatch(err.Error())
		if m == nil {
			continue
		}
		fixed := c.spec
		if m[1] != "" {
			fixed += m[1] + "\n"
		} else {
			field, _, _ := strings.Cut(m[2], ":")
			fixed = regexp.MustCompile(field+`: [\d.]+`).ReplaceAllString(fixed, m[2])
		}
		if _, err := Parse("t.yaml", []byte(fixed)); err != nil {
			t.Errorf("with the budget the error suggests: %v\n%s", err, fixed)
		}
	}
}
