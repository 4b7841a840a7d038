package pgstore

import (
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strings"

	// store registers the sqlite driver and checks the file is a store.
	"github.com/headroom-dev/headroom/internal/store"
)

// object is one table or index of a store file, as sqlite_master lists it.
type object struct {
	Kind string // "table" | "index"
	Name string
	SQL  string // the DDL that makes it
	Ord  int    // position in sqlite_master: the order to make it in
}

// column is one column of a store table.
type column struct {
	Name string
	Type string // PostgreSQL type the values are copied into
}

// openSQLite opens a store file with the sqlite driver directly (pgstore
// copies every table, including ones the store package reads lazily), in
// access mode "ro" or "rwc".
func openSQLite(path, mode string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("mode", mode)
	q.Add("_pragma", "busy_timeout(10000)")
	esc := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(abs)
	db, err := sql.Open("sqlite", "file:"+esc+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// checkStore makes sure path is a results store this build reads and is
// not damaged, with the store package's own wording when it is not.
func checkStore(path string) error {
	st, err := store.OpenReadOnly(path)
	if err != nil {
		return err
	}
	defer st.Close()
	// A damaged store (store.Damaged) is not spread to the team.
	return st.Check()
}

// querier is what the readers below need: a *sql.DB or a *sql.Tx.
type querier interface {
	Query(q string, args ...any) (*sql.Rows, error)
	QueryRow(q string, args ...any) *sql.Row
}

// objects lists the store's tables and indexes in the order SQLite made
// them, without SQLite's own (sqlite_*) and the automatic indexes of
// primary keys, which their tables' DDL makes again.
func objects(q querier) ([]object, error) {
	rows, err := q.Query(`SELECT type, name, sql, rowid FROM sqlite_master
		WHERE type IN ('table', 'index') AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.Kind, &o.Name, &o.SQL, &o.Ord); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// columns lists a table's columns with the PostgreSQL type each is copied
// into, from SQLite's type affinity rules (the store declares INTEGER, REAL
// and TEXT; a column without a type holds bytes).
func columns(q querier, table string) ([]column, error) {
	rows, err := q.Query(`SELECT name, type FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var name, decl string
		if err := rows.Scan(&name, &decl); err != nil {
			return nil, err
		}
		if name == "campaign_id" || name == "_rowid" {
			return nil, fmt.Errorf("table %s has a column named %s, which the shared database uses itself", table, name)
		}
		t, err := pgType(decl)
		if err != nil {
			return nil, fmt.Errorf("table %s column %s: %v", table, name, err)
		}
		out = append(out, column{Name: name, Type: t})
	}
	return out, rows.Err()
}

// pgType maps a declared SQLite type to the PostgreSQL type that holds its
// values exactly (SQLite's affinity rules, section 3.1 of its datatype
// page, in their order).
func pgType(decl string) (string, error) {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return "bigint", nil
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return "text", nil
	case d == "" || strings.Contains(d, "BLOB"):
		return "bytea", nil
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return "double precision", nil
	}
	return "", fmt.Errorf("type %q (numeric affinity) cannot be copied exactly", decl)
}

// selectRows is the query that reads a table's rows in rowid order,
// rowid first.
func selectRows(table string, cols []column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = sqliteIdent(c.Name)
	}
	return fmt.Sprintf("SELECT rowid, %s FROM %s ORDER BY rowid", strings.Join(names, ", "), sqliteIdent(table))
}

func sqliteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// fingerprint is a table's row count and a SHA-256 over its rows (rowid and
// every value with its type) in rowid order: two copies with the same
// fingerprint hold the same rows.
func fingerprint(q querier, table string, cols []column) (rows int64, sum string, err error) {
	rs, err := q.Query(selectRows(table, cols))
	if err != nil {
		return 0, "", err
	}
	defer rs.Close()
	h := sha256.New()
	vals := make([]any, len(cols)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var buf []byte
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return 0, "", err
		}
		buf = buf[:0]
		for _, v := range vals {
			buf = appendValue(buf, v)
		}
		h.Write(buf)
		rows++
	}
	if err := rs.Err(); err != nil {
		return 0, "", err
	}
	return rows, hex.EncodeToString(h.Sum(nil)), nil
}

// appendValue encodes one SQLite value with its storage class, so that 1,
// 1.0 and "1" differ.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case int64:
		return binary.BigEndian.AppendUint64(append(b, 'i'), uint64(x))
	case float64:
		return binary.BigEndian.AppendUint64(append(b, 'f'), math.Float64bits(x))
	case string:
		b = binary.BigEndian.AppendUint64(append(b, 's'), uint64(len(x)))
		return append(b, x...)
	case []byte:
		b = binary.BigEndian.AppendUint64(append(b, 'b'), uint64(len(x)))
		return append(b, x...)
	}
	return append(b, fmt.Sprintf("?%T:%v", v, v)...)
}

// campaignRow reads what identifies a store's campaign.
type campaignRow struct {
	Name, CreatedAt, ToolVersion string
	Seed, CreatedNS              int64
}

func readCampaign(q querier) (campaignRow, error) {
	var c campaignRow
	err := q.QueryRow(`SELECT name, created_at, tool_version, seed, created_ns FROM campaign WHERE id = 1`).
		Scan(&c.Name, &c.CreatedAt, &c.ToolVersion, &c.Seed, &c.CreatedNS)
	return c, err
}

// ID is the campaign's identity in the shared database: a hash of what the
// store's campaign row fixes when the campaign is created (name, creation
// instant in nanoseconds, seed), so a resumed campaign keeps its ID and two
// campaigns never share one.
func (c campaignRow) ID() string {
	h := sha256.Sum256(fmt.Appendf(nil, "headroom-campaign\x00%s\x00%d\x00%d", c.Name, c.CreatedNS, c.Seed))
	return hex.EncodeToString(h[:8])
}

// execer is a *sql.Tx as the copy into a new file uses it.
type execer interface {
	Exec(q string, args ...any) (sql.Result, error)
}
