package deploy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// startPostgres starts a managed cluster in a temporary directory, or skips
// the test when PostgreSQL is not installed.
func startPostgres(t *testing.T, m Managed) (*Instance, error) {
	t.Helper()
	return startServer(t, Postgres(), "pg", "PostgreSQL is not installed (apt-get install -y postgresql postgresql-contrib)", m)
}

func connectWorkload(t *testing.T, inst *Instance) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, PostgresDSN(inst))
	if err != nil {
		t.Fatalf("connecting as the workload user: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func TestPostgresStartSettingsRestartRemove(t *testing.T) {
	inst, err := startPostgres(t, Managed{Settings: map[string]string{"shared_buffers": "24MB", "work_mem": "3MB", "application_name": "it's"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := connectWorkload(t, inst)
	var user, db, sb, wm, app string
	if err := c.QueryRow(ctx, "SELECT current_user, current_database(), current_setting('shared_buffers'), current_setting('work_mem'), current_setting('application_name')").Scan(&user, &db, &sb, &wm, &app); err != nil {
		t.Fatal(err)
	}
	if user != "headroom" || db != "headroom" || sb != "24MB" || wm != "3MB" {
		t.Fatalf("user %s db %s shared_buffers %s work_mem %s", user, db, sb, wm)
	}
	// pg_stat_statements is preloaded and created in the workload database.
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_statements").Scan(&n); err != nil || n == 0 {
		t.Fatalf("pg_stat_statements: %d rows, %v", n, err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)

	pid := inst.PID()
	if err := inst.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if inst.PID() == pid || !inst.Running() {
		t.Fatalf("restart: pid %d -> %d, running %v", pid, inst.PID(), inst.Running())
	}
	c = connectWorkload(t, inst)
	var v int
	if err := c.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Fatalf("data after restart: %d, %v", v, err)
	}
	c.Close(ctx)

	if err := inst.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(inst.Dir)
	if len(entries) != 1 || entries[0].Name() != "server.log" {
		t.Fatalf("after Remove the instance directory holds %v, want only server.log", entries)
	}
	logText, _ := os.ReadFile(inst.LogPath())
	if !strings.Contains(string(logText), "database system is ready") {
		t.Fatalf("server.log lacks the start messages: %q", logText)
	}
	if strings.Contains(string(logText), inst.Password) {
		t.Fatal("the password appears in server.log")
	}
	// The data is deleted, so Remove skips the shutdown checkpoint, which
	// on a throttled volume can take minutes.
	if !strings.Contains(string(logText), "received immediate shutdown request") {
		t.Fatalf("Remove did not use the immediate shutdown; the log ends with %q", tailFile(inst.LogPath(), 5))
	}
}

func TestPostgresStopIsFastWithIdleClients(t *testing.T) {
	inst, err := startPostgres(t, Managed{})
	if err != nil {
		t.Fatal(err)
	}
	// An idle client would hold off a smart shutdown (SIGTERM) forever;
	// Stop must use the fast one.
	connectWorkload(t, inst)
	done := make(chan error, 1)
	go func() { done <- inst.Stop(context.Background()) }()
	select {
	case err := <-done:
		if err != nil || inst.Running() {
			t.Fatalf("stop: %v, running %v", err, inst.Running())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stop waited for the idle client to disconnect")
	}
}

func TestPostgresSettingErrors(t *testing.T) {
	for name, settings := range map[string]map[string]string{
		`"shared buffers" is not a PostgreSQL setting name`: {"shared buffers": "1MB"},
		"managed.settings.port: Headroom sets this itself":  {"port": "5433"},
		"managed.settings.work_mem: the value must be one":  {"work_mem": "1MB\nfsync = off"},
	} {
		if err := CheckPostgresSettings(settings); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: got %v, want %q", settings, err, name)
		}
	}
	if err := CheckPostgresSettings(map[string]string{"pg_stat_statements.max": "1000", "Work_Mem": "1MB"}); err != nil {
		t.Fatal(err)
	}
	// A bad name fails before anything runs.
	_, err := startPostgres(t, Managed{Settings: map[string]string{"bad;name": "1"}})
	if err == nil || !strings.Contains(err.Error(), `"bad;name" is not a PostgreSQL setting name`) {
		t.Fatalf("bad name: %v", err)
	}
}

func TestPostgresRejectedSettingFailsStart(t *testing.T) {
	_, err := startPostgres(t, Managed{Settings: map[string]string{"shared_buffers": "plenty"}})
	if err == nil {
		t.Fatal("a server that rejects its configuration must fail Start")
	}
	// The log tail says which setting and why.
	if msg := err.Error(); !strings.Contains(msg, "server.log ends with") || !strings.Contains(msg, `"shared_buffers"`) {
		t.Fatalf("error does not quote the log: %v", err)
	}
}

func TestPostgresConfQuoting(t *testing.T) {
	inst := &Instance{Dir: "/tmp/x", Port: 5999, Settings: map[string]string{
		"search_path": `a'b\c`, "shared_preload_libraries": "auto_explain",
	}}
	conf := postgresConf(inst)
	for _, want := range []string{`search_path = 'a''b\\c'`, "shared_preload_libraries = 'auto_explain,pg_stat_statements'", "port = 5999", "unix_socket_directories = '/tmp/x'"} {
		if !strings.Contains(conf, want) {
			t.Errorf("conf lacks %q:\n%s", want, conf)
		}
	}
	inst.Dir = "/" + strings.Repeat("d", 120)
	if conf := postgresConf(inst); !strings.Contains(conf, "unix_socket_directories = ''") {
		t.Errorf("a socket path beyond 107 bytes must disable the socket:\n%s", conf)
	}
	if got := withLibrary("pg_stat_statements, auto_explain", "pg_stat_statements"); got != "pg_stat_statements, auto_explain" {
		t.Errorf("withLibrary duplicated: %s", got)
	}
}
