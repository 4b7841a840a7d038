package staleness

import (
	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/results"
)

// Run is the staleness of one run that recorded an operation history.
type Run struct {
	RunID     int64                 `json:"run_id"`
	Treatment string                `json:"treatment"`
	Offsets   []results.ClockOffset `json:"clock_offsets,omitempty"`
	Result
}

// FromResults measures the staleness of every run of r that recorded an
// operation history, in run order. A replica named like a host with a
// measured clock offset takes that host's uncertainty; any other time
// takes the largest measured one (0 when none was measured: every time
// was taken on the load generator).
func FromResults(r *results.Results) ([]Run, error) {
	hrs, err := r.RunsWithHistory()
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, len(hrs))
	for _, hr := range hrs {
		run, _, err := OfRun(r, hr)
		if err != nil {
			return nil, err
		}
		out = append(out, run)
	}
	return out, nil
}

// OfRun measures the staleness of one run with a history, and returns
// the history it read, for readers that run other checks on it too.
func OfRun(r *results.Results, hr results.HistoryRun) (Run, []history.Op, error) {
	ops, err := r.History(hr.ID)
	if err != nil {
		return Run{}, nil, err
	}
	offs, err := r.ClockOffsets(hr.ID)
	if err != nil {
		return Run{}, nil, err
	}
	return Run{RunID: hr.ID, Treatment: hr.Treatment, Offsets: offs,
		Result: Analyze(ops, Options{Clock: ClockOf(offs)})}, ops, nil
}

// ClockOf is the Clock of measured offsets: each host's uncertainty by its
// name, the largest for everything else.
func ClockOf(offs []results.ClockOffset) Clock {
	c := Clock{DefaultNS: results.MaxClockUncertainty(offs), ByReplica: map[string]int64{}}
	for _, o := range offs {
		c.ByReplica[o.Host] = o.UncertaintyNS
	}
	return c
}
