// Package rigor makes the report sections of Headroom's capacity and
// measurement-rigor analyses: the load-response curve of each treatment with
// its knee and confidence intervals (internal/analysis/capacity), seed 001's
// variation verdicts (internal/analysis/variability), the scaling comparison
// of treatments that differ in server count or size
// (internal/analysis/scaling), and the black-box capacity probe of seed 004
// with its latency/throughput surface. Every builder reads the results
// model (internal/results) and only renders: the analyses' drivers
// compute. A builder returns no section when the results hold nothing for
// it; every table and chart says what its numbers come from. Findings
// gives the same headline findings for the terminal summary of run,
// report and probe.
package rigor

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/report/format"
)

// label names a treatment in prose.
func label(name string) string {
	if name == "" {
		return "the campaign"
	}
	return name
}

// runSource says what a treatment's per-level numbers come from: how many
// completed runs at how many levels and repetitions, and the measured phase.
func runSource(in levels.Input, what string) string {
	reps := map[int]int{}
	lo, hi := math.Inf(1), 0.0
	for _, rd := range in.Runs {
		reps[rd.Run.LevelIndex]++
		if s := rd.Run.Summary.MeasureSecs; s > 0 {
			s = math.Round(s*10) / 10
			lo, hi = math.Min(lo, s), math.Max(hi, s)
		}
	}
	minR, maxR := math.MaxInt, 0
	for _, n := range reps {
		minR, maxR = min(minR, n), max(maxR, n)
	}
	rep := format.Plural(maxR, "repetition")
	if minR != maxR {
		rep = fmt.Sprintf("%d to %d repetitions", minR, maxR)
	}
	s := fmt.Sprintf("from %s of %s (%s x %s)", format.Plural(len(in.Runs), "completed run"), what, format.Plural(len(reps), "level"), rep)
	switch {
	case hi == 0:
	case lo == hi:
		s += fmt.Sprintf(", measured phase of %s s", format.Num(hi))
	default:
		s += fmt.Sprintf(", measured phases of %s to %s s", format.Num(lo), format.Num(hi))
	}
	return s
}
