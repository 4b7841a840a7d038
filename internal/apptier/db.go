package apptier

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/headroom-dev/headroom/internal/target"
)

// Engine is the database behind the application tier.
type Engine string

// Engines.
const (
	Postgres Engine = "postgres"
	MySQL    Engine = "mysql" // MySQL and MariaDB
)

// ParseDSN reads a database URL, postgres://USER:PASSWORD@HOST:PORT/DB or
// mysql://USER:PASSWORD@HOST:PORT/DB, into the engine and the connection
// string its database/sql driver takes. Errors never include the URL,
// which holds the password.
func ParseDSN(dsn string) (Engine, string, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return "", "", errors.New("the database URL is not of the form postgres://USER:PASSWORD@HOST:PORT/DB or mysql://USER:PASSWORD@HOST:PORT/DB")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		return "", "", errors.New("the database URL names no database; end it with /DB")
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		q := u.Query()
		if q.Get("sslmode") == "" {
			q.Set("sslmode", "disable")
		}
		u.RawQuery = q.Encode()
		return Postgres, u.String(), nil
	case "mysql", "mariadb":
		cfg := mysql.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		if _, _, err := net.SplitHostPort(u.Host); err != nil {
			cfg.Addr = net.JoinHostPort(u.Host, "3306")
		}
		cfg.DBName = db
		return MySQL, cfg.FormatDSN(), nil
	}
	return "", "", fmt.Errorf("the database URL's scheme %q is not postgres or mysql", u.Scheme)
}

// driverName is the database/sql driver of an engine.
func (e Engine) driverName() string {
	if e == Postgres {
		return "pgx"
	}
	return "mysql"
}

// placeholder is the n-th (1-based) statement parameter.
func (e Engine) placeholder(n int) string {
	if e == Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// statements are the YCSB operations on one table, prepared once: the
// database/sql pool prepares each on a connection when it first runs there.
type statements struct {
	fields     int
	readAll    *sql.Stmt
	readField  []*sql.Stmt
	scanAll    *sql.Stmt
	scanField  []*sql.Stmt
	updateAll  *sql.Stmt
	updateOne  []*sql.Stmt
	insert     *sql.Stmt
	insertHead string // INSERT INTO t (cols) VALUES, for multi-row loads
}

func (s *statements) close() {
	if s == nil {
		return
	}
	all := []*sql.Stmt{s.readAll, s.scanAll, s.updateAll, s.insert}
	all = append(all, s.readField...)
	all = append(all, s.scanField...)
	all = append(all, s.updateOne...)
	for _, st := range all {
		if st != nil {
			st.Close()
		}
	}
}

// fieldName is the column of field i, as YCSB's JDBC binding names it.
func fieldName(i int) string { return "field" + strconv.Itoa(i) }

// createTable is the YCSB table's DDL.
func createTable(table string, fields int) string {
	cols := make([]string, fields)
	for i := range cols {
		cols[i] = fieldName(i) + " TEXT"
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (ycsb_key VARCHAR(255) PRIMARY KEY, %s)", table, strings.Join(cols, ", "))
}

// prepare prepares every statement of the table, or with readsOnly only
// its reads and scans (for a read replica, which refuses writes).
func prepare(ctx context.Context, db *sql.DB, e Engine, table string, fields int, readsOnly bool) (*statements, error) {
	s := &statements{fields: fields}
	var err error
	p := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = db.PrepareContext(ctx, q)
		if err != nil {
			err = fmt.Errorf("preparing %q: %w", q, err)
		}
		return st
	}
	cols := make([]string, fields)
	sets := make([]string, fields)
	params := make([]string, fields+1)
	for i := range cols {
		cols[i] = fieldName(i)
		sets[i] = cols[i] + " = " + e.placeholder(i+1)
	}
	for i := range params {
		params[i] = e.placeholder(i + 1)
	}
	all := strings.Join(cols, ", ")
	s.readAll = p(fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key = %s", all, table, e.placeholder(1)))
	s.scanAll = p(fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key >= %s ORDER BY ycsb_key LIMIT %s", all, table, e.placeholder(1), e.placeholder(2)))
	for i := range fields {
		s.readField = append(s.readField, p(fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key = %s", cols[i], table, e.placeholder(1))))
		s.scanField = append(s.scanField, p(fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key >= %s ORDER BY ycsb_key LIMIT %s", cols[i], table, e.placeholder(1), e.placeholder(2))))
	}
	if !readsOnly {
		s.updateAll = p(fmt.Sprintf("UPDATE %s SET %s WHERE ycsb_key = %s", table, strings.Join(sets, ", "), e.placeholder(fields+1)))
		s.insertHead = fmt.Sprintf("INSERT INTO %s (ycsb_key, %s) VALUES ", table, all)
		s.insert = p(s.insertHead + "(" + strings.Join(params, ", ") + ")")
		for i := range fields {
			s.updateOne = append(s.updateOne, p(fmt.Sprintf("UPDATE %s SET %s = %s WHERE ycsb_key = %s", table, cols[i], e.placeholder(1), e.placeholder(2))))
		}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// errorKind names the kind of a database error (target's kind names), ""
// for any other error.
func errorKind(ctx context.Context, err error) string {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded:
		return target.KindTimeout
	case errors.As(err, &pe):
		switch {
		case pe.Code == "40P01" || pe.Code == "40001":
			return target.KindDeadlock
		case strings.HasPrefix(pe.Code, "23"):
			return target.KindConstraint
		case pe.Code == "57014":
			return target.KindTimeout
		case pe.Code == "53300" || pe.Code == "55P03" || pe.Code == "53400":
			return target.KindBusy
		}
	case errors.As(err, &me):
		switch me.Number {
		case 1213:
			return target.KindDeadlock
		case 1062, 1452, 1451:
			return target.KindConstraint
		case 1205, 3024:
			return target.KindTimeout
		case 1040, 1203:
			return target.KindBusy
		}
	case target.IsConnectionError(err) || errors.Is(err, sql.ErrConnDone):
		return target.KindConnection
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return target.KindTimeout
	}
	return ""
}

// openDB opens the pool of one application server.
func openDB(e Engine, conn string, pool int) (*sql.DB, error) {
	db, err := sql.Open(e.driverName(), conn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(pool)
	db.SetMaxIdleConns(pool)
	// Connections live as long as the server: reconnecting would add its
	// cost to the measured requests.
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(time.Hour)
	return db, nil
}
