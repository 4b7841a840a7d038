package levels

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/store"
)

// Point is one interval of a run's measured phase, its operation types
// merged, or, in a fold bounded by BoundPoints, a bucket of consecutive
// intervals: what the interval-by-interval charts and tables show.
type Point struct {
	Start    time.Time
	Duration time.Duration // the time its intervals cover (one interval: the longest of its operation types' rows)
	// Intervals is how many measured intervals the point merges: 1 unless
	// the fold was bounded and the run has more intervals than points.
	Intervals int
	Count     int64 // successful requests
	Offered   int64 // requests of every type due in it: succeeded, failed or dropped
	// P99 is F^-1(0.99) over the point's successful requests of every
	// operation type (seed-digest §1), in µs, from the histogram of all of
	// its intervals merged (not an average of their percentiles); NaN when
	// none succeeded.
	P99 float64
	// Within is the share of the SLO's operation's offered requests
	// (succeeded, failed or dropped) that succeeded within its threshold,
	// for the SLO the run was folded with; NaN with no SLO or when none
	// was offered.
	Within float64
	// The extremes over its intervals, so that one bad interval in a
	// bucket of many still shows: the highest interval p99 (µs, NaN when
	// none succeeded), the lowest and highest interval throughput (ok/s),
	// and how many of its intervals missed the SLO on their own.
	MaxP99           float64
	MinRate, MaxRate float64
	Missed           int
}

// MaxPoints is how many points a bounded fold keeps per run (BoundPoints):
// enough to draw a chart at a screen's width, and small beside a day's
// run at 100 ms intervals (864,000).
const MaxPoints = 2000

// Folder folds a run's measured-phase intervals, given in time order, into
// its RunData: one merged histogram per operation type and for all of
// them, offered counts, and one Point per interval (or per bucket of
// intervals, after BoundPoints). It keeps nothing of an interval after Add
// returns, so a run of any length folds in the memory of its answer
// (intervals are decoded one at a time by results.Results.EachInterval).
type Folder struct {
	rd  RunData
	slo *SLO
	// hists merge each operation type's rows, and "all" every row, until
	// Done keeps their figures (Latencies).
	hists map[string]*hdrhistogram.Histogram
	// The interval being folded: every operation type's row with one
	// start time adds to it.
	cur        Point
	curAll     *hdrhistogram.Histogram // reused: the interval's types merged
	curWithin  int64                   // the SLO operation's requests within its threshold
	curOffered int64                   // the SLO operation's offered requests
	open       bool
	// Bounded folds only (max > 0): intervals go into buckets of span
	// from the measured phase's start, decided at the first interval.
	max    int
	span   time.Duration
	bucket *bucket
	bAll   *hdrhistogram.Histogram // reused: the bucket's intervals merged
	// inBucket says the open interval goes into f.bucket (false: it
	// lies outside the measured phase and is only counted).
	inBucket bool
	outside  int
}

// bucket is the point being built from intervals in a bounded fold.
type bucket struct {
	index      int64
	p          Point
	sloWithin  int64
	sloOffered int64
}

// NewFolder starts the fold of run, judging each interval against slo
// (nil: none).
func NewFolder(run store.Run, slo *SLO) *Folder {
	return &Folder{rd: RunData{Run: run, Latencies: map[string]*Latencies{}, Offered: map[string]int64{}}, slo: slo,
		hists: map[string]*hdrhistogram.Histogram{}, curAll: newFullHist(nil)}
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
		f.curWithin, f.curOffered = 0, 0
		if f.max > 0 {
			f.openBucket(iv)
		}
	}
	offered := iv.Count + iv.Errors + iv.Dropped
	f.rd.Offered[iv.Op] += offered
	f.rd.Offered["all"] += offered
	f.cur.Count += iv.Count
	f.cur.Offered += offered
	f.cur.Duration = max(f.cur.Duration, iv.Duration)
	if iv.Hist != nil {
		for _, key := range []string{iv.Op, "all"} {
			h := f.hists[key]
			if h == nil {
				h = newFullHist(iv.Hist)
				f.hists[key] = h
			}
			iv.MergeInto(h)
		}
		iv.MergeInto(f.curAll)
		if f.inBucket {
			iv.MergeInto(f.bAll)
		}
	}
	if f.slo != nil && (f.slo.Op == "" || f.slo.Op == iv.Op) {
		within := iv.CountAtMost(f.slo.Threshold.Microseconds())
		f.curWithin += within
		f.curOffered += offered
		if f.inBucket {
			f.bucket.sloWithin += within
			f.bucket.sloOffered += offered
		}
	}
}

// BoundPoints makes the fold keep at most max points (MaxPoints when max
// is 0 or less): when the run's measured phase holds more intervals, each
// point merges the intervals of an equal span of it. Intervals whose start
// lies outside the measured phase by more than a span (a damaged store)
// are folded into the run's totals but left out of the points, and
// counted (RunData.Outside). Call it before the first Add.
func (f *Folder) BoundPoints(max int) {
	if max <= 0 {
		max = MaxPoints
	}
	f.max = max
	f.bAll = newFullHist(nil)
}

