package results

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/headroom-dev/headroom/internal/history"
)

// EventClockOffset is the store event kind of one measured clock offset:
// the JSON detail is ClockOffset's, {"host":"db1","offset_ns":123,
// "uncertainty_ns":456}.
const EventClockOffset = "clock_offset"

// ClockOffset is the measured offset of one host's clock from the load
// generator's: OffsetNS is the host's clock minus the generator's (so a
// host's time minus OffsetNS is on the generator's clock), UncertaintyNS
// how far off that may still be (half the exchange's shortest round trip
// plus the server clock's resolution, NTP-style; internal/clockoffset). A staleness figure
// timed across hosts is only known to within the uncertainty.
type ClockOffset struct {
	Host          string `json:"host"`
	OffsetNS      int64  `json:"offset_ns"`
	UncertaintyNS int64  `json:"uncertainty_ns"`
}

// History returns run runID's operation history (empty when the run
// recorded none).
func (r *Results) History(runID int64) ([]history.Op, error) {
	return r.st.History(runID)
}

// HistoryRuns returns the IDs of the runs that recorded an operation
// history, ascending.
func (r *Results) HistoryRuns() ([]int64, error) {
	return r.st.HistoryRuns()
}

// HistoryRun is a run that recorded an operation history.
type HistoryRun struct {
	ID        int64
	Treatment string
}

// RunsWithHistory lists the runs that recorded an operation history, in
// run order, with their treatments: what the consistency analyses walk.
func (r *Results) RunsWithHistory() ([]HistoryRun, error) {
	ids, err := r.HistoryRuns()
	if err != nil {
		return nil, err
	}
	treatment := map[int64]string{}
	for _, run := range r.Runs() {
		treatment[run.ID] = run.Treatment
	}
	out := make([]HistoryRun, 0, len(ids))
	for _, id := range ids {
		out = append(out, HistoryRun{ID: id, Treatment: treatment[id]})
	}
	return out, nil
}

// ClockOffsets returns the clock offsets measured for run runID, one per
// host sorted by host name: the run's own clock_offset events, and
// campaign-level ones (not tied to a run) for hosts the run did not
// measure itself. Of several measurements of one host the last counts.
func (r *Results) ClockOffsets(runID int64) ([]ClockOffset, error) {
	byHost := map[string]ClockOffset{}
	for _, id := range []int64{0, runID} { // the run's own override the campaign's
		evs, err := r.st.Events(id)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if e.Kind != EventClockOffset {
				continue
			}
			var c ClockOffset
			if err := json.Unmarshal([]byte(e.Detail), &c); err != nil {
				return nil, fmt.Errorf("run %d: a clock_offset event is not valid JSON (%v): %s", runID, err, e.Detail)
			}
			if c.UncertaintyNS < 0 {
				c.UncertaintyNS = -c.UncertaintyNS
			}
			byHost[c.Host] = c
		}
	}
	out := make([]ClockOffset, 0, len(byHost))
	for _, c := range byHost {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out, nil
}

// MaxClockUncertainty returns the largest uncertainty of offsets in ns (0
// when there are none: every time was taken on the load generator).
func MaxClockUncertainty(offsets []ClockOffset) int64 {
	var m int64
	for _, c := range offsets {
		m = max(m, c.UncertaintyNS)
	}
	return m
}
