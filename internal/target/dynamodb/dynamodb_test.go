package dynamotarget

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

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

// openManaged opens the target on a managed in-memory DynamoDB Local; edit
// may change the options first. It skips the test when java or the jars
// are missing, unless the environment requires servers.
func openManaged(t testing.TB, edit func(*Options)) *Managed {
	t.Helper()
	o := defaultOptions()
	o.Managed = &deploy.Managed{Settings: map[string]string{"in_memory": "true", "heap": "256m"}}
	if edit != nil {
		edit(o)
	}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tg, err := Open(*o, registry.Env{Dir: testDir(t)})
	if errors.Is(err, deploy.ErrMissingBinary) {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal(err)
		}
		t.Skip("DynamoDB Local is not available: ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.(*Managed)
}

func testConfig(mix map[workload.OpType]float64) workload.Config {
	c := workload.Config{RecordCount: 100, FieldCount: 3, FieldLength: 8, RequestDistribution: workload.DistUniform, MaxScanLength: 10}
	for t, w := range mix {
		c.Mix[t] = w
	}
	return c
}

func newOp(typ workload.OpType, key string, field int, vals ...string) *workload.Op {
	op := &workload.Op{Type: typ, Key: []byte(key), Field: field, Values: make([][]byte, 3)}
	if field >= 0 && len(vals) == 1 {
		op.Values[field] = []byte(vals[0])
		return op
	}
	for i, v := range vals {
		op.Values[i] = []byte(v)
	}
	return op
}

// item reads a record as the service holds it.
func item(t *testing.T, tg *Target, key string) map[string]string {
	t.Helper()
	out, err := tg.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(tg.opts.Table),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for k, v := range out.Item {
		m[k] = v.(*types.AttributeValueMemberS).Value
	}
	return m
}

func TestOperations(t *testing.T) {
	m := openManaged(t, nil)
	ctx := context.Background()
	all := map[workload.OpType]float64{workload.Read: 1, workload.Update: 1, workload.Insert: 1, workload.Scan: 1, workload.ReadModifyWrite: 1}
	if err := m.Prepare(ctx, testConfig(all), true); err != nil {
		t.Fatal(err)
	}
	tc, err := m.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := tc.(*client)
	do := func(op *workload.Op) {
		t.Helper()
		if err := c.Do(ctx, op); err != nil {
			t.Fatalf("%v %s: %v", op.Type, op.Key, err)
		}
	}
	for _, k := range []string{"user1", "user2", "user3", "user4"} {
		do(newOp(workload.Insert, k, -1, k+"-f0", k+"-f1", k+"-f2"))
	}
	if got := item(t, m.Target, "user2"); got["pk"] != "user2" || got["field1"] != "user2-f1" || len(got) != 4 {
		t.Fatalf("inserted item = %v", got)
	}
	do(newOp(workload.Read, "user1", -1))
	do(newOp(workload.Read, "user1", 2))
	for _, op := range []*workload.Op{newOp(workload.Read, "user999", -1), newOp(workload.Update, "user999", 0, "x"), newOp(workload.ReadModifyWrite, "user999", 0, "x")} {
		if err := c.Do(ctx, op); !errors.Is(err, target.ErrNotFound) {
			t.Fatalf("%v of a missing record: %v, want not found", op.Type, err)
		}
	}
	if got := item(t, m.Target, "user999"); len(got) != 0 {
		t.Fatalf("an update of a missing record created it: %v", got)
	}
	do(newOp(workload.Update, "user2", 1, "new-f1"))
	if got := item(t, m.Target, "user2"); got["field1"] != "new-f1" || got["field0"] != "user2-f0" {
		t.Fatalf("after a one-field update: %v", got)
	}
	do(newOp(workload.Update, "user2", -1, "a", "b", "c"))
	do(newOp(workload.ReadModifyWrite, "user4", 0, "rmw"))
	if got := item(t, m.Target, "user2"); got["field0"] != "a" || got["field2"] != "c" {
		t.Fatalf("after an all-field update: %v", got)
	}
	if got := item(t, m.Target, "user4"); got["field0"] != "rmw" {
		t.Fatalf("after a read-modify-write: %v", got)
	}
	do(&workload.Op{Type: workload.Scan, Key: []byte("user1"), Field: -1, ScanLength: 3})
	do(&workload.Op{Type: workload.Scan, Key: []byte("user0"), Field: 1, ScanLength: 3})

	// LoadBatch in 25-item requests; a fresh Prepare empties the table.
	if err := m.Prepare(ctx, testConfig(all), true); err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(testConfig(all), 1)
	if err != nil {
		t.Fatal(err)
	}
	var batch []*workload.Op
	for i := range int64(60) {
		op := gen.NewOp()
		gen.Populate(i, op)
		batch = append(batch, op)
	}
	if err := c.LoadBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	out, err := m.db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("usertable"), Select: types.SelectCount})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 60 {
		t.Fatalf("table holds %d items after loading 60 into a fresh one", out.Count)
	}
	if got := item(t, m.Target, string(batch[59].Key)); got["field2"] != string(batch[59].Values[2]) {
		t.Fatalf("loaded item %s = %v", batch[59].Key, got)
	}
}

