package levels

import (
	"github.com/headroom-dev/headroom/internal/analysis/resources"
	"github.com/headroom-dev/headroom/internal/store"
)

// FromStore reads the input for Summarize from a results store: for every
// plan slot its last completed run, with the run's measured-phase intervals.
// It also returns how many runs were not completed (interrupted or failed).
func FromStore(st *store.Store, model string, slo *SLO) (Input, int, error) {
	runs, err := st.Runs()
	if err != nil {
		return Input{}, 0, err
	}
	last := map[int]store.Run{}
	incomplete := 0
	for _, r := range runs {
		if r.Status != store.StatusCompleted {
			incomplete++
			continue
		}
		last[r.Slot] = r // Runs are ordered by ID, so a later run replaces an earlier one
	}
	in := Input{Model: model, SLO: slo}
	for _, r := range runs {
		if lr, ok := last[r.Slot]; !ok || lr.ID != r.ID {
			continue
		}
		ivs, err := st.Intervals(r.ID, "measure")
		if err != nil {
			return Input{}, 0, err
		}
		rd := RunData{Run: r, Intervals: ivs}
		if from, to := r.Summary.MeasureStart, r.Summary.MeasureEnd; !from.IsZero() && to.After(from) {
			samples, err := st.Samples(store.SampleFilter{RunID: r.ID})
			if err != nil {
				return Input{}, 0, err
			}
			rd.Resources = resources.Summarize(samples, from, to)
			server, err := st.ServerTimes(r.ID)
			if err != nil {
				return Input{}, 0, err
			}
			for _, x := range server {
				if !x.Start.Before(from) && x.Start.Before(to) {
					rd.Server = append(rd.Server, x)
				}
			}
		}
		in.Runs = append(in.Runs, rd)
	}
	return in, incomplete, nil
}

// Treatment returns the input restricted to the runs of one treatment
// ("" = the runs of a campaign without treatments).
func (in Input) Treatment(name string) Input {
	out := in
	out.Runs = nil
	for _, r := range in.Runs {
		if r.Run.Treatment == name {
			out.Runs = append(out.Runs, r)
		}
	}
	return out
}
