package profit

import (
	"fmt"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/staleness"
	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/results"
)

// The staleness term prices what the staleness analysis measured (seed-
// digest §5; docs/consistency.md "Definitions"): a stale read is a read
// with k-staleness > 0, one that returned an older version than the
// newest write of its key acknowledged before the read was invoked. Only
// runs with a consistency history (workload.consistency) measured it.

// staleReads counts the stale reads run made in its measured phase, so
// that the term covers the same window as the revenue it is added to; -1
// when the run recorded no history. The history's times count from the
// load engine's start, whose measured phase begins after the warm-up
// rounded up to whole intervals (internal/load, engine.go).
func staleReads(r *results.Results, run results.Run, load results.Load, measured bool) (int64, error) {
	if !measured {
		return -1, nil
	}
	ops, err := r.History(run.ID)
	if err != nil {
		return 0, err
	}
	from := load.Warmup
	if iv := load.Interval; iv > 0 {
		from = (from + iv - 1) / iv * iv
	}
	to := from + time.Duration(run.Summary.MeasureSecs*float64(time.Second))
	return staleInWindow(ops, int64(from), int64(to)), nil
}

// staleInWindow counts the stale reads of ops invoked in [fromNS, toNS).
// Every write counts, whenever it was made: whether a read is stale
// depends on the writes acknowledged before it, also those of the
// warm-up.
func staleInWindow(ops []history.Op, fromNS, toNS int64) int64 {
	in := make([]history.Op, 0, len(ops))
	for _, o := range ops {
		if o.Kind == history.Write || (o.InvokeNS >= fromNS && o.InvokeNS < toNS) {
			in = append(in, o)
		}
	}
	var n int64
	for _, l := range staleness.Analyze(in, staleness.Options{}).Levels {
		for _, k := range l.KStale {
			if k.K > 0 {
				n += int64(k.Reads)
			}
		}
	}
	return n
}

// staleNote says where the staleness term was applied.
func staleNote(runs []Run) string {
	measured := 0
	for _, r := range runs {
		if r.Stale >= 0 {
			measured++
		}
	}
	switch measured {
	case 0:
		return "staleness is priced only where measured; these results record no stale reads, so the staleness term is not applied"
	case len(runs):
		return "staleness is priced from every run's consistency history: each read of the measured phase that returned an older version than the newest write acknowledged before it began earns stale_cents"
	}
	return fmt.Sprintf("staleness is priced only where measured: %d of %d runs have a consistency history, and each of their reads of the measured phase that returned an older version than the newest write acknowledged before it began earns stale_cents; the other runs are not charged", measured, len(runs))
}
