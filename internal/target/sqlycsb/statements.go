package sqlycsb

import (
	"strconv"
	"strings"
)

// Kind is what a statement does.
type Kind int

const (
	Read         Kind = iota // SELECT a record's fields by key
	Update                   // UPDATE a record's fields by key
	Insert                   // INSERT a record
	Scan                     // SELECT the fields of records from a key on, in key order
	LockedRead               // read-modify-write's read
	LockedUpdate             // read-modify-write's update
	numKinds
)

var kindNames = [numKinds]string{"read", "update", "insert", "scan", "locked_read", "locked_update"}

func (k Kind) String() string { return kindNames[k] }

// Statement is one statement of a Set.
type Statement struct {
	Kind  Kind
	Field int // the one field read or written; -1: every field
	// Parts is the text split at its parameters: len(Parts) is the
	// number of parameters plus one.
	Parts []string
	// SQL is the text with the dialect's placeholders.
	SQL string
}

// Set is every statement YCSB's operations run on one table, as YCSB's
// JDBC binding writes them: the whole record or one field, by primary key;
// scans in key order.
type Set struct {
	Dialect *Dialect
	Table   string
	Fields  int
	List    []Statement
	// index[k][f+1] is the position in List of kind k for field f (-1 for
	// every field); Insert has only the every-field statement.
	index [numKinds][]int
}

// Statements returns the Set for a table of fields fields. The order of
// List is: the every-field read, update, insert, scan (and locked read and
// update where the dialect has them), then per field the same kinds but
// insert.
func (d *Dialect) Statements(table string, fields int) *Set {
	s := &Set{Dialect: d, Table: table, Fields: fields}
	names := make([]string, fields)
	sets := make([]string, fields)
	for i := range names {
		names[i] = "field" + strconv.Itoa(i)
		sets[i] = names[i] + " = ?"
	}
	all := strings.Join(names, ", ")
	kinds := []Kind{Read, Update, Insert, Scan}
	if d.LockRead != "" || d.LockUpdate != "" {
		kinds = append(kinds, LockedRead, LockedUpdate)
	}
	for f := -1; f < fields; f++ {
		cols, set := all, strings.Join(sets, ", ")
		if f >= 0 {
			cols, set = names[f], sets[f]
		}
		for _, k := range kinds {
			var q string
			switch k {
			case Read:
				q = "SELECT " + cols + " FROM " + table + " WHERE ycsb_key = ?"
			case LockedRead:
				q = "SELECT " + cols + " FROM " + table + " WHERE ycsb_key = ?" + d.LockRead
			case Update:
				q = "UPDATE " + table + " SET " + set + " WHERE ycsb_key = ?"
			case LockedUpdate:
				q = "UPDATE " + table + " SET " + set + " WHERE ycsb_key = ?" + d.LockUpdate
			case Scan:
				q = "SELECT " + cols + " FROM " + table + " WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?"
			case Insert:
				if f >= 0 {
					continue
				}
				q = "INSERT INTO " + table + " (" + s.Columns() + ") VALUES (" + strings.Repeat("?, ", fields) + "?)"
			}
			parts := strings.Split(q, "?")
			s.index[k] = append(s.index[k], len(s.List))
			s.List = append(s.List, Statement{Kind: k, Field: f, Parts: parts, SQL: d.Render(parts)})
		}
	}
	if len(kinds) == 4 {
		s.index[LockedRead], s.index[LockedUpdate] = s.index[Read], s.index[Update]
	}
	return s
}

// Index is the position in List of the statement of kind k for field f
// (-1: every field).
func (s *Set) Index(k Kind, f int) int {
	if f < 0 || k == Insert {
		return s.index[k][0]
	}
	return s.index[k][f+1]
}

// Columns lists the table's columns: "ycsb_key, field0, ...".
func (s *Set) Columns() string {
	var b strings.Builder
	b.WriteString("ycsb_key")
	for i := range s.Fields {
		b.WriteString(", field" + strconv.Itoa(i))
	}
	return b.String()
}

// Returns reports whether statements of kind k return rows.
func (k Kind) Returns() bool { return k == Read || k == Scan || k == LockedRead }
