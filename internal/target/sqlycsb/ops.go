package sqlycsb

import (
	"context"
	"fmt"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Binder takes a statement's parameters in the order of its placeholders.
type Binder interface {
	Key(k []byte)
	Value(v []byte)
	Int(n int64)
}

// Bind gives b the parameters of a statement of kind k for op: the key;
// for updates the values written first (Values[Field] alone when Field >=
// 0); for inserts every value after the key; for scans the key and the
// number of records.
func Bind(b Binder, k Kind, op *workload.Op) {
	switch k {
	case Read, LockedRead:
		b.Key(op.Key)
	case Update, LockedUpdate:
		if op.Field >= 0 {
			b.Value(op.Values[op.Field])
		} else {
			for _, v := range op.Values {
				b.Value(v)
			}
		}
		b.Key(op.Key)
	case Insert:
		b.Key(op.Key)
		for _, v := range op.Values {
			b.Value(v)
		}
	case Scan:
		b.Key(op.Key)
		b.Int(int64(op.ScanLength))
	}
}

// Exec runs a Set's statements on one connection or pool.
type Exec interface {
	// Run runs statement i of the Set with op's parameters (see Bind),
	// reads and discards the rows it returns, and says how many there
	// were and how many rows it changed.
	Run(ctx context.Context, i int, op *workload.Op) (rows int, changed int64, err error)
	// Begin, Commit and Rollback delimit a read-modify-write's
	// transaction.
	Begin(ctx context.Context) error
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Do runs YCSB operation op of s through e. Reads, updates and
// read-modify-writes that find no record return target.ErrNotFound. A
// read-modify-write reads the record and writes it back in one
// transaction, as YCSB's does. Errors are returned as e gave them.
func Do(ctx context.Context, e Exec, s *Set, op *workload.Op) error {
	switch op.Type {
	case workload.Read:
		return read(ctx, e, s.Index(Read, op.Field), op)
	case workload.Update:
		return update(ctx, e, s.Index(Update, op.Field), op)
	case workload.Insert:
		_, _, err := e.Run(ctx, s.Index(Insert, -1), op)
		return err
	case workload.Scan:
		_, _, err := e.Run(ctx, s.Index(Scan, op.Field), op)
		return err
	case workload.ReadModifyWrite:
		if err := e.Begin(ctx); err != nil {
			return err
		}
		err := read(ctx, e, s.Index(LockedRead, op.Field), op)
		if err == nil {
			err = update(ctx, e, s.Index(LockedUpdate, op.Field), op)
		}
		if err != nil {
			// A failed rollback is the connection's problem: the
			// operation's own error is the one to report.
			_ = e.Rollback(ctx)
			return err
		}
		return e.Commit(ctx)
	}
	return fmt.Errorf("%s target: unsupported operation %v", s.Dialect.Name, op.Type)
}

func read(ctx context.Context, e Exec, i int, op *workload.Op) error {
	rows, _, err := e.Run(ctx, i, op)
	if err == nil && rows == 0 {
		return target.ErrNotFound
	}
	return err
}

func update(ctx context.Context, e Exec, i int, op *workload.Op) error {
	_, n, err := e.Run(ctx, i, op)
	if err == nil && n == 0 {
		return target.ErrNotFound
	}
	return err
}
