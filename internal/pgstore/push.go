package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// catalogDDL makes the schema and its two catalog tables. Their names
// start with an underscore, which no store table's does.
var catalogDDL = []string{
	`CREATE SCHEMA IF NOT EXISTS ` + ident(schemaName),
	`CREATE TABLE IF NOT EXISTS ` + ident(schemaName, "_campaigns") + ` (
		campaign_id  text PRIMARY KEY,
		name         text NOT NULL,
		created_at   text NOT NULL,
		tool_version text NOT NULL,
		runs         bigint NOT NULL,
		pushed_at    timestamptz NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS ` + ident(schemaName, "_tables") + ` (
		campaign_id text NOT NULL,
		name        text NOT NULL,
		kind        text NOT NULL,
		ord         bigint NOT NULL,
		ddl         text NOT NULL,
		row_count   bigint,
		fingerprint text,
		PRIMARY KEY (campaign_id, name)
	)`,
	runRowsDDL,
}

// pushLock is the advisory lock key every push holds for its transaction,
// so that two pushes never race on making a table or on one campaign.
const pushLock = 0x6864726d // "hdrm"

// TableCopy is one table a push copied.
type TableCopy struct {
	Name string
	Rows int64
}

// PushResult says what a push did.
type PushResult struct {
	ID, Name  string
	New       bool        // the campaign was not in the database before
	Copied    []TableCopy // tables copied because they were new or differed
	Unchanged int         // tables already in the database as they are in the store
}

// Push copies the results store at path into the database, in one
// transaction: readers see the campaign as it was before the push or as it
// is after, never half of it.
//
// A push is idempotent by campaign ID (see campaignRow.ID). The database
// keeps each campaign's tables as exact copies of the store's at its last
// push; a table whose row count and fingerprint equal the stored ones is
// left untouched, and a table that differs (a resumed campaign's new runs,
// intervals, samples and events; a run that has since completed) is
// replaced by the store's copy. Pushing the same store again therefore
// writes nothing. A store that lacks runs the database already holds of
// its campaign is an older copy and is refused, and so is a store whose
// copy of a finished run differs from the database's, in its run row
// (checkFinishedRuns) or in its rows of any table (checkFinishedRunRows;
// rows may be added to it): a push never rewrites history.
func (db *DB) Push(ctx context.Context, path string) (PushResult, error) {
	if err := checkStore(path); err != nil {
		return PushResult{}, err
	}
	lite, err := openSQLite(path, "ro")
	if err != nil {
		return PushResult{}, fmt.Errorf("cannot open results database %s: %v", path, err)
	}
	defer lite.Close()
	// One read transaction: the store is read as one snapshot even while
	// a campaign still writes it.
	snap, err := lite.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return PushResult{}, fmt.Errorf("results database %s: reading: %v", path, err)
	}
	defer snap.Rollback()
	local, err := readLocal(snap)
	if err != nil {
		return PushResult{}, fmt.Errorf("results database %s: reading: %v", path, err)
	}
	res := PushResult{ID: local.campaign.ID(), Name: local.campaign.Name}

	tx, err := db.conn.Begin(ctx)
	if err != nil {
		return res, db.fail("beginning the push", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pushLock); err != nil {
		return res, db.fail("locking for the push", err)
	}
	for _, q := range catalogDDL {
		if _, err := tx.Exec(ctx, q); err != nil {
			return res, db.fail("making the headroom schema", err)
		}
	}
	remote, err := remoteTables(ctx, tx, res.ID)
	if err != nil {
		return res, db.fail("reading what is pushed", err)
	}
	res.New = len(remote) == 0
	if err := db.checkNotOlder(ctx, tx, res.ID, path, local, remote); err != nil {
		return res, err
	}
	if err := db.checkFinishedRuns(ctx, tx, snap, res.ID, path, local, remote); err != nil {
		return res, err
	}
	rows, err := db.checkFinishedRunRows(ctx, tx, snap, res.ID, path, local)
	if err != nil {
		return res, err
	}
	for _, o := range local.objects {
		if o.Kind != "table" {
			continue
		}
		lt := local.tables[o.Name]
		if rt, ok := remote[o.Name]; ok && rt.rows == lt.rows && rt.sum == lt.sum && rt.ddl == o.SQL {
			res.Unchanged++
			continue
		}
		if err := db.copyTable(ctx, tx, snap, res.ID, o.Name, lt); err != nil {
			return res, err
		}
		res.Copied = append(res.Copied, TableCopy{o.Name, lt.rows})
	}
	same := len(res.Copied) == 0 && sameObjects(local.objects, remote)
	if same && len(rows.record) == 0 {
		return res, nil // nothing differs: write nothing, not even pushed_at
	}
	if !same {
		if err := db.writeCatalog(ctx, tx, res.ID, local); err != nil {
			return res, err
		}
	}
	if err := db.recordRunRows(ctx, tx, res.ID, rows); err != nil {
		return res, err
	}
	if err := tx.Commit(ctx); err != nil {
		return res, db.fail("committing the push", err)
	}
	return res, nil
}

