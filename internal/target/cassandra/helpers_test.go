package cassandra

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

// One managed single-node cluster serves the package's single-node tests:
// a node takes 10-20 s to start. It starts on first use and is removed
// after the last test.
var single struct {
	once sync.Once
	m    *Managed
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if single.m != nil {
		if err := single.m.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "removing the shared Cassandra node:", err)
			code = 1
		}
	}
	if single.dir != "" {
		os.RemoveAll(single.dir)
	}
	os.Exit(code)
}

// needCassandra skips the test when java or the Cassandra jars are
// missing, unless the environment requires servers.
func needCassandra(t testing.TB) {
	t.Helper()
	_, errJava := deploy.Java()
	_, errJars := deploy.JarDir("cassandra")
	if err := errors.Join(errJava, errJars); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatalf("Cassandra cannot run (HEADROOM_REQUIRE_SERVERS=1): %v", err)
		}
		t.Skipf("Cassandra cannot run: %v", err)
	}
}

// testDir is a results directory the unprivileged server user can enter.
func testDir(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	openUp(t, base)
	return base
}

func openUp(t testing.TB, base string) {
	for d := base; d != os.TempDir() && d != "/" && d != filepath.Dir(d); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// sharedNode is the package's single managed node.
func sharedNode(t testing.TB) *Managed {
	t.Helper()
	needCassandra(t)
	single.once.Do(func() {
		dir, err := os.MkdirTemp("", "headroom-cassandra-test-")
		if err != nil {
			single.err = err
			return
		}
		single.dir = dir
		openUp(t, dir)
		o := defaultOptions()
		o.Managed = &deploy.Managed{}
		if single.err = validate(o); single.err != nil {
			return
		}
		start := time.Now()
		tg, err := Open(*o, registry.Env{Dir: dir})
		if err != nil {
			single.err = err
			return
		}
		single.m = tg.(*Managed)
		t.Logf("the shared Cassandra node started in %.1f s", time.Since(start).Seconds())
	})
	if single.err != nil {
		t.Fatal(single.err)
	}
	return single.m
}

// openManagedCluster starts a managed cluster of nodes with the options
// edit sets, removed when the test ends.
func openManagedCluster(t *testing.T, nodes int, edit func(*Options)) *Managed {
	t.Helper()
	needCassandra(t)
	o := defaultOptions()
	o.Managed = &deploy.Managed{Cluster: &deploy.Cluster{Nodes: nodes}}
	if edit != nil {
		edit(o)
	}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tg, err := Open(*o, registry.Env{Dir: testDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("%d-node cluster started in %.1f s", nodes, time.Since(start).Seconds())
	return tg.(*Managed)
}

// connectTo opens a second target on a managed cluster as an existing
// one (hosts, user, password_env), with the options edit sets.
func connectTo(t *testing.T, m *Managed, edit func(*Options)) *Target {
	t.Helper()
	t.Setenv("HEADROOM_TEST_CASSANDRA_PASSWORD", m.cluster.Password())
	o := defaultOptions()
	o.Hosts = m.cluster.ContactPoints()
	o.User, o.PasswordEnv = m.cluster.User(), "HEADROOM_TEST_CASSANDRA_PASSWORD"
	if edit != nil {
		edit(o)
	}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tg, err := Open(*o, registry.Env{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.(*Target)
}

// ycsb is YCSB workload preset with records of 4 fields of 20 bytes.
func ycsb(t testing.TB, preset string, records int64) workload.Config {
	t.Helper()
	w, err := workload.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	w.RecordCount, w.FieldCount, w.FieldLength = records, 4, 20
	w.RequestDistribution = workload.DistUniform
	w.MaxScanLength = 10
	return w
}

// populate prepares tg afresh for w and loads w's records through one
// client's LoadBatch in batches of 500 (as the campaign does); it returns
// the generator and the rate in records per second.
func populate(t testing.TB, tg target.Target, w workload.Config) (*workload.Generator, float64) {
	t.Helper()
	ctx := context.Background()
	if err := tg.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	g, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	batch := make([]*workload.Op, 500)
	for i := range batch {
		batch[i] = g.NewOp()
	}
	start := time.Now()
	for i := int64(0); i < w.RecordCount; i += int64(len(batch)) {
		k := int(min(int64(len(batch)), w.RecordCount-i))
		for j := range k {
			g.Populate(i+int64(j), batch[j])
		}
		if err := c.(target.Loader).LoadBatch(ctx, batch[:k]); err != nil {
			t.Fatal(err)
		}
	}
	return g, float64(w.RecordCount) / time.Since(start).Seconds()
}

// runLoad drives tg with the engine's closed loop for d and returns the
// result and the error counts by kind.
func runLoad(t testing.TB, tg target.Target, g *workload.Generator, w workload.Config, clients int, d time.Duration) (load.Result, map[string]int64) {
	t.Helper()
	var ops []workload.OpType
	for op := workload.OpType(0); op < workload.NumOpTypes; op++ {
		if w.Mix[op] > 0 {
			ops = append(ops, op)
		}
	}
	cfg := load.Config{Model: "closed", Clients: clients, Timeout: 5 * time.Second, Measure: d,
		Interval: time.Second, Seed: 1, Ops: ops}
	kinds := map[string]int64{}
	res, err := load.Run(context.Background(), cfg, tg, g, func(tk load.Tick) error {
		for _, st := range tk.Stats {
			for k, n := range st.ErrorKinds {
				kinds[k] += n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, kinds
}

// kindOfErr is the error kind the engine would count for err.
func kindOfErr(err error) string {
	var k target.Kinder
	if errors.As(err, &k) {
		return k.Kind()
	}
	if errors.Is(err, target.ErrNotFound) {
		return target.KindNotFound
	}
	if err != nil {
		return "error"
	}
	return ""
}
