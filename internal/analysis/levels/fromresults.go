package levels

import (
	"slices"

	"github.com/headroom-dev/headroom/internal/analysis/resources"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// FromResults reads the input for Summarize of one treatment ("" in a
// campaign without treatments): its load model and SLO as the treatment
// had them, and for every plan slot its completed run
// (results.CompletedRuns) with the run's measured-phase intervals folded
// as they stream from the store (Folder, at most MaxPoints points), the resource summary and the
// server timings of its measured window. It also
// returns how many of the treatment's runs did not complete (interrupted,
// failed or still running); they are left out.
//
// The fold is computed once per Results and treatment (results.Memo): a
// report asks for it from several analyses. Each caller gets its own
// Input and Runs slice; the runs' histograms and points are shared and
// must not be changed.
func FromResults(r *results.Results, treatment string) (Input, int, error) {
	v, err := r.Memo("levels.FromResults\x00"+treatment, func() (any, error) {
		in, incomplete, err := fromResults(r, treatment)
		return memoInput{in, incomplete}, err
	})
	if err != nil {
		return Input{}, 0, err
	}
	m := v.(memoInput)
	in := m.in
	in.Runs = slices.Clone(m.in.Runs)
	return in, m.incomplete, nil
}

type memoInput struct {
	in         Input
	incomplete int
}

func fromResults(r *results.Results, treatment string) (Input, int, error) {
	in := Input{Model: "open"}
	if t, ok := r.Treatment(treatment); ok {
		if t.Load.Model != "" {
			in.Model = t.Load.Model
		}
		if t.SLO != nil {
			in.SLO = &SLO{Percentile: t.SLO.Percentile, Threshold: t.SLO.Threshold, Op: t.SLO.Op}
		}
		in.Schedule = t.Load.Varies()
		in.Disturbed = t.Disturbances()
	}
	runs, err := runData(r, r.CompletedRuns(treatment), in.SLO)
	if err != nil {
		return Input{}, 0, err
	}
	in.Runs = runs
	return in, r.Incomplete(treatment), nil
}

// runData reads what Summarize needs of each run, judging its intervals
// against slo.
func runData(r *results.Results, runs []results.Run, slo *SLO) ([]RunData, error) {
	out := make([]RunData, 0, len(runs))
	for _, run := range runs {
		f := NewFolder(run, slo)
		f.BoundPoints(MaxPoints)
		if err := r.EachInterval(run.ID, "measure", func(iv *store.Interval) error {
			f.Add(iv)
			return nil
		}); err != nil {
			return nil, err
		}
		rd := f.Done()
		if from, to := run.Summary.MeasureStart, run.Summary.MeasureEnd; !from.IsZero() && to.After(from) {
			samples, err := r.Samples(results.SampleFilter{RunID: run.ID})
			if err != nil {
				return nil, err
			}
			rd.Resources = resources.Summarize(samples, from, to)
			server, err := r.ServerTimes(run.ID)
			if err != nil {
				return nil, err
			}
			for _, x := range server {
				if !x.Start.Before(from) && x.Start.Before(to) {
					rd.Server = append(rd.Server, x)
				}
			}
		}
		out = append(out, rd)
	}
	return out, nil
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
