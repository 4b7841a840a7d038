package deploy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Redis is the recipe for a private Redis server (Debian package
// redis-server). Its configuration, written by Init to Dir/redis.conf:
//
//   - bind 127.0.0.1, the instance's port, protected-mode yes, and
//     requirepass with the generated password for the user "default";
//   - save "" and appendonly no: no background snapshot or append-only
//     file competes with the workload for CPU and disk while it is
//     measured;
//   - shutdown-on-sigterm save: a clean stop (Stop, Restart) writes the
//     data set to dump.rdb once, so a restart keeps the data as it would
//     for PostgreSQL or MariaDB;
//   - then every managed.settings key as a config line ("maxmemory 256mb").
//     A setting replaces the default of the same name (save, appendonly,
//     shutdown-on-sigterm); the settings Headroom needs to run the
//     instance cannot be changed (see CheckRedisSettings).
func Redis() Recipe { return redisRecipe{} }

type redisRecipe struct{}

func (redisRecipe) Kind() string { return "redis" }
func (redisRecipe) User() string { return "redis" }

// ShutdownDiscarding stops the server without the save it makes on SIGTERM
// (shutdown-on-sigterm save), for an instance whose data is being removed.
// The server closes the connection instead of answering, so the error of
// the command says nothing; Stop then waits for the exit.
func (redisRecipe) ShutdownDiscarding(ctx context.Context, inst *Instance) {
	_, _ = RedisCommand(ctx, inst, "SHUTDOWN", "NOSAVE")
}

func (redisRecipe) Binaries() []Binary {
	return []Binary{{Name: "redis-server", Package: "redis-server"}}
}

// redisReserved are the config directives Headroom sets itself: the
// instance cannot run as a managed one if they change.
var redisReserved = map[string]string{
	"bind":        "the instance listens on 127.0.0.1 (or its lab host's address) only",
	"port":        "set managed.port instead",
	"dir":         "the data directory is inside the campaign's results directory",
	"dbfilename":  "snapshots expect dump.rdb",
	"requirepass": "Headroom generates the password",
	"daemonize":   "Headroom runs the server in the foreground",
	"logfile":     "the server logs to server.log in the instance directory",
	"include":     "included files could change the settings above",
}

// redisDefaults are the defaults a setting of the same name replaces.
var redisDefaults = [][2]string{
	{"protected-mode", "yes"},
	{"save", `""`},
	{"appendonly", "no"},
	{"shutdown-on-sigterm", "save"},
}

// CheckRedisSettings reports the first managed.settings entry that cannot
// be written to a Redis configuration file: a key that is not one word, a
// value with a line break, or a setting Headroom controls. Targets call it
// from their Validate, so the spec is rejected before anything starts.
func CheckRedisSettings(settings map[string]string) error {
	for _, k := range sortedKeys(settings) {
		v := settings[k]
		if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r == '"' || r == '\'' || r == 0x7f }) {
			return fmt.Errorf("managed.settings: %q is not a Redis config directive name; use one word such as maxmemory", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("managed.settings.%s: the value must be on one line", k)
		}
		if why, ok := redisReserved[strings.ToLower(k)]; ok {
			return fmt.Errorf("managed.settings.%s: Headroom sets this itself (%s); remove it", k, why)
		}
	}
	return nil
}

// redisConfPath is the instance's configuration file.
func redisConfPath(inst *Instance) string { return filepath.Join(inst.Dir, "redis.conf") }

func (redisRecipe) Init(_ context.Context, inst *Instance) error {
	if err := CheckRedisSettings(inst.Settings); err != nil {
		return err
	}
	inst.User = "default"
	inst.Database = "0"
	if err := os.MkdirAll(inst.DataDir(), 0o750); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# Written by Headroom for a managed instance (internal/deploy/redis.go).\n")
	fmt.Fprintf(&b, "bind %s\nport %d\ndaemonize no\nlogfile \"\"\n", inst.Host, inst.Port)
	fmt.Fprintf(&b, "dir %q\ndbfilename dump.rdb\n", inst.DataDir())
	fmt.Fprintf(&b, "requirepass %s\n", inst.Password)
	set := map[string]bool{}
	for k := range inst.Settings {
		set[strings.ToLower(k)] = true
	}
	for _, d := range redisDefaults {
		if !set[d[0]] {
			fmt.Fprintf(&b, "%s %s\n", d[0], d[1])
		}
	}
	if len(inst.Settings) > 0 {
		b.WriteString("# managed.settings\n")
	}
	for _, k := range sortedKeys(inst.Settings) {
		v := inst.Settings[k]
		if v == "" {
			v = `""`
		}
		fmt.Fprintf(&b, "%s %s\n", k, v)
	}
	// The file holds the password: readable by the server only.
	return os.WriteFile(redisConfPath(inst), []byte(b.String()), 0o600)
}

func (redisRecipe) Command(inst *Instance) (string, []string) {
	return inst.Bin("redis-server"), []string{redisConfPath(inst)}
}

