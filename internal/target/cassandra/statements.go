package cassandra

import (
	"fmt"
	"strings"
)

// statements are the CQL texts of the YCSB operations on one table (see
// the package comment). The driver prepares each text once per node and
// keeps it in its cache; clients bind values to their own Query objects.
type statements struct {
	readAll   string
	readOne   []string // per field
	updateAll string
	updateOne []string // per field
	insert    string
	scanAll   string
	scanOne   []string // per field
}

func newStatements(table string, fields []string) statements {
	all := strings.Join(fields, ", ")
	s := statements{
		readAll: fmt.Sprintf("SELECT %s FROM %s WHERE y_id = ?", all, table),
		scanAll: fmt.Sprintf("SELECT %s FROM %s WHERE token(y_id) >= token(?) LIMIT ?", all, table),
		insert:  fmt.Sprintf("INSERT INTO %s (y_id, %s) VALUES (?%s)", table, all, strings.Repeat(", ?", len(fields))),
	}
	sets := make([]string, len(fields))
	for i, f := range fields {
		sets[i] = f + " = ?"
		s.readOne = append(s.readOne, fmt.Sprintf("SELECT %s FROM %s WHERE y_id = ?", f, table))
		s.updateOne = append(s.updateOne, fmt.Sprintf("UPDATE %s SET %s = ? WHERE y_id = ?", table, f))
		s.scanOne = append(s.scanOne, fmt.Sprintf("SELECT %s FROM %s WHERE token(y_id) >= token(?) LIMIT ?", f, table))
	}
	s.updateAll = fmt.Sprintf("UPDATE %s SET %s WHERE y_id = ?", table, strings.Join(sets, ", "))
	return s
}