// sameObjects reports whether the catalog lists exactly the store's tables
// and indexes, each with the store's DDL.
func sameObjects(objs []object, remote map[string]remoteTable) bool {
	if len(objs) != len(remote) {
		return false
	}
	for _, o := range objs {
		if r, ok := remote[o.Name]; !ok || r.ddl != o.SQL {
			return false
		}
	}
	return true
}

// localTable is what a push knows of one store table.
type localTable struct {
	cols []column
	rows int64
	sum  string
}

// localStore is a store's snapshot as a push reads it.
type localStore struct {
	campaign campaignRow
	objects  []object
	tables   map[string]localTable
	runIDs   map[int64]bool
}

func readLocal(q querier) (localStore, error) {
	var l localStore
	var err error
	if l.campaign, err = readCampaign(q); err != nil {
		return l, err
	}
	if l.objects, err = objects(q); err != nil {
		return l, err
	}
	l.tables = map[string]localTable{}
	for _, o := range l.objects {
		if o.Kind != "table" {
			continue
		}
		var t localTable
		if t.cols, err = columns(q, o.Name); err != nil {
			return l, err
		}
		if t.rows, t.sum, err = fingerprint(q, o.Name, t.cols); err != nil {
			return l, err
		}
		l.tables[o.Name] = t
	}
	rows, err := q.Query(`SELECT id FROM run`)
	if err != nil {
		return l, err
	}
	defer rows.Close()
	l.runIDs = map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return l, err
		}
		l.runIDs[id] = true
	}
	return l, rows.Err()
}

// remoteTable is what the database's catalog says of one pushed object.
type remoteTable struct {
	ddl  string
	rows int64
	sum  string
}