// Ready authenticates and expects PONG; while the server loads its data set
// it answers LOADING, which is not ready yet.
func (redisRecipe) Ready(ctx context.Context, inst *Instance) error {
	reply, err := RedisCommand(ctx, inst, "PING")
	if err != nil {
		return err
	}
	if reply != "PONG" {
		return fmt.Errorf("redis answered PING with %q", reply)
	}
	return nil
}

// RedisCommand runs one command on a fresh connection to the instance,
// authenticated with its password, and returns the reply as text (status,
// integer, bulk string, or an array's elements one per line). An error
// reply from the server is returned as an error with the server's message.
// It is for setup and checks, not for the workload.
func RedisCommand(ctx context.Context, inst *Instance, args ...string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", inst.Addr())
	if err != nil {
		return "", err
	}
	defer conn.Close()
	// Commands answer at once, except SAVE, which writes the whole data
	// set before it replies (minutes for a few GB).
	wait := 10 * time.Second
	if len(args) > 0 && strings.EqualFold(args[0], "SAVE") {
		wait = 30 * time.Minute
	}
	deadline := time.Now().Add(wait)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	rd := bufio.NewReader(conn)
	if _, err := conn.Write(redisRequest(nil, "AUTH", inst.Password)); err != nil {
		return "", err
	}
	if _, err := redisReadReply(rd); err != nil {
		// The server's message never contains the password.
		return "", fmt.Errorf("AUTH: %w", err)
	}
	if _, err := conn.Write(redisRequest(nil, args...)); err != nil {
		return "", err
	}
	return redisReadReply(rd)
}

// redisRequest appends args to dst as a RESP array of bulk strings.
func redisRequest(dst []byte, args ...string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, "\r\n"...)
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, a...)
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// errRedisReply is wrapped by errors the server sent as its reply.
var errRedisReply = errors.New("redis")

// redisReadReply reads one reply; the elements of an array reply are
// joined with newlines ("maxmemory\n268435456" for CONFIG GET maxmemory).
func redisReadReply(rd *bufio.Reader) (string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("redis: empty reply line")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("%w: %s", errRedisReply, line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < -1 || n > 64<<20 {
			return "", fmt.Errorf("redis: bad bulk length %q", line)
		}
		if n == -1 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < -1 || n > 1<<20 {
			return "", fmt.Errorf("redis: bad array length %q", line)
		}
		elems := make([]string, 0, max(n, 0))
		for range n {
			e, err := redisReadReply(rd)
			if err != nil {
				return "", err
			}
			elems = append(elems, e)
		}
		return strings.Join(elems, "\n"), nil
	}
	return "", fmt.Errorf("redis: unexpected reply %.40q", line)
}

// redisDumpPath is where the server writes and loads its RDB snapshot.
func redisDumpPath(inst *Instance) string { return filepath.Join(inst.DataDir(), "dump.rdb") }

// SaveRedisRDB makes the server write its data set (SAVE, which blocks the
// server until the file is complete) and copies dump.rdb to dst.
func SaveRedisRDB(ctx context.Context, inst *Instance, dst string) error {
	if err := redisRDBUsable(inst); err != nil {
		return err
	}
	if _, err := RedisCommand(ctx, inst, "SAVE"); err != nil {
		return fmt.Errorf("redis SAVE: %w", err)
	}
	return redisCopyFile(redisDumpPath(inst), dst, -1, -1)
}

// RestoreRedisRDB replaces the instance's data set with the snapshot in src:
// it stops the server without saving (SHUTDOWN NOSAVE), puts src in place of
// dump.rdb and starts the server, which loads it before it answers PING.
func RestoreRedisRDB(ctx context.Context, inst *Instance, src string) error {
	if err := redisRDBUsable(inst); err != nil {
		return err
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("redis snapshot: %w", err)
	}
	if inst.Running() {
		// SHUTDOWN NOSAVE answers only by closing the connection; an
		// error here is expected and Stop below waits for the exit.
		_, _ = RedisCommand(ctx, inst, "SHUTDOWN", "NOSAVE")
	}
	if err := inst.Stop(ctx); err != nil {
		return err
	}
	uid, gid := inst.Owner()
	if err := redisCopyFile(src, redisDumpPath(inst), uid, gid); err != nil {
		return err
	}
	return inst.Restart(ctx)
}

// redisRDBUsable rejects snapshots when the append-only file is on: the
// server would load the AOF and ignore dump.rdb.
func redisRDBUsable(inst *Instance) error {
	for k, v := range inst.Settings {
		if strings.EqualFold(k, "appendonly") && strings.EqualFold(strings.TrimSpace(v), "yes") {
			return fmt.Errorf("managed.settings.appendonly: snapshots (reset: restore) work with appendonly no only, because the server loads the append-only file instead of the snapshot")
		}
	}
	return nil
}

// redisCopyFile copies src to dst through a temporary file renamed into place,
// owned by uid:gid unless they are negative.
func redisCopyFile(src, dst string, uid, gid int) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && uid >= 0 && os.Geteuid() == 0 {
		err = os.Chown(tmp, uid, gid)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return nil
}
