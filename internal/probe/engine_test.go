package probe

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/target/null"
	"github.com/headroom-dev/headroom/internal/workload"
)

func testWorkload(t *testing.T, records int64) workload.Config {
	t.Helper()
	w, err := workload.Preset("c")
	if err != nil {
		t.Fatal(err)
	}
	w.RecordCount = records
	return w
}

// One 1 s window of constant arrivals at 200 req/s against the null target:
// the schedule has exactly 200 requests, each either sent or dropped, and
// the window has one second.
func TestEngineRunnerWindow(t *testing.T) {
	w := testWorkload(t, 100)
	gen, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := &EngineRunner{
		Target: null.New(null.Options{}), Generator: gen, Arrival: "constant", MaxInFlight: 8,
		LateAfter: time.Millisecond, DropAfter: 100 * time.Millisecond, Timeout: time.Second, Seed: 1,
	}
	for k := 0; k < 2; k++ {
		res, err := r.RunWindow(context.Background(), 200, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Seconds) != 1 || res.Interrupted {
			t.Fatalf("seconds %d, interrupted %v", len(res.Seconds), res.Interrupted)
		}
		s := res.Seconds[0]
		if s.Completed+s.Errors+s.Dropped != 200 || s.Errors != 0 || s.Hist.TotalCount() != s.Completed {
			t.Fatalf("window %d: completed %d errors %d dropped %d hist %d", k, s.Completed, s.Errors, s.Dropped, s.Hist.TotalCount())
		}
		if res.Offered != float64(s.Completed) || res.Start.IsZero() {
			t.Fatalf("offered %v for %d sent", res.Offered, s.Completed)
		}
	}
	if _, err := r.RunWindow(context.Background(), 200, 1500*time.Millisecond); err == nil {
		t.Fatal("a window of 1.5 s was accepted")
	}
}

func TestEngineRunnerInterrupted(t *testing.T) {
	gen, _ := workload.New(testWorkload(t, 100), 1)
	r := &EngineRunner{
		Target: null.New(null.Options{}), Generator: gen, Arrival: "poisson", MaxInFlight: 8,
		LateAfter: time.Millisecond, DropAfter: 100 * time.Millisecond, Timeout: time.Second,
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := r.RunWindow(ctx, 100, 5*time.Second)
	if err != nil || !res.Interrupted || len(res.Seconds) != 5 {
		t.Fatalf("%v %+v", err, res)
	}
}
