package store

// SchemaVersion is the version of the results schema this build writes and
// the newest it reads. Bump it on any incompatible change and teach Open to
// read (or migrate) the older versions; a file with a newer version is
// refused rather than misread.
const SchemaVersion = 1

// migrations are additive changes to a version 1 file that need no new
// version: an older build still reads and writes a file that has them (and
// SQLite holds it to them too). Create makes them with the schema; an
// existing file gets them at its first write, so a reader never changes
// the file it reads. Each statement must be idempotent.
var migrations = []string{
	// One completed run per plan slot: a second process resuming the same
	// campaign (or any other writer) cannot complete a slot twice. Slots
	// are campaign-wide (treatment i's start at i x SlotsPerTreatment); the
	// treatment is in the key as the reports group runs by (treatment, slot).
	`CREATE UNIQUE INDEX IF NOT EXISTS run_completed_slot ON run (treatment, slot) WHERE status = 'completed'`,
	// A run's samples in the order Samples returns them: without it every
	// read of a run's samples sorted them in a temporary B-tree, and a
	// report reads them several times.
	`CREATE INDEX IF NOT EXISTS sample_run_series ON sample (run_id, host, resource, metric, start_ns)`,
}

// formatName marks a file as a Headroom results database in the meta table,
// so Open can tell our files from any other SQLite file.
const formatName = "headroom-results"

// schema is the version 1 DDL; docs/results-schema.md documents every column.
// Times are unix nanoseconds (UTC); latencies are microseconds. Summary
// columns of a run are NULL until the run ends, and interval percentile
// columns are NULL when the interval has no successful request.
var schema = []string{
	`CREATE TABLE meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	)`,
	`CREATE TABLE campaign (
		id           INTEGER PRIMARY KEY CHECK (id = 1),
		name         TEXT    NOT NULL,
		spec_file    TEXT    NOT NULL,
		spec_yaml    TEXT    NOT NULL,
		seed         INTEGER NOT NULL,
		host_json    TEXT    NOT NULL,
		tool_version TEXT    NOT NULL,
		created_at   TEXT    NOT NULL,
		created_ns   INTEGER NOT NULL
	)`,
	`CREATE TABLE run (
		id             INTEGER PRIMARY KEY,
		seq            INTEGER NOT NULL,
		slot           INTEGER NOT NULL,
		treatment      TEXT    NOT NULL,
		model          TEXT    NOT NULL,
		level_index    INTEGER NOT NULL,
		level          REAL    NOT NULL,
		repetition     INTEGER NOT NULL,
		start_ns       INTEGER NOT NULL,
		end_ns         INTEGER,
		status         TEXT    NOT NULL,
		message        TEXT    NOT NULL,
		sent           INTEGER,
		completed      INTEGER,
		errors         INTEGER,
		late           INTEGER,
		dropped        INTEGER,
		unfinished     INTEGER,
		measure_start_ns INTEGER,
		measure_end_ns   INTEGER,
		measure_secs   REAL,
		throughput     REAL,
		client_cpu_pct REAL,
		client_limited INTEGER,
		client_note    TEXT
	)`,
	`CREATE INDEX run_slot_status ON run (slot, status)`,
	`CREATE TABLE interval (
		run_id      INTEGER NOT NULL REFERENCES run (id),
		phase       TEXT    NOT NULL,
		op          TEXT    NOT NULL,
		start_ns    INTEGER NOT NULL,
		duration_ns INTEGER NOT NULL,
		count       INTEGER NOT NULL,
		errors      INTEGER NOT NULL,
		late        INTEGER NOT NULL,
		dropped     INTEGER NOT NULL,
		mean_us     REAL,
		p50_us      INTEGER,
		p90_us      INTEGER,
		p95_us      INTEGER,
		p99_us      INTEGER,
		p999_us     INTEGER,
		max_us      INTEGER,
		hist        TEXT    NOT NULL,
		PRIMARY KEY (run_id, phase, op, start_ns)
	)`,
	`CREATE INDEX interval_run_start ON interval (run_id, start_ns)`,
	`CREATE TABLE interval_error (
		run_id   INTEGER NOT NULL,
		phase    TEXT    NOT NULL,
		op       TEXT    NOT NULL,
		start_ns INTEGER NOT NULL,
		kind     TEXT    NOT NULL,
		count    INTEGER NOT NULL,
		PRIMARY KEY (run_id, phase, op, start_ns, kind),
		FOREIGN KEY (run_id, phase, op, start_ns)
			REFERENCES interval (run_id, phase, op, start_ns)
	)`,
	`CREATE TABLE event (
		id      INTEGER PRIMARY KEY,
		run_id  INTEGER REFERENCES run (id),
		time_ns INTEGER NOT NULL,
		kind    TEXT    NOT NULL,
		detail  TEXT    NOT NULL
	)`,
	`CREATE INDEX event_run_time ON event (run_id, time_ns)`,
	`CREATE TABLE sample (
		run_id    INTEGER REFERENCES run (id),
		host      TEXT    NOT NULL,
		resource  TEXT    NOT NULL,
		metric    TEXT    NOT NULL,
		start_ns  INTEGER NOT NULL,
		period_ns INTEGER NOT NULL,
		value     REAL    NOT NULL,
		source    TEXT    NOT NULL
	)`,
	`CREATE INDEX sample_series ON sample (host, resource, metric, start_ns)`,
	`CREATE INDEX sample_run ON sample (run_id, start_ns)`,
}