func (f *Folder) closePoint() {
	p := f.cur
	p.Intervals = 1
	p.P99, p.Within = math.NaN(), math.NaN()
	if f.curAll.TotalCount() > 0 {
		p.P99 = float64(f.curAll.ValueAtQuantile(99))
	}
	if f.slo != nil && f.curOffered > 0 {
		p.Within = float64(f.curWithin) / float64(f.curOffered)
	}
	p.MaxP99 = p.P99
	p.MinRate, p.MaxRate = math.NaN(), math.NaN()
	if p.Duration > 0 {
		p.MinRate = float64(p.Count) / p.Duration.Seconds()
		p.MaxRate = p.MinRate
	}
	if f.slo != nil && !math.IsNaN(p.Within) && p.Within < f.slo.Percentile/100 {
		p.Missed = 1
	}
	f.open = false
	if f.max <= 0 {
		f.rd.Points = append(f.rd.Points, p)
		return
	}
	f.addToBucket(p)
}

// openBucket finds the bucket of the interval starting with iv in a
// bounded fold, closing the open bucket when iv starts a later one. The
// span is decided at the first interval: the measured phase's length in
// intervals of iv's length, divided into at most max buckets.
func (f *Folder) openBucket(iv *store.Interval) {
	from, to := f.rd.Run.Summary.MeasureStart, f.rd.Run.Summary.MeasureEnd
	nominal := max(iv.Duration, time.Nanosecond)
	if f.span == 0 {
		if from.IsZero() || !to.After(from) {
			from, to = iv.Start, iv.Start.Add(time.Duration(f.max)*nominal)
			f.rd.Run.Summary.MeasureStart, f.rd.Run.Summary.MeasureEnd = from, to
		}
		n := int64((to.Sub(from) + nominal - 1) / nominal)
		f.span = nominal * time.Duration((n+int64(f.max)-1)/int64(f.max))
	}
	f.inBucket = false
	if iv.Start.Before(from.Add(-f.span)) || !iv.Start.Before(to.Add(f.span)) {
		f.outside++
		return
	}
	f.inBucket = true
	i := min(max(int64(iv.Start.Sub(from)/f.span), 0), int64(f.max)-1)
	if b := f.bucket; b != nil && i > b.index {
		f.closeBucket()
	}
	if f.bucket == nil {
		// An interval out of order (earlier than the open bucket's) joins
		// it, so that the points stay in time order and bounded.
		f.bucket = &bucket{index: i, p: Point{Start: iv.Start, MaxP99: math.NaN(), MinRate: math.NaN(), MaxRate: math.NaN()}}
		f.bAll.Reset()
	}
}

// addToBucket adds one closed interval's figures to its bucket.
func (f *Folder) addToBucket(p Point) {
	if !f.inBucket {
		return
	}
	b := &f.bucket.p
	b.Duration += p.Duration
	b.Intervals++
	b.Count += p.Count
	b.Offered += p.Offered
	b.Missed += p.Missed
	b.MaxP99 = nanMax(b.MaxP99, p.MaxP99)
	b.MinRate, b.MaxRate = nanMin(b.MinRate, p.MinRate), nanMax(b.MaxRate, p.MaxRate)
}

func (f *Folder) closeBucket() {
	b := f.bucket
	f.bucket = nil
	p := b.p
	p.P99, p.Within = math.NaN(), math.NaN()
	if f.bAll.TotalCount() > 0 {
		p.P99 = float64(f.bAll.ValueAtQuantile(99))
	}
	if f.slo != nil && b.sloOffered > 0 {
		p.Within = float64(b.sloWithin) / float64(b.sloOffered)
	}
	f.rd.Points = append(f.rd.Points, p)
}

// nanMax and nanMin take the larger or smaller of a and b, ignoring a NaN
// (an interval with no successful request has no p99 or rate).
func nanMax(a, b float64) float64 { return ignoringNaN(a, b, math.Max) }
func nanMin(a, b float64) float64 { return ignoringNaN(a, b, math.Min) }

func ignoringNaN(a, b float64, pick func(x, y float64) float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return pick(a, b)
}

// Done returns the folded run. The Folder cannot be used after it.
func (f *Folder) Done() RunData {
	if f.open {
		f.closePoint()
	}
	if f.bucket != nil {
		f.closeBucket()
	}
	f.rd.Outside = f.outside
	for key, h := range f.hists {
		f.rd.Latencies[key] = NewLatencies(h, f.slo)
		recycle(h)
	}
	recycle(f.curAll)
	recycle(f.bAll)
	f.hists, f.curAll, f.bAll = nil, nil, nil
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
