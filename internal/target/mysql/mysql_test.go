package mysql

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
	"github.com/headroom-dev/headroom/internal/workload"
)

// One managed MariaDB server serves every test of the package: starting
// one takes a few seconds.
var (
	shared     managedTarget
	sharedDir  string
	skipReason string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "headroom-mysql-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The server runs as the mysql user, which must enter the directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sharedDir = dir
	opts := defaultOptions()
	opts.Managed = &deploy.Managed{Settings: map[string]string{"innodb_buffer_pool_size": "64M", "innodb_flush_log_at_trx_commit": "2"}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tgt, err := Open(ctx, *opts, dir)
	switch {
	case errors.Is(err, deploy.ErrMissingBinary):
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		skipReason = "MariaDB is not installed (apt-get install -y mariadb-server): " + err.Error()
	case err != nil:
		fmt.Fprintln(os.Stderr, "starting the shared MariaDB server:", err)
		return 1
	default:
		shared = tgt.(managedTarget)
		defer shared.Close()
	}
	return m.Run()
}

func need(t *testing.T) *Target {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	return shared.Target
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ycsbConfig(t *testing.T, records int64, mix map[workload.OpType]float64) workload.Config {
	t.Helper()
	w, err := workload.Preset("a")
	if err != nil {
		t.Fatal(err)
	}
	w.RecordCount, w.FieldCount, w.FieldLength = records, 4, 20
	w.Mix = [workload.NumOpTypes]float64{}
	for op, v := range mix {
		w.Mix[op] = v
	}
	w.RequestDistribution = workload.DistUniform
	w.MaxScanLength = 5
	w.ReadAllFields, w.WriteAllFields = true, false
	return w
}

// populate prepares tgt afresh for w and loads its records through
// LoadBatch in batches of 40.
func populate(t *testing.T, tgt *Target, w workload.Config) *workload.Generator {
	return ycsbtest.Populate(t, tgt, w, 40)
}

func count(t *testing.T, tgt *Target, table string) int64 {
	t.Helper()
	var n int64
	if err := tgt.db.QueryRowContext(ctxT(t), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func field(t *testing.T, tgt *Target, key []byte, f int) string {
	t.Helper()
	var v string
	q := fmt.Sprintf("SELECT field%d FROM usertable WHERE ycsb_key = ?", f)
	if err := tgt.db.QueryRowContext(ctxT(t), q, string(key)).Scan(&v); err != nil {
		t.Fatalf("reading field%d of %s: %v", f, key, err)
	}
	return v
}

func kind(err error) string {
	var k target.Kinder
	if errors.As(err, &k) {
		return k.Kind()
	}
	if errors.Is(err, target.ErrNotFound) {
		return target.KindNotFound
	}
	return ""
}

func TestYCSBOperations(t *testing.T) {
	testYCSBOperations(t, need(t))
}

// The same operations with server-side prepared statements (binary
// protocol), through a second target on the shared server.
func TestYCSBOperationsPrepared(t *testing.T) {
	tgt := need(t)
	o := unmanaged(tgt)
	o.InterpolateParams, o.ServerTiming = false, false
	o.PasswordEnv = "HEADROOM_TEST_MYSQL_PW"
	t.Setenv(o.PasswordEnv, tgt.inst.Password)
	if err := validate(&o); err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctxT(t), o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	testYCSBOperations(t, other.(*Target))
	if !other.(*Target).ycsb.Stmt(0).Prepared() {
		t.Error("interpolate_params: false did not prepare the statements on the server")
	}
	if ts, err := other.(*Target).ServerTimes(ctxT(t)); ts != nil || err != nil {
		t.Errorf("ServerTimes with server_timing: false = %v, %v; want nothing", ts, err)
	}
}

func testYCSBOperations(t *testing.T, tgt *Target) {
	ctx := ctxT(t)
	w := ycsbConfig(t, 100, map[workload.OpType]float64{workload.Read: 1})
	gen := populate(t, tgt, w)
	if n := count(t, tgt, "usertable"); n != 100 {
		t.Fatalf("after populating 100 records the table holds %d", n)
	}
	c, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	row := c.(*sqlycsb.Client).Row()

	op := gen.NewOp()
	gen.Populate(7, op)
	key := append([]byte(nil), op.Key...)
	want := string(op.Values[2])

	// Read of every field and of one field.
	op.Type, op.Field = workload.Read, -1
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	if got := string(row[2]); got != want {
		t.Errorf("read field2 = %q, want %q", got, want)
	}
	op.Field = 2
	clear(row)
	if err := c.Do(ctx, op); err != nil || string(row[0]) != want {
		t.Errorf("read of field 2 alone = %q, %v; want %q", row[0], err, want)
	}

	// Update of one field, then of all.
	op.Type, op.Field = workload.Update, 1
	op.Values[1] = []byte("updated-one-field...")
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	if got := field(t, tgt, key, 1); got != "updated-one-field..." {
		t.Errorf("after update field1 = %q", got)
	}
	// Writing the value the record already holds still finds the record.
	if err := c.Do(ctx, op); err != nil {
		t.Errorf("repeating the same update: %v", err)
	}
	op.Field = -1
	for i := range op.Values {
		op.Values[i] = []byte(fmt.Sprintf("all-%d", i))
	}
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	if got := field(t, tgt, key, 3); got != "all-3" {
		t.Errorf("after update of all fields field3 = %q", got)
	}

	// Read-modify-write of one field.
	op.Type, op.Field = workload.ReadModifyWrite, 0
	op.Values[0] = []byte("rmw")
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	if got := field(t, tgt, key, 0); got != "rmw" {
		t.Errorf("after read-modify-write field0 = %q", got)
	}

	// Scan: rows in key order from the start key.
	op.Type, op.Field, op.ScanLength = workload.Scan, -1, 5
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	var wantLast string
	q := "SELECT field3 FROM (SELECT ycsb_key, field3 FROM usertable WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT 5) s ORDER BY ycsb_key DESC LIMIT 1"
	if err := tgt.db.QueryRowContext(ctx, q, string(key)).Scan(&wantLast); err != nil {
		t.Fatal(err)
	}
	if got := string(row[3]); got != wantLast {
		t.Errorf("scan's last row field3 = %q, want %q", got, wantLast)
	}

	// Insert of a new key, then the same key again.
	ins := gen.NewOp()
	gen.Populate(100, ins)
	ins.Type = workload.Insert
	if err := c.Do(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if n := count(t, tgt, "usertable"); n != 101 {
		t.Errorf("after an insert the table holds %d records, want 101", n)
	}
	if err := c.Do(ctx, ins); kind(err) != target.KindConstraint {
		t.Errorf("inserting a key twice: %v (kind %q), want kind constraint", err, kind(err))
	}

	// A missing key: read, update and read-modify-write are not_found;
	// a scan simply returns nothing.
	missing := gen.NewOp()
	gen.Populate(5000, missing)
	for _, typ := range []workload.OpType{workload.Read, workload.Update, workload.ReadModifyWrite} {
		missing.Type, missing.Field = typ, 0
		if err := c.Do(ctx, missing); !errors.Is(err, target.ErrNotFound) {
			t.Errorf("%v of a missing key: %v, want ErrNotFound", typ, err)
		}
	}
	missing.Type, missing.Key = workload.Scan, []byte("zzzz")
	if err := c.Do(ctx, missing); err != nil {
		t.Errorf("scan past the last key: %v", err)
	}
}

func TestFreshPrepareEmptiesAndKeepsOtherwise(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	w := ycsbConfig(t, 30, map[workload.OpType]float64{workload.Read: 1})
	populate(t, tgt, w)
	if err := tgt.Prepare(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if n := count(t, tgt, "usertable"); n != 30 {
		t.Fatalf("Prepare without fresh left %d records, want 30", n)
	}
	if err := tgt.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	if n := count(t, tgt, "usertable"); n != 0 {
		t.Fatalf("fresh Prepare left %d records, want 0", n)
	}
	// A kept table with fewer fields than the workload is refused.
	w.FieldCount = 6
	err := tgt.Prepare(ctx, w, false)
	if err == nil || !strings.HasPrefix(err.Error(), "table: usertable already exists with 4 field columns") {
		t.Fatalf("Prepare over a 4-field table with field_count 6: %v", err)
	}
}

func TestLoaderSplitsLargeBatches(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	w := ycsbConfig(t, 10, map[workload.OpType]float64{workload.Read: 1})
	w.FieldCount, w.FieldLength = 2, 3000
	if err := tgt.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	gen, _ := workload.New(w, 3)
	// 1600 records of 6 kB: 9.6 MB, more than one statement may carry.
	var ops []*workload.Op
	for i := int64(0); i < 1600; i++ {
		op := gen.NewOp()
		gen.Populate(i, op)
		ops = append(ops, op)
	}
	c, _ := tgt.NewClient(ctx)
	if err := c.(target.Loader).LoadBatch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	if n := count(t, tgt, "usertable"); n != 1600 {
		t.Fatalf("after LoadBatch of 1600 records the table holds %d", n)
	}
	if got := field(t, tgt, ops[1599].Key, 1); got != string(ops[1599].Values[1]) {
		t.Errorf("last record's field1 differs")
	}
	// A batch with a duplicate key is rolled back whole.
	dup := []*workload.Op{gen.NewOp(), ops[0]}
	gen.Populate(2000, dup[0])
	if err := c.(target.Loader).LoadBatch(ctx, dup); kind(err) != target.KindConstraint {
		t.Fatalf("LoadBatch with a duplicate key: %v, want kind constraint", err)
	}
	if n := count(t, tgt, "usertable"); n != 1600 {
		t.Fatalf("a failed batch left %d records, want 1600", n)
	}
}

func TestServerTimesCountExecutedOps(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	w := ycsbConfig(t, 50, map[workload.OpType]float64{
		workload.Read: 1, workload.Update: 1, workload.Insert: 1, workload.Scan: 1, workload.ReadModifyWrite: 1})
	gen := populate(t, tgt, w)
	before, err := tgt.ServerTimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tgt.NewClient(ctx)
	op := gen.NewOp()
	done := map[string]int64{}
	for i := 0; i < 200; i++ {
		gen.Next(op)
		if err := c.Do(ctx, op); err != nil {
			t.Fatalf("%v: %v", op.Type, err)
		}
		done[op.Type.String()]++
	}
	b := map[string]target.ServerTime{}
	for _, s := range before {
		b[s.Op] = s
	}
	want := map[string]int64{}
	for op, n := range done {
		want[op] = b[op].Calls + n
	}
	after, err := serverTimesAfter(ctx, tgt, want)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 5 {
		t.Errorf("ServerTimes reports %d operations, want 5: %+v", len(after), after)
	}
	for _, s := range after {
		calls := s.Calls - b[s.Op].Calls
		if calls != done[s.Op] {
			t.Errorf("%s: the server counted %d calls, Headroom ran %d", s.Op, calls, done[s.Op])
		}
		if d := s.Total - b[s.Op].Total; d <= 0 || d > 30*time.Second {
			t.Errorf("%s: server time grew by %v", s.Op, d)
		}
	}
}

// serverTimesAfter reads ServerTimes until the calls reach want (the
// server counts a statement just after answering it) or a second passes.
func serverTimesAfter(ctx context.Context, tgt *Target, want map[string]int64) ([]target.ServerTime, error) {
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		ts, err := tgt.ServerTimes(ctx)
		if err != nil {
			return nil, err
		}
		reached := 0
		for _, s := range ts {
			if s.Calls >= want[s.Op] {
				reached++
			}
		}
		if reached >= len(want) || time.Since(start) > time.Second {
			return ts, nil
		}
	}
}

func TestStatementWorkloadTPCW(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	ds := workload.Dataset{Builtin: "tpcw", Scale: map[string]int64{"items": 200, "ebs": 1}}
	n := sqlwork.TPCWCounts(ds.Scale)
	// The three statements of seed 001 §II-E.
	w := workload.Config{Dataset: ds, Statements: []workload.Statement{
		{Name: "simple_join", Weight: 1, SQL: "SELECT * FROM customer, address WHERE c_addr_id = addr_id AND c_uname = ?",
			Params: []workload.ParamGen{{Kind: workload.ParamUniform, Min: 1, Max: n["customer"], Prefix: "UN"}}},
		{Name: "complex_join", Weight: 1, SQL: "SELECT i_id, i_title, a_lname FROM item, author WHERE i_a_id = a_id AND i_subject = ? ORDER BY i_pub_date DESC, i_title LIMIT 50",
			Params: []workload.ParamGen{{Kind: workload.ParamChoice, Choices: []string{"ARTS", "HISTORY", "COOKING"}}}},
		{Name: "insert_line", Weight: 1, SQL: "INSERT IGNORE INTO order_line (ol_id, ol_o_id, ol_i_id, ol_qty, ol_discount, ol_comments) VALUES (?, ?, ?, ?, 0, ?)",
			Params: []workload.ParamGen{{Kind: workload.ParamSequence, Min: 6}, {Kind: workload.ParamUniform, Min: 1, Max: n["orders"]},
				{Kind: workload.ParamUniform, Min: 1, Max: n["item"]}, {Kind: workload.ParamUniform, Min: 1, Max: 9},
				{Kind: workload.ParamString, MinLen: 10, MaxLen: 20}}},
	}}
	if err := tgt.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	var last, total int64
	if err := tgt.LoadDataset(ctx, w, 5, func(d, all int64) { last, total = d, all }); err != nil {
		t.Fatal(err)
	}
	if total == 0 || last != total {
		t.Errorf("progress ended at %d of %d", last, total)
	}
	for _, table := range []string{"customer", "item", "order_line"} {
		if got := count(t, tgt, table); got != n[table] {
			t.Errorf("%s holds %d rows, want %d", table, got, n[table])
		}
	}
	before, err := tgt.ServerTimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(w, 9)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tgt.NewClient(ctx)
	op := gen.NewOp()
	ran := map[string]int64{}
	for i := 0; i < 90; i++ {
		gen.Next(op)
		if err := c.Do(ctx, op); err != nil {
			t.Fatalf("%s: %v", w.OpName(op.Type), err)
		}
		ran[w.OpName(op.Type)]++
	}
	// insert_line's ol_id sequence starts above the loaded lines of
	// order 1 or more, so some rows are new; IGNORE skips duplicates.
	if got := count(t, tgt, "order_line"); got <= n["order_line"] {
		t.Errorf("order_line holds %d rows after %d insert_line statements, want more than %d", got, ran["insert_line"], n["order_line"])
	}
	// The wide statement's rows went through the reused buffers.
	if d := c.(*client).wdest[0]; len(d) < 10 {
		t.Errorf("simple_join read %d columns per row, want the customer and address columns", len(d))
	}
	b, want := map[string]int64{}, map[string]int64{}
	for _, s := range before {
		b[s.Op] = s.Calls
	}
	for op, n := range ran {
		want[op] = b[op] + n
	}
	after, err := serverTimesAfter(ctx, tgt, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range after {
		if got := s.Calls - b[s.Op]; got != ran[s.Op] {
			t.Errorf("%s: server counted %d calls, Headroom ran %d", s.Op, got, ran[s.Op])
		}
	}
	if len(after) != 3 {
		t.Errorf("ServerTimes reports %+v, want the three statements", after)
	}

	// The same statements prepared on the server (binary protocol).
	o := unmanaged(tgt)
	o.InterpolateParams, o.ServerTiming = false, false
	o.PasswordEnv = "HEADROOM_TEST_MYSQL_PW"
	t.Setenv(o.PasswordEnv, tgt.inst.Password)
	prep, err := Open(ctx, o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer prep.Close()
	if err := prep.Prepare(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if !prep.(*Target).ws[1].Prepared() {
		t.Fatal("interpolate_params: false did not prepare the statements on the server")
	}
	lines := count(t, tgt, "order_line")
	pc, _ := prep.NewClient(ctx)
	inserts := 0
	for i := 0; i < 60; i++ {
		gen.Next(op)
		if err := pc.Do(ctx, op); err != nil {
			t.Fatalf("prepared %s: %v", w.OpName(op.Type), err)
		}
		if w.OpName(op.Type) == "insert_line" {
			inserts++
		}
	}
	if got := count(t, tgt, "order_line"); inserts > 0 && got <= lines {
		t.Errorf("prepared insert_line ran %d times but order_line stayed at %d rows", inserts, got)
	}
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	w := ycsbConfig(t, 60, map[workload.OpType]float64{workload.Update: 1})
	gen := populate(t, tgt, w)
	if err := shared.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(tgt.snapshot); err != nil || fi.Size() == 0 || filepath.Dir(tgt.snapshot) != tgt.inst.Dir {
		t.Fatalf("snapshot file %s: %v", tgt.snapshot, err)
	}
	if b, _ := os.ReadFile(tgt.snapshot); strings.Contains(string(b), tgt.inst.Password) {
		t.Fatal("the snapshot contains the password")
	}
	op := gen.NewOp()
	gen.Populate(3, op)
	orig := field(t, tgt, op.Key, 0)
	c, _ := tgt.NewClient(ctx)
	op.Type, op.Field, op.Values[0] = workload.Update, 0, []byte("changed")
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.db.ExecContext(ctx, "DELETE FROM usertable LIMIT 10"); err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.db.ExecContext(ctx, "CREATE TABLE stray (v INT)"); err != nil {
		t.Fatal(err)
	}
	if err := shared.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, tgt, "usertable"); n != 60 {
		t.Errorf("after Restore the table holds %d records, want 60", n)
	}
	if got := field(t, tgt, op.Key, 0); got != orig {
		t.Errorf("after Restore field0 = %q, want the snapshot's %q", got, orig)
	}
	var stray int
	tgt.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'stray'").Scan(&stray)
	if stray != 0 {
		t.Error("a table created after the snapshot survived Restore")
	}
	// Clients made before Restore keep working.
	op.Type, op.Field = workload.Read, -1
	if err := c.Do(ctx, op); err != nil {
		t.Errorf("read after Restore: %v", err)
	}
}

func TestKilledServerThenRestart(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	w := ycsbConfig(t, 20, map[workload.OpType]float64{workload.Read: 1})
	gen := populate(t, tgt, w)
	c, _ := tgt.NewClient(ctx)
	op := gen.NewOp()
	gen.Populate(4, op)
	op.Type, op.Field = workload.Read, -1
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	oldPID := shared.ServerPIDs()
	if len(oldPID) != 1 || oldPID[0] <= 0 {
		t.Fatalf("ServerPIDs = %v", oldPID)
	}
	if err := tgt.inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		err := c.Do(dctx, op)
		if kind(err) != target.KindConnection {
			t.Fatalf("Do against a stopped server: %v (kind %q), want kind connection", err, kind(err))
		}
	}
	if dctx.Err() != nil {
		t.Fatal("Do against a stopped server took until the deadline")
	}
	if err := shared.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if pids := shared.ServerPIDs(); len(pids) != 1 || pids[0] == oldPID[0] {
		t.Errorf("after Restart ServerPIDs = %v (was %v)", pids, oldPID)
	}
	c2, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	row2 := c2.(*sqlycsb.Client).Row()
	clear(row2)
	if err := c2.Do(ctx, op); err != nil {
		t.Fatalf("read after Restart: %v", err)
	}
	if got := string(row2[1]); got != string(op.Values[1]) {
		t.Errorf("after Restart field1 = %q, want %q", got, op.Values[1])
	}
	// Timing survives the restart: the counters start again from zero.
	ts, err := serverTimesAfter(ctx, tgt, map[string]int64{"read": 1})
	if err != nil || len(ts) != 1 || ts[0].Op != "read" || ts[0].Calls != 1 {
		t.Errorf("ServerTimes after Restart and one read = %+v, %v", ts, err)
	}
}

// unmanaged returns options for the shared server as an existing one.
func unmanaged(tgt *Target) Options {
	o := *defaultOptions()
	o.Host, o.Port, o.User, o.Database = tgt.inst.Host, tgt.inst.Port, tgt.inst.User, tgt.inst.Database
	return o
}

func TestExistingServerPasswords(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	pw := tgt.inst.Password

	o := unmanaged(tgt)
	o.PasswordEnv = "HEADROOM_TEST_MYSQL_PW"
	t.Setenv(o.PasswordEnv, pw)
	if err := validate(&o); err != nil {
		t.Fatal(err)
	}
	viaEnv, err := Open(ctx, o, t.TempDir())
	if err != nil {
		t.Fatalf("password from the environment: %v", err)
	}
	defer viaEnv.Close()
	if _, ok := viaEnv.(target.Restarter); ok {
		t.Error("a target on an existing server claims it can restart it")
	}
	w := ycsbConfig(t, 10, map[workload.OpType]float64{workload.Read: 1})
	if err := viaEnv.Prepare(ctx, w, false); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o = unmanaged(tgt)
	o.PasswordFile = "pw" // relative to the results directory
	viaFile, err := Open(ctx, o, dir)
	if err != nil {
		t.Fatalf("password from a file: %v", err)
	}
	viaFile.Close()

	o.PasswordFile = ""
	o.PasswordEnv = "HEADROOM_TEST_MYSQL_WRONG"
	t.Setenv(o.PasswordEnv, "wrong-"+pw)
	_, err = Open(ctx, o, dir)
	if err == nil || !strings.Contains(err.Error(), "Access denied") {
		t.Fatalf("wrong password: %v, want access denied", err)
	}
	if strings.Contains(err.Error(), pw) {
		t.Fatal("the error shows the password")
	}
	o.PasswordEnv = "HEADROOM_TEST_MYSQL_UNSET"
	if _, err = Open(ctx, o, dir); err == nil || !strings.HasPrefix(err.Error(), "password_env: the environment variable HEADROOM_TEST_MYSQL_UNSET is not set") {
		t.Fatalf("unset password variable: %v", err)
	}
}

func TestServerTimingNeedsPerformanceSchemaAccess(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	// An account without SELECT on performance_schema.
	for _, q := range []string{
		"CREATE USER IF NOT EXISTS 'nops'@'127.0.0.1' IDENTIFIED BY 'nops-pw'",
		"GRANT ALL PRIVILEGES ON `headroom`.* TO 'nops'@'127.0.0.1'",
	} {
		if err := rootExec(ctx, tgt, q); err != nil {
			t.Fatal(err)
		}
	}
	o := unmanaged(tgt)
	o.User, o.PasswordEnv = "nops", "HEADROOM_TEST_NOPS_PW"
	t.Setenv(o.PasswordEnv, "nops-pw")
	other, err := Open(ctx, o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Prepare(ctx, ycsbConfig(t, 10, map[workload.OpType]float64{workload.Read: 1}), false); err != nil {
		t.Fatalf("Prepare must succeed without timing: %v", err)
	}
	_, err = other.(target.ServerTimer).ServerTimes(ctx)
	if err == nil || !strings.Contains(err.Error(), "GRANT SELECT ON performance_schema.*") {
		t.Fatalf("ServerTimes without performance_schema access: %v", err)
	}
}

// rootExec runs one statement as root, who may only log in over the
// socket, through the client program.
func rootExec(ctx context.Context, tgt *Target, q string) error {
	opt := filepath.Join(sharedDir, "root.cnf")
	conf := fmt.Sprintf("[client]\nuser=root\npassword=%s\nsocket=%s\n", optionValue(tgt.inst.Password), deploy.MariaDBSocket(tgt.inst))
	if err := os.WriteFile(opt, []byte(conf), 0o600); err != nil {
		return err
	}
	defer os.Remove(opt)
	out, err := exec.CommandContext(ctx, tgt.inst.Bin("mariadb"), "--defaults-file="+opt, "-e", q).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

func TestValidate(t *testing.T) {
	base := func() *Options {
		o := defaultOptions()
		o.User, o.Database = "app", "bench"
		return o
	}
	cases := []struct {
		name string
		mod  func(o *Options)
		want string
	}{
		{"no user", func(o *Options) { o.User = "" }, "user: required"},
		{"no database", func(o *Options) { o.Database = "" }, "database: required"},
		{"both passwords", func(o *Options) { o.PasswordEnv, o.PasswordFile = "PW", "pw.txt" }, "password_env: give either"},
		{"password in password_env", func(o *Options) { o.PasswordEnv = "s3cr3t!pass" }, "password_env: must be the name of an environment variable"},
		{"bad tls", func(o *Options) { o.TLS = "yes" }, `tls: "yes" is not a valid value`},
		{"ca without tls", func(o *Options) { o.CAFile = "ca.pem" }, "ca_file: only used"},
		{"pool zero", func(o *Options) { o.PoolSize = 0 }, "pool_size: 0 is out of range"},
		{"port", func(o *Options) { o.Port = 70000 }, "port: 70000 is out of range"},
		{"negative timeout", func(o *Options) { o.ReadTimeout.Duration = -time.Second }, "read_timeout: must not be negative"},
		{"table", func(o *Options) { o.Table = "user table" }, "table: "},
		{"timing needs text protocol", func(o *Options) { o.InterpolateParams = false }, "interpolate_params: false sends server-side prepared statements"},
		{"managed with host", func(o *Options) { o.Managed = &deploy.Managed{}; o.Database = "" }, "managed: cannot be combined with user"},
		{"managed bad setting", func(o *Options) {
			o.User, o.Database = "", ""
			o.Managed = &deploy.Managed{Settings: map[string]string{"port": "1"}}
		}, "managed.settings.port: Headroom sets this itself"},
		{"managed tls", func(o *Options) { o.User, o.Database, o.TLS = "", "", "true"; o.Managed = &deploy.Managed{} }, "managed: cannot be combined with tls"},
	}
	for _, c := range cases {
		o := base()
		c.mod(o)
		err := validate(o)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: validate = %v, want an error starting %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error shows the password", c.name)
		}
	}
	ok := base()
	ok.InterpolateParams, ok.ServerTiming, ok.TLS, ok.CAFile = false, false, "true", "ca.pem"
	if err := validate(ok); err != nil {
		t.Errorf("valid options rejected: %v", err)
	}
	managed := defaultOptions()
	managed.Managed = &deploy.Managed{Settings: map[string]string{"innodb_buffer_pool_size": "1G"}}
	if err := validate(managed); err != nil {
		t.Errorf("valid managed options rejected: %v", err)
	}
}

func TestErrorKinds(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	// A server-side statement timeout is a timeout; a lock wait timeout is busy.
	_, err := tgt.db.ExecContext(ctx, "SET STATEMENT max_statement_time=0.001 FOR SELECT SLEEP(2)")
	if err == nil {
		// SLEEP returns 1 when interrupted instead of failing.
		var me error
		_, me = tgt.db.ExecContext(ctx, "SET STATEMENT max_statement_time=0.001 FOR SELECT COUNT(*) FROM information_schema.COLUMNS a, information_schema.COLUMNS b")
		err = me
	}
	if kind(kindOf(err)) != target.KindTimeout {
		t.Errorf("max_statement_time exceeded: %v (kind %q), want timeout", err, kind(kindOf(err)))
	}
	w := ycsbConfig(t, 5, map[workload.OpType]float64{workload.Update: 1})
	gen := populate(t, tgt, w)
	op := gen.NewOp()
	gen.Populate(1, op)
	holder, err := tgt.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, "SELECT * FROM usertable WHERE ycsb_key = ? FOR UPDATE", string(op.Key)); err != nil {
		t.Fatal(err)
	}
	waiter, err := tgt.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	waiter.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1")
	_, err = waiter.ExecContext(ctx, "UPDATE usertable SET field0 = 'x' WHERE ycsb_key = ?", string(op.Key))
	if kind(kindOf(err)) != target.KindBusy {
		t.Errorf("lock wait timeout: %v (kind %q), want busy", err, kind(kindOf(err)))
	}
}

func TestSnapshotOnExistingServerWithAwkwardPassword(t *testing.T) {
	tgt := need(t)
	ctx := ctxT(t)
	pw := `a"b\c'd e#f;g`
	for _, q := range []string{
		"CREATE USER IF NOT EXISTS 'odd'@'127.0.0.1' IDENTIFIED BY '" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'",
		"GRANT ALL PRIVILEGES ON `headroom`.* TO 'odd'@'127.0.0.1'",
	} {
		if err := rootExec(ctx, tgt, q); err != nil {
			t.Fatal(err)
		}
	}
	o := unmanaged(tgt)
	o.User, o.PasswordEnv, o.Table, o.ServerTiming = "odd", "HEADROOM_TEST_ODD_PW", "oddtable", false
	t.Setenv(o.PasswordEnv, pw)
	dir := t.TempDir()
	tt, err := Open(ctx, o, dir)
	if err != nil {
		t.Fatal(err)
	}
	other := tt.(*Target)
	w := ycsbConfig(t, 25, map[workload.OpType]float64{workload.Read: 1})
	populate(t, other, w)
	if err := other.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(other.snapshot) != dir {
		t.Errorf("the snapshot of an existing server is %s, want it in the results directory %s", other.snapshot, dir)
	}
	if _, err := other.db.ExecContext(ctx, "DELETE FROM oddtable"); err != nil {
		t.Fatal(err)
	}
	if err := other.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, other, "oddtable"); n != 25 {
		t.Errorf("after Restore oddtable holds %d records, want 25", n)
	}
	snap := other.snapshot
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snap); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the snapshot %s behind: %v", snap, err)
	}
}

// A second managed server, with performance_schema off and a pool larger
// than MariaDB's default max_connections.
func TestManagedWithoutPerformanceSchema(t *testing.T) {
	need(t)
	ctx := ctxT(t)
	o := defaultOptions()
	o.PoolSize = 200
	o.Managed = &deploy.Managed{Settings: map[string]string{"performance_schema": "OFF", "innodb_buffer_pool_size": "32M"}}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(sharedDir, "nops")
	tt, err := Open(ctx, *o, dir)
	if err != nil {
		t.Fatal(err)
	}
	m := tt.(managedTarget)
	defer m.Close()
	if m.inst.Dir != filepath.Join(dir, "instances", "mariadb") {
		t.Errorf("instance directory %s", m.inst.Dir)
	}
	var maxConn int
	if err := m.db.QueryRowContext(ctx, "SELECT @@max_connections").Scan(&maxConn); err != nil || maxConn != 220 {
		t.Errorf("max_connections = %d, %v; want pool_size + 20 = 220", maxConn, err)
	}
	if err := m.Prepare(ctx, ycsbConfig(t, 10, map[workload.OpType]float64{workload.Read: 1}), true); err != nil {
		t.Fatalf("Prepare must succeed without timing: %v", err)
	}
	_, err = m.ServerTimes(ctx)
	if err == nil || !strings.Contains(err.Error(), "performance_schema is OFF") || !strings.Contains(err.Error(), "performance_schema=ON") {
		t.Fatalf("ServerTimes with performance_schema off: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(m.inst.Dir); len(entries) != 1 {
		t.Errorf("after Close the instance directory holds %d entries, want only server.log", len(entries))
	}
	// A later session in the same results directory gets a new instance
	// directory next to the kept log.
	again, err := Open(ctx, *o, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if d := again.(managedTarget).inst.Dir; d != filepath.Join(dir, "instances", "mariadb-2") {
		t.Errorf("second session's instance directory %s, want instances/mariadb-2", d)
	}
}

// Single-client round trips against the shared server, for the record:
// go test -run '^$' -bench . ./internal/target/mysql/
func BenchmarkRead(b *testing.B) { benchRead(b, true) }

func BenchmarkReadPrepared(b *testing.B) { benchRead(b, false) }

func benchRead(b *testing.B, interpolate bool) {
	if skipReason != "" {
		b.Skip(skipReason)
	}
	ctx := context.Background()
	tgt := shared.Target
	if !interpolate {
		o := unmanaged(tgt)
		o.InterpolateParams, o.ServerTiming = false, false
		o.PasswordEnv = "HEADROOM_TEST_MYSQL_PW"
		b.Setenv(o.PasswordEnv, tgt.inst.Password)
		other, err := Open(ctx, o, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		defer other.Close()
		tgt = other.(*Target)
	}
	w, _ := workload.Preset("c")
	w.RecordCount = 1000
	if err := tgt.Prepare(ctx, w, false); err != nil {
		b.Fatal(err)
	}
	if count := func() (n int64) { tgt.db.QueryRow("SELECT COUNT(*) FROM usertable").Scan(&n); return }(); count != 1000 {
		if err := tgt.Prepare(ctx, w, true); err != nil {
			b.Fatal(err)
		}
		gen, _ := workload.New(w, 1)
		c, _ := tgt.NewClient(ctx)
		var batch []*workload.Op
		for i := int64(0); i < w.RecordCount; i++ {
			op := gen.NewOp()
			gen.Populate(i, op)
			batch = append(batch, op)
		}
		if err := c.(target.Loader).LoadBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	gen, _ := workload.New(w, 2)
	c, _ := tgt.NewClient(ctx)
	op := gen.NewOp()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		gen.Next(op)
		if err := c.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}
