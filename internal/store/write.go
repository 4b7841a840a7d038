package store

import (
	"database/sql"
	"fmt"
	"time"
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
	res, err := s.db.Exec(`INSERT INTO run (seq, slot, treatment, model, level_index, level, repetition, start_ns, status, message)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Seq, r.Slot, r.Treatment, r.Model, r.LevelIndex, r.Level, r.Repetition,
		r.Start.UnixNano(), StatusRunning, r.Message)
	if err != nil {
		return 0, s.fail("starting a run", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, s.fail("starting a run", err)
	}
	return id, nil
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
	res, err := s.db.Exec(`UPDATE run SET status = ?, message = ?, end_ns = ?,
		sent = ?, completed = ?, errors = ?, late = ?, dropped = ?, unfinished = ?,
		measure_start_ns = ?, measure_end_ns = ?,
		measure_secs = ?, throughput = ?, client_cpu_pct = ?, client_limited = ?, client_note = ?
		WHERE id = ?`,
		status, message, end.UnixNano(),
		sum.Sent, sum.Completed, sum.Errors, sum.Late, sum.Dropped, sum.Unfinished,
		nullTime(sum.MeasureStart), nullTime(sum.MeasureEnd),
		sum.MeasureSecs, sum.Throughput, sum.ClientCPU, sum.ClientLimited, sum.ClientNote,
		id)
	if err != nil {
		return s.fail(fmt.Sprintf("finishing run %d", id), err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("results database %s: cannot finish run %d: no such run", s.path, id)
	}
	return nil
}

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
	if _, err := s.db.Exec(`INSERT INTO event (run_id, time_ns, kind, detail) VALUES (?, ?, ?, ?)`,
		run, e.Time.UnixNano(), e.Kind, e.Detail); err != nil {
		return s.fail("writing an event", err)
	}
	return nil
}

// MarkRunningInterrupted is for a file whose writing process died (SIGKILL,
// power loss) before it could end its run: every run still marked running
// becomes interrupted with message msg. Its end time is the end of its last
// stored interval (the last moment it is known to have been alive), or its
// start when it has none; its summary stays NULL because it was never
// computed. It returns how many runs it changed. Call it only when no live
// process is writing the file.
func (s *Store) MarkRunningInterrupted(msg string) (int, error) {
	res, err := s.db.Exec(`UPDATE run SET status = ?, message = ?,
		end_ns = coalesce((SELECT max(start_ns + duration_ns) FROM interval WHERE interval.run_id = run.id), start_ns)
		WHERE status = ?`, StatusInterrupted, msg, StatusRunning)
	if err != nil {
		return 0, s.fail("marking running runs interrupted", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.fail("marking running runs interrupted", err)
	}
	return int(n), nil
}

// nullTime stores a zero time as NULL (unknown) and any other as unix ns.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}
