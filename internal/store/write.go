package store

import (
	"database/sql"
	"fmt"
	"math"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// Each write below is its own committed transaction: once a method returns
// nil its data survives Ctrl-C, SIGKILL or a crash of the Headroom process.

// StartRun records the start of a run with status running and returns its
// ID. r.ID, r.Status, r.End and r.Summary are ignored; a zero r.Start is set
// to now.
func (s *Store) StartRun(r Run) (int64, error) {
	if r.Start.IsZero() {
		r.Start = time.Now()
	}
	if !finiteNonNegative(r.Level) || r.Slot < 0 {
		return 0, fmt.Errorf("results database %s: cannot start a run at level %v, slot %d; the level must be a finite number >= 0 and the slot >= 0", s.path, r.Level, r.Slot)
	}
	const doing = "starting a run"
	var id int64
	err := s.write(doing, nil, func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO run (seq, slot, treatment, model, level_index, level, repetition, start_ns, status, message)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.Seq, r.Slot, r.Treatment, r.Model, r.LevelIndex, r.Level, r.Repetition,
			r.Start.UnixNano(), StatusRunning, r.Message)
		if err != nil {
			return s.fail(doing, err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
	return id, err
}

// FinishRun records how run id ended and its summary. status must be
// completed, interrupted or failed; a zero end is set to now.
func (s *Store) FinishRun(id int64, status, message string, end time.Time, sum RunSummary) error {
	switch status {
	case StatusCompleted, StatusInterrupted, StatusFailed:
	default:
		return fmt.Errorf("results database %s: cannot finish run %d with status %q (want %s, %s or %s)",
			s.path, id, status, StatusCompleted, StatusInterrupted, StatusFailed)
	}
	if end.IsZero() {
		end = time.Now()
	}
	if err := sum.check(); err != nil {
		return fmt.Errorf("results database %s: cannot finish run %d: %v", s.path, id, err)
	}
	doing := fmt.Sprintf("finishing run %d", id)
	return s.write(doing, nil, func(tx *sql.Tx) error {
		var treatment string
		var slot int
		var start int64
		var lastStart sql.NullInt64
		err := tx.QueryRow(`SELECT treatment, slot, start_ns, (SELECT max(start_ns) FROM interval WHERE run_id = run.id)
			FROM run WHERE id = ?`, id).Scan(&treatment, &slot, &start, &lastStart)
		if err == sql.ErrNoRows {
			return fmt.Errorf("results database %s: cannot finish run %d: no such run", s.path, id)
		}
		if err != nil {
			return s.fail(doing, err)
		}
		if end.UnixNano() < start || (lastStart.Valid && end.UnixNano() < lastStart.Int64) {
			return fmt.Errorf("results database %s: cannot finish run %d at %s, before its start or its last interval's start; a run's intervals start inside it",
				s.path, id, end.UTC().Format(time.RFC3339Nano))
		}
		if status == StatusCompleted {
			// Checked here for the sentence; the unique index
			// run_completed_slot enforces it for any writer.
			var other int64
			err := tx.QueryRow(`SELECT id FROM run WHERE treatment = ? AND slot = ? AND status = ? AND id <> ? LIMIT 1`,
				treatment, slot, StatusCompleted, id).Scan(&other)
			if err == nil {
				return s.slotTaken(id, other, treatment, slot)
			}
			if err != sql.ErrNoRows {
				return s.fail(doing, err)
			}
		}
		_, err = tx.Exec(`UPDATE run SET status = ?, message = ?, end_ns = ?,
			sent = ?, completed = ?, errors = ?, late = ?, dropped = ?, unfinished = ?,
			measure_start_ns = ?, measure_end_ns = ?,
			measure_secs = ?, throughput = ?, client_cpu_pct = ?, client_limited = ?, client_note = ?
			WHERE id = ?`,
			status, message, end.UnixNano(),
			sum.Sent, sum.Completed, sum.Errors, sum.Late, sum.Dropped, sum.Unfinished,
			nullTime(sum.MeasureStart), nullTime(sum.MeasureEnd),
			sum.MeasureSecs, sum.Throughput, sum.ClientCPU, sum.ClientLimited, sum.ClientNote,
			id)
		if code(err) == sqlite3.SQLITE_CONSTRAINT && status == StatusCompleted {
			return s.slotTaken(id, 0, treatment, slot)
		}
		if err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
}

// slotTaken is the error of completing run id in a slot that already has
// a completed run (other, when known).
func (s *Store) slotTaken(id, other int64, treatment string, slot int) error {
	by := "another run"
	if other != 0 {
		by = fmt.Sprintf("run %d", other)
	}
	return fmt.Errorf("results database %s: run %d cannot complete slot %d%s, which %s already completed; is another headroom process running this campaign? let one finish, then resume",
		s.path, id, slot, ofTreatment(treatment), by)
}

// check refuses summary values no run can have.
func (m RunSummary) check() error {
	for _, c := range []struct {
		name string
		n    int64
	}{{"sent", m.Sent}, {"completed", m.Completed}, {"errors", m.Errors}, {"late", m.Late}, {"dropped", m.Dropped}, {"unfinished", m.Unfinished}} {
		if c.n < 0 {
			return fmt.Errorf("%s is %d; counts cannot be negative", c.name, c.n)
		}
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"measure_secs", m.MeasureSecs}, {"throughput", m.Throughput}, {"client_cpu_pct", m.ClientCPU}} {
		if !finiteNonNegative(c.v) {
			return fmt.Errorf("%s is %v; it must be a finite number >= 0", c.name, c.v)
		}
	}
	return nil
}

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// AddIntervals writes a batch of intervals, with their error kinds, in one
// transaction: the engine hands over all operation types of an interval
// together, and a reader never sees half of them. Histograms are encoded and
// summarised before the transaction starts, to keep the write lock short.
func (s *Store) AddIntervals(ivs []Interval) error {
	if len(ivs) == 0 {
		return nil
	}
	type row struct {
		args []any
		iv   *Interval
	}
	rows := make([]row, len(ivs))
	for i := range ivs {
		iv := &ivs[i]
		if iv.RunID <= 0 || iv.Phase == "" || iv.Op == "" || iv.Start.IsZero() {
			return fmt.Errorf("results database %s: interval %d of the batch lacks a run ID, phase, op or start time", s.path, i)
		}
		if err := iv.checkCounts(); err != nil {
			return fmt.Errorf("results database %s: run %d's %s %s interval: %v", s.path, iv.RunID, iv.Phase, iv.Op, err)
		}
		enc, err := encodeHist(iv.Hist)
		if err != nil {
			return fmt.Errorf("results database %s: run %d %s %s: %w", s.path, iv.RunID, iv.Phase, iv.Op, err)
		}
		args := []any{iv.RunID, iv.Phase, iv.Op, iv.Start.UnixNano(), int64(iv.Duration),
			iv.Count, iv.Errors, iv.Late, iv.Dropped}
		args = append(args, summarize(iv.Hist).args()...)
		rows[i] = row{append(args, enc), iv}
	}
	const doing = "writing intervals"
	return s.write(doing, nil, func(tx *sql.Tx) error {
		ins, err := tx.Prepare(`INSERT INTO interval (run_id, phase, op, start_ns, duration_ns, count, errors, late, dropped,
			mean_us, p50_us, p90_us, p95_us, p99_us, p999_us, max_us, hist)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return s.fail(doing, err)
		}
		defer ins.Close()
		insErr, err := tx.Prepare(`INSERT INTO interval_error (run_id, phase, op, start_ns, kind, count)
			VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return s.fail(doing, err)
		}
		defer insErr.Close()
		if err := s.insideRuns(tx, ivs); err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := ins.Exec(r.args...); err != nil {
				return s.fail(fmt.Sprintf("writing interval of run %d %s %s", r.iv.RunID, r.iv.Phase, r.iv.Op), err)
			}
			for kind, n := range r.iv.ErrorKinds {
				if _, err := insErr.Exec(r.iv.RunID, r.iv.Phase, r.iv.Op, r.iv.Start.UnixNano(), kind, n); err != nil {
					return s.fail(fmt.Sprintf("writing interval errors of run %d %s %s", r.iv.RunID, r.iv.Phase, r.iv.Op), err)
				}
			}
		}
		return nil
	})
}

// checkCounts refuses counts no interval can have.
func (iv *Interval) checkCounts() error {
	for _, c := range []struct {
		name string
		n    int64
	}{{"count", iv.Count}, {"errors", iv.Errors}, {"late", iv.Late}, {"dropped", iv.Dropped}, {"duration", int64(iv.Duration)}} {
		if c.n < 0 {
			return fmt.Errorf("%s is %d; it cannot be negative", c.name, c.n)
		}
	}
	for kind, n := range iv.ErrorKinds {
		if n < 0 {
			return fmt.Errorf("error count of %s is %d; it cannot be negative", kind, n)
		}
	}
	return nil
}

// insideRuns refuses intervals that start before their run started or
// after it ended. A missing run is left to the foreign key.
func (s *Store) insideRuns(tx *sql.Tx, ivs []Interval) error {
	type span struct {
		start int64
		end   sql.NullInt64
	}
	runs := map[int64]*span{}
	for i := range ivs {
		iv := &ivs[i]
		r, ok := runs[iv.RunID]
		if !ok {
			var sp span
			err := tx.QueryRow(`SELECT start_ns, end_ns FROM run WHERE id = ?`, iv.RunID).Scan(&sp.start, &sp.end)
			if err == sql.ErrNoRows {
				runs[iv.RunID] = nil
				continue
			}
			if err != nil {
				return s.fail("writing intervals", err)
			}
			r = &sp
			runs[iv.RunID] = r
		}
		if r == nil {
			continue
		}
		// Only the start is checked: see check.
		if at := iv.Start.UnixNano(); at < r.start || (r.end.Valid && at > r.end.Int64) {
			return fmt.Errorf("results database %s: run %d's %s %s interval at %s starts outside the run; a run's intervals start inside it",
				s.path, iv.RunID, iv.Phase, iv.Op, iv.Start.UTC().Format(time.RFC3339Nano))
		}
	}
	return nil
}

// AddEvent records an event. RunID 0 stores a campaign-level event (run_id
// NULL); a zero Time is set to now.
func (s *Store) AddEvent(e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	var run any
	if e.RunID != 0 {
		run = e.RunID
	}
	return s.write("writing an event", nil, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO event (run_id, time_ns, kind, detail) VALUES (?, ?, ?, ?)`,
			run, e.Time.UnixNano(), e.Kind, e.Detail); err != nil {
			return s.fail("writing an event", err)
		}
		return nil
	})
}

// MarkRunningInterrupted is for a file whose writing process died (SIGKILL,
// power loss) before it could end its run: every run still marked running
// becomes interrupted with message msg. Its end time is the end of its last
// stored interval (the last moment it is known to have been alive), or its
// start when it has none; its summary stays NULL because it was never
// computed. It returns how many runs it changed. Call it only when no live
// process is writing the file.
func (s *Store) MarkRunningInterrupted(msg string) (int, error) {
	const doing = "marking running runs interrupted"
	var n int64
	err := s.write(doing, nil, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE run SET status = ?, message = ?,
			end_ns = coalesce((SELECT max(start_ns + duration_ns) FROM interval WHERE interval.run_id = run.id), start_ns)
			WHERE status = ?`, StatusInterrupted, msg, StatusRunning)
		if err != nil {
			return s.fail(doing, err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
	return int(n), err
}

// nullTime stores a zero time as NULL (unknown) and any other as unix ns.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}
