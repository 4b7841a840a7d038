package load

import (
	"context"
	"sync"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// The engine's own CPU cost per request, for the client-limit verdict on an
// in-process target (verdict.go). The process's CPU time cannot be split
// between the engine's goroutines and the target's (Go has no per-goroutine
// CPU accounting), so the engine is measured once per process on its own:
// an open loop against a target that does nothing, offered far more than
// it can send, so that it has no idle time. Below that the pacer and the
// Go scheduler spend idle CPU waiting in a loop (pacer.go), about a core's
// worth whatever the rate; that time yields to any other goroutine, so in
// a run whose target keeps the CPU busy it is not the engine's cost. At
// saturation every cycle is work, so the process's CPU per request sent is
// the engine's cost (about 0.4 µs on the development machine at 3 million
// requests/s).
const (
	calibrationRate    = 3e6 // requests per second offered
	calibrationMeasure = 300 * time.Millisecond
)

var calibration struct {
	once   sync.Once
	perReq float64 // CPU seconds per request; 0 when the calibration failed
}

// engineCPUPerRequest is the engine's CPU cost per request in seconds,
// measured on first use and cached for the life of the process.
func engineCPUPerRequest() float64 {
	calibration.once.Do(func() { calibration.perReq = calibrate() })
	return calibration.perReq
}

// calibrate runs the engine against noopTarget and returns its CPU seconds
// per request, 0 when it could not run.
func calibrate() float64 {
	wl, err := workload.Preset("a")
	if err != nil {
		return 0
	}
	gen, err := workload.New(wl, 1)
	if err != nil {
		return 0
	}
	cfg := Config{
		Model: "open", Schedule: &Poisson{Rate: calibrationRate, Seed: 1}, MaxInFlight: 64,
		LateAfter: time.Millisecond, DropAfter: time.Second, Timeout: time.Second,
		Warmup: 100 * time.Millisecond, Measure: calibrationMeasure, Interval: 100 * time.Millisecond,
		Ops: wl.Ops(),
	}
	res, err := Run(context.Background(), cfg, noopTarget{}, gen, func(Tick) error { return nil })
	secs := (res.MeasureEnd - res.MeasureStart).Seconds()
	sent := float64(res.Measured.Sent())
	if err != nil || !(secs > 0) || !(sent > 0) || !(res.ClientCPU > 0) {
		return 0
	}
	// Per request sent: dropped requests cost less, so this errs high.
	return res.ClientCPU / 100 * secs / sent
}

// noopTarget answers every operation at once.
type noopTarget struct{}

func (noopTarget) Prepare(context.Context, workload.Config, bool) error { return nil }
func (noopTarget) NewClient(context.Context) (target.Client, error)     { return noopTarget{}, nil }
func (noopTarget) Close() error                                         { return nil }
func (noopTarget) Do(context.Context, *workload.Op) error               { return nil }
