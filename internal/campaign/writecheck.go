package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// EventWriteCheck is the event kind of a write check (Jepsen's set-full
// idea): after a run whose cluster changed (add_node, remove_node), that
// had a fault (kill, stop, link_down, partition, promote), or after every
// run when the spec sets analysis.failures.write_check, every record the
// target acknowledged (the populated ones and the run's acknowledged
// inserts; an insert that failed or timed out was never acknowledged and
// is skipped) is read back at the strongest consistency the target offers
// and classified: stable (read back), lost (acknowledged, not found) or
// never read (the read failed).
const EventWriteCheck = "write_check"

// writeCheck is the detail of a write_check event (results.WriteCheck
// reads it).
type writeCheck struct {
	Trigger    string   `json:"trigger"` // spec, cluster_change or fault
	Checked    int64    `json:"checked"`
	Stable     int64    `json:"stable"`     // read back
	Lost       int64    `json:"lost"`       // acknowledged, now not found
	Unreadable int64    `json:"unreadable"` // never read: the read failed (not a not-found)
	FirstLost  []uint64 `json:"first_lost,omitempty"`
	Strong     bool     `json:"strong"` // read through the target's strongest reads
	Seconds    float64  `json:"seconds"`
	FirstError string   `json:"first_error,omitempty"`
	// HolesForgotten says the run had more failed inserts than the
	// generator remembers (workload.maxHoles): some records counted lost
	// may be inserts that were never acknowledged.
	HolesForgotten bool `json:"holes_forgotten,omitempty"`
}

// holeMemory is how many failed inserts the workload generator remembers
// (internal/workload/ack.go, maxHoles).
const holeMemory = 4096

// writeCheckWorkers read concurrently: a large data set at ALL would
// otherwise take minutes.
const writeCheckWorkers = 16

// checkWrites reads back key numbers [0, next) except holes (inserts
// that stored nothing) and records what it found.
func (ex *executor) checkWrites(ctx context.Context, id int64, trigger string, next uint64, holes []uint64) error {
	if ex.wcfg.IsStatements() || next == 0 {
		return nil
	}
	newClient := ex.tgt.NewClient
	sr, strong := ex.tgt.(target.StrongReader)
	if strong {
		newClient = sr.StrongClient
	}
	ex.prog.Note(fmt.Sprintf("checking that the %d acknowledged records are still there", next-uint64(len(holes))))
	start := time.Now()
	skip := make(map[uint64]bool, len(holes))
	for _, h := range holes {
		skip[h] = true
	}
	var cursor, checked, lost, unreadable atomic.Int64
	var mu sync.Mutex
	var firstLost []uint64
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < writeCheckWorkers; w++ {
		c, err := newClient(ctx)
		if err != nil {
			firstErr = err
			break
		}
		wg.Add(1)
		go func(c target.Client) {
			defer wg.Done()
			defer c.Close()
			op := &workload.Op{Type: workload.Read, Field: -1}
			for {
				k := uint64(cursor.Add(1) - 1)
				if k >= next || ctx.Err() != nil {
					return
				}
				if skip[k] {
					continue
				}
				op.KeyNum = k
				op.Key = workload.KeyName(op.Key[:0], k, ex.wcfg.OrderedInserts)
				err := c.Do(ctx, op)
				checked.Add(1)
				switch {
				case err == nil:
				case errors.Is(err, target.ErrNotFound):
					lost.Add(1)
					mu.Lock()
					if len(firstLost) < 20 {
						firstLost = append(firstLost, k)
					}
					mu.Unlock()
				default:
					unreadable.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}(c)
	}
	wg.Wait()
	slices.Sort(firstLost)
	rec := writeCheck{Trigger: trigger, Checked: checked.Load(), Lost: lost.Load(), Unreadable: unreadable.Load(), FirstLost: firstLost,
		Strong: strong, Seconds: time.Since(start).Seconds(), HolesForgotten: len(holes) >= holeMemory}
	// Records no worker got to (no client could be opened, or the
	// campaign was stopped) were never read either.
	var acked int64
	for k := range next {
		if !skip[k] {
			acked++
		}
	}
	if acked > rec.Checked {
		rec.Unreadable += acked - rec.Checked
		rec.Checked = acked
		if firstErr == nil && ctx.Err() != nil {
			rec.FirstError = ctx.Err().Error()
		}
	}
	rec.Stable = rec.Checked - rec.Lost - rec.Unreadable
	if firstErr != nil {
		rec.FirstError = firstErr.Error()
	}
	b, _ := json.Marshal(rec)
	if err := ex.st.AddEvent(store.Event{RunID: id, Time: time.Now(), Kind: EventWriteCheck, Detail: string(b)}); err != nil {
		return &storeError{err}
	}
	switch {
	case rec.Lost > 0:
		ex.prog.Note(fmt.Sprintf("LOST WRITES: %d of %d acknowledged records are gone after %s (first: key numbers %v); %d stable, %d never read",
			rec.Lost, rec.Checked, triggerText(trigger), rec.FirstLost, rec.Stable, rec.Unreadable))
	case rec.Unreadable > 0:
		ex.prog.Note(fmt.Sprintf("write check: %d of %d records could not be read (%s); none was found missing", rec.Unreadable, rec.Checked, rec.FirstError))
	default:
		ex.prog.Note(fmt.Sprintf("write check: all %d acknowledged records read back (stable) in %.1fs", rec.Checked, rec.Seconds))
	}
	return nil
}

// triggerText says in words what the records had to survive.
func triggerText(trigger string) string {
	switch trigger {
	case "cluster_change":
		return "the cluster changed"
	case "fault":
		return "the run's faults"
	}
	return "the run"
}

// hasNodeEvents says whether the spec changes the cluster during runs.
func (ex *executor) hasNodeEvents() bool {
	return slices.ContainsFunc(ex.s.Events, isNodeEvent)
}
