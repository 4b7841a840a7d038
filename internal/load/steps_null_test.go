package load_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target/null"
	"github.com/headroom-dev/headroom/internal/workload"
)

// A real open-loop run against the null target with a steps schedule: the
// achieved rate of each 500 ms interval follows the steps, including a
// pause with nothing sent, and every intended request is accounted for.
func TestStepsRunFollowsSteps(t *testing.T) {
	w, err := workload.Preset("c")
	if err != nil {
		t.Fatal(err)
	}
	w.RecordCount = 1000
	gen, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	// 200/s for 1 s, 600/s for 1 s, nothing for 1.25 s, then 300/s: the
	// pause ends inside an interval, so no arrival sits on the boundary of
	// the quiet intervals.
	sched := &load.Steps{Spacing: load.Even, Steps: []load.Step{
		{Rate: 200, For: time.Second}, {Rate: 600, For: time.Second}, {Rate: 0, For: 1250 * time.Millisecond}, {Rate: 300, For: 750 * time.Millisecond},
	}}
	cfg := load.Config{
		Model: "open", Schedule: sched, MaxInFlight: 16,
		LateAfter: time.Millisecond, DropAfter: 100 * time.Millisecond, Timeout: time.Second,
		Measure: 4 * time.Second, Interval: 500 * time.Millisecond, Seed: 1, Ops: gen.Config().Ops(),
	}
	counts := map[int64]int64{}
	start := time.Now()
	res, err := load.Run(context.Background(), cfg, null.New(null.Options{}), gen, func(tk load.Tick) error {
		for _, o := range tk.Stats {
			counts[tk.Index] += o.Count + o.Dropped
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 4*time.Second {
		t.Fatalf("the run took %v, less than its 4 s", took)
	}
	// Expected per interval: rate x 0.5 s, with the pause covering
	// [2 s, 3.25 s) and the 300/s step [3.25 s, 4 s).
	want := []int64{100, 100, 300, 300, 0, 0, 75, 150}
	for i, n := range want {
		got := counts[int64(i)]
		// A request due on an interval boundary may start up to 20 µs
		// early and complete in the interval before, or complete late in
		// the one after (a CI rehearsal of 2026-12-07 counted the 600/s
		// step's last arrival in the first quiet interval): one either
		// way. An interval whose predecessor was quiet too has none.
		if n == 0 && i > 0 && want[i-1] == 0 && got != 0 || math.Abs(float64(got-n)) > 1 {
			t.Errorf("interval %d: %d requests (%.0f/s), want %d (%.0f/s)", i, got, float64(got)/0.5, n, float64(n)/0.5)
		}
	}
	m := res.Measured
	if total := m.Sent() + m.Dropped; total != 1025 || m.Errors != 0 {
		t.Fatalf("sent+dropped %d (errors %d), want the 1025 arrivals the steps intend", total, m.Errors)
	}
	if res.TargetRate != 1025/4.0 {
		t.Fatalf("target rate %v, want the mean 256.25/s", res.TargetRate)
	}
}
