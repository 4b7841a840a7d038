package load

import (
	"fmt"
	"math"
	"runtime/metrics"
	"time"
)

// The client-side delay (docs/measurement.md, "Client-side delay") is the
// part of a measured latency that the load generator added itself: when a
// target's answer has arrived, the worker waiting for it still has to be
// run by the Go scheduler, and with more goroutines than processors it
// waits in a run queue behind the others. That wait is charged to the
// target like any other part of the latency. It is measured in place,
// under the run's own concurrency and CPU contention, from the runtime's
// histogram of the time goroutines spent runnable before they ran
// (runtime/metrics "/sched/latencies:seconds"), read at the start and the
// end of the measured phase, so it costs the request path nothing.
//
// Limits: the runtime samples one state change in eight per goroutine; the
// histogram covers every goroutine of the process (the workers are nearly
// all of them, and an in-process target's are the target's own); and it
// starts when the scheduler learns that a socket is readable, so time an
// answer waits before the network poller is consulted, and time the OS
// takes a thread away from the process, are not in it. It is a lower bound
// of the client's share.
const schedLatencies = "/sched/latencies:seconds"

// ClientDelay summarises the scheduler wait of the measured phase.
type ClientDelay struct {
	Samples  uint64        // goroutine wake-ups the runtime sampled
	P50, P99 time.Duration // of those wake-ups' waits for a processor

	// The measured phase's histogram, for Above.
	counts  []uint64
	buckets []float64
}

// Above is how many of the sampled wake-ups waited longer than d (whole
// buckets above d; a bucket that straddles d counts only when its middle,
// the value bucketQuantile reports for it, is above d).
func (c ClientDelay) Above(d time.Duration) uint64 {
	var n uint64
	for i, k := range c.counts {
		if bucketValue(c.buckets, i) > d {
			n += k
		}
	}
	return n
}

// schedSnapshot is the runtime's scheduling-latency histogram at a moment.
type schedSnapshot struct {
	counts  []uint64
	buckets []float64 // len(counts)+1 boundaries, seconds
}

// readSched reads the histogram; nil when the runtime does not provide it.
func readSched() *schedSnapshot {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	h := s[0].Value.Float64Histogram()
	return &schedSnapshot{counts: append([]uint64(nil), h.Counts...), buckets: h.Buckets}
}

// delaySince is the wait distribution between from and to (to later).
func delaySince(from, to *schedSnapshot) ClientDelay {
	if from == nil || to == nil || len(from.counts) != len(to.counts) {
		return ClientDelay{}
	}
	diff := make([]uint64, len(to.counts))
	var n uint64
	for i := range diff {
		if to.counts[i] > from.counts[i] {
			diff[i] = to.counts[i] - from.counts[i]
			n += diff[i]
		}
	}
	if n == 0 {
		return ClientDelay{}
	}
	return ClientDelay{Samples: n, P50: bucketQuantile(diff, to.buckets, n, 0.50), P99: bucketQuantile(diff, to.buckets, n, 0.99),
		counts: diff, buckets: to.buckets}
}

// bucketQuantile is the q-quantile of a bucketed distribution of n values:
// the middle of the bucket that holds it (the runtime's buckets are 1/4 of
// a power of two wide, so the middle is within about 12% of any value in
// it); the lower bound for an open-ended last bucket.
func bucketQuantile(counts []uint64, bounds []float64, n uint64, q float64) time.Duration {
	rank := uint64(math.Ceil(q * float64(n)))
	var seen uint64
	for i, c := range counts {
		seen += c
		if seen < rank || c == 0 {
			continue
		}
		return bucketValue(bounds, i)
	}
	return 0
}

// bucketValue is the value that stands for bucket i of the runtime's
// histogram: its middle, or its lower bound when it is open-ended.
func bucketValue(bounds []float64, i int) time.Duration {
	lo, hi := max(bounds[i], 0), bounds[i+1]
	v := lo
	if !math.IsInf(hi, 1) {
		v = (lo + hi) / 2
	}
	return time.Duration(v * float64(time.Second))
}

// delayShareLimit: the client-side delay is worth a warning when its p-th
// percentile is more than this share of the measured latency's (the same
// tenth as the client-limit verdict's lateness rule, verdict.go).
const delayShareLimit = latenessShare

// minSlowWakeups is how many sampled wake-ups must have waited longer
// than the limit before the note warns. In a short run at a low rate the
// runtime samples about a hundred wake-ups, so their p99 is the second
// slowest, and one or two slow wake-ups of an idle virtual machine's
// processor (a halted vCPU takes a few hundred microseconds to run again)
// would otherwise warn of a client that was not busy at all.
const minSlowWakeups = 5

// delayNote is the warning on a run whose client-side delay is a material
// share of the judged percentile, "" otherwise.
func delayNote(d ClientDelay, f ClientFacts, percentile float64) string {
	h := f.Latency
	if d.Samples == 0 || h == nil || h.TotalCount() == 0 {
		return ""
	}
	p := percentile
	if p <= 0 || p >= 100 {
		p = defaultPercentile
	}
	lat := time.Duration(h.ValueAtQuantile(p)) * time.Microsecond
	limit := time.Duration(delayShareLimit * float64(lat))
	if lat <= 0 || d.P99 <= limit || d.Above(limit) < minSlowWakeups {
		return ""
	}
	return fmt.Sprintf("client-side delay (the load generator's goroutines waiting for a processor) p50 %v, p99 %v, %.0f%% of the measured p%s of %v: part of that percentile is the client's, not the target's",
		roundDelay(d.P50), roundDelay(d.P99), 100*float64(d.P99)/float64(lat), fmtNum(p), roundDelay(lat))
}

// roundDelay keeps three significant figures of a delay for a sentence.
func roundDelay(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= 100*time.Microsecond:
		return d.Round(time.Microsecond)
	case d >= 10*time.Microsecond:
		return d.Round(100 * time.Nanosecond)
	}
	return d.Round(10 * time.Nanosecond)
}
