package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/headroom-dev/headroom/internal/deploy"
)

// The tests push into a real PostgreSQL: one managed instance for the
// package (internal/deploy), a fresh database per test.
var shared struct {
	once sync.Once
	dir  string
	inst *deploy.Instance
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.inst != nil {
		shared.inst.Remove(context.Background())
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// server starts the package's PostgreSQL on first use; it skips the test
// when PostgreSQL is not installed (fails under HEADROOM_REQUIRE_SERVERS=1).
func server(t *testing.T) *deploy.Instance {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "headroom-pgstore"); shared.err != nil {
			return
		}
		if shared.err = os.Chmod(shared.dir, 0o755); shared.err != nil {
			return
		}
		shared.inst, shared.err = deploy.Start(context.Background(), deploy.Postgres(), filepath.Join(shared.dir, "pg"), deploy.Managed{})
	})
	if errors.Is(shared.err, deploy.ErrMissingBinary) && os.Getenv("HEADROOM_REQUIRE_SERVERS") != "1" {
		t.Skip("PostgreSQL is not installed (apt-get install postgresql): ", shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.inst
}

// freshDB makes an empty database for the test, sets PGPASSWORD to the
// instance's password (the way a user passes it) and returns its URL,
// which holds no password.
func freshDB(t *testing.T) string {
	t.Helper()
	inst := server(t)
	t.Setenv("PGPASSWORD", inst.Password)
	name := strings.ToLower(strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	ctx := context.Background()
	c, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", inst.Host, inst.Port, inst.User, inst.Database))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(name)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE DATABASE "+ident(name)); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", inst.User, inst.Addr(), name)
}

// copyStore copies a committed store (internal/results/testdata/v1) into
// the test's directory, where it may be changed.
func copyStore(t *testing.T, name string) string {
	t.Helper()
	src, err := os.Open(filepath.Join("..", "results", "testdata", "v1", name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p := filepath.Join(t.TempDir(), "results.db")
	dst, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func connect(t *testing.T, url string) *DB {
	t.Helper()
	db, err := Connect(context.Background(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// tableSums is every table's row count and fingerprint in a store file.
func tableSums(t *testing.T, path string) map[string]string {
	t.Helper()
	lite, err := openSQLite(path, "ro")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	l, err := readLocal(lite)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, tb := range l.tables {
		out[name] = fmt.Sprintf("%d rows %s", tb.rows, tb.sum)
	}
	for _, o := range l.objects {
		if o.Kind == "index" {
			out["index "+o.Name] = o.SQL
		}
	}
	return out
}

// rowVersions is the xmin of every row the database holds of a campaign
// in table: a row rewritten gets a new one.
func rowVersions(t *testing.T, url, table, id string) string {
	t.Helper()
	db := connect(t, url)
	rows, err := db.conn.Query(context.Background(), `SELECT string_agg(xmin::text, ',' ORDER BY _rowid) FROM `+ident(schemaName, table)+` WHERE campaign_id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[*string])
	if err != nil || v == nil {
		t.Fatalf("row versions of %s: %v", table, err)
	}
	return *v
}

// execLite runs statements on a store file.
func execLite(t *testing.T, path string, qs ...string) {
	t.Helper()
	lite, err := openSQLite(path, "rw")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	for _, q := range qs {
		if _, err := lite.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
