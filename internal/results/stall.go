package results

import "github.com/headroom-dev/headroom/internal/store"

// QuietWatch is a closed-loop run's stall watch: the periods of its
// measured phase in which no request completed (internal/load/stall.go).
type (
	QuietWatch  = store.QuietWatch
	QuietPeriod = store.QuietPeriod
)

// QuietWatch returns a run's stall watch, or nil when none was recorded:
// open-loop runs have none, and neither have closed-loop runs stored before
// the watch existed.
func (r *Results) QuietWatch(runID int64) (*QuietWatch, error) { return r.st.QuietWatch(runID) }
