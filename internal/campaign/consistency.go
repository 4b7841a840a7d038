package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// The consistency workload (workload.consistency; seed-digest §5, seed 002
// §III-B) runs as sessions beside the YCSB load, or instead of it: writer
// sessions write versions 1, 2, 3... of keys of their own, reader sessions
// read the keys back, each on one read path or consistency level. Every
// operation becomes a history.Op, timed on this machine's clock from the
// run's start (the load engine's t0), and the run's history is stored in
// batches as it grows (AppendHistory), so memory stays bounded however
// long the run. The staleness and session-guarantee analyses read it.
//
// Sessions keep to their schedule: session i's k-th operation is due at
// t0 + stagger_i + k x interval, whatever the previous ones took. An
// operation that starts later than the spec's late_after after it was due
// is late; ticks that passed entirely while the previous operation ran
// are skipped (dropped), never caught up in a burst (style notes, vegeta).

// historyBatch is how many operations a session collects before its batch
// goes to the store; batchQueue bounds the batches waiting for it (a
// session waits when the store falls behind, which shows as late ticks).
const (
	historyBatch = 4096
	batchQueue   = 8
)

// settleLimit bounds the wait, before a run, for every read path to see
// version 0 of every key (a replica still replaying the last run's
// writes).
const settleLimit = 60 * time.Second

// consistencyKey names the i-th key of the consistency workload.
func consistencyKey(i int) string { return "ck" + strconv.Itoa(i) }

