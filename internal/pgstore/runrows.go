package pgstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A finished run's rows in the tables that hold rows per run (intervals,
// samples, events, ...: every table with a run_id column) are history as
// much as its run row: a push may add rows to a finished run (an import
// attached to it, a write check recorded after it ended) but never change
// or remove one. The database keeps, per finished run and table, how many
// of its rows were pushed and a SHA-256 over them in the store's order;
// a later push checks that the store still begins each finished run's
// rows with exactly those (checkFinishedRunRows), and records the new
// counts (recordRunRows).
var runRowsDDL = `CREATE TABLE IF NOT EXISTS ` + ident(schemaName, "_run_rows") + ` (
		campaign_id text NOT NULL,
		run_id      bigint NOT NULL,
		tbl         text NOT NULL,
		row_count   bigint NOT NULL,
		fingerprint text NOT NULL,
		PRIMARY KEY (campaign_id, run_id, tbl)
	)`

// runRows is one finished run's rows of one table as pushed: how many,
// and the hash of those.
type runRows struct {
	rows int64
	sum  string
}

type runTable struct {
	run int64
	tbl string
}

// runScopedTables are the store's tables whose rows belong to a run (a
// run_id column), but the run table itself, by name.
func runScopedTables(l localStore) []string {
	var out []string
	for name, t := range l.tables {
		if name == "run" {
			continue
		}
		if slices.ContainsFunc(t.cols, func(c column) bool { return c.Name == "run_id" }) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// finishedRuns are the store's runs that ended (completed, interrupted
// or failed).
func finishedRuns(q querier) (map[int64]bool, error) {
	rs, err := q.Query(`SELECT id FROM run WHERE status <> 'running'`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[int64]bool{}
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rs.Err()
}

// localRunRows hashes, per run in runs, the first prefix[run] rows of the
// run in table (all of them when the run has no prefix), in rowid order,
// and counts all of the run's rows. One query per table, ordered by run.
func localRunRows(q querier, table string, cols []column, runs map[int64]bool, prefix map[int64]int64) (hashed, total map[int64]runRows, err error) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = sqliteIdent(c.Name)
	}
	rs, err := q.Query(fmt.Sprintf("SELECT run_id, %s FROM %s WHERE run_id IS NOT NULL ORDER BY run_id, rowid", strings.Join(names, ", "), sqliteIdent(table)))
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	hashed, total = map[int64]runRows{}, map[int64]runRows{}
	vals := make([]any, len(cols)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var (
		cur     int64
		started bool
		hPrefix hash.Hash // over the first prefix[cur] rows
		hAll    hash.Hash // over all of them
		n       int64
		buf     []byte
	)
	flush := func() {
		if !started || !runs[cur] {
			return
		}
		total[cur] = runRows{n, hex.EncodeToString(hAll.Sum(nil))}
		if p, ok := prefix[cur]; ok && n >= p {
			hashed[cur] = runRows{p, hex.EncodeToString(hPrefix.Sum(nil))}
		}
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		run, ok := vals[0].(int64)
		if !ok {
			continue
		}
		if !started || run != cur {
			flush()
			cur, started, n = run, true, 0
			hPrefix, hAll = sha256.New(), sha256.New()
		}
		if !runs[run] {
			continue
		}
		buf = buf[:0]
		for _, v := range vals[1:] {
			buf = appendValue(buf, v)
		}
		hAll.Write(buf)
		if p, ok := prefix[run]; ok && n < p {
			hPrefix.Write(buf)
		}
		n++
	}
	if err := rs.Err(); err != nil {
		return nil, nil, err
	}
	flush()
	return hashed, total, nil
}

// pushedRunRows reads what the database recorded of the campaign's
// finished runs' rows.
func pushedRunRows(ctx context.Context, tx pgx.Tx, id string) (map[runTable]runRows, error) {
	rows, err := tx.Query(ctx, `SELECT run_id, tbl, row_count, fingerprint FROM `+ident(schemaName, "_run_rows")+` WHERE campaign_id = $1`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[runTable]runRows{}
	for rows.Next() {
		var k runTable
		var v runRows
		if err := rows.Scan(&k.run, &k.tbl, &v.rows, &v.sum); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// runRowsCheck is what checkFinishedRunRows found: the counts and hashes
// that differ from those recorded (rows added to a finished run, a run
// newly finished, or one pushed before the database kept them), to record
// after the push.
type runRowsCheck struct {
	record map[runTable]runRows
}

// checkFinishedRunRows refuses a store in which a finished run's rows of
// some table no longer begin with the rows pushed before: a push only
// adds to history. It returns the counts and hashes to record.
func (db *DB) checkFinishedRunRows(ctx context.Context, tx pgx.Tx, snap *sql.Tx, id, path string, local localStore) (runRowsCheck, error) {
	var out runRowsCheck
	pushed, err := pushedRunRows(ctx, tx, id)
	if err != nil {
		return out, db.fail("reading the pushed runs' rows", err)
	}
	runs, err := finishedRuns(snap)
	if err != nil {
		return out, fmt.Errorf("results database %s: reading its runs: %v", path, err)
	}
	tables := runScopedTables(local)
	out.record = map[runTable]runRows{}
	for k := range pushed {
		if !slices.Contains(tables, k.tbl) {
			return out, fmt.Errorf("run %d of %s differs from the shared copy in %s: the store has no table %s, which held %d of its rows when pushed; push refuses to rewrite a finished run, so push the copy the campaign wrote",
				k.run, path, db.where, k.tbl, pushed[k].rows)
		}
	}
	for _, tbl := range tables {
		prefix := map[int64]int64{}
		for k, v := range pushed {
			if k.tbl == tbl {
				prefix[k.run] = v.rows
			}
		}
		hashed, total, err := localRunRows(snap, tbl, local.tables[tbl].cols, runs, prefix)
		if err != nil {
			return out, fmt.Errorf("results database %s: reading %s: %v", path, tbl, err)
		}
		for run := range prefix {
			want := pushed[runTable{run, tbl}]
			if !runs[run] {
				return out, fmt.Errorf("run %d of %s differs from the shared copy in %s: it had finished when pushed and is not finished here; push refuses to rewrite a finished run, so push the copy the campaign wrote",
					run, path, db.where)
			}
			got, ok := hashed[run]
			if !ok || got.sum != want.sum {
				return out, fmt.Errorf("run %d of %s differs from the shared copy in %s: its %d rows in %s are not those pushed (%d here); push refuses to rewrite a finished run, so push the copy the campaign wrote",
					run, path, db.where, want.rows, tbl, total[run].rows)
			}
		}
		for run, t := range total {
			if k := (runTable{run, tbl}); pushed[k] != t {
				out.record[k] = t
			}
		}
	}
	return out, nil
}

// recordRunRows keeps the finished runs' row counts and hashes as pushed.
func (db *DB) recordRunRows(ctx context.Context, tx pgx.Tx, id string, c runRowsCheck) error {
	for k, v := range c.record {
		if _, err := tx.Exec(ctx, `INSERT INTO `+ident(schemaName, "_run_rows")+` (campaign_id, run_id, tbl, row_count, fingerprint) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (campaign_id, run_id, tbl) DO UPDATE SET row_count = excluded.row_count, fingerprint = excluded.fingerprint`,
			id, k.run, k.tbl, v.rows, v.sum); err != nil {
			return db.fail("recording the finished runs' rows", err)
		}
	}
	return nil
}
