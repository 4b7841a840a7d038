// Package sqlycsb is YCSB's operations over SQL, shared by the sqlite,
// postgres and mysql targets: the table and statements of YCSB's JDBC
// binding written in each server's dialect, the order of each statement's
// parameters, what each operation runs and when it finds no record (Do),
// and a client that runs them through database/sql (Client). A target
// whose driver has a faster protocol layer (postgres: pgconn) runs the
// same operations through its own Exec.
package sqlycsb

import (
	"strconv"
	"strings"
)

// Dialect is what differs between the servers in YCSB's table, its
// statements and the way they are run. Identifiers are written as they
// are, unquoted: the targets accept only table names of letters, digits
// and underscores, and quoting would change both how PostgreSQL folds a
// name's case and the statement texts that server-side timing matches.
type Dialect struct {
	// Name is the target's name, for messages.
	Name string
	// Numbered placeholders are $1, $2, ...; otherwise each is ?.
	Numbered bool
	// KeyType and FieldType are the column types of the key and of each
	// field; TableOptions follow the column list.
	KeyType, FieldType, TableOptions string
	// LockRead and LockUpdate end read-modify-write's SELECT and UPDATE.
	// MySQL's lock the row on read, and they give the statements texts of
	// their own, which performance_schema then times apart from plain
	// reads and updates. Empty: read-modify-write runs the plain read and
	// update statements.
	LockRead, LockUpdate string
	// KeyText binds keys as strings rather than bytes through
	// database/sql: a driver may send bytes as a binary value, which some
	// servers will not compare with the text key through its index.
	KeyText bool
	// MaxBatchParams, when above 0, makes LoadBatch send multi-row
	// INSERTs of at most this many parameters and about MaxBatchBytes of
	// values each; at 0 it runs the one-record INSERT per record.
	MaxBatchParams, MaxBatchBytes int
}

// The dialects of the three SQL targets.
var (
	// SQLite stores field values as BLOBs; its keys, bound as bytes, are
	// BLOBs too, which sort byte by byte like every other target's.
	SQLite = &Dialect{Name: "sqlite", KeyType: "TEXT PRIMARY KEY", FieldType: "BLOB"}
	// Postgres's placeholders are numbered.
	Postgres = &Dialect{Name: "postgres", Numbered: true, KeyType: "VARCHAR(255) PRIMARY KEY", FieldType: "TEXT", KeyText: true}
	// MySQL's key is binary-collated, so keys sort byte by byte as in
	// every other target. Batches are bounded by the protocol's 65535
	// placeholders per statement and kept to a few MiB (max_allowed_packet
	// is 16 MiB by default in MariaDB, 64 MiB in MySQL 8).
	MySQL = &Dialect{
		Name: "mysql", KeyType: "VARCHAR(255) NOT NULL PRIMARY KEY", FieldType: "TEXT",
		TableOptions: " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
		LockRead:     " FOR UPDATE", LockUpdate: " LIMIT 1",
		KeyText: true, MaxBatchParams: 65535, MaxBatchBytes: 4 << 20,
	}
)

// Placeholder is the marker of parameter n (from 1).
func (d *Dialect) Placeholder(n int) string {
	if d.Numbered {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// Render joins parts with a placeholder between each two.
func (d *Dialect) Render(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(d.Placeholder(i))
		}
		b.WriteString(p)
	}
	return b.String()
}

// CreateTable is the statement that creates YCSB's table, unless it
// exists: the key and fields columns field0 to field<fields-1>.
func (d *Dialect) CreateTable(table string, fields int) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + table + " (ycsb_key " + d.KeyType)
	for i := range fields {
		b.WriteString(", field" + strconv.Itoa(i) + " " + d.FieldType)
	}
	b.WriteString(")" + d.TableOptions)
	return b.String()
}
