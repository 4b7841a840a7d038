package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A Rule fails a comparison (compare --fail-on) when a figure got worse
// by more than Limit, detectably: its verdict is Worse and its change is
// beyond Limit in the worse direction. Written FIGURE[@OP]:+N% for a
// figure that is worse higher (a latency) and FIGURE[@OP]:-N% for one
// that is worse lower (throughput), e.g. p99:+10%, p95@read:+5%,
// throughput:-5%.
type Rule struct {
	Figure string
	Op     string  // "all" unless the rule names one
	Limit  float64 // relative, positive (0.1 for 10%)
	Text   string  // as written
}

// ParseRule reads one rule, or says in a sentence what is wrong with it.
func ParseRule(s string) (Rule, error) {
	r := Rule{Text: s, Op: "all"}
	name, limit, ok := strings.Cut(s, ":")
	if !ok {
		return r, fmt.Errorf("--fail-on %q: write FIGURE:+N%% (a latency, e.g. p99:+10%%) or throughput:-N%%", s)
	}
	if fig, op, ok := strings.Cut(name, "@"); ok {
		name, r.Op = fig, op
		if op == "" {
			return r, fmt.Errorf("--fail-on %q: name an operation after @ (e.g. p99@read:+10%%), or leave @ out for all operations", s)
		}
	}
	f, ok := FigureNamed(name)
	if !ok {
		return r, fmt.Errorf("--fail-on %q: %q is not a figure compare judges; use one of %s", s, name, strings.Join(FigureNames(), ", "))
	}
	r.Figure = f.Name
	num, pct := strings.CutSuffix(strings.TrimSpace(limit), "%")
	v, err := strconv.ParseFloat(num, 64)
	if !pct || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v == 0 || (num[0] != '+' && num[0] != '-') {
		return r, fmt.Errorf("--fail-on %q: the limit is a signed percentage, e.g. %s", s, example(f))
	}
	if (v > 0) == f.HigherIsBetter {
		return r, fmt.Errorf("--fail-on %q: %s gets worse %s, so the limit is %s", s, f.Name, worseWay(f), example(f))
	}
	r.Limit = math.Abs(v) / 100
	return r, nil
}

func worseWay(f Figure) string {
	if f.HigherIsBetter {
		return "lower"
	}
	return "higher"
}

func example(f Figure) string {
	if f.HigherIsBetter {
		return f.Name + ":-5%"
	}
	return f.Name + ":+10%"
}

// Breaks reports whether c, judged at the confidence level, breaks the
// rule.
func (r Rule) Breaks(c Cell, confidence float64) bool {
	if c.Figure.Name != r.Figure || c.Op != r.Op {
		return false
	}
	res := c.Result
	if confidence != 0 {
		res = Judge(c.A, c.B, c.Figure.HigherIsBetter, confidence)
	}
	return res.Verdict == Worse && math.Abs(res.Change) > r.Limit
}

// Judged is a rule judged over a comparison's cells.
type Judged struct {
	Rule
	// Cells counts the cells the rule judges (one per level and pair of
	// treatments), and Confidence is the level each was judged at:
	// Bonferroni's 1 - (1 - confidence) / Cells, so that the chance of a
	// false failure over all of them stays within that of one
	// (docs/compare.md).
	Cells      int
	Confidence float64
	Broken     []Cell
}

// Judge judges the rule over cells at the comparison's confidence level.
func (r Rule) Judge(cells []Cell, confidence float64) Judged {
	j := Judged{Rule: r}
	for _, c := range cells {
		if c.Figure.Name == r.Figure && c.Op == r.Op {
			j.Cells++
		}
	}
	j.Confidence = 1 - (1-confidence)/float64(max(j.Cells, 1))
	for _, c := range cells {
		if r.Breaks(c, j.Confidence) {
			j.Broken = append(j.Broken, c)
		}
	}
	return j
}
