package deploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// serverTestDir returns an empty instance directory named name under
// t.TempDir(), whose parents the unprivileged server user can enter
// (MkdirTemp makes the per-test parent 0700).
func serverTestDir(t *testing.T, name string) string {
	t.Helper()
	base := t.TempDir()
	for d := base; d != os.TempDir() && d != "/" && d != filepath.Dir(d); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(base, name)
}

// startServer starts a managed server of recipe r for the test, in
// serverTestDir(t, name), and removes it when the test ends. It skips the
// test, saying missing (what is not installed and how to install it), when
// the recipe's binaries are missing, and fails it instead under
// HEADROOM_REQUIRE_SERVERS=1.
func startServer(t *testing.T, r Recipe, name, missing string, m Managed) (*Instance, error) {
	t.Helper()
	inst, err := Start(context.Background(), r, serverTestDir(t, name), m)
	if errors.Is(err, ErrMissingBinary) {
		if os.Getenv("HEADROOM_REQUIRE_SERVERS") == "1" {
			t.Fatal(err)
		}
		t.Skip(missing+": ", err)
	}
	if inst != nil {
		t.Cleanup(func() { _ = inst.Remove(context.Background()) })
	}
	return inst, err
}
