package apptier

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/apptier"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

// serveMarker makes this test binary act as `headroom serve-app`: the
// target starts application servers by running its own binary again.
const serveMarker = "HEADROOM_APPTIER_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveMarker) == "1" {
		// os.Args: the binary, "serve-app", then the server's flags.
		os.Exit(apptier.Main(os.Args[2:], os.Stdout, os.Stderr))
	}
	serverCommand = func() (string, []string, []string, error) {
		exe, err := os.Executable()
		return exe, []string{"serve-app"}, []string{serveMarker + "=1"}, err
	}
	os.Exit(m.Run())
}

func openLocal(t *testing.T, o *Options) *Target {
	t.Helper()
	tgt, err := Open(context.Background(), *o, registry.Env{Dir: labtest.SearchableDir(t)})
	labtest.StartedOrSkip(t, err)
	t.Cleanup(func() {
		if err := tgt.Close(); err != nil {
			t.Error(err)
		}
	})
	return tgt
}

// Two application servers on this machine in front of PostgreSQL: every
// operation type works through them, requests alternate between them, and
// missing records are ErrNotFound.
func TestTwoLocalServers(t *testing.T) {
	o := defaultOptions()
	o.App.Count = 2
	o.App.Pool = 2
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tgt := openLocal(t, o)
	apps := tgt.servers()
	if len(apps) != 2 || apps[0].addr == apps[1].addr {
		t.Fatalf("servers %+v", apps)
	}
	w, _ := workload.Preset("a")
	w.RecordCount, w.FieldCount, w.FieldLength = 100, 3, 8
	ctx := context.Background()
	if err := tgt.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var batch []*workload.Op
	for i := range int64(100) {
		op := gen.NewOp()
		gen.Populate(i, op)
		batch = append(batch, op)
	}
	if err := c.(target.Loader).LoadBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	answered := func() (n uint64) {
		for _, a := range tgt.servers() {
			n += a.answered.Load()
		}
		return n
	}
	before := answered()
	ops := 0
	for _, typ := range []workload.OpType{workload.Read, workload.Update, workload.Scan, workload.ReadModifyWrite} {
		op := gen.NewOp()
		gen.Populate(7, op)
		op.Type, op.ScanLength = typ, 5
		for _, f := range []int{-1, 1} {
			op.Field = f
			if err := c.Do(ctx, op); err != nil {
				t.Fatalf("%v field %d: %v", typ, f, err)
			}
			ops++
		}
	}
	op := gen.NewOp()
	gen.Populate(1000, op)
	op.Type = workload.Insert
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	err = c.Do(ctx, op)
	var ke *target.KindError
	if !errors.As(err, &ke) || ke.Kind() != target.KindConstraint {
		t.Fatalf("inserting a key twice: %v, want a constraint error", err)
	}
	gen.Populate(5000, op)
	op.Type = workload.Read
	if err := c.Do(ctx, op); !errors.Is(err, target.ErrNotFound) {
		t.Fatalf("reading a missing key: %v", err)
	}
	if n := answered() - before; n != uint64(ops+3) {
		t.Fatalf("%d requests counted, sent %d", n, ops+3)
	}
	if pids := tgt.ServerPIDs(); len(pids) != 3 {
		t.Fatalf("server PIDs %v: want the database and two application servers", pids)
	}
	// Both servers got requests: their logs exist and they are running;
	// stopping one is seen as a connection error on its turn.
	apps[1].stop()
	var sawConn bool
	for range 4 {
		gen.Populate(3, op)
		op.Type = workload.Read
		err := c.Do(ctx, op)
		if errors.As(err, &ke) && ke.Kind() == target.KindConnection {
			sawConn = true
		}
	}
	if !sawConn {
		t.Fatal("no connection error from the stopped server")
	}
	if err := tgt.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := c.Do(ctx, op); err != nil {
			t.Fatalf("after StartServer: %v", err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.DB.Engine = "oracle" }, `db.engine: "oracle" is not a valid value`},
		{func(o *Options) { o.App.Hosts = []string{"app1"}; o.App.Prefix = "app" }, "give either app.hosts or app.prefix"},
		{func(o *Options) { o.App.Hosts = []string{"app1", "app1"} }, `"app1" is listed twice`},
		{func(o *Options) { o.App.Prefix = "app"; o.DB.Host = "app2" }, `db.host: "app2" is also an application host`},
		{func(o *Options) { o.App.CPUWork.Duration = -1 }, "app.cpu_work"},
		{func(o *Options) { o.App.Pool = 0 }, "app.pool"},
		{func(o *Options) { o.App.Count = 2; o.App.Hosts = []string{"a"} }, "app.count: only for application servers on this machine"},
		{func(o *Options) { o.Table = "x y" }, `table: "x y"`},
		{func(o *Options) { o.DB.Settings = map[string]string{"port": "1"} }, "db.settings"},
	} {
		o := defaultOptions()
		c.edit(o)
		if err := validate(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if err := validate(defaultOptions()); err != nil {
		t.Fatal(err)
	}
}

func TestLabHostsNeedALab(t *testing.T) {
	o := defaultOptions()
	o.App.Prefix = "app"
	_, err := Open(context.Background(), *o, registry.Env{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "spec has no lab: section") {
		t.Fatalf("error %v", err)
	}
}
