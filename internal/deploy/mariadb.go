package deploy

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDB instance layout: Dir/my.cnf is the server's only option file
// (mariadbd reads nothing from /etc), Dir/data the data directory, and the
// server logs to its stderr, which is Dir/server.log. The workload user
// "headroom"@'127.0.0.1' and database "headroom" are created while
// mariadb-install-db bootstraps the system tables, together with the root
// password (the instance's generated one), so the server never accepts
// connections with a passwordless root.
const (
	mariadbWorkload = "headroom"
	mariadbConfFile = "my.cnf"
)

// MariaDB is the recipe of a private MariaDB server from the Debian
// packages (mariadbd and mariadb-install-db from mariadb-server; the
// mariadb and mariadb-dump clients, which the mysql target uses for
// snapshots, come with it).
func MariaDB() Recipe { return mariadbRecipe{} }

type mariadbRecipe struct{}

func (mariadbRecipe) Kind() string { return "mariadb" }
func (mariadbRecipe) User() string { return "mysql" }

// ShutdownDiscarding kills the server, for an instance whose data is being
// removed: a clean shutdown flushes InnoDB's dirty pages first, which on a
// throttled lab volume can outlast the caller's deadline. The whole process
// group goes, in case a lab wrapper sits above mariadbd; Stop then reaps it.
func (mariadbRecipe) ShutdownDiscarding(_ context.Context, inst *Instance) {
	if pid := inst.PID(); pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

func (mariadbRecipe) Binaries() []Binary {
	return []Binary{
		{Name: "mariadbd", Dirs: []string{"/usr/sbin"}, Package: "mariadb-server"},
		{Name: "mariadb-install-db", Dirs: []string{"/usr/bin"}, Package: "mariadb-server"},
		{Name: "mariadb", Dirs: []string{"/usr/bin"}, Package: "mariadb-client"},
		{Name: "mariadb-dump", Dirs: []string{"/usr/bin"}, Package: "mariadb-client"},
	}
}

func (mariadbRecipe) Init(ctx context.Context, inst *Instance) error {
	if err := CheckMariaDBSettings(inst.Settings); err != nil {
		return err
	}
	inst.User, inst.Database = mariadbWorkload, mariadbWorkload
	conf := filepath.Join(inst.Dir, mariadbConfFile)
	if err := os.WriteFile(conf, []byte(mariadbConf(inst)), 0o644); err != nil {
		return err
	}
	// The bootstrap SQL holds the password; the file must not outlive
	// mariadb-install-db, and only the service user may read it.
	boot := filepath.Join(inst.Dir, "bootstrap.sql")
	if err := os.WriteFile(boot, []byte(mariadbBootstrap(inst)), 0o600); err != nil {
		return err
	}
	defer os.Remove(boot)
	uid, gid := inst.Owner()
	if err := os.Chown(boot, uid, gid); err != nil {
		return err
	}
	// --defaults-file comes first (mariadb-install-db and mariadbd insist),
	// and the bootstrap server runs with the spec's settings so that those
	// fixed at creation (innodb_page_size, lower_case_table_names) hold.
	args := []string{"--defaults-file=" + conf, "--auth-root-authentication-method=normal", "--skip-test-db", "--extra-file=" + boot}
	out, err := inst.RunAs(ctx, inst.Bin("mariadb-install-db"), args...)
	// MariaDB 10.11's own system-table script now and then fails to drop a
	// temporary table it just created ("Unknown table
	// 'mysql.tmp_proxies_priv'"), seen here about once in twenty starts on
	// a loaded machine; it is not about the settings, and a second
	// bootstrap on an empty data directory succeeds.
	for try := 0; try < 2 && err != nil && strings.Contains(string(out), "Unknown table 'mysql.tmp_"); try++ {
		if rerr := emptyDir(inst.DataDir()); rerr != nil {
			return rerr
		}
		out, err = inst.RunAs(ctx, inst.Bin("mariadb-install-db"), args...)
	}
	if err != nil {
		if msgs := errorLines(out, 4); msgs != "" {
			// Its last lines are boilerplate; the server's [ERROR] lines
			// say what went wrong (often a value in managed.settings).
			return fmt.Errorf("mariadb-install-db failed: %s; check managed.settings", msgs)
		}
	}
	return err
}

// errorLines returns the first n lines of out that report an error, joined
// into one line.
func errorLines(out []byte, n int) string {
	var found []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "[ERROR]") || strings.HasPrefix(l, "ERROR") {
			if _, rest, ok := strings.Cut(l, "[ERROR] "); ok {
				l = rest
			}
			found = append(found, strings.TrimSpace(l))
			if len(found) == n {
				break
			}
		}
	}
	return strings.Join(found, " | ")
}

