package store

import (
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// AddSampleStream stores the samples that fill hands to add, batch after
// batch, in one transaction: when fill or a write fails part-way (a
// damaged import file, a full disk), none of them is stored. It is
// AddSamples for imports too large to hold in memory. A batch may be
// reused by the caller once add returns.
func (s *Store) AddSampleStream(runID int64, fill func(add func([]monitor.Sample) error) error) error {
	const doing = "writing resource samples"
	return s.write(doing, nil, func(tx *sql.Tx) error {
		_, err := s.insertSamples(tx, doing, runID, fill)
		return err
	})
}

// insertSamples inserts what fill hands to add in tx and returns how
// many samples it stored (non-finite values are left out).
func (s *Store) insertSamples(tx *sql.Tx, doing string, runID int64, fill func(add func([]monitor.Sample) error) error) (int, error) {
	var run any
	if runID != 0 {
		run = runID
	}
	st, err := tx.Prepare(`INSERT INTO sample (run_id, host, resource, metric, start_ns, period_ns, value, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return 0, s.fail(doing, err)
	}
	defer st.Close()
	n := 0
	err = fill(func(batch []monitor.Sample) error {
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
			n++
		}
		return nil
	})
	return n, err
}

// importDDL records each file imported into the store by the SHA-256 of
// its content, so that the same file imported again is not counted twice.
var importDDL = []string{
	`CREATE TABLE IF NOT EXISTS imported_file (
		sha256      TEXT    PRIMARY KEY,
		name        TEXT    NOT NULL,
		run_id      INTEGER,
		samples     INTEGER NOT NULL,
		imported_ns INTEGER NOT NULL
	)`,
}

// ImportedFile is one file imported into the store.
type ImportedFile struct {
	SHA256  string // of the file's content
	Name    string
	RunID   int64 // 0: the campaign's
	Samples int
	At      time.Time
}

// FindImport returns the earlier import of a file whose content has this
// SHA-256, if any.
func (s *Store) FindImport(sha256 string) (ImportedFile, bool, error) {
	const doing = "reading the imported files"
	if ok, err := s.hasTable(doing, "imported_file"); err != nil || !ok {
		return ImportedFile{}, false, err
	}
	f := ImportedFile{SHA256: sha256}
	var run sql.NullInt64
	var at int64
	err := s.db.QueryRow(`SELECT name, run_id, samples, imported_ns FROM imported_file WHERE sha256 = ?`, sha256).Scan(&f.Name, &run, &f.Samples, &at)
	if err == sql.ErrNoRows {
		return ImportedFile{}, false, nil
	}
	if err != nil {
		return ImportedFile{}, false, s.fail(doing, err)
	}
	f.RunID, f.At = run.Int64, time.Unix(0, at).UTC()
	return f, true, nil
}

// AddImport stores an imported file's samples as AddSampleStream does and
// records the file (f: its SHA-256 and name) in the same transaction, so
// that either both are stored or neither. A second import of the same
// content fails on the record's key.
func (s *Store) AddImport(runID int64, f ImportedFile, fill func(add func([]monitor.Sample) error) error) error {
	const doing = "writing an imported file's samples"
	return s.write(doing, importDDL, func(tx *sql.Tx) error {
		n, err := s.insertSamples(tx, doing, runID, fill)
		if err != nil {
			return err
		}
		var run any
		if runID != 0 {
			run = runID
		}
		if _, err := tx.Exec(`INSERT INTO imported_file (sha256, name, run_id, samples, imported_ns) VALUES (?, ?, ?, ?, ?)`,
			f.SHA256, f.Name, run, n, time.Now().UnixNano()); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
}
