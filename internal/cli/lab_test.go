package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// What a vCPU is on this machine (the reference unit, the default),
	// and each host's quota in its cores.
	for _, want := range []string{"compute unit: a vCPU is the work of one vCPU of a", "so a vCPU gets", "compute units per core", "CORES"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab status lacks %q:\n%s", want, out)
		}
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

// lab down refuses a lab whose owner still runs, and lab status names the
// owner; both in-process on state files of the test's own (no root).
func TestLabDownRefusesALabInUse(t *testing.T) {
	old := lab.StateDir
	lab.StateDir = t.TempDir()
	t.Cleanup(func() { lab.StateDir = old })
	owner := exec.Command("sleep", "30") // stands for a running campaign
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	gone := exec.Command("true") // a campaign that was killed
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 12, 3, 10, 0, 3, 0, time.UTC)
	running := lab.Owner{Command: "headroom run aisle.yaml", Campaign: "aisle", Results: "/srv/results/aisle-1", Since: since}
	for _, st := range []lab.State{
		{Name: "t-cli-busy", Created: since, Owner: owner.Process.Pid, OwnedBy: running},
		{Name: "t-cli-left", Created: since, Owner: gone.Process.Pid, OwnedBy: lab.Owner{Command: "headroom run old.yaml", Campaign: "old", Since: since}},
		{Name: "t-cli-kept", Created: since, OwnedBy: lab.Owner{Command: "headroom lab up kept.yaml", Since: since}},
	} {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lab.StateDir, st.Name+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pid := fmt.Sprint(owner.Process.Pid)
	named := []string{"lab t-cli-busy is in use by process " + pid, "headroom run aisle.yaml", "campaign aisle", "results in /srv/results/aisle-1", "since 2026-12-03 10:00:03 UTC"}

	_, errOut, code := runCommand(t, newLabCmd(), "down")
	if code == 0 {
		t.Fatal("lab down without a name took labs down while one is in use")
	}
	for _, want := range append(named, "headroom lab down --all", "headroom lab down --force") {
		if !strings.Contains(errOut, want) {
			t.Errorf("lab down's refusal lacks %q: %s", want, errOut)
		}
	}
	_, errOut, code = runCommand(t, newLabCmd(), "down", "t-cli-busy")
	if code == 0 {
		t.Fatal("lab down t-cli-busy took down a lab in use")
	}
	for _, want := range append(named, "headroom lab down --force t-cli-busy") {
		if !strings.Contains(errOut, want) {
			t.Errorf("lab down t-cli-busy's refusal lacks %q: %s", want, errOut)
		}
	}
	for _, name := range []string{"t-cli-busy", "t-cli-left", "t-cli-kept"} {
		if _, err := os.Stat(filepath.Join(lab.StateDir, name+".json")); err != nil {
			t.Errorf("a refused lab down removed %s: %v", name, err)
		}
	}

	out, errOut, code := runCommand(t, newLabCmd(), "status")
	if code != 0 {
		t.Fatalf("lab status: exit %d %s", code, errOut)
	}
	for _, want := range []string{
		"owner: process " + pid + ", still running, since 2026-12-03 10:00:03 UTC",
		"command:  headroom run aisle.yaml", "campaign: aisle", "results:  /srv/results/aisle-1",
		"lab down refuses it (--force takes it anyway)",
		"owner: process " + fmt.Sprint(gone.Process.Pid) + ", no longer running",
		"left behind: headroom lab down t-cli-left removes it",
		"owner: none, the lab was brought up to stay", "command:  headroom lab up kept.yaml",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lab status lacks %q:\n%s", want, out)
		}
	}
}

// lab calibrate needs no root and prints the machine's speed in compute
// units and what a vCPU gets; bad counts are one sentence.
func TestLabCalibrate(t *testing.T) {
	out, errOut, code := headroom(t, "lab", "calibrate", "--tries", "1")
	if code != 0 || !strings.Contains(out, "compute units per core (integer") || !strings.Contains(out, "a vCPU gets") {
		t.Errorf("lab calibrate: exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code = headroom(t, "lab", "calibrate", "--tries", "0")
	if code == 0 || !strings.Contains(errOut, "--tries and --times must be at least 1") {
		t.Errorf("lab calibrate --tries 0: exit %d, %q", code, errOut)
	}
}
