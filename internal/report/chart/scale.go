package chart

import (
	"math"
	"strconv"
	"strings"
)

// scale maps data values on one axis to pixels.
type scale struct {
	lo, hi float64 // domain
	log    bool
	p0, p1 float64 // pixels of lo and hi
	ticks  []float64
	step   float64 // linear tick step (0 on a log axis)
}

// newScale fits an axis to values (NaN and infinities ignored; on a log
// axis also values <= 0) and the axis's fixed ends, rounded out to nice
// ticks, about n of them. Fixed ends never hide data: data beyond them
// extend the axis.
func newScale(values []float64, ax Axis, p0, p1 float64, n int) scale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) || (ax.Log && v <= 0) {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	usable := func(p *float64) bool {
		return p != nil && !math.IsNaN(*p) && !math.IsInf(*p, 0) && (!ax.Log || *p > 0)
	}
	minFixed, maxFixed := usable(ax.Min), usable(ax.Max)
	if minFixed {
		lo = math.Min(lo, *ax.Min)
	}
	if maxFixed {
		hi = math.Max(hi, *ax.Max)
	}
	s := scale{p0: p0, p1: p1, log: ax.Log}
	if ax.Log {
		s.fitLog(lo, hi)
	} else {
		s.fitLinear(lo, hi, n, minFixed && lo == *ax.Min, maxFixed && hi == *ax.Max)
	}
	return s
}

// fitLinear picks a step of 1, 2 or 5 times a power of ten so that about n
// steps span the data (Heckbert's "nice numbers"), and widens free ends to
// the next tick.
func (s *scale) fitLinear(lo, hi float64, n int, keepLo, keepHi bool) {
	switch {
	case math.IsInf(lo, 1): // no data
		lo, hi = 0, 1
	case lo == hi && lo == 0:
		hi = 1
	case lo == hi:
		d := math.Abs(lo) / 2
		lo, hi = lo-d, hi+d
	}
	s.step = niceStep(hi-lo, n)
	if !keepLo {
		lo = math.Floor(lo/s.step+1e-9) * s.step
	}
	if !keepHi {
		hi = math.Ceil(hi/s.step-1e-9) * s.step
	}
	s.lo, s.hi = lo, hi
	for k := math.Ceil(lo/s.step - 1e-9); k*s.step <= hi+s.step*1e-9; k++ {
		s.ticks = append(s.ticks, k*s.step)
	}
}

func niceStep(span float64, n int) float64 {
	raw := span / float64(max(n, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f < 1.5:
		return mag
	case f < 3:
		return 2 * mag
	case f < 7:
		return 5 * mag
	}
	return 10 * mag
}

// fitLog spans whole decades; ticks are the powers of ten, with 2x and 5x
// between them when the axis covers two decades or less.
func (s *scale) fitLog(lo, hi float64) {
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	dlo := math.Floor(math.Log10(lo) + 1e-9)
	dhi := math.Ceil(math.Log10(hi) - 1e-9)
	if dhi <= dlo {
		dhi = dlo + 1
	}
	s.lo, s.hi = math.Pow(10, dlo), math.Pow(10, dhi)
	for d := dlo; d <= dhi; d++ {
		p := math.Pow(10, d)
		s.ticks = append(s.ticks, p)
		if dhi-dlo <= 2 && d < dhi {
			s.ticks = append(s.ticks, 2*p, 5*p)
		}
	}
}

// at returns the pixel of v; on a log axis values <= 0 map to the low end.
func (s scale) at(v float64) float64 {
	var f float64
	if s.log {
		if v <= 0 {
			return s.p0
		}
		f = (math.Log10(v) - math.Log10(s.lo)) / (math.Log10(s.hi) - math.Log10(s.lo))
	} else {
		f = (v - s.lo) / (s.hi - s.lo)
	}
	return s.p0 + f*(s.p1-s.p0)
}

// label prints a tick: as many decimals as the step needs, and k or M for
// thousands and millions when the step is that coarse.
func (s scale) label(v float64) string {
	if s.log {
		return compact(v)
	}
	step, suffix := s.step, ""
	switch {
	case step >= 1e6:
		v, step, suffix = v/1e6, step/1e6, "M"
	case step >= 1e3:
		v, step, suffix = v/1e3, step/1e3, "k"
	}
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64) + suffix
}

// compact prints a log tick (1, 2, 5 times a power of ten).
func compact(v float64) string {
	switch {
	case v >= 1e6:
		return trimZeros(strconv.FormatFloat(v/1e6, 'f', 1, 64)) + "M"
	case v >= 1e4:
		return trimZeros(strconv.FormatFloat(v/1e3, 'f', 1, 64)) + "k"
	}
	return Value(v)
}

// Value prints a data value with four significant digits, for tooltips and
// labels: 1235, 12.35, 0.01235.
func Value(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	if v == 0 {
		return "0"
	}
	dec := 3 - int(math.Floor(math.Log10(math.Abs(v))))
	dec = min(max(dec, 0), 8)
	return trimZeros(strconv.FormatFloat(v, 'f', dec, 64))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
