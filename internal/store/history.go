package store

import (
	"database/sql"

	"github.com/headroom-dev/headroom/internal/history"
)

// The operation history of a consistency run (internal/history): one row
// per operation a client session invoked, in the order the run recorded
// them. The table is made on first use (a file written before it has
// none); docs/consistency.md ("History format") documents it.
var historyDDL = []string{
	`CREATE TABLE IF NOT EXISTS history_op (
		id          INTEGER PRIMARY KEY,
		run_id      INTEGER NOT NULL REFERENCES run(id),
		process     INTEGER NOT NULL,
		kind        TEXT NOT NULL,
		key         TEXT NOT NULL,
		value       INTEGER NOT NULL,
		invoke_ns   INTEGER NOT NULL,
		complete_ns INTEGER NOT NULL,
		outcome     TEXT NOT NULL,
		replica     TEXT NOT NULL DEFAULT '',
		level       TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS history_op_run ON history_op (run_id, id)`,
}

// AppendHistory adds ops to run runID's history, all in one transaction;
// a run may append in several batches, and History returns them in the
// order they were appended.
func (s *Store) AppendHistory(runID int64, ops []history.Op) error {
	const doing = "writing the run's operation history"
	return s.write(doing, historyDDL, func(tx *sql.Tx) error {
		st, err := tx.Prepare(`INSERT INTO history_op
			(run_id, process, kind, key, value, invoke_ns, complete_ns, outcome, replica, level)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return s.fail(doing, err)
		}
		defer st.Close()
		for _, o := range ops {
			if _, err := st.Exec(runID, o.Process, o.Kind, o.Key, o.Value, o.InvokeNS, o.CompleteNS,
				o.Outcome, o.Replica, o.Level); err != nil {
				return s.fail(doing, err)
			}
		}
		return nil
	})
}

// History returns run runID's operation history in the order it was
// appended; empty for a run without one or a file written before the
// table existed.
func (s *Store) History(runID int64) ([]history.Op, error) {
	const doing = "reading the run's operation history"
	if ok, err := s.hasTable(doing, "history_op"); err != nil || !ok {
		return nil, err
	}
	return readAll(s, doing, `SELECT process, kind, key, value, invoke_ns, complete_ns, outcome, replica, level
		FROM history_op WHERE run_id = ? ORDER BY id`, []any{runID},
		func(rows *sql.Rows) (history.Op, error) {
			var o history.Op
			err := rows.Scan(&o.Process, &o.Kind, &o.Key, &o.Value, &o.InvokeNS, &o.CompleteNS,
				&o.Outcome, &o.Replica, &o.Level)
			return o, err
		})
}

// HistoryRuns returns the IDs of the runs that have an operation history,
// in ascending order.
func (s *Store) HistoryRuns() ([]int64, error) {
	const doing = "listing the runs with an operation history"
	if ok, err := s.hasTable(doing, "history_op"); err != nil || !ok {
		return nil, err
	}
	return readAll(s, doing, `SELECT DISTINCT run_id FROM history_op ORDER BY run_id`, nil,
		func(rows *sql.Rows) (int64, error) {
			var id int64
			err := rows.Scan(&id)
			return id, err
		})
}
