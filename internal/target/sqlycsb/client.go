package sqlycsb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/headroom-dev/headroom/internal/workload"
)

// Stmt is a statement run through database/sql: prepared on the server
// (once per pooled connection, by database/sql), or sent as text each
// time, with the driver interpolating the arguments.
type Stmt struct {
	Text string
	ps   *sql.Stmt // nil: sent as text
}

// NewStmt prepares text on db, unless asText.
func NewStmt(ctx context.Context, db *sql.DB, text string, asText bool) (Stmt, error) {
	if asText {
		return Stmt{Text: text}, nil
	}
	ps, err := db.PrepareContext(ctx, text)
	if err != nil {
		return Stmt{}, err
	}
	return Stmt{Text: text, ps: ps}, nil
}

// Prepared reports whether the statement is prepared on the server.
func (s Stmt) Prepared() bool { return s.ps != nil }

// Close releases a prepared statement.
func (s Stmt) Close() {
	if s.ps != nil {
		s.ps.Close()
	}
}

// Query runs the statement on db, or in tx when it is not nil.
func (s Stmt) Query(ctx context.Context, db *sql.DB, tx *sql.Tx, args ...any) (*sql.Rows, error) {
	switch {
	case s.ps == nil && tx == nil:
		return db.QueryContext(ctx, s.Text, args...)
	case s.ps == nil:
		return tx.QueryContext(ctx, s.Text, args...)
	case tx == nil:
		return s.ps.QueryContext(ctx, args...)
	}
	return tx.StmtContext(ctx, s.ps).QueryContext(ctx, args...)
}

// Exec runs the statement on db, or in tx when it is not nil.
func (s Stmt) Exec(ctx context.Context, db *sql.DB, tx *sql.Tx, args ...any) (sql.Result, error) {
	switch {
	case s.ps == nil && tx == nil:
		return db.ExecContext(ctx, s.Text, args...)
	case s.ps == nil:
		return tx.ExecContext(ctx, s.Text, args...)
	case tx == nil:
		return s.ps.ExecContext(ctx, args...)
	}
	return tx.StmtContext(ctx, s.ps).ExecContext(ctx, args...)
}

// Prepared is a Set made ready on a database/sql pool, shared by the
// target's clients.
type Prepared struct {
	Set   *Set
	db    *sql.DB
	stmts []Stmt // by position in Set.List
	kind  func(error) error
}

// Prepare makes s's statements ready on db: prepared, or kept as text
// when asText. kind names the error kinds of the clients' errors (nil:
// errors pass as they are).
func Prepare(ctx context.Context, db *sql.DB, s *Set, asText bool, kind func(error) error) (*Prepared, error) {
	if kind == nil {
		kind = func(err error) error { return err }
	}
	p := &Prepared{Set: s, db: db, kind: kind}
	for _, st := range s.List {
		ps, err := NewStmt(ctx, db, st.SQL, asText)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("%s target: preparing %q: %w", s.Dialect.Name, st.SQL, err)
		}
		p.stmts = append(p.stmts, ps)
	}
	return p, nil
}

// Stmt is statement i of the Set.
func (p *Prepared) Stmt(i int) Stmt { return p.stmts[i] }

// Close releases the prepared statements.
func (p *Prepared) Close() {
	for _, s := range p.stmts {
		s.Close()
	}
}

// Client runs YCSB operations for one request slot through database/sql.
// Its argument and result buffers are reused between requests.
type Client struct {
	p    *Prepared
	tx   *sql.Tx // of the read-modify-write or batch in progress
	args []any
	dest []any // pointers into raw
	raw  []sql.RawBytes
	// batch is the multi-row INSERT of batchRows records, kept for the
	// next batch of the same size.
	batch     string
	batchRows int
}

// NewClient returns a client of p.
func NewClient(p *Prepared) *Client {
	n := p.Set.Fields
	c := &Client{p: p, args: make([]any, 0, n+1), dest: make([]any, n), raw: make([]sql.RawBytes, n)}
	for i := range c.dest {
		c.dest[i] = &c.raw[i]
	}
	return c
}

// Close implements target.Client.
func (c *Client) Close() error { return nil }

