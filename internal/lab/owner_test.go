package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// useTempStateDir points the lab's state files at a directory of the test,
// so that no lab of the machine is seen or touched.
func useTempStateDir(t *testing.T) {
	t.Helper()
	old := StateDir
	StateDir = t.TempDir()
	t.Cleanup(func() { StateDir = old })
}

// liveOwner starts a process that stands for another campaign, killed when
// the test ends.
func liveOwner(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// deadPID is the ID of a process that ran and is gone (reaped).
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

var testOwner = Owner{
	Command:  "headroom run aisle.yaml",
	Campaign: "aisle",
	Results:  "/srv/results/aisle-20261203-100003",
	Since:    time.Date(2026, 12, 3, 10, 0, 3, 0, time.UTC),
}

func writeOwnedState(t *testing.T, name string, pid int) {
	t.Helper()
	st := State{Name: name, ID: "abc123", Subnet: "10.201.7.0/24", Gateway: "10.201.7.1", Bridge: "hrb-abc123",
		Cgroups: "v1", Created: testOwner.Since, Owner: pid, OwnedBy: testOwner,
		Hosts: []HostState{{HostConfig: HostConfig{Name: "db1", Type: "small", VCPUs: 0.5, MemoryBytes: 64 << 20, NetworkMbit: 10}}}}
	if err := writeState(&st); err != nil {
		t.Fatal(err)
	}
}

func assertNamesOwner(t *testing.T, err error, pid int, fix string) {
	t.Helper()
	if err == nil {
		t.Fatal("no refusal")
	}
	if !errors.Is(err, ErrInUse) {
		t.Errorf("the refusal %v does not match ErrInUse", err)
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("process %d", pid), testOwner.Command, "campaign aisle", "results in " + testOwner.Results, "since 2026-12-03 10:00:03 UTC", fix} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q: %s", want, msg)
		}
	}
	if strings.Count(msg, "; ") > 1 || strings.Contains(msg, "\n") {
		t.Errorf("the refusal is not one sentence: %s", msg)
	}
}

func TestOwnerDownRefusesALabWhoseOwnerRuns(t *testing.T) {
	useTempStateDir(t)
	pid := liveOwner(t)
	writeOwnedState(t, "t-own", pid)
	assertNamesOwner(t, Down("t-own"), pid, "headroom lab down --force t-own")
	assertNamesOwner(t, CheckDown("t-own"), pid, "headroom lab down --force t-own")
	// DownAll without force leaves it and says why.
	assertNamesOwner(t, DownAll(false), pid, "--force")
	if _, err := os.Stat(statePath("t-own")); err != nil {
		t.Errorf("a refused lab down removed the state file: %v", err)
	}
	if in := InUse(); len(in) != 1 || in[0].Name != "t-own" {
		t.Errorf("InUse = %+v, want t-own", in)
	}
}

// The decision behind Down and ForceDown, which needs no root to check.
func TestOwnerForceAndDeadOwners(t *testing.T) {
	live := &State{Name: "t-live", Owner: liveOwner(t), OwnedBy: testOwner}
	if err := refuseDown(live, false); err == nil {
		t.Error("a lab whose owner runs was not refused")
	}
	if err := refuseDown(live, true); err != nil {
		t.Errorf("--force was refused: %v", err)
	}
	for _, st := range []*State{
		{Name: "t-dead", Owner: deadPID(t), OwnedBy: testOwner}, // its campaign was killed
		{Name: "t-kept", OwnedBy: Owner{Command: "headroom lab up lab.yaml"}},
		{Name: "t-mine", Owner: os.Getpid()}, // Close of this process's own lab
	} {
		if err := refuseDown(st, false); err != nil {
			t.Errorf("%s: %v", st.Name, err)
		}
		if err := refuseTakeOver(st); err != nil {
			t.Errorf("%s: a campaign may not take it over: %v", st.Name, err)
		}
	}
}

func TestOwnerUpRefusesALabAnotherRunningProcessOwns(t *testing.T) {
	useTempStateDir(t)
	pid := liveOwner(t)
	writeOwnedState(t, "t-own", pid)
	before, err := os.ReadFile(statePath("t-own"))
	if err != nil {
		t.Fatal(err)
	}
	hosts := []HostConfig{{Name: "db1", Type: "small", VCPUs: 0.5, MemoryBytes: 64 << 20, NetworkMbit: 10}}
	_, err = Up("t-own", hosts, DefaultCatalog(), Options{})
	assertNamesOwner(t, err, pid, "give this lab another name (lab.name)")
	after, _ := os.ReadFile(statePath("t-own"))
	if string(after) != string(before) {
		t.Error("a refused Up changed the owner's state file")
	}
}

func TestOwnerIsRecordedInTheStateFile(t *testing.T) {
	useTempStateDir(t)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	o := ownerFor(Options{Owner: Owner{Campaign: "aisle", Results: "/r/aisle-1"}}, now)
	if o.Campaign != "aisle" || o.Results != "/r/aisle-1" || o.Command != strings.Join(os.Args, " ") || !o.Since.Equal(now) {
		t.Errorf("a campaign's owner: %+v", o)
	}
	if o := ownerFor(Options{Owner: Owner{Command: "headroom lab up x.yaml"}}, now); o.Campaign != "" || o.Command != "headroom lab up x.yaml" {
		t.Errorf("a given command line was not kept: %+v", o)
	}
	writeOwnedState(t, "t-own", 4242)
	b, err := os.ReadFile(filepath.Join(StateDir, "t-own.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		PID   int            `json:"owner_pid"`
		Owner map[string]any `json:"owner"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.PID != 4242 || raw.Owner["command"] != testOwner.Command || raw.Owner["campaign"] != "aisle" ||
		raw.Owner["results"] != testOwner.Results || raw.Owner["since"] != "2026-12-03T10:00:03Z" {
		t.Errorf("the state file's owner: %s", b)
	}
	// A state file from before owners were described still reads.
	old := `{"name":"t-old","created":"2026-12-01T08:00:00Z","owner_pid":7}`
	if err := os.WriteFile(statePath("t-old"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := readState("t-old")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.DescribeOwner(); got != "process 7, since 2026-12-01 08:00:00 UTC" {
		t.Errorf("an old state's owner: %q", got)
	}
}
