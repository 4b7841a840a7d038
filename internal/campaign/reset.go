package campaign

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// Reset policies between runs (seed-digest §2; seed 001 restarts the server
// before each read experiment and drops and repopulates before each write
// experiment, and proposes restoring a snapshot instead of re-running the
// insert script).
const (
	resetNone       = "none"
	resetRestart    = "restart"
	resetRepopulate = "repopulate"
	resetRestore    = "restore"
	eventReset      = "reset"
	eventSnapshot   = "snapshot"
)

// checkReset fails before any run when the target cannot do the reset
// policy the spec asks for.
func checkReset(policy string, tgt target.Target, typ string) error {
	switch policy {
	case resetRestart:
		if _, ok := tgt.(target.Restarter); !ok {
			return fmt.Errorf("reset: restart needs a server Headroom runs itself; add managed: {} to the %s target, or use reset: none or repopulate", typ)
		}
	case resetRestore:
		if _, ok := tgt.(target.Snapshotter); !ok {
			return fmt.Errorf("reset: restore needs a target that can snapshot its data (postgres, mysql or redis with managed:); the %s target cannot, so use reset: repopulate or none", typ)
		}
	}
	return nil
}

// resetState tracks whether the target holds exactly the data set just
// populated (or restored), so the first run after population needs no
// repopulate or restore.
type resetState struct {
	pristine bool
	snapNext uint64 // the insert key number when the snapshot was taken
}

// reset applies the policy before a run. It returns the JSON detail of the
// reset event to record with the run ("" when there is nothing to record).
func (ex *executor) reset(ctx context.Context) (string, error) {
	policy := ex.s.Reset
	if policy == resetNone || policy == "" {
		return "", nil
	}
	if ex.rs.pristine && policy != resetRestart {
		ex.rs.pristine = false
		return resetDetail(policy, 0, "skipped: the data set was loaded just before this run"), nil
	}
	ex.prog.Update(progress.State{Phase: "reset: " + policy, Runs: len(ex.plan), Total: ex.total, Done: ex.done})
	start := time.Now()
	var err error
	switch policy {
	case resetRestart:
		err = ex.tgt.(target.Restarter).Restart(ctx)
		if err == nil {
			err = ex.restartMonitor()
		}
	case resetRepopulate:
		if err = ex.tgt.Prepare(ctx, ex.wcfg, true); err == nil {
			err = ex.setup.populate(ctx, ex.populating)
		}
		if err == nil {
			ex.next.NextInsert, ex.holes = 0, nil // only the loaded records exist again
		}
	case resetRestore:
		err = ex.tgt.(target.Snapshotter).Restore(ctx)
		if err == nil {
			ex.next.NextInsert, ex.holes = ex.rs.snapNext, nil // back to the snapshot's records
		}
	}
	ex.rs.pristine = false
	if err != nil {
		if ctx.Err() != nil {
			return "", ErrInterrupted
		}
		return resetDetail(policy, time.Since(start), "failed"), fmt.Errorf("reset %s before the run: %w", policy, err)
	}
	return resetDetail(policy, time.Since(start), ""), nil
}

func resetDetail(policy string, d time.Duration, note string) string {
	detail := fmt.Sprintf(`{"policy":%q,"seconds":%.3f`, policy, d.Seconds())
	if note != "" {
		detail += fmt.Sprintf(`,"note":%q`, note)
	}
	return detail + "}"
}

// snapshot saves the populated data set once, for reset: restore.
func (ex *executor) snapshot(ctx context.Context) error {
	if ex.s.Reset != resetRestore {
		return nil
	}
	start := time.Now()
	ex.rs.snapNext = ex.next.NextInsert
	if err := ex.tgt.(target.Snapshotter).Snapshot(ctx); err != nil {
		return fmt.Errorf("reset: restore: taking the snapshot after population: %w", err)
	}
	detail := fmt.Sprintf(`{"seconds":%.3f}`, time.Since(start).Seconds())
	if err := ex.st.AddEvent(store.Event{Time: time.Now(), Kind: eventSnapshot, Detail: detail}); err != nil {
		return &storeError{err}
	}
	return nil
}
