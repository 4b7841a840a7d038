// Package esl holds expected service level (ESL) models: what a rented
// service (a volume, a network link, a CPU share) can realistically be
// expected to deliver for one service quality, such as a volume's ops/s or
// bandwidth (seed-digest §4). An ESL is a single value or a discrete
// distribution of levels with relative frequencies. Models come from
// documentation (analytical: the provisioned-IOPS volume) or from
// benchmarking (empirical: per-second samples binned into a distribution),
// and are stored as YAML files with a `kind:` field (docs/esl.md).
//
// Everything here is a pure function of its inputs; service level
// pressure, which compares observations with an ESL, is package slp.
package esl

import (
	"fmt"
	"math"
	"sort"
)

// Quality names a service quality an ESL describes. Volume models know
// OpsPerS and BytesPerS; single-value and distribution models accept any
// non-empty name (e.g. "net_bytes_per_s").
type Quality string

// Qualities of a volume (seed-digest §4: ops/s and bandwidth).
const (
	OpsPerS   Quality = "ops_per_s"   // operations per second as the client counts them
	BytesPerS Quality = "bytes_per_s" // bandwidth, bytes per second
)

// Level is one expected service level with its relative frequency.
type Level struct {
	Value float64 `yaml:"level" json:"level"`
	Freq  float64 `yaml:"freq" json:"freq"`
}

// ESL is an expected service level: levels sorted by value, with positive
// values and frequencies that sum to 1. Source says where it came from
// (e.g. "analytical provisioned_iops_volume at 4 KiB, limited by iops"),
// so that every report number can say what it is computed from.
// The zero ESL has no levels; its statistics are NaN.
type ESL struct {
	Levels []Level `json:"levels"`
	Source string  `json:"source,omitempty"`
}

// Single returns the single-valued ESL s (seed-digest §4: SLP = o/s).
func Single(s float64) (ESL, error) {
	if !(s > 0) || math.IsInf(s, 1) {
		return ESL{}, fmt.Errorf("expected service level %v must be a positive, finite number", s)
	}
	return ESL{Levels: []Level{{Value: s, Freq: 1}}}, nil
}

// NewDistribution returns the discrete ESL {(s_j, f_j)} (seed-digest §4).
// Frequencies may be counts: they are normalized to sum to 1. Levels must
// be positive (SLP divides by them) and frequencies non-negative with a
// positive sum; equal levels are merged and zero-frequency levels dropped.
func NewDistribution(levels []Level) (ESL, error) {
	if len(levels) == 0 {
		return ESL{}, fmt.Errorf("an ESL distribution needs at least one level; give a list of {level, freq}")
	}
	var sum float64
	for i, l := range levels {
		if !(l.Value > 0) || math.IsInf(l.Value, 1) {
			return ESL{}, fmt.Errorf("level %d is %v; expected service levels must be positive, finite numbers", i+1, l.Value)
		}
		if !(l.Freq >= 0) || math.IsInf(l.Freq, 1) {
			return ESL{}, fmt.Errorf("level %d has frequency %v; frequencies must be non-negative, finite numbers", i+1, l.Freq)
		}
		sum += l.Freq
	}
	if !(sum > 0) || math.IsInf(sum, 1) {
		return ESL{}, fmt.Errorf("the frequencies sum to %v; at least one must be positive", sum)
	}
	sorted := append([]Level(nil), levels...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Value < sorted[j].Value })
	out := make([]Level, 0, len(sorted))
	for _, l := range sorted {
		if l.Freq == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Value == l.Value {
			out[n-1].Freq += l.Freq / sum
			continue
		}
		out = append(out, Level{Value: l.Value, Freq: l.Freq / sum})
	}
	return ESL{Levels: out}, nil
}

// IsSingle reports whether the ESL has exactly one level.
func (e ESL) IsSingle() bool { return len(e.Levels) == 1 }

// Mean is the frequency-weighted mean level sum_j s_j f_j; NaN when empty.
func (e ESL) Mean() float64 {
	if len(e.Levels) == 0 {
		return math.NaN()
	}
	var m float64
	for _, l := range e.Levels {
		m += l.Value * l.Freq
	}
	return m
}

// Quantile is the level at cumulative frequency p (0..1), nearest rank:
// the smallest s_j whose cumulative frequency reaches p. NaN when empty or
// p is outside [0, 1].
func (e ESL) Quantile(p float64) float64 {
	if len(e.Levels) == 0 || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	var cum float64
	for _, l := range e.Levels {
		cum += l.Freq
		// The tolerance absorbs the rounding of normalized frequencies, so
		// that p = 0.5 of two equal halves picks the lower one.
		if cum >= p-1e-12 {
			return l.Value
		}
	}
	return e.Levels[len(e.Levels)-1].Value
}

// Min and Max are the smallest and largest levels; NaN when empty.
func (e ESL) Min() float64 {
	if len(e.Levels) == 0 {
		return math.NaN()
	}
	return e.Levels[0].Value
}

// Max is the largest level; NaN when empty.
func (e ESL) Max() float64 {
	if len(e.Levels) == 0 {
		return math.NaN()
	}
	return e.Levels[len(e.Levels)-1].Value
}

// String prints the ESL briefly: the value when single, else the mean and
// range of the distribution.
func (e ESL) String() string {
	switch len(e.Levels) {
	case 0:
		return "no ESL"
	case 1:
		return fmt.Sprintf("%g", e.Levels[0].Value)
	}
	return fmt.Sprintf("mean %.4g (%.4g..%.4g, %d levels)", e.Mean(), e.Min(), e.Max(), len(e.Levels))
}

// pool merges distributions weighted by w (e.g. their sample counts).
func pool(parts []ESL, w []float64) (ESL, error) {
	var all []Level
	for i, p := range parts {
		for _, l := range p.Levels {
			all = append(all, Level{Value: l.Value, Freq: l.Freq * w[i]})
		}
	}
	return NewDistribution(all)
}
