package load_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/null"
	"github.com/headroom-dev/headroom/internal/workload"
)

// tick is one interval as a test keeps it: its counts summed over the
// operations (the histograms are the engine's and are not kept).
type tick struct {
	index                                  int64
	start, duration                        time.Duration
	phase                                  load.Phase
	count, errors, late, dropped, timeouts int64
}

// timedRun runs cfg and returns the result, the intervals and how long the
// run took. A run still going `planned + 5 s` after it started is
// cancelled and the test fails: the run did not end on time.
func timedRun(t *testing.T, cfg load.Config, tgt target.Target, gen *workload.Generator) (load.Result, []tick, time.Duration) {
	t.Helper()
	planned := cfg.Warmup + cfg.Measure
	ctx, cancel := context.WithTimeout(context.Background(), planned+5*time.Second)
	defer cancel()
	var ticks []tick
	start := time.Now()
	res, err := load.Run(ctx, cfg, tgt, gen, func(tk load.Tick) error {
		k := tick{index: tk.Index, start: tk.Start, duration: tk.Duration, phase: tk.Phase}
		for _, o := range tk.Stats {
			k.count += o.Count
			k.errors += o.Errors
			k.late += o.Late
			k.dropped += o.Dropped
			k.timeouts += o.ErrorKinds["timeout"]
		}
		ticks = append(ticks, k)
		return nil
	})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run of %v was still going after %v and had to be cancelled", planned, took.Round(time.Millisecond))
	}
	return res, ticks, took
}

func readGenerator(t *testing.T) *workload.Generator {
	t.Helper()
	w, err := workload.Preset("c")
	if err != nil {
		t.Fatal(err)
	}
	w.RecordCount = 1000
	g, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func openRun(s load.Schedule, warmup, measure, interval time.Duration, gen *workload.Generator) load.Config {
	return load.Config{
		Model: "open", Schedule: s, MaxInFlight: 16,
		LateAfter: time.Millisecond, DropAfter: 100 * time.Millisecond, Timeout: time.Second,
		Warmup: warmup, Measure: measure, Interval: interval, Seed: 1, Ops: gen.Config().Ops(),
	}
}

// checkLength fails unless the run lasted its planned time (within slack
// after it) and its intervals cover exactly the planned time, each once.
func checkLength(t *testing.T, cfg load.Config, ticks []tick, took, slack time.Duration) {
	t.Helper()
	planned := cfg.Warmup + cfg.Measure
	if took < planned || took > planned+slack {
		t.Errorf("the run took %v; planned %v", took.Round(time.Millisecond), planned)
	}
	var covered time.Duration
	for i, k := range ticks {
		if k.index != int64(i) || k.start != time.Duration(i)*cfg.Interval {
			t.Errorf("interval %d is number %d starting at %v", i, k.index, k.start)
		}
		covered += k.duration
	}
	if want := int((planned + cfg.Interval - 1) / cfg.Interval); len(ticks) != want || covered != planned {
		t.Errorf("%d intervals covering %v, want %d covering %v", len(ticks), covered, want, planned)
	}
}

// A rate so low that its second arrival lies beyond any time (1e-300/s)
// sends the first request and ends on time (it used to run for ever: the
// second arrival's time overflowed to a negative number).
func TestTinyRateEndsOnTime(t *testing.T) {
	for _, arrival := range []string{"constant", "poisson"} {
		t.Run(arrival, func(t *testing.T) {
			gen := readGenerator(t)
			s, err := load.NewSchedule(arrival, 1e-300, 1)
			if err != nil {
				t.Fatal(err)
			}
			cfg := openRun(s, 0, time.Second, 500*time.Millisecond, gen)
			res, ticks, took := timedRun(t, cfg, null.New(null.Options{}), gen)
			checkLength(t, cfg, ticks, took, 300*time.Millisecond)
			if m := res.Measured; m.Sent() != 1 || m.Dropped != 0 {
				t.Errorf("sent %d, dropped %d: want the one arrival at 0", m.Sent(), m.Dropped)
			}
		})
	}
}

// At 0.5 requests/s constant arrivals are at 0 s and 2 s and the next one
// after the end: the workers leave at 2 s, yet the 3 s run lasts 3 s (it
// used to end when the workers left while recording every interval, so the
// next run overlapped it).
func TestSlowRateLastsItsPhases(t *testing.T) {
	gen := readGenerator(t)
	cfg := openRun(&load.Constant{Rate: 0.5}, 0, 3*time.Second, time.Second, gen)
	res, ticks, took := timedRun(t, cfg, null.New(null.Options{}), gen)
	checkLength(t, cfg, ticks, took, 300*time.Millisecond)
	if m := res.Measured; m.Completed != 2 {
		t.Errorf("completed %d, want the 2 arrivals at 0 s and 2 s", m.Completed)
	}
	if res.MeasureEnd != 3*time.Second {
		t.Errorf("measure end %v, want 3s", res.MeasureEnd)
	}
}

// A phase with no arrivals at all lasts its time: a warmup at rate 0, and
// a run whose every step is 0.
func TestZeroArrivalPhasesLastTheirTime(t *testing.T) {
	cases := []struct {
		name            string
		steps           []load.Step
		warmup, measure time.Duration
		measured        int64
	}{
		{"quiet warmup", []load.Step{{Rate: 0, For: time.Second}, {Rate: 200, For: time.Second}}, time.Second, time.Second, 200},
		{"nothing at all", []load.Step{{Rate: 0, For: time.Second}}, 0, 1500 * time.Millisecond, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gen := readGenerator(t)
			s := &load.Steps{Spacing: load.Even, Steps: c.steps}
			cfg := openRun(s, c.warmup, c.measure, 500*time.Millisecond, gen)
			res, ticks, took := timedRun(t, cfg, null.New(null.Options{}), gen)
			checkLength(t, cfg, ticks, took, 300*time.Millisecond)
			if got := res.Measured.Sent() + res.Measured.Dropped; got != c.measured || res.Warmup.Sent() != 0 {
				t.Errorf("warmup sent %d, measured %d, want 0 and %d", res.Warmup.Sent(), got, c.measured)
			}
		})
	}
}

