// Package stall judges a closed-loop run for stalls and corrects its
// latency percentiles for coordinated omission (seed-digest §1).
//
// In a closed loop every client waits for its answer before it sends the
// next request, so when the target stands still for a second each client
// records one slow request instead of the second's worth it would have
// sent at its pace: the percentiles understate what an arrival during the
// stall would have met. The load engine records the periods in which no
// request completed (internal/load/stall.go); this package calls the long
// ones stalls and reports the stalled share of the measured time, the
// longest stall and the requests that waited through them. Beside the
// measured percentiles it gives the percentiles corrected for the intended
// pace, as HdrHistogram's corrected recording does: a latency v longer than
// the expected interval E also counts the requests the client would have
// sent meanwhile, with latencies v-E, v-2E, ... down to E.
//
// Open-loop runs need neither: their latency is measured from the intended
// start time, so a stall is already in it.
//
// Analyse is the pure core; FromResults reads its inputs from a results
// model.
package stall

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	// StallPaces: a quiet period is a stall when it lasts at least this
	// many paces. A client whose latency is merely variable also has quiet
	// periods, but for all clients to be silent at once for 10 of their own
	// paces needs each of them to be that slow together: with exponential
	// think times even a single client does so for e^-10 (0.005%) of its
	// requests, while a target that stands still does it at every stall.
	StallPaces = 10
	// MinStall: shorter quiet periods are not called stalls whatever the
	// pace. Below a millisecond the client's own pauses (garbage
	// collection, the scheduler's and the timer's slack) are as likely a
	// cause as the target, and the corrected percentiles still carry
	// them.
	MinStall = time.Millisecond
	// MaterialShare: the finding says the closed loop understates when the
	// stalls cover at least this share of the measured time, or when the
	// correction moves p99 by more than MaterialP99.
	MaterialShare = 0.01
	MaterialP99   = 0.10
)

// Period is a period of the measured phase in which no request completed;
// Waiting clients had a request in flight during it.
type Period struct {
	Start, End time.Time
	Waiting    int
}

// Len is the period's length.
func (p Period) Len() time.Duration { return p.End.Sub(p.Start) }

// Watch is what the engine's stall watch recorded for one run.
type Watch struct {
	Clients int           // clients watched
	Left    int           // clients whose silences were read (the rest were still in a request at the end)
	Floor   time.Duration // every quiet period at least this long is listed
	Periods []Period
}

// Input is one closed-loop run.
type Input struct {
	From, To time.Time               // the measured phase
	Latency  *hdrhistogram.Histogram // successful requests of the measured phase, all operations, µs
	Clients  int                     // the run's clients
	// Requests counts the measured phase's requests that completed or
	// failed (0: the histogram's count).
	Requests  int64
	ThinkTime time.Duration // the clients' mean think time
	Watch     *Watch        // nil when the run has no stall watch
}

// Percentiles are the latency percentiles of one distribution.
type Percentiles struct {
	P50, P90, P99, P999, Max time.Duration
}

// Result is the judgement of one closed-loop run.
type Result struct {
	// Pace is the expected interval E between one client's requests when
	// it is not stalled: the pace the clients kept outside the stalls,
	// clients x (measured time - stalled time) / (requests - requests that
	// waited through stalls). It includes the think time. Every client of a
	// run has the same workload, target and think time, so one pace serves
	// them all. The corrected percentiles then describe an open loop at the
	// throughput the clients achieved while the target was not stalled;
	// HdrHistogram's usual median latency would imply a higher rate than
	// was achieved whenever latency is skewed (the correction would add up
	// to mean/median times as many requests as were measured). Without the
	// run's clients or measured time the pace is the median latency plus
	// the mean think time.
	Pace time.Duration
	// Threshold is the shortest quiet period called a stall: StallPaces
	// paces, at least MinStall, and at least the watch's floor (below it
	// the engine's record is not complete).
	Threshold time.Duration
	Watched   bool     // the run has a stall watch; the stall figures below are zero without one
	Unread    int      // clients still in a request at the end, whose silences the watch could not read
	Stalls    []Period // the quiet periods at least Threshold long
	Stalled   time.Duration
	Share     float64       // Stalled over the measured time
	Longest   time.Duration // the longest stall
	Waited    int           // requests that waited through a stall (one per waiting client and stall)
	Measured  Percentiles
	// Corrected are the percentiles corrected for coordinated omission
	// with Pace as the expected interval (Correct).
	Corrected Percentiles
	Requests  int64 // successful requests measured
	Phantoms  int64 // requests the correction adds
}

