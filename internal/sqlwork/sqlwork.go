// Package sqlwork runs the SQL side of statement workloads for the SQL
// targets (sqlite, postgres, mysql): it creates and drops a data set's
// tables, fills them (from a script, from generated rows, or with the
// built-in TPC-W-like data set of seed 001 §II-E), rewrites ? placeholders
// for each dialect and turns drawn parameters into driver arguments.
package sqlwork

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/workload"
)

// Dialect is the SQL flavour of a target.
type Dialect int

// The dialects Headroom speaks.
const (
	SQLite Dialect = iota
	Postgres
	MySQL
)

// String names the dialect.
func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	}
	return "dialect(" + strconv.Itoa(int(d)) + ")"
}

// Rebind rewrites the ? placeholders of query (outside quotes and comments,
// see workload.ScanPlaceholders) into the dialect's syntax: $1, $2, ... for
// Postgres; unchanged for MySQL and SQLite.
func Rebind(d Dialect, query string) string {
	if d != Postgres {
		return query
	}
	var b strings.Builder
	last, n := 0, 0
	workload.ScanPlaceholders(query, func(pos int) {
		if n == 0 {
			b.Grow(len(query) + 8)
		}
		n++
		b.WriteString(query[last:pos])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		last = pos + 1
	})
	if n == 0 {
		return query
	}
	b.WriteString(query[last:])
	return b.String()
}

// AppendArgs appends one driver argument per parameter to dst[:0]: int64
// for numbers, string for text. Text goes as string, not []byte, because
// drivers bind []byte as a blob (SQLite) or bytea (PostgreSQL), which would
// not compare equal to a text column.
func AppendArgs(dst []any, params []workload.Param) []any {
	dst = dst[:0]
	for i := range params {
		p := &params[i]
		if p.IsStr {
			dst = append(dst, string(p.Str))
		} else {
			dst = append(dst, p.Int)
		}
	}
	return dst
}

// rowKeywords start statements that return rows.
var rowKeywords = map[string]bool{
	"SELECT": true, "WITH": true, "VALUES": true, "SHOW": true, "EXPLAIN": true,
	"TABLE": true, "DESCRIBE": true, "DESC": true, "PRAGMA": true,
}

// IsQuery reports whether a statement returns rows (SELECT, WITH, VALUES,
// SHOW, ...), so targets know to read and discard its result set. Leading
// whitespace, comments and parentheses are skipped; a write with a
// top-level RETURNING clause also returns rows. "WITH ... INSERT" counts
// as a query, which is harmless: reading an empty result set costs nothing.
func IsQuery(query string) bool {
	if rowKeywords[firstWord(query, Postgres)] {
		return true
	}
	l := newLexer(query, Postgres, "")
	for {
		t, err := l.next()
		if err != nil || t.kind == tokEOF {
			return false
		}
		if t.kind == tokWord && strings.EqualFold(l.text(t), "RETURNING") {
			return true
		}
	}
}

// tableRef is a table a data set creates: its name without quotes, as
// Tables reports it, and as written in the script, for SQL.
type tableRef struct {
	name string
	ref  string
}

// tableModifiers are the words that may come between CREATE and TABLE.
var tableModifiers = map[string]bool{
	"OR": true, "REPLACE": true, "GLOBAL": true, "LOCAL": true,
	"TEMP": true, "TEMPORARY": true, "UNLOGGED": true, "VIRTUAL": true,
}

// createdTable returns the table a CREATE TABLE statement creates:
// CREATE [OR REPLACE] [GLOBAL|LOCAL] [TEMP|TEMPORARY|UNLOGGED|VIRTUAL]
// TABLE [IF NOT EXISTS] name, where name may be quoted and qualified.
func createdTable(stmt string, d Dialect) (tableRef, bool) {
	l := newLexer(stmt, d, "")
	word := func() (token, string) {
		t, err := l.next()
		if err != nil || t.kind != tokWord {
			return t, ""
		}
		return t, strings.ToUpper(l.text(t))
	}
	if _, w := word(); w != "CREATE" {
		return tableRef{}, false
	}
	_, w := word()
	for tableModifiers[w] {
		_, w = word()
	}
	if w != "TABLE" {
		return tableRef{}, false
	}
	t, err := l.next()
	if err != nil {
		return tableRef{}, false
	}
	if t.kind == tokWord && strings.EqualFold(l.text(t), "IF") {
		if _, w := word(); w != "NOT" {
			return tableRef{}, false
		}
		if _, w := word(); w != "EXISTS" {
			return tableRef{}, false
		}
		if t, err = l.next(); err != nil {
			return tableRef{}, false
		}
	}
	var parts []string
	start := t.start
	for {
		if t.kind != tokWord && t.kind != tokQuoted {
			return tableRef{}, false
		}
		parts = append(parts, unquote(l.text(t)))
		end := t.end
		// A qualified name continues with a dot right after the part.
		if end < len(stmt) && stmt[end] == '.' {
			l.pos = end + 1
			if t, err = l.next(); err != nil {
				return tableRef{}, false
			}
			continue
		}
		return tableRef{name: strings.Join(parts, "."), ref: stmt[start:end]}, true
	}
}

