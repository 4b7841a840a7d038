package agent

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/store"
)

// The merge is exact, not an approximation: every agent records latency
// into HdrHistograms of the same range and precision (store.NewHistogram),
// so their buckets are the same buckets, and adding the counts bucket by
// bucket gives exactly the histogram one process would have recorded from
// all the values. Every percentile of the merged histogram is therefore
// the percentile of all the agents' latencies together, at the histogram's
// precision. What could break this is a histogram of another geometry (its
// buckets are not ours: it is refused) or a value outside the range (the
// merge would drop it: that is an error, never a silent loss). Counters
// (completions, errors by kind, late, dropped) are sums.

// Geometry is the range and precision every agent's histograms must have:
// the store's.
func Geometry() HistRange {
	return HistRange{Lowest: store.HistLowestMicros, Highest: store.HistHighestMicros, SigFigs: store.HistSigFigs}
}

func rangeOf(h *hdrhistogram.Histogram) HistRange {
	return HistRange{Lowest: h.LowestTrackableValue(), Highest: h.HighestTrackableValue(), SigFigs: h.SignificantFigures()}
}

// checkRange refuses a histogram geometry other than Geometry's.
func checkRange(got HistRange) error {
	if want := Geometry(); got != want {
		return fmt.Errorf("its latency histograms cover %s but the coordinator's cover %s; they cannot be merged exactly (run the same Headroom version everywhere)", got, want)
	}
	return nil
}

// Stat is one operation's decoded statistics in one interval of one phase.
type Stat struct {
	Phase, Op                    string
	Count, Errors, Late, Dropped int64
	ErrorKinds                   map[string]int64
	Hist                         *hdrhistogram.Histogram
}

// DecodeStats decodes an agent's interval statistics, refusing histograms
// of another geometry.
func DecodeStats(os []OpStat) ([]Stat, error) {
	out := make([]Stat, len(os))
	for i, o := range os {
		h, err := store.DecodeHistogram(o.Hist)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.Phase, o.Op, err)
		}
		if err := checkRange(rangeOf(h)); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.Phase, o.Op, err)
		}
		out[i] = Stat{Phase: o.Phase, Op: o.Op, Count: o.Count, Errors: o.Errors, Late: o.Late, Dropped: o.Dropped, ErrorKinds: o.ErrorKinds, Hist: h}
	}
	return out, nil
}

// EncodeStat encodes one operation's statistics for the wire.
func EncodeStat(s Stat) (OpStat, error) {
	enc, err := store.EncodeHistogram(s.Hist)
	if err != nil {
		return OpStat{}, err
	}
	return OpStat{Phase: s.Phase, Op: s.Op, Count: s.Count, Errors: s.Errors, Late: s.Late, Dropped: s.Dropped, ErrorKinds: s.ErrorKinds, Hist: enc}, nil
}

// Merge merges the statistics of several agents for the same interval:
// one Stat per (phase, operation), in the order they first appear. Counts
// are sums; histograms are merged bucket by bucket into a new histogram of
// Geometry's range. A histogram of another geometry, or a merge that would
// drop a value, is an error.
func Merge(parts ...[]Stat) ([]Stat, error) {
	type key struct{ phase, op string }
	at := map[key]int{}
	var out []Stat
	for _, part := range parts {
		for _, s := range part {
			k := key{s.Phase, s.Op}
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, Stat{Phase: s.Phase, Op: s.Op, Hist: store.NewHistogram()})
			}
			m := &out[i]
			m.Count += s.Count
			m.Errors += s.Errors
			m.Late += s.Late
			m.Dropped += s.Dropped
			for kind, n := range s.ErrorKinds {
				if m.ErrorKinds == nil {
					m.ErrorKinds = map[string]int64{}
				}
				m.ErrorKinds[kind] += n
			}
			if s.Hist == nil {
				continue
			}
			if err := checkRange(rangeOf(s.Hist)); err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.Phase, s.Op, err)
			}
			if lost := m.Hist.Merge(s.Hist); lost != 0 {
				return nil, fmt.Errorf("%s %s: merging dropped %d latency values outside the histogram's range; the merged percentiles would be wrong", s.Phase, s.Op, lost)
			}
		}
	}
	return out, nil
}
