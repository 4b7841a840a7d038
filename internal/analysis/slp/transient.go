package slp

import (
	"fmt"
	"time"
)

// minTransientPoints is the fewest points a continuous span needs before
// the transient rule can judge it: one below the threshold, two above it
// (a period, not a blip) and one below again, or the period's start or
// end at least.
const minTransientPoints = 4

// Transient is the transient-event rule applied to one SLP series
// (seed-digest §4: high MCPT = a sustained transient event).
//
// A campaign's series is its runs' measured windows one after another,
// each a continuous span of adjacent intervals, with gaps between runs; a
// critical period never crosses a gap. So that the rule can fire on the
// windows a campaign has (a minute each by default, the same as the rule's
// default MCPT):
//   - the time above the threshold that makes an event, Need, is the
//     rule's TransientMCPT, shortened to half the longest continuous span
//     when that span is shorter than twice it, unless the MCPT was set
//     explicitly (TransientFixed);
//   - a period counts only when it begins or ends inside its span: one
//     that fills a whole run from its first interval to its last shows
//     the load level saturating the quality, not an event that came or
//     went;
//   - the rule says it cannot judge when no span has room for a period of
//     Need and a begin or end (or holds fewer than four points).
type Transient struct {
	Threshold float64       // c, percent
	Need      time.Duration // continuous time above c that makes an event
	Longest   time.Duration // the longest period above c that begins or ends inside its span
	Span      time.Duration // the longest continuous span of the series
	Judgeable bool          // the spans leave room for the rule to fire
	Fires     bool          // Judgeable and Longest >= Need
	Shortened bool          // Need is half the longest span, not the rule's MCPT
	// Note says why the rule cannot judge; "" when it can.
	Note string
}

// TransientText states the transient-event rule of r (defaults filled in)
// in words, for a report's rules line.
func (r Rules) TransientText() string {
	r = r.withDefaults()
	s := fmt.Sprintf("SLP > %g%% for %s in a row", r.TransientThreshold, secs(r.TransientMCPT))
	if !r.TransientFixed {
		s += " (or for half a run's measured window when the runs are shorter than twice that)"
	}
	return s + ", beginning or ending inside a run"
}

// TransientEvent applies the transient-event rule of r (its defaults
// filled in) to s.
func TransientEvent(s Series, r Rules) (Transient, error) {
	if err := s.Check(); err != nil {
		return Transient{}, err
	}
	r = r.withDefaults()
	c := r.TransientThreshold
	tr := Transient{Threshold: c, Need: r.TransientMCPT}
	spans := splitSpans(s)
	most := 0 // points in the longest span
	for _, sp := range spans {
		if d := sp.Covered(); d > tr.Span {
			tr.Span, most = d, len(sp)
		}
		tr.Longest = max(tr.Longest, longestBounded(sp, c))
	}
	if !r.TransientFixed && tr.Span < 2*r.TransientMCPT {
		tr.Need, tr.Shortened = tr.Span/2, true
	}
	switch {
	case most < minTransientPoints:
		tr.Note = fmt.Sprintf("the measured spans are too short to judge a transient event: the longest continuous span holds %d interval(s) (%s); the rule needs at least %d",
			most, secs(tr.Span), minTransientPoints)
	case tr.Span <= tr.Need:
		tr.Note = fmt.Sprintf("the measured spans are too short to judge a transient event: the longest continuous span is %s, not longer than the %s above %g%% the rule asks for (transient_mcpt); measure longer or lower transient_mcpt",
			secs(tr.Span), secs(tr.Need), c)
	default:
		tr.Judgeable = true
		tr.Fires = tr.Longest >= tr.Need
	}
	return tr, nil
}

// splitSpans cuts a series at its gaps into continuous spans.
func splitSpans(s Series) []Series {
	var out []Series
	start := 0
	for i := 1; i <= len(s); i++ {
		if i == len(s) || !continuous(s[i-1], s[i]) {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i
		}
	}
	return out
}

// longestBounded is the longest run of points above c in one continuous
// span that does not fill the whole span.
func longestBounded(sp Series, c float64) time.Duration {
	var best, run time.Duration
	n := 0 // points in the current run
	for _, p := range sp {
		if p.Value > c {
			run += p.Period
			n++
			continue
		}
		best = max(best, run)
		run, n = 0, 0
	}
	if n < len(sp) {
		best = max(best, run)
	}
	return best
}