// A rate far beyond what the engine can pace does not stretch the run:
// the requests it cannot send are counted as dropped in bulk, in the
// intervals they were due in, and every arrival is accounted for (2e7/s
// used to turn a 1 s run into about 10 s, and 1e12/s into a hang).
func TestRateBeyondPacingEndsOnTime(t *testing.T) {
	for _, rate := range []float64{2e7, 1e12} {
		for _, arrival := range []string{"constant", "poisson"} {
			t.Run(fmt.Sprintf("%s %g", arrival, rate), func(t *testing.T) {
				gen := readGenerator(t)
				s, err := load.NewSchedule(arrival, rate, 3)
				if err != nil {
					t.Fatal(err)
				}
				cfg := openRun(s, 500*time.Millisecond, time.Second, 250*time.Millisecond, gen)
				res, ticks, took := timedRun(t, cfg, null.New(null.Options{}), gen)
				checkLength(t, cfg, ticks, took, 400*time.Millisecond)
				for _, k := range ticks {
					// Each interval is due rate x 250 ms arrivals; the
					// engine sends a few hundred thousand at most.
					if due := rate / 4; float64(k.dropped) < 0.5*due {
						t.Errorf("interval %d dropped %d of the %.3g due in it", k.index, k.dropped, due)
					}
				}
				m := res.Measured
				got := float64(m.Sent() + m.Dropped + res.Unfinished)
				want := rate * cfg.Measure.Seconds()
				tol := 1.0 // constant arrivals: exact, but for the boundary arrival
				if arrival == "poisson" {
					tol = 6 * math.Sqrt(want) // six standard deviations
				}
				if math.Abs(got-want) > tol {
					t.Errorf("measured phase accounts for %.0f arrivals, want %.0f ± %.0f", got, want, tol)
				}
				if m.Completed == 0 {
					t.Error("nothing was sent")
				}
			})
		}
	}
}
