// Package stats holds the small statistical functions every analysis uses.
// All are pure functions of their inputs.
package stats

import "math"

// Mean is the arithmetic mean; NaN for no values.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// StdDev is the sample standard deviation (n-1 denominator); NaN for fewer
// than two values.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// StdErr is the standard error of the mean, s/sqrt(n), as seed 001 reports
// across repetitions (seed-digest §2); NaN for fewer than two values.
func StdErr(xs []float64) float64 {
	return StdDev(xs) / math.Sqrt(float64(len(xs)))
}

// Estimate is a mean with its standard error over N observations.
type Estimate struct {
	Mean, SE float64
	N        int
}

// Summarize returns the mean, standard error and count of xs.
func Summarize(xs []float64) Estimate {
	return Estimate{Mean: Mean(xs), SE: StdErr(xs), N: len(xs)}
}
