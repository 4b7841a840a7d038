package monitor

import (
	"sync"
	"testing"
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

// Samples are labelled with the boundaries of the engine's clock and taken
// close to them.
func TestRunnerAlignsWithOrigin(t *testing.T) {
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
	if len(got) < 4 || len(got) > 5 {
		t.Fatalf("%d samples in 550 ms at 100 ms", len(got))
	}
	for i, s := range got {
		if want := origin.Add(time.Duration(i) * 100 * time.Millisecond); !s.Start.Equal(want) || s.Period != 100*time.Millisecond {
			t.Fatalf("sample %d starts %v (period %v), want %v", i, s.Start.Sub(origin), s.Period, want.Sub(origin))
		}
	}
	// Each call is taken for its own boundary: not before it, and before
	// the next one. How soon after it is the machine's timer latency, not
	// the runner's alignment (in one CI run a call came 56 ms late).
	for i, at := range src.calls[1:] {
		boundary := origin.Add(time.Duration(i+1) * 100 * time.Millisecond)
		if d := at.Sub(boundary); d < 0 || d >= 100*time.Millisecond {
			t.Fatalf("call %d taken %v after its boundary, want within its 100 ms interval", i+1, d)
		}
	}
}

// When a slow sink makes the runner skip boundaries, the next sample says
// that it covers all the skipped intervals (review finding: it was labelled
// as the last interval only).
func TestRunnerLabelsSkippedIntervals(t *testing.T) {
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
	if len(got) < 2 {
		t.Fatalf("%d samples", len(got))
	}
	// Samples tile the time since origin without gaps or overlaps.
	next := origin
	for i, s := range got {
		if !s.Start.Equal(next) || s.Period <= 0 || s.Period%(100*time.Millisecond) != 0 {
			t.Fatalf("sample %d covers [%v, +%v), want it to start at %v", i, s.Start.Sub(origin), s.Period, next.Sub(origin))
		}
		next = s.Start.Add(s.Period)
	}
	if got[1].Period < 200*time.Millisecond {
		t.Fatalf("the sample after the slow sink covers %v; it must cover the skipped intervals", got[1].Period)
	}
}
