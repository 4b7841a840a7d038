package stall

import (
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// RunResult is one completed closed-loop run with its judgement.
type RunResult struct {
	Run results.Run
	Result
}

// Treatment is one closed-loop treatment's runs, in level then repetition
// order.
type Treatment struct {
	Treatment results.Treatment
	Runs      []RunResult
}

// Understates reports whether any run of the treatment understates
// (Result.Understates).
func (t Treatment) Understates() bool {
	for _, r := range t.Runs {
		if r.Understates() {
			return true
		}
	}
	return false
}

// Worst is the run with the largest stalled share (the first when none
// stalled).
func (t Treatment) Worst() RunResult {
	w := t.Runs[0]
	for _, r := range t.Runs[1:] {
		if r.Share > w.Share {
			w = r
		}
	}
	return w
}

// FromResults judges every completed run of every closed-loop treatment, in
// campaign order; open-loop treatments are left out (their latency is
// measured from the intended start already). The error is a failure to read
// the results.
func FromResults(r *results.Results) ([]Treatment, error) {
	var out []Treatment
	for _, t := range r.Treatments() {
		if t.Load.Open() {
			continue
		}
		tr := Treatment{Treatment: t}
		for _, run := range r.CompletedRuns(t.Name) {
			if run.Model != "closed" {
				continue
			}
			in, err := input(r, run, t)
			if err != nil {
				return nil, err
			}
			tr.Runs = append(tr.Runs, RunResult{Run: run, Result: Analyse(in)})
		}
		if len(tr.Runs) > 0 {
			out = append(out, tr)
		}
	}
	return out, nil
}

// input reads one run: its measured intervals merged over operations, its
// measured window and its stall watch.
func input(r *results.Results, run results.Run, t results.Treatment) (Input, error) {
	in := Input{From: run.Summary.MeasureStart, To: run.Summary.MeasureEnd, Clients: int(run.Level),
		Requests: run.Summary.Completed + run.Summary.Errors, ThinkTime: t.Load.ThinkTime}
	// Intervals stream from the store one at a time; only their merge is kept.
	err := r.EachInterval(run.ID, "measure", func(iv *store.Interval) error {
		if iv.Hist == nil {
			return nil
		}
		if in.Latency == nil {
			in.Latency = iv.Hist.Clone()
			in.Latency.Reset()
		}
		iv.MergeInto(in.Latency)
		return nil
	})
	if err != nil {
		return Input{}, err
	}
	w, err := r.QuietWatch(run.ID)
	if err != nil || w == nil {
		return in, err
	}
	in.Watch = &Watch{Clients: w.Clients, Left: w.Left, Floor: w.Floor}
	for _, p := range w.Periods {
		in.Watch.Periods = append(in.Watch.Periods, Period{Start: p.Start, End: p.End, Waiting: p.Waiting})
	}
	return in, nil
}
