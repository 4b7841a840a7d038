package cgroupself

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func procWith(t *testing.T, cgroup string) string {
	t.Helper()
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "self", "cgroup"), []byte(cgroup), 0o644); err != nil {
		t.Fatal(err)
	}
	return proc
}

func TestReadHybridHierarchies(t *testing.T) {
	m, err := Read(procWith(t, "9:name=systemd:/\n4:memory:/lab/db1\n2:cpu,cpuacct:/lab/db1:odd\n0::/user.slice\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ctrl, want string }{{"memory", "/lab/db1"}, {"cpu", "/lab/db1:odd"}, {"cpuacct", "/lab/db1:odd"}} {
		if p, ok := m.V1(c.ctrl); !ok || p != c.want {
			t.Errorf("V1(%s) = %q, %v; want %q", c.ctrl, p, ok, c.want)
		}
	}
	if p, ok := m.V1("blkio"); ok {
		t.Errorf("V1(blkio) = %q; the process is in no blkio hierarchy", p)
	}
	if p, ok := m.V2(); !ok || p != "/user.slice" {
		t.Errorf("V2() = %q, %v; want /user.slice", p, ok)
	}
}

func TestReadWithoutCgroups(t *testing.T) {
	m, err := Read(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.V2(); ok {
		t.Error("V2 found without /proc/self/cgroup")
	}
	if _, ok := m.V1("cpu"); ok {
		t.Error("V1 found without /proc/self/cgroup")
	}
}

func TestReadMalformedLine(t *testing.T) {
	_, err := Read(procWith(t, "4-memory\n3:cpu\n"))
	if err == nil || !strings.Contains(err.Error(), `malformed line "3:cpu"`) {
		t.Fatalf("error %v; want one naming the malformed line", err)
	}
}

func TestUpListsEachParent(t *testing.T) {
	got, err := Up("/sys/fs/cgroup/memory", "/lab/db1/")
	want := []string{"/sys/fs/cgroup/memory/lab/db1", "/sys/fs/cgroup/memory/lab", "/sys/fs/cgroup/memory"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Up: %q, %v; want %q", got, err, want)
	}
	if _, err := Up("/m", "lab"); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Fatalf("Up of a relative path: %v; want an error", err)
	}
}
