package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// stmt is one statement of the workload: sent as text with its arguments
// interpolated by the driver (interpolate_params), or prepared on the
// server once per connection and executed with the binary protocol.
type stmt struct {
	text string
	ps   *sql.Stmt // nil when interpolating
}

func (s stmt) close() {
	if s.ps != nil {
		s.ps.Close()
	}
}

// wstmt is a statement of a statement workload.
type wstmt struct {
	stmt
	query bool // returns rows, which are read and discarded
}

// ycsbStmts are the YCSB statements, shared by all clients. The
// read-modify-write ones differ in text from read and update (FOR UPDATE,
// LIMIT 1) so that performance_schema times them apart.
type ycsbStmts struct {
	fields                      int
	readAll, updateAll, scanAll stmt
	insert                      stmt
	rmwReadAll, rmwUpdateAll    stmt
	readOne, updateOne, scanOne []stmt // per field
	rmwReadOne, rmwUpdateOne    []stmt
	insertCols                  string // "(ycsb_key, field0, ...)" for batch inserts
	table                       string
}

func newYCSBStmts(ctx context.Context, t *Target, fields int) (*ycsbStmts, error) {
	tbl := t.opts.Table
	y := &ycsbStmts{fields: fields, table: tbl}
	var err error
	mk := func(format string, args ...any) stmt {
		if err != nil {
			return stmt{}
		}
		q := fmt.Sprintf(format, args...)
		var s stmt
		if s, err = t.newStmt(ctx, q); err != nil {
			err = fmt.Errorf("mysql target: preparing %q: %w", q, err)
		}
		return s
	}
	names := make([]string, fields)
	sets := make([]string, fields)
	for i := range names {
		names[i] = fmt.Sprintf("field%d", i)
		sets[i] = names[i] + " = ?"
	}
	all := strings.Join(names, ", ")
	marks := strings.Repeat("?, ", fields) + "?"
	y.insertCols = "(ycsb_key, " + all + ")"
	y.readAll = mk("SELECT %s FROM %s WHERE ycsb_key = ?", all, tbl)
	y.updateAll = mk("UPDATE %s SET %s WHERE ycsb_key = ?", tbl, strings.Join(sets, ", "))
	y.insert = mk("INSERT INTO %s %s VALUES (%s)", tbl, y.insertCols, marks)
	y.scanAll = mk("SELECT %s FROM %s WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?", all, tbl)
	y.rmwReadAll = mk("SELECT %s FROM %s WHERE ycsb_key = ? FOR UPDATE", all, tbl)
	y.rmwUpdateAll = mk("UPDATE %s SET %s WHERE ycsb_key = ? LIMIT 1", tbl, strings.Join(sets, ", "))
	for _, n := range names {
		y.readOne = append(y.readOne, mk("SELECT %s FROM %s WHERE ycsb_key = ?", n, tbl))
		y.updateOne = append(y.updateOne, mk("UPDATE %s SET %s = ? WHERE ycsb_key = ?", tbl, n))
		y.scanOne = append(y.scanOne, mk("SELECT %s FROM %s WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?", n, tbl))
		y.rmwReadOne = append(y.rmwReadOne, mk("SELECT %s FROM %s WHERE ycsb_key = ? FOR UPDATE", n, tbl))
		y.rmwUpdateOne = append(y.rmwUpdateOne, mk("UPDATE %s SET %s = ? WHERE ycsb_key = ? LIMIT 1", tbl, n))
	}
	if err != nil {
		y.close()
		return nil, err
	}
	return y, nil
}

func (y *ycsbStmts) close() {
	for _, s := range []stmt{y.readAll, y.updateAll, y.scanAll, y.insert, y.rmwReadAll, y.rmwUpdateAll} {
		s.close()
	}
	for _, l := range [][]stmt{y.readOne, y.updateOne, y.scanOne, y.rmwReadOne, y.rmwUpdateOne} {
		for _, s := range l {
			s.close()
		}
	}
}

