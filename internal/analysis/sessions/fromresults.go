package sessions

import "github.com/headroom-dev/headroom/internal/results"

// Run is the session-guarantee counters of one run that recorded an
// operation history.
type Run struct {
	RunID     int64  `json:"run_id"`
	Treatment string `json:"treatment"`
	Result
}

// FromResults counts the violations of every run of r that recorded an
// operation history, in run order.
func FromResults(r *results.Results) ([]Run, error) {
	hrs, err := r.RunsWithHistory()
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, len(hrs))
	for _, hr := range hrs {
		id := hr.ID
		ops, err := r.History(id)
		if err != nil {
			return nil, err
		}
		out = append(out, Run{RunID: id, Treatment: hr.Treatment, Result: Analyze(ops)})
	}
	return out, nil
}
