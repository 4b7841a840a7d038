package sqlwork

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// colType is a portable column type; ddlType spells it per dialect.
type colType int

const (
	tInt       colType = iota
	tVarchar           // size = length
	tNumeric           // size = precision, scale
	tDate              // values 'YYYY-MM-DD'
	tTimestamp         // values 'YYYY-MM-DD HH:MM:SS'
)

type column struct {
	name        string
	typ         colType
	size, scale int
}

type index struct {
	name   string
	unique bool
	cols   string
}

type tableDef struct {
	name    string
	cols    []column
	pk      string
	indexes []index
}

// builtinSet is a data set whose schema and rows Headroom generates.
type builtinSet struct {
	tables []tableDef
	// loads returns the tables' rows for a scale and seed, in table order.
	loads func(scale map[string]int64, seed uint64, d Dialect) []*tableLoad
}

func (b *builtinSet) refs() []tableRef {
	out := make([]tableRef, len(b.tables))
	for i, t := range b.tables {
		out[i] = tableRef{name: t.name, ref: t.name}
	}
	return out
}

// ddlType spells a column type in a dialect. SQLite's types only set an
// affinity; the names are kept close to the others for readability, but
// money is REAL there, since SQLite has no exact decimals anyway. MySQL's
// TIMESTAMP is limited to 1970-2038 and may update itself, so DATETIME.
func ddlType(d Dialect, c column) string {
	switch c.typ {
	case tInt:
		if d == MySQL {
			return "INT"
		}
		return "INTEGER"
	case tVarchar:
		return "VARCHAR(" + strconv.Itoa(c.size) + ")"
	case tNumeric:
		switch d {
		case SQLite:
			return "REAL"
		case MySQL:
			return fmt.Sprintf("DECIMAL(%d,%d)", c.size, c.scale)
		}
		return fmt.Sprintf("NUMERIC(%d,%d)", c.size, c.scale)
	case tDate:
		return "DATE"
	default:
		if d == MySQL {
			return "DATETIME"
		}
		return "TIMESTAMP"
	}
}

// createSQL returns the statements that create table t and its indexes.
func createSQL(d Dialect, t tableDef) []string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(t.name)
	b.WriteString(" (\n")
	for _, c := range t.cols {
		fmt.Fprintf(&b, "  %s %s,\n", c.name, ddlType(d, c))
	}
	fmt.Fprintf(&b, "  PRIMARY KEY (%s)\n)", t.pk)
	if d == MySQL {
		b.WriteString(" ENGINE=InnoDB")
	}
	out := []string{b.String()}
	for _, ix := range t.indexes {
		u := ""
		if ix.unique {
			u = "UNIQUE "
		}
		out = append(out, fmt.Sprintf("CREATE %sINDEX %s ON %s (%s)", u, ix.name, t.name, ix.cols))
	}
	return out
}

// setup drops (when fresh) and creates the tables that are missing.
func (b *builtinSet) setup(ctx context.Context, db *sql.DB, d Dialect, fresh bool) error {
	if fresh {
		if err := dropTables(ctx, db, d, b.refs()); err != nil {
			return err
		}
	}
	for _, t := range b.tables {
		if !fresh && exists(ctx, db, t.name) {
			continue
		}
		for _, q := range createSQL(d, t) {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("workload.dataset: creating table %s: %w", t.name, err)
			}
		}
	}
	return nil
}

// columnNames lists t's columns in order.
func (t tableDef) columnNames() []string {
	out := make([]string, len(t.cols))
	for i, c := range t.cols {
		out[i] = c.name
	}
	return out
}

// rowBytes bounds the size of one row's values.
func (t tableDef) rowBytes() int {
	n := 0
	for _, c := range t.cols {
		if c.typ == tVarchar {
			n += c.size
		} else {
			n += 20
		}
	}
	return n
}
