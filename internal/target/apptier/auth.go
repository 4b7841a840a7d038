package apptier

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/headroom-dev/headroom/internal/deploy"
)

// allowApps lets the application hosts' addresses log in to the database:
// a managed server on a lab host admits only Headroom's own address (the
// lab's gateway), and the application servers connect from theirs. With
// db.cluster every node admits them; a replica added later gets them in
// addReplica (dbtier.go).
func (t *Target) allowApps(ctx context.Context, apps []*appServer) error {
	var addrs []string
	for _, a := range apps {
		addrs = append(addrs, a.host())
	}
	return t.allow(ctx, addrs)
}

// allow lets the addresses not yet admitted log in to the database, on
// every node of a cluster. For PostgreSQL the reload is asynchronous: a
// new server's health check waits until it took effect on the primary,
// and sendReplicas tries a replica again until it took effect there.
func (t *Target) allow(ctx context.Context, addrs []string) error {
	if t.allowed == nil {
		t.allowed = map[string]bool{}
	}
	var add []string
	for _, a := range addrs {
		if !t.allowed[a] && !slices.Contains(add, a) {
			add = append(add, a)
		}
	}
	if len(add) == 0 {
		return nil
	}
	var err error
	if t.opts.DB.Engine == "mariadb" {
		err = allowMariaDB(ctx, t.db, add)
	} else {
		for _, n := range t.dbNodes() {
			if err = allowPostgres(n.Inst, add); err != nil {
				err = fmt.Errorf("%s: %w", n.Name, err)
				break
			}
		}
	}
	if err != nil {
		return err
	}
	for _, a := range add {
		t.allowed[a] = true
	}
	return nil
}

// allowPostgres adds a pg_hba.conf line per address the file does not
// have yet and has the server reload its configuration (SIGHUP to the
// postmaster); the application servers' health checks wait until the
// reload took effect. A replica's file is the primary's copy, with the
// lines the primary had when the replica was made.
func allowPostgres(inst *deploy.Instance, addrs []string) error {
	hba := filepath.Join(inst.DataDir(), "pg_hba.conf")
	have, err := os.ReadFile(hba)
	if err != nil {
		return err
	}
	lines := strings.Split(string(have), "\n")
	var b strings.Builder
	for _, a := range addrs {
		line := fmt.Sprintf("host all all %s/32 scram-sha-256", a)
		if !slices.Contains(lines, line) && !strings.Contains(b.String(), line+"\n") {
			b.WriteString(line + "\n")
		}
	}
	if b.Len() == 0 {
		return nil
	}
	f, err := os.OpenFile(hba, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n# Added by Headroom's apptier target: the application hosts.\n" + b.String())
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
