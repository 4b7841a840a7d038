// Package sqlite is the embedded default system under test: an SQLite
// database in the Headroom process (pure-Go driver modernc.org/sqlite). The
// YCSB workload maps to one table with a text primary key and one BLOB
// column per field, as YCSB's JDBC binding lays it out.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	sqlitedrv "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	registry.Register(registry.Factory{
		Name:       "sqlite",
		Summary:    "embedded SQLite database in the Headroom process (the default system under test)",
		InProcess:  true,
		NewOptions: func() any { return defaultOptions() },
		Validate:   validate,
		Open: func(o any, env registry.Env) (target.Target, error) {
			t, err := Open(*o.(*Options), env.Dir)
			if err != nil {
				// Not a nil *Target in the interface: the campaign's
				// cleanup would close it (issue 36).
				return nil, err
			}
			return t, nil
		},
	})
}

// Target is an open SQLite database.
type Target struct {
	opts Options
	path string
	db   *sql.DB
	ycsb *sqlycsb.Prepared // YCSB workloads
	work *workStmts        // statement workloads
}

// Open opens (creating when missing) the database file named by opts, with
// relative paths resolved against dir.
func Open(opts Options, dir string) (*Target, error) {
	path := opts.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode("+strings.ToUpper(opts.JournalMode)+")")
	q.Add("_pragma", "synchronous("+strings.ToUpper(opts.Synchronous)+")")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", opts.CacheSizeKiB))
	// Read-modify-write and population run in transactions that write; taking
	// the write lock at BEGIN avoids lock-upgrade deadlocks between them.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite target: opening %s: %w", path, err)
	}
	db.SetMaxOpenConns(opts.Connections)
	db.SetMaxIdleConns(opts.Connections)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite target: cannot open database file %s: %w", path, err)
	}
	return &Target{opts: opts, path: path, db: db}, nil
}

// Path is the database file.
func (t *Target) Path() string { return t.path }

// Prepare creates the YCSB table for w, dropping an existing one when
// fresh; for a statement workload it creates the data set's tables instead
// (see internal/sqlwork) and prepares the statements.
func (t *Target) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	t.closeStatements()
	if w.IsStatements() {
		if err := sqlwork.Setup(ctx, t.db, sqlwork.SQLite, w.Dataset, fresh); err != nil {
			return fmt.Errorf("sqlite target: %w", err)
		}
		ws, err := prepareWork(ctx, t.db, w.Statements)
		if err != nil {
			return err
		}
		t.work = ws
		return nil
	}
	tbl := t.opts.Table
	if fresh {
		if _, err := t.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+tbl); err != nil {
			return fmt.Errorf("sqlite target: dropping table %s: %w", tbl, err)
		}
	}
	if _, err := t.db.ExecContext(ctx, sqlycsb.SQLite.CreateTable(tbl, w.FieldCount)); err != nil {
		return fmt.Errorf("sqlite target: creating table %s: %w", tbl, err)
	}
	p, err := sqlycsb.Prepare(ctx, t.db, sqlycsb.SQLite.Statements(tbl, w.FieldCount), false, kindOf)
	if err != nil {
		return err
	}
	t.ycsb = p
	return nil
}

// closeStatements closes what the last Prepare prepared.
func (t *Target) closeStatements() {
	if t.ycsb != nil {
		t.ycsb.Close()
		t.ycsb = nil
	}
	if t.work != nil {
		t.work.close()
		t.work = nil
	}
}

// LoadDataset implements target.DatasetLoader: it fills the tables of a
// statement workload's data set.
func (t *Target) LoadDataset(ctx context.Context, w workload.Config, seed uint64, progress func(done, total int64)) error {
	if err := sqlwork.Populate(ctx, t.db, sqlwork.SQLite, w.Dataset, seed, progress); err != nil {
		return fmt.Errorf("sqlite target: %w", err)
	}
	return nil
}

// NewClient returns a client; all clients share the connection pool.
func (t *Target) NewClient(context.Context) (target.Client, error) {
	switch {
	case t.work != nil:
		return newWorkClient(t.work), nil
	case t.ycsb != nil:
		return sqlycsb.NewClient(t.ycsb), nil
	}
	return nil, errors.New("sqlite target: Prepare must run before clients are opened")
}

// Close closes the database.
func (t *Target) Close() error {
	t.closeStatements()
	return t.db.Close()
}

// kindOf names SQLite errors that users need to tell apart in the results.
func kindOf(err error) error {
	var se *sqlitedrv.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return &target.KindError{K: "busy", Err: err}
		case sqlite3.SQLITE_CONSTRAINT:
			return &target.KindError{K: "constraint", Err: err}
		case sqlite3.SQLITE_FULL:
			return &target.KindError{K: "disk_full", Err: err}
		}
	}
	return err
}