// populate prepares m afresh for cfg and loads its records.
func populate(t *testing.T, m *Managed, cfg workload.Config) *workload.Generator {
	t.Helper()
	ctx := context.Background()
	if err := m.Prepare(ctx, cfg, true); err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ops := make([]*workload.Op, cfg.RecordCount)
	for i := range ops {
		ops[i] = gen.NewOp()
		gen.Populate(int64(i), ops[i])
	}
	if err := c.(target.Loader).LoadBatch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	return gen
}

// run drives one run and returns its result and the measured phase's
// errors by kind.
func run(t *testing.T, cfg load.Config, m *Managed, gen *workload.Generator) (load.Result, map[string]int64) {
	t.Helper()
	kinds := map[string]int64{}
	res, err := load.Run(context.Background(), cfg, m, gen, func(tk load.Tick) error {
		for _, st := range tk.Stats {
			if st.Phase == load.Measure {
				for k, n := range st.ErrorKinds {
					kinds[k] += n
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, kinds
}

// YCSB workload A (YCSB's default records) through the load engine, on an
// on-demand table: no errors. The closed loop of 16 clients keeps the
// service busy, so the throughput logged is about the most this machine's
// DynamoDB Local serves.
func TestWorkloadA(t *testing.T) {
	m := openManaged(t, nil)
	w, err := workload.Preset("a")
	if err != nil {
		t.Fatal(err)
	}
	w.RecordCount = 2000
	gen := populate(t, m, w)
	cfg := load.Config{Model: "closed", Clients: 16, Timeout: 5 * time.Second, Warmup: time.Second, Measure: 3 * time.Second,
		Interval: time.Second, Seed: 1, Ops: []workload.OpType{workload.Read, workload.Update}}
	res, kinds := run(t, cfg, m, gen)
	if res.Measured.Completed < 100 || res.Measured.Errors != 0 {
		t.Fatalf("completed %d, errors %d %v (first: %s)", res.Measured.Completed, res.Measured.Errors, kinds, res.FirstError)
	}
	t.Logf("workload a, 16 clients: %.0f requests/s, client CPU %.0f%%", res.Throughput, res.ClientCPU)
}

// With 50 write units per second and one-unit records, an offered 200
// updates per second gets about 50 through; the rest fail as throttled.
// The burst (1 s) is spent in the warmup, so the measured phase shows the
// provisioned rate.
func TestProvisionedWriteCapacityThrottles(t *testing.T) {
	m := openManaged(t, func(o *Options) {
		o.ReadCapacity, o.WriteCapacity = 50, 50
		o.Burst = spec.Duration{Duration: time.Second}
	})
	w := testConfig(map[workload.OpType]float64{workload.Update: 1})
	gen := populate(t, m, w)
	const offered, measure = 200.0, 5 * time.Second
	cfg := load.Config{Model: "open", Schedule: &load.Constant{Rate: offered}, MaxInFlight: 16,
		LateAfter: 10 * time.Millisecond, DropAfter: time.Second, Timeout: 2 * time.Second,
		Warmup: 2 * time.Second, Measure: measure, Interval: time.Second, Ops: []workload.OpType{workload.Update}}
	res, kinds := run(t, cfg, m, gen)
	secs := measure.Seconds()
	ok := float64(res.Measured.Completed) / secs
	throttled := float64(kinds[KindThrottled]) / secs
	t.Logf("offered %.0f/s: %.1f/s succeeded, %.1f/s throttled; errors by kind %v", offered, ok, throttled, kinds)
	if math.Abs(ok-50) > 5 {
		t.Errorf("%.1f updates/s succeeded, want 50 ± 10%%", ok)
	}
	if math.Abs(throttled-150) > 15 {
		t.Errorf("%.1f updates/s throttled, want 150 ± 10%%", throttled)
	}
	if n := res.Measured.Errors - kinds[KindThrottled]; n != 0 {
		t.Errorf("%d errors other than throttled: %v (first: %s)", n, kinds, res.FirstError)
	}
}

// A workload whose record cannot fit the bucket is refused at Prepare,
// naming the option.
func TestPrepareRefusesRecordsOverCapacity(t *testing.T) {
	m := openManaged(t, func(o *Options) {
		o.ReadCapacity, o.WriteCapacity = 1, 1
		o.Burst = spec.Duration{Duration: time.Second}
	})
	w := testConfig(map[workload.OpType]float64{workload.Update: 1})
	w.FieldCount, w.FieldLength = 10, 100 // 1,085+ bytes: 2 write units
	err := m.Prepare(context.Background(), w, true)
	if err == nil || !strings.HasPrefix(err.Error(), "write_capacity: 1 units per second") {
		t.Fatalf("Prepare = %v, want a write_capacity error", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	port, err := deploy.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	o := defaultOptions()
	o.Endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
	_, err = Open(*o, registry.Env{})
	if err == nil || !strings.Contains(err.Error(), "is the service running and is endpoint right?") {
		t.Fatalf("Open of a closed port = %v", err)
	}
}

// An endpoint with the named credentials reaches the managed service; a
// variable that is not set is an error naming it, never a value.
func TestEndpointAndCredentials(t *testing.T) {
	m := openManaged(t, nil)
	t.Setenv("HR_TEST_KEY", "AKIDEXAMPLE")
	t.Setenv("HR_TEST_SECRET", "s3cr3t-value")
	o := defaultOptions()
	o.Endpoint = deploy.DynamoDBEndpoint(m.Instance())
	o.AccessKeyEnv, o.SecretKeyEnv = "HR_TEST_KEY", "HR_TEST_SECRET"
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tg, err := Open(*o, registry.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if got, want := tg.(target.Addresser).Address(), m.Instance().Addr(); got != want {
		t.Fatalf("Address = %s, want %s", got, want)
	}
	o.SecretKeyEnv = "HR_TEST_UNSET"
	_, err = Open(*o, registry.Env{})
	if err == nil || err.Error() != "secret_key_env: the environment variable HR_TEST_UNSET is not set; export it before running" {
		t.Fatalf("Open with an unset variable = %v", err)
	}
}

func TestValidate(t *testing.T) {
	yes := true
	for _, c := range []struct {
		edit func(*Options)
		want string // "" = valid
	}{
		{func(o *Options) {}, ""},
		{func(o *Options) { o.Managed = &deploy.Managed{} }, ""},
		{func(o *Options) { o.ReadCapacity, o.WriteCapacity = 100, 50 }, ""},
		{func(o *Options) { o.Managed, o.Endpoint = &deploy.Managed{}, "http://x:1" }, "endpoint: a managed DynamoDB Local has its own endpoint"},
		{func(o *Options) { o.Endpoint = "127.0.0.1:8000" }, "endpoint: \"127.0.0.1:8000\" is not an http(s) URL"},
		{func(o *Options) { o.Table = "t" }, "table: \"t\" is not a DynamoDB table name"},
		{func(o *Options) { o.WriteCapacity = 5 }, "read_capacity: a provisioned table needs both"},
		{func(o *Options) { o.ReadCapacity, o.WriteCapacity = -1, 1 }, "read_capacity: -1 is outside 0..40000"},
		{func(o *Options) { o.Burst.Duration = 0 }, "burst: 0s is under 1s"},
		{func(o *Options) { o.EmulateCapacity = &yes }, "emulate_capacity: an on-demand table has no capacity to emulate"},
		{func(o *Options) { o.AccessKeyEnv = "KEY" }, "access_key_env: give both"},
		{func(o *Options) { o.AccessKeyEnv, o.SecretKeyEnv = "A-B", "C" }, "access_key_env: \"A-B\" is not an environment variable name"},
		{func(o *Options) { o.Managed, o.Profile = &deploy.Managed{}, "dev" }, "managed: a managed DynamoDB Local takes no credentials"},
		{func(o *Options) { o.Managed = &deploy.Managed{Settings: map[string]string{"heap": "lots"}} }, "managed.settings.heap: \"lots\" is not a JVM heap size"},
	} {
		o := defaultOptions()
		c.edit(o)
		err := validate(o)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestEmulationDefault(t *testing.T) {
	o := defaultOptions()
	if o.emulate() {
		t.Error("AWS's own endpoint is emulated by default; it enforces capacity itself")
	}
	o.Endpoint = "http://127.0.0.1:8000"
	if !o.emulate() {
		t.Error("an endpoint (DynamoDB Local) is not emulated by default")
	}
}

func TestDecodeOptions(t *testing.T) {
	var n yaml.Node
	src := "managed: {settings: {in_memory: \"true\"}}\nread_capacity: 100\nwrite_capacity: 50\nburst: 10s\nconsistent_reads: true\n"
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	o := defaultOptions()
	if errs := spec.DecodeNode("spec.yaml", &n, "target", o); errs != nil {
		t.Fatal(errs)
	}
	if o.Managed == nil || o.ReadCapacity != 100 || o.WriteCapacity != 50 || o.Burst.Duration != 10*time.Second || !o.ConsistentReads || o.Table != "usertable" || o.Region != "us-east-1" {
		t.Fatalf("decoded %+v", o)
	}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	var bad yaml.Node
	_ = yaml.Unmarshal([]byte("secret_key: abc\n"), &bad)
	if errs := spec.DecodeNode("spec.yaml", &bad, "target", defaultOptions()); errs == nil {
		t.Fatal("a literal secret key was accepted")
	}
}

func TestRegistered(t *testing.T) {
	f, ok := registry.Lookup("dynamodb")
	if !ok || f.InProcess || f.ClusterModes != nil {
		t.Fatalf("dynamodb factory %+v registered %v", f, ok)
	}
	if _, ok := f.NewOptions().(*Options); !ok {
		t.Fatal("NewOptions is not *Options")
	}
}
