package gcpolicy

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// tree writes files (path relative to the root → content) under a new
// root and returns the procFS that reads it.
func tree(t *testing.T, files map[string]string) procFS {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return procFS{proc: filepath.Join(root, "proc"), cgroup: filepath.Join(root, "cgroup")}
}

const meminfo = "MemTotal:       24576000 kB\nMemFree:        1000 kB\n"

func TestAvailableMemory(t *testing.T) {
	noLimit := "9223372036854771712\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"no cgroup file: the machine's", map[string]string{"proc/meminfo": meminfo}, 24576000 * 1024},
		{"v1 without a limit", map[string]string{
			"proc/meminfo":     meminfo,
			"proc/self/cgroup": "4:memory:/lab/db1\n1:cpu:/\n0::/\n",
			"cgroup/memory/lab/db1/memory.limit_in_bytes": noLimit,
			"cgroup/memory/lab/memory.limit_in_bytes":     noLimit,
			"cgroup/memory/memory.limit_in_bytes":         noLimit,
		}, 24576000 * 1024},
		{"v1: the host's limit", map[string]string{
			"proc/meminfo":     meminfo,
			"proc/self/cgroup": "4:memory:/lab/db1\n",
			"cgroup/memory/lab/db1/memory.limit_in_bytes": "2147483648\n",
			"cgroup/memory/lab/memory.limit_in_bytes":     noLimit,
		}, 2 << 30},
		{"v1: a parent's smaller limit", map[string]string{
			"proc/meminfo":     meminfo,
			"proc/self/cgroup": "7:blkio:/\n4:memory:/lab/db1\n",
			"cgroup/memory/lab/db1/memory.limit_in_bytes": "2147483648\n",
			"cgroup/memory/lab/memory.limit_in_bytes":     "1073741824\n",
		}, 1 << 30},
		{"v2: memory.max", map[string]string{
			"proc/meminfo":                     meminfo,
			"proc/self/cgroup":                 "0::/app.slice/x\n",
			"cgroup/app.slice/x/memory.max":    "536870912\n",
			"cgroup/app.slice/memory.max":      "max\n",
			"cgroup/app.slice/x/memory.high":   "1\n",
			"cgroup/app.slice/x/unrelated.max": "2\n",
		}, 512 << 20},
		{"a limit above the machine's memory", map[string]string{
			"proc/meminfo":                  meminfo,
			"proc/self/cgroup":              "0::/big\n",
			"cgroup/big/memory.max":         "107374182400\n",
			"cgroup/big/memory.swap.max":    "0\n",
			"cgroup/big/memory.pressure":    "\n",
			"cgroup/big/cgroup.controllers": "memory\n",
		}, 24576000 * 1024},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := tree(t, c.files).available()
			if err != nil || got != c.want {
				t.Fatalf("available: %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestAvailableMemoryErrorsNameTheFile(t *testing.T) {
	for _, c := range []struct {
		name, want string
		files      map[string]string
	}{
		{"no meminfo", "meminfo", map[string]string{}},
		{"meminfo without MemTotal", "no MemTotal", map[string]string{"proc/meminfo": "MemFree: 1 kB\n"}},
		{"a limit that is not a number", "memory.max", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/x\n", "cgroup/x/memory.max": "lots\n"}},
		{"a relative cgroup path", "not absolute", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::x\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := tree(t, c.files).available()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want one naming %q", err, c.want)
			}
		})
	}
}

func TestApplyKeepsTheUsersSettings(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	fsys := tree(t, map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/h\n", "cgroup/h/memory.max": "1073741824\n"})

	env := map[string]string{}
	p := apply(func(k string) string { return env[k] }, fsys)
	if p.Percent != LoadPercent || p.MemLimit != 512<<20 {
		t.Fatalf("policy %+v; want GOGC %d and a limit of 512 MiB", p, LoadPercent)
	}
	if got := debug.SetGCPercent(100); got != LoadPercent {
		t.Errorf("GC percent %d after Apply; want %d", got, LoadPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != 512<<20 {
		t.Errorf("memory limit %d after Apply; want %d", got, 512<<20)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	env = map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}
	if p := apply(func(k string) string { return env[k] }, fsys); p != (Policy{}) {
		t.Fatalf("policy %+v with GOGC and GOMEMLIMIT set; want none", p)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set; want it untouched (100)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("memory limit %d with GOMEMLIMIT set; want it untouched", got)
	}
}
