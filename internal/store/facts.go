package store

import (
	"database/sql"
	"time"
)

// The fact tables hold the normalised facts every analysis needs, written
// at run time so that reading results never depends on today's spec
// parser: one row per treatment (its load model, levels, SLO, workload
// summary, target and analysis settings) and the limits of every host as a
// time series (a limit change mid-run adds a row from that moment).
// Results files written before these tables existed have none; the
// results package reads their stored spec text instead (internal/results).
var factDDL = []string{
	`CREATE TABLE IF NOT EXISTS treatment (
		name         TEXT    PRIMARY KEY,
		ord          INTEGER NOT NULL,
		model        TEXT    NOT NULL,
		target_type  TEXT    NOT NULL,
		in_process   INTEGER NOT NULL,
		address      TEXT    NOT NULL,
		slo_percentile   REAL,
		slo_threshold_ns INTEGER,
		slo_op           TEXT,
		facts        TEXT    NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS host_limit (
		host     TEXT    NOT NULL,
		from_ns  INTEGER NOT NULL,
		seq      INTEGER NOT NULL,
		lab      TEXT    NOT NULL,
		type     TEXT    NOT NULL,
		address  TEXT    NOT NULL,
		vcpus    REAL    NOT NULL,
		memory_bytes INTEGER NOT NULL,
		network_mbit REAL NOT NULL,
		price_per_hour REAL NOT NULL,
		stopped   INTEGER NOT NULL,
		link_down INTEGER NOT NULL,
		cause     TEXT    NOT NULL,
		volumes   TEXT    NOT NULL,
		PRIMARY KEY (host, from_ns, seq)
	)`,
}

// TreatmentRow is one row of the treatment table. Facts is a JSON document
// whose shape the results package owns (results.Treatment); the columns
// beside it repeat the facts most queries filter on.
type TreatmentRow struct {
	Name          string // "" for a campaign without treatments
	Ord           int    // position in the spec
	Model         string // "open" | "closed"
	TargetType    string
	InProcess     bool
	Address       string        // host:port of a networked target, "" otherwise
	SLOPercentile float64       // 0 = no SLO
	SLOThreshold  time.Duration //
	SLOOp         string
	Facts         string // JSON
}

// HostLimitRow is one host's limits from From on, until the next row of
// the same host. Volumes is a JSON list the results package owns.
type HostLimitRow struct {
	Host         string
	From         time.Time
	Seq          int // orders rows of one host written at the same instant
	Lab          string
	Type         string // instance type ("" for a host that has none)
	Address      string
	VCPUs        float64 // 0 = unlimited
	MemoryBytes  int64   // 0 = unlimited
	NetworkMbit  float64 // 0 = unlimited
	PricePerHour float64
	Stopped      bool
	LinkDown     bool
	Cause        string // what set these limits: "up", "set_volume", ...
	Volumes      string // JSON
}

// HasFacts reports whether the file has the fact tables (files written
// before they existed have not).
func (s *Store) HasFacts() (bool, error) {
	return s.hasTable("reading the treatment facts", "treatment")
}

// PutTreatment writes (or, on a resumed campaign, replaces) one
// treatment's facts.
func (s *Store) PutTreatment(r TreatmentRow) error {
	const doing = "writing the treatment facts"
	return s.write(doing, factDDL, func(tx *sql.Tx) error {
		var pct, thr, op any
		if r.SLOPercentile > 0 {
			pct, thr, op = r.SLOPercentile, r.SLOThreshold.Nanoseconds(), r.SLOOp
		}
		if _, err := tx.Exec(`INSERT OR REPLACE INTO treatment (name, ord, model, target_type, in_process, address, slo_percentile, slo_threshold_ns, slo_op, facts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.Name, r.Ord, r.Model, r.TargetType, r.InProcess, r.Address, pct, thr, op, r.Facts); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
}

// AddHostLimits appends rows to the hosts' limit series.
func (s *Store) AddHostLimits(rows []HostLimitRow) error {
	const doing = "writing host limits"
	return s.write(doing, factDDL, func(tx *sql.Tx) error {
		for _, r := range rows {
			// seq keeps two rows of one host at one instant apart and ordered.
			var seq int
			if err := tx.QueryRow(`SELECT coalesce(max(seq) + 1, 0) FROM host_limit WHERE host = ? AND from_ns = ?`,
				r.Host, r.From.UnixNano()).Scan(&seq); err != nil {
				return s.fail(doing, err)
			}
			if _, err := tx.Exec(`INSERT INTO host_limit (host, from_ns, seq, lab, type, address, vcpus, memory_bytes, network_mbit, price_per_hour, stopped, link_down, cause, volumes)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.Host, r.From.UnixNano(), seq, r.Lab, r.Type, r.Address, r.VCPUs, r.MemoryBytes, r.NetworkMbit, r.PricePerHour,
				r.Stopped, r.LinkDown, r.Cause, r.Volumes); err != nil {
				return s.fail(doing, err)
			}
		}
		return nil
	})
}

// TreatmentRows returns the treatment facts in spec order; none when the
// file has no fact tables.
func (s *Store) TreatmentRows() ([]TreatmentRow, error) {
	if ok, err := s.HasFacts(); err != nil || !ok {
		return nil, err
	}
	return readAll(s, "reading the treatment facts", `SELECT name, ord, model, target_type, in_process, address, slo_percentile, slo_threshold_ns, coalesce(slo_op, ''), facts
		FROM treatment ORDER BY ord, name`, nil, func(rows *sql.Rows) (TreatmentRow, error) {
		var r TreatmentRow
		var pct sql.NullFloat64
		var thr sql.NullInt64
		err := rows.Scan(&r.Name, &r.Ord, &r.Model, &r.TargetType, &r.InProcess, &r.Address, &pct, &thr, &r.SLOOp, &r.Facts)
		r.SLOPercentile, r.SLOThreshold = pct.Float64, time.Duration(thr.Int64)
		return r, err
	})
}

// HostLimitRows returns every host's limit series, ordered by host, time
// and seq; none when the file has no fact tables.
func (s *Store) HostLimitRows() ([]HostLimitRow, error) {
	if ok, err := s.HasFacts(); err != nil || !ok {
		return nil, err
	}
	return readAll(s, "reading host limits", `SELECT host, from_ns, seq, lab, type, address, vcpus, memory_bytes, network_mbit, price_per_hour, stopped, link_down, cause, volumes
		FROM host_limit ORDER BY host, from_ns, seq`, nil, func(rows *sql.Rows) (HostLimitRow, error) {
		var r HostLimitRow
		var from int64
		err := rows.Scan(&r.Host, &from, &r.Seq, &r.Lab, &r.Type, &r.Address, &r.VCPUs, &r.MemoryBytes, &r.NetworkMbit,
			&r.PricePerHour, &r.Stopped, &r.LinkDown, &r.Cause, &r.Volumes)
		r.From = time.Unix(0, from).UTC()
		return r, err
	})
}
