package history_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/history/historytest"
)

// On a generated grid, the writes with the reads of a level whose lag is
// always 0 are linearizable; at a level with lags, exactly the keys the
// plan made stale are not.
func TestLinearizableGenerated(t *testing.T) {
	cfg := historytest.Config{Seed: 11, Keys: 10, Writes: 3, PeriodNS: 4e6, StepNS: 1e6,
		Levels: []string{"ONE", "QUORUM"}, MaxLag: map[string]int{"ONE": 1, "QUORUM": 0},
		WriteLevel: "QUORUM", Replica: map[string]string{}}
	plan := historytest.Generate(cfg, nil)
	if len(plan.NonLinearizable["ONE"]) == 0 || len(plan.NonLinearizable["ONE"]) == cfg.Keys {
		t.Fatalf("the plan should make some keys but not all stale at ONE: %v", plan.NonLinearizable["ONE"])
	}
	for _, level := range cfg.Levels {
		var ops []history.Op
		for _, o := range plan.Ops {
			if o.Kind == history.Write || o.Level == level {
				ops = append(ops, o)
			}
		}
		var bad []string
		for _, kc := range history.CheckLinearizable(ops, history.LinOptions{Timeout: 20 * time.Second}) {
			switch kc.Status {
			case history.Violation:
				bad = append(bad, kc.Key)
			case history.Linearizable:
			default:
				t.Errorf("%s %s: %s", level, kc.Key, kc.Status)
			}
			if kc.Ops != cfg.Writes+cfg.Writes*int(cfg.PeriodNS/cfg.StepNS) {
				t.Errorf("%s %s: %d ops checked", level, kc.Key, kc.Ops)
			}
		}
		if !reflect.DeepEqual(bad, plan.NonLinearizable[level]) {
			t.Errorf("%s: non-linearizable keys %v, want %v", level, bad, plan.NonLinearizable[level])
		}
	}
}
