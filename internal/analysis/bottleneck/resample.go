package bottleneck

import (
	"fmt"
	"math"
	"time"
)

// Window is the observation period (003's Lambda, the run's measured
// window): [From, To). A zero Window means the span of the data.
type Window struct {
	From, To time.Time
}

// periodSlack lets a sample be slightly longer than lambda (timer jitter of
// a 1 s sampler) before it counts as too coarse.
const periodSlack = 1.1

// maxIntervals bounds the grid (a week of 1 s intervals is 604,800), so a
// mistaken window cannot exhaust memory.
const maxIntervals = 10_000_000

// grid is a set of series aggregated to the intervals of one window:
// util[r][c] is resource r's utilisation in interval c, NaN when it was not
// observed.
type grid struct {
	from      time.Time
	lambda    time.Duration
	n         int // intervals
	resources []string
	util      [][]float64
}

func (g grid) intervals() int { return g.n }

// Resample aggregates each series to the intervals [From + k*lambda,
// From + (k+1)*lambda) that fit wholly in the window (seed-digest §6: the
// saturation verdict is per interval of length lambda). An interval's value
// is the mean of the overlapping points weighted by their overlap; an
// interval counts as observed when points cover at least half of it, and
// the returned series hold only observed intervals. A point longer than
// lambda (by more than 10% for timer jitter) is an error, since it cannot
// show saturation within a shorter interval.
func Resample(series []Series, w Window, lambda time.Duration) ([]Series, error) {
	g, err := resample(series, w, lambda)
	if err != nil {
		return nil, err
	}
	out := make([]Series, len(g.resources))
	for r, id := range g.resources {
		out[r].Resource = id
		for c, u := range g.util[r] {
			if !math.IsNaN(u) {
				out[r].Points = append(out[r].Points, Point{Start: g.from.Add(time.Duration(c) * lambda), Period: lambda, Util: u})
			}
		}
	}
	return out, nil
}

func resample(series []Series, w Window, lambda time.Duration) (grid, error) {
	if lambda <= 0 {
		return grid{}, fmt.Errorf("bottleneck: lambda %v is not positive; give an interval length such as 1s", lambda)
	}
	if w.From.IsZero() && w.To.IsZero() {
		w = span(series)
	}
	if w.From.IsZero() != w.To.IsZero() {
		return grid{}, fmt.Errorf("bottleneck: the window has only one end; give both From and To, or neither to use the span of the data")
	}
	if !w.To.After(w.From) {
		return grid{}, fmt.Errorf("bottleneck: the window [%s, %s) is empty; give a window whose end is after its start",
			w.From.Format(time.RFC3339Nano), w.To.Format(time.RFC3339Nano))
	}
	n := int(w.To.Sub(w.From) / lambda)
	if n > maxIntervals {
		return grid{}, fmt.Errorf("bottleneck: the window of %v holds more than %d intervals of %v; use a longer lambda or a shorter window", w.To.Sub(w.From), maxIntervals, lambda)
	}
	if n == 0 {
		return grid{}, fmt.Errorf("bottleneck: the window of %v is shorter than lambda %v; use a longer run or a shorter lambda", w.To.Sub(w.From), lambda)
	}
	g := grid{from: w.From, lambda: lambda, n: n, resources: make([]string, len(series)), util: make([][]float64, len(series))}
	for r, s := range series {
		g.resources[r] = s.Resource
		sum := make([]float64, n)
		cov := make([]time.Duration, n)
		for _, p := range s.Points {
			if float64(p.Period) > periodSlack*float64(lambda) {
				return grid{}, fmt.Errorf("bottleneck: %s has samples of %v, longer than lambda %v; set lambda to at least %v",
					s.Resource, p.Period, lambda, p.Period)
			}
			if p.Period <= 0 {
				return grid{}, fmt.Errorf("bottleneck: %s has a point at %s with period %v; give every point the positive length of its interval",
					s.Resource, p.Start.Format(time.RFC3339Nano), p.Period)
			}
			if math.IsNaN(p.Util) || math.IsInf(p.Util, 0) {
				continue
			}
			start := p.Start.Sub(w.From)
			end := start + p.Period
			first := max(int(floorDiv(start, lambda)), 0)
			for c := first; c < n && time.Duration(c)*lambda < end; c++ {
				lo := max(start, time.Duration(c)*lambda)
				hi := min(end, time.Duration(c+1)*lambda)
				if hi <= lo {
					continue
				}
				sum[c] += p.Util * float64(hi-lo)
				cov[c] += hi - lo
			}
		}
		g.util[r] = make([]float64, n)
		for c := range n {
			if 2*cov[c] >= lambda {
				g.util[r][c] = sum[c] / float64(cov[c])
			} else {
				g.util[r][c] = math.NaN()
			}
		}
	}
	return g, nil
}

// span is the smallest window holding every point.
func span(series []Series) Window {
	var w Window
	for _, s := range series {
		for _, p := range s.Points {
			if w.From.IsZero() || p.Start.Before(w.From) {
				w.From = p.Start
			}
			if end := p.Start.Add(p.Period); end.After(w.To) {
				w.To = end
			}
		}
	}
	return w
}

// floorDiv is floor(a / b) for durations, b > 0.
func floorDiv(a, b time.Duration) time.Duration {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
