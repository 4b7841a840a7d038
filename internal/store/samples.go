package store

import (
	"database/sql"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// AddSamples stores resource samples in one transaction. runID ties them to
// the run during which they were taken; 0 stores them for the campaign (for
// example data imported from iostat or CloudWatch). Values that are NaN or
// infinite are skipped: they carry no measurement.
func (s *Store) AddSamples(runID int64, samples []monitor.Sample) error {
	if len(samples) == 0 {
		return nil
	}
	return s.AddSampleStream(runID, func(add func([]monitor.Sample) error) error { return add(samples) })
}

// SampleFilter selects samples; empty fields match everything. RunID -1
// matches every run and none; 0 matches samples not tied to a run.
type SampleFilter struct {
	RunID    int64
	Host     string
	Resource string
	Metric   string
	Source   string
	From, To time.Time // start time window [From, To); zero = unbounded
}

// sampleQuery is the query of Samples and its arguments.
func sampleQuery(f SampleFilter) (string, []any) {
	q := `SELECT host, resource, metric, start_ns, period_ns, value, source FROM sample WHERE 1 = 1`
	var args []any
	switch {
	case f.RunID == 0:
		q += ` AND run_id IS NULL`
	case f.RunID > 0:
		q += ` AND run_id = ?`
		args = append(args, f.RunID)
	}
	for _, c := range []struct{ col, v string }{{"host", f.Host}, {"resource", f.Resource}, {"metric", f.Metric}, {"source", f.Source}} {
		if c.v != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	// Within one run the samples are read through the index in the order
	// returned (sample_run_series): the unary + keeps SQLite from choosing
	// the time index for a window and sorting the run's samples after it.
	col := "start_ns"
	if f.RunID > 0 {
		col = "+start_ns"
	}
	if !f.From.IsZero() {
		q += ` AND ` + col + ` >= ?`
		args = append(args, f.From.UnixNano())
	}
	if !f.To.IsZero() {
		q += ` AND ` + col + ` < ?`
		args = append(args, f.To.UnixNano())
	}
	q += ` ORDER BY host, resource, metric, start_ns`
	return q, args
}

// Samples returns the samples matching f, ordered by host, resource,
// metric and start time.
func (s *Store) Samples(f SampleFilter) ([]monitor.Sample, error) {
	q, args := sampleQuery(f)
	rows, err := s.db.Query(q, args...)
	if err != nil {
		return nil, s.fail("reading resource samples", err)
	}
	defer rows.Close()
	var out []monitor.Sample
	for rows.Next() {
		var x monitor.Sample
		var start, period int64
		if err := rows.Scan(&x.Host, &x.Resource, &x.Metric, &start, &period, &x.Value, &x.Source); err != nil {
			return nil, s.fail("reading resource samples", err)
		}
		x.Start = time.Unix(0, start).UTC()
		x.Period = time.Duration(period)
		out = append(out, x)
	}
	if err := rows.Err(); err != nil && err != sql.ErrNoRows {
		return nil, s.fail("reading resource samples", err)
	}
	return out, nil
}
