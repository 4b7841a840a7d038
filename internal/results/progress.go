package results

// Progress counts a campaign's planned runs (levels x repetitions of each
// treatment) and those with a completed run, so that a report of an
// unfinished campaign can say so. Probe-only stores and stores of imported
// data plan nothing.
func (r *Results) Progress() (completed, planned int) {
	if len(r.runs) == 0 {
		return 0, 0
	}
	for _, t := range r.Treatments() {
		planned += len(t.Load.Levels) * max(t.Load.Repetitions, 1)
		completed += len(r.CompletedRuns(t.Name))
	}
	return min(completed, planned), planned
}
