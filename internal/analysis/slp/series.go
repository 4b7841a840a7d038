// Package slp computes service level pressure (SLP): how close observed
// service levels come to their expected service level (ESL, package esl),
// as a percentage where 100% means exactly at the ESL (seed-digest §4).
// On an SLP time series it computes the maximum and total critical
// pressure times (MCPT, TCPT), seed-style boxplot statistics, the critical
// periods for shading, conversions between normalized-operation units and
// the factor that aligns a provider-side series with a client-side one,
// and the provisioning recommendation that follows from them.
//
// Everything here is a pure function of samples and models.
package slp

import (
	"fmt"
	"math"
	"time"
)

// Point is one value of a time series over [Start, Start+Period).
type Point struct {
	Start  time.Time
	Period time.Duration
	Value  float64
}

// End is where the point's interval ends.
func (p Point) End() time.Time { return p.Start.Add(p.Period) }

// Series is a time series sorted by Start with intervals that do not
// overlap. An SLP series holds percentages; other series (normalized ops
// per second) hold their own unit.
type Series []Point

// joinTolerance is how far apart two points may be and still count as
// continuous: 1% of the shorter period, so that a few milliseconds of
// timestamp jitter in imported data neither break a critical period nor
// count as an overlap.
func joinTolerance(a, b Point) time.Duration {
	return min(a.Period, b.Period) / 100
}

// continuous reports whether b follows a without a gap.
func continuous(a, b Point) bool {
	return b.Start.Sub(a.End()) <= joinTolerance(a, b)
}

// Check returns an error when the series is not sorted, overlaps, has a
// non-positive period or a non-finite value.
func (s Series) Check() error {
	for i, p := range s {
		if p.Period <= 0 {
			return fmt.Errorf("point %d at %s has period %v; every point needs a positive period", i+1, p.Start.Format(time.RFC3339), p.Period)
		}
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			return fmt.Errorf("point %d at %s has value %v; remove undefined points before the analysis", i+1, p.Start.Format(time.RFC3339), p.Value)
		}
		if i == 0 {
			continue
		}
		prev := s[i-1]
		if p.Start.Before(prev.Start) {
			return fmt.Errorf("point %d at %s starts before point %d; sort the series by start time", i+1, p.Start.Format(time.RFC3339), i)
		}
		if prev.End().Sub(p.Start) > joinTolerance(prev, p) {
			return fmt.Errorf("point %d at %s overlaps the previous one; give one host, resource, metric and source per series", i+1, p.Start.Format(time.RFC3339))
		}
	}
	return nil
}

// Covered is the time the series covers: the sum of its periods. Gaps
// between points are not part of it.
func (s Series) Covered() time.Duration {
	var d time.Duration
	for _, p := range s {
		d += p.Period
	}
	return d
}

// Gaps counts the places where a point does not follow its predecessor.
func (s Series) Gaps() int {
	n := 0
	for i := 1; i < len(s); i++ {
		if !continuous(s[i-1], s[i]) {
			n++
		}
	}
	return n
}

// Range is a time range [Start, End).
type Range struct {
	Start, End time.Time
}
