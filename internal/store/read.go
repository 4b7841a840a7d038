package store

import (
	"database/sql"
	"fmt"
	"time"
)

// fromNS converts stored unix nanoseconds back to a UTC time; NULL is the
// zero time (a run that has not ended).
func fromNS(ns sql.NullInt64) time.Time {
	if !ns.Valid {
		return time.Time{}
	}
	return time.Unix(0, ns.Int64).UTC()
}

// Campaign returns the campaign header.
func (s *Store) Campaign() (Campaign, error) {
	var c Campaign
	var created sql.NullInt64
	err := s.db.QueryRow(`SELECT name, spec_file, spec_yaml, seed, host_json, tool_version, created_ns FROM campaign WHERE id = 1`).
		Scan(&c.Name, &c.SpecFile, &c.SpecYAML, &c.Seed, &c.HostJSON, &c.ToolVersion, &created)
	if err == sql.ErrNoRows {
		return c, fmt.Errorf("results database %s has no campaign row", s.path)
	}
	if err != nil {
		return c, s.fail("reading the campaign", err)
	}
	c.CreatedAt = fromNS(created)
	return c, nil
}

const runColumns = `id, seq, slot, treatment, model, level_index, level, repetition, start_ns, end_ns, status, message,
	sent, completed, errors, late, dropped, unfinished, measure_start_ns, measure_end_ns, measure_secs, throughput, client_cpu_pct, client_limited, client_note`

// Runs returns every run in ID order, including superseded attempts of a
// slot. The summary of a run that never finished reads as zeros. On a
// damaged store (see Check) it returns the *Damaged error instead: every
// report reads the runs first, so none renders such a store into numbers.
func (s *Store) Runs() ([]Run, error) {
	if err := s.damaged(); err != nil {
		return nil, err
	}
	return readAll(s, "reading runs", `SELECT `+runColumns+` FROM run ORDER BY id`, nil, func(rows *sql.Rows) (Run, error) {
		var r Run
		var start, end sql.NullInt64
		var sent, completed, errs, late, dropped, unfinished, mstart, mend sql.NullInt64
		var measure, tput, cpu sql.NullFloat64
		var limited sql.NullBool
		var note sql.NullString
		err := rows.Scan(&r.ID, &r.Seq, &r.Slot, &r.Treatment, &r.Model, &r.LevelIndex, &r.Level, &r.Repetition,
			&start, &end, &r.Status, &r.Message,
			&sent, &completed, &errs, &late, &dropped, &unfinished, &mstart, &mend, &measure, &tput, &cpu, &limited, &note)
		r.Start, r.End = fromNS(start), fromNS(end)
		r.Summary = RunSummary{
			Sent: sent.Int64, Completed: completed.Int64, Errors: errs.Int64, Late: late.Int64,
			Dropped: dropped.Int64, Unfinished: unfinished.Int64,
			MeasureStart: fromNS(mstart), MeasureEnd: fromNS(mend),
			MeasureSecs: measure.Float64, Throughput: tput.Float64, ClientCPU: cpu.Float64,
			ClientLimited: limited.Bool, ClientNote: note.String,
		}
		return r, err
	})
}

// CompletedSlots returns the plan slots that have at least one completed
// run; --resume skips them and reruns the rest.
func (s *Store) CompletedSlots() (map[int]bool, error) {
	rows, err := s.db.Query(`SELECT DISTINCT slot FROM run WHERE status = ?`, StatusCompleted)
	if err != nil {
		return nil, s.fail("reading completed runs", err)
	}
	defer rows.Close()
	slots := map[int]bool{}
	for rows.Next() {
		var slot int
		if err := rows.Scan(&slot); err != nil {
			return nil, s.fail("reading completed runs", err)
		}
		slots[slot] = true
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("reading completed runs", err)
	}
	return slots, nil
}

type intervalKey struct {
	phase, op string
	start     int64
}

