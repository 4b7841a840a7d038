package bottleneck

import (
	"math"
	"sort"
)

// quantile is the p-quantile of xs by linear interpolation between order
// statistics (Hyndman and Fan type 7, the default of R and NumPy): with
// the values sorted as x[0..n-1] and h = (n-1)*p, it is
// x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)]).
// NaN for no values; xs is not modified.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	h := float64(len(s)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
