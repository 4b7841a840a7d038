package store

import (
	"database/sql"
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// AddSampleStream stores the samples that fill hands to add, batch after
// batch, in one transaction: when fill or a write fails part-way (a
// damaged import file, a full disk), none of them is stored. It is
// AddSamples for imports too large to hold in memory. A batch may be
// reused by the caller once add returns.
func (s *Store) AddSampleStream(runID int64, fill func(add func([]monitor.Sample) error) error) error {
	var run any
	if runID != 0 {
		run = runID
	}
	const doing = "writing resource samples"
	return s.write(doing, nil, func(tx *sql.Tx) error {
		st, err := tx.Prepare(`INSERT INTO sample (run_id, host, resource, metric, start_ns, period_ns, value, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return s.fail(doing, err)
		}
		defer st.Close()
		return fill(func(batch []monitor.Sample) error {
			for _, x := range batch {
				if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
					continue
				}
				if x.Host == "" || x.Resource == "" || x.Metric == "" || x.Source == "" {
					return fmt.Errorf("results database %s: a resource sample needs host, resource, metric and source (got %+v)", s.path, x)
				}
				if _, err := st.Exec(run, x.Host, x.Resource, x.Metric, x.Start.UnixNano(), int64(x.Period), x.Value, x.Source); err != nil {
					return s.fail(doing, err)
				}
			}
			return nil
		})
	})
}
