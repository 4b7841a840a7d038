package spec_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target/null"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() { spec.RunOnNull = runFirstSecond }

// fuzzMaxSlots caps the request slots of a fuzzed run: validate lets a run
// use a quarter of the machine's memory for them, and the fuzzer runs one
// worker per core at once.
const fuzzMaxSlots = 2000

// runFirstSecond builds what the campaign builds for an accepted spec's
// first run (its workload generator and its arrival schedule) and runs the
// first second of it, unwarmed, on the null target.
func runFirstSecond(t *testing.T, s *spec.Spec) {
	t.Helper()
	if len(s.Treatments) > 0 {
		s = s.Treatments[0].Spec
	}
	if len(s.Workload.Statements) > 0 {
		return // its data set is SQL for a SQL target, not for the null one
	}
	first := s.Plan()[0]
	wcfg, err := campaign.WorkloadConfig(s.Workload, filepath.Dir(s.File))
	if err != nil {
		t.Fatalf("validate accepted a workload the generator refuses: %v", err)
	}
	wcfg.RecordCount = min(wcfg.RecordCount, 1000) // nothing is populated
	gen, err := workload.New(wcfg, uint64(s.Seed))
	if err != nil {
		t.Fatalf("validate accepted a workload the generator refuses: %v", err)
	}
	l := s.Load
	cfg := load.Config{
		Model: l.Model, ThinkTime: l.ThinkTime.Duration, LateAfter: l.LateAfter.Duration, DropAfter: l.DropAfter.Duration,
		Timeout: l.Timeout.Duration, Measure: time.Second, Interval: min(s.Interval.Duration, time.Second),
		Seed: uint64(s.Seed), Ops: gen.Config().Ops(),
	}
	if l.Model == "open" {
		cfg.MaxInFlight = min(l.MaxInFlight, fuzzMaxSlots)
		if cfg.Schedule, err = l.Arrivals(first.Level, uint64(s.Seed)); err != nil {
			t.Fatalf("validate accepted load the engine cannot schedule: %v", err)
		}
	} else {
		cfg.Clients = min(int(first.Level), fuzzMaxSlots)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := load.Run(ctx, cfg, null.New(null.Options{}), gen, func(load.Tick) error { return nil }); err != nil {
		t.Fatalf("the first second of a validated spec's run failed: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the first second of a validated spec's run took %v", took)
	}
}
