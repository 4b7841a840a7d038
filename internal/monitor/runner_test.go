package monitor

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type countingSource struct {
	mu    sync.Mutex
	calls []time.Time
}

func (c *countingSource) Sample(at time.Time) ([]Sample, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, at)
	if len(c.calls) == 1 {
		return nil, nil
	}
	return []Sample{{Host: "h", Resource: "cpu", Metric: CPUUtilPct, Value: float64(len(c.calls)), Source: SourceSampled}}, nil
}

// The runner tests run in a synctest bubble: its clock advances only when
// every goroutine waits, so a timer fires exactly when it is due and what is
// checked is the runner's own scheduling, not how late this machine wakes.

// Samples are labelled with the boundaries of the engine's clock and taken
// on them.
func TestRunnerAlignsWithOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &countingSource{}
		var got []Sample
		var mu sync.Mutex
		r := NewRunner(src, 100*time.Millisecond, func(s []Sample) error {
			mu.Lock()
			got = append(got, s...)
			mu.Unlock()
			return nil
		})
		origin := time.Now()
		r.Start(origin)
		time.Sleep(550 * time.Millisecond)
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		// Boundaries 100..500 ms passed; the interval in progress at the
		// stop is not sampled.
		if len(got) != 5 || len(src.calls) != 6 {
			t.Fatalf("%d samples from %d calls in 550 ms at 100 ms, want 5 from 6 (one priming)", len(got), len(src.calls))
		}
		for i, s := range got {
			if want := origin.Add(time.Duration(i) * 100 * time.Millisecond); !s.Start.Equal(want) || s.Period != 100*time.Millisecond {
				t.Fatalf("sample %d starts %v (period %v), want %v", i, s.Start.Sub(origin), s.Period, want.Sub(origin))
			}
		}
		// The priming call is made at the start, and each later call at its
		// own boundary.
		for i, at := range src.calls {
			if boundary := origin.Add(time.Duration(i) * 100 * time.Millisecond); !at.Equal(boundary) {
				t.Fatalf("call %d taken at %v, want its boundary %v", i, at.Sub(origin), boundary.Sub(origin))
			}
		}
	})
}

// When a slow sink makes the runner skip boundaries, the next sample says
// that it covers all the skipped intervals (review finding: it was labelled
// as the last interval only).
func TestRunnerLabelsSkippedIntervals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &countingSource{}
		var got []Sample
		var mu sync.Mutex
		first := true
		r := NewRunner(src, 100*time.Millisecond, func(s []Sample) error {
			mu.Lock()
			got = append(got, s...)
			mu.Unlock()
			if first {
				first = false
				time.Sleep(250 * time.Millisecond)
			}
			return nil
		})
		origin := time.Now()
		r.Start(origin)
		time.Sleep(650 * time.Millisecond)
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		// The sink returns at 350 ms, past the 200 and 300 ms boundaries:
		// the next sample is taken at 400 ms and covers [100, 400) ms.
		want := []time.Duration{100, 300, 100, 100}
		if len(got) != len(want) {
			t.Fatalf("%d samples, want %d", len(got), len(want))
		}
		// Samples tile the time since origin without gaps or overlaps.
		next := origin
		for i, s := range got {
			if !s.Start.Equal(next) || s.Period != want[i]*time.Millisecond {
				t.Fatalf("sample %d covers [%v, +%v), want [%v, +%v)", i, s.Start.Sub(origin), s.Period, next.Sub(origin), want[i]*time.Millisecond)
			}
			next = s.Start.Add(s.Period)
		}
	})
}