// Do implements target.Client.
func (c *Client) Do(ctx context.Context, op *workload.Op) error {
	return c.p.kind(Do(ctx, c, c.p.Set, op))
}

// Row is the last row a read or scan returned: it points into the
// driver's buffers, valid until the next request.
func (c *Client) Row() []sql.RawBytes { return c.raw }

// Key implements Binder.
func (c *Client) Key(k []byte) {
	if c.p.Set.Dialect.KeyText {
		c.args = append(c.args, string(k))
	} else {
		c.args = append(c.args, k)
	}
}

// Value implements Binder.
func (c *Client) Value(v []byte) { c.args = append(c.args, v) }

// Int implements Binder.
func (c *Client) Int(n int64) { c.args = append(c.args, n) }

// Run implements Exec: a query's rows are scanned into the reused
// buffers, so that the result set is transferred and decoded as an
// application would, without keeping it.
func (c *Client) Run(ctx context.Context, i int, op *workload.Op) (int, int64, error) {
	st := &c.p.Set.List[i]
	c.args = c.args[:0]
	Bind(c, st.Kind, op)
	s := c.p.stmts[i]
	if !st.Kind.Returns() {
		res, err := s.Exec(ctx, c.p.db, c.tx, c.args...)
		if err != nil || st.Kind == Insert {
			return 0, 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, -1, nil // not known: not taken for a missing record
		}
		return 0, n, nil
	}
	dest := c.dest
	if st.Field >= 0 {
		dest = c.dest[:1]
	}
	rows, err := s.Query(ctx, c.p.db, c.tx, c.args...)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, 0, err
		}
		n++
		if st.Kind != Scan {
			// By primary key: one row at most. Next would close the
			// rows on finding no more; Close reports the same errors.
			return n, 0, rows.Close()
		}
	}
	return n, 0, rows.Err()
}

// Begin implements Exec.
func (c *Client) Begin(ctx context.Context) error {
	tx, err := c.p.db.BeginTx(ctx, nil)
	c.tx = tx
	return err
}

// Commit implements Exec.
func (c *Client) Commit(context.Context) error {
	tx := c.tx
	c.tx = nil
	return tx.Commit()
}

// Rollback implements Exec.
func (c *Client) Rollback(context.Context) error {
	tx := c.tx
	c.tx = nil
	return tx.Rollback()
}

// LoadBatch implements target.Loader: the records go in one transaction,
// one INSERT each or, where the dialect allows, in multi-row INSERTs.
func (c *Client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	if err := c.Begin(ctx); err != nil {
		return c.p.kind(err)
	}
	if err := c.load(ctx, ops); err != nil {
		_ = c.Rollback(ctx)
		return c.p.kind(err)
	}
	return c.p.kind(c.Commit(ctx))
}

func (c *Client) load(ctx context.Context, ops []*workload.Op) error {
	d := c.p.Set.Dialect
	if d.MaxBatchParams == 0 {
		insert := c.p.Set.Index(Insert, -1)
		for _, op := range ops {
			if _, _, err := c.Run(ctx, insert, op); err != nil {
				return err
			}
		}
		return nil
	}
	perRow := c.p.Set.Fields + 1
	for len(ops) > 0 {
		n, bytes := 0, 0
		for n < len(ops) && (n+1)*perRow <= d.MaxBatchParams && (n == 0 || bytes < d.MaxBatchBytes) {
			bytes += len(ops[n].Key)
			for _, v := range ops[n].Values {
				bytes += len(v)
			}
			n++
		}
		c.args = c.args[:0]
		for _, op := range ops[:n] {
			Bind(c, Insert, op)
		}
		if _, err := c.tx.ExecContext(ctx, c.batchInsert(n), c.args...); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// batchInsert is the INSERT of n records.
func (c *Client) batchInsert(n int) string {
	if c.batchRows == n {
		return c.batch
	}
	s := c.p.Set
	var b strings.Builder
	b.WriteString("INSERT INTO " + s.Table + " (" + s.Columns() + ") VALUES ")
	k := 0
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := 0; j <= s.Fields; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			k++
			b.WriteString(s.Dialect.Placeholder(k))
		}
		b.WriteByte(')')
	}
	c.batch, c.batchRows = b.String(), n
	return c.batch
}
