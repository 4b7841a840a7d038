package mysql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/workload"
)

// wstmt is a statement of a statement workload: sent as text with its
// arguments interpolated by the driver (interpolate_params), or prepared
// on the server once per connection and executed with the binary
// protocol.
type wstmt struct {
	sqlycsb.Stmt
	query bool // returns rows, which are read and discarded
}

// client executes the operations of a statement workload for one request
// slot (YCSB workloads run through sqlycsb.Client). Its argument and
// result buffers are reused between calls.
type client struct {
	db   *sql.DB
	ws   []wstmt
	args []any
	// wdest holds, per statement, one destination per result column,
	// made on the statement's first execution.
	wdest [][]any
}

func newClient(t *Target) *client {
	return &client{db: t.db, ws: t.ws, wdest: make([][]any, len(t.ws))}
}

func (c *client) Close() error { return nil }

// Do implements target.Client.
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	i := workload.StatementOf(op.Type)
	if i < 0 {
		return fmt.Errorf("mysql target: operation %v in a statement workload", op.Type)
	}
	return kindOf(c.statement(ctx, i, op))
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
		_, err := s.Exec(ctx, c.db, nil, c.args...)
		return err
	}
	rows, err := s.Query(ctx, c.db, nil, c.args...)
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
