package store

import (
	"time"
)

// ServerInterval is the server's own account of one operation during one
// interval of a run: how many statements it executed and how long it spent
// executing them (seed-digest §2: network delay = client response time minus
// server execution time). It comes from the target (pg_stat_statements,
// performance_schema) when the target offers it.
type ServerInterval struct {
	RunID    int64
	Op       string
	Start    time.Time
	Duration time.Duration
	Calls    int64
	Exec     time.Duration // summed execution time of Calls statements
}

// The server_time table came after the first results files; it is created
// on first use, and readers treat a file without it as having no server
// times. Older Headroom builds ignore it.
const serverTimeDDL = `CREATE TABLE IF NOT EXISTS server_time (
	run_id      INTEGER NOT NULL REFERENCES run (id),
	op          TEXT    NOT NULL,
	start_ns    INTEGER NOT NULL,
	duration_ns INTEGER NOT NULL,
	calls       INTEGER NOT NULL,
	exec_ns     INTEGER NOT NULL
)`

// AddServerTimes stores server-side timings in one transaction.
func (s *Store) AddServerTimes(xs []ServerInterval) error {
	if len(xs) == 0 {
		return nil
	}
	tx, err := s.db.Begin()
	if err != nil {
		return s.fail("writing server times", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(serverTimeDDL); err != nil {
		return s.fail("writing server times", err)
	}
	for _, x := range xs {
		if _, err := tx.Exec(`INSERT INTO server_time (run_id, op, start_ns, duration_ns, calls, exec_ns) VALUES (?, ?, ?, ?, ?, ?)`,
			x.RunID, x.Op, x.Start.UnixNano(), int64(x.Duration), x.Calls, int64(x.Exec)); err != nil {
			return s.fail("writing server times", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail("writing server times", err)
	}
	return nil
}

// ServerTimes returns the server timings of a run (every run when runID is
// -1), ordered by run, op and start.
func (s *Store) ServerTimes(runID int64) ([]ServerInterval, error) {
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'server_time'`).Scan(&n); err != nil {
		return nil, s.fail("reading server times", err)
	}
	if n == 0 {
		return nil, nil
	}
	q := `SELECT run_id, op, start_ns, duration_ns, calls, exec_ns FROM server_time`
	var args []any
	if runID >= 0 {
		q += ` WHERE run_id = ?`
		args = append(args, runID)
	}
	rows, err := s.db.Query(q+` ORDER BY run_id, op, start_ns`, args...)
	if err != nil {
		return nil, s.fail("reading server times", err)
	}
	defer rows.Close()
	var out []ServerInterval
	for rows.Next() {
		var x ServerInterval
		var start, dur, exec int64
		if err := rows.Scan(&x.RunID, &x.Op, &start, &dur, &x.Calls, &exec); err != nil {
			return nil, s.fail("reading server times", err)
		}
		x.Start, x.Duration, x.Exec = time.Unix(0, start), time.Duration(dur), time.Duration(exec)
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("reading server times", err)
	}
	return out, nil
}
