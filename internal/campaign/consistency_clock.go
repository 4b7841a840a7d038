package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/headroom-dev/headroom/internal/clockoffset"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// eventClockOffset is the store event of one host's clock offset in a run
// (one per host per run); results.ClockOffset reads its detail.
const eventClockOffset = "clock_offset"

// clockExchanges is how many round trips each measurement makes; the
// shortest bounds the offset best (clockoffset).
const clockExchanges = 8

// clockOffsetDetail is a clock_offset event's JSON detail. OffsetNS is the
// host's clock minus the load generator's (internal/clockoffset);
// the rest say what it was measured from.
type clockOffsetDetail struct {
	Host          string `json:"host"`
	OffsetNS      int64  `json:"offset_ns"`
	UncertaintyNS int64  `json:"uncertainty_ns"`
	StartNS       int64  `json:"start_offset_ns"` // at the run's start
	EndNS         int64  `json:"end_offset_ns"`   // at its end
	RoundTripNS   int64  `json:"round_trip_ns"`   // the shortest exchange's
	Exchanges     int    `json:"exchanges"`
	ResolutionNS  int64  `json:"resolution_ns"` // the host clock's step
}

// clockRun holds the hosts' clocks and their offsets at a run's start.
type clockRun struct {
	clocks []target.ServerClock
	start  []clockoffset.Estimate
	ok     []bool
}

// startClocks measures the offset of every host's clock the target can
// read, at the run's start. A clock that cannot be read is an event, not
// a failed run: the history is timed on this machine regardless.
func (ex *executor) startClocks(ctx context.Context, id int64) *clockRun {
	cr, ok := ex.tgt.(target.ClockReader)
	if !ok {
		return nil
	}
	clocks, err := cr.ServerClocks(ctx)
	if err != nil {
		ex.consistencyEvent(id, "clock_offset_error", err)
		return nil
	}
	run := &clockRun{clocks: clocks, start: make([]clockoffset.Estimate, len(clocks)), ok: make([]bool, len(clocks))}
	for i, c := range clocks {
		e, err := clockoffset.Measure(ctx, clockExchanges, c.Resolution, c.Now)
		if err != nil {
			ex.consistencyEvent(id, "clock_offset_error", fmt.Errorf("reading the clock of %s: %w", c.Host, err))
			continue
		}
		run.start[i], run.ok[i] = e, true
	}
	return run
}

// finishClocks measures the offsets again at the run's end and records
// each host's combined offset as a clock_offset event.
func (ex *executor) finishClocks(ctx context.Context, id int64, run *clockRun) error {
	if run == nil {
		return nil
	}
	defer func() {
		for _, c := range run.clocks {
			_ = c.Close()
		}
	}()
	for i, c := range run.clocks {
		if !run.ok[i] {
			continue
		}
		end, err := clockoffset.Measure(ctx, clockExchanges, c.Resolution, c.Now)
		if err != nil {
			ex.consistencyEvent(id, "clock_offset_error", fmt.Errorf("reading the clock of %s at the run's end: %w", c.Host, err))
			continue
		}
		e := clockoffset.Combine(run.start[i], end)
		d, _ := json.Marshal(clockOffsetDetail{
			Host: c.Host, OffsetNS: int64(e.Offset), UncertaintyNS: int64(e.Uncertainty),
			StartNS: int64(run.start[i].Offset), EndNS: int64(end.Offset), RoundTripNS: int64(e.RoundTrip),
			Exchanges: e.Exchanges, ResolutionNS: int64(c.Resolution),
		})
		if err := ex.st.AddEvent(store.Event{RunID: id, Time: time.Now(), Kind: eventClockOffset, Detail: string(d)}); err != nil {
			return &storeError{err}
		}
	}
	return nil
}
