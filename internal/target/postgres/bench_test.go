package postgres

import (
	"context"
	"database/sql"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
	"github.com/headroom-dev/headroom/internal/workload"
)

// BenchmarkSelectPK measures the client side of pgbench -S's statement, a
// select by primary key, through the target with GOMAXPROCS clients: pool,
// wire protocol and result reading. Besides the time per request it
// reports the process's CPU time per request (cpu-µs/op): what the target
// costs a machine whose cores it shares with the server.
//
//	go test -run '^$' -bench SelectPK -benchtime 5s ./internal/target/postgres/
func BenchmarkSelectPK(b *testing.B) {
	tg := benchTarget(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, _ := tg.NewClient(ctx)
		defer c.Close()
		op := &workload.Op{Type: workload.NumOpTypes, Params: []workload.Param{{Int: 1}}}
		i := int64(0)
		for pb.Next() {
			i++
			op.Params[0].Int = 1 + i%1000
			if err := c.Do(ctx, op); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchTable sync.Once

func benchTarget(b *testing.B) *Target {
	tg := openShared(b, func(o *Options) { o.ServerTiming = false })
	ctx := context.Background()
	var err error
	benchTable.Do(func() {
		_, err = tg.pool.Load().Exec(ctx, "DROP TABLE IF EXISTS accounts; CREATE TABLE accounts (aid int PRIMARY KEY, abalance int); INSERT INTO accounts SELECT g, 0 FROM generate_series(1, 1000) g")
	})
	if err != nil {
		b.Fatal(err)
	}
	cfg := workload.Config{Statements: []workload.Statement{{Name: "select_pk", Weight: 1, SQL: "SELECT abalance FROM accounts WHERE aid = ?", Params: []workload.ParamGen{{Kind: workload.ParamUniform, Min: 1, Max: 1000}}}}}
	tg.qs.Store(statementQueries(cfg))
	return tg
}

// BenchmarkYCSB measures one client per YCSB operation on the shared
// cluster, in the default prepared mode (docs/performance.md):
//
//	go test -run '^$' -bench YCSB -benchtime 5000x ./internal/target/postgres/
func BenchmarkYCSB(b *testing.B) {
	ycsbtest.Bench(b, openShared(b, func(o *Options) { o.ServerTiming = false }))
}

// BenchmarkYCSBStdlib is BenchmarkYCSB through database/sql, with pgx's
// stdlib driver on the same pool: the path sqlite and mysql take
// (sqlycsb.Client), measured against the target's own pgconn path to
// choose between them (docs/performance.md):
//
//	go test -run '^$' -bench YCSB -benchtime 5000x ./internal/target/postgres/
func BenchmarkYCSBStdlib(b *testing.B) {
	tg := openShared(b, func(o *Options) { o.ServerTiming = false })
	st := &stdlibTarget{Target: tg}
	defer st.close()
	ycsbtest.Bench(b, st)
}

// stdlibTarget is a Target whose clients are sqlycsb.Clients over
// database/sql.
type stdlibTarget struct {
	*Target
	db *sql.DB
	p  *sqlycsb.Prepared
}

func (s *stdlibTarget) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	if err := s.Target.Prepare(ctx, w, fresh); err != nil {
		return err
	}
	s.close()
	s.db = stdlib.OpenDBFromPool(s.pool.Load())
	p, err := sqlycsb.Prepare(ctx, s.db, sqlycsb.Postgres.Statements(s.opts.Table, w.FieldCount), false, nil)
	s.p = p
	return err
}

func (s *stdlibTarget) NewClient(context.Context) (target.Client, error) {
	return sqlycsb.NewClient(s.p), nil
}

func (s *stdlibTarget) close() {
	if s.p != nil {
		s.p.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
}
