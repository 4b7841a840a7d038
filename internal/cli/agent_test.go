package cli

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	be "encoding/binary" // "binary" is the built program (cli_test.go)
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/agent"
)

// headroom agent: missing flags are a usage error; a short token, and a
// coordinator that does not know the token, are one sentence each.
func TestAgentCommandRefusals(t *testing.T) {
	if _, stderr, code := headroom(t, "agent", "--name", "a1"); code != ExitUsage || !strings.Contains(stderr, "needs --connect HOST:PORT and --name NAME") {
		t.Errorf("without --connect: exit %d, %q", code, stderr)
	}
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := headroom(t, "agent", "--connect", "127.0.0.1:1", "--name", "a1", "--token-file", short); code != ExitError || !strings.Contains(stderr, "shorter than 16 characters") {
		t.Errorf("short token: exit %d, %q", code, stderr)
	}
	coord, err := agent.Listen("127.0.0.1:0", []byte("the-coordinators-own-token-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	wrong := filepath.Join(dir, "token")
	if err := os.WriteFile(wrong, []byte("a-different-token-for-this-agent\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := headroom(t, "agent", "--connect", fmt.Sprintf("127.0.0.1:%d", coord.Port()), "--name", "a1", "--token-file", wrong)
	if code != ExitError || !strings.Contains(stderr, `agent "a1"`) || !strings.Contains(stderr, "its token is not the coordinator's") ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, "a-different-token") {
		t.Errorf("wrong token: exit %d, %q", code, stderr)
	}
}

// --allow-env takes variable names, never values, and never the token's.
func TestAgentAllowEnvFlag(t *testing.T) {
	for _, c := range []struct{ flag, want string }{
		{"DB_PASSWORD=hunter2-secret", "--allow-env DB_PASSWORD=...: give the variable's name only, never its value"},
		{"A,B-C", `--allow-env "B-C" is not an environment variable name`},
		{agent.TokenEnv, "the agent's token is never handed to a target"},
	} {
		_, stderr, code := headroom(t, "agent", "--connect", "127.0.0.1:1", "--name", "a1", "--allow-env", c.flag)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "hunter2") {
			t.Errorf("--allow-env %s: exit %d, %q; want %q", c.flag, code, stderr, c.want)
		}
	}
}

// A `headroom agent` process facing a coordinator that does not know its
// token (it answers the hello with a proof of another token and sends an
// order at once) refuses it in one sentence naming the address, and sends
// it not one byte after its hello.
func TestAgentCommandRefusesAFakeCoordinator(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type seen struct {
		hello map[string]any
		after []byte
		err   error
	}
	got := make(chan seen, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			got <- seen{err: err}
			return
		}
		defer nc.Close()
		nonce := make([]byte, 32)
		_, _ = rand.Read(nonce)
		r := bufio.NewReader(nc)
		var s seen
		if s.err = writeFrame(nc, map[string]any{"type": "challenge", "version": agent.Version, "nonce": nonce}); s.err == nil {
			s.err = readFrame(r, &s.hello)
		}
		if s.err == nil {
			forged := hmac.New(sha256.New, []byte("not-the-agents-token-0123456789"))
			forged.Write(nonce)
			_ = writeFrame(nc, map[string]any{"type": "welcome", "mac": forged.Sum(nil)})
			_ = writeFrame(nc, map[string]any{"type": "order", "run": 1, "order": map[string]any{"spec": "target: {type: null}"}})
			_ = nc.(*net.TCPConn).CloseWrite()
			s.after, s.err = io.ReadAll(r)
		}
		got <- s
	}()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("the-agents-own-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, stderr, code := headroom(t, "agent", "--connect", addr, "--name", "a1", "--token-file", token)
	s := <-got
	if s.err != nil {
		t.Fatalf("the fake coordinator: %v", s.err)
	}
	if s.hello["type"] != "hello" || s.hello["name"] != "a1" {
		t.Errorf("the agent's first message: %v", s.hello)
	}
	if len(s.after) != 0 {
		t.Errorf("the agent sent %d bytes after its hello: %q", len(s.after), s.after)
	}
	if code != ExitError || !strings.Contains(stderr, "agent a1 refused the coordinator at "+addr+": it does not know this agent's token") ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, "the-agents-own-token") {
		t.Errorf("facing a fake coordinator: exit %d, %q", code, stderr)
	}
}

// writeFrame and readFrame speak the agent protocol's framing (a 4-byte
// big-endian length, then JSON), as any program could.
func writeFrame(w io.Writer, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = w.Write(append(be.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	return err
}

func readFrame(r io.Reader, m any) error {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return err
	}
	b := make([]byte, be.BigEndian.Uint32(head[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	return json.Unmarshal(b, m)
}
