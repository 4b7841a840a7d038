package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL instance layout: initdb creates the cluster in Dir/data with a
// superuser (PostgresAdmin) whose password is the instance's generated one;
// Ready creates the workload role and database (both named "headroom", the
// role with the same password and CREATEDB so that it can snapshot and
// restore its own database) and pg_stat_statements in that database.
const (
	PostgresAdmin    = "postgres"
	postgresWorkload = "headroom"
	postgresConfFile = "headroom.conf" // in the data directory, included from postgresql.conf
	maxSocketPath    = 107             // sizeof(sun_path) - 1 on Linux
)

// Postgres is the recipe of a private PostgreSQL cluster from the Debian
// packages (initdb and postgres from /usr/lib/postgresql/<version>/bin).
func Postgres() Recipe { return postgresRecipe{} }

type postgresRecipe struct{}

func (postgresRecipe) Kind() string { return "postgres" }
func (postgresRecipe) User() string { return "postgres" }

func (postgresRecipe) Binaries() []Binary {
	dirs := []string{"/usr/lib/postgresql/*/bin"}
	return []Binary{
		{Name: "initdb", Dirs: dirs, Package: "postgresql"},
		{Name: "postgres", Dirs: dirs, Package: "postgresql"},
	}
}

// StopSignal is SIGINT, PostgreSQL's fast shutdown: SIGTERM is its smart
// shutdown, which waits for every client, including idle pooled
// connections, to disconnect.
func (postgresRecipe) StopSignal() syscall.Signal { return syscall.SIGINT }

// ShutdownDiscarding asks for PostgreSQL's immediate shutdown (SIGQUIT), for
// an instance whose data is being removed: the fast shutdown's checkpoint
// writes every dirty buffer first, which on a throttled lab volume (300
// IOPS) can outlast the caller's deadline. Stop then waits for the exit.
func (postgresRecipe) ShutdownDiscarding(_ context.Context, inst *Instance) {
	if pid := inst.PID(); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGQUIT)
	}
}