// client executes operations for one request slot. Its argument and
// result buffers are reused between calls.
type client struct {
	db   *sql.DB
	y    *ycsbStmts
	ws   []wstmt
	args []any
	dest []any // YCSB rows: pointers into raw
	raw  []sql.RawBytes
	// wdest holds, per statement, one destination per result column,
	// made on the statement's first execution.
	wdest [][]any
	batch batchText
}

func newClient(t *Target) *client {
	c := &client{db: t.db, y: t.ycsb, ws: t.ws}
	if c.y != nil {
		c.args = make([]any, c.y.fields+1)
		c.raw = make([]sql.RawBytes, c.y.fields)
		c.dest = make([]any, c.y.fields)
		for i := range c.dest {
			c.dest[i] = &c.raw[i]
		}
	}
	c.wdest = make([][]any, len(c.ws))
	return c
}

func (c *client) Close() error { return nil }

// Do implements target.Client.
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	if i := workload.StatementOf(op.Type); i >= 0 {
		return kindOf(c.statement(ctx, i, op))
	}
	if c.y == nil {
		return fmt.Errorf("mysql target: operation %v in a statement workload", op.Type)
	}
	var err error
	switch op.Type {
	case workload.Read:
		err = c.read(ctx, nil, c.pick(c.y.readAll, c.y.readOne, op.Field), op)
	case workload.Update:
		err = c.update(ctx, nil, c.pick(c.y.updateAll, c.y.updateOne, op.Field), op)
	case workload.Insert:
		err = c.insertRow(ctx, op)
	case workload.Scan:
		err = c.scan(ctx, op)
	case workload.ReadModifyWrite:
		err = c.readModifyWrite(ctx, op)
	default:
		err = fmt.Errorf("mysql target: unsupported operation %v", op.Type)
	}
	return kindOf(err)
}

// pick returns the all-fields statement, or field f's.
func (c *client) pick(all stmt, one []stmt, f int) stmt {
	if f >= 0 {
		return one[f]
	}
	return all
}

func (c *client) query(ctx context.Context, tx *sql.Tx, s stmt, args ...any) (*sql.Rows, error) {
	switch {
	case s.ps == nil && tx == nil:
		return c.db.QueryContext(ctx, s.text, args...)
	case s.ps == nil:
		return tx.QueryContext(ctx, s.text, args...)
	case tx == nil:
		return s.ps.QueryContext(ctx, args...)
	}
	return tx.StmtContext(ctx, s.ps).QueryContext(ctx, args...)
}

func (c *client) exec(ctx context.Context, tx *sql.Tx, s stmt, args ...any) (sql.Result, error) {
	switch {
	case s.ps == nil && tx == nil:
		return c.db.ExecContext(ctx, s.text, args...)
	case s.ps == nil:
		return tx.ExecContext(ctx, s.text, args...)
	case tx == nil:
		return s.ps.ExecContext(ctx, args...)
	}
	return tx.StmtContext(ctx, s.ps).ExecContext(ctx, args...)
}

// Keys go to the server as strings, not []byte: the driver would send a
// []byte as a _binary literal, and a binary value compared with the
// utf8mb4 key column may keep some servers from using the primary key.

func (c *client) read(ctx context.Context, tx *sql.Tx, s stmt, op *workload.Op) error {
	dest := c.dest
	if op.Field >= 0 {
		dest = c.dest[:1]
	}
	rows, err := c.query(ctx, tx, s, string(op.Key))
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return target.ErrNotFound
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

func (c *client) update(ctx context.Context, tx *sql.Tx, s stmt, op *workload.Op) error {
	var args []any
	if op.Field >= 0 {
		c.args[0], c.args[1] = op.Values[op.Field], string(op.Key)
		args = c.args[:2]
	} else {
		n := len(op.Values)
		for i, v := range op.Values {
			c.args[i] = v
		}
		c.args[n] = string(op.Key)
		args = c.args[:n+1]
	}
	res, err := c.exec(ctx, tx, s, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return target.ErrNotFound
	}
	return nil
}

func (c *client) insertRow(ctx context.Context, op *workload.Op) error {
	c.args[0] = string(op.Key)
	for i, v := range op.Values {
		c.args[i+1] = v
	}
	_, err := c.exec(ctx, nil, c.y.insert, c.args[:len(op.Values)+1]...)
	return err
}

func (c *client) scan(ctx context.Context, op *workload.Op) error {
	s, dest := c.y.scanAll, c.dest
	if op.Field >= 0 {
		s, dest = c.y.scanOne[op.Field], c.dest[:1]
	}
	rows, err := c.query(ctx, nil, s, string(op.Key), op.ScanLength)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
	}
	return rows.Err()
}

