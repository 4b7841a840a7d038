package load

import hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

// Latency histograms cover 1 µs to 60 s with 3 significant digits, in
// microseconds, everywhere in Headroom: histograms from different intervals,
// workers and runs can then be merged without loss.
const (
	histMinMicros = 1
	histMaxMicros = 60_000_000
	histSigFigs   = 3
)

// NewHistogram returns an empty latency histogram with Headroom's bounds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMinMicros, histMaxMicros, histSigFigs)
}

// micros converts a latency in nanoseconds to whole microseconds clamped to
// the histogram's range; a sub-microsecond latency counts as 1 µs. Latencies
// beyond 60 s are clamped (the request timeout is far below that).
func micros(ns int64) int64 {
	us := ns / 1000
	if us < histMinMicros {
		return histMinMicros
	}
	if us > histMaxMicros {
		return histMaxMicros
	}
	return us
}
