package store

import (
	"database/sql"
	"time"
)

// The closed loop's stall watch (internal/load/stall.go): per run, how many
// clients were watched and above which length the list of quiet periods is
// complete, and the periods of the measured phase in which no request
// completed. The tables are made on first use (a file written before them,
// or without a closed-loop run, has none; schema version 1 either way);
// docs/results-schema.md documents them.
var stallDDL = []string{
	`CREATE TABLE IF NOT EXISTS quiet_watch (
		run_id   INTEGER PRIMARY KEY REFERENCES run(id),
		clients  INTEGER NOT NULL,
		left_clients INTEGER NOT NULL,
		floor_ns INTEGER NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS quiet_period (
		run_id   INTEGER NOT NULL REFERENCES run(id),
		start_ns INTEGER NOT NULL,
		end_ns   INTEGER NOT NULL,
		waiting  INTEGER NOT NULL,
		PRIMARY KEY (run_id, start_ns)
	)`,
}

// QuietWatch is one closed-loop run's stall watch.
type QuietWatch struct {
	RunID   int64
	Clients int           // clients watched
	Left    int           // clients whose silences were read at the end (the others were still in a request)
	Floor   time.Duration // every quiet period at least this long is listed
	Periods []QuietPeriod // in time order
}

// QuietPeriod is a period of a run's measured phase in which no request
// completed; Waiting clients had a request in flight during it.
type QuietPeriod struct {
	Start, End time.Time
	Waiting    int
}

// PutQuietWatch writes (or, for a run written again, replaces) one run's
// stall watch.
func (s *Store) PutQuietWatch(w QuietWatch) error {
	const doing = "writing the closed loop's stall watch"
	return s.write(doing, stallDDL, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO quiet_watch (run_id, clients, left_clients, floor_ns) VALUES (?, ?, ?, ?)`,
			w.RunID, w.Clients, w.Left, w.Floor.Nanoseconds()); err != nil {
			return s.fail(doing, err)
		}
		if _, err := tx.Exec(`DELETE FROM quiet_period WHERE run_id = ?`, w.RunID); err != nil {
			return s.fail(doing, err)
		}
		for _, p := range w.Periods {
			if _, err := tx.Exec(`INSERT INTO quiet_period (run_id, start_ns, end_ns, waiting) VALUES (?, ?, ?, ?)`,
				w.RunID, p.Start.UnixNano(), p.End.UnixNano(), p.Waiting); err != nil {
				return s.fail(doing, err)
			}
		}
		return nil
	})
}

// QuietWatch returns a run's stall watch, or nil when none was recorded
// (an open-loop run, or a file written before the watch existed).
func (s *Store) QuietWatch(runID int64) (*QuietWatch, error) {
	const doing = "reading the closed loop's stall watch"
	if ok, err := s.hasTable(doing, "quiet_watch"); err != nil || !ok {
		return nil, err
	}
	ws, err := readAll(s, doing, `SELECT run_id, clients, left_clients, floor_ns FROM quiet_watch WHERE run_id = ?`, []any{runID},
		func(rows *sql.Rows) (QuietWatch, error) {
			var w QuietWatch
			var floor int64
			err := rows.Scan(&w.RunID, &w.Clients, &w.Left, &floor)
			w.Floor = time.Duration(floor)
			return w, err
		})
	if err != nil || len(ws) == 0 {
		return nil, err
	}
	w := ws[0]
	w.Periods, err = readAll(s, doing, `SELECT start_ns, end_ns, waiting FROM quiet_period WHERE run_id = ? ORDER BY start_ns`, []any{runID},
		func(rows *sql.Rows) (QuietPeriod, error) {
			var p QuietPeriod
			var a, b int64
			err := rows.Scan(&a, &b, &p.Waiting)
			p.Start, p.End = time.Unix(0, a).UTC(), time.Unix(0, b).UTC()
			return p, err
		})
	if err != nil {
		return nil, err
	}
	return &w, nil
}
