package levels

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/store"
)

// Point is one interval of a run's measured phase, its operation types
// merged: what the interval-by-interval charts and tables show.
type Point struct {
	Start    time.Time
	Duration time.Duration // the longest of its operation types' rows
	Count    int64         // successful requests
	Offered  int64         // requests of every type due in it: succeeded, failed or dropped
	// P99 is F^-1(0.99) over the interval's successful requests of every
	// operation type (seed-digest §1), in µs; NaN when none succeeded.
	P99 float64
	// Within is the share of the SLO's operation's offered requests
	// (succeeded, failed or dropped) that succeeded within its threshold,
	// for the SLO the run was folded with; NaN with no SLO or when none
	// was offered.
	Within float64
}

// Folder folds a run's measured-phase intervals, given in time order, into
// its RunData: one merged histogram per operation type and for all of
// them, offered counts, and one Point per interval. It keeps nothing of an
// interval after Add returns, so a run of any length folds in the memory
// of its answer (intervals are decoded one at a time by
// results.Results.EachInterval).
type Folder struct {
	rd  RunData
	slo *SLO
	// The interval being folded: every operation type's row with one
	// start time adds to it.
	cur        Point
	curAll     *hdrhistogram.Histogram // reused: the interval's types merged
	curSLO     *hdrhistogram.Histogram // reused: the SLO operation's rows
	curOffered int64                   // the SLO operation's offered requests
	open       bool
}

// NewFolder starts the fold of run, judging each interval against slo
// (nil: none).
func NewFolder(run store.Run, slo *SLO) *Folder {
	return &Folder{rd: RunData{Run: run, Hists: map[string]*hdrhistogram.Histogram{}, Offered: map[string]int64{}}, slo: slo,
		curAll: store.NewHistogram(), curSLO: store.NewHistogram()}
}

// Add folds one interval row (one operation type of one interval). Rows
// of one interval must come together, as the store orders them.
func (f *Folder) Add(iv *store.Interval) {
	if f.open && !iv.Start.Equal(f.cur.Start) {
		f.closePoint()
	}
	if !f.open {
		f.open = true
		f.cur = Point{Start: iv.Start}
		f.curAll.Reset()
		f.curSLO.Reset()
		f.curOffered = 0
	}
	offered := iv.Count + iv.Errors + iv.Dropped
	f.rd.Offered[iv.Op] += offered
	f.rd.Offered["all"] += offered
	f.cur.Count += iv.Count
	f.cur.Offered += offered
	f.cur.Duration = max(f.cur.Duration, iv.Duration)
	if iv.Hist != nil {
		for _, key := range []string{iv.Op, "all"} {
			h := f.rd.Hists[key]
			if h == nil {
				h = hdrhistogram.New(iv.Hist.LowestTrackableValue(), iv.Hist.HighestTrackableValue(), int(iv.Hist.SignificantFigures()))
				f.rd.Hists[key] = h
			}
			iv.MergeInto(h)
		}
		iv.MergeInto(f.curAll)
	}
	if f.slo != nil && (f.slo.Op == "" || f.slo.Op == iv.Op) {
		f.curOffered += offered
		if iv.Hist != nil {
			iv.MergeInto(f.curSLO)
		}
	}
}

func (f *Folder) closePoint() {
	p := f.cur
	p.P99, p.Within = math.NaN(), math.NaN()
	if f.curAll.TotalCount() > 0 {
		p.P99 = float64(f.curAll.ValueAtQuantile(99))
	}
	if f.slo != nil && f.curOffered > 0 {
		p.Within = float64(countAtMost(f.curSLO, f.slo.Threshold.Microseconds())) / float64(f.curOffered)
	}
	f.rd.Points = append(f.rd.Points, p)
	f.open = false
}

// Done returns the folded run.
func (f *Folder) Done() RunData {
	if f.open {
		f.closePoint()
	}
	return f.rd
}

// Fold folds intervals already in memory (tests, and callers that hold a
// run's intervals anyway).
func Fold(run store.Run, ivs []store.Interval, slo *SLO) RunData {
	f := NewFolder(run, slo)
	for i := range ivs {
		f.Add(&ivs[i])
	}
	return f.Done()
}
