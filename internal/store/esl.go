package store

import (
	"database/sql"
	"fmt"
	"time"
)

// ESLModel is an expected service level model kept with a campaign, so
// that the pressure analysis (headroom assess, the report) can be re-run
// from the results store alone after the model file is gone (docs/esl.md).
// Models Headroom derives from the lab event are not stored: the event
// holds everything they are made from.
type ESLModel struct {
	Treatment string // "" = every treatment
	Host      string // e.g. db1
	Resource  string // e.g. volume:data, disk:xvdf, cpu, net:eth0
	Origin    string // where it came from, e.g. "file esl-300.yaml", "flag --model"
	Model     string // the model document as JSON (esl.Parse reads it)
	Created   time.Time
}

// The esl_model table came after the first results files; it is created
// on first write, and readers treat a file without it as having no models.
// One model per treatment, host and resource: a later one replaces it.
const eslModelDDL = `CREATE TABLE IF NOT EXISTS esl_model (
	treatment  TEXT    NOT NULL,
	host       TEXT    NOT NULL,
	resource   TEXT    NOT NULL,
	origin     TEXT    NOT NULL,
	model      TEXT    NOT NULL,
	created_ns INTEGER NOT NULL,
	PRIMARY KEY (treatment, host, resource)
)`

// EnsureESLModelTable creates the esl_model table when the file has none,
// so that exporting it from an older file gives an empty table.
func (s *Store) EnsureESLModelTable() error {
	if _, err := s.db.Exec(eslModelDDL); err != nil {
		return s.fail("creating the ESL model table", err)
	}
	return nil
}

// PutESLModel stores m, replacing the model of the same treatment, host
// and resource. A zero Created is set to now.
func (s *Store) PutESLModel(m ESLModel) error {
	if m.Host == "" || m.Resource == "" || m.Model == "" {
		return fmt.Errorf("an ESL model needs a host, a resource and its document; got host %q, resource %q", m.Host, m.Resource)
	}
	if m.Created.IsZero() {
		m.Created = time.Now()
	}
	const doing = "writing an ESL model"
	return s.write(doing, []string{eslModelDDL}, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO esl_model (treatment, host, resource, origin, model, created_ns) VALUES (?, ?, ?, ?, ?, ?)`,
			m.Treatment, m.Host, m.Resource, m.Origin, m.Model, m.Created.UnixNano()); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
}

// ESLModels returns the stored models ordered by treatment, host and
// resource; none when the file has no esl_model table.
func (s *Store) ESLModels() ([]ESLModel, error) {
	const doing = "reading ESL models"
	if ok, err := s.hasTable(doing, "esl_model"); err != nil || !ok {
		return nil, err
	}
	return readAll(s, doing, `SELECT treatment, host, resource, origin, model, created_ns FROM esl_model ORDER BY treatment, host, resource`, nil,
		func(rows *sql.Rows) (ESLModel, error) {
			var m ESLModel
			var created int64
			err := rows.Scan(&m.Treatment, &m.Host, &m.Resource, &m.Origin, &m.Model, &created)
			m.Created = time.Unix(0, created).UTC()
			return m, err
		})
}

// The esl_model table is exportable like the others (see Export); the
// export command lists it once export.go creates it on files without one
// (EnsureESLModelTable), as it does for server_time.
func init() {
	exportTables[ESLModelExportTable] = exportTable{
		cols: []exportCol{plain("treatment", kText), plain("host", kText), plain("resource", kText), plain("origin", kText),
			{name: "model", expr: "model", kind: kJSON}, plain("created_ns", kInt)},
		from: `FROM esl_model ORDER BY treatment, host, resource`,
	}
}

// ESLModelExportTable is the export name of the esl_model table.
const ESLModelExportTable = "esl_models"
