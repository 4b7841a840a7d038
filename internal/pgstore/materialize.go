package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Campaign is one pushed campaign as the database lists it.
type Campaign struct {
	ID, Name, CreatedAt, ToolVersion string
	Runs                             int64
	PushedAt                         time.Time
}

// Campaigns lists the pushed campaigns, oldest first; none when nothing
// was ever pushed.
func (db *DB) Campaigns(ctx context.Context) ([]Campaign, error) {
	var exists bool
	if err := db.conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, schemaName+"._campaigns").Scan(&exists); err != nil {
		return nil, db.fail("listing the campaigns", err)
	}
	if !exists {
		return nil, nil
	}
	rows, err := db.conn.Query(ctx, `SELECT campaign_id, name, created_at, tool_version, runs, pushed_at
		FROM `+ident(schemaName, "_campaigns")+` ORDER BY created_at, campaign_id`)
	if err != nil {
		return nil, db.fail("listing the campaigns", err)
	}
	defer rows.Close()
	var out []Campaign
	for rows.Next() {
		var c Campaign
		if err := rows.Scan(&c.ID, &c.Name, &c.CreatedAt, &c.ToolVersion, &c.Runs, &c.PushedAt); err != nil {
			return nil, db.fail("listing the campaigns", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("listing the campaigns", err)
	}
	return out, nil
}

// Choose finds the campaign choice names: its ID, a unique prefix of its
// ID, or its name when no other campaign has that name. An empty choice
// takes the only campaign. When the choice is missing or ambiguous the
// error lists the candidates.
func (db *DB) Choose(ctx context.Context, choice string) (Campaign, error) {
	all, err := db.Campaigns(ctx)
	if err != nil {
		return Campaign{}, err
	}
	if len(all) == 0 {
		return Campaign{}, fmt.Errorf("the results database %s holds no campaigns yet; add one with headroom push RESULTS_DIR URL", db.where)
	}
	var found []Campaign
	switch {
	case choice == "":
		found = all
	default:
		for _, c := range all {
			if c.ID == choice {
				return c, nil
			}
		}
		for _, c := range all {
			if strings.HasPrefix(c.ID, choice) {
				found = append(found, c)
			}
		}
		if len(found) == 0 {
			for _, c := range all {
				if c.Name == choice {
					found = append(found, c)
				}
			}
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	if len(found) == 0 {
		return Campaign{}, fmt.Errorf("the results database %s has no campaign %q; choose one with ?%s=ID:\n%s", db.where, choice, CampaignParam, List(all))
	}
	what := "holds several campaigns"
	if choice != "" {
		what = fmt.Sprintf("has several campaigns matching %q", choice)
	}
	return Campaign{}, fmt.Errorf("the results database %s %s; choose one with ?%s=ID:\n%s", db.where, what, CampaignParam, List(found))
}

// List formats campaigns as a table: ID, name, creation time, runs.
func List(cs []Campaign) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  ID\tNAME\tCREATED\tRUNS")
	for _, c := range cs {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%d\n", c.ID, c.Name, c.CreatedAt, c.Runs)
	}
	w.Flush()
	return strings.TrimRight(b.String(), "\n")
}

// Materialize writes campaign c into a new results store file at path
// (which must not exist), table by table with the DDL the campaign was
// pushed with, and checks every table's fingerprint against the pushed
// one, so the file is an exact copy of the store that was pushed.
func (db *DB) Materialize(ctx context.Context, c Campaign, path string) (err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; the copy of campaign %s needs a new file", path, c.ID)
		}
		return fmt.Errorf("cannot create %s for the copy of campaign %s: %v", path, c.ID, err)
	}
	f.Close()
	defer func() {
		if err != nil {
			for _, p := range []string{path, path + "-journal", path + "-wal", path + "-shm"} {
				os.Remove(p)
			}
		}
	}()
	objs, err := db.catalog(ctx, c.ID)
	if err != nil {
		return err
	}
	lite, err := openSQLite(path, "rw")
	if err != nil {
		return fmt.Errorf("cannot open %s: %v", path, err)
	}
	defer lite.Close()
	tx, err := lite.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	defer tx.Rollback()
	for _, o := range objs {
		if _, err := tx.Exec(o.SQL); err != nil {
			return fmt.Errorf("writing %s: making %s %s: %v", path, o.Kind, o.Name, err)
		}
	}
	for _, o := range objs {
		if o.Kind != "table" {
			continue
		}
		cols, err := columns(tx, o.Name)
		if err != nil {
			return fmt.Errorf("writing %s: %v", path, err)
		}
		if err := db.copyOut(ctx, c.ID, o.Name, cols, tx); err != nil {
			return err
		}
		rows, sum, err := fingerprint(tx, o.Name, cols)
		if err != nil {
			return fmt.Errorf("writing %s: checking table %s: %v", path, o.Name, err)
		}
		if rows != o.rows || sum != o.sum {
			return fmt.Errorf("the copy of campaign %s differs from what was pushed in table %s (%d rows, %d pushed); the shared database was changed by something other than headroom push", c.ID, o.Name, rows, o.rows)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	return nil
}

// pushedObject is one object of a campaign's catalog.
type pushedObject struct {
	object
	rows int64
	sum  string
}

func (db *DB) catalog(ctx context.Context, id string) ([]pushedObject, error) {
	rows, err := db.conn.Query(ctx, `SELECT kind, name, ddl, ord, coalesce(row_count, 0), coalesce(fingerprint, '')
		FROM `+ident(schemaName, "_tables")+` WHERE campaign_id = $1 ORDER BY ord`, id)
	if err != nil {
		return nil, db.fail("reading campaign "+id, err)
	}
	defer rows.Close()
	var out []pushedObject
	for rows.Next() {
		var o pushedObject
		var ord int64
		if err := rows.Scan(&o.Kind, &o.Name, &o.SQL, &ord, &o.rows, &o.sum); err != nil {
			return nil, db.fail("reading campaign "+id, err)
		}
		o.Ord = int(ord)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail("reading campaign "+id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the results database %s lists campaign %s but holds none of its tables; push it again", db.where, id)
	}
	return out, nil
}

// copyOut inserts a campaign's rows of one table, in rowid order with
// their rowids, into the new file.
func (db *DB) copyOut(ctx context.Context, id, table string, cols []column, tx execer) error {
	names := colNames(cols)
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = ident(n)
	}
	rows, err := db.conn.Query(ctx, fmt.Sprintf(`SELECT _rowid, %s FROM %s WHERE campaign_id = $1 ORDER BY _rowid`,
		strings.Join(quoted, ", "), ident(schemaName, table)), id)
	if err != nil {
		return db.fail("reading table "+table+" of campaign "+id, err)
	}
	defer rows.Close()
	lite := make([]string, len(names))
	for i, n := range names {
		lite[i] = sqliteIdent(n)
	}
	ins := fmt.Sprintf(`INSERT INTO %s (rowid, %s) VALUES (?%s)`, sqliteIdent(table), strings.Join(lite, ", "), strings.Repeat(", ?", len(names)))
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return db.fail("reading table "+table+" of campaign "+id, err)
		}
		if _, err := tx.Exec(ins, vals...); err != nil {
			return fmt.Errorf("copying table %s of campaign %s: %v", table, id, err)
		}
	}
	if err := rows.Err(); err != nil {
		return db.fail("reading table "+table+" of campaign "+id, err)
	}
	return nil
}

// Fetch connects to the database of a postgres:// URL, chooses the
// campaign its campaign= parameter names (or its only one) and copies it
// into a new store file at path.
func Fetch(ctx context.Context, rawURL string, o Options, path string) (Campaign, error) {
	db, err := Connect(ctx, rawURL, o)
	if err != nil {
		return Campaign{}, err
	}
	defer db.Close()
	c, err := db.Choose(ctx, db.Campaign)
	if err != nil {
		return Campaign{}, err
	}
	return c, db.Materialize(ctx, c, path)
}