// Understates reports whether the closed loop's percentiles understate
// materially: the stalls cover MaterialShare of the measured time, or the
// correction raises p99 by more than MaterialP99.
func (r Result) Understates() bool {
	if len(r.Stalls) == 0 {
		return false
	}
	return r.Share >= MaterialShare || float64(r.Corrected.P99) > (1+MaterialP99)*float64(r.Measured.P99)
}

// Analyse judges one closed-loop run.
func Analyse(in Input) Result {
	var res Result
	if in.Latency == nil || in.Latency.TotalCount() == 0 {
		return res
	}
	res.Requests = in.Latency.TotalCount()
	res.Measured = percentiles(in.Latency)
	span := in.To.Sub(in.From)
	n := in.Requests
	if n <= 0 {
		n = res.Requests
	}
	pace := func(stalled time.Duration, waited int) time.Duration {
		if in.Clients <= 0 || span <= 0 {
			return time.Duration(in.Latency.ValueAtQuantile(50))*time.Microsecond + in.ThinkTime
		}
		k := n - int64(waited)
		if k <= 0 {
			k = n
		}
		// In whole µs, the histograms' unit.
		return max(time.Duration(float64(in.Clients)*float64(span-stalled)/float64(k)).Round(time.Microsecond), time.Microsecond)
	}
	res.Pace = pace(0, 0)
	res.Threshold = max(StallPaces*res.Pace, MinStall)
	if in.Watch != nil {
		res.Watched = true
		res.Unread = in.Watch.Clients - in.Watch.Left
		// The pace outside the stalls depends on the stalls and they on
		// it: start from the pace over the whole phase (the slowest) and
		// repeat. Each round can only shorten the pace and add stalls, so
		// it settles within as many rounds as there are quiet periods;
		// a few suffice in practice.
		for range 20 {
			res.Threshold = max(StallPaces*res.Pace, MinStall, in.Watch.Floor)
			res.judge(in)
			next := pace(res.Stalled, res.Waited)
			if next >= res.Pace {
				break
			}
			res.Pace = next
		}
		res.Threshold = max(StallPaces*res.Pace, MinStall, in.Watch.Floor)
		res.judge(in)
		if span > 0 {
			res.Share = float64(res.Stalled) / float64(span)
		}
	}
	corr := Correct(in.Latency, res.Pace)
	res.Corrected = percentiles(corr)
	res.Phantoms = corr.TotalCount() - res.Requests
	return res
}

// judge collects the watch's quiet periods at least res.Threshold long,
// clipped to the measured phase (the engine already clips; a watch from
// elsewhere may not).
func (res *Result) judge(in Input) {
	res.Stalls, res.Stalled, res.Longest, res.Waited = nil, 0, 0, 0
	for _, p := range in.Watch.Periods {
		if p.Start.Before(in.From) {
			p.Start = in.From
		}
		if p.End.After(in.To) {
			p.End = in.To
		}
		if p.Len() < res.Threshold {
			continue
		}
		res.Stalls = append(res.Stalls, p)
		res.Stalled += p.Len()
		res.Longest = max(res.Longest, p.Len())
		res.Waited += p.Waiting
	}
}

func percentiles(h *hdrhistogram.Histogram) Percentiles {
	at := func(q float64) time.Duration { return time.Duration(h.ValueAtQuantile(q)) * time.Microsecond }
	return Percentiles{P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), Max: time.Duration(h.Max()) * time.Microsecond}
}

// Correct returns a copy of h (latencies in µs) corrected for coordinated
// omission with expected interval e: every recorded latency v > e also
// records v-e, v-2e, ... while the value stays at least e, as
// HdrHistogram's RecordCorrectedValue does at record time. Correcting the
// merged histogram afterwards gives the same counts because one e serves
// every client of the run.
//
// A recorded value stands for its bucket; its midpoint is used. The
// requests a long latency adds are recorded in groups that span at most a
// 1/1024 of their value (below the histogram's resolution of three
// significant digits), so that a 60 s latency with a 1 µs pace costs
// thousands of steps, not millions.
func Correct(h *hdrhistogram.Histogram, e time.Duration) *hdrhistogram.Histogram {
	out := h.Clone()
	step := max(e.Microseconds(), 1)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := (b.From + b.To) / 2
		for missing := v - step; missing >= step; {
			// k requests v-jE, ..., spaced step apart, recorded at their mean.
			k := max(1, missing/1024/step)
			k = min(k, (missing-step)/step+1)
			_ = out.RecordValues(missing-(k-1)*step/2, k*b.Count) // within range: below v
			missing -= k * step
		}
	}
	return out
}
