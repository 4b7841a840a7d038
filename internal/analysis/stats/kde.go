package stats

import "math"

// KDEBandwidth is the kernel bandwidth of seed-digest §6 (003 eq. 19),
//
//	h = cbrt(4) * s * n^(-1/3),
//
// with s the sample standard deviation (n-1 denominator) of the n non-NaN
// values. It is NaN for fewer than two values and 0 when all values are
// equal; KDE needs a positive h, so a caller that must draw such a sample
// chooses a floor itself.
func KDEBandwidth(xs []float64) float64 {
	vals := withoutNaN(xs)
	if len(vals) < 2 {
		return math.NaN()
	}
	return math.Cbrt(4) * StdDev(vals) / math.Cbrt(float64(len(vals)))
}

// KDE is the Gaussian kernel density estimate of the sample evaluated at
// each point of at (seed-digest §6, 003 eq. 18):
//
//	g(x) = 1/(n*h) * sum_t phi((x - X_t) / h),  phi(u) = exp(-u²/2) / sqrt(2*pi).
//
// NaN values in the sample are ignored. Every result is NaN when no value is
// left or h is not a positive finite number. The estimate integrates to 1
// over the real line; over a bounded grid it integrates to the mass inside.
func KDE(sample []float64, h float64, at []float64) []float64 {
	vals := withoutNaN(sample)
	out := make([]float64, len(at))
	if len(vals) == 0 || !(h > 0) || math.IsInf(h, 1) {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	norm := 1 / (float64(len(vals)) * h * math.Sqrt(2*math.Pi))
	for i, x := range at {
		var s float64
		for _, v := range vals {
			u := (x - v) / h
			s += math.Exp(-u * u / 2)
		}
		out[i] = s * norm
	}
	return out
}

// withoutNaN returns xs without NaN values (a copy only when one is dropped).
func withoutNaN(xs []float64) []float64 {
	for i, x := range xs {
		if math.IsNaN(x) {
			out := append([]float64(nil), xs[:i]...)
			for _, y := range xs[i+1:] {
				if !math.IsNaN(y) {
					out = append(out, y)
				}
			}
			return out
		}
	}
	return xs
}
