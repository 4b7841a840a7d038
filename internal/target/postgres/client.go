package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/workload"
)

// connState is what a client keeps on each pooled connection: the
// statements prepared on it so far.
type connState struct {
	qs    *querySet
	descs []*pgconn.StatementDescription
}

const connStateKey = "headroom"

// client executes operations. Its parameter buffers are reused between
// requests, so a prepared-mode request allocates little besides what the
// driver needs.
type client struct {
	t *Target
	n int // the client's number, which picks its reader
	// primaryOnly sends reads to the primary whatever read_from says
	// (StrongClient).
	primaryOnly bool
	params      [][]byte // parameter values as text
	isNum       []bool   // parameter is a number (unquoted in simple mode)
	num         []byte   // text of numeric parameters
	sql         []byte   // simple mode: the statement with literals inlined
	copy        bytes.Buffer
	reader      bytes.Reader
	// run is the YCSB request in flight, for the sqlycsb.Exec methods.
	run struct {
		qs *querySet
		pc *pgconn.PgConn
	}

	// Cancellation. The driver would register a callback on the request's
	// context for every statement; the engine passes the same context to
	// every request of a client until it times one out, so the client
	// watches that context once instead and aborts the request in flight.
	watched   context.Context
	stopWatch func() bool
	mu        sync.Mutex
	busy      *pgconn.PgConn // connection of the request in flight
	aborted   bool           // busy was aborted by a cancellation
}

func newClient(t *Target) *client { return &client{t: t, n: int(t.clients.Add(1) - 1)} }

// poolFor is the pool op goes to: with readers (read_from), a YCSB read or
// scan goes to the client's reader, its number modulo the readers, so that
// the clients spread evenly over them and each keeps to one; the rest go
// to the primary.
func (c *client) poolFor(op *workload.Op) *pgxpool.Pool {
	if c.t.readers != nil && !c.primaryOnly {
		if op.Type == workload.Read || op.Type == workload.Scan {
			if rs := c.t.readers.Load(); rs != nil && len(rs.pools) > 0 {
				if p := rs.pools[c.n%len(rs.pools)]; p != nil {
					return p
				}
			}
		} else {
			c.t.writes.Add(1)
		}
	}
	return c.t.pool.Load()
}

// Close stops watching the last context.
func (c *client) Close() error {
	if c.stopWatch != nil {
		c.stopWatch()
	}
	return nil
}

// Do implements target.Client. Each request takes a connection from the
// pool (waiting when all are busy) and gives it back.
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.watch(ctx)
	qs := c.t.qs.Load()
	conn, err := c.poolFor(op).Acquire(ctx)
	if err != nil {
		return acquireError(ctx, err)
	}
	pc := conn.Conn().PgConn()
	c.mu.Lock()
	c.busy = pc
	c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		// Cancelled between Acquire and busy being set: abort saw no
		// request in flight, so do not start one that nothing would stop.
		c.mu.Lock()
		c.busy, c.aborted = nil, false
		c.mu.Unlock()
		conn.Release()
		return err
	}
	err = c.do(context.Background(), qs, pc, op)
	c.mu.Lock()
	aborted := c.aborted
	c.busy, c.aborted = nil, false
	c.mu.Unlock()
	if err != nil {
		err = classify(ctx, err, pc)
	}
	if aborted {
		// Its deadline is set and a cancel request may still reach its
		// backend: the pool must not hand it out again.
		_ = conn.Conn().Close(context.Background())
	}
	conn.Release()
	return err
}

func (c *client) watch(ctx context.Context) {
	if ctx == c.watched {
		return
	}
	if c.stopWatch != nil {
		c.stopWatch()
	}
	c.mu.Lock()
	c.watched = ctx
	c.mu.Unlock()
	c.stopWatch = nil
	if ctx.Done() != nil {
		c.stopWatch = context.AfterFunc(ctx, func() { c.abort(ctx) })
	}
}

