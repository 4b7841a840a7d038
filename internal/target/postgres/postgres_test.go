package postgres

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/workload"
)

func TestEveryYCSBOperation(t *testing.T) {
	for _, mode := range []string{"prepared", "simple"} {
		t.Run(mode, func(t *testing.T) {
			tbl := "ops_" + mode
			tg := openShared(t, func(o *Options) { o.Table, o.QueryMode = tbl, mode })
			cfg := ycsb(300)
			g := populate(t, tg, cfg)
			if n := count(t, tg, tbl); n != 300 {
				t.Fatalf("COPY loaded %d rows, want 300", n)
			}
			ctx := context.Background()
			c, _ := tg.NewClient(ctx)
			mixes := map[string][workload.NumOpTypes]float64{
				"read": {workload.Read: 1}, "update": {workload.Update: 1}, "scan": {workload.Scan: 1},
				"rmw": {workload.ReadModifyWrite: 1}, "insert": {workload.Insert: 1},
			}
			for name, mix := range mixes {
				cfg.Mix = mix
				for _, all := range []bool{true, false} {
					if name == "insert" && !all {
						continue // a second generator would insert the same keys again
					}
					cfg.ReadAllFields, cfg.WriteAllFields = all, all
					g2, err := workload.New(cfg, 9)
					if err != nil {
						t.Fatal(err)
					}
					op := g2.NewOp()
					for i := 0; i < 20; i++ {
						g2.Next(op)
						if err := c.Do(ctx, op); err != nil {
							t.Fatalf("%s (all fields %v) key %s: %v", name, all, op.Key, err)
						}
					}
				}
			}
			if n := count(t, tg, tbl); n != 320 {
				t.Fatalf("after 20 inserts: %d rows, want 320", n)
			}

			// An update of one field writes what the table then holds, quotes
			// and backslashes included.
			op := g.NewOp()
			g.Populate(5, op)
			op.Type, op.Field = workload.Update, 2
			op.Values[2] = []byte(`it's a \ test`)
			if err := c.Do(ctx, op); err != nil {
				t.Fatal(err)
			}
			var got string
			if err := tg.pool.Load().QueryRow(ctx, "SELECT field2 FROM "+tbl+" WHERE ycsb_key = $1", string(op.Key)).Scan(&got); err != nil || got != `it's a \ test` {
				t.Fatalf("field2 = %q, %v", got, err)
			}

			// Missing keys are not_found; a duplicate key is a constraint error.
			op.Key = []byte("user-missing")
			for _, typ := range []workload.OpType{workload.Read, workload.Update, workload.ReadModifyWrite} {
				for _, f := range []int{-1, 1} {
					op.Type, op.Field = typ, f
					if err := c.Do(ctx, op); !errors.Is(err, target.ErrNotFound) {
						t.Fatalf("%v (field %d) of a missing key: %v", typ, f, err)
					}
				}
			}
			g.Populate(7, op)
			if err := c.Do(ctx, op); kindOf(err) != target.KindConstraint {
				t.Fatalf("duplicate insert: %v", err)
			}
			// A scan from the smallest key returns that many rows.
			op.Type, op.Field, op.Key, op.ScanLength = workload.Scan, -1, []byte(""), 10
			rows, _, err := c.(*client).execOn(ctx, tg, func(cl *client) { cl.addText(op.Key); cl.addInt(10) }, tg.qs.Load().ycsb.Index(sqlycsb.Scan, -1))
			if err != nil || rows != 10 {
				t.Fatalf("scan of 10 returned %d rows, %v", rows, err)
			}
		})
	}
}

// execOn runs statement i on a pooled connection with the parameters set
// by fill, for tests that need the row count.
func (c *client) execOn(ctx context.Context, tg *Target, fill func(*client), i int) (int, int64, error) {
	conn, err := tg.pool.Load().Acquire(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Release()
	c.reset()
	fill(c)
	return c.exec(ctx, tg.qs.Load(), conn.Conn().PgConn(), i)
}

func TestPrepareFreshEmpties(t *testing.T) {
	tg := openShared(t, func(o *Options) { o.Table = "fresh" })
	cfg := ycsb(50)
	populate(t, tg, cfg)
	ctx := context.Background()
	if err := tg.Prepare(ctx, cfg, false); err != nil || count(t, tg, "fresh") != 50 {
		t.Fatalf("Prepare without fresh must keep the rows: %v", err)
	}
	if err := tg.Prepare(ctx, cfg, true); err != nil || count(t, tg, "fresh") != 0 {
		t.Fatalf("Prepare fresh must empty the table: %v", err)
	}
}

func TestPasswords(t *testing.T) {
	inst := sharedServer(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte(inst.Password+"\n"), 0o600)
	tg := openShared(t, func(o *Options) { o.PasswordEnv, o.PasswordFile = "", good })
	if n := count(t, tg, "pg_class WHERE false"); n != 0 {
		t.Fatal(n)
	}

	wrong := "not-the-" + inst.Password
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte(wrong), 0o600)
	o := defaultOptions()
	// A relative password_file is inside the results directory.
	o.Host, o.Port, o.User, o.Database, o.PasswordFile, o.SSLMode = inst.Host, inst.Port, inst.User, inst.Database, "bad", "disable"
	_, err := Open(*o, dir)
	if err == nil || !strings.Contains(err.Error(), "password authentication failed") {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), inst.Password) {
		t.Fatalf("the error shows the password: %v", err)
	}

	o.PasswordFile, o.PasswordEnv = "", "HEADROOM_TEST_UNSET_VARIABLE"
	if _, err := Open(*o, dir); err == nil || !strings.HasPrefix(err.Error(), "password_env: the environment variable HEADROOM_TEST_UNSET_VARIABLE is not set") {
		t.Fatalf("unset password_env: %v", err)
	}
}

