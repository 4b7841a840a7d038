// Package pgstore keeps a team's results stores in one PostgreSQL database:
// Push copies a results store (the SQLite file a campaign writes) into it,
// and Materialize copies one campaign back out into a fresh store file, so
// that every reader of results (report, plan, explore, assess, bottleneck)
// reads a shared campaign exactly as it reads a local file.
//
// Layout in PostgreSQL (schema "headroom"): one table per table of the
// SQLite store, with the same name and columns plus campaign_id and _rowid
// (the row's SQLite rowid, so rows come back in the order they were
// written); _campaigns lists the pushed campaigns; _tables keeps, per
// campaign and store table, its SQLite DDL, row count and fingerprint. The
// DDL is what Materialize runs, so a campaign comes back with the schema it
// was written with, whatever version of Headroom pushed it.
//
// Credentials come only from the environment (PGPASSWORD, PGPASSFILE,
// ~/.pgpass), a passfile= parameter of the URL, or a password file the
// caller names; a URL that carries a password is refused, and the password
// never appears in an error, the store or the output.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// schemaName is the PostgreSQL schema that holds everything pgstore
// writes, so a shared database can hold other things beside it.
const schemaName = "headroom"

// CampaignParam is the URL query parameter that chooses a campaign (its ID,
// a unique prefix of it, or its name).
const CampaignParam = "campaign"

// IsURL reports whether a results argument names a PostgreSQL database
// rather than a file.
func IsURL(arg string) bool {
	return strings.HasPrefix(arg, "postgres://") || strings.HasPrefix(arg, "postgresql://")
}

// Options are how to connect beyond the URL.
type Options struct {
	// PasswordFile is a file holding the password (its first line); ""
	// leaves the password to PGPASSWORD, PGPASSFILE, ~/.pgpass or the
	// URL's passfile= parameter.
	PasswordFile string
	// Timeout bounds connecting (default 10 s).
	Timeout time.Duration
}

// DB is an open connection to a shared results database.
type DB struct {
	conn *pgx.Conn
	// Campaign is the URL's campaign= choice ("" when it has none).
	Campaign string
	// where names the database in messages: host, port and database only.
	where    string
	password string
}

// Connect opens the database of a postgres:// URL. The URL may carry a
// campaign= parameter (kept in DB.Campaign) but no password.
func Connect(ctx context.Context, rawURL string, o Options) (*DB, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("the results database URL cannot be read; write it as postgres://USER@HOST:PORT/DATABASE (optionally ?campaign=ID)")
	}
	if _, has := u.User.Password(); has || u.Query().Has("password") {
		return nil, errors.New("the results database URL holds a password; remove it and put the password in PGPASSWORD, a password file (PGPASSFILE, ~/.pgpass, ?passfile=FILE) or --password-file FILE, so it stays out of shell history, process listings and logs")
	}
	q := u.Query()
	choice := q.Get(CampaignParam)
	q.Del(CampaignParam)
	u.RawQuery = q.Encode()
	where := u.Host + u.Path
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("the results database URL for %s cannot be used: %s", where, redact(err.Error(), ""))
	}
	if o.PasswordFile != "" {
		b, err := os.ReadFile(o.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read the password file %s: %v", o.PasswordFile, errors.Unwrap(err))
		}
		pw, _, _ := strings.Cut(string(b), "\n")
		cfg.Password = strings.TrimRight(pw, "\r")
	}
	cfg.RuntimeParams["application_name"] = "headroom"
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the results database %s: %s", where, redact(err.Error(), cfg.Password))
	}
	return &DB{conn: conn, Campaign: choice, where: where, password: cfg.Password}, nil
}

// Close closes the connection.
func (db *DB) Close() error { return db.conn.Close(context.Background()) }

// Where is the database as messages name it: host, port and database, no
// user or password.
func (db *DB) Where() string { return db.where }

// fail words a database error as doing, with the password (should a
// server ever echo it) removed.
func (db *DB) fail(doing string, err error) error {
	return fmt.Errorf("results database %s: %s: %s", db.where, doing, redact(err.Error(), db.password))
}

// redact removes the password from a message.
func redact(msg, password string) string {
	if password == "" {
		return msg
	}
	return strings.ReplaceAll(msg, password, "********")
}

// ident quotes a name for PostgreSQL.
func ident(names ...string) string { return pgx.Identifier(names).Sanitize() }
