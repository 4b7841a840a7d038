package campaign

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTierHostsAreThePrefixAndItsNumbers(t *testing.T) {
	for host, want := range map[string]bool{"app": true, "app1": true, "app12": true, "apps": false, "app1x": false, "db1": false, "ap": false} {
		if got := tierHost("app", host); got != want {
			t.Errorf("tierHost(app, %s) = %v, want %v", host, got, want)
		}
	}
	if n, ok := tierNodes("app", tierKey("app", 3)); !ok || n != 3 {
		t.Errorf("tierNodes of %s: %d %v", tierKey("app", 3), n, ok)
	}
	for _, k := range []string{"db=2", "app=0", "app=x", "app"} {
		if _, ok := tierNodes("app", k); ok {
			t.Errorf("tierNodes(app, %q) should not parse", k)
		}
	}
	if hostOrder("app10") <= hostOrder("app9") || hostOrder("app") != 0 {
		t.Error("hosts sort by their numbers")
	}
}

func TestODSStorePathTakesTheNewestMatch(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"ods-20261124-101500", "ods-20261124-111500"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, StoreFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := storePath(filepath.Join(dir, "ods-*"))
	if err != nil || p != filepath.Join(dir, "ods-20261124-111500", StoreFile) {
		t.Errorf("glob: %s, %v", p, err)
	}
	if _, err := storePath(filepath.Join(dir, "nothing-*")); err == nil || !strings.Contains(err.Error(), "run the campaign that measures it first") {
		t.Errorf("no match: %v", err)
	}
	if _, err := storePath(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "no results store at") {
		t.Errorf("missing: %v", err)
	}
}
