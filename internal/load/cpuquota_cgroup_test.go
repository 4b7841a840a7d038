package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/workload"
)

// cgroupChildEnv marks the copy of the test binary that
// TestCPUQuotaInRealCgroup moves into its cgroup.
const cgroupChildEnv = "HEADROOM_LOAD_CGROUP_CHILD"

// A real cgroup v1 at 0.2 CPU: the test creates a child of its own cpu
// cgroup with a quota of 20 ms per 100 ms, starts a copy of the test
// binary, moves it in, and lets it go. The copy must read 0.2 cores, and
// a closed loop against a spinning target in it must be throttled and
// judged client-limited at about 20% of one core. Needs root and the
// cgroup v1 cpu controller; about 2 s.
func TestCPUQuotaInRealCgroup(t *testing.T) {
	if os.Getenv(cgroupChildEnv) != "" {
		cgroupChild(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a cgroup")
	}
	mount, self := v1CPUCgroup(t)
	parent := filepath.Join(mount, self)
	if _, err := os.Stat(parent); err != nil {
		t.Skipf("this process's cpu cgroup %s is not visible: %v", parent, err)
	}
	want := 0.2
	if q, err := hostCgroups.readCPUQuota(); err == nil && q.cores > 0 {
		want = min(want, q.cores) // this process's own quota applies too
	}
	dir := filepath.Join(parent, fmt.Sprintf("headroom-load-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	t.Cleanup(func() {
		// The copy has been waited for (below), so the cgroup is empty;
		// the kernel may take a moment to agree.
		var err error
		for i := 0; i < 50; i++ {
			if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("removing the test cgroup %s: %v", dir, err)
	})
	for _, f := range []struct{ name, value string }{{"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", "20000"}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.value), 0o644); err != nil {
			t.Fatalf("setting %s: %v", f.name, err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCPUQuotaInRealCgroup$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), cgroupChildEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() { // before the cgroup is removed
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// The copy waits for a line on its stdin, so that it reads its
	// cgroup only once it is in the new one.
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatalf("moving the copy into %s: %v", dir, err)
	}
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	_ = stdin.Close()
	err = cmd.Wait()
	waited = true
	if err != nil {
		t.Fatalf("the copy in the cgroup: %v\n%s", err, out.String())
	}
	var cores float64
	var stat string
	found := false
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "cgroup child: "); ok {
			if _, err := fmt.Sscanf(rest, "quota %g stat %s", &cores, &stat); err != nil {
				t.Fatalf("the copy's line %q: %v", line, err)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("the copy did not report its quota:\n%s", out.String())
	}
	if math.Abs(cores-want) > 1e-9 || want == 0.2 && stat != filepath.Join(dir, "cpu.stat") {
		t.Errorf("the copy read %g cores from %s; want %g from %s", cores, stat, want, filepath.Join(dir, "cpu.stat"))
	}
	t.Logf("%s", out.String())
}

// cgroupChild is the copy of the test binary in the test's cgroup.
func cgroupChild(t *testing.T) {
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatalf("waiting to be moved into the cgroup: %v", err)
	}
	q, err := hostCgroups.readCPUQuota()
	if err != nil {
		t.Fatalf("reading the quota: %v", err)
	}
	fmt.Printf("cgroup child: quota %g stat %s\n", q.cores, q.stat)
	cfg := Config{Model: "closed", Clients: 2, Timeout: time.Second, Measure: time.Second, Interval: time.Second, Seed: 1,
		Ops: []workload.OpType{workload.Read, workload.Update}}
	res, _ := runCollect(t, context.Background(), cfg, &spinTarget{}, generator(t, "a"))
	th := res.Client.Throttling
	t.Logf("client CPU %.1f%% of %g cores (%d whole); throttled in %d of %d periods; threads waited %.2f s/s; limited %v: %s",
		res.ClientCPU, res.CPUs, res.Cores, th.Throttled, th.Periods, res.Client.ProcessorWait, res.ClientLimited, res.Note)
	if res.CPUs != q.cores || res.ClientCPU > 150*q.cores {
		t.Errorf("CPUs %g, client CPU %.1f%%; want %g cores and little more than %.0f%%", res.CPUs, res.ClientCPU, q.cores, 100*q.cores)
	}
	if th.Throttled == 0 || !res.ClientLimited || !strings.Contains(res.Note, "client CPU saturated") {
		t.Errorf("a spinning closed loop at its quota: throttled %d of %d periods, limited %v (%q); want throttled and client-limited", th.Throttled, th.Periods, res.ClientLimited, res.Note)
	}
}

// v1CPUCgroup is the mount point of the cgroup v1 cpu hierarchy and this
// process's cgroup in it; it skips the test when there is none.
func v1CPUCgroup(t *testing.T) (mount, self string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && f[0] != "0" && strings.Contains(","+f[1]+",", ",cpu,") {
			self = f[2]
		}
	}
	if self == "" {
		t.Skip("the cgroup v1 cpu controller is not in use")
	}
	for _, m := range []string{"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"} {
		if _, err := os.Stat(filepath.Join(m, "cpu.cfs_quota_us")); err == nil {
			return m, self
		}
	}
	t.Skip("the cgroup v1 cpu hierarchy is not mounted")
	return "", ""
}