// Intervals returns the intervals of run runID ordered by start time then
// operation, restricted to one phase unless phase is "". Histograms are
// decoded and error kinds filled in.
func (s *Store) Intervals(runID int64, phase string) ([]Interval, error) {
	doing := fmt.Sprintf("reading intervals of run %d", runID)
	rows, err := s.db.Query(`SELECT phase, op, start_ns, duration_ns, count, errors, late, dropped, hist
		FROM interval WHERE run_id = ?1 AND (?2 = '' OR phase = ?2) ORDER BY start_ns, op, phase`, runID, phase)
	if err != nil {
		return nil, s.fail(doing, err)
	}
	var ivs []Interval
	index := map[intervalKey]int{}
	for rows.Next() {
		iv := Interval{RunID: runID}
		var start, dur int64
		var hist string
		if err := rows.Scan(&iv.Phase, &iv.Op, &start, &dur, &iv.Count, &iv.Errors, &iv.Late, &iv.Dropped, &hist); err != nil {
			rows.Close()
			return nil, s.fail(doing, err)
		}
		iv.Start, iv.Duration = time.Unix(0, start).UTC(), time.Duration(dur)
		if iv.Hist, err = decodeHist(hist); err != nil {
			rows.Close()
			return nil, fmt.Errorf("results database %s: run %d %s %s at %d: %w", s.path, runID, iv.Phase, iv.Op, start, err)
		}
		index[intervalKey{iv.Phase, iv.Op, start}] = len(ivs)
		ivs = append(ivs, iv)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.fail(doing, err)
	}
	// A second query rather than a join: most intervals have no errors, and
	// the store has one connection, so rows must be closed before it runs.
	erows, err := s.db.Query(`SELECT phase, op, start_ns, kind, count FROM interval_error
		WHERE run_id = ?1 AND (?2 = '' OR phase = ?2)`, runID, phase)
	if err != nil {
		return nil, s.fail(doing, err)
	}
	defer erows.Close()
	for erows.Next() {
		var k intervalKey
		var kind string
		var n int64
		if err := erows.Scan(&k.phase, &k.op, &k.start, &kind, &n); err != nil {
			return nil, s.fail(doing, err)
		}
		if i, ok := index[k]; ok {
			if ivs[i].ErrorKinds == nil {
				ivs[i].ErrorKinds = map[string]int64{}
			}
			ivs[i].ErrorKinds[kind] = n
		}
	}
	if err := erows.Err(); err != nil {
		return nil, s.fail(doing, err)
	}
	return ivs, nil
}

// EachInterval calls fn with each interval of run runID in the order
// Intervals returns them, decoding one at a time into one reused
// histogram: memory stays that of one interval whatever the run's length
// (a reader that keeps something of an interval copies it). The interval
// and its histogram are valid only during the call, and fn must not use
// the store (its one connection is reading the rows). An error from fn
// stops the walk and is returned as it is.
func (s *Store) EachInterval(runID int64, phase string, fn func(*Interval) error) error {
	doing := fmt.Sprintf("reading intervals of run %d", runID)
	// The error kinds first, while the connection is free: only intervals
	// with errors have rows there.
	kinds := map[intervalKey]map[string]int64{}
	erows, err := s.db.Query(`SELECT phase, op, start_ns, kind, count FROM interval_error
		WHERE run_id = ?1 AND (?2 = '' OR phase = ?2)`, runID, phase)
	if err != nil {
		return s.fail(doing, err)
	}
	for erows.Next() {
		var k intervalKey
		var kind string
		var n int64
		if err := erows.Scan(&k.phase, &k.op, &k.start, &kind, &n); err != nil {
			erows.Close()
			return s.fail(doing, err)
		}
		if kinds[k] == nil {
			kinds[k] = map[string]int64{}
		}
		kinds[k][kind] = n
	}
	erows.Close()
	if err := erows.Err(); err != nil {
		return s.fail(doing, err)
	}
	rows, err := s.db.Query(`SELECT phase, op, start_ns, duration_ns, count, errors, late, dropped, hist
		FROM interval WHERE run_id = ?1 AND (?2 = '' OR phase = ?2) ORDER BY start_ns, op, phase`, runID, phase)
	if err != nil {
		return s.fail(doing, err)
	}
	defer rows.Close()
	dec := newHdrDecoder()
	var hist string
	for rows.Next() {
		iv := Interval{RunID: runID}
		var start, dur int64
		if err := rows.Scan(&iv.Phase, &iv.Op, &start, &dur, &iv.Count, &iv.Errors, &iv.Late, &iv.Dropped, &hist); err != nil {
			return s.fail(doing, err)
		}
		iv.Start, iv.Duration = time.Unix(0, start).UTC(), time.Duration(dur)
		if iv.Hist, err = dec.decode(hist); err != nil {
			return fmt.Errorf("results database %s: run %d %s %s at %d: %w", s.path, runID, iv.Phase, iv.Op, start, err)
		}
		iv.ErrorKinds = kinds[intervalKey{iv.Phase, iv.Op, start}]
		iv.sparse = dec.pairs
		if err := fn(&iv); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail(doing, err)
	}
	return nil
}

// Events returns events in time order: all of them when runID is -1, the
// campaign-level ones (not tied to a run) when runID is 0, else those of
// run runID.
func (s *Store) Events(runID int64) ([]Event, error) {
	q := `SELECT coalesce(run_id, 0), time_ns, kind, detail FROM event`
	var args []any
	switch {
	case runID == 0:
		q += ` WHERE run_id IS NULL`
	case runID > 0:
		q += ` WHERE run_id = ?`
		args = append(args, runID)
	}
	return readAll(s, "reading events", q+` ORDER BY time_ns, id`, args, func(rows *sql.Rows) (Event, error) {
		var e Event
		var t int64
		err := rows.Scan(&e.RunID, &t, &e.Kind, &e.Detail)
		e.Time = time.Unix(0, t).UTC()
		return e, err
	})
}
