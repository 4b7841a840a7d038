package campaign

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/spec"
)

func TestTierHostsAreThePrefixAndItsNumbers(t *testing.T) {
	for host, want := range map[string]bool{"app": true, "app1": true, "app12": true, "apps": false, "app1x": false, "db1": false, "ap": false} {
		if got := tierHost("app", host); got != want {
			t.Errorf("tierHost(app, %s) = %v, want %v", host, got, want)
		}
	}
	one := []spec.ControllerTier{{Hosts: "app"}}
	if k := configKey(one, []int{3}); k != "app=3" {
		t.Errorf("one tier's configuration: %q, want app=3 (the key earlier stores hold)", k)
	}
	two := []spec.ControllerTier{{Hosts: "app"}, {Hosts: "db"}}
	if k := configKey(two, []int{2, 1}); k != "app=2,db=1" {
		t.Errorf("two tiers' configuration: %q", k)
	}
	if n, ok := configCounts(two, "app=2,db=1"); !ok || !slices.Equal(n, []int{2, 1}) {
		t.Errorf("configCounts of app=2,db=1: %v %v", n, ok)
	}
	for _, k := range []string{"db=2", "app=0", "app=x", "app", "app=2", "db=1,app=2", "app=2,db=0", "app=2,db=1,x=3"} {
		if _, ok := configCounts(two, k); ok {
			t.Errorf("configCounts(app, db; %q) should not parse", k)
		}
	}
	if _, ok := configCounts(one, "app=2,db=1"); ok {
		t.Error("a two-tier configuration is not one of a single tier")
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
