package sshinfra

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A secret variable never appears on the host's command line (where its
// other users could read it in the process list) and still reaches the
// server: the supervisor reads it from the session's input first. The
// remote command runs here under /bin/sh as sshd would run it there; the
// server is a shell that writes what it got.
func TestRelaySecretsGoOverStdinNotTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	const token = "0123456789abcdef0123456789abcdef"
	rs := relaySpec{
		Host: HostConfig{Name: "h1"},
		Dir:  dir,
		Path: "/bin/sh",
		Args: []string{"-c", `printf '%s|%s|%s' "$HEADROOM_AGENT_TOKEN" "$DB_PASSWORD" "$MODE" > got`},
		Env:  []string{"PATH=/usr/bin:/bin", "HEADROOM_AGENT_TOKEN=" + token, "MODE=plain", "DB_PASSWORD=it's a secret"},
	}
	line := rs.remoteCommand()
	if strings.Contains(line, token) || strings.Contains(line, "a secret") {
		t.Fatalf("the command line holds a secret: %s", line)
	}
	if !strings.Contains(line, "'MODE=plain'") {
		t.Fatalf("a plain variable is missing from the command line: %s", line)
	}
	secrets, err := rs.secretLines()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", line)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The session's input stays open while the server runs (its end
	// stops the server), as the relay keeps it.
	if _, err := io.WriteString(in, secrets); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	got, err := os.ReadFile(filepath.Join(dir, "got"))
	if err != nil {
		t.Fatal(err)
	}
	if want := token + "|it's a secret|plain"; string(got) != want {
		t.Fatalf("the server got %q, want %q", got, want)
	}

	rs.Env = append(rs.Env, "X_TOKEN=two\nlines")
	if _, err := rs.secretLines(); err == nil || !strings.Contains(err.Error(), "X_TOKEN holds a line break") {
		t.Fatalf("a secret with a line break: %v", err)
	}
	for name, want := range map[string]bool{"HEADROOM_AGENT_TOKEN": true, "PGPASSWORD": true, "ssh_passphrase": true, "PATH": false, "1_TOKEN": false, "A-TOKEN": false} {
		if secretEnv(name) != want {
			t.Errorf("secretEnv(%q) = %v", name, !want)
		}
	}
}
