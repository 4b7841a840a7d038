package sqlycsb

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/workload"
)

// The statement texts are those the targets sent before they shared this
// package: pg_stat_statements and performance_schema rows are matched to
// operations by them.
func TestStatementTexts(t *testing.T) {
	for _, tc := range []struct {
		d    *Dialect
		k    Kind
		f    int
		want string
	}{
		{SQLite, Read, -1, "SELECT field0, field1 FROM usertable WHERE ycsb_key = ?"},
		{SQLite, Read, 1, "SELECT field1 FROM usertable WHERE ycsb_key = ?"},
		{SQLite, Update, -1, "UPDATE usertable SET field0 = ?, field1 = ? WHERE ycsb_key = ?"},
		{SQLite, Update, 0, "UPDATE usertable SET field0 = ? WHERE ycsb_key = ?"},
		{SQLite, Insert, -1, "INSERT INTO usertable (ycsb_key, field0, field1) VALUES (?, ?, ?)"},
		{SQLite, Insert, 1, "INSERT INTO usertable (ycsb_key, field0, field1) VALUES (?, ?, ?)"},
		{SQLite, Scan, -1, "SELECT field0, field1 FROM usertable WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?"},
		{SQLite, LockedRead, 1, "SELECT field1 FROM usertable WHERE ycsb_key = ?"},
		{SQLite, LockedUpdate, -1, "UPDATE usertable SET field0 = ?, field1 = ? WHERE ycsb_key = ?"},
		{Postgres, Update, -1, "UPDATE usertable SET field0 = $1, field1 = $2 WHERE ycsb_key = $3"},
		{Postgres, Insert, -1, "INSERT INTO usertable (ycsb_key, field0, field1) VALUES ($1, $2, $3)"},
		{Postgres, Scan, 0, "SELECT field0 FROM usertable WHERE ycsb_key >= $1 ORDER BY ycsb_key LIMIT $2"},
		{Postgres, LockedRead, -1, "SELECT field0, field1 FROM usertable WHERE ycsb_key = $1"},
		{MySQL, Read, -1, "SELECT field0, field1 FROM usertable WHERE ycsb_key = ?"},
		{MySQL, LockedRead, -1, "SELECT field0, field1 FROM usertable WHERE ycsb_key = ? FOR UPDATE"},
		{MySQL, LockedRead, 0, "SELECT field0 FROM usertable WHERE ycsb_key = ? FOR UPDATE"},
		{MySQL, LockedUpdate, -1, "UPDATE usertable SET field0 = ?, field1 = ? WHERE ycsb_key = ? LIMIT 1"},
		{MySQL, LockedUpdate, 1, "UPDATE usertable SET field1 = ? WHERE ycsb_key = ? LIMIT 1"},
	} {
		s := tc.d.Statements("usertable", 2)
		st := s.List[s.Index(tc.k, tc.f)]
		if st.SQL != tc.want {
			t.Errorf("%s %v field %d:\n got %s\nwant %s", tc.d.Name, tc.k, tc.f, st.SQL, tc.want)
		}
		kind := tc.k
		if tc.d.LockRead == "" && tc.k == LockedRead {
			kind = Read // the dialect has no read-modify-write statements of its own
		} else if tc.d.LockUpdate == "" && tc.k == LockedUpdate {
			kind = Update
		}
		if st.Kind != kind {
			t.Errorf("%s %v field %d is a statement of kind %v", tc.d.Name, tc.k, tc.f, st.Kind)
		}
		if n := strings.Count(st.SQL, tc.d.Placeholder(1)); !tc.d.Numbered && n != len(st.Parts)-1 {
			t.Errorf("%s %v: %d placeholders, %d parts", tc.d.Name, tc.k, n, len(st.Parts))
		}
	}
}

// The postgres target names its prepared statements by position, so the
// order of List is part of what it sends.
func TestStatementOrder(t *testing.T) {
	var got []string
	for _, st := range Postgres.Statements("t", 2).List {
		got = append(got, fmt.Sprintf("%v%d", st.Kind, st.Field))
	}
	want := "read-1 update-1 insert-1 scan-1 read0 update0 scan0 read1 update1 scan1"
	if strings.Join(got, " ") != want {
		t.Errorf("order = %s, want %s", strings.Join(got, " "), want)
	}
	if n := len(MySQL.Statements("t", 2).List); n != 16 {
		t.Errorf("MySQL has %d statements for 2 fields, want 16 (6 every-field, 5 per field)", n)
	}
}

func TestCreateTable(t *testing.T) {
	for d, want := range map[*Dialect]string{
		SQLite:   "CREATE TABLE IF NOT EXISTS u (ycsb_key TEXT PRIMARY KEY, field0 BLOB, field1 BLOB)",
		Postgres: "CREATE TABLE IF NOT EXISTS u (ycsb_key VARCHAR(255) PRIMARY KEY, field0 TEXT, field1 TEXT)",
		MySQL:    "CREATE TABLE IF NOT EXISTS u (ycsb_key VARCHAR(255) NOT NULL PRIMARY KEY, field0 TEXT, field1 TEXT) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
	} {
		if got := d.CreateTable("u", 2); got != want {
			t.Errorf("%s:\n got %s\nwant %s", d.Name, got, want)
		}
	}
}

// recorder writes down the parameters Bind gives it.
type recorder []string

func (r *recorder) Key(k []byte)   { *r = append(*r, "key="+string(k)) }
func (r *recorder) Value(v []byte) { *r = append(*r, string(v)) }
func (r *recorder) Int(n int64)    { *r = append(*r, fmt.Sprint(n)) }

// Bind's order must match the placeholders of every statement kind.
func TestBindOrder(t *testing.T) {
	op := &workload.Op{Key: []byte("k"), Values: [][]byte{[]byte("v0"), []byte("v1")}, ScanLength: 7}
	for _, tc := range []struct {
		k     Kind
		field int
		want  string
	}{
		{Read, -1, "key=k"},
		{LockedRead, 1, "key=k"},
		{Update, -1, "v0 v1 key=k"},
		{LockedUpdate, 1, "v1 key=k"},
		{Insert, -1, "key=k v0 v1"},
		{Scan, 0, "key=k 7"},
	} {
		op.Field = tc.field
		var r recorder
		Bind(&r, tc.k, op)
		if got := strings.Join(r, " "); got != tc.want {
			t.Errorf("Bind %v field %d = %s, want %s", tc.k, tc.field, got, tc.want)
		}
		s := MySQL.Statements("t", 2)
		if n := len(s.List[s.Index(tc.k, tc.field)].Parts) - 1; n != len(r) {
			t.Errorf("Bind %v field %d gives %d parameters for %d placeholders", tc.k, tc.field, len(r), n)
		}
	}
}

func TestBatchInsertText(t *testing.T) {
	for d, want := range map[*Dialect]string{
		MySQL:    "INSERT INTO usertable (ycsb_key, field0) VALUES (?, ?), (?, ?)",
		Postgres: "INSERT INTO usertable (ycsb_key, field0) VALUES ($1, $2), ($3, $4)",
	} {
		c := &Client{p: &Prepared{Set: d.Statements("usertable", 1)}}
		if got := c.batchInsert(2); got != want {
			t.Errorf("%s: %s, want %s", d.Name, got, want)
		}
		if got := c.batchInsert(1); !strings.HasSuffix(got, "VALUES ("+d.Placeholder(1)+", "+d.Placeholder(2)+")") {
			t.Errorf("%s: one record: %s", d.Name, got)
		}
	}
}
