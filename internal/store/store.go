package store

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	sqlitedrv "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// busyTimeout bounds how long a statement waits for another connection's
// lock (a reader's checkpoint, a second process) before failing.
const busyTimeout = 10 * time.Second

// Store is an open results database. Its methods are safe for concurrent
// use; they share one SQLite connection, so they run one at a time (writes
// are short transactions, and one connection cannot deadlock with itself).
// Other processes may open the same file and read while it is written (WAL).
type Store struct {
	path string
	db   *sql.DB
	file fileID // the file opened at path, to notice it deleted or replaced

	mu       sync.Mutex
	migrated bool     // migrations are made (at the first write)
	damage   *Damaged // what check found wrong; such a store is neither read nor written
	lost     error    // why the file at path is no longer the one written
}

// Create makes a new results database at path holding campaign c. It never
// overwrites: an existing file is an error, so results are never lost to a
// mistyped path. A zero c.CreatedAt is set to now.
func Create(path string, c Campaign) (*Store, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("results database %s already exists; choose a new path (results are never overwritten)", path)
		}
		return nil, fmt.Errorf("cannot create results database %s: %w", path, err)
	}
	f.Close()
	s, err := openDB(path, "rw", true)
	if err == nil {
		s.migrated = true // the schema includes them
		if s.file, err = statID(path); err == nil {
			err = s.init(c)
		}
	}
	if err != nil {
		if s != nil {
			s.db.Close()
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			os.Remove(p)
		}
		return nil, err
	}
	return s, nil
}

func (s *Store) init(c Campaign) error {
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now()
	}
	c.CreatedAt = c.CreatedAt.UTC()
	return s.write("creating the schema", append(append([]string(nil), schema...), migrations...), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES ('format', ?), ('schema_version', ?)`,
			formatName, strconv.Itoa(SchemaVersion)); err != nil {
			return s.fail("creating the schema", err)
		}
		if _, err := tx.Exec(`INSERT INTO campaign (id, name, spec_file, spec_yaml, seed, host_json, tool_version, created_at, created_ns)
			VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.Name, c.SpecFile, c.SpecYAML, c.Seed, c.HostJSON, c.ToolVersion,
			c.CreatedAt.Format(time.RFC3339Nano), c.CreatedAt.UnixNano()); err != nil {
			return s.fail("writing the campaign", err)
		}
		return nil
	})
}

// Open opens an existing results database for reading and appending. It
// refuses files that are not Headroom results databases and files written
// with a newer schema than this build understands.
func Open(path string) (*Store, error) { return open(path, "rw") }

// open opens an existing results database in SQLite access mode "rw" or
// "ro" (OpenReadOnly).
func open(path, mode string) (*Store, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("results database %s does not exist", path)
	case err != nil:
		return nil, fmt.Errorf("cannot open results database %s: %w", path, err)
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a Headroom results database", path)
	}
	s, err := openDB(path, mode, false)
	if err != nil {
		return nil, err
	}
	err = s.checkFormat()
	if err == nil {
		// The file SQLite opened is the one stat saw, unless it was
		// replaced in between: then neither identity can be trusted.
		s.file, err = statID(path)
		if err == nil && s.file != idOf(fi) {
			err = fmt.Errorf("results database %s was replaced while it was being opened; open it again", path)
		}
	}
	if err == nil {
		s.damage, err = s.check()
	}
	if err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// checkFormat reads the meta table; reading it is also the first access to
// the file, so a non-SQLite file is detected here.
func (s *Store) checkFormat() error {
	notOurs := fmt.Errorf("%s is not a Headroom results database", s.path)
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).Scan(&n)
	if code(err) == sqlite3.SQLITE_NOTADB {
		return fmt.Errorf("%s is not a Headroom results database (not an SQLite file)", s.path)
	}
	if err != nil {
		return s.fail("reading", err)
	}
	if n == 0 {
		return notOurs
	}
	meta := map[string]string{}
	rows, err := s.db.Query(`SELECT key, value FROM meta WHERE key IN ('format', 'schema_version')`)
	if err != nil {
		return notOurs
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return notOurs
		}
		meta[k] = v
	}
	if err := rows.Err(); err != nil {
		return s.fail("reading", err)
	}
	v, err := strconv.Atoi(meta["schema_version"])
	if meta["format"] != formatName || err != nil || v < 1 {
		return notOurs
	}
	if v > SchemaVersion {
		return fmt.Errorf("%s was written by a newer Headroom (results schema version %d; this build reads up to version %d); upgrade Headroom to read it",
			s.path, v, SchemaVersion)
	}
	return nil
}

// openDB opens path as an existing SQLite file in access mode "rw" or "ro"
// (neither creates one).
// Pragmas are in the DSN so that any connection database/sql opens gets
// them: WAL lets readers in other processes read while a run writes;
// synchronous=NORMAL keeps every commit across a process crash (only an OS
// crash or power loss can lose the last commits) at a fraction of FULL's
// fsync cost; foreign keys catch intervals written for a run that does not
// exist.
func openDB(path, mode string, create bool) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open results database %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", mode)
	if create {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	// Writers take the lock at BEGIN, so a transaction never fails halfway
	// on a lock upgrade against another process.
	q.Set("_txlock", "immediate")
	// SQLite decodes %XX in a file: URI; the driver splits the DSN at the
	// first '?', so these must be escaped in the path.
	esc := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(abs)
	db, err := sql.Open("sqlite", "file:"+esc+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("cannot open results database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{path: path, db: db}
	if err := db.Ping(); err != nil {
		db.Close()
		if code(err) == sqlite3.SQLITE_NOTADB {
			return nil, fmt.Errorf("%s is not a Headroom results database (not an SQLite file)", path)
		}
		return nil, s.fail("opening", err)
	}
	return s, nil
}

// Close closes the database; SQLite checkpoints the WAL into the main file.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return s.fail("closing", err)
	}
	return nil
}

// Path is the file name the store was created or opened with.
func (s *Store) Path() string { return s.path }

// code is the primary SQLite result code of err, or 0.
func code(err error) int {
	var e *sqlitedrv.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return 0
}

// fail turns a database error into one sentence naming the file, with the
// likely fix for the errors a user can cause or meet (disk full, read-only
// file, another process holding the lock, damage).
func (s *Store) fail(doing string, err error) error {
	switch code(err) {
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("results database %s: disk full while %s; free space and resume the campaign: %w", s.path, doing, err)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN:
		return fmt.Errorf("results database %s cannot be written while %s; check the file's and its directory's permissions: %w", s.path, doing, err)
	case sqlite3.SQLITE_BUSY:
		return fmt.Errorf("results database %s is locked by another process while %s (waited %s): %w", s.path, doing, busyTimeout, err)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("results database %s is damaged (found while %s): %w", s.path, doing, err)
	case sqlite3.SQLITE_IOERR:
		return fmt.Errorf("results database %s: I/O error while %s; check the disk: %w", s.path, doing, err)
	}
	return fmt.Errorf("results database %s: %s: %w", s.path, doing, err)
}
