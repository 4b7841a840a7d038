package sshinfra

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
)

// The decision of Ship from the host's answer: copy when the cache lacks
// the program or holds another file under its name, keep an identical
// copy, and refuse another OS or architecture with an ArchError naming
// both.
func TestPlanShip(t *testing.T) {
	const sum = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const name = "headroom-0123456789abcdef"
	for _, c := range []struct {
		what, answer, local string
		copy, gzip          bool
		err                 string
	}{
		{"absent", "Linux x86_64\n/root/.cache/headroom\n\n", "linux/amd64", true, false, ""},
		{"absent, gzip there", "Linux x86_64\n/root/.cache/headroom\n\ngzip\n", "linux/amd64", true, true, ""},
		{"absent, no third line", "Linux x86_64\n/root/.cache/headroom\n", "linux/amd64", true, false, ""},
		{"present", "Linux x86_64\n/root/.cache/headroom\n" + sum + "  -\ngzip\n", "linux/amd64", false, true, ""},
		{"other content", "Linux x86_64\n/root/.cache/headroom\n" + strings.Repeat("f", 64) + "  -\n", "linux/amd64", true, false, ""},
		{"arm64 match", "Linux aarch64\n/home/u/.cache/headroom\n\n", "linux/arm64", true, false, ""},
		{"arch mismatch", "Linux aarch64\n/root/.cache/headroom\n" + sum + "  -\n", "linux/amd64", false, false,
			"host h1 runs Linux aarch64 (linux/arm64) and this program is built for linux/amd64"},
		{"os mismatch", "Darwin arm64\n/Users/u/.cache/headroom\n\n", "linux/arm64", false, false,
			"host h1 runs Darwin arm64 (darwin/arm64) and this program is built for linux/arm64"},
		{"unknown", "Plan9 weird\n/x\n\n", "linux/amd64", false, false, "host h1 runs Plan9 weird (unknown to Go)"},
		{"no sha256sum", "Linux x86_64\n/root/.cache/headroom\nnosha\n", "linux/amd64", false, false, "lacks sha256sum"},
		{"garbage", "oops\n", "linux/amd64", false, false, "unexpected answer"},
	} {
		p, err := planShip("h1", name, c.answer, sum, c.local)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %+v, %v; want an error with %q", c.what, p, err, c.err)
			}
			var ae *infra.ArchError
			if strings.Contains(c.what, "mismatch") && !errors.As(err, &ae) {
				t.Errorf("%s: %v is not an ArchError", c.what, err)
			}
			continue
		}
		dir, _, _ := strings.Cut(strings.SplitN(c.answer, "\n", 3)[1], "\n")
		if err != nil || p.copy != c.copy || p.gzip != c.gzip || p.dir != dir || p.path != dir+"/"+name {
			t.Errorf("%s: %+v, %v; want copy=%v gzip=%v in %s", c.what, p, err, c.copy, c.gzip, dir)
		}
	}
}

func TestGoOSArch(t *testing.T) {
	for uname, want := range map[string]string{
		"Linux x86_64": "linux/amd64", "Linux aarch64": "linux/arm64", "Linux i686": "linux/386",
		"Linux armv7l": "linux/arm", "Linux ppc64le": "linux/ppc64le", "Linux riscv64": "linux/riscv64",
		"Darwin arm64": "darwin/arm64", "FreeBSD amd64": "freebsd/amd64", "Linux": "", "SunOS i86pc": "",
	} {
		if got := goOSArch(uname); got != want {
			t.Errorf("goOSArch(%q) = %q, want %q", uname, got, want)
		}
	}
}

// The probe, run here as it runs on a host, keeps the copy it looks for
// (and marks it used), keeps other copies used in the last two weeks and
// files that are not copies, and removes copies unused for longer.
func TestShipProbePrunesUnusedCopies(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, "headroom")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-20 * 24 * time.Hour)
	files := map[string]time.Time{
		"headroom-00112233445566aa": old,                                 // the one looked for: kept
		"headroom-00112233445566bb": old,                                 // unused for 20 days: removed
		"headroom-00112233445566cc": time.Now().Add(-3 * 24 * time.Hour), // used 3 days ago: kept
		"notes.txt":                 old,                                 // not a copy: kept
		"headroom-short":            old,                                 // not a copy's name: kept
	}
	for name, mt := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-c", shipProbeScript(), "headroom-ship", "headroom-00112233445566aa")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "XDG_CACHE_HOME=" + cache}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if lines := strings.Split(string(out), "\n"); len(lines) < 3 || lines[1] != dir || len(lines[2]) < 64 {
		t.Fatalf("probe answer %q", out)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != (name == "headroom-00112233445566bb") {
			t.Errorf("%s: removed %v", name, gone)
		}
	}
	st, err := os.Stat(filepath.Join(dir, "headroom-00112233445566aa"))
	if err != nil || time.Since(st.ModTime()) > time.Hour {
		t.Errorf("the copy looked for was not marked used: %v, %v", st.ModTime(), err)
	}
}
