package compare

import (
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	good := map[string]Rule{
		"p99:+10%":         {Figure: "p99", Op: "all", Limit: 0.10},
		"p95@read:+5%":     {Figure: "p95", Op: "read", Limit: 0.05},
		"throughput:-2.5%": {Figure: "throughput", Op: "all", Limit: 0.025},
	}
	for in, want := range good {
		r, err := ParseRule(in)
		if err != nil || r.Figure != want.Figure || r.Op != want.Op || !near(r.Limit, want.Limit, 1e-12) || r.Text != in {
			t.Errorf("ParseRule(%q) = %+v, %v", in, r, err)
		}
	}
	bad := map[string]string{
		"p99":             "write FIGURE:+N%",
		"p98:+5%":         `"p98" is not a figure`,
		"p99:5%":          "a signed percentage, e.g. p99:+10%",
		"p99:+5":          "a signed percentage",
		"p99:-5%":         "p99 gets worse higher, so the limit is p99:+10%",
		"throughput:+5%":  "throughput gets worse lower, so the limit is throughput:-5%",
		"p99@:+5%":        "name an operation after @",
		"p99:+NaN%":       "a signed percentage",
		"p99:+0%":         "a signed percentage",
		"throughput:-x%":  "a signed percentage",
		"p99:+1e400%":     "a signed percentage",
		"mean@read:+10%%": "a signed percentage",
	}
	for in, want := range bad {
		if _, err := ParseRule(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q): %v, want it to say %q", in, err, want)
		}
	}
}

func TestRuleBreaks(t *testing.T) {
	p99, _ := FigureNamed("p99")
	r, _ := ParseRule("p99:+10%")
	cell := func(op string, v Verdict, change float64) Cell {
		return Cell{Op: op, Figure: p99, Result: Result{Verdict: v, Change: change}}
	}
	for _, c := range []struct {
		cell Cell
		want bool
	}{
		{cell("all", Worse, 0.12), true},
		{cell("all", Worse, 0.08), false}, // detectable, within the limit
		{cell("all", Same, 0.15), false},  // not detectable
		{cell("all", Better, -0.2), false},
		{cell("read", Worse, 0.5), false}, // another operation
	} {
		if got := r.Breaks(c.cell, 0); got != c.want {
			t.Errorf("%+v: breaks %v, want %v", c.cell.Result, got, c.want)
		}
	}
}

// A rule over several levels is judged at Bonferroni's level: a change
// found at 95% at one level of four is not a failure unless it holds at
// 98.75%.
func TestRuleJudgedAcrossLevels(t *testing.T) {
	p99, _ := FigureNamed("p99")
	a := []float64{10, 11, 12, 9, 10}
	// Worse at 95% (p = 0.0062, scipy) and at 98.75%; the other: worse
	// at 95% only.
	clear := []float64{12, 13, 12, 14, 13}
	slight := []float64{11.8, 12.2, 11.5, 12.6, 11.9} // p = 0.0316 (scipy)
	if r := Judge(a, slight, false, 0.95); r.Verdict != Worse || Judge(a, slight, false, 0.9875).Verdict != Same {
		t.Fatalf("the design needs a change found at 95%% and not at 98.75%%: p = %.4f", r.P)
	}
	cells := []Cell{
		{LevelIndex: 0, Op: "all", Figure: p99, A: a, B: clear},
		{LevelIndex: 1, Op: "all", Figure: p99, A: a, B: slight},
		{LevelIndex: 2, Op: "all", Figure: p99, A: a, B: a},
		{LevelIndex: 3, Op: "all", Figure: p99, A: a, B: a},
	}
	for i := range cells {
		cells[i].Result = Judge(cells[i].A, cells[i].B, false, 0.95)
	}
	r, _ := ParseRule("p99:+5%")
	j := r.Judge(cells, 0.95)
	if j.Cells != 4 || !near(j.Confidence, 0.9875, 1e-12) || len(j.Broken) != 1 || j.Broken[0].LevelIndex != 0 {
		t.Errorf("judged %d cells at %.4f, broken %+v; want 4 at 0.9875, level 1 only", j.Cells, j.Confidence, j.Broken)
	}
}
