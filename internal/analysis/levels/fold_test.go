package levels

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// boundedRun is n intervals of 100 ms from t0, two operation types each:
// interval i has 10 reads of (i%7+1) ms and 10 updates of 2 ms, except
// interval stall, whose reads took 10 s.
func boundedRun(n, stall int) (store.Run, []store.Interval, func(i int) []int64) {
	t0 := time.Unix(1_700_000_000, 0)
	iv := 100 * time.Millisecond
	run := store.Run{ID: 1}
	run.Summary.MeasureStart, run.Summary.MeasureEnd = t0, t0.Add(time.Duration(n)*iv)
	values := func(i int) []int64 {
		read := int64(i%7+1) * 1000
		if i == stall {
			read = 10_000_000
		}
		var v []int64
		for range 10 {
			v = append(v, read, 2000)
		}
		return v
	}
	var ivs []store.Interval
	for i := range n {
		for _, op := range []string{"read", "update"} {
			h := store.NewHistogram()
			for k, v := range values(i) {
				if (k%2 == 0) == (op == "read") {
					_ = h.RecordValue(v)
				}
			}
			ivs = append(ivs, store.Interval{RunID: 1, Phase: "measure", Op: op, Start: t0.Add(time.Duration(i) * iv), Duration: iv, Count: 10, Hist: h})
		}
	}
	return run, ivs, values
}

// p99Of is F^-1(0.99) of xs by sorting: the value at rank ⌈0.99 n⌉.
func p99Of(xs []int64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(math.Ceil(0.99*float64(len(s))))-1]
}

// A bounded fold of a run with five times more intervals than points
// keeps the points it was given, each merging five consecutive intervals
// whose p99 is that of their requests together (checked by sorting them,
// within the histogram's precision), and a 10-second stall in one
// interval still shows as its point's highest interval p99.
func TestBoundedFoldMergesIntervalsIntoBuckets(t *testing.T) {
	const n, max, stall = 5_000, 1000, 2_503
	run, ivs, values := boundedRun(n, stall)
	f := NewFolder(run, &SLO{Percentile: 99, Threshold: 50 * time.Millisecond})
	f.BoundPoints(max)
	for i := range ivs {
		f.Add(&ivs[i])
	}
	rd := f.Done()
	if len(rd.Points) != max || rd.Outside != 0 {
		t.Fatalf("%d points (%d outside), want %d", len(rd.Points), rd.Outside, max)
	}
	var count int64
	for k, p := range rd.Points {
		count += p.Count
		if p.Intervals != 5 || p.Duration != 500*time.Millisecond || p.Count != 100 {
			t.Fatalf("point %d: %d intervals over %v with %d requests, want 5 over 500ms with 100", k, p.Intervals, p.Duration, p.Count)
		}
		var xs []int64
		for i := 5 * k; i < 5*k+5; i++ {
			xs = append(xs, values(i)...)
		}
		if want := p99Of(xs); !store.NewHistogram().ValuesAreEquivalent(int64(p.P99), want) {
			t.Errorf("point %d: p99 %.0f µs, want %d (its intervals' requests together)", k, p.P99, want)
		}
		if p.MinRate != 200 || p.MaxRate != 200 {
			t.Errorf("point %d: interval rates %v to %v ok/s, want 200", k, p.MinRate, p.MaxRate)
		}
		stalled := k == stall/5
		if stalled != (p.MaxP99 > 9e6) || stalled != (p.Missed == 1) {
			t.Errorf("point %d: highest interval p99 %.0f µs, %d intervals missed the SLO; the stall is in point %d", k, p.MaxP99, p.Missed, stall/5)
		}
	}
	if count != 20*n || rd.Latencies["all"].TotalCount() != 20*n || rd.Offered["all"] != 20*n {
		t.Errorf("points hold %d requests, the run's histogram %d, offered %d; want %d", count, rd.Latencies["all"].TotalCount(), rd.Offered["all"], 20*n)
	}
}

// With no more intervals than points, a bounded fold keeps one point per
// interval, equal to what the unbounded fold gives.
func TestBoundedFoldOfAShortRunKeepsEveryInterval(t *testing.T) {
	run, ivs, _ := boundedRun(300, 100)
	slo := &SLO{Percentile: 99, Threshold: 50 * time.Millisecond}
	want := Fold(run, ivs, slo).Points
	f := NewFolder(run, slo)
	f.BoundPoints(300)
	for i := range ivs {
		f.Add(&ivs[i])
	}
	got := f.Done().Points
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.Start.Equal(w.Start) || g.Duration != w.Duration || g.Count != w.Count || g.P99 != w.P99 || g.Within != w.Within || g.Missed != w.Missed || g.Intervals != 1 {
			t.Fatalf("point %d: bounded %+v, unbounded %+v", i, g, w)
		}
	}
}

// An interval whose start a damaged store moved by 2^50 ns (13 days) is
// counted in the run's totals but not placed on the time axis: the points
// stay within the measured phase and bounded (it once made a report draw
// a heat map of 11 million columns).
func TestBoundedFoldLeavesOutAnIntervalOutsideTheRun(t *testing.T) {
	run, ivs, _ := boundedRun(50, -1)
	for i := range ivs[40:42] {
		ivs[40+i].Start = ivs[40+i].Start.Add(1 << 50)
	}
	f := NewFolder(run, nil)
	f.BoundPoints(0)
	for i := range ivs {
		f.Add(&ivs[i])
	}
	rd := f.Done()
	if rd.Outside != 1 || len(rd.Points) != 49 || rd.Latencies["all"].TotalCount() != 1000 {
		t.Errorf("%d outside, %d points, %d requests; want 1, 49 and all 1000 in the totals", rd.Outside, len(rd.Points), rd.Latencies["all"].TotalCount())
	}
	for _, p := range rd.Points {
		if p.Start.After(run.Summary.MeasureEnd) {
			t.Errorf("a point at %v, after the run's end %v", p.Start, run.Summary.MeasureEnd)
		}
	}
}
