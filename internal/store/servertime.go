package store

import (
	"database/sql"
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
	const doing = "writing server times"
	return s.write(doing, []string{serverTimeDDL}, func(tx *sql.Tx) error {
		for _, x := range xs {
			if _, err := tx.Exec(`INSERT INTO server_time (run_id, op, start_ns, duration_ns, calls, exec_ns) VALUES (?, ?, ?, ?, ?, ?)`,
				x.RunID, x.Op, x.Start.UnixNano(), int64(x.Duration), x.Calls, int64(x.Exec)); err != nil {
				return s.fail(doing, err)
			}
		}
		return nil
	})
}

// ServerTimes returns the server timings of a run (every run when runID is
// -1), ordered by run, op and start.
func (s *Store) ServerTimes(runID int64) ([]ServerInterval, error) {
	const doing = "reading server times"
	if ok, err := s.hasTable(doing, "server_time"); err != nil || !ok {
		return nil, err
	}
	q := `SELECT run_id, op, start_ns, duration_ns, calls, exec_ns FROM server_time`
	var args []any
	if runID >= 0 {
		q += ` WHERE run_id = ?`
		args = append(args, runID)
	}
	return readAll(s, doing, q+` ORDER BY run_id, op, start_ns`, args, func(rows *sql.Rows) (ServerInterval, error) {
		var x ServerInterval
		var start, dur, exec int64
		err := rows.Scan(&x.RunID, &x.Op, &start, &dur, &x.Calls, &exec)
		x.Start, x.Duration, x.Exec = time.Unix(0, start), time.Duration(dur), time.Duration(exec)
		return x, err
	})
}