func TestStatementTimeout(t *testing.T) {
	tg := openShared(t, func(o *Options) { o.StatementTimeout = dur(50 * time.Millisecond) })
	// A statement workload without a data set: the statements alone.
	cfg := workload.Config{Statements: []workload.Statement{{Name: "sleep", Weight: 1, SQL: "SELECT pg_sleep(?)", Params: []workload.ParamGen{{Kind: workload.ParamUniform, Min: 2, Max: 2}}}}}
	tg.qs.Store(statementQueries(cfg))
	ctx := context.Background()
	c, _ := tg.NewClient(ctx)
	op := &workload.Op{Type: workload.NumOpTypes, Params: []workload.Param{{Int: 2}}}
	err := c.Do(ctx, op)
	if kindOf(err) != target.KindTimeout || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("a statement past statement_timeout: %v", err)
	}
	// The connection stays usable.
	op.Params[0].Int = 0
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
}

// min_connections: at least that many connections are open, and idle,
// before the target is used (pgx's own background filling may be opening
// more, never beyond pool_size), and five requests at once are served over them
// without opening another.
func TestMinConnectionsOpenAhead(t *testing.T) {
	tg := openShared(t, func(o *Options) { o.PoolSize, o.MinConnections = 8, 5 })
	pool := tg.pool.Load()
	st := pool.Stat()
	if st.IdleConns() < 5 || st.TotalConns() > 8 {
		t.Fatalf("after opening: %d connections, %d idle; want at least 5 idle and at most 8 in all", st.TotalConns(), st.IdleConns())
	}
	opened := st.NewConnsCount()
	ctx := context.Background()
	var held []*pgxpool.Conn
	for range 5 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
	if n := pool.Stat().NewConnsCount(); n != opened {
		t.Errorf("five requests at once opened %d more connections; want none", n-opened)
	}
}

