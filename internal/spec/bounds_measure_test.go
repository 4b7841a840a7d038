package spec_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target/null"
	"github.com/headroom-dev/headroom/internal/testbusy"
	"github.com/headroom-dev/headroom/internal/workload"
)

// slotBytes runs a short closed loop of n clients against the null target
// with records of recordBytes and returns the memory the Go runtime took
// from the system per client (heap and goroutine stacks).
func slotBytes(t *testing.T, n, fieldCount, fieldLength int) float64 {
	t.Helper()
	w, _ := workload.Preset("c")
	w.RecordCount, w.FieldCount, w.FieldLength = 1000, fieldCount, fieldLength
	gen, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := load.Config{Model: "closed", Clients: n, ThinkTime: time.Second, Timeout: time.Second,
		Measure: 200 * time.Millisecond, Interval: 100 * time.Millisecond, Seed: 1, Ops: gen.Config().Ops()}
	runtime.GC()
	var before, peak runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = load.Run(context.Background(), cfg, null.New(null.Options{}), gen, func(load.Tick) error {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse+m.StackInuse > peak.HeapInuse+peak.StackInuse {
			peak = m
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	used := float64(peak.HeapInuse+peak.StackInuse) - float64(before.HeapInuse+before.StackInuse)
	return used / float64(n)
}

// TestSlotMemory measures what one request slot costs (the figure behind
// load.SlotBaseBytes and load.SlotBytes, which validate uses to bound
// max_in_flight and clients): about 10 KB besides the record buffer on
// Go 1.26, amd64. Run with -v to see the figures.
func TestSlotMemory(t *testing.T) {
	for _, c := range []struct{ n, fc, fl int }{{20000, 1, 1}, {20000, 10, 100}, {20000, 10, 1000}} {
		per := slotBytes(t, c.n, c.fc, c.fl)
		want := float64(load.SlotBytes(int64(c.fc * c.fl)))
		t.Logf("%d clients with %d x %d-byte records: %.0f bytes each (bound %.0f)", c.n, c.fc, c.fl, per, want)
		if per > want {
			t.Errorf("a slot with %d-byte records costs %.0f bytes, more than load.SlotBytes' %.0f: raise load.SlotBaseBytes", c.fc*c.fl, per, want)
		}
	}
}

// paceOnNull runs an open loop at rate against the null target for one
// second and returns the requests sent per second and the share dropped or late.
func paceOnNull(t *testing.T, rate float64) (sent, dropped, late float64) {
	t.Helper()
	w, _ := workload.Preset("c")
	w.RecordCount = 1000
	gen, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := load.Config{Model: "open", Schedule: &load.Constant{Rate: rate}, MaxInFlight: 4,
		LateAfter: time.Millisecond, DropAfter: 100 * time.Millisecond, Timeout: time.Second,
		Measure: time.Second, Interval: 500 * time.Millisecond, Seed: 1, Ops: gen.Config().Ops()}
	res, err := load.Run(context.Background(), cfg, null.New(null.Options{}), gen, func(load.Tick) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	m := res.Measured
	total := float64(m.Sent() + m.Dropped)
	return res.SentRate, float64(m.Dropped) / total, float64(m.Late) / total
}

// TestPaceOnNull checks that the engine paces load.MaxRate, the highest
// rate validate accepts, against the null target without dropping more
// than a few of its requests. With -v and HEADROOM_PACE_SWEEP=1 it also
// runs the sweep behind the bound (internal/load/bounds.go).
func TestPaceOnNull(t *testing.T) {
	rates := []float64{load.MaxRate}
	if os.Getenv("HEADROOM_PACE_SWEEP") != "" {
		rates = []float64{1e5, 2e5, 5e5, 1e6, 2e6}
	}
	// The pure tests run in parallel, and a second of pacing at a million
	// requests a second needs a processor of its own: when other tasks
	// waited for one meanwhile, the shortfall is theirs (testbusy).
	idle := testbusy.Start()
	var findings []string
	for _, r := range rates {
		sent, dropped, late := paceOnNull(t, r)
		t.Logf("rate %g/s: sent %.0f/s, %.1f%% dropped, %.1f%% late", r, sent, 100*dropped, 100*late)
		if r == load.MaxRate && (sent < 0.99*r || dropped > 0.05) {
			findings = append(findings, fmt.Sprintf("at load.MaxRate (%g/s) the engine sent %.0f/s and dropped %.1f%%: the bound is above what it can pace", r, sent, 100*dropped))
		}
	}
	idle.Judge(t, findings)
}
