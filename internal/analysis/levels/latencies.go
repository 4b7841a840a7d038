package levels

import (
	"fmt"
	"math"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/store"
)

// Latencies are one operation type's successful requests of one run,
// merged over its measured phase. A full histogram of Headroom's layout
// is about 140 KB of counts, so a campaign of 1,000 runs of five
// operation types held 840 MB in them; a run's Latencies keep the figures
// the analyses read, taken from the full histogram when the fold ends, and
// the histogram itself in the store's compressed encoding (a few hundred
// bytes) for what needs all of it: a merge across runs, or a percentile
// or threshold not kept.
type Latencies struct {
	count        int64
	mean, stdDev float64
	max          int64
	quantiles    map[float64]int64 // ValueAtQuantile at keptQuantiles and at the fold's SLO percentile
	sloLimit     int64             // the fold's SLO threshold in µs; -1 with no SLO
	withinSLO    int64             // requests at most sloLimit (countAtMost)
	encoded      string
	encodeErr    error // why there is no encoding (never seen)
}

// keptQuantiles are the percentiles a run's Latencies answer without
// decoding its histogram: those the level tables print.
var keptQuantiles = []float64{50, 90, 95, 99, 99.9}

// NewLatencies takes the figures of h (the SLO's percentile and threshold
// too, when slo is not nil) and encodes it. h is not kept.
func NewLatencies(h *hdrhistogram.Histogram, slo *SLO) *Latencies {
	enc, err := store.EncodeHistogram(h)
	l := &Latencies{count: h.TotalCount(), sloLimit: -1, encoded: enc, encodeErr: err, quantiles: make(map[float64]int64, len(keptQuantiles)+1)}
	qs := keptQuantiles
	if slo != nil {
		qs = append(qs[:len(qs):len(qs)], slo.Percentile)
		l.sloLimit = slo.Threshold.Microseconds()
	}
	l.summarize(h.Distribution(), qs)
	return l
}

// summarize takes every figure from one walk over the histogram's buckets,
// as the library computes each in a walk of its own (hdrhistogram-go
// v1.4: a bucket's median equivalent value is From + (To-From+1)/2; the
// value at a percentile is the highest equivalent value of the bucket
// holding its rank, the lowest for the 0th; the maximum is the last
// non-empty bucket's highest equivalent value). The sums are made in the
// library's order, so the floating-point results are the same, and
// TestLatenciesAnswerAsTheFullHistogram checks that they are.
func (l *Latencies) summarize(bars []hdrhistogram.Bar, qs []float64) {
	total := float64(l.count)
	type rank struct {
		q float64
		n int64
	}
	ranks := make([]rank, 0, len(qs))
	for _, q := range qs {
		l.quantiles[q] = 0
		if l.count > 0 {
			ranks = append(ranks, rank{q, percentileRank(q, l.count)})
		}
	}
	var cum int64
	for _, b := range bars {
		if b.Count == 0 {
			continue
		}
		median := b.From + (b.To-b.From+1)>>1
		l.mean += float64(b.Count) * float64(median) / total
		l.max = b.To
		if b.To <= l.sloLimit {
			l.withinSLO += b.Count
		}
		before := cum
		cum += b.Count
		for _, r := range ranks {
			if r.n > before && r.n <= cum {
				if r.q <= 0 {
					l.quantiles[r.q] = b.From
				} else {
					l.quantiles[r.q] = b.To
				}
			}
		}
	}
	if l.count == 0 {
		l.max = 0
		return
	}
	var dev2 float64
	for _, b := range bars {
		if b.Count == 0 {
			continue
		}
		dev := float64(b.From+(b.To-b.From+1)>>1) - l.mean
		dev2 += (dev * dev) * float64(b.Count) / total
	}
	l.stdDev = math.Sqrt(dev2)
}

// percentileRank is the rank of percentile q among count values, in [1,
// count], as hdrhistogram-go v1.4 computes it.
func percentileRank(q float64, count int64) int64 {
	q = min(max(q, 0), 100)
	r := (q/100)*float64(count) + 0.5
	if !(r >= 1) {
		return 1
	}
	if r >= float64(count) {
		return count
	}
	return int64(r)
}

// TotalCount is the number of successful requests.
func (l *Latencies) TotalCount() int64 { return l.count }

// Mean, StdDev and Max are the histogram's (µs; 0 when empty).
func (l *Latencies) Mean() float64   { return l.mean }
func (l *Latencies) StdDev() float64 { return l.stdDev }
func (l *Latencies) Max() int64      { return l.max }

// ValueAtQuantile is the histogram's value at percentile q (µs), decoding
// it when q is not one of those kept.
func (l *Latencies) ValueAtQuantile(q float64) int64 {
	if v, ok := l.quantiles[q]; ok {
		return v
	}
	h, err := l.Histogram()
	if err != nil {
		return 0
	}
	return h.ValueAtQuantile(q)
}

// CountAtMost counts the requests whose latency bucket lies wholly at or
// under limit µs (countAtMost), decoding the histogram unless limit is the
// fold's SLO threshold.
func (l *Latencies) CountAtMost(limit int64) int64 {
	if limit == l.sloLimit {
		return l.withinSLO
	}
	h, err := l.Histogram()
	if err != nil {
		return 0
	}
	return countAtMost(h, limit)
}

// Histogram decodes the whole histogram, into a new one the caller owns.
func (l *Latencies) Histogram() (*hdrhistogram.Histogram, error) {
	if l.encodeErr != nil {
		return nil, fmt.Errorf("a run's latency histogram could not be kept: %w", l.encodeErr)
	}
	h, err := store.DecodeHistogram(l.encoded)
	if err != nil {
		return nil, fmt.Errorf("a run's latency histogram: %w", err)
	}
	return h, nil
}

// fullHists recycles the full histograms a fold merges into: each run's
// fold needs a few, and they are dropped when it ends.
var fullHists = sync.Pool{New: func() any { return store.NewHistogram() }}

// newFullHist is a reset histogram of like's layout: a recycled one when
// that is Headroom's layout.
func newFullHist(like *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if like == nil || isStoreLayout(like) {
		return fullHists.Get().(*hdrhistogram.Histogram)
	}
	return hdrhistogram.New(like.LowestTrackableValue(), like.HighestTrackableValue(), int(like.SignificantFigures()))
}

// recycle gives h back for another fold.
func recycle(h *hdrhistogram.Histogram) {
	if h != nil && isStoreLayout(h) {
		h.Reset()
		fullHists.Put(h)
	}
}

var storeLayout = store.NewHistogram()

func isStoreLayout(h *hdrhistogram.Histogram) bool {
	return h.LowestTrackableValue() == storeLayout.LowestTrackableValue() &&
		h.HighestTrackableValue() == storeLayout.HighestTrackableValue() &&
		h.SignificantFigures() == storeLayout.SignificantFigures()
}