// readModifyWrite reads the record with a write lock and writes it back in
// one transaction, as YCSB's read-modify-write does.
func (c *client) readModifyWrite(ctx context.Context, op *workload.Op) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := c.read(ctx, tx, c.pick(c.y.rmwReadAll, c.y.rmwReadOne, op.Field), op); err != nil {
		tx.Rollback()
		return err
	}
	if err := c.update(ctx, tx, c.pick(c.y.rmwUpdateAll, c.y.rmwUpdateOne, op.Field), op); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// statement executes statement i of a statement workload; a query's rows
// are read into reused buffers and discarded.
func (c *client) statement(ctx context.Context, i int, op *workload.Op) error {
	if i >= len(c.ws) {
		return fmt.Errorf("mysql target: statement %d is not in the prepared workload", i)
	}
	s := c.ws[i]
	c.args = sqlwork.AppendArgs(c.args, op.Params)
	if !s.query {
		_, err := c.exec(ctx, nil, s.stmt, c.args...)
		return err
	}
	rows, err := c.query(ctx, nil, s.stmt, c.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	dest := c.wdest[i]
	if dest == nil {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		raw := make([]sql.RawBytes, len(cols))
		dest = make([]any, len(cols))
		for j := range dest {
			dest[j] = &raw[j]
		}
		c.wdest[i] = dest
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Batch inserts are bounded by the protocol's 65535 placeholders per
// statement and kept to a few MiB per statement (max_allowed_packet is
// 16 MiB by default in MariaDB, 64 MiB in MySQL 8).
const (
	maxPlaceholders = 65535
	maxBatchBytes   = 4 << 20
)

// batchText caches the multi-row INSERT text of the last row count.
type batchText struct {
	rows int
	text string
}

// LoadBatch implements target.Loader: the records go in multi-row INSERT
// statements in one transaction.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	if c.y == nil {
		return fmt.Errorf("mysql target: LoadBatch in a statement workload")
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return kindOf(err)
	}
	for len(ops) > 0 {
		n, bytes := 0, 0
		for n < len(ops) && (n+1)*(c.y.fields+1) <= maxPlaceholders && (n == 0 || bytes < maxBatchBytes) {
			bytes += len(ops[n].Key)
			for _, v := range ops[n].Values {
				bytes += len(v)
			}
			n++
		}
		args := c.args[:0]
		for _, op := range ops[:n] {
			args = append(args, string(op.Key))
			for _, v := range op.Values {
				args = append(args, v)
			}
		}
		c.args = args
		if _, err := tx.ExecContext(ctx, c.batchInsert(n), args...); err != nil {
			tx.Rollback()
			return kindOf(err)
		}
		ops = ops[n:]
	}
	return kindOf(tx.Commit())
}

// batchInsert is the INSERT of n rows.
func (c *client) batchInsert(n int) string {
	if c.batch.rows != n {
		row := "(" + strings.Repeat("?, ", c.y.fields) + "?)"
		var b strings.Builder
		b.Grow(len(c.y.table) + len(c.y.insertCols) + 20 + n*(len(row)+2))
		b.WriteString("INSERT INTO ")
		b.WriteString(c.y.table)
		b.WriteString(" ")
		b.WriteString(c.y.insertCols)
		b.WriteString(" VALUES ")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(row)
		}
		c.batch = batchText{rows: n, text: b.String()}
	}
	return c.batch.text
}
