package slp

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// DefaultThresholds are the critical SLP thresholds c reported by default,
// in percent (seed-digest §4: e.g. 70% and 95%).
var DefaultThresholds = []float64{70, 95}

// Critical is the critical pressure of a series at one threshold.
type Critical struct {
	Threshold float64 // c, percent
	// MCPT is the longest continuous time with SLP > c; TCPT the total
	// time with SLP > c (seed-digest §4). A point counts when its value is
	// strictly greater than c, for its whole period; a gap between points
	// ends a continuous period.
	MCPT, TCPT time.Duration
	// MCPTPct and TCPTPct are MCPT and TCPT as percent of Covered; NaN for
	// an empty series.
	MCPTPct, TCPTPct float64
	// Covered is the denominator: the time the series covers (the sum of
	// its periods). Time in gaps was not observed and is not counted.
	Covered time.Duration
	// Periods are the continuous critical periods, in time order (for
	// shading a chart).
	Periods []Range
}

// CriticalTime computes MCPT(c) and TCPT(c) of an SLP series. Points of
// different periods count with their own period.
func CriticalTime(s Series, c float64) (Critical, error) {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return Critical{}, fmt.Errorf("critical threshold %v must be a finite percentage, e.g. 70", c)
	}
	if err := s.Check(); err != nil {
		return Critical{}, err
	}
	r := Critical{Threshold: c, Covered: s.Covered(), MCPTPct: math.NaN(), TCPTPct: math.NaN()}
	var run time.Duration // length of the critical period in progress
	for i, p := range s {
		if !(p.Value > c) {
			run = 0
			continue
		}
		if run > 0 && continuous(s[i-1], p) {
			run += p.Period
			r.Periods[len(r.Periods)-1].End = p.End()
		} else {
			run = p.Period
			r.Periods = append(r.Periods, Range{Start: p.Start, End: p.End()})
		}
		r.TCPT += p.Period
		r.MCPT = max(r.MCPT, run)
	}
	if r.Covered > 0 {
		r.MCPTPct = 100 * r.MCPT.Seconds() / r.Covered.Seconds()
		r.TCPTPct = 100 * r.TCPT.Seconds() / r.Covered.Seconds()
	}
	return r, nil
}

// Box is the seed-style boxplot of a series (seed 000 §4.3: the mean
// instead of the median, a box from the 25th to the 75th percentile,
// whiskers at the 1st and 99th), plus the median and extremes. Statistics
// are time-weighted: a point weighs its period, so a 60 s sample counts
// as much as sixty 1 s samples. Percentiles are nearest-rank: the
// smallest value whose cumulative weight reaches p of the total. NaN for
// an empty series.
type Box struct {
	N                                int
	Covered                          time.Duration
	Mean                             float64
	Min, P1, P25, P50, P75, P99, Max float64
}

// Boxplot returns the Box of s.
func Boxplot(s Series) (Box, error) {
	if err := s.Check(); err != nil {
		return Box{}, err
	}
	nan := math.NaN()
	b := Box{N: len(s), Covered: s.Covered(), Mean: nan, Min: nan, P1: nan, P25: nan, P50: nan, P75: nan, P99: nan, Max: nan}
	if len(s) == 0 {
		return b, nil
	}
	sorted := append(Series(nil), s...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Value < sorted[j].Value })
	total := b.Covered.Seconds()
	var sum float64
	for _, p := range sorted {
		sum += p.Value * p.Period.Seconds()
	}
	b.Mean = sum / total
	q := func(p float64) float64 {
		var cum float64
		for _, x := range sorted {
			cum += x.Period.Seconds()
			// The tolerance absorbs rounding in the cumulative sum.
			if cum >= p*total*(1-1e-12) {
				return x.Value
			}
		}
		return sorted[len(sorted)-1].Value
	}
	b.Min, b.Max = sorted[0].Value, sorted[len(sorted)-1].Value
	b.P1, b.P25, b.P50, b.P75, b.P99 = q(0.01), q(0.25), q(0.5), q(0.75), q(0.99)
	return b, nil
}

// Summary is everything a report shows for one SLP series.
type Summary struct {
	Box      Box
	Critical []Critical // one per threshold, in the order given
	Gaps     int        // places where the series is not continuous
}

// Summarize returns the boxplot and the critical times of s at each
// threshold (DefaultThresholds when none are given).
func Summarize(s Series, thresholds ...float64) (Summary, error) {
	if len(thresholds) == 0 {
		thresholds = DefaultThresholds
	}
	b, err := Boxplot(s)
	if err != nil {
		return Summary{}, err
	}
	out := Summary{Box: b, Gaps: s.Gaps()}
	for _, c := range thresholds {
		cr, err := CriticalTime(s, c)
		if err != nil {
			return Summary{}, err
		}
		out.Critical = append(out.Critical, cr)
	}
	return out, nil
}
