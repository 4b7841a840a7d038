package store

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms cover 1 µs to 60 s in microseconds with 3 significant
// digits. Every package builds its histograms with NewHistogram so that
// histograms from different workers, intervals, runs and files merge without
// loss, and so that what the store decodes has the geometry it encoded.
const (
	HistLowestMicros  = 1
	HistHighestMicros = 60_000_000
	HistSigFigs       = 3
)

// NewHistogram returns an empty latency histogram with Headroom's bounds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowestMicros, HistHighestMicros, HistSigFigs)
}

// histSummary is the per-interval latency summary stored next to the encoded
// histogram, so plain SQL can answer "p99 per interval" without decoding.
// valid is false for an empty histogram: the columns are then NULL, because a
// percentile of nothing is unknown, not zero.
type histSummary struct {
	valid                         bool
	mean                          float64
	p50, p90, p95, p99, p999, max int64
}

var summaryQuantiles = []float64{50, 90, 95, 99, 99.9}

func summarize(h *hdrhistogram.Histogram) histSummary {
	if h == nil || h.TotalCount() == 0 {
		return histSummary{}
	}
	q := h.ValueAtPercentilesSlice(summaryQuantiles)
	return histSummary{
		valid: true,
		mean:  h.Mean(),
		p50:   q[0], p90: q[1], p95: q[2], p99: q[3], p999: q[4],
		max: h.Max(),
	}
}

// args returns the summary as SQL arguments in column order
// (mean_us, p50_us, p90_us, p95_us, p99_us, p999_us, max_us).
func (s histSummary) args() []any {
	if !s.valid {
		return []any{nil, nil, nil, nil, nil, nil, nil}
	}
	return []any{s.mean, s.p50, s.p90, s.p95, s.p99, s.p999, s.max}
}

// encodeHist returns the standard HdrHistogram V2 compressed encoding as
// base64 text, readable by every HdrHistogram implementation (Java, C,
// Python, Rust, Go). A nil histogram is stored as an empty one so that every
// row has a histogram a reader can merge. It uses the store's own encoder
// (hdrenc.go), not the library's Encode, which is much slower.
func encodeHist(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		h = NewHistogram()
	}
	s, err := encodeHdrV2(h)
	if err != nil {
		return "", fmt.Errorf("encoding histogram: %w", err)
	}
	return s, nil
}

func decodeHist(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	return h, nil
}
