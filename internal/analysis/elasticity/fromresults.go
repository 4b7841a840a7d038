package elasticity

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// Run is the elasticity of one completed run with node changes.
type Run struct {
	Treatment results.Treatment
	Run       results.Run
	// Origin is the start of the measured phase; the report's timeline
	// counts from it.
	Origin time.Time
	Input  Input
	SLO    *results.SLO
	Result Result
	// Skipped counts intervals left out of the timeline: partial ones
	// shorter than half the nominal interval.
	Skipped int
	// Problem is why the run could not be judged; Result is then empty.
	Problem error
}

// FromResults judges every completed run that recorded node changes, in
// campaign order. The timeline is the measured phase's intervals, every
// operation type together: throughput = successful requests per second,
// p99 = F^-1(0.99) of their merged histogram (seed-digest §1), and the
// SLO rule of the treatment judged per interval. The error is a failure
// to read the results; a run the analysis cannot judge carries Problem.
func FromResults(r *results.Results, cfg Config) ([]Run, error) {
	all, err := r.AllNodeChanges()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	var out []Run
	for _, run := range r.AllCompletedRuns() {
		chs := all[run.ID]
		if len(chs) == 0 {
			continue
		}
		t, _ := r.Treatment(run.Treatment)
		ivs, err := r.Intervals(run.ID, "measure")
		if err != nil {
			return nil, err
		}
		x := Run{Treatment: t, Run: run, Origin: run.Summary.MeasureStart, SLO: t.SLO}
		if x.Origin.IsZero() && len(ivs) > 0 {
			x.Origin = ivs[0].Start
		}
		x.Input.Points, x.Skipped = Timeline(ivs, t.SLO, t.Load.Interval)
		x.Input.HasSLO = t.SLO != nil
		if t.Load.Open() {
			x.Input.Offered = run.Level
		}
		for _, c := range chs {
			x.Input.Changes = append(x.Input.Changes, Change{Action: c.Action, Node: c.Node, Host: c.Host, Delta: c.Delta(),
				Requested: c.Requested, Started: c.Started, Done: c.Done, BytesStreamed: c.BytesStreamed, Error: c.Error})
		}
		x.Result, x.Problem = Analyze(x.Input, cfg)
		out = append(out, x)
	}
	return out, nil
}

// Timeline folds a run's intervals (one row per operation type) into one
// point per interval. Intervals shorter than half of nominal (the partial
// one that may end a run) are left out and counted; nominal 0 takes the
// longest interval.
func Timeline(ivs []store.Interval, slo *results.SLO, nominal time.Duration) ([]Point, int) {
	if nominal == 0 {
		for _, iv := range ivs {
			nominal = max(nominal, iv.Duration)
		}
	}
	var out []Point
	short := 0
	merged := store.NewHistogram()
	for i := 0; i < len(ivs); {
		start := ivs[i].Start
		var count, offered, due int64
		var dur time.Duration
		var sloHist *hdrhistogram.Histogram
		merged.Reset()
		have := false
		for ; i < len(ivs) && ivs[i].Start.Equal(start); i++ {
			iv := ivs[i]
			count += iv.Count
			due += iv.Count + iv.Errors + iv.Dropped
			dur = max(dur, iv.Duration)
			if iv.Hist != nil && iv.Hist.TotalCount() > 0 {
				merged.Merge(iv.Hist)
				have = true
			}
			if slo != nil && (slo.Op == "" || slo.Op == iv.Op) {
				offered += iv.Count + iv.Errors + iv.Dropped
				if slo.Op != "" {
					sloHist = iv.Hist
				}
			}
		}
		if dur < nominal/2 || dur <= 0 {
			short++
			continue
		}
		p := Point{Start: start, Dur: dur, Throughput: float64(count) / dur.Seconds(), P99: math.NaN(), Offered: float64(due) / dur.Seconds()}
		if have {
			p.P99 = float64(merged.ValueAtQuantile(99))
		}
		if slo != nil && slo.Op == "" && have {
			sloHist = merged
		}
		// The load-response table's SLO rule, per interval: fewer than
		// Percentile % of the offered requests (completed, failed or
		// dropped) succeeded within the threshold.
		if slo != nil && offered > 0 {
			var within int64
			if sloHist != nil {
				within = countAtMost(sloHist, slo.Threshold.Microseconds())
			}
			p.SLOMiss = float64(within)/float64(offered) < slo.Percentile/100
		}
		out = append(out, p)
	}
	return out, short
}

// countAtMost counts recorded values no greater than limit (µs), a bucket
// only when all of it is within the limit, as the levels analysis does,
// so that histogram precision never makes an SLO look met.
func countAtMost(h *hdrhistogram.Histogram, limit int64) int64 {
	if h.Max() <= limit {
		return h.TotalCount()
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.Count > 0 && b.To <= limit {
			n += b.Count
		}
	}
	return n
}