func (postgresRecipe) Init(ctx context.Context, inst *Instance) error {
	if err := CheckPostgresSettings(inst.Settings); err != nil {
		return err
	}
	inst.User, inst.Database = postgresWorkload, postgresWorkload
	// initdb reads the superuser's password from a file, which must not
	// outlive it.
	pwfile := filepath.Join(inst.Dir, "initdb.pw")
	if err := os.WriteFile(pwfile, []byte(inst.Password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	uid, gid := inst.Owner()
	if err := os.Chown(pwfile, uid, gid); err != nil {
		return err
	}
	_, err := inst.RunAs(ctx, inst.Bin("initdb"), "-D", inst.DataDir(), "--username="+PostgresAdmin,
		"--pwfile="+pwfile, "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync")
	if err != nil {
		return err
	}
	conf := postgresConf(inst)
	if err := os.WriteFile(filepath.Join(inst.DataDir(), postgresConfFile), []byte(conf), 0o600); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(inst.DataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\n# Added by Headroom: its settings and the spec's managed.settings.\ninclude '%s'\n", postgresConfFile)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || inst.ClientAddress() == "127.0.0.1" {
		return err
	}
	// On a lab host, Headroom connects from the lab's gateway address,
	// which initdb's pg_hba.conf (loopback only) does not let in.
	hba, err := os.OpenFile(filepath.Join(inst.DataDir(), "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(hba, "\n# Added by Headroom: the lab's gateway, where the workload connects from.\nhost all all %s/32 scram-sha-256\n", inst.ClientAddress())
	if cerr := hba.Close(); err == nil {
		err = cerr
	}
	return err
}

// postgresConf is the configuration Headroom adds to initdb's: where to
// listen, pg_stat_statements for server-side timing, then the spec's
// settings in name order (later lines win, so these override initdb's).
func postgresConf(inst *Instance) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen_addresses = '%s'\n", inst.Host)
	fmt.Fprintf(&b, "port = %d\n", inst.Port)
	// A socket path longer than sun_path makes postgres refuse to start;
	// clients of a managed instance use TCP anyway.
	sock := ""
	if len(filepath.Join(inst.Dir, ".s.PGSQL."+strconv.Itoa(inst.Port))) <= maxSocketPath {
		sock = inst.Dir
	}
	fmt.Fprintf(&b, "unix_socket_directories = %s\n", quoteConf(sock))
	b.WriteString("logging_collector = off\nlog_destination = 'stderr'\n")
	b.WriteString("pg_stat_statements.track = top\n")
	preload := "pg_stat_statements"
	names := make([]string, 0, len(inst.Settings))
	for k := range inst.Settings {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := inst.Settings[k]
		if strings.ToLower(k) == "shared_preload_libraries" {
			preload = withLibrary(v, "pg_stat_statements")
			continue
		}
		fmt.Fprintf(&b, "%s = %s\n", strings.ToLower(k), quoteConf(v))
	}
	fmt.Fprintf(&b, "shared_preload_libraries = %s\n", quoteConf(preload))
	return b.String()
}

// withLibrary adds lib to a comma-separated library list unless present.
func withLibrary(list, lib string) string {
	for _, l := range strings.Split(list, ",") {
		if strings.TrimSpace(strings.Trim(strings.TrimSpace(l), `"`)) == lib {
			return list
		}
	}
	if strings.TrimSpace(list) == "" {
		return lib
	}
	return list + "," + lib
}

// quoteConf quotes a value for postgresql.conf: single quotes, with quotes
// doubled and backslashes escaped (the file's parser reads backslash
// escapes inside quoted values). Every setting accepts a quoted value.
func quoteConf(v string) string {
	v = strings.ReplaceAll(v, `\`, `\\`)
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// postgresReserved are settings Headroom sets itself for a managed cluster.
var postgresReserved = map[string]string{
	"port":                    "use managed.port",
	"listen_addresses":        "a managed instance listens on 127.0.0.1 (or its lab host's address) only",
	"unix_socket_directories": "Headroom puts the socket in the instance directory",
	"data_directory":          "the data directory is inside the results directory",
	"config_file":             "Headroom writes the configuration",
	"hba_file":                "Headroom writes the configuration",
	"ident_file":              "Headroom writes the configuration",
	"include":                 "Headroom writes the configuration",
	"include_if_exists":       "Headroom writes the configuration",
	"include_dir":             "Headroom writes the configuration",
}

// CheckPostgresSettings checks the names and values of managed.settings
// for a PostgreSQL instance: names must be setting names (letters, digits,
// _ and one dot for extension settings such as pg_stat_statements.max) and
// values single lines. Whether PostgreSQL accepts a value is only known
// when it starts; a rejected one makes Start fail with the log's reason.
func CheckPostgresSettings(settings map[string]string) error {
	return settingRules{
		isName:   isSettingName,
		notName:  "a PostgreSQL setting name; use names such as shared_buffers or pg_stat_statements.max (letters, digits, _ and one dot)",
		reserved: postgresReserved,
		key:      strings.ToLower,
	}.check(settings)
}

func isSettingName(k string) bool {
	if k == "" || len(k) > 63 || strings.Count(k, ".") > 1 {
		return false
	}
	for _, part := range strings.Split(k, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}

func truncateName(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func (postgresRecipe) Command(inst *Instance) (string, []string) {
	return inst.Bin("postgres"), []string{"-D", inst.DataDir()}
}

// Ready connects as the superuser and makes sure the workload role, its
// database and pg_stat_statements exist. Every step is idempotent, so it
// also serves after a restart.
func (postgresRecipe) Ready(ctx context.Context, inst *Instance) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	admin, err := postgresConnect(cctx, inst, PostgresAdmin, "postgres")
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	var roleExists, dbExists bool
	err = admin.QueryRow(cctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1),
		EXISTS (SELECT 1 FROM pg_database WHERE datname = $2)`, inst.User, inst.Database).Scan(&roleExists, &dbExists)
	if err != nil {
		return err
	}
	if !roleExists {
		// The statement carries the password: keep it out of the server
		// log whatever logging the spec's settings turned on.
		for _, q := range []string{"SET log_statement = 'none'", "SET log_min_duration_statement = -1", "SET log_min_error_statement = 'panic'",
			// pg_stat_statements would otherwise keep the statement's text.
			"SET pg_stat_statements.track_utility = off",
			fmt.Sprintf("CREATE ROLE %s LOGIN CREATEDB PASSWORD '%s'", pgx.Identifier{inst.User}.Sanitize(), strings.ReplaceAll(inst.Password, "'", "''"))} {
			if _, err := admin.Exec(cctx, q); err != nil {
				return fmt.Errorf("creating the workload role %s: %w", inst.User, err)
			}
		}
	}
	if !dbExists {
		q := fmt.Sprintf("CREATE DATABASE %s OWNER %s", pgx.Identifier{inst.Database}.Sanitize(), pgx.Identifier{inst.User}.Sanitize())
		if _, err := admin.Exec(cctx, q); err != nil {
			return fmt.Errorf("creating the workload database %s: %w", inst.Database, err)
		}
	}
	wl, err := postgresConnect(cctx, inst, PostgresAdmin, inst.Database)
	if err != nil {
		return err
	}
	defer wl.Close(context.Background())
	if _, err := wl.Exec(cctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		return fmt.Errorf("creating pg_stat_statements in %s: %w", inst.Database, err)
	}
	return nil
}

// postgresConnect opens one connection to a managed instance over TCP.
func postgresConnect(ctx context.Context, inst *Instance, user, database string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d sslmode=disable connect_timeout=5", inst.Host, inst.Port))
	if err != nil {
		return nil, err
	}
	cfg.User, cfg.Database, cfg.Password = user, database, inst.Password
	cfg.RuntimeParams["application_name"] = "headroom-deploy"
	return pgx.ConnectConfig(ctx, cfg)
}

// PostgresDSN is the connection string of a managed instance's workload
// user and database. It holds the password: never log or store it.
func PostgresDSN(inst *Instance) string {
	return fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable",
		inst.Host, inst.Port, inst.User, inst.Password, inst.Database)
}
