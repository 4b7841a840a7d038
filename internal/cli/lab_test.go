package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/lab"
)

// lab up, status, exec and down through the binary, as a user runs them.
func TestLabCommands(t *testing.T) {
	if err := lab.Preflight(); err != nil {
		if os.Getenv("HEADROOM_REQUIRE_LAB") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	spec := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(spec, []byte(`
name: t-cli-lab
lab:
  hosts:
    - {name: db, count: 2, type: small, volumes: [{name: data, type: piops, size_gib: 20, iops: 500}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	headroom(t, "lab", "down", "t-cli-lab")
	t.Cleanup(func() { headroom(t, "lab", "down", "t-cli-lab") })

	out, errOut, code := headroom(t, "lab", "up", spec)
	if code != 0 {
		t.Fatalf("lab up: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"lab t-cli-lab: 2 hosts", "db1", "db2", "small", "0.5", "data piops 20 GiB 500 IOPS", "total: $0.180 per hour"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = headroom(t, "lab", "status")
	if code != 0 || !strings.Contains(out, "t-cli-lab") || !strings.Contains(out, "10.201.") {
		t.Errorf("lab status: exit %d\n%s", code, out)
	}
	// A command on a host sees the host's network and cgroups.
	out, errOut, code = headroom(t, "lab", "exec", "--lab", "t-cli-lab", "db2", "--", "sh", "-c", "cat /proc/net/dev /proc/self/cgroup")
	if code != 0 {
		t.Fatalf("lab exec: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "eth0:") || strings.Contains(out, "hrb-") || !strings.Contains(out, "/headroom-lab/t-cli-lab/db2") {
		t.Errorf("lab exec did not run inside db2:\n%s", out)
	}
	_, errOut, code = headroom(t, "lab", "exec", "--lab", "t-cli-lab", "db2", "--", "sh", "-c", "exit 3")
	if code != 3 || !strings.Contains(errOut, "exited with status 3 on db2") {
		t.Errorf("a failing command: exit %d, %q", code, errOut)
	}
	_, errOut, code = headroom(t, "lab", "exec", "--lab", "t-cli-lab", "db9", "--", "true")
	if code == 0 || !strings.Contains(errOut, `has no host "db9"; its hosts are db1, db2`) {
		t.Errorf("an unknown host: exit %d, %q", code, errOut)
	}
	// The same lab again is no new lab; other hosts under its name are refused.
	out, _, code = headroom(t, "lab", "up", spec)
	if code != 0 || !strings.Contains(out, "already up") {
		t.Errorf("second lab up: exit %d\n%s", code, out)
	}
	out, _, code = headroom(t, "lab", "down", "t-cli-lab")
	if code != 0 || !strings.Contains(out, "nothing of it is left") {
		t.Errorf("lab down: exit %d\n%s", code, out)
	}
	out, _, _ = headroom(t, "lab", "status", "t-cli-lab")
	if strings.Contains(out, "db1") {
		t.Errorf("status after down still shows the lab:\n%s", out)
	}
	// Down again: nothing to do, no error.
	if _, errOut, code = headroom(t, "lab", "down", "t-cli-lab"); code != 0 {
		t.Errorf("a second lab down: exit %d %s", code, errOut)
	}
	// A bad lab section: one sentence naming the field.
	if err := os.WriteFile(spec, []byte("name: x\nlab: {hosts: [{name: db, type: huge}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = headroom(t, "lab", "up", spec)
	if code == 0 || !strings.Contains(errOut, `lab.hosts[0].type: "huge" is not in the catalog`) {
		t.Errorf("bad type: exit %d, %q", code, errOut)
	}
}
