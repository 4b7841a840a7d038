package slp

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/monitor"
)

// Pressure is the service level pressure of the observed level o against
// the ESL e, in percent (seed-digest §4):
//
//	SLP(o) = 100 x sum_j (o / s_j) f_j
//
// 100 means exactly at the ESL; it exceeds 100 when o beats the ESL. For a
// single-valued ESL s it is 100 x o / s. NaN for an empty ESL.
func Pressure(o float64, e esl.ESL) float64 {
	if len(e.Levels) == 0 {
		return math.NaN()
	}
	var p float64
	// 100*o/s_j first, so that a hand-computed 210/300 is exactly 70.
	for _, l := range e.Levels {
		p += 100 * o / l.Value * l.Freq
	}
	return p
}

// FromSamples is the SLP series of one host, resource, metric and source
// against a fixed ESL, e.g. a network interface's rx_bytes_per_s against
// a single-valued bandwidth ESL. Samples are sorted by start; mixing
// series, overlapping samples or negative values are errors.
func FromSamples(samples []monitor.Sample, e esl.ESL) (Series, error) {
	if len(e.Levels) == 0 {
		return nil, fmt.Errorf("the ESL is empty; build it with esl.Single, esl.NewDistribution or a model")
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("no samples; select the samples of one host, resource and metric")
	}
	sorted, err := oneSeries(samples)
	if err != nil {
		return nil, err
	}
	out := make(Series, len(sorted))
	for i, s := range sorted {
		if !(s.Value >= 0) || math.IsInf(s.Value, 1) {
			return nil, fmt.Errorf("sample %s at %s is %v; observed service levels must be non-negative numbers", s.Metric, s.Start.Format(time.RFC3339), s.Value)
		}
		out[i] = Point{Start: s.Start, Period: s.Period, Value: Pressure(s.Value, e)}
	}
	if err := out.Check(); err != nil {
		return nil, err
	}
	return out, nil
}

// oneSeries checks that samples share host, resource, metric and source and
// returns them sorted by start.
func oneSeries(samples []monitor.Sample) ([]monitor.Sample, error) {
	first := samples[0]
	for _, s := range samples {
		if s.Host != first.Host || s.Resource != first.Resource || s.Metric != first.Metric || s.Source != first.Source {
			return nil, fmt.Errorf("samples mix series (%s %s %s %s and %s %s %s %s); select one host, resource, metric and source",
				first.Host, first.Resource, first.Metric, first.Source, s.Host, s.Resource, s.Metric, s.Source)
		}
	}
	sorted := append([]monitor.Sample(nil), samples...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
	return sorted, nil
}
