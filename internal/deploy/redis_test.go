package deploy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startRedis starts a managed Redis for the test, or skips the test when
// redis-server is not installed (fails under HEADROOM_REQUIRE_SERVERS=1).
func startRedis(t *testing.T, m Managed) *Instance {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal("redis-server is not installed (HEADROOM_REQUIRE_SERVERS=1); apt-get install -y redis-server")
		}
		t.Skip("redis-server is not installed; apt-get install -y redis-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := Start(ctx, Redis(), serverTestDir(t, "redis"), m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Remove(context.Background()) })
	return inst
}

func redisDo(t *testing.T, inst *Instance, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := RedisCommand(ctx, inst, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return r
}

func TestRedisStartsWithPasswordAndSettings(t *testing.T) {
	inst := startRedis(t, Managed{Settings: map[string]string{"maxmemory": "256mb", "maxmemory-policy": "allkeys-lru"}})
	if inst.User != "default" || inst.Database != "0" || inst.Password == "" {
		t.Fatalf("user %q database %q password set %v; want default, 0, a password", inst.User, inst.Database, inst.Password != "")
	}
	if got := redisDo(t, inst, "PING"); got != "PONG" {
		t.Fatalf("PING = %q", got)
	}
	if got := redisDo(t, inst, "CONFIG", "GET", "maxmemory"); got != "maxmemory\n268435456" {
		t.Fatalf("CONFIG GET maxmemory = %q", got)
	}
	if got := redisDo(t, inst, "CONFIG", "GET", "maxmemory-policy"); got != "maxmemory-policy\nallkeys-lru" {
		t.Fatalf("CONFIG GET maxmemory-policy = %q", got)
	}
	// No background snapshots while measuring, but a clean stop saves.
	if got := redisDo(t, inst, "CONFIG", "GET", "save"); got != "save\n" {
		t.Fatalf("CONFIG GET save = %q, want no save points", got)
	}
	if got := redisDo(t, inst, "CONFIG", "GET", "appendonly"); got != "appendonly\nno" {
		t.Fatalf("CONFIG GET appendonly = %q", got)
	}
	if got := redisDo(t, inst, "CONFIG", "GET", "bind"); got != "bind\n127.0.0.1" {
		t.Fatalf("CONFIG GET bind = %q", got)
	}

	// Without the password the server refuses commands.
	conn, err := net.DialTimeout("tcp", inst.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	conn.Write(redisRequest(nil, "GET", "x"))
	if _, err := redisReadReply(bufio.NewReader(conn)); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("GET without AUTH: %v, want NOAUTH", err)
	}

	// The configuration holds the password: only its owner reads it.
	fi, err := os.Stat(filepath.Join(inst.Dir, "redis.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("redis.conf mode %v, want 0600", fi.Mode().Perm())
	}

	if os.Geteuid() == 0 {
		if u, err := user.Lookup("redis"); err == nil {
			if uid := processUID(t, inst.PID()); strconv.Itoa(uid) != u.Uid {
				t.Fatalf("server runs as uid %d, want redis (%s)", uid, u.Uid)
			}
		}
	}
}

// processUID reads the real uid of a process from /proc.
func processUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatal("no Uid line")
	return -1
}

func TestRedisRestartKeepsDataAndSnapshotRestores(t *testing.T) {
	inst := startRedis(t, Managed{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	redisDo(t, inst, "SET", "k", "before-restart")
	oldPID := inst.PID()
	if err := inst.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if inst.PID() == oldPID || !inst.Running() {
		t.Fatalf("pid %d -> %d, running %v: not restarted", oldPID, inst.PID(), inst.Running())
	}
	if got := redisDo(t, inst, "GET", "k"); got != "before-restart" {
		t.Fatalf("after restart GET k = %q; a clean stop must save the data set", got)
	}

	snap := filepath.Join(t.TempDir(), "snap.rdb")
	redisDo(t, inst, "SET", "k", "snapshot")
	if err := SaveRedisRDB(ctx, inst, snap); err != nil {
		t.Fatal(err)
	}
	redisDo(t, inst, "SET", "k", "overwritten")
	redisDo(t, inst, "SET", "extra", "1")
	if err := RestoreRedisRDB(ctx, inst, snap); err != nil {
		t.Fatal(err)
	}
	if got := redisDo(t, inst, "GET", "k"); got != "snapshot" {
		t.Fatalf("after restore GET k = %q, want snapshot", got)
	}
	if got := redisDo(t, inst, "EXISTS", "extra"); got != "0" {
		t.Fatalf("after restore EXISTS extra = %q, want 0", got)
	}
}

func TestRedisRemoveKeepsLog(t *testing.T) {
	inst := startRedis(t, Managed{})
	redisDo(t, inst, "SET", "k", "v")
	if err := inst.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	if inst.Running() {
		t.Fatal("server still running after Remove")
	}
	if _, err := os.Stat(inst.DataDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("data dir after Remove: %v, want it gone", err)
	}
	if _, err := os.Stat(filepath.Join(inst.Dir, "redis.conf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("redis.conf after Remove: %v, want it gone", err)
	}
	b, err := os.ReadFile(inst.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Ready to accept connections") {
		t.Fatalf("server.log does not look like a Redis log: %.200q", b)
	}
}

// missingRedis is the Redis recipe with a binary no machine has.
type missingRedis struct{ Recipe }

func (missingRedis) Binaries() []Binary {
	return []Binary{{Name: "redis-server-headroom-missing", Package: "redis-server"}}
}

func TestRedisMissingBinaryNamesPackage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "redis")
	_, err := Start(context.Background(), missingRedis{Redis()}, dir, Managed{})
	if !errors.Is(err, ErrMissingBinary) {
		t.Fatalf("err = %v, want ErrMissingBinary", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Fatalf("error does not name the package: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("instance dir created before the binary check: %v", err)
	}
}

func TestCheckRedisSettings(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]string
		want     string // "" = valid
	}{
		{map[string]string{"maxmemory": "256mb", "save": "900 1", "appendonly": "yes"}, ""},
		{map[string]string{"port": "7000"}, "managed.settings.port: Headroom sets this itself"},
		{map[string]string{"RequirePass": "x"}, "managed.settings.RequirePass: Headroom sets this itself"},
		{map[string]string{"max memory": "1"}, `managed.settings: "max memory" is not a Redis config directive name`},
		{map[string]string{"maxmemory\nport": "1"}, "is not a Redis config directive name"},
		{map[string]string{"maxmemory": "1\nport 7000"}, "managed.settings.maxmemory: the value must be on one line"},
	} {
		err := CheckRedisSettings(tc.settings)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.settings, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.settings, err, tc.want)
		}
	}
}

func TestRedisSettingReplacesDefault(t *testing.T) {
	inst := &Instance{Dir: t.TempDir(), Port: 7000, Password: "pw", Settings: map[string]string{"save": "900 1", "notify-keyspace-events": ""}}
	if err := Redis().Init(context.Background(), inst); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(inst.Dir, "redis.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	if strings.Contains(conf, "save \"\"") || !strings.Contains(conf, "\nsave 900 1\n") {
		t.Fatalf("save setting did not replace the default:\n%s", conf)
	}
	if !strings.Contains(conf, "\nnotify-keyspace-events \"\"\n") || !strings.Contains(conf, "\nappendonly no\n") || !strings.Contains(conf, "\nport 7000\n") {
		t.Fatalf("unexpected config:\n%s", conf)
	}
}
