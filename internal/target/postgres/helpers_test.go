package postgres

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Most tests share one cluster and connect to it as to an existing server;
// tests that stop, restart or snapshot the server run a managed target of
// their own.
var shared struct {
	once sync.Once
	dir  string
	inst *deploy.Instance
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.inst != nil {
		_ = shared.inst.Remove(context.Background())
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// skipWithoutServer skips (or fails, with HEADROOM_REQUIRE_SERVERS=1) when
// PostgreSQL is not installed.
func skipWithoutServer(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, deploy.ErrMissingBinary) {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal(err)
		}
		t.Skip("PostgreSQL is not installed (apt-get install -y postgresql postgresql-contrib): ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// reachableDir is a temporary directory the unprivileged server user can
// enter (t.TempDir and its parent are 0700).
func reachableDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{d, filepath.Dir(d)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func sharedServer(t testing.TB) *deploy.Instance {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "headroom-pg-test"); shared.err != nil {
			return
		}
		if shared.err = os.Chmod(shared.dir, 0o755); shared.err != nil {
			return
		}
		shared.inst, shared.err = deploy.Start(context.Background(), deploy.Postgres(), filepath.Join(shared.dir, "pg"), deploy.Managed{})
	})
	skipWithoutServer(t, shared.err)
	return shared.inst
}

const passwordVar = "HEADROOM_TEST_PG_PASSWORD"

// openShared opens a target on the shared cluster as an existing server,
// with the password passed through the environment.
func openShared(t testing.TB, mutate func(*Options)) *Target {
	t.Helper()
	inst := sharedServer(t)
	t.Setenv(passwordVar, inst.Password)
	o := defaultOptions()
	o.Host, o.Port, o.User, o.Database, o.PasswordEnv, o.SSLMode = inst.Host, inst.Port, inst.User, inst.Database, passwordVar, "disable"
	if mutate != nil {
		mutate(o)
	}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tg, err := Open(*o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.(*Target)
}

// openManaged opens a target with its own managed cluster.
func openManaged(t *testing.T) *ManagedTarget {
	t.Helper()
	o := defaultOptions()
	o.Managed = &deploy.Managed{Settings: map[string]string{"shared_buffers": "16MB"}}
	if err := validate(o); err != nil {
		t.Fatal(err)
	}
	tg, err := Open(*o, reachableDir(t))
	skipWithoutServer(t, err)
	t.Cleanup(func() { tg.Close() })
	return tg.(*ManagedTarget)
}

// ycsb returns a small YCSB configuration with the given record count.
func ycsb(records int64) workload.Config {
	cfg, _ := workload.Preset("a")
	cfg.RecordCount = records
	cfg.FieldCount = 4
	cfg.FieldLength = 20
	return cfg
}

// populate prepares tg freshly and loads cfg's records with LoadBatch.
func populate(t *testing.T, tg *Target, cfg workload.Config) *workload.Generator {
	return ycsbtest.Populate(t, tg, cfg, 64)
}

func count(t *testing.T, tg *Target, table string) int64 {
	t.Helper()
	var n int64
	if err := tg.pool.Load().QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func kindOf(err error) string {
	var k target.Kinder
	if errors.As(err, &k) {
		return k.Kind()
	}
	return ""
}

func dur(d time.Duration) spec.Duration { return spec.Duration{Duration: d} }