// mariadbConf is the server's option file: where to listen and keep its
// files, performance_schema for server-side statement timing, then the
// spec's settings in name order.
func mariadbConf(inst *Instance) string {
	var b strings.Builder
	b.WriteString("# Written by Headroom for a managed instance: its settings, then the spec's managed.settings.\n[mysqld]\n")
	fmt.Fprintf(&b, "datadir=%s\n", inst.DataDir())
	fmt.Fprintf(&b, "port=%d\n", inst.Port)
	fmt.Fprintf(&b, "bind-address=%s\n", inst.Host)
	fmt.Fprintf(&b, "socket=%s\n", MariaDBSocket(inst))
	fmt.Fprintf(&b, "pid-file=%s\n", filepath.Join(inst.Dir, "mariadbd.pid"))
	// No log-error: the error log goes to stderr, which is server.log.
	b.WriteString("skip-name-resolve\n")
	b.WriteString("performance_schema=ON\n")
	b.WriteString("character-set-server=utf8mb4\ncollation-server=utf8mb4_general_ci\n")
	names := make([]string, 0, len(inst.Settings))
	for k := range inst.Settings {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s=%s\n", k, inst.Settings[k])
	}
	return b.String()
}

// mariadbBootstrap is run by the bootstrap server after the system tables
// exist. FLUSH PRIVILEGES loads the grant tables, without which account
// statements fail in bootstrap mode. The "normal" root accounts for
// 127.0.0.1, ::1 and the host name have no password; only root@localhost
// (the socket) stays, with the instance's password.
func mariadbBootstrap(inst *Instance) string {
	pw := sqlString(inst.Password)
	u := sqlString(inst.User)
	from := sqlString(inst.ClientAddress())
	return strings.Join([]string{
		"FLUSH PRIVILEGES",
		"DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1'",
		"EXECUTE IMMEDIATE CONCAT('DROP USER IF EXISTS ''root''@''', @@hostname, '''')",
		"ALTER USER 'root'@'localhost' IDENTIFIED BY " + pw,
		"CREATE DATABASE IF NOT EXISTS `" + inst.Database + "` CHARACTER SET utf8mb4",
		"CREATE USER " + u + "@" + from + " IDENTIFIED BY " + pw,
		"GRANT ALL PRIVILEGES ON `" + inst.Database + "`.* TO " + u + "@" + from,
		// performance_schema holds the server-side statement times.
		"GRANT SELECT ON performance_schema.* TO " + u + "@" + from,
		"",
	}, ";\n")
}

// sqlString quotes s as an SQL string literal (backslashes and quotes
// escaped, as MariaDB reads them by default).
func sqlString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// MariaDBSocket is the server's unix socket: in the instance directory,
// or under /tmp when that path is longer than a socket address can be.
func MariaDBSocket(inst *Instance) string {
	p := filepath.Join(inst.Dir, "mariadbd.sock")
	if len(p) <= maxSocketPath {
		return p
	}
	return filepath.Join(os.TempDir(), "headroom-mariadb-"+strconv.Itoa(inst.Port)+".sock")
}

// mariadbReserved are options Headroom sets itself for a managed server.
var mariadbReserved = map[string]string{
	"datadir":           "the data directory is inside the results directory",
	"basedir":           "Headroom uses the installed server",
	"port":              "use managed.port",
	"bind_address":      "a managed instance listens on 127.0.0.1 (or its lab host's address) only",
	"skip_networking":   "clients connect over TCP",
	"socket":            "Headroom puts the socket in the instance directory",
	"pid_file":          "Headroom keeps it in the instance directory",
	"log_error":         "the error log goes to server.log in the instance directory",
	"user":              "the server runs as the mysql user when Headroom runs as root",
	"skip_grant_tables": "the workload user needs its password checked",
}

// CheckMariaDBSettings checks the names and values of managed.settings for
// a MariaDB instance: names must be server option names (lower-case
// letters, digits, _ and -), values single lines without '#'. Whether the
// server accepts a value is only known when it starts; a rejected one
// makes Start fail with the log's reason.
func CheckMariaDBSettings(settings map[string]string) error {
	return settingRules{
		isName:   isMariaDBOption,
		notName:  "a MariaDB option name; use names such as innodb_buffer_pool_size (lower-case letters, digits, _ and -)",
		reserved: mariadbReserved,
		key:      func(k string) string { return strings.ReplaceAll(k, "-", "_") },
		forbid:   "#",
		notValue: " or '#'",
	}.check(settings)
}

func isMariaDBOption(k string) bool {
	if k == "" || len(k) > 64 || k[0] == '-' || k[0] == '_' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (mariadbRecipe) Command(inst *Instance) (string, []string) {
	return inst.Bin("mariadbd"), []string{"--defaults-file=" + filepath.Join(inst.Dir, mariadbConfFile)}
}

// Ready logs in as the workload user over TCP: the account and database
// exist from the bootstrap, so a successful ping means the server is ready
// for the workload.
func (mariadbRecipe) Ready(ctx context.Context, inst *Instance) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := mysql.NewConnector(MariaDBConfig(inst))
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return db.PingContext(cctx)
}

// MariaDBConfig is the driver configuration of a managed instance's
// workload user and database over TCP. It holds the password: never log or
// store it (FormatDSN included).
func MariaDBConfig(inst *Instance) *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = inst.User, inst.Password, "tcp", inst.Addr(), inst.Database
	c.Timeout = 5 * time.Second
	c.Logger = &mysql.NopLogger{}
	return c
}

// MariaDBDSN is MariaDBConfig as a go-sql-driver/mysql DSN. It holds the
// password: never log or store it.
func MariaDBDSN(inst *Instance) string { return MariaDBConfig(inst).FormatDSN() }
