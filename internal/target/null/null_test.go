package null

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/workload"
)

// A simulated server never answers before its service time, whole
// milliseconds or not (how much later depends on the machine; the cli's
// compare test checks end to end that 1.0 and 1.1 ms differ by about
// 10%, where timers alone made them differ by 80%).
func TestServiceTimeIsNeverShort(t *testing.T) {
	for _, d := range []time.Duration{300 * time.Microsecond, time.Millisecond, 1100 * time.Microsecond, 2500 * time.Microsecond} {
		tg := New(Options{ServiceTime: spec.Duration{Duration: d}})
		c, err := tg.NewClient(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		op := &workload.Op{Type: workload.Read}
		for range 20 {
			start := time.Now()
			if err := c.Do(context.Background(), op); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < d {
				t.Fatalf("service time %v: a request was answered after %v", d, took)
			}
		}
	}
}

// A request is cancelled while it waits on the timer (all but the last
// millisecond or two of its service time).
func TestServiceTimeCancelled(t *testing.T) {
	tg := New(Options{ServiceTime: spec.Duration{Duration: time.Hour}})
	c, err := tg.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if err := c.Do(ctx, &workload.Op{Type: workload.Read}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
}
