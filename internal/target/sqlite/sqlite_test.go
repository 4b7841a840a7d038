package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
	"github.com/headroom-dev/headroom/internal/workload"
)

// open returns a prepared and populated target on a real file.
func open(t *testing.T, cfg workload.Config) (*Target, *workload.Generator) {
	t.Helper()
	opts := *defaultOptions()
	tgt, err := Open(opts, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	g := ycsbtest.Populate(t, tgt, cfg, int(cfg.RecordCount))
	return tgt, g
}

func count(t *testing.T, tgt *Target) int {
	var n int
	if err := tgt.db.QueryRow("SELECT count(*) FROM usertable").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPopulateAndEveryOperation(t *testing.T) {
	cfg, _ := workload.Preset("a")
	cfg.RecordCount = 200
	tgt, g := open(t, cfg)
	if n := count(t, tgt); n != 200 {
		t.Fatalf("populated %d rows, want 200", n)
	}
	if filepath.Base(tgt.Path()) != "target.db" {
		t.Fatalf("path %s", tgt.Path())
	}
	ctx := context.Background()
	c, _ := tgt.NewClient(ctx)
	// Every operation type succeeds against an existing record.
	mixes := map[string][workload.NumOpTypes]float64{
		"read": {workload.Read: 1}, "update": {workload.Update: 1}, "scan": {workload.Scan: 1},
		"rmw": {workload.ReadModifyWrite: 1}, "insert": {workload.Insert: 1},
	}
	for name, mix := range mixes {
		cfg.Mix = mix
		for _, all := range []bool{true, false} {
			if name == "insert" && !all {
				continue // a second generator would insert the same new keys again
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
	// An update writes what a read then returns.
	op := g.NewOp()
	g.Populate(5, op)
	op.Type, op.Field = workload.Update, 3
	copy(op.Values[3], "0123456789")
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	var got []byte
	if err := tgt.db.QueryRow("SELECT field3 FROM usertable WHERE ycsb_key = ?", op.Key).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if string(got[:10]) != "0123456789" {
		t.Fatalf("field3 = %q", got[:10])
	}
}

func TestErrorKinds(t *testing.T) {
	cfg, _ := workload.Preset("c")
	cfg.RecordCount = 10
	tgt, g := open(t, cfg)
	ctx := context.Background()
	c, _ := tgt.NewClient(ctx)
	op := g.NewOp()
	g.Populate(3, op)
	// Inserting an existing key violates the primary key.
	var ke target.Kinder
	if err := c.Do(ctx, op); !errors.As(err, &ke) || ke.Kind() != "constraint" {
		t.Fatalf("duplicate insert: %v", err)
	}
	// Reading and updating a key that does not exist.
	op.Key = []byte("user-missing")
	for _, typ := range []workload.OpType{workload.Read, workload.Update, workload.ReadModifyWrite} {
		op.Type, op.Field = typ, -1
		if err := c.Do(ctx, op); !errors.Is(err, target.ErrNotFound) {
			t.Fatalf("%v of a missing key: %v", typ, err)
		}
	}
}

func TestPrepareFreshDropsData(t *testing.T) {
	cfg, _ := workload.Preset("a")
	cfg.RecordCount = 50
	tgt, _ := open(t, cfg)
	if err := tgt.Prepare(context.Background(), cfg, false); err != nil || count(t, tgt) != 50 {
		t.Fatalf("prepare without fresh must keep rows: %v", err)
	}
	if err := tgt.Prepare(context.Background(), cfg, true); err != nil || count(t, tgt) != 0 {
		t.Fatalf("prepare fresh must empty the table: %v", err)
	}
}

func TestValidateOptions(t *testing.T) {
	cases := map[string]func(*Options){
		"journal_mode": func(o *Options) { o.JournalMode = "fast" },
		"synchronous":  func(o *Options) { o.Synchronous = "sometimes" },
		"connections":  func(o *Options) { o.Connections = 0 },
		"table":        func(o *Options) { o.Table = "users; DROP" },
		"path":         func(o *Options) { o.Path = "" },
		"path ":        func(o *Options) { o.Path = "inj.db?_pragma=user_version(4242)&x=" },
	}
	for field, mutate := range cases {
		o := defaultOptions()
		mutate(o)
		err := validate(o)
		if name := strings.TrimSpace(field); err == nil || !strings.HasPrefix(err.Error(), name+":") {
			t.Errorf("%s: got %v", field, err)
		}
	}
	if err := validate(defaultOptions()); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

func TestOpenUnwritablePath(t *testing.T) {
	opts := *defaultOptions()
	opts.Path = "/proc/headroom/target.db"
	if _, err := Open(opts, t.TempDir()); err == nil {
		t.Fatal("expected an error for an unwritable path")
	}
}

// A database file that cannot be opened is reported with its path and
// reason through the registry, as no target at all: a nil *Target in the
// interface made the campaign's cleanup close it and panic (issue 36).
func TestRegistryOpenFailureIsNoTarget(t *testing.T) {
	f, ok := registry.Lookup("sqlite")
	if !ok {
		t.Fatal("sqlite is not registered")
	}
	opts := defaultOptions()
	opts.Path = "/nonexistent/dir/x.db"
	tg, err := f.Open(opts, registry.Env{Dir: t.TempDir()})
	if err == nil || tg != nil || !strings.Contains(err.Error(), "/nonexistent/dir/x.db") {
		t.Fatalf("open of a missing directory: target %v (nil: %v), error %v", tg, tg == nil, err)
	}
}
