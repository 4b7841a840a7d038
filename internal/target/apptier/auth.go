package apptier

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/headroom-dev/headroom/internal/deploy"
)

// allowApps lets the application hosts' addresses log in to the database:
// a managed server on a lab host admits only Headroom's own address (the
// lab's gateway), and the application servers connect from theirs.
func (t *Target) allowApps(ctx context.Context) error {
	var addrs []string
	seen := map[string]bool{}
	for _, a := range t.apps {
		host, _, _ := net.SplitHostPort(a.addr)
		if !seen[host] {
			seen[host] = true
			addrs = append(addrs, host)
		}
	}
	if t.opts.DB.Engine == "mariadb" {
		return allowMariaDB(ctx, t.db, addrs)
	}
	return allowPostgres(t.db, addrs)
}

// allowPostgres adds a pg_hba.conf line per address and has the server
// reload its configuration (SIGHUP to the postmaster); the application
// servers' health checks wait until the reload took effect.
func allowPostgres(inst *deploy.Instance, addrs []string) error {
	f, err := os.OpenFile(filepath.Join(inst.DataDir(), "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\n# Added by Headroom's apptier target: the application hosts.\n")
	for _, a := range addrs {
		fmt.Fprintf(&b, "host all all %s/32 scram-sha-256\n", a)
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	pid := inst.PID()
	if pid == 0 {
		return fmt.Errorf("the PostgreSQL server is not running")
	}
	return syscall.Kill(pid, syscall.SIGHUP)
}

// allowMariaDB creates the workload user for each address with the same
// password and grants, as root over the server's Unix socket (root may
// only log in there).
func allowMariaDB(ctx context.Context, inst *deploy.Instance, addrs []string) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = "root", inst.Password
	cfg.Net, cfg.Addr = "unix", deploy.MariaDBSocket(inst)
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	for _, a := range addrs {
		who := quote(inst.User) + "@" + quote(a)
		for _, q := range []string{
			"CREATE USER IF NOT EXISTS " + who + " IDENTIFIED BY " + quote(inst.Password),
			"GRANT ALL PRIVILEGES ON `" + inst.Database + "`.* TO " + who,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				// The statement holds the password: name the user only.
				return fmt.Errorf("creating the database user %s: %w", who, err)
			}
		}
	}
	return nil
}

// quote is an SQL string literal as MariaDB reads it by default.
func quote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