func remoteTables(ctx context.Context, tx pgx.Tx, id string) (map[string]remoteTable, error) {
	rows, err := tx.Query(ctx, `SELECT name, ddl, coalesce(row_count, 0), coalesce(fingerprint, '')
		FROM `+ident(schemaName, "_tables")+` WHERE campaign_id = $1`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]remoteTable{}
	for rows.Next() {
		var name string
		var t remoteTable
		if err := rows.Scan(&name, &t.ddl, &t.rows, &t.sum); err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, rows.Err()
}

// checkNotOlder refuses a store that lacks runs the database holds of the
// same campaign: pushing it would lose them.
func (db *DB) checkNotOlder(ctx context.Context, tx pgx.Tx, id, path string, local localStore, remote map[string]remoteTable) error {
	if _, ok := remote["run"]; !ok {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT id FROM `+ident(schemaName, "run")+` WHERE campaign_id = $1 ORDER BY id`, id)
	if err != nil {
		return db.fail("reading the pushed runs", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return db.fail("reading the pushed runs", err)
	}
	var missing []string
	for _, r := range ids {
		if !local.runIDs[r] {
			missing = append(missing, fmt.Sprint(r))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s is an older copy of campaign %s (%s): the shared database %s already holds run(s) %s that it lacks; push the newest copy of the results",
			path, id, local.campaign.Name, db.where, strings.Join(missing, ", "))
	}
	return nil
}

// checkFinishedRuns refuses a store whose copy of a run the database holds
// as finished (completed, interrupted or failed) differs from the
// database's: a finished run is history, and a push only adds to it. The
// columns compared are those both copies have (a newer store may have
// more).
func (db *DB) checkFinishedRuns(ctx context.Context, tx pgx.Tx, snap *sql.Tx, id, path string, local localStore, remote map[string]remoteTable) error {
	if _, ok := remote["run"]; !ok {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'run'`, schemaName)
	if err != nil {
		return db.fail("reading the pushed runs", err)
	}
	there, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return db.fail("reading the pushed runs", err)
	}
	has := map[string]bool{}
	for _, c := range there {
		has[c] = true
	}
	var cols []string
	for _, c := range local.tables["run"].cols {
		if has[c.Name] {
			cols = append(cols, c.Name)
		}
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = ident(c)
	}
	theirs, err := tx.Query(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM `+ident(schemaName, "run")+
		` WHERE campaign_id = $1 AND status <> 'running' ORDER BY id`, id)
	if err != nil {
		return db.fail("reading the pushed runs", err)
	}
	pushed, err := pgx.CollectRows(theirs, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
	if err != nil {
		return db.fail("reading the pushed runs", err)
	}
	at := map[string]int{}
	for i, c := range cols {
		at[c] = i
	}
	sqliteCols := make([]string, len(cols))
	for i, c := range cols {
		sqliteCols[i] = sqliteIdent(c)
	}
	mine := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range mine {
		ptrs[i] = &mine[i]
	}
	for _, theirs := range pushed {
		runID := theirs[at["id"]]
		err := snap.QueryRow(`SELECT `+strings.Join(sqliteCols, ", ")+` FROM run WHERE id = ?`, runID).Scan(ptrs...)
		if err == sql.ErrNoRows {
			continue // checkNotOlder names runs the store lacks
		}
		if err != nil {
			return fmt.Errorf("results database %s: reading run %v: %v", path, runID, err)
		}
		var diffs []string
		for i, c := range cols {
			if a, b := shownValue(mine[i]), shownValue(theirs[i]); a != b {
				diffs = append(diffs, fmt.Sprintf("%s %s here vs %s there", c, a, b))
			}
		}
		if len(diffs) == 0 {
			continue
		}
		what := fmt.Sprintf("level %s", shownValue(theirs[at["level"]]))
		if t, ok := theirs[at["treatment"]].(string); ok && t != "" {
			what = fmt.Sprintf("treatment %s, %s", t, what)
		}
		return fmt.Errorf("run %v (%s) of %s differs from the shared copy in %s: %s; push refuses to rewrite a finished run, so push the copy the campaign wrote",
			runID, what, path, db.where, strings.Join(diffs, ", "))
	}
	return nil
}

// shownValue is a stored value for comparing two copies and for the
// message: whole numbers with thousands separators, NULL as NULL.
func shownValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return groupThousands(x)
	case int32:
		return groupThousands(int64(x))
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return groupThousands(int64(x))
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []byte:
		return fmt.Sprintf("%q", x)
	case string:
		return fmt.Sprintf("%q", x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return fmt.Sprint(v)
}

func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// copyTable makes sure the database's table can hold the store table's
// columns, then replaces the campaign's rows with the store's.
func (db *DB) copyTable(ctx context.Context, tx pgx.Tx, snap *sql.Tx, id, name string, t localTable) error {
	if err := ensureTable(ctx, tx, name, t.cols); err != nil {
		return db.fail("making table "+name, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+ident(schemaName, name)+` WHERE campaign_id = $1`, id); err != nil {
		return db.fail("replacing table "+name, err)
	}
	rs, err := snap.Query(selectRows(name, t.cols))
	if err != nil {
		return fmt.Errorf("reading table %s of the store: %v", name, err)
	}
	defer rs.Close()
	names := append([]string{"campaign_id", "_rowid"}, colNames(t.cols)...)
	vals := make([]any, len(t.cols)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	row := make([]any, len(names))
	row[0] = id
	var scanErr error
	n, err := tx.CopyFrom(ctx, pgx.Identifier{schemaName, name}, names, pgx.CopyFromFunc(func() ([]any, error) {
		if !rs.Next() {
			return nil, rs.Err()
		}
		if scanErr = rs.Scan(ptrs...); scanErr != nil {
			return nil, scanErr
		}
		copy(row[1:], vals)
		return row, nil
	}))
	if err != nil {
		return db.fail("copying table "+name+" (a value that does not fit its column's declared type?)", err)
	}
	if n != t.rows {
		return fmt.Errorf("table %s: copied %d rows of the %d read; the store changed while it was pushed? push again", name, n, t.rows)
	}
	return nil
}

func colNames(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// ensureTable creates the database table of a store table, or adds the
// columns a newer store has; a column whose type differs from the one the
// database has is an error (no store version has changed one).
func ensureTable(ctx context.Context, tx pgx.Tx, name string, cols []column) error {
	q := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (campaign_id text NOT NULL, _rowid bigint NOT NULL, PRIMARY KEY (campaign_id, _rowid))`,
		ident(schemaName, name))
	if _, err := tx.Exec(ctx, q); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`, schemaName, name)
	if err != nil {
		return err
	}
	have := map[string]string{}
	for rows.Next() {
		var c, t string
		if err := rows.Scan(&c, &t); err != nil {
			rows.Close()
			return err
		}
		have[c] = t
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range cols {
		got, ok := have[c.Name]
		if ok && got != c.Type {
			return fmt.Errorf("column %s is %s in the database but %s in the store", c.Name, got, c.Type)
		}
		if !ok {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s %s`, ident(schemaName, name), ident(c.Name), c.Type)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeCatalog records the campaign and every table's DDL, row count and
// fingerprint as pushed.
func (db *DB) writeCatalog(ctx context.Context, tx pgx.Tx, id string, l localStore) error {
	if _, err := tx.Exec(ctx, `INSERT INTO `+ident(schemaName, "_campaigns")+` (campaign_id, name, created_at, tool_version, runs, pushed_at)
		VALUES ($1, $2, $3, $4, $5, now())
		ON CONFLICT (campaign_id) DO UPDATE SET name = excluded.name, tool_version = excluded.tool_version, runs = excluded.runs, pushed_at = excluded.pushed_at`,
		id, l.campaign.Name, l.campaign.CreatedAt, l.campaign.ToolVersion, int64(len(l.runIDs))); err != nil {
		return db.fail("recording the campaign", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+ident(schemaName, "_tables")+` WHERE campaign_id = $1`, id); err != nil {
		return db.fail("recording the tables", err)
	}
	objs := append([]object(nil), l.objects...)
	sort.Slice(objs, func(i, j int) bool { return objs[i].Ord < objs[j].Ord })
	for _, o := range objs {
		var rows, sum any
		if t, ok := l.tables[o.Name]; ok {
			rows, sum = t.rows, t.sum
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+ident(schemaName, "_tables")+` (campaign_id, name, kind, ord, ddl, row_count, fingerprint)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, id, o.Name, o.Kind, int64(o.Ord), o.SQL, rows, sum); err != nil {
			return db.fail("recording the tables", err)
		}
	}
	return nil
}
