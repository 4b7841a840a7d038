package stats

import (
	"fmt"
	"math"
)

// Fit is a least-squares line y = Intercept + Slope·x with Pearson's
// correlation R and R2 = R² over the N pairs used. seed-digest §5 judges
// the linearity of scaling by the correlation coefficient of a linear
// regression of throughput over server count.
type Fit struct {
	Intercept, Slope float64
	R, R2            float64
	N                int
}

// Regress fits y = a + b·x by least squares:
//
//	b = Sxy / Sxx,  a = ȳ - b·x̄,  r = Sxy / √(Sxx·Syy)
//
// with Sxy = Σ(x-x̄)(y-ȳ) and so on. Pairs where either value is NaN or
// infinite are skipped (they mean "not measured"). With fewer than two
// pairs, or all x equal, the line is undefined and every field but N is
// NaN; with all y equal the line is flat (b = 0) but r is NaN, because a
// correlation with a constant is undefined. Slices of different lengths
// are an error.
func Regress(xs, ys []float64) (Fit, error) {
	if len(xs) != len(ys) {
		return Fit{}, fmt.Errorf("regression needs one y per x, got %d x and %d y values; pass slices of equal length", len(xs), len(ys))
	}
	var px, py []float64
	for i := range xs {
		if isFinite(xs[i]) && isFinite(ys[i]) {
			px = append(px, xs[i])
			py = append(py, ys[i])
		}
	}
	nan := math.NaN()
	f := Fit{Intercept: nan, Slope: nan, R: nan, R2: nan, N: len(px)}
	if f.N < 2 {
		return f, nil
	}
	mx, my := Mean(px), Mean(py)
	var sxx, syy, sxy float64
	for i := range px {
		dx, dy := px[i]-mx, py[i]-my
		sxx += dx * dx
		syy += dy * dy
		sxy += dx * dy
	}
	if sxx == 0 {
		return f, nil
	}
	f.Slope = sxy / sxx
	f.Intercept = my - f.Slope*mx
	if syy > 0 {
		// Rounding can push |r| a hair above 1 for exactly collinear data.
		f.R = max(-1, min(1, sxy/math.Sqrt(sxx*syy)))
		f.R2 = f.R * f.R
	}
	return f, nil
}

// Pearson is the correlation coefficient of the finite pairs of xs and ys
// (see Regress); NaN when undefined or when the lengths differ.
func Pearson(xs, ys []float64) float64 {
	f, err := Regress(xs, ys)
	if err != nil {
		return math.NaN()
	}
	return f.R
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
