package store

import (
	"database/sql"
	"time"
)

// The load generator's client-side delay per run (internal/load/clientdelay.go):
// how long its goroutines waited for a processor once runnable, over the
// measured phase. The table is made on first use (a file written before
// it has none; schema version 1 either way); docs/results-schema.md
// documents it.
var clientDelayDDL = []string{
	`CREATE TABLE IF NOT EXISTS client_delay (
		run_id  INTEGER PRIMARY KEY REFERENCES run(id),
		samples INTEGER NOT NULL,
		p50_ns  INTEGER NOT NULL,
		p99_ns  INTEGER NOT NULL
	)`,
}

// ClientDelay is one run's client-side delay: Samples wake-ups sampled by
// the Go runtime, and the median and 99th percentile of their waits.
type ClientDelay struct {
	RunID    int64
	Samples  int64
	P50, P99 time.Duration
}

// PutClientDelay writes (or, for a run written again, replaces) one run's
// client-side delay.
func (s *Store) PutClientDelay(d ClientDelay) error {
	const doing = "writing the run's client-side delay"
	return s.write(doing, clientDelayDDL, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO client_delay (run_id, samples, p50_ns, p99_ns) VALUES (?, ?, ?, ?)`,
			d.RunID, d.Samples, d.P50.Nanoseconds(), d.P99.Nanoseconds()); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
}

// ClientDelays returns every run's client-side delay by run ID; empty for
// a file written before the figure existed.
func (s *Store) ClientDelays() (map[int64]ClientDelay, error) {
	const doing = "reading the runs' client-side delay"
	if ok, err := s.hasTable(doing, "client_delay"); err != nil || !ok {
		return nil, err
	}
	ds, err := readAll(s, doing, `SELECT run_id, samples, p50_ns, p99_ns FROM client_delay`, nil,
		func(rows *sql.Rows) (ClientDelay, error) {
			var d ClientDelay
			var p50, p99 int64
			err := rows.Scan(&d.RunID, &d.Samples, &p50, &p99)
			d.P50, d.P99 = time.Duration(p50), time.Duration(p99)
			return d, err
		})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]ClientDelay, len(ds))
	for _, d := range ds {
		out[d.RunID] = d
	}
	return out, nil
}
