package cassandra

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// A client keeps one driver Query per statement it has used and binds the
// same argument holders to it on every request: the holders implement the
// driver's Marshaler and Unmarshaler, so values go from the op's buffers to
// the frame, and from the frame to the client's buffers, without being
// boxed or converted. The routing key (a text partition key's routing key
// is its bytes) is set from the op's key, so the driver does not compute
// it. What the driver allocates per request inside its execution path
// remains (see bench_test.go).

// argBytes is a text value bound from a byte slice the client points it at.
type argBytes struct{ b []byte }

func (a *argBytes) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return a.b, nil }

// argInt is an int value (the scan's LIMIT).
type argInt struct {
	v   int32
	buf [4]byte
}

func (a *argInt) MarshalCQL(gocql.TypeInfo) ([]byte, error) {
	binary.BigEndian.PutUint32(a.buf[:], uint32(a.v))
	return a.buf[:], nil
}

// column receives one text column of a result row into a buffer it
// reuses.
type column struct{ b []byte }

func (c *column) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	c.b = append(c.b[:0], data...)
	return nil
}

type client struct {
	t    *Target
	sess *gocql.Session
	st   *statements

	key   argBytes
	vals  []argBytes // one per field
	limit argInt

	// Bound argument lists, built once.
	keyArgs    []any // key
	updateArgs []any // field0..fieldN, key
	oneArgs    [][]any
	insertArgs []any // key, field0..fieldN
	scanArgs   []any // key, limit

	// Result destinations.
	cols    []column
	allDest []any // every column
	oneDest []any // one column

	// Queries, made on first use.
	readAll, updateAll, insert, scanAll *gocql.Query
	readOne, updateOne, scanOne         []*gocql.Query

	rows int // rows the last scan returned

	load *loader
}

func newClient(t *Target) *client {
	n := len(t.fields)
	c := &client{t: t, sess: t.sess, st: &t.stmts, vals: make([]argBytes, n), cols: make([]column, n),
		readOne: make([]*gocql.Query, n), updateOne: make([]*gocql.Query, n), scanOne: make([]*gocql.Query, n)}
	c.keyArgs = []any{&c.key}
	c.scanArgs = []any{&c.key, &c.limit}
	c.insertArgs = append(c.insertArgs, &c.key)
	for i := range c.vals {
		c.updateArgs = append(c.updateArgs, &c.vals[i])
		c.insertArgs = append(c.insertArgs, &c.vals[i])
		c.oneArgs = append(c.oneArgs, []any{&c.vals[i], &c.key})
		c.allDest = append(c.allDest, &c.cols[i])
	}
	c.updateArgs = append(c.updateArgs, &c.key)
	c.oneDest = []any{nil}
	return c
}

// query is the client's Query of stmt, made on first use. It is unpaged:
// a point read returns at most one row and a write none, and a paged
// request (the driver's default page size) makes the node run the read
// through its pager, work latte's driver does not ask of it (it sends
// reads unpaged). Scans keep their pages (pagedQuery).
func (c *client) query(q **gocql.Query, stmt string, cl gocql.Consistency, args []any) *gocql.Query {
	if *q == nil {
		*q = c.sess.Query(stmt, args...).Consistency(cl).PageSize(0)
	}
	return *q
}

// pagedQuery is query with the session's page size, for scans.
func (c *client) pagedQuery(q **gocql.Query, stmt string, cl gocql.Consistency, args []any) *gocql.Query {
	if *q == nil {
		*q = c.sess.Query(stmt, args...).Consistency(cl)
	}
	return *q
}

func (c *client) Close() error { return nil }

// Do implements target.Client.
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	c.key.b = op.Key
	var err error
	switch op.Type {
	case workload.Read:
		err = c.read(ctx, op.Key, op.Field)
	case workload.Update:
		err = c.update(ctx, op)
	case workload.Insert:
		err = c.insertOp(ctx, op)
	case workload.Scan:
		err = c.scan(ctx, op)
	case workload.ReadModifyWrite:
		if err = c.read(ctx, op.Key, op.Field); err == nil {
			err = c.update(ctx, op)
		}
	default:
		return fmt.Errorf("cassandra target: unsupported operation %v", op.Type)
	}
	if err == target.ErrNotFound {
		return err
	}
	return classify(err)
}

