package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/workload"
)

// workStmts are the statements of a statement workload, prepared once per
// target and shared by its clients.
type workStmts struct {
	stmts []*sql.Stmt
	query []bool // returns rows, to be read and discarded
}

func prepareWork(ctx context.Context, db *sql.DB, list []workload.Statement) (*workStmts, error) {
	ws := &workStmts{}
	for i, s := range list {
		q := sqlwork.Rebind(sqlwork.SQLite, s.SQL)
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			ws.close()
			return nil, fmt.Errorf("sqlite target: workload.statements[%d] (%s): %w", i, s.Name, err)
		}
		ws.stmts = append(ws.stmts, st)
		ws.query = append(ws.query, sqlwork.IsQuery(q))
	}
	return ws, nil
}

func (ws *workStmts) close() {
	for _, s := range ws.stmts {
		s.Close()
	}
}

// workClient runs statement operations. Its argument slice and result
// buffers are reused from call to call.
type workClient struct {
	ws   *workStmts
	args []any
	cols []int // result columns per statement; -1 until its first run
	dest []any // pointers into raw
	raw  []sql.RawBytes
}

func newWorkClient(ws *workStmts) *workClient {
	c := &workClient{ws: ws, cols: make([]int, len(ws.stmts))}
	for i := range c.cols {
		c.cols[i] = -1
	}
	return c
}

func (c *workClient) Close() error { return nil }

// Do implements target.Client: it runs the op's statement with its drawn
// parameters and, for a query, reads every row.
func (c *workClient) Do(ctx context.Context, op *workload.Op) error {
	i := workload.StatementOf(op.Type)
	if i < 0 || i >= len(c.ws.stmts) {
		return fmt.Errorf("sqlite target: operation %d is not a statement of this workload", op.Type)
	}
	c.args = sqlwork.AppendArgs(c.args, op.Params)
	var err error
	if c.ws.query[i] {
		err = c.read(ctx, i)
	} else {
		_, err = c.ws.stmts[i].ExecContext(ctx, c.args...)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return kindOf(err)
	}
	return nil
}

// read runs query i and scans its rows into the reused raw buffers, so the
// result set is transferred and decoded as an application would, without
// keeping it.
func (c *workClient) read(ctx context.Context, i int) error {
	rows, err := c.ws.stmts[i].QueryContext(ctx, c.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := c.cols[i]
	if n < 0 {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		n = len(cols)
		c.cols[i] = n
		for len(c.raw) < n {
			c.raw = append(c.raw, nil)
		}
		c.dest = c.dest[:0]
		for k := range c.raw {
			c.dest = append(c.dest, &c.raw[k])
		}
	}
	for rows.Next() {
		if err := rows.Scan(c.dest[:n]...); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}
