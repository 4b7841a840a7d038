package deploy

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// startMariaDB starts a managed server in a temporary directory, or skips
// the test when MariaDB is not installed.
func startMariaDB(t *testing.T, m Managed) (*Instance, error) {
	t.Helper()
	return startServer(t, MariaDB(), "mariadb", "MariaDB is not installed (apt-get install -y mariadb-server)", m)
}

func openMariaDB(t *testing.T, cfg *mysql.Config) *sql.DB {
	t.Helper()
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMariaDBStartSettingsRestartRemove(t *testing.T) {
	inst, err := startMariaDB(t, Managed{Settings: map[string]string{
		"innodb_buffer_pool_size": "48M", "max-connections": "77"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if inst.User != "headroom" || inst.Database != "headroom" {
		t.Fatalf("workload user/database = %q/%q, want headroom/headroom", inst.User, inst.Database)
	}
	db := openMariaDB(t, MariaDBConfig(inst))
	var user, dbname string
	var bp, maxConn int64
	var ps int
	err = db.QueryRowContext(ctx, "SELECT CURRENT_USER(), DATABASE(), @@innodb_buffer_pool_size, @@max_connections, @@performance_schema").
		Scan(&user, &dbname, &bp, &maxConn, &ps)
	if err != nil {
		t.Fatal(err)
	}
	if user != "headroom@127.0.0.1" || dbname != "headroom" {
		t.Errorf("connected as %s to %s, want headroom@127.0.0.1 to headroom", user, dbname)
	}
	if bp != 48<<20 || maxConn != 77 || ps != 1 {
		t.Errorf("innodb_buffer_pool_size=%d max_connections=%d performance_schema=%d, want %d, 77, 1", bp, maxConn, ps, 48<<20)
	}
	// The workload user can read performance_schema's statement digests.
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM performance_schema.events_statements_summary_by_digest").Scan(&n); err != nil {
		t.Fatalf("reading performance_schema as the workload user: %v", err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE kept (v INT) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}

	// Root without a password must not get in over TCP, and the wrong
	// password must not either.
	for _, c := range []struct{ user, pw string }{{"root", ""}, {"root", "nope"}, {"headroom", "nope"}} {
		cfg := MariaDBConfig(inst)
		cfg.User, cfg.Passwd, cfg.DBName = c.user, c.pw, ""
		var me *mysql.MySQLError
		if err := openMariaDB(t, cfg).PingContext(ctx); !errors.As(err, &me) || me.Number != 1045 {
			t.Errorf("logging in as %s with password %q: %v, want access denied (1045)", c.user, c.pw, err)
		}
	}

	oldPID := inst.PID()
	if err := inst.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if inst.PID() == oldPID || !inst.Running() {
		t.Fatalf("after Restart: pid %d (was %d), running %v", inst.PID(), oldPID, inst.Running())
	}
	var v int
	if err := db.QueryRowContext(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Fatalf("after Restart, SELECT v = %d, %v; want 42", v, err)
	}

	if err := inst.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if inst.Running() {
		t.Fatal("still running after Remove")
	}
	entries, _ := os.ReadDir(inst.Dir)
	if len(entries) != 1 || entries[0].Name() != "server.log" {
		t.Fatalf("after Remove the instance directory holds %v, want only server.log", entries)
	}
	log, _ := os.ReadFile(inst.LogPath())
	if !strings.Contains(string(log), "ready for connections") {
		t.Errorf("server.log does not hold the server's messages: %q", lastLines(log, 3))
	}
	if strings.Contains(string(log), inst.Password) {
		t.Error("server.log contains the password")
	}
}

func TestMariaDBSettingsChecked(t *testing.T) {
	for _, c := range []struct {
		settings map[string]string
		want     string
	}{
		{map[string]string{"innodb_buffer_pool_size\n[client]": "1"}, `managed.settings: "innodb_buffer_pool_size\n[client]" is not a MariaDB option name`},
		{map[string]string{"Innodb_Buffer": "1"}, "is not a MariaDB option name"},
		{map[string]string{"bind-address": "0.0.0.0"}, "managed.settings.bind-address: Headroom sets this itself"},
		{map[string]string{"datadir": "/var/lib/mysql"}, "managed.settings.datadir: Headroom sets this itself"},
		{map[string]string{"innodb_log_file_size": "48M\nskip-grant-tables"}, "managed.settings.innodb_log_file_size: the value must be one line"},
	} {
		err := CheckMariaDBSettings(c.settings)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckMariaDBSettings(%q) = %v, want an error containing %q", c.settings, err, c.want)
		}
	}
	if err := CheckMariaDBSettings(map[string]string{"innodb_flush_log_at_trx_commit": "2", "max-connections": "500"}); err != nil {
		t.Errorf("valid settings rejected: %v", err)
	}
	// Start refuses bad names before creating anything.
	_, err := startMariaDB(t, Managed{Settings: map[string]string{"port;": "1"}})
	if err == nil || !strings.Contains(err.Error(), "is not a MariaDB option name") {
		t.Fatalf("Start with a bad setting name: %v", err)
	}
}

func TestMariaDBBadValueFailsWithLog(t *testing.T) {
	_, err := startMariaDB(t, Managed{Settings: map[string]string{"innodb_buffer_pool_size": "lots"}})
	if err == nil {
		t.Fatal("Start accepted innodb_buffer_pool_size=lots")
	}
	if !strings.Contains(err.Error(), "'lots'") || !strings.Contains(err.Error(), "innodb-buffer-pool-size") {
		t.Fatalf("the error does not quote the server's complaint about the setting: %v", err)
	}
	if testing.Verbose() {
		t.Log(err)
	}
}

func TestMariaDBSocketPathFitsSunPath(t *testing.T) {
	short := &Instance{Dir: "/tmp/x", Port: 3307}
	if got := MariaDBSocket(short); got != "/tmp/x/mariadbd.sock" {
		t.Errorf("short dir: socket %s, want /tmp/x/mariadbd.sock", got)
	}
	long := &Instance{Dir: "/tmp/" + strings.Repeat("d", 110), Port: 3307}
	got := MariaDBSocket(long)
	if len(got) > maxSocketPath || !strings.HasSuffix(got, "headroom-mariadb-3307.sock") {
		t.Errorf("long dir: socket %s (%d bytes), want a short path under the temp dir", got, len(got))
	}
}
