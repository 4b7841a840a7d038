package spec

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Budget is what the user agrees a campaign may cost (`budget:` in the
// spec). A campaign that plans more runs or hours than the default budget
// is refused unless its budget says so, so that a typo (repetitions: 1000,
// measure: 24h) cannot start weeks of runs that validate only announced.
type Budget struct {
	MaxRuns  int     `yaml:"max_runs"`  // runs of all treatments; default defaultMaxRuns
	MaxHours float64 `yaml:"max_hours"` // planned hours of all runs; default defaultMaxHours
}

const (
	// The default budget: a day of runs, or as many runs as a day holds
	// at under ten seconds each.
	defaultMaxRuns  = 10_000
	defaultMaxHours = 24
	// No budget goes beyond these: a year of runs, and a plan that fits
	// in memory (tens of MiB) with room to spare.
	ceilingRuns  = 1_000_000
	ceilingHours = 365 * 24
)

// Cost is what a campaign's plan takes: its runs, in all treatments, and
// the time they last (warmup rounded up to whole intervals, measure and
// cooldown; population, resets and lab start-up not included). For a
// sweep it is the cost of every level up to the cap.
type Cost struct {
	Runs     int
	Duration time.Duration // saturates at the largest Duration
	Hours    float64       // the same, exact where Duration saturates
}

// Cost adds up the plan of every treatment (or of the spec alone). The
// arithmetic saturates, so that a spec built by hand cannot wrap it.
func (s *Spec) Cost() Cost {
	if len(s.Treatments) == 0 {
		runs := s.runCount()
		per := s.runDuration()
		return Cost{Runs: runs, Duration: satMulDuration(runs, per), Hours: float64(runs) * per.Hours()}
	}
	var c Cost
	for _, t := range s.Treatments {
		tc := t.Spec.Cost()
		c.Runs = satAdd(c.Runs, tc.Runs)
		c.Duration = time.Duration(satAdd(int(c.Duration), int(tc.Duration)))
		c.Hours += tc.Hours
	}
	return c
}

// runDuration is how long one run lasts by the spec.
func (s *Spec) runDuration() time.Duration {
	warm := s.Phases.Warmup.Duration
	if iv := s.Interval.Duration; iv > 0 && warm > 0 {
		// The warmup ends on an interval boundary.
		warm = time.Duration(satMul(int(satAdd(int(warm), int(iv)-1)/int(iv)), int(iv)))
	}
	return time.Duration(satAdd(satAdd(int(warm), int(s.Phases.Measure.Duration)), int(s.Phases.Cooldown.Duration)))
}

func satMulDuration(n int, d time.Duration) time.Duration {
	return time.Duration(satMul(n, int(d)))
}

// satMul and satAdd are a*b and a+b for non-negative numbers, saturating at
// math.MaxInt instead of wrapping.
func satMul(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt/b {
		return math.MaxInt
	}
	return a * b
}

func satAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// budget checks the budget section's own values.
func (c *checker) budget(b *Budget) {
	if b == nil {
		return
	}
	if c.has("budget.max_runs") && (b.MaxRuns < 1 || b.MaxRuns > ceilingRuns) {
		c.fail("budget.max_runs", "%d is out of range; use 1 to %d runs", b.MaxRuns, ceilingRuns)
	}
	if c.has("budget.max_hours") && !(b.MaxHours > 0 && b.MaxHours <= ceilingHours) {
		c.fail("budget.max_hours", "%g is out of range; use more than 0 and at most %d hours (a year)", b.MaxHours, ceilingHours)
	}
}

// checkBudget refuses a campaign that plans more than its budget, or the
// default budget when it has none, saying what to write to run it anyway.
// root is the spec's document, for the lines of the budget's fields.
func checkBudget(file string, root *yaml.Node, s *Spec) Errors {
	cost := s.Cost()
	hours := int64(math.Ceil(cost.Hours)) // what a budget must allow; the Cost is finite
	plan := fmt.Sprintf("the campaign plans %d runs lasting about %s", cost.Runs, aboutHours(cost.Hours))
	if len(s.Treatments) > 0 {
		plan = fmt.Sprintf("the campaign plans %d runs (%d treatments) lasting about %s", cost.Runs, len(s.Treatments), aboutHours(cost.Hours))
	}
	if cost.Runs > ceilingRuns || cost.Hours > ceilingHours {
		return Errors{{File: file, Line: fieldLine(root, "budget"), Path: "budget",
			Msg: fmt.Sprintf("%s, more than any budget allows (%d runs, %d hours); use fewer treatments, levels or repetitions, or shorter phases", plan, ceilingRuns, ceilingHours)}}
	}
	b := s.Budget
	if b == nil {
		var need []string
		if cost.Runs > defaultMaxRuns {
			need = append(need, fmt.Sprintf("max_runs: %d", cost.Runs))
		}
		if cost.Hours > defaultMaxHours {
			need = append(need, fmt.Sprintf("max_hours: %d", hours))
		}
		if len(need) == 0 {
			return nil
		}
		return Errors{{File: file, Path: "budget",
			Msg: fmt.Sprintf("%s, more than the %d runs and %d hours a campaign may plan without a budget; if that is intended, add budget: {%s}, or plan fewer runs", plan, defaultMaxRuns, defaultMaxHours, strings.Join(need, ", "))}}
	}
	var errs Errors
	if maxRuns := budgetOr(b.MaxRuns, defaultMaxRuns); cost.Runs > maxRuns {
		errs = append(errs, &Error{File: file, Line: fieldLine(root, "budget", "max_runs"), Path: "budget.max_runs",
			Msg: fmt.Sprintf("%s, more than the budget's %d runs; raise it to max_runs: %d, or plan fewer runs", plan, maxRuns, cost.Runs)})
	}
	if maxHours := budgetOr(b.MaxHours, defaultMaxHours); cost.Hours > maxHours {
		errs = append(errs, &Error{File: file, Line: fieldLine(root, "budget", "max_hours"), Path: "budget.max_hours",
			Msg: fmt.Sprintf("%s, more than the budget's %g hours; raise it to max_hours: %d, or plan fewer or shorter runs", plan, maxHours, hours)})
	}
	return errs
}

// budgetOr is a budget field, or its default when it is left out.
func budgetOr[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// aboutHours prints a duration given in hours the way validate does:
// "90h", "2h30m", "45m", "30s".
func aboutHours(h float64) string {
	if h >= 100 {
		return fmt.Sprintf("%.0fh", h)
	}
	return shortDuration(time.Duration(h * float64(time.Hour)).Round(time.Second))
}

// fieldLine is the line of the key at the end of keys, walked from mapping n,
// or of the deepest one found; 0 when the first is absent.
func fieldLine(n *yaml.Node, keys ...string) int {
	line := 0
	for _, key := range keys {
		n = resolve(n)
		if n == nil || n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}