// read is one row by key: every field, or field f.
func (c *client) read(ctx context.Context, key []byte, f int) error {
	var q *gocql.Query
	dest := c.allDest
	if f >= 0 {
		q = c.query(&c.readOne[f], c.st.readOne[f], c.t.read, c.keyArgs)
		c.oneDest[0] = &c.cols[f]
		dest = c.oneDest
	} else {
		q = c.query(&c.readAll, c.st.readAll, c.t.read, c.keyArgs)
	}
	iter := q.RoutingKey(key).IterContext(ctx)
	found := iter.Scan(dest...)
	if err := iter.Close(); err != nil {
		return err
	}
	if !found {
		return target.ErrNotFound
	}
	return nil
}

// update writes every field of the op, or its one field.
func (c *client) update(ctx context.Context, op *workload.Op) error {
	if f := op.Field; f >= 0 {
		c.vals[f].b = op.Values[f]
		return c.query(&c.updateOne[f], c.st.updateOne[f], c.t.write, c.oneArgs[f]).RoutingKey(op.Key).ExecContext(ctx)
	}
	c.setValues(op)
	return c.query(&c.updateAll, c.st.updateAll, c.t.write, c.updateArgs).RoutingKey(op.Key).ExecContext(ctx)
}

func (c *client) insertOp(ctx context.Context, op *workload.Op) error {
	c.setValues(op)
	return c.query(&c.insert, c.st.insert, c.t.write, c.insertArgs).RoutingKey(op.Key).ExecContext(ctx)
}

func (c *client) setValues(op *workload.Op) {
	for i := range c.vals {
		c.vals[i].b = op.Values[i]
	}
}

// scan reads up to ScanLength rows from the op key's token on (see the
// package comment).
func (c *client) scan(ctx context.Context, op *workload.Op) error {
	c.limit.v = int32(op.ScanLength)
	var q *gocql.Query
	dest := c.allDest
	if f := op.Field; f >= 0 {
		q = c.pagedQuery(&c.scanOne[f], c.st.scanOne[f], c.t.read, c.scanArgs)
		c.oneDest[0] = &c.cols[f]
		dest = c.oneDest
	} else {
		q = c.pagedQuery(&c.scanAll, c.st.scanAll, c.t.read, c.scanArgs)
	}
	iter := q.RoutingKey(op.Key).IterContext(ctx)
	c.rows = 0
	for iter.Scan(dest...) {
		c.rows++
	}
	return iter.Close()
}

// LoadBatch implements target.Loader: the records go in as single
// inserts, populate_concurrency of them in flight at once, each tried
// again a few times after a transient refusal (populate_retry.go). A batch
// statement would not help: YCSB keys are distinct partitions, which a
// batch would send through one coordinator to every replica set.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	if c.load == nil {
		c.load = newLoader(c.t, c.t.opts.PopulateConcurrency)
	}
	return c.load.run(ctx, ops)
}

// loader is a population's pool of inserting clients, one goroutine each
// per batch.
type loader struct {
	workers []*client
}

func newLoader(t *Target, n int) *loader {
	l := &loader{workers: make([]*client, n)}
	for i := range l.workers {
		l.workers[i] = newClient(t)
	}
	return l
}

func (l *loader) run(ctx context.Context, ops []*workload.Op) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for _, w := range l.workers[:min(len(l.workers), len(ops))] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(ops)) || ctx.Err() != nil {
					return
				}
				w.key.b = ops[i].Key
				if err := retryPopulate(ctx, populateRetryWaits, func() error { return w.insertOp(ctx, ops[i]) }); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("record %s: %w", ops[i].Key, classify(err)); cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}
