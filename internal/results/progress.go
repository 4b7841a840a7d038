package results

// Progress counts a campaign's planned runs (levels x repetitions of each
// treatment; a sweep that stopped plans only the levels up to the one that
// saturated) and those with a completed run, so that a report of an
// unfinished campaign can say so. Probe-only stores and stores of imported
// data plan nothing.
func (r *Results) Progress() (completed, planned int) {
	if len(r.runs) == 0 {
		return 0, 0
	}
	evs, _ := r.st.Events(-1) // without events no sweep is known: every level counts
	for _, t := range r.Treatments() {
		planned += r.sweepLevels(t, evs) * max(t.Load.Repetitions, 1)
		completed += len(r.CompletedRuns(t.Name))
	}
	return min(completed, planned), planned
}