// abort ends the request in flight when its context is done: the wait for
// the server's answer ends at once, and the server is asked to cancel the
// statement, which would otherwise run to its end. A late callback of an
// earlier context (it runs on its own goroutine) must not abort the next
// request, which runs under a new context.
func (c *client) abort(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := c.busy
	if pc == nil || c.aborted || c.watched != ctx {
		return
	}
	c.aborted = true
	_ = pc.Conn().SetDeadline(time.Now())
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = pc.CancelRequest(ctx)
	}()
}

func (c *client) do(ctx context.Context, qs *querySet, pc *pgconn.PgConn, op *workload.Op) error {
	if i := workload.StatementOf(op.Type); i >= 0 {
		if i >= len(qs.q)-qs.stmtBase {
			return fmt.Errorf("postgres target: statement %d is not in the prepared workload", i)
		}
		c.reset()
		for _, p := range op.Params {
			if p.IsStr {
				c.addText(p.Str)
			} else {
				c.addInt(p.Int)
			}
		}
		_, _, err := c.exec(ctx, qs, pc, qs.stmtBase+i)
		return err
	}
	if qs.ycsb == nil {
		return fmt.Errorf("postgres target: YCSB operation %v in a statement workload", op.Type)
	}
	c.run.qs, c.run.pc = qs, pc
	err := sqlycsb.Do(ctx, c, qs.ycsb, op)
	c.run.qs, c.run.pc = nil, nil
	return err
}

// Run implements sqlycsb.Exec on the connection of the request in flight.
func (c *client) Run(ctx context.Context, i int, op *workload.Op) (int, int64, error) {
	c.reset()
	sqlycsb.Bind(c, c.run.qs.ycsb.List[i].Kind, op)
	return c.exec(ctx, c.run.qs, c.run.pc, i)
}

// Begin implements sqlycsb.Exec.
func (c *client) Begin(ctx context.Context) error { return c.run.pc.Exec(ctx, "BEGIN").Close() }

// Commit implements sqlycsb.Exec.
func (c *client) Commit(ctx context.Context) error { return c.run.pc.Exec(ctx, "COMMIT").Close() }

// Rollback implements sqlycsb.Exec. A failed rollback leaves the
// connection in a transaction, and the pool discards it on release.
func (c *client) Rollback(ctx context.Context) error { return c.run.pc.Exec(ctx, "ROLLBACK").Close() }

// Key, Value and Int implement sqlycsb.Binder: every parameter goes as
// text.
func (c *client) Key(k []byte)   { c.addText(k) }
func (c *client) Value(v []byte) { c.addText(v) }
func (c *client) Int(n int64)    { c.addInt(n) }

func (c *client) reset() {
	c.params, c.isNum, c.num = c.params[:0], c.isNum[:0], c.num[:0]
}

func (c *client) addText(v []byte) {
	c.params = append(c.params, v)
	c.isNum = append(c.isNum, false)
}

func (c *client) addInt(v int64) {
	start := len(c.num)
	c.num = strconv.AppendInt(c.num, v, 10)
	// Earlier slices keep pointing at the old array if this one grew,
	// which still holds their digits.
	c.params = append(c.params, c.num[start:len(c.num):len(c.num)])
	c.isNum = append(c.isNum, true)
}

// exec runs statement i with the client's parameters, reads and discards
// its rows, and returns how many there were and how many rows the command
// tag counts.
func (c *client) exec(ctx context.Context, qs *querySet, pc *pgconn.PgConn, i int) (int, int64, error) {
	if qs.simple {
		return c.execSimple(ctx, qs, pc, i)
	}
	desc, err := prepared(ctx, qs, pc, i)
	if err != nil {
		return 0, 0, err
	}
	rr := pc.ExecStatement(ctx, desc, c.params, nil, nil)
	rows := 0
	for rr.NextRow() {
		rows++
	}
	tag, err := rr.Close()
	return rows, tag.RowsAffected(), err
}

