package redistarget

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

// needRedis skips the test when redis-server is missing, unless the
// environment requires servers.
func needRedis(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal("redis-server is not installed (HEADROOM_REQUIRE_SERVERS=1); apt-get install -y redis-server")
		}
		t.Skip("redis-server is not installed; apt-get install -y redis-server")
	}
}

// testDir is a results directory the unprivileged server user can enter.
func testDir(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	for d := base; d != os.TempDir() && d != "/" && d != filepath.Dir(d); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// openManaged opens the target with a managed instance; edit may change
// the options first.
func openManaged(t testing.TB, edit func(*Options)) *Managed {
	t.Helper()
	needRedis(t)
	o := defaultOptions()
	o.Managed = &deploy.Managed{}
	if edit != nil {
		edit(o)
	}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tg, err := Open(*o, registry.Env{Dir: testDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.(*Managed)
}

// startInstance runs a managed Redis outside the target, for the options
// that connect to an existing server.
func startInstance(t *testing.T) *deploy.Instance {
	t.Helper()
	needRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := deploy.Start(ctx, deploy.Redis(), filepath.Join(testDir(t), "redis"), deploy.Managed{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	return inst
}

// testConfig is a small YCSB workload: 3 fields of 8 bytes.
func testConfig(mix map[workload.OpType]float64) workload.Config {
	c := workload.Config{RecordCount: 100, FieldCount: 3, FieldLength: 8, RequestDistribution: workload.DistUniform, MaxScanLength: 10}
	for t, w := range mix {
		c.Mix[t] = w
	}
	return c
}

var allOps = map[workload.OpType]float64{workload.Read: 1, workload.Update: 1, workload.Insert: 1, workload.Scan: 1, workload.ReadModifyWrite: 1}

func newOp(typ workload.OpType, key string, field int, vals ...string) *workload.Op {
	op := &workload.Op{Type: typ, Key: []byte(key), Field: field, Values: make([][]byte, 3)}
	for i, v := range vals {
		op.Values[i] = []byte(v)
	}
	if field >= 0 && len(vals) == 1 {
		op.Values = [][]byte{nil, nil, nil}
		op.Values[field] = []byte(vals[0])
	}
	return op
}

func prepared(t *testing.T, tg *Target, cfg workload.Config, fresh bool) *client {
	t.Helper()
	ctx := context.Background()
	if err := tg.Prepare(ctx, cfg, fresh); err != nil {
		t.Fatal(err)
	}
	c, err := tg.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*client)
}

func do(t *testing.T, c target.Client, op *workload.Op) {
	t.Helper()
	if err := c.Do(context.Background(), op); err != nil {
		t.Fatalf("%v %s: %v", op.Type, op.Key, err)
	}
}

// hash reads a record's hash as the server holds it.
func hash(t *testing.T, tg *Target, key string) map[string]string {
	t.Helper()
	m, err := tg.admin.HGetAll(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestHashModeOperations(t *testing.T) {
	m := openManaged(t, nil)
	c := prepared(t, m.Target, testConfig(allOps), true)
	ctx := context.Background()
	for _, k := range []string{"user1", "user2", "user3", "user4", "user5"} {
		do(t, c, newOp(workload.Insert, k, -1, k+"-f0", k+"-f1", k+"-f2"))
	}
	if got := hash(t, m.Target, "user3"); len(got) != 3 || got["field0"] != "user3-f0" || got["field2"] != "user3-f2" {
		t.Fatalf("user3 = %v", got)
	}
	// The scan index holds every key, scored like YCSB's binding.
	score, err := m.admin.ZScore(ctx, "_indices", "user3").Result()
	if err != nil || score != keyScore([]byte("user3")) {
		t.Fatalf("ZSCORE _indices user3 = %v, %v", score, err)
	}
	if n := m.admin.ZCard(ctx, "_indices").Val(); n != 5 {
		t.Fatalf("ZCARD _indices = %d, want 5", n)
	}

	// Reads: all fields (HGETALL), one field (HMGET); the sink saw the
	// reply's header.
	do(t, c, newOp(workload.Read, "user1", -1))
	if got := string(c.hgetall.sink.line(0)); got != "*6" {
		t.Fatalf("HGETALL reply header %q, want *6 (3 fields and values)", got)
	}
	do(t, c, newOp(workload.Read, "user1", 2))
	if got := string(c.hmget.sink.line(1)); got != "$8" {
		t.Fatalf("HMGET reply element %q, want $8", got)
	}
	for _, field := range []int{-1, 1} {
		err := c.Do(ctx, newOp(workload.Read, "user999", field))
		if !errors.Is(err, target.ErrNotFound) {
			t.Fatalf("read (field %d) of a missing key: %v, want ErrNotFound", field, err)
		}
	}

	// Updates: one field, then all fields.
	do(t, c, newOp(workload.Update, "user2", 1, "new-f1"))
	if got := hash(t, m.Target, "user2"); got["field1"] != "new-f1" || got["field0"] != "user2-f0" {
		t.Fatalf("after updating field1: %v", got)
	}
	do(t, c, newOp(workload.Update, "user2", -1, "a", "b", "c"))
	if got := hash(t, m.Target, "user2"); got["field0"] != "a" || got["field1"] != "b" || got["field2"] != "c" {
		t.Fatalf("after updating all fields: %v", got)
	}

	// Read-modify-write: the read finds the record, the write lands.
	do(t, c, newOp(workload.ReadModifyWrite, "user4", 0, "rmw"))
	if got := hash(t, m.Target, "user4"); got["field0"] != "rmw" || got["field1"] != "user4-f1" {
		t.Fatalf("after read-modify-write: %v", got)
	}
	err = c.Do(ctx, newOp(workload.ReadModifyWrite, "user998", 0, "x"))
	if !errors.Is(err, target.ErrNotFound) {
		t.Fatalf("read-modify-write of a missing key: %v, want ErrNotFound", err)
	}
	if n := m.admin.Exists(ctx, "user998").Val(); n != 0 {
		t.Fatal("read-modify-write of a missing key wrote it")
	}

	// Scan: from user1's score, up to 3 records, each read in full.
	want, err := m.admin.ZCount(ctx, "_indices", scoreArg(keyScore([]byte("user1"))), "+inf").Result()
	if err != nil {
		t.Fatal(err)
	}
	want = min(want, 3)
	do(t, c, &workload.Op{Type: workload.Scan, Key: []byte("user1"), Field: -1, ScanLength: 3})
	if got := len(c.zrange.Val()); int64(got) != want || want == 0 {
		t.Fatalf("scan found %d keys, want %d", got, want)
	}
	for i := range want {
		if got := string(c.scan[i].all.sink.line(0)); got != "*6" {
			t.Fatalf("scan record %d header %q, want *6", i, got)
		}
	}
	// One field of each record.
	do(t, c, &workload.Op{Type: workload.Scan, Key: []byte("user1"), Field: 1, ScanLength: 3})
	if got := string(c.scan[0].oneField.sink.line(1)); !strings.HasPrefix(got, "$") || got == "$-1" {
		t.Fatalf("one-field scan element %q", got)
	}
}

func scoreArg(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func TestKeyScoreIsJavaHashCode(t *testing.T) {
	// Values of java.lang.String.hashCode.
	for s, want := range map[string]float64{"": 0, "abc": 96354, "hello": 99162322, "polygenelubricants": -2147483648} {
		if got := keyScore([]byte(s)); got != want {
			t.Errorf("keyScore(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestKeyPrefix(t *testing.T) {
	m := openManaged(t, func(o *Options) { o.KeyPrefix = "bench:" })
	c := prepared(t, m.Target, testConfig(allOps), true)
	do(t, c, newOp(workload.Insert, "user7", -1, "x", "y", "z"))
	if got := hash(t, m.Target, "bench:user7"); got["field1"] != "y" {
		t.Fatalf("bench:user7 = %v", got)
	}
	if n := m.admin.ZCard(context.Background(), "bench:_indices").Val(); n != 1 {
		t.Fatalf("ZCARD bench:_indices = %d, want 1", n)
	}
	do(t, c, newOp(workload.Read, "user7", -1))
}

func TestLoadBatchAndFreshPrepare(t *testing.T) {
	m := openManaged(t, nil)
	cfg := testConfig(map[workload.OpType]float64{workload.Read: 1})
	c := prepared(t, m.Target, cfg, true)
	gen, err := workload.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for start := int64(0); start < 100; start += 40 {
		var batch []*workload.Op
		for i := start; i < min(start+40, 100); i++ {
			op := gen.NewOp()
			gen.Populate(i, op)
			batch = append(batch, op)
		}
		if err := c.LoadBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.admin.DBSize(ctx).Val(); n != 101 {
		t.Fatalf("DBSIZE = %d, want 100 records and the index", n)
	}
	if n := m.admin.ZCard(ctx, "_indices").Val(); n != 100 {
		t.Fatalf("ZCARD _indices = %d, want 100", n)
	}
	op := gen.NewOp()
	gen.Populate(57, op)
	got := hash(t, m.Target, string(op.Key))
	for f, v := range op.Values {
		if got[cfgField(f)] != string(v) {
			t.Fatalf("record 57 field %d = %q, want %q", f, got[cfgField(f)], v)
		}
	}
	do(t, c, &workload.Op{Type: workload.Read, Key: op.Key, Field: -1})

	// Prepare without fresh keeps the data; fresh empties the database.
	if err := m.Prepare(ctx, cfg, false); err != nil {
		t.Fatal(err)
	}
	if n := m.admin.DBSize(ctx).Val(); n != 101 {
		t.Fatalf("DBSIZE after Prepare(fresh=false) = %d, want 101", n)
	}
	if err := m.Prepare(ctx, cfg, true); err != nil {
		t.Fatal(err)
	}
	if n := m.admin.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("DBSIZE after Prepare(fresh=true) = %d, want 0", n)
	}
}

func cfgField(i int) string { return "field" + strconv.Itoa(i) }

func TestPrepareRejectsStatementsAndStringScans(t *testing.T) {
	m := openManaged(t, func(o *Options) { o.Mode = modeString })
	ctx := context.Background()
	st := workload.Config{Statements: []workload.Statement{{Name: "q", Weight: 1, SQL: "SELECT 1"}}}
	if err := m.Prepare(ctx, st, true); err == nil || !strings.Contains(err.Error(), "the redis target runs YCSB workloads, not SQL statements") {
		t.Fatalf("statement workload: %v", err)
	}
	err := m.Prepare(ctx, testConfig(map[workload.OpType]float64{workload.Read: 1, workload.Scan: 1}), true)
	if err == nil || !strings.HasPrefix(err.Error(), "mode: ") {
		t.Fatalf("string mode with scans: %v", err)
	}
	if _, err := m.NewClient(ctx); err == nil {
		t.Fatal("NewClient before a successful Prepare succeeded")
	}
}

func TestStringMode(t *testing.T) {
	m := openManaged(t, func(o *Options) { o.Mode = modeString })
	c := prepared(t, m.Target, testConfig(map[workload.OpType]float64{workload.Read: 1, workload.Update: 1, workload.Insert: 1}), true)
	ctx := context.Background()
	do(t, c, newOp(workload.Insert, "user1", -1, "aaaaaaaa", "bbbbbbbb", "cccccccc"))
	if got := m.admin.Get(ctx, "user1").Val(); got != "aaaaaaaabbbbbbbbcccccccc" {
		t.Fatalf("user1 = %q", got)
	}
	do(t, c, newOp(workload.Read, "user1", -1))
	if got := string(c.get.sink.line(0)); got != "$24" {
		t.Fatalf("GET reply header %q, want $24", got)
	}
	// One field is written in place.
	do(t, c, newOp(workload.Update, "user1", 1, "BBBBBBBB"))
	if got := m.admin.Get(ctx, "user1").Val(); got != "aaaaaaaaBBBBBBBBcccccccc" {
		t.Fatalf("after SETRANGE user1 = %q", got)
	}
	do(t, c, newOp(workload.ReadModifyWrite, "user1", 2, "CCCCCCCC"))
	if got := m.admin.Get(ctx, "user1").Val(); got != "aaaaaaaaBBBBBBBBCCCCCCCC" {
		t.Fatalf("after read-modify-write user1 = %q", got)
	}
	do(t, c, newOp(workload.Update, "user1", -1, "11111111", "22222222", "33333333"))
	if got := m.admin.Get(ctx, "user1").Val(); got != "111111112222222233333333" {
		t.Fatalf("after SET user1 = %q", got)
	}
	if err := c.Do(ctx, newOp(workload.Read, "nope", -1)); !errors.Is(err, target.ErrNotFound) {
		t.Fatalf("GET of a missing key: %v, want ErrNotFound", err)
	}
	// LoadBatch in string mode.
	if err := c.LoadBatch(ctx, []*workload.Op{newOp(workload.Insert, "user2", -1, "x", "y", "z")}); err != nil {
		t.Fatal(err)
	}
	if got := m.admin.Get(ctx, "user2").Val(); got != "xyz" {
		t.Fatalf("loaded user2 = %q", got)
	}
}

func TestPasswordFromEnvAndFile(t *testing.T) {
	inst := startInstance(t)
	dir := t.TempDir()
	cfg := testConfig(map[workload.OpType]float64{workload.Read: 1})
	try := func(o *Options) error {
		t.Helper()
		if err := validate(o); err != nil {
			t.Fatal(err)
		}
		tg, err := Open(*o, registry.Env{Dir: dir})
		if err != nil {
			return err
		}
		defer tg.Close()
		if _, ok := tg.(*Managed); ok {
			t.Fatal("a target with address is not managed")
		}
		c := prepared(t, tg.(*Target), cfg, false)
		do(t, c, newOp(workload.Insert, "user1", -1, "a", "b", "c"))
		return nil
	}

	t.Setenv("HR_TEST_REDIS_PW", inst.Password)
	o := defaultOptions()
	o.Address, o.PasswordEnv = inst.Addr(), "HR_TEST_REDIS_PW"
	if err := try(o); err != nil {
		t.Fatalf("password_env: %v", err)
	}

	// A relative password_file is in the results directory.
	if err := os.WriteFile(filepath.Join(dir, "redis.pw"), []byte(inst.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o = defaultOptions()
	o.Address, o.PasswordFile, o.Username = inst.Addr(), "redis.pw", "default"
	if err := try(o); err != nil {
		t.Fatalf("password_file: %v", err)
	}

	const wrong = "not-the-password-4711"
	t.Setenv("HR_TEST_REDIS_PW", wrong)
	o = defaultOptions()
	o.Address, o.PasswordEnv = inst.Addr(), "HR_TEST_REDIS_PW"
	err := try(o)
	if err == nil || !strings.Contains(err.Error(), "WRONGPASS") || !strings.Contains(err.Error(), "password_env") {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), inst.Password) {
		t.Fatalf("the error shows a password: %v", err)
	}

	o = defaultOptions()
	o.Address = inst.Addr()
	if err := try(o); err == nil || !strings.Contains(err.Error(), "NOAUTH") || !strings.Contains(err.Error(), "set password_env or password_file") {
		t.Fatalf("no password: %v", err)
	}

	o = defaultOptions()
	o.Address, o.PasswordEnv = inst.Addr(), "HR_TEST_REDIS_PW_UNSET"
	if err := try(o); err == nil || !strings.HasPrefix(err.Error(), "password_env: the environment variable HR_TEST_REDIS_PW_UNSET is not set") {
		t.Fatalf("unset variable: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	port, err := deploy.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o := defaultOptions()
	o.Address = "127.0.0.1:" + strconv.Itoa(port)
	_, err = Open(*o, registry.Env{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "cannot connect to 127.0.0.1:") || !strings.Contains(err.Error(), "is the server running") {
		t.Fatalf("Open of a closed port: %v", err)
	}
}

// kindOf returns the error's kind name, "" for none.
func kindOf(err error) string {
	var k target.Kinder
	if errors.As(err, &k) {
		return k.Kind()
	}
	return ""
}

func TestKilledServerGivesConnectionErrorsQuickly(t *testing.T) {
	// A read timeout far above the bound below shows that errors come from
	// the closed connections, not from waiting.
	m := openManaged(t, func(o *Options) { o.ReadTimeout = spec.Duration{Duration: time.Minute} })
	cfg := testConfig(map[workload.OpType]float64{workload.Read: 1})
	prepared(t, m.Target, cfg, true)
	ctx := context.Background()
	const slots = 4
	clients := make([]target.Client, slots)
	for i := range clients {
		c, err := m.NewClient(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	do(t, clients[0], newOp(workload.Insert, "user1", -1, "a", "b", "c"))

	var killed time.Time
	var mu sync.Mutex
	errs := make([]error, slots)
	after := make([]time.Duration, slots)
	var wg sync.WaitGroup
	started := make(chan struct{}, slots)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := newOp(workload.Read, "user1", -1)
			signalled := false
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				if err := c.Do(ctx, op); err != nil {
					mu.Lock()
					errs[i], after[i] = err, time.Since(killed)
					mu.Unlock()
					return
				}
				if !signalled {
					started <- struct{}{}
					signalled = true
				}
			}
		}()
	}
	for range slots {
		<-started
	}
	mu.Lock()
	killed = time.Now()
	mu.Unlock()
	if err := syscall.Kill(m.inst.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if kindOf(err) != target.KindConnection {
			t.Fatalf("slot %d: error %v (kind %q), want kind connection", i, err, kindOf(err))
		}
		t.Logf("slot %d: %v after %v", i, err, after[i])
		if after[i] > 10*time.Second {
			t.Fatalf("slot %d: the error came %v after the kill (read_timeout 1m)", i, after[i])
		}
	}
	// New requests fail at once, with connection refused.
	start := time.Now()
	err := clients[0].Do(ctx, newOp(workload.Read, "user1", -1))
	t.Logf("request to the dead server: %v after %v", err, time.Since(start))
	if kindOf(err) != target.KindConnection || time.Since(start) > 10*time.Second {
		t.Fatalf("request to the dead server: %v (kind %q) after %v", err, kindOf(err), time.Since(start))
	}

	// The server comes back; new clients work again once the pool has
	// redialled.
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := m.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	restarted := time.Now()
	for {
		err := c.Do(ctx, newOp(workload.Insert, "user2", -1, "a", "b", "c"))
		if err == nil {
			t.Logf("first success %v after the restart", time.Since(restarted))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	do(t, c, newOp(workload.Read, "user2", -1))
}

func TestStoppedServerTimesOut(t *testing.T) {
	m := openManaged(t, func(o *Options) { o.ReadTimeout = spec.Duration{Duration: 300 * time.Millisecond} })
	c := prepared(t, m.Target, testConfig(map[workload.OpType]float64{workload.Read: 1}), true)
	do(t, c, newOp(workload.Insert, "user1", -1, "a", "b", "c"))
	pid := m.inst.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	err := c.Do(context.Background(), newOp(workload.Read, "user1", -1))
	if kindOf(err) != target.KindTimeout {
		t.Fatalf("read from a stopped server: %v (kind %q), want kind timeout", err, kindOf(err))
	}
}

func TestOutOfMemoryIsBusy(t *testing.T) {
	m := openManaged(t, func(o *Options) {
		o.Managed.Settings = map[string]string{"maxmemory": "1", "maxmemory-policy": "noeviction"}
	})
	c := prepared(t, m.Target, testConfig(map[workload.OpType]float64{workload.Read: 1}), false)
	err := c.Do(context.Background(), newOp(workload.Insert, "user1", -1, "a", "b", "c"))
	if kindOf(err) != target.KindBusy || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("insert over maxmemory: %v (kind %q), want an OOM error of kind busy", err, kindOf(err))
	}
	err = c.LoadBatch(context.Background(), []*workload.Op{newOp(workload.Insert, "user2", -1, "a", "b", "c")})
	if kindOf(err) != target.KindBusy {
		t.Fatalf("LoadBatch over maxmemory: %v (kind %q), want kind busy", err, kindOf(err))
	}
	// Reads are still served and find nothing.
	if err := c.Do(context.Background(), newOp(workload.Read, "user1", -1)); !errors.Is(err, target.ErrNotFound) {
		t.Fatalf("read: %v", err)
	}
}

func TestRestartKeepsDataAndClientsRecover(t *testing.T) {
	m := openManaged(t, nil)
	cfg := testConfig(map[workload.OpType]float64{workload.Read: 1, workload.Update: 1})
	c := prepared(t, m.Target, cfg, true)
	ctx := context.Background()
	do(t, c, newOp(workload.Insert, "user1", -1, "a", "b", "c"))
	do(t, c, newOp(workload.Read, "user1", -1)) // leaves an idle pooled connection
	pids := m.ServerPIDs()
	if len(pids) != 1 {
		t.Fatalf("ServerPIDs = %v", pids)
	}
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got := m.ServerPIDs(); len(got) != 1 || got[0] == pids[0] {
		t.Fatalf("ServerPIDs after restart = %v, was %v", got, pids)
	}
	// The first request of a new client succeeds: the pool drops the
	// connection the old server closed and dials a new one.
	c2, err := m.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale := poolStats(m.Target).StaleConns
	do(t, c2, newOp(workload.Read, "user1", -1))
	if got := poolStats(m.Target).StaleConns; got <= stale {
		t.Fatalf("stale connections %d -> %d: the old server's connection was not dropped", stale, got)
	}
	if got := hash(t, m.Target, "user1"); got["field2"] != "c" {
		t.Fatalf("user1 after restart = %v", got)
	}
}

func TestSnapshotRestore(t *testing.T) {
	m := openManaged(t, nil)
	cfg := testConfig(map[workload.OpType]float64{workload.Read: 1, workload.Update: 1, workload.Insert: 1})
	c := prepared(t, m.Target, cfg, true)
	ctx := context.Background()
	if err := m.Restore(ctx); err == nil {
		t.Fatal("Restore before Snapshot succeeded")
	}
	do(t, c, newOp(workload.Insert, "user1", -1, "orig0", "orig1", "orig2"))
	if err := m.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	do(t, c, newOp(workload.Update, "user1", -1, "new0", "new1", "new2"))
	do(t, c, newOp(workload.Insert, "user2", -1, "x", "y", "z"))
	if err := m.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	c2, err := m.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	do(t, c2, newOp(workload.Read, "user1", -1))
	if got := hash(t, m.Target, "user1"); got["field0"] != "orig0" || got["field2"] != "orig2" {
		t.Fatalf("user1 after restore = %v, want the snapshot's values", got)
	}
	if err := c2.Do(ctx, newOp(workload.Read, "user2", -1)); !errors.Is(err, target.ErrNotFound) {
		t.Fatalf("user2, inserted after the snapshot: %v, want ErrNotFound", err)
	}
	// A second restore works from the same snapshot.
	do(t, c2, newOp(workload.Update, "user1", 0, "again"))
	if err := m.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hash(t, m.Target, "user1"); got["field0"] != "orig0" {
		t.Fatalf("user1 after the second restore = %v", got)
	}
}

func TestServerTimes(t *testing.T) {
	m := openManaged(t, nil)
	// Workload A's operations have commands of their own.
	c := prepared(t, m.Target, testConfig(map[workload.OpType]float64{workload.Read: 0.5, workload.Update: 0.5}), true)
	ctx := context.Background()
	before, err := m.ServerTimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 0 {
		t.Fatalf("ServerTimes before any operation = %v, want none", before)
	}
	do(t, c, newOp(workload.Insert, "user1", -1, "a", "b", "c")) // hset: counted as update
	for range 7 {
		do(t, c, newOp(workload.Read, "user1", -1))
	}
	do(t, c, newOp(workload.Read, "user1", 1))
	for range 3 {
		do(t, c, newOp(workload.Update, "user1", 2, "u"))
	}
	ts, err := m.ServerTimes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]target.ServerTime{}
	for _, s := range ts {
		got[s.Op] = s
	}
	if len(got) != 2 || got["read"].Calls != 8 || got["update"].Calls != 4 || got["read"].Total <= 0 || got["update"].Total <= 0 {
		t.Fatalf("ServerTimes = %+v, want read 8 calls and update 4 (3 updates and the insert's HSET)", ts)
	}

	// Workload F: reads and read-modify-writes share HGETALL, so neither
	// is reported.
	if err := m.Prepare(ctx, testConfig(map[workload.OpType]float64{workload.Read: 1, workload.ReadModifyWrite: 1}), false); err != nil {
		t.Fatal(err)
	}
	if ts, err := m.ServerTimes(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("ServerTimes for read + read_modify_write = %v, %v; want none", ts, err)
	}
}

func TestTimingFor(t *testing.T) {
	ops := func(ts []opCommands) string {
		var names []string
		for _, oc := range ts {
			names = append(names, oc.op)
		}
		return strings.Join(names, ",")
	}
	mix := func(m map[workload.OpType]float64) [workload.NumOpTypes]float64 { return testConfig(m).Mix }
	for _, tc := range []struct {
		mode string
		mix  map[workload.OpType]float64
		want string
	}{
		{modeHash, map[workload.OpType]float64{workload.Read: 0.95, workload.Insert: 0.05}, "read,insert"},          // D
		{modeHash, map[workload.OpType]float64{workload.Scan: 0.95, workload.Insert: 0.05}, "insert,scan"},          // E
		{modeHash, map[workload.OpType]float64{workload.Update: 0.5, workload.Insert: 0.5}, ""},                     // both HSET
		{modeHash, map[workload.OpType]float64{workload.Read: 1, workload.Scan: 1, workload.Update: 1}, "update"},   // scans read records
		{modeString, map[workload.OpType]float64{workload.Read: 1, workload.Update: 1}, "read,update"},              // A, strings
		{modeString, map[workload.OpType]float64{workload.Read: 1, workload.Update: 1, workload.Insert: 1}, "read"}, // both SET
	} {
		if got := ops(timingFor(tc.mode, mix(tc.mix))); got != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.mode, tc.mix, got, tc.want)
		}
	}
	stats := parseCommandStats("# Commandstats\r\ncmdstat_hset:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\ncmdstat_zadd:calls=2,usec=8,usec_per_call=4.00\r\n")
	ts := serverTimes(timingFor(modeHash, mix(map[workload.OpType]float64{workload.Insert: 1})), stats)
	if len(ts) != 1 || ts[0].Op != "insert" || ts[0].Calls != 2 || ts[0].Total != 38*time.Microsecond {
		t.Fatalf("insert server time = %+v, want 2 calls of 38µs in all", ts)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Options)
		want string // error prefix; "" = valid
	}{
		{func(o *Options) {}, ""},
		{func(o *Options) { o.Address = "redis.example.com:6380"; o.PasswordEnv = "REDIS_PW"; o.DB = 3 }, ""},
		{func(o *Options) { o.Managed = &deploy.Managed{Settings: map[string]string{"maxmemory": "64mb"}} }, ""},
		{func(o *Options) { o.Address = "127.0.0.1:6379"; o.Managed = &deploy.Managed{} }, "address: a managed instance has its own address"},
		{func(o *Options) { o.PasswordFile = "pw"; o.Managed = &deploy.Managed{} }, "password_file: a managed instance"},
		{func(o *Options) { o.TLS.Enabled = true; o.Managed = &deploy.Managed{} }, "tls: a managed instance"},
		{func(o *Options) { o.Managed = &deploy.Managed{Settings: map[string]string{"requirepass": "x"}} }, "managed.settings.requirepass: Headroom sets this itself"},
		{func(o *Options) { o.Managed = &deploy.Managed{Port: 70000} }, "managed.port: 70000 is out of range"},
		{func(o *Options) { o.PoolSize = 0 }, "pool_size: must be at least 1"},
		{func(o *Options) { o.Mode = "json" }, `mode: "json" is not a valid value`},
		{func(o *Options) { o.Address = "localhost" }, `address: "localhost" is not host:port`},
		{func(o *Options) { o.Address = "localhost:0" }, `address: port "0" is not a number from 1 to 65535`},
		{func(o *Options) { o.PasswordEnv, o.PasswordFile = "A", "b" }, "password_env: give either password_env or password_file"},
		{func(o *Options) { o.PasswordEnv = "MY-PW" }, `password_env: "MY-PW" is not an environment variable name`},
		{func(o *Options) { o.DB = -1 }, "db: must be 0 or more"},
		{func(o *Options) { o.DialTimeout.Duration = 0 }, "dial_timeout: must be above 0"},
		{func(o *Options) { o.ReadTimeout.Duration = -time.Second }, "read_timeout: must be at least 1ms"},
		{func(o *Options) { o.TLS.CAFile = "ca.pem" }, "tls.enabled: tls options are set but TLS is off"},
		{func(o *Options) { o.TLS = TLSOptions{Enabled: true, InsecureSkipVerify: true, ServerName: "x"} }, "tls.insecure_skip_verify:"},
	} {
		o := defaultOptions()
		tc.edit(o)
		err := validate(o)
		if tc.want == "" {
			if err != nil {
				t.Errorf("valid options rejected: %v", err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("err = %v, want prefix %q", err, tc.want)
		}
	}
}

// decodeOptions decodes a target section's options as the spec does.
func decodeOptions(t *testing.T, src string) (*Options, error) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	o := defaultOptions()
	if errs := spec.DecodeNode("spec.yaml", &n, "target", o); errs != nil {
		return nil, errs
	}
	return o, nil
}

func TestDecodeOptions(t *testing.T) {
	// There is no field for a literal password.
	if _, err := decodeOptions(t, "address: 127.0.0.1:6379\npassword: hunter2\n"); err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("a literal password was accepted: %v", err)
	}
	o, err := decodeOptions(t, "managed: {settings: {maxmemory: 256mb}}\nread_timeout: 250ms\ntls: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	if o.Managed == nil || o.Managed.Settings["maxmemory"] != "256mb" || o.ReadTimeout.Duration != 250*time.Millisecond || o.PoolSize != 64 || o.Mode != modeHash {
		t.Fatalf("decoded %+v", o)
	}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	o, err = decodeOptions(t, "managed: {}\n")
	if err != nil || o.Managed == nil {
		t.Fatalf("managed: {} decoded to %+v, %v; want a managed instance", o, err)
	}
}

func TestRegistered(t *testing.T) {
	f, ok := registry.Lookup("redis")
	if !ok || f.InProcess {
		t.Fatalf("redis factory %+v registered %v", f, ok)
	}
	if _, ok := f.NewOptions().(*Options); !ok {
		t.Fatal("NewOptions is not *Options")
	}
}
