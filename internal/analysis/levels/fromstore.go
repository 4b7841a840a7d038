package levels

import (
	"sort"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// FromStore reads the input for Summarize from a results store: every
// treatment's completed runs (the last per plan slot) in run ID order,
// with the model and SLO given, and how many runs of the campaign did not
// complete.
//
// Deprecated: use FromResults, which reads one treatment with its own
// model and SLO. FromStore stays until its last callers (analyses that
// summarise every treatment at once) move to the results model.
func FromStore(st *store.Store, model string, slo *SLO) (Input, int, error) {
	r, err := results.New(st)
	if err != nil {
		return Input{}, 0, err
	}
	runs := r.AllCompletedRuns()
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID })
	data, err := runData(r, runs)
	if err != nil {
		return Input{}, 0, err
	}
	incomplete := 0
	for _, run := range r.Runs() {
		if run.Status != results.StatusCompleted {
			incomplete++
		}
	}
	return Input{Model: model, SLO: slo, Runs: data}, incomplete, nil
}