// prepared returns statement i prepared on this connection, preparing it
// on first use.
func prepared(ctx context.Context, qs *querySet, pc *pgconn.PgConn, i int) (*pgconn.StatementDescription, error) {
	st, _ := pc.CustomData()[connStateKey].(*connState)
	if st == nil || st.qs != qs {
		st = &connState{qs: qs, descs: make([]*pgconn.StatementDescription, len(qs.q))}
		pc.CustomData()[connStateKey] = st
	}
	if d := st.descs[i]; d != nil {
		return d, nil
	}
	d, err := pc.Prepare(ctx, qs.q[i].name, qs.q[i].sql, nil)
	if err != nil {
		return nil, err
	}
	st.descs[i] = d
	return d, nil
}

// execSimple inlines the parameters as literals and sends the statement
// with the simple query protocol.
func (c *client) execSimple(ctx context.Context, qs *querySet, pc *pgconn.PgConn, i int) (int, int64, error) {
	c.sql = inline(c.sql[:0], qs.q[i].parts, c.params, c.isNum)
	mrr := pc.Exec(ctx, string(c.sql))
	rows := 0
	var tag pgconn.CommandTag
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		for rr.NextRow() {
			rows++
		}
		tag, _ = rr.Close()
	}
	return rows, tag.RowsAffected(), mrr.Close()
}

// inline appends the statement split into parts with each parameter
// written as a literal between them.
func inline(b []byte, parts []string, params [][]byte, isNum []bool) []byte {
	b = append(b, parts[0]...)
	for j, p := range params {
		// Spaces around each literal, so that a negative number after a
		// minus sign cannot start a comment.
		b = append(b, ' ')
		if isNum[j] {
			b = append(b, p...)
		} else {
			b = appendLiteral(b, p)
		}
		b = append(b, ' ')
		b = append(b, parts[j+1]...)
	}
	return b
}

// appendLiteral appends v as an SQL string literal: quotes doubled, and an
// E” literal with escaped backslashes when v holds one, which reads the
// same whatever standard_conforming_strings says.
func appendLiteral(b, v []byte) []byte {
	if bytes.IndexByte(v, '\\') >= 0 {
		b = append(b, 'E')
	}
	b = append(b, '\'')
	for _, ch := range v {
		switch ch {
		case '\'':
			b = append(b, '\'', '\'')
		case '\\':
			b = append(b, '\\', '\\')
		default:
			b = append(b, ch)
		}
	}
	return append(b, '\'')
}

// LoadBatch implements target.Loader with one COPY per batch: the fastest
// way into PostgreSQL, and atomic like one transaction.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	qs := c.t.qs.Load()
	if qs.ycsb == nil {
		return errors.New("postgres target: the YCSB table is not prepared")
	}
	c.copy.Reset()
	for _, op := range ops {
		appendCopyField(&c.copy, op.Key)
		for _, v := range op.Values {
			c.copy.WriteByte('\t')
			appendCopyField(&c.copy, v)
		}
		c.copy.WriteByte('\n')
	}
	if c.t.readers != nil {
		c.t.writes.Add(1)
	}
	conn, err := c.t.pool.Load().Acquire(ctx)
	if err != nil {
		return acquireError(ctx, err)
	}
	defer conn.Release()
	pc := conn.Conn().PgConn()
	c.reader.Reset(c.copy.Bytes())
	tag, err := pc.CopyFrom(ctx, &c.reader, qs.copySQL)
	if err != nil {
		return classify(ctx, err, pc)
	}
	if n := tag.RowsAffected(); n != int64(len(ops)) {
		return fmt.Errorf("postgres target: COPY stored %d of %d records", n, len(ops))
	}
	return nil
}

// appendCopyField writes v in COPY's text format, escaping the characters
// that format gives meaning to.
func appendCopyField(b *bytes.Buffer, v []byte) {
	for _, ch := range v {
		switch ch {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(ch)
		}
	}
}

// acquireError names a failure to get a connection: the server cannot be
// reached, unless it said why.
func acquireError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if k := classify(ctx, err, nil); k != err {
		return k
	}
	return &target.KindError{K: target.KindConnection, Err: err}
}
