package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Failure scenarios (seed 002 §III-C): the spec's fault events and their
// recoveries are applied by startEvents (lab.go); after the run the
// campaign heals what is still broken, reads back every acknowledged
// record (writecheck.go) and puts the set-up back.

// eventFailover is the store event kind of a promote event's change
// (a deploy.NodeChange with action "promote"); the fault event records
// the event itself, as for every event.
const eventFailover = "failover"

// failover is a target whose managed cluster can fail over to a replica
// (the postgres target's cluster, internal/target/postgres/promote.go; the
// redis target's replica set, internal/target/redis/promote.go).
type failover interface {
	Promote(ctx context.Context, node string) (deploy.NodeChange, error)
	RestoreReplicas(ctx context.Context) ([]deploy.NodeChange, error)
}

// faultActions start a failure scenario (internal/analysis/availability
// pairs each with its recovery).
var faultActions = []string{lab.ActKill, lab.ActStop, lab.ActLinkDown, lab.ActPartition, lab.ActStallDisk, lab.ActPromote}

// isFaultEvent says whether e breaks something a write may be lost to.
func isFaultEvent(e infra.Event) bool { return slices.Contains(faultActions, e.Action) }

// applyPromote carries out a promote event: the target fails over to the
// replica e.Host names and its clients follow. The change is recorded as
// a failover event.
func (ex *executor) applyPromote(ctx context.Context, id int64, e infra.Event) (string, error) {
	fo, ok := ex.tgt.(failover)
	if !ok {
		return "", fmt.Errorf("the %s target cannot fail over; promote needs a managed postgres cluster or redis replica set", ex.s.Target.Type)
	}
	ch, err := fo.Promote(ctx, e.Host)
	ch.Action = lab.ActPromote
	if err != nil && ch.Error == "" {
		ch.Error = err.Error()
	}
	b, _ := json.Marshal(ch)
	at := ch.Done
	if at.IsZero() {
		at = time.Now()
	}
	if aerr := ex.st.AddEvent(store.Event{RunID: id, Time: at, Kind: eventFailover, Detail: string(b)}); aerr != nil {
		err = errors.Join(err, &storeError{aerr})
	}
	if err != nil {
		return "", err
	}
	if merr := ex.restartMonitor(); merr != nil {
		ex.noteEventProblem(fmt.Sprintf("monitoring after the failover: %v", merr))
	}
	return ch.Detail, nil
}

// writeCheckTrigger says why the run's acknowledged records are read back
// after it ("" = they are not): the spec asks for it after every run
// (analysis.failures.write_check), the cluster changed (by the spec's
// events or the controller), or a fault hit.
func (ex *executor) writeCheckTrigger() string {
	switch {
	case ex.s.Analysis.Failures.WriteCheck:
		return "spec"
	case ex.hasNodeEvents() || ex.undo.changed:
		return "cluster_change"
	case slices.ContainsFunc(ex.s.Events, isFaultEvent):
		return "fault"
	}
	return ""
}

// afterEvents ends a run's events: faults healed and a killed server
// started again first, so that the write check reads the records back
// from a healed system as Jepsen's final reads do (a cluster change is
// checked before the cluster is put back: the records must have survived
// the change itself); then the check, then the set-up put back as
// defined, failed-over nodes rebuilt as replicas. gen is nil when the run
// never started its load.
func (ex *executor) afterEvents(ctx context.Context, id int64, gen *workload.Generator) error {
	var err error
	if trigger := ex.writeCheckTrigger(); gen != nil && trigger != "" && ctx.Err() == nil {
		if herr := ex.healForCheck(ctx, id); herr != nil {
			ex.noteEventProblem(fmt.Sprintf("healing before the write check: %v", herr))
		}
		err = ex.checkWrites(ctx, id, trigger, gen.NextInsert(), gen.Holes())
	}
	if uerr := ex.undoEvents(ctx, id); uerr != nil {
		err = errors.Join(err, fmt.Errorf("putting the lab back after the run's events: %w", uerr))
	}
	if rerr := ex.restoreAfterFailover(ctx, id); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}

// eventHealForCheck records the healing before a write check.
const eventHealForCheck = "heal_for_write_check"

// healForCheck undoes the lab's faults (partitions healed, links up,
// processes continued) and starts a killed server, and records it. The
// run's fault_undo record still comes from undoEvents afterwards, which
// finds the server running (StartServer does nothing then) and records
// that the killed server was started again.
func (ex *executor) healForCheck(ctx context.Context, id int64) error {
	if !slices.ContainsFunc(ex.s.Events, isFaultEvent) {
		return nil
	}
	var err error
	if ex.faults != nil {
		err = ex.faults.ResetFaults()
	}
	started := false
	if ex.killed {
		if serr := ex.startService(ctx); serr != nil {
			err = errors.Join(err, serr)
		} else {
			started = true
			err = errors.Join(err, ex.restartMonitor())
		}
		ex.killed = true // for undoEvents' record
	}
	rec := map[string]any{"restarted_server": started}
	if err != nil {
		rec["error"] = err.Error()
	}
	b, _ := json.Marshal(rec)
	now := time.Now()
	_ = ex.st.AddEvent(store.Event{RunID: id, Time: now, Kind: eventHealForCheck, Detail: string(b)})
	if ex.faults != nil {
		err = errors.Join(err, ex.setup.recordLimits(now, "undo")) // the limits are as defined from here
	}
	return err
}

// restoreAfterFailover rebuilds, after a run with promote events, the
// nodes a failover left out as replicas of the new primary, so that the
// next run starts from the cluster the spec defines. Each rebuild is
// recorded as a node change without a run (as undoNodes does).
func (ex *executor) restoreAfterFailover(ctx context.Context, id int64) error {
	fo, ok := ex.tgt.(failover)
	if !ok || !slices.ContainsFunc(ex.s.Events, func(e infra.Event) bool { return e.Action == lab.ActPromote }) {
		return nil
	}
	chs, err := fo.RestoreReplicas(ctx)
	for _, ch := range chs {
		var cerr error
		if ch.Error != "" {
			cerr = errors.New(ch.Error)
		}
		ex.recordUndo(id, actAddNode, ch, cerr)
	}
	if len(chs) > 0 {
		if merr := ex.restartMonitor(); merr != nil {
			err = errors.Join(err, merr)
		}
		ex.prog.Note(fmt.Sprintf("rebuilt %d replica(s) left out by the failover", len(chs)))
	}
	return err
}