// createdTables lists the tables a script creates, in order, once each
// (names compared case-insensitively).
func createdTables(stmts []scriptStmt, d Dialect) []tableRef {
	var out []tableRef
	seen := map[string]bool{}
	for _, s := range stmts {
		if t, ok := createdTable(s.SQL, d); ok && !seen[strings.ToLower(t.name)] {
			seen[strings.ToLower(t.name)] = true
			out = append(out, t)
		}
	}
	return out
}

// Tables lists the tables of the data set in creation order: the built-in
// data set's tables, or the tables the schema script's CREATE TABLE
// statements create (names without their quotes; qualified names keep
// their dots). Tables does not know the target's dialect, so it reads the
// script with PostgreSQL's, MySQL's and then SQLite's quoting rules and
// takes the first reading that parses.
func Tables(ds workload.Dataset) ([]string, error) {
	var refs []tableRef
	if ds.Builtin != "" || ds.SchemaFile == "" {
		s, err := builtinOf(ds)
		if err != nil {
			return nil, err
		}
		refs = s.refs()
	} else {
		var first error
		for _, d := range []Dialect{Postgres, MySQL, SQLite} {
			r, _, err := scriptTables(ds, d)
			if err == nil {
				refs, first = r, nil
				break
			}
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return nil, first
		}
	}
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.name
	}
	return names, nil
}

// builtinOf returns the built-in data set ds names.
func builtinOf(ds workload.Dataset) (*builtinSet, error) {
	switch ds.Builtin {
	case "tpcw":
		return tpcw, nil
	case "":
		return nil, errors.New("workload.dataset.schema: required unless builtin is set; name an SQL file of CREATE TABLE statements")
	}
	return nil, fmt.Errorf("workload.dataset.builtin: unknown data set %q; the built-in one is tpcw", ds.Builtin)
}

// scriptTables reads the schema script and the tables it creates; there
// must be at least one.
func scriptTables(ds workload.Dataset, d Dialect) ([]tableRef, []scriptStmt, error) {
	stmts, err := readScript("workload.dataset.schema", ds.SchemaFile, d)
	if err != nil {
		return nil, nil, err
	}
	refs := createdTables(stmts, d)
	if len(refs) == 0 {
		return nil, nil, fmt.Errorf("workload.dataset.schema: %s has no CREATE TABLE statement; the schema script must create the workload's tables", ds.SchemaFile)
	}
	return refs, stmts, nil
}

// checkGenerated makes sure every generated table is one the schema
// creates, so a misspelt name fails before anything is dropped.
func checkGenerated(ds workload.Dataset, refs []tableRef) error {
	known := map[string]bool{}
	for _, r := range refs {
		known[strings.ToLower(r.name)] = true
	}
	for i, t := range ds.Tables {
		if !known[strings.ToLower(unquote(t.Name))] {
			names := make([]string, len(refs))
			for j, r := range refs {
				names[j] = r.name
			}
			return fmt.Errorf("workload.dataset.tables[%d].name: %q is not a table the schema script creates (it creates %s); fill only tables of %s", i, t.Name, strings.Join(names, ", "), ds.SchemaFile)
		}
		if len(t.Columns) == 0 {
			return fmt.Errorf("workload.dataset.tables[%d].columns: give at least one column", i)
		}
	}
	return nil
}

