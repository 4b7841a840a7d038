package cli

import (
	"fmt"
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
