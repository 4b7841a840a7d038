package stats

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Merge returns one histogram holding every value recorded in hists; nil
// entries are skipped, and the result is nil when there is nothing to
// merge. Percentiles of a merged histogram are the percentiles of all the
// requests together (seed-digest §1: RT_p = F^-1(p) over the measurement),
// which averaging per-interval percentiles would not give. The merged
// histogram's range and precision cover every input (lowest of the lowest
// trackable values, highest of the highest, most significant digits), so no
// recorded value is lost; inputs are not modified.
func Merge(hists []*hdrhistogram.Histogram) *hdrhistogram.Histogram {
	var lo, hi, digits int64
	for _, h := range hists {
		if h == nil {
			continue
		}
		if digits == 0 || h.LowestTrackableValue() < lo {
			lo = h.LowestTrackableValue()
		}
		hi = max(hi, h.HighestTrackableValue())
		digits = max(digits, h.SignificantFigures())
	}
	if digits == 0 {
		return nil
	}
	out := hdrhistogram.New(lo, hi, int(digits))
	for _, h := range hists {
		if h != nil {
			out.Merge(h)
		}
	}
	return out
}

// Percentile is the p-th percentile (p in [0, 100]) of the values recorded
// in h, as the histogram reports it: the highest value equivalent to the
// recorded value at that rank, so within the histogram's precision it errs
// high, never low. It is NaN for a nil or empty histogram or p outside
// [0, 100].
func Percentile(h *hdrhistogram.Histogram, p float64) float64 {
	if h == nil || h.TotalCount() == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	return float64(h.ValueAtQuantile(p))
}

// MergedPercentile is Percentile(Merge(hists), p).
func MergedPercentile(hists []*hdrhistogram.Histogram, p float64) float64 {
	return Percentile(Merge(hists), p)
}
