package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// statements are prepared once per target and shared by its clients
// (database/sql re-prepares them per connection as needed).
type statements struct {
	readAll, updateAll, insert, scanAll *sql.Stmt
	readOne, updateOne, scanOne         []*sql.Stmt // per field
	fields                              int
}

func prepareStatements(ctx context.Context, db *sql.DB, tbl string, fields int) (*statements, error) {
	st := &statements{fields: fields}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = db.PrepareContext(ctx, q)
		if err != nil {
			err = fmt.Errorf("sqlite target: preparing %q: %w", q, err)
		}
		return s
	}
	names := make([]string, fields)
	sets := make([]string, fields)
	marks := make([]string, fields+1)
	for i := range names {
		names[i] = fmt.Sprintf("field%d", i)
		sets[i] = names[i] + " = ?"
		marks[i] = "?"
	}
	marks[fields] = "?"
	all := strings.Join(names, ", ")
	st.readAll = prep(fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key = ?", all, tbl))
	st.updateAll = prep(fmt.Sprintf("UPDATE %s SET %s WHERE ycsb_key = ?", tbl, strings.Join(sets, ", ")))
	st.insert = prep(fmt.Sprintf("INSERT INTO %s (ycsb_key, %s) VALUES (%s)", tbl, all, strings.Join(marks, ", ")))
	st.scanAll = prep(fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?", all, tbl))
	for _, n := range names {
		st.readOne = append(st.readOne, prep(fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key = ?", n, tbl)))
		st.updateOne = append(st.updateOne, prep(fmt.Sprintf("UPDATE %s SET %s = ? WHERE ycsb_key = ?", tbl, n)))
		st.scanOne = append(st.scanOne, prep(fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?", n, tbl)))
	}
	if err != nil {
		st.close()
		return nil, err
	}
	return st, nil
}

func (st *statements) close() {
	for _, s := range append([]*sql.Stmt{st.readAll, st.updateAll, st.insert, st.scanAll}, append(append(st.readOne, st.updateOne...), st.scanOne...)...) {
		if s != nil {
			s.Close()
		}
	}
}

// client executes YCSB operations. Its argument and result buffers are
// reused between calls.
type client struct {
	db   *sql.DB
	st   *statements
	args []any
	dest []any
	raw  []sql.RawBytes
}

func newClient(db *sql.DB, st *statements) *client {
	c := &client{db: db, st: st, args: make([]any, st.fields+1), dest: make([]any, st.fields), raw: make([]sql.RawBytes, st.fields)}
	for i := range c.dest {
		c.dest[i] = &c.raw[i]
	}
	return c
}

func (c *client) Close() error { return nil }

// Do implements target.Client.
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	var err error
	switch op.Type {
	case workload.Read:
		err = c.read(ctx, nil, op)
	case workload.Update:
		err = c.update(ctx, nil, op)
	case workload.Insert:
		err = c.insertRow(ctx, nil, op)
	case workload.Scan:
		err = c.scan(ctx, op)
	case workload.ReadModifyWrite:
		err = c.readModifyWrite(ctx, op)
	default:
		err = fmt.Errorf("sqlite target: unsupported operation %v", op.Type)
	}
	return kindOf(err)
}

func inTx(ctx context.Context, tx *sql.Tx, s *sql.Stmt) *sql.Stmt {
	if tx == nil {
		return s
	}
	return tx.StmtContext(ctx, s)
}

func (c *client) read(ctx context.Context, tx *sql.Tx, op *workload.Op) error {
	s, dest := c.st.readAll, c.dest
	if op.Field >= 0 {
		s, dest = c.st.readOne[op.Field], c.dest[:1]
	}
	rows, err := inTx(ctx, tx, s).QueryContext(ctx, op.Key)
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

func (c *client) update(ctx context.Context, tx *sql.Tx, op *workload.Op) error {
	var args []any
	s := c.st.updateAll
	if op.Field >= 0 {
		s = c.st.updateOne[op.Field]
		c.args[0], c.args[1] = op.Values[op.Field], op.Key
		args = c.args[:2]
	} else {
		for i, v := range op.Values {
			c.args[i] = v
		}
		c.args[len(op.Values)] = op.Key
		args = c.args[:len(op.Values)+1]
	}
	res, err := inTx(ctx, tx, s).ExecContext(ctx, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return target.ErrNotFound
	}
	return nil
}

func (c *client) insertRow(ctx context.Context, tx *sql.Tx, op *workload.Op) error {
	c.args[0] = op.Key
	for i, v := range op.Values {
		c.args[i+1] = v
	}
	_, err := inTx(ctx, tx, c.st.insert).ExecContext(ctx, c.args[:len(op.Values)+1]...)
	return err
}

func (c *client) scan(ctx context.Context, op *workload.Op) error {
	s, dest := c.st.scanAll, c.dest
	if op.Field >= 0 {
		s, dest = c.st.scanOne[op.Field], c.dest[:1]
	}
	rows, err := s.QueryContext(ctx, op.Key, op.ScanLength)
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

// readModifyWrite reads the record and writes it back in one transaction,
// as YCSB's read-modify-write does.
func (c *client) readModifyWrite(ctx context.Context, op *workload.Op) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := c.read(ctx, tx, op); err != nil {
		tx.Rollback()
		return err
	}
	if err := c.update(ctx, tx, op); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// LoadBatch implements target.Loader: the batch is inserted in one
// transaction, which is what makes populating SQLite fast.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return kindOf(err)
	}
	for _, op := range ops {
		if err := c.insertRow(ctx, tx, op); err != nil {
			tx.Rollback()
			return kindOf(err)
		}
	}
	return kindOf(tx.Commit())
}
