// Package consistency renders the consistency analyses of runs that
// recorded an operation history (docs/consistency.md): staleness
// (internal/analysis/staleness), session guarantees
// (internal/analysis/sessions) and per-key linearizability
// (internal/history). It computes nothing itself: Build runs the drivers,
// ReportSections and Findings render what they return. (staleness.FromResults
// and sessions.FromResults are the same drivers for other readers; Build
// reads each history once for all three.)
package consistency

import (
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/sessions"
	"github.com/headroom-dev/headroom/internal/analysis/staleness"
	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/results"
)

// SectionID is the ID of the report section (the evidence of Findings).
const SectionID = "consistency"

// LinOptions bound the linearizability check of a report: keys of at
// most 10,000 operations, 2 s each, 30 s a run.
var LinOptions = history.LinOptions{MaxOps: 10000, Timeout: 2 * time.Second, Budget: 30 * time.Second}

// Run is one run's consistency figures.
type Run struct {
	RunID      int64
	Treatment  string
	Staleness  staleness.Run
	Sessions   sessions.Result
	Linearized []history.KeyCheck
}

// Build runs the consistency analyses on every run of r with a history
// (each history is read once); none when no run recorded one.
func Build(r *results.Results) ([]Run, error) {
	hrs, err := r.RunsWithHistory()
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, len(hrs))
	for _, hr := range hrs {
		st, ops, err := staleness.OfRun(r, hr)
		if err != nil {
			return nil, err
		}
		out = append(out, Run{RunID: hr.ID, Treatment: hr.Treatment, Staleness: st,
			Sessions:   sessions.Analyze(ops),
			Linearized: history.CheckLinearizable(ops, LinOptions)})
	}
	return out, nil
}

// LinCounts counts a run's keys by linearizability verdict.
func LinCounts(ks []history.KeyCheck) map[string]int {
	n := map[string]int{}
	for _, k := range ks {
		n[k.Status]++
	}
	return n
}
