// Package labtest holds what tests that run servers on lab hosts need
// before they start: a machine that can make a lab, the server binaries,
// and a results directory the servers' users can enter.
package labtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/lab"
)

// Need skips t where a lab cannot be made on this machine;
// HEADROOM_REQUIRE_LAB=1 fails it instead, so that a machine meant to run
// the lab tests does not pass them by skipping.
func Need(t testing.TB) {
	t.Helper()
	if err := lab.Preflight(); err != nil {
		missing(t, "lab not available: %v", err)
	}
}

// NeedServer is Need, and also skips t where the program bin is not
// installed; pkg is the package that installs it. PostgreSQL's programs
// are found in /usr/lib/postgresql/*/bin as well as on the PATH.
func NeedServer(t testing.TB, bin, pkg string) {
	t.Helper()
	Need(t)
	if _, err := exec.LookPath(bin); err != nil {
		if matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + bin); len(matches) == 0 {
			missing(t, "%s is not installed (apt-get install %s)", bin, pkg)
		}
	}
}

// NeedCassandra is Need, and also skips t where Java or the Cassandra
// jars are missing (make deps fetches the jars).
func NeedCassandra(t testing.TB) {
	t.Helper()
	Need(t)
	if _, err := deploy.Java(); err != nil {
		missing(t, "Cassandra cannot run: %v", err)
	}
	if _, err := deploy.JarDir("cassandra"); err != nil {
		missing(t, "Cassandra cannot run: %v (make deps)", err)
	}
}

func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("HEADROOM_REQUIRE_LAB") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// SearchableDir is a temporary directory the unprivileged users a lab's
// servers run as can enter (t.TempDir's, and their parent, are private).
func SearchableDir(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// StartedOrSkip checks the error of starting a server outside the lab:
// a server whose program is not installed (deploy.ErrMissingBinary)
// skips t, or fails it under HEADROOM_REQUIRE_SERVERS=1 so that a machine
// meant to run the server tests does not pass them by skipping; any other
// error fails t.
func StartedOrSkip(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, deploy.ErrMissingBinary) {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
