package mysql

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Snapshots (reset: restore; seed 001 §IV: "repopulate the database from a
// mysqldump snapshot" instead of rerunning the insert script) are a
// mariadb-dump of the workload database, loaded back with the mariadb
// client. Both run as Headroom's own user: they are ordinary clients. The
// password reaches them in an option file readable only by that user, never
// on their command line.

// tools finds the dump and client programs: the managed instance's, or
// MariaDB's or MySQL's on $PATH.
func (t *Target) tools() (dump, client string, err error) {
	if t.inst != nil {
		return t.inst.Bin("mariadb-dump"), t.inst.Bin("mariadb"), nil
	}
	find := func(names ...string) string {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		return ""
	}
	dump, client = find("mariadb-dump", "mysqldump"), find("mariadb", "mysql")
	if dump == "" || client == "" {
		return "", "", errors.New("mysql target: reset: restore needs mariadb-dump and the mariadb client (or mysqldump and mysql) on $PATH; install them with `apt-get install -y mariadb-client`, or use reset: repopulate")
	}
	return dump, client, nil
}

// snapshotPath is where the dump goes: in the managed instance's
// directory (removed with it), or in the results directory (removed by
// Close).
func (t *Target) snapshotPath() string {
	if t.inst != nil {
		return filepath.Join(t.inst.Dir, "snapshot.sql")
	}
	return filepath.Join(t.dir, "mysql-snapshot.sql")
}

// Snapshot implements target.Snapshotter: a consistent dump (one
// REPEATABLE READ transaction) of the workload database's tables.
func (t *Target) Snapshot(ctx context.Context) error {
	dump, _, err := t.tools()
	if err != nil {
		return err
	}
	path := t.snapshotPath()
	err = t.runTool(ctx, dump, nil, "--single-transaction", "--no-tablespaces", "--skip-dump-date",
		"--result-file="+path, t.cfg.DBName)
	if err != nil {
		return fmt.Errorf("mysql target: dumping database %s: %w", t.cfg.DBName, err)
	}
	t.snapshot = path
	return nil
}

// Restore implements target.Snapshotter: it drops every table and view of
// the workload database and loads the dump. The database itself stays, so
// pooled connections keep it as their current database.
func (t *Target) Restore(ctx context.Context) error {
	if t.snapshot == "" {
		return errors.New("mysql target: Restore before Snapshot")
	}
	_, client, err := t.tools()
	if err != nil {
		return err
	}
	if err := t.dropAll(ctx); err != nil {
		return fmt.Errorf("mysql target: emptying database %s before the restore: %w", t.cfg.DBName, err)
	}
	f, err := os.Open(t.snapshot)
	if err != nil {
		return fmt.Errorf("mysql target: %w", err)
	}
	defer f.Close()
	if err := t.runTool(ctx, client, f, "--batch", "--database="+t.cfg.DBName); err != nil {
		return fmt.Errorf("mysql target: loading the snapshot %s: %w", t.snapshot, err)
	}
	return nil
}

// dropAll drops the database's tables and views, foreign keys or not.
func (t *Target) dropAll(ctx context.Context) error {
	conn, err := t.admin.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()")
	if err != nil {
		return err
	}
	var drops []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return err
		}
		kind := "TABLE"
		if typ == "VIEW" {
			kind = "VIEW"
		}
		drops = append(drops, "DROP "+kind+" IF EXISTS `"+strings.ReplaceAll(name, "`", "``")+"`")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION foreign_key_checks = 0"); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), "SET SESSION foreign_key_checks = 1")
	for _, q := range drops {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// runTool runs a MariaDB/MySQL client program against the server with the
// target's credentials in a private option file.
func (t *Target) runTool(ctx context.Context, path string, stdin *os.File, args ...string) error {
	dir, err := os.MkdirTemp("", "headroom-mysql-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opt := filepath.Join(dir, "client.cnf")
	if err := os.WriteFile(opt, []byte(t.optionFile()), 0o600); err != nil {
		return err
	}
	// --defaults-file must come first; it keeps the programs from reading
	// the machine's option files, which could point them elsewhere.
	cmd := exec.CommandContext(ctx, path, append([]string{"--defaults-file=" + opt}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return fmt.Errorf("%s: %w: %s", filepath.Base(path), err, msg)
	}
	return nil
}

// optionFile is the [client] section for the tools: where the server is,
// who to log in as, and TLS as the target's options say.
func (t *Target) optionFile() string {
	host, port, err := net.SplitHostPort(t.cfg.Addr)
	if err != nil {
		host, port = t.cfg.Addr, "3306"
	}
	var b strings.Builder
	b.WriteString("[client]\nprotocol=tcp\n")
	fmt.Fprintf(&b, "host=%s\nport=%s\nuser=%s\npassword=%s\n", optionValue(host), port, optionValue(t.cfg.User), optionValue(t.cfg.Passwd))
	switch mode := strings.ToLower(t.opts.TLS); mode {
	case "true":
		b.WriteString("ssl\nssl-verify-server-cert\n")
		if t.opts.CAFile != "" {
			fmt.Fprintf(&b, "ssl-ca=%s\n", optionValue(resolve(t.dir, t.opts.CAFile)))
		}
	case "skip-verify", "preferred":
		b.WriteString("ssl\nskip-ssl-verify-server-cert\n")
	}
	return b.String()
}

// optionValue quotes a value for an option file, whose parser reads
// backslash escapes inside double quotes.
func optionValue(v string) string {
	v = strings.ReplaceAll(v, `\`, `\\`)
	return `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`
}