// exists reports whether a table can be read. Asking the table itself
// (rather than each dialect's catalog) lets the server apply its own rules
// for case, quoting and search paths.
func exists(ctx context.Context, db *sql.DB, ref string) bool {
	rows, err := db.QueryContext(ctx, "SELECT 1 FROM "+ref+" WHERE 1 = 0")
	if err != nil {
		return false
	}
	rows.Close()
	return rows.Err() == nil
}

// dropTables drops tables in reverse creation order.
func dropTables(ctx context.Context, db *sql.DB, d Dialect, refs []tableRef) error {
	for i := len(refs) - 1; i >= 0; i-- {
		q := "DROP TABLE IF EXISTS " + refs[i].ref
		if d == Postgres {
			q += " CASCADE" // views or foreign keys of other tables must not block a fresh start
		}
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("workload.dataset: dropping table %s: %w", refs[i].name, err)
		}
	}
	return nil
}

// Setup creates the data set's tables. With fresh, it first drops them (in
// reverse creation order; for PostgreSQL with CASCADE) so that population
// starts from empty tables.
//
// Without fresh, only what is missing is created: the built-in data set
// creates each missing table with its indexes and leaves existing ones
// alone; a schema script runs only when at least one of its tables is
// missing, and then runs whole, so a script meant to be rerun should say
// CREATE TABLE IF NOT EXISTS. Objects other than tables (views, sequences)
// are not dropped by fresh; scripts should create them with IF NOT EXISTS
// or OR REPLACE.
func Setup(ctx context.Context, db *sql.DB, d Dialect, ds workload.Dataset, fresh bool) error {
	if ds.Builtin != "" || ds.SchemaFile == "" {
		b, err := builtinOf(ds)
		if err != nil {
			return err
		}
		if len(ds.Tables) > 0 || ds.PopulateFile != "" || ds.SchemaFile != "" {
			return errors.New("workload.dataset: builtin replaces schema, populate and tables; use either builtin or your own schema")
		}
		return b.setup(ctx, db, d, fresh)
	}
	refs, stmts, err := scriptTables(ds, d)
	if err != nil {
		return err
	}
	if err := checkGenerated(ds, refs); err != nil {
		return err
	}
	var present []string
	if fresh {
		if err := dropTables(ctx, db, d, refs); err != nil {
			return err
		}
	} else {
		for _, r := range refs {
			if exists(ctx, db, r.ref) {
				present = append(present, r.name)
			}
		}
		if len(present) == len(refs) {
			return nil
		}
	}
	if err := runScript(ctx, db, d, "workload.dataset.schema", ds.SchemaFile, stmts, false, nil); err != nil {
		if len(present) > 0 {
			return fmt.Errorf("%w (tables %s already existed; run with a fresh data set, or write CREATE TABLE IF NOT EXISTS)", err, strings.Join(present, ", "))
		}
		return err
	}
	return nil
}

// Populate fills the tables Setup created: the populate script, then the
// generated tables, or the built-in data set's rows. progress, when not nil,
// is called now and then with rows done and rows in all (a populate
// script's statements count as one row each); calls may come from several
// goroutines but never at the same time. Generated and built-in rows are a
// function of seed, so the same seed gives the same data.
func Populate(ctx context.Context, db *sql.DB, d Dialect, ds workload.Dataset, seed uint64, progress func(done, total int64)) error {
	var loads []*tableLoad
	if ds.Builtin != "" || ds.SchemaFile == "" {
		b, err := builtinOf(ds)
		if err != nil {
			return err
		}
		loads = b.loads(ds.Scale, seed, d)
	}
	var script []scriptStmt
	if ds.PopulateFile != "" {
		var err error
		if script, err = readScript("workload.dataset.populate", ds.PopulateFile, d); err != nil {
			return err
		}
	}
	for i, t := range ds.Tables {
		if len(t.Columns) == 0 {
			return fmt.Errorf("workload.dataset.tables[%d].columns: give at least one column", i)
		}
		loads = append(loads, generatedLoad(t, seed))
	}
	total := int64(len(script))
	for _, l := range loads {
		total += l.rows
	}
	pr := &progressMeter{f: progress, total: total}
	pr.add(0)
	if len(script) > 0 {
		if err := runScript(ctx, db, d, "workload.dataset.populate", ds.PopulateFile, script, true, pr.add); err != nil {
			return err
		}
	}
	return load(ctx, db, d, loads, pr)
}
