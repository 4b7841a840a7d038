package probe

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// EngineRunner runs each window as one open-loop run of Headroom's load
// engine (no warmup, measured for the window, 1 s intervals) against a
// target, so a window keeps the engine's measurement rules: latency from the
// intended start, late and dropped requests counted, no catch-up bursts
// (seed-digest §1, which seed 004 §4.2 asks of a load generator). One
// workload generator serves every window, so inserts continue across them.
type EngineRunner struct {
	Target    target.Target
	Generator *workload.Generator
	// Arrival is "poisson" or "constant"; the other fields are the spec's
	// load section (see load.Config).
	Arrival     string
	MaxInFlight int
	LateAfter   time.Duration
	DropAfter   time.Duration
	Timeout     time.Duration
	// Seed is the arrival schedule's seed; window k uses Seed + k.
	Seed uint64

	windows uint64
}

// RunWindow implements WindowRunner.
func (r *EngineRunner) RunWindow(ctx context.Context, rate float64, dur time.Duration) (WindowResult, error) {
	if r.Target == nil || r.Generator == nil {
		return WindowResult{}, fmt.Errorf("engine runner: target and generator must be set")
	}
	n := int(dur / time.Second)
	if n < 1 || dur%time.Second != 0 {
		return WindowResult{}, fmt.Errorf("window: %v must be a whole number of seconds, at least 1s", dur)
	}
	// Each window holds one rate: a Constant or Poisson schedule of its own.
	sched, err := load.NewSchedule(r.Arrival, rate, r.Seed+r.windows)
	if err != nil {
		return WindowResult{}, fmt.Errorf("window at %g req/s: %w", rate, err)
	}
	cfg := load.Config{
		Model: "open", Schedule: sched, MaxInFlight: r.MaxInFlight,
		LateAfter: r.LateAfter, DropAfter: r.DropAfter, Timeout: r.Timeout,
		Measure: dur, Interval: time.Second, Seed: r.Seed + r.windows,
		Ops: r.Generator.Config().Ops(),
	}
	r.windows++
	out := WindowResult{Seconds: make([]SecondResult, n)}
	for i := range out.Seconds {
		out.Seconds[i].Hist = load.NewHistogram()
	}
	sink := func(t load.Tick) error {
		// Requests still running at the end of the window complete in
		// later intervals (the engine drains them): they count in the
		// window's last second, where they were sent at the latest.
		i := min(int(t.Index), n-1)
		s := &out.Seconds[i]
		for _, o := range t.Stats {
			s.Completed += o.Count
			s.Errors += o.Errors
			s.Late += o.Late
			s.Dropped += o.Dropped
			s.Hist.Merge(o.Hist)
			for k, c := range o.ErrorKinds {
				if out.ErrorKinds == nil {
					out.ErrorKinds = map[string]int64{}
				}
				out.ErrorKinds[k] += c
			}
		}
		return nil
	}
	res, err := load.Run(ctx, cfg, r.Target, r.Generator, sink)
	out.Start = res.Start
	out.Interrupted = res.Interrupted
	// The engine also calls the client limited when over 1% of requests
	// woke late with CPU to spare; on a busy machine that is scheduling
	// noise that a percentile above the 98th cannot see. The probe counts
	// the client as the limit only when its CPU was saturated, and keeps
	// the engine's sentence as the window's note in every case.
	out.ClientLimited = res.ClientLimited && res.CPUSaturated()
	out.Note = res.Note
	if secs := (res.MeasureEnd - res.MeasureStart).Seconds(); secs > 0 {
		out.Offered = float64(res.Measured.Sent()) / secs
		out.Achieved = res.Throughput
	}
	if err != nil && !res.Interrupted {
		return out, err
	}
	return out, nil
}
