package campaign

import (
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/store"
)

// saveQuietWatch stores a closed-loop run's stall watch (the periods of its
// measured phase in which no request completed) for the stall analysis
// (internal/analysis/stall). Open-loop runs, and runs that ended before
// the engine started, have none.
func (ex *executor) saveQuietWatch(id int64, res load.Result) error {
	q := res.Quiet
	if q == nil {
		return nil
	}
	w := store.QuietWatch{RunID: id, Clients: q.Clients, Left: q.Left, Floor: q.Floor}
	for _, p := range q.Periods {
		w.Periods = append(w.Periods, store.QuietPeriod{Start: res.Start.Add(p.Start), End: res.Start.Add(p.End), Waiting: p.Waiting})
	}
	if err := ex.st.PutQuietWatch(w); err != nil {
		return &storeError{err}
	}
	return nil
}