func TestConnectionLeftInATransactionIsDropped(t *testing.T) {
	tg := openShared(t, func(o *Options) { o.PoolSize = 1 })
	cfg := workload.Config{Statements: []workload.Statement{{Name: "begin", Weight: 1, SQL: "BEGIN"}, {Name: "one", Weight: 1, SQL: "SELECT 1"}}}
	tg.qs.Store(statementQueries(cfg))
	ctx := context.Background()
	pid := func() (p int) {
		if err := tg.pool.Load().QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := pid()
	c, _ := tg.NewClient(ctx)
	if err := c.Do(ctx, &workload.Op{Type: workload.NumOpTypes}); err != nil {
		t.Fatal(err)
	}
	// The connection left in a transaction was dropped, not reused.
	if after := pid(); after == before {
		t.Fatal("the pool reused the connection left in a transaction")
	}
	if err := c.Do(ctx, &workload.Op{Type: workload.NumOpTypes + 1}); err != nil {
		t.Fatal(err)
	}
}

func TestCanceledRequestStopsTheStatement(t *testing.T) {
	tg := openShared(t, nil)
	cfg := workload.Config{Statements: []workload.Statement{{Name: "sleep", Weight: 1, SQL: "SELECT pg_sleep(?)", Params: []workload.ParamGen{{Kind: workload.ParamUniform, Min: 30, Max: 30}}}}}
	tg.qs.Store(statementQueries(cfg))
	c, _ := tg.NewClient(context.Background())
	defer c.Close()
	op := &workload.Op{Type: workload.NumOpTypes, Params: []workload.Param{{Int: 30}}}
	active := func() int {
		var n int
		if err := tg.pool.Load().QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor := func(want int) {
		for i := 0; i < 200 && active() != want; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if n := active(); n != want {
			t.Fatalf("%d sleeping statements on the server, want %d", n, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Do(ctx, op) }()
	waitFor(1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a canceled request: %v", err)
	}
	// The server stops the statement instead of sleeping on.
	waitFor(0)
	// The client goes on with a new context.
	op.Params[0].Int = 0
	if err := c.Do(context.Background(), op); err != nil {
		t.Fatal(err)
	}
}

func TestManagedStopRestartSnapshot(t *testing.T) {
	m := openManaged(t)
	cfg := ycsb(100)
	g := populate(t, m.Target, cfg)
	ctx := context.Background()

	pids := m.ServerPIDs()
	if len(pids) < 2 || pids[0] != m.inst.PID() {
		t.Fatalf("server pids %v, postmaster %d", pids, m.inst.PID())
	}

	// Snapshot, damage the data, restore.
	if err := m.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.pool.Load().Exec(ctx, "DELETE FROM usertable WHERE ycsb_key < 'user5'"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, m.Target, "usertable"); n == 100 {
		t.Fatal("the delete removed nothing")
	}
	if err := m.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, m.Target, "usertable"); n != 100 {
		t.Fatalf("after restore %d rows, want 100", n)
	}
	c, _ := m.NewClient(ctx)
	op := g.NewOp()
	g.Populate(3, op)
	op.Type, op.Field = workload.Read, -1
	if err := c.Do(ctx, op); err != nil {
		t.Fatalf("read after restore: %v", err)
	}

	// A stopped server gives connection errors, not hangs.
	if err := m.inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		if err := c.Do(dctx, op); kindOf(err) != target.KindConnection {
			t.Fatalf("request %d to a stopped server: %v (kind %q)", i, err, kindOf(err))
		}
	}

	// Restart brings it back; old and new clients work.
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	c2, _ := m.NewClient(ctx)
	for _, cl := range []target.Client{c, c2} {
		if err := cl.Do(ctx, op); err != nil {
			t.Fatalf("read after restart: %v", err)
		}
	}
	if n := count(t, m.Target, "usertable"); n != 100 {
		t.Fatalf("after restart %d rows", n)
	}
	dir := m.inst.Dir
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("Close must leave only the server log, left %v", entries)
	}
}

func TestServerTimes(t *testing.T) {
	for _, mode := range []string{"prepared", "simple"} {
		t.Run(mode, func(t *testing.T) {
			tg := openShared(t, func(o *Options) { o.Table, o.QueryMode = "timed_"+mode, mode })
			cfg := ycsb(50)
			g := populate(t, tg, cfg)
			if len(tg.timer.ids) != len(tg.qs.Load().q) {
				t.Fatalf("query identifiers of %d of %d statements", len(tg.timer.ids), len(tg.qs.Load().q))
			}
			ctx := context.Background()
			before := timesByOp(t, tg)
			c, _ := tg.NewClient(ctx)
			op := g.NewOp()
			for i := 0; i < 30; i++ {
				g.Populate(int64(i), op)
				op.Type, op.Field = workload.Read, -1
				if err := c.Do(ctx, op); err != nil {
					t.Fatal(err)
				}
				if i < 10 {
					op.Type, op.Field = workload.Update, 1
					if err := c.Do(ctx, op); err != nil {
						t.Fatal(err)
					}
				}
			}
			after := timesByOp(t, tg)
			if d := after["read"].Calls - before["read"].Calls; d != 30 {
				t.Fatalf("read calls grew by %d, want 30 (before %+v after %+v)", d, before, after)
			}
			if d := after["update"].Calls - before["update"].Calls; d != 10 {
				t.Fatalf("update calls grew by %d, want 10", d)
			}
			if after["read"].Total <= before["read"].Total {
				t.Fatalf("read time did not grow: %v -> %v", before["read"].Total, after["read"].Total)
			}
			// The identifiers found by EXPLAIN are the ones the server
			// counts under.
			var ids []int64
			for id, i := range tg.timer.ids {
				if tg.timer.ops[i] == "read" {
					ids = append(ids, id)
				}
			}
			var calls int64
			if err := tg.pool.Load().QueryRow(ctx, "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE queryid = ANY($1)", ids).Scan(&calls); err != nil || calls < 30 {
				t.Fatalf("pg_stat_statements holds %d calls under the read identifiers, %v", calls, err)
			}
			if _, ok := after["scan"]; ok {
				t.Fatal("scan was never run but has server time")
			}
		})
	}
}

func TestServerTimesOfStatementWithLiteral(t *testing.T) {
	tg := openShared(t, nil)
	ctx := context.Background()
	// pg_stat_statements shows the literal as $2, so only the query
	// identifier can match this statement.
	cfg := workload.Config{Statements: []workload.Statement{{Name: "lit", Weight: 1,
		SQL: "SELECT relname FROM pg_class WHERE relname = 'pg_type' AND relpages >= ?", Params: []workload.ParamGen{{Kind: workload.ParamUniform}}}}}
	qs := statementQueries(cfg)
	tg.qs.Store(qs)
	tg.timer = newServerTimer(ctx, tg.pool.Load(), qs)
	before := timesByOp(t, tg)
	c, _ := tg.NewClient(ctx)
	op := &workload.Op{Type: workload.NumOpTypes, Params: []workload.Param{{Int: 0}}}
	for i := 0; i < 5; i++ {
		if err := c.Do(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	if d := timesByOp(t, tg)["lit"].Calls - before["lit"].Calls; d != 5 {
		t.Fatalf("lit calls grew by %d, want 5", d)
	}
}

func timesByOp(t *testing.T, tg *Target) map[string]target.ServerTime {
	t.Helper()
	ts, err := tg.ServerTimes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]target.ServerTime{}
	for _, s := range ts {
		m[s.Op] = s
	}
	return m
}

func TestServerTimesWithoutExtension(t *testing.T) {
	tg := openShared(t, nil)
	ctx := context.Background()
	if _, err := tg.pool.Load().Exec(ctx, "DROP DATABASE IF EXISTS noext"); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.pool.Load().Exec(ctx, "CREATE DATABASE noext"); err != nil {
		t.Fatal(err)
	}
	bare := openShared(t, func(o *Options) { o.Database = "noext" })
	if err := bare.Prepare(ctx, ycsb(10), true); err != nil {
		t.Fatal(err)
	}
	_, err := bare.ServerTimes(ctx)
	if err == nil || !strings.Contains(err.Error(), "shared_preload_libraries = 'pg_stat_statements'") || !strings.Contains(err.Error(), "CREATE EXTENSION pg_stat_statements") {
		t.Fatalf("first ServerTimes without the extension: %v", err)
	}
	if ts, err := bare.ServerTimes(ctx); err != nil || ts != nil {
		t.Fatalf("the note is given once; then %v, %v", ts, err)
	}
}

func TestValidate(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, []byte("x"), 0o600)
	cases := map[string]func(*Options){
		"pool_size: must be at least 1":   func(o *Options) { o.PoolSize = 0 },
		"min_connections: must be 0 to":   func(o *Options) { o.PoolSize, o.MinConnections = 4, 5 },
		"sslmode:":                        func(o *Options) { o.SSLMode = "maybe" },
		"query_mode:":                     func(o *Options) { o.QueryMode = "fast" },
		"table:":                          func(o *Options) { o.Table = "t; DROP" },
		"port:":                           func(o *Options) { o.Port = 70000 },
		"password_env: give either":       func(o *Options) { o.PasswordEnv, o.PasswordFile = "A", "/b" },
		"ca_file: only used with":         func(o *Options) { o.CAFile = ca },
		"ca_file: cannot read":            func(o *Options) { o.SSLMode, o.CAFile = "verify-full", "/nonexistent/ca.pem" },
		"statement_timeout:":              func(o *Options) { o.StatementTimeout = dur(time.Microsecond) },
		"host: a managed instance":        func(o *Options) { o.Managed, o.Host = &deploy.Managed{}, "db.example.com" },
		"password_file: a managed":        func(o *Options) { o.Managed, o.PasswordFile = &deploy.Managed{}, "/pw" },
		"managed.settings.port: Headroom": func(o *Options) { o.Managed = &deploy.Managed{Settings: map[string]string{"port": "1"}} },
		"managed.settings: \"a b\"":       func(o *Options) { o.Managed = &deploy.Managed{Settings: map[string]string{"a b": "1"}} },
	}
	for want, mutate := range cases {
		o := defaultOptions()
		mutate(o)
		if err := validate(o); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
	o := defaultOptions()
	o.SSLMode, o.CAFile = "verify-ca", ca
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	if err := validate(defaultOptions()); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

func TestSimpleModeLiterals(t *testing.T) {
	qs := &querySet{simple: true}
	i := qs.add("x", "SELECT a FROM t WHERE b = ? AND c > ? AND d = 'lit?'")
	if qs.q[i].sql != "SELECT a FROM t WHERE b = $1 AND c > $2 AND d = 'lit?'" {
		t.Fatalf("rebound %q", qs.q[i].sql)
	}
	c := &client{}
	c.addText([]byte(`o'k\`))
	c.addInt(-5)
	b := inline(nil, qs.q[i].parts, c.params, c.isNum)
	if got := string(b); got != `SELECT a FROM t WHERE b =  E'o''k\\'  AND c >  -5  AND d = 'lit?'` {
		t.Fatalf("inlined %q", got)
	}
	if squeeze("SELECT a\n FROM t ;") != "SELECTaFROMt" {
		t.Fatal(squeeze("SELECT a\n FROM t ;"))
	}
}