// consistencyRun is one run's consistency workload; nil when the spec has
// none (its methods then do nothing).
type consistencyRun struct {
	ex     *executor
	id     int64
	cfg    spec.Consistency
	vs     target.VersionedStore
	keys   []string
	levels []string // the read levels, split over the readers in turn
	wlevel string   // the writes' level (target.VersionedStore.WriteLevel)
	late   time.Duration
	op     time.Duration // per-operation timeout

	sessions []*consistencySession
	batches  chan []history.Op
	flushed  chan error // the flusher's first error, when it ends
	offsets  *clockRun

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// openConsistency prepares run id's consistency workload: the versions at
// 0 on every path, the sessions' connections, the clocks' first offsets.
func (ex *executor) openConsistency(ctx context.Context, id int64) (*consistencyRun, error) {
	cs := ex.s.Workload.Consistency
	if cs == nil {
		return nil, nil
	}
	vs, ok := ex.tgt.(target.VersionedStore)
	if !ok {
		return nil, fmt.Errorf("workload.consistency: the %s target cannot run the consistency workload; use postgres, redis or cassandra", ex.s.Target.Type)
	}
	cr := &consistencyRun{ex: ex, id: id, cfg: cs.Filled(), vs: vs, late: ex.s.Load.LateAfter.Duration, op: ex.s.Load.Timeout.Duration}
	if cr.late <= 0 {
		cr.late = time.Millisecond
	}
	for i := 0; i < cr.cfg.Keys; i++ {
		cr.keys = append(cr.keys, consistencyKey(i))
	}
	cr.wlevel = vs.WriteLevel()
	cr.levels = cr.cfg.ReadLevels
	if len(cr.levels) == 0 {
		cr.levels = vs.ReadPaths()
	}
	if err := cr.prepare(ctx); err != nil {
		return nil, err
	}
	cr.offsets = ex.startClocks(ctx, id)
	for w := 0; w < cr.cfg.Writers; w++ {
		if err := cr.addSession(ctx, true, w, cr.levels); err != nil {
			return nil, cr.closeSessions(err)
		}
	}
	for r := 0; r < cr.cfg.Readers; r++ {
		if err := cr.addSession(ctx, false, r, []string{cr.levels[r%len(cr.levels)]}); err != nil {
			return nil, cr.closeSessions(err)
		}
	}
	return cr, nil
}

// prepare sets every key to version 0 and waits until every path reads
// it, so that the run starts from the same state everywhere.
func (cr *consistencyRun) prepare(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, settleLimit)
	defer cancel()
	if err := cr.vs.PrepareVersions(ctx, cr.keys); err != nil {
		return err
	}
	c, err := cr.vs.NewVersionedClient(ctx, cr.levels)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, l := range cr.levels {
		for _, k := range cr.keys {
			for {
				v, _, err := c.ReadVersion(ctx, l, k)
				if err == nil && v == 0 {
					break
				}
				if ctx.Err() != nil {
					return fmt.Errorf("workload.consistency: %s did not read version 0 of %s within %s of setting it (last: version %d, %v); is a replica stuck?", l, k, settleLimit, v, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	return nil
}

// addSession opens one writer's or reader's connections.
func (cr *consistencyRun) addSession(ctx context.Context, writer bool, n int, levels []string) error {
	c, err := cr.vs.NewVersionedClient(ctx, levels)
	if err != nil {
		return err
	}
	s := &consistencySession{cr: cr, client: c, writer: writer, levels: levels, process: len(cr.sessions)}
	if writer {
		s.every = cr.cfg.WriteInterval.Duration
		s.stagger = time.Duration(n) * s.every / time.Duration(cr.cfg.Writers)
		for k := n; k < len(cr.keys); k += cr.cfg.Writers {
			s.keys = append(s.keys, cr.keys[k])
		}
		s.versions = make([]int64, len(s.keys))
	} else {
		s.every = cr.cfg.ReadInterval.Duration
		s.stagger = time.Duration(n) * s.every / time.Duration(cr.cfg.Readers)
		s.keys = cr.keys
		s.next = n % len(cr.keys) // readers start on different keys
	}
	s.stats = newOpStats()
	cr.sessions = append(cr.sessions, s)
	return nil
}

// begin starts the sessions on the run's clock: t0 is the load engine's
// start, end when the measured phase ends.
func (cr *consistencyRun) begin(ctx context.Context, t0, end time.Time) {
	if cr == nil {
		return
	}
	ctx, cr.cancel = context.WithDeadline(ctx, end)
	cr.batches = make(chan []history.Op, batchQueue)
	cr.flushed = make(chan error, 1)
	go cr.flush()
	for _, s := range cr.sessions {
		cr.wg.Add(1)
		go func() {
			defer cr.wg.Done()
			s.run(ctx, t0)
		}()
	}
}

// flush stores the batches as they come; after its first error it keeps
// draining (so sessions never block) and reports that error at the end.
func (cr *consistencyRun) flush() {
	var first error
	for b := range cr.batches {
		if first == nil {
			if err := cr.ex.st.AppendHistory(cr.id, b); err != nil {
				first = &storeError{err}
			}
		}
	}
	cr.flushed <- first
}

// finish stops the sessions, stores the rest of the history and the
// clocks' offsets, and closes the connections.
func (cr *consistencyRun) finish(ctx context.Context) error {
	if cr == nil {
		return nil
	}
	var err error
	if cr.cancel != nil {
		cr.cancel()
		cr.wg.Wait()
		for _, s := range cr.sessions {
			if len(s.buf) > 0 {
				cr.batches <- s.buf
				s.buf = nil
			}
		}
		close(cr.batches)
		err = <-cr.flushed
	}
	if terr := cr.recordTotals(); terr != nil && err == nil {
		err = terr
	}
	if oerr := cr.ex.finishClocks(ctx, cr.id, cr.offsets); oerr != nil && err == nil {
		err = oerr
	}
	return cr.closeSessions(err)
}

func (cr *consistencyRun) closeSessions(err error) error {
	for _, s := range cr.sessions {
		_ = s.client.Close()
	}
	cr.sessions = nil
	return err
}

// consistencySession is one writer or reader: one client, one operation
// at a time.
type consistencySession struct {
	cr       *consistencyRun
	client   target.VersionedClient
	writer   bool
	process  int
	levels   []string
	keys     []string
	versions []int64 // a writer's last version per key
	next     int     // the next key, round robin
	every    time.Duration
	stagger  time.Duration
	buf      []history.Op
	stats    *opStats // this interval's counts, for the only mode's intervals
	totals   scheduleTotals
	statsMu  sync.Mutex
	reads    int // a writer's read-backs so far, to cycle its levels
}

// run paces the session from t0 until ctx ends.
func (s *consistencySession) run(ctx context.Context, t0 time.Time) {
	due := t0.Add(s.stagger)
	timer := time.NewTimer(time.Until(due))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		start := time.Now()
		late := start.Sub(due) > s.cr.late
		s.step(ctx, t0, late)
		// The next tick is the first one still ahead; the ones that
		// passed while this operation ran are skipped, and counted.
		due = due.Add(s.every)
		now := time.Now()
		if skipped := now.Sub(due) / s.every; skipped > 0 {
			due = due.Add(skipped * s.every)
			s.countSkipped(int64(skipped))
		}
		timer.Reset(time.Until(due))
	}
}

// step runs one operation (a writer: a write and a read-back of it) and
// records it.
func (s *consistencySession) step(ctx context.Context, t0 time.Time, late bool) {
	k := s.next
	s.next = (s.next + 1) % len(s.keys)
	key := s.keys[k]
	if !s.writer {
		s.read(ctx, t0, s.levels[0], key, late)
		return
	}
	s.versions[k]++
	v := s.versions[k]
	octx, cancel := context.WithTimeout(ctx, s.cr.op)
	inv := time.Since(t0)
	err := s.client.WriteVersion(octx, key, v)
	done := time.Since(t0)
	cancel()
	if ctx.Err() != nil && err != nil {
		// The run ended under it: the write's fate is unknown, and it is
		// no measurement.
		s.record(history.Op{Process: s.process, Kind: history.Write, Key: key, Value: v, InvokeNS: int64(inv), CompleteNS: int64(done), Outcome: history.Info, Level: s.cr.wlevel})
		s.countOp(true, done-inv, err, late)
		return
	}
	s.record(history.Op{Process: s.process, Kind: history.Write, Key: key, Value: v, InvokeNS: int64(inv), CompleteNS: int64(done), Outcome: writeOutcome(err), Level: s.cr.wlevel})
	s.countOp(true, done-inv, err, late)
	if err == nil && len(s.levels) > 0 {
		// Read your write: the writer reads its key back at once, at
		// each level in turn.
		l := s.levels[s.reads%len(s.levels)]
		s.reads++
		s.read(ctx, t0, l, key, false)
	}
}

func (s *consistencySession) read(ctx context.Context, t0 time.Time, level, key string, late bool) {
	octx, cancel := context.WithTimeout(ctx, s.cr.op)
	inv := time.Since(t0)
	v, replica, err := s.client.ReadVersion(octx, level, key)
	done := time.Since(t0)
	cancel()
	if ctx.Err() != nil && err != nil {
		return // cut off by the run's end: nothing was read
	}
	op := history.Op{Process: s.process, Kind: history.Read, Key: key, Value: v, InvokeNS: int64(inv), CompleteNS: int64(done),
		Outcome: history.OK, Replica: replica, Level: level}
	if err != nil {
		op.Outcome, op.Value = history.Fail, 0
	}
	s.record(op)
	s.countOp(false, done-inv, err, late)
}

// writeOutcome is a write's outcome: a timeout or a lost connection leaves
// it unknown (the write may have been applied), any other error failed it.
func writeOutcome(err error) string {
	if err == nil {
		return history.OK
	}
	switch errKind(err) {
	case "timeout", target.KindConnection:
		return history.Info
	}
	return history.Fail
}

// errKind names an error's kind as the load engine does.
func errKind(err error) string {
	var k target.Kinder
	switch {
	case errors.As(err, &k):
		return k.Kind()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	}
	return "error"
}

func (s *consistencySession) record(op history.Op) {
	if s.buf == nil {
		s.buf = make([]history.Op, 0, historyBatch)
	}
	s.buf = append(s.buf, op)
	if len(s.buf) == historyBatch {
		s.cr.batches <- s.buf
		s.buf = nil
	}
}

// countOp counts one operation in the interval's statistics and in the
// run's totals.
func (s *consistencySession) countOp(write bool, lat time.Duration, err error, late bool) {
	s.statsMu.Lock()
	s.stats.add(write, lat, err, late)
	t := &s.totals.Reads
	if write {
		t = &s.totals.Writes
	}
	t.Ops++
	if err != nil {
		t.Errors++
	}
	if late {
		t.Late++
	}
	s.statsMu.Unlock()
}

// countSkipped counts ticks that passed while the previous operation ran
// (a writer's ticks are its writes).
func (s *consistencySession) countSkipped(n int64) {
	s.statsMu.Lock()
	s.stats.skip(s.writer, n)
	if s.writer {
		s.totals.Writes.Skipped += n
	} else {
		s.totals.Reads.Skipped += n
	}
	s.statsMu.Unlock()
}

// take hands out the session's counts so far and starts new ones.
func (s *consistencySession) take() *opStats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	st := s.stats
	s.stats = newOpStats()
	return st
}

// eventConsistencyLoad is the store event with a run's consistency
// workload totals (scheduleTotals): with `with: beside` the run's
// intervals are the YCSB mix's, so this is where the sessions' late and
// skipped ticks are counted.
const eventConsistencyLoad = "consistency_load"

// scheduleTotals count a run's consistency operations and how they kept
// to their schedule.
type scheduleTotals struct {
	Reads  kindTotals `json:"reads"` // the writers' read-backs included
	Writes kindTotals `json:"writes"`
}

type kindTotals struct {
	Ops     int64 `json:"ops"`     // invoked and counted (not cut off by the run's end)
	Errors  int64 `json:"errors"`  // of Ops
	Late    int64 `json:"late"`    // of Ops: started more than load.late_after after due
	Skipped int64 `json:"skipped"` // ticks that passed while the session's previous operation ran
}

// recordTotals stores the run's consistency_load event, once the sessions
// have stopped.
func (cr *consistencyRun) recordTotals() error {
	if cr.cancel == nil {
		return nil // never began
	}
	var t scheduleTotals
	for _, s := range cr.sessions {
		for _, p := range [][2]*kindTotals{{&t.Reads, &s.totals.Reads}, {&t.Writes, &s.totals.Writes}} {
			p[0].Ops += p[1].Ops
			p[0].Errors += p[1].Errors
			p[0].Late += p[1].Late
			p[0].Skipped += p[1].Skipped
		}
	}
	d, _ := json.Marshal(t)
	if err := cr.ex.st.AddEvent(store.Event{RunID: cr.id, Time: time.Now(), Kind: eventConsistencyLoad, Detail: string(d)}); err != nil {
		return &storeError{err}
	}
	return nil
}

// consistencyEvent records a problem of the consistency workload that does
// not end the run.
func (ex *executor) consistencyEvent(id int64, kind string, err error) {
	_ = ex.st.AddEvent(store.Event{RunID: id, Time: time.Now(), Kind: kind, Detail: err.Error()})
}
