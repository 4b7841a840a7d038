package procfs

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// spinEnv makes the test binary, re-executed, burn one core for the given
// duration instead of running tests.
const spinEnv = "HEADROOM_PROCFS_SPIN"

func TestMain(m *testing.M) {
	if d := os.Getenv(spinEnv); d != "" {
		dur, err := time.ParseDuration(d)
		if err != nil {
			os.Exit(2)
		}
		end := time.Now().Add(dur)
		x := 0
		for time.Now().Before(end) {
			for i := 0; i < 100000; i++ {
				x += i
			}
		}
		if x == 42 {
			fmt.Println(x)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startSpinner starts a child that burns one core for d; it is killed at
// the end of the test.
func startSpinner(t *testing.T, d time.Duration) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), spinEnv+"="+d.String())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func find(ss []monitor.Sample, resource, metric string) (float64, bool) {
	for _, s := range ss {
		if s.Resource == resource && s.Metric == metric {
			return s.Value, true
		}
	}
	return 0, false
}

func mustFind(t *testing.T, ss []monitor.Sample, resource, metric string) float64 {
	t.Helper()
	v, ok := find(ss, resource, metric)
	if !ok {
		t.Fatalf("no %s %s sample in %d samples", resource, metric, len(ss))
	}
	return v
}

// sampleOver samples s (priming it), runs work (or sleeps d when work is nil), samples
// again and returns the samples and the measured period.
func sampleOver(t *testing.T, s *Sampler, d time.Duration, work func()) ([]monitor.Sample, time.Duration) {
	t.Helper()
	t0 := time.Now()
	if _, err := s.Sample(t0); err != nil {
		t.Fatal(err)
	}
	if work != nil {
		work()
	} else {
		time.Sleep(d)
	}
	t1 := time.Now()
	out, err := s.Sample(t1)
	if err != nil {
		t.Fatal(err)
	}
	return out, t1.Sub(t0)
}

// TestCPUActivity does not run in parallel with this package's other
// tests: they load the CPU too (loopback copy, direct writes, a cgroup
// spinner) and would blur what it measures.
func TestCPUActivity(t *testing.T) {
	host, err := New(Config{CPU: true, PerCore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	base, _ := sampleOver(t, host, 300*time.Millisecond, nil)
	baseUtil := mustFind(t, base, monitor.ResourceCPU, monitor.CPUUtilPct)

	child := startSpinner(t, 3*time.Second)
	pid := child.Process.Pid
	s, err := New(Config{CPU: true, PerCore: true, PIDs: []int{pid}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	time.Sleep(100 * time.Millisecond) // let the child start spinning
	out, period := sampleOver(t, s, time.Second, nil)
	procPct := mustFind(t, out, monitor.ResourceProcPrefix+strconv.Itoa(pid), monitor.ProcCPUPct)
	util := mustFind(t, out, monitor.ResourceCPU, monitor.CPUUtilPct)
	t.Logf("period %v: proc cpu_pct %.1f, host util %.1f%% (baseline %.1f%%, %d CPUs)", period, procPct, util, baseUtil, runtime.NumCPU())
	// A spinning process takes a whole core when it can; on a busy
	// machine it still gets well over a third of one.
	if procPct <= 35 {
		t.Errorf("spinning child: cpu_pct = %.1f, want close to 100 (at least 35)", procPct)
	}
	if util < 35/float64(runtime.NumCPU()) {
		t.Errorf("host util_pct = %.1f with a spinning child (baseline %.1f); want at least %.0f", util, baseUtil, 35/float64(runtime.NumCPU()))
	}
	for i := 0; i < runtime.NumCPU(); i++ {
		if _, ok := find(out, "cpu"+strconv.Itoa(i), monitor.CPUUtilPct); !ok {
			t.Errorf("no cpu%d util_pct", i)
		}
	}
	for _, x := range out {
		if x.Value < 0 || (x.Resource == monitor.ResourceCPU && x.Value > 100.0001) {
			t.Errorf("out of range: %+v", x)
		}
	}

	// The child exits: its samples stop, without an error, noted once.
	child.Process.Kill()
	child.Wait()
	for i := 0; i < 2; i++ {
		out, err = s.Sample(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := find(out, monitor.ResourceProcPrefix+strconv.Itoa(pid), monitor.ProcCPUPct); ok {
			t.Error("samples for an exited process")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], strconv.Itoa(pid)) {
		t.Errorf("warnings = %q, want one naming %d", w, pid)
	}
}

// directWrites writes n aligned blocks of size bs to path with
// O_DIRECT|O_SYNC, overwriting a preallocated file.
func directWrites(t *testing.T, path string, n, bs int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_DIRECT|syscall.O_SYNC, 0)
	if err != nil {
		t.Skipf("O_DIRECT not supported on %s: %v", filepath.Dir(path), err)
	}
	defer f.Close()
	buf, err := syscall.Mmap(-1, 0, bs, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i)
	}
	for i := 0; i < n; i++ {
		if _, err := f.WriteAt(buf, int64(i%256)*int64(bs)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDiskActivity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dev, err := DiskForPath("", dir)
	if err != nil {
		t.Skipf("cannot find the disk under %s: %v", dir, err)
	}
	const n, bs = 2000, 4096
	path := filepath.Join(dir, "direct")
	if err := os.WriteFile(path, make([]byte, 256*bs), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(path); err == nil {
		f.Sync()
		f.Close()
	}
	s, err := New(Config{Disks: []string{dev}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, period := sampleOver(t, s, 0, func() { directWrites(t, path, n, bs) })
	res := monitor.ResourceDiskPrefix + dev
	ops := mustFind(t, out, res, monitor.DiskWriteOps)
	bytes := mustFind(t, out, res, monitor.DiskWriteBytes)
	util := mustFind(t, out, res, monitor.DiskUtilPct)
	await := mustFind(t, out, res, monitor.DiskAwaitMs)
	secs := period.Seconds()
	t.Logf("%s over %v: %.0f write ops/s (%.0f ops), %.0f write B/s (%.0f B), util %.1f%%, await %.3f ms, queue %.2f",
		dev, period, ops, ops*secs, bytes, bytes*secs, util, await, mustFind(t, out, res, monitor.DiskQueueLength))
	if ops*secs < 0.95*n {
		t.Errorf("write ops in the interval = %.0f, want at least %d", ops*secs, n)
	}
	// Other writers (the journal: O_SYNC updates mtime) add some; the
	// O_DIRECT data must be there and must not be dwarfed.
	if b := bytes * secs; b < 0.95*n*bs || b > 4*n*bs {
		t.Errorf("bytes written in the interval = %.0f, want about %d", b, n*bs)
	}
	if util <= 0 || await <= 0 {
		t.Errorf("util %.2f, await %.3f: want > 0", util, await)
	}
}

func TestNetLoopback(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Interfaces: []string{"lo"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const total = 64 << 20
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	out, period := sampleOver(t, s, 0, func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64<<10)
		for sent := 0; sent < total; sent += len(buf) {
			if _, err := c.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
		if n := <-got; n != total {
			t.Fatalf("received %d of %d bytes", n, total)
		}
	})
	rx := mustFind(t, out, "net:lo", monitor.NetRxBytes)
	tx := mustFind(t, out, "net:lo", monitor.NetTxBytes)
	pk := mustFind(t, out, "net:lo", monitor.NetRxPackets)
	floor := total / period.Seconds() * 0.5
	t.Logf("lo over %v: rx %.0f B/s, tx %.0f B/s, rx %.0f packets/s (sent %d B)", period, rx, tx, pk, total)
	if rx <= floor || tx <= floor || pk <= 0 {
		t.Errorf("lo rx %.0f tx %.0f B/s, want both > %.0f", rx, tx, floor)
	}
}

// TestCgroupV1Throttling puts a spinning child under a 20% CPU quota and
// checks the cgroup's CPU use and throttling.
func TestCgroupV1Throttling(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a cgroup")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	ms := parseCgroupMounts("/", mi)
	cpuM, acctM := ms.v1["cpu"], ms.v1["cpuacct"]
	if cpuM == nil || acctM == nil {
		t.Skip("the cgroup v1 cpu and cpuacct controllers are not mounted (this test covers v1 only)")
	}
	name := fmt.Sprintf("/headroom-test-%d", os.Getpid())
	dirs := []string{cpuM.dir(name)}
	if acctM.point != cpuM.point {
		dirs = append(dirs, acctM.dir(name))
	}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Skipf("cannot create cgroup %s (%v); run as root with a writable cgroup v1 cpu hierarchy", d, err)
		}
	}
	child := startSpinner(t, 4*time.Second)
	removeAll := func() {
		child.Process.Kill()
		child.Wait()
		for _, d := range dirs {
			for i := 0; i < 50; i++ {
				if err := syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	t.Cleanup(removeAll)
	write := func(file, v string) {
		if err := os.WriteFile(file, []byte(v), 0o644); err != nil {
			t.Fatalf("cannot write %s: %v", file, err)
		}
	}
	write(filepath.Join(dirs[0], "cpu.cfs_period_us"), "100000")
	write(filepath.Join(dirs[0], "cpu.cfs_quota_us"), "20000")
	for _, d := range dirs {
		write(filepath.Join(d, "cgroup.procs"), strconv.Itoa(child.Process.Pid))
	}
	s, err := New(Config{Cgroups: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, period := sampleOver(t, s, time.Second, nil)
	res := monitor.ResourceCgroupPrefix + name
	cpu := mustFind(t, out, res, monitor.ProcCPUPct)
	thr := mustFind(t, out, res, monitor.CgroupThrottledPct)
	thrMs := mustFind(t, out, res, monitor.CgroupThrottledMs)
	t.Logf("%s over %v: cpu_pct %.1f, throttled_pct %.0f, throttled_ms_per_s %.0f", name, period, cpu, thr, thrMs)
	if cpu < 10 || cpu > 30 {
		t.Errorf("cpu_pct under a 20%% quota = %.1f, want 10-30", cpu)
	}
	if thr <= 0 || thrMs <= 0 {
		t.Errorf("throttled_pct %.1f, throttled_ms_per_s %.1f: want > 0", thr, thrMs)
	}

	// The cgroup is removed: its samples stop, noted once, no error.
	removeAll()
	for i := 0; i < 2; i++ {
		out, err := s.Sample(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := find(out, res, monitor.ProcCPUPct); ok {
			t.Error("samples for a removed cgroup")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], name) {
		t.Errorf("warnings = %q, want one naming %s", w, name)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	// A PID above pid_max cannot exist.
	badPID := 1 << 23
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			badPID = n + 1
		}
	}
	for _, c := range []struct {
		cfg  Config
		name string
	}{
		{Config{Disks: []string{"nosuchdisk9"}}, `"nosuchdisk9"`},
		{Config{Interfaces: []string{"nosuchif9"}}, `"nosuchif9"`},
		{Config{PIDs: []int{badPID}}, strconv.Itoa(badPID)},
		{Config{Cgroups: []string{"/no/such/cgroup-9"}}, `"/no/such/cgroup-9"`},
		{Config{}, "nothing to sample"},
	} {
		s, err := New(c.cfg)
		if err == nil {
			s.Close()
			t.Errorf("%+v: no error", c.cfg)
			continue
		}
		msg := err.Error()
		t.Log(msg)
		if !strings.Contains(msg, c.name) || strings.Contains(msg, "\n") || strings.Count(msg, ". ") > 0 {
			t.Errorf("error %q: want one sentence naming %s", msg, c.name)
		}
	}
	// An unknown disk's fix names the spec field, not Config's AllDisks.
	if _, err := New(Config{Disks: []string{"nosuchdisk9"}}); err == nil || !strings.Contains(err.Error(), "monitor.disks") || strings.Contains(err.Error(), "AllDisks") {
		t.Errorf("unknown disk: %v, want a fix naming monitor.disks", err)
	}
}

func TestWholeDisks(t *testing.T) {
	t.Parallel()
	s, err := New(Config{AllDisks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, d := range s.disk.disks {
		if strings.HasPrefix(d.name, "loop") || strings.HasPrefix(d.name, "ram") {
			t.Errorf("AllDisks includes %s", d.name)
		}
		if _, err := os.Stat("/sys/block/" + d.name); err != nil {
			t.Errorf("AllDisks includes %s, not a whole disk", d.name)
		}
	}
}

// BenchmarkSample measures one call with host CPU, per-core CPU, memory,
// all disks, all interfaces and one process (this one). It also reports
// the CPU time per call (user+system, from getrusage) and the overhead in
// percent of one core at 1 s and 100 ms intervals.
func BenchmarkSample(b *testing.B) {
	s, err := New(Config{CPU: true, PerCore: true, Memory: true, AllDisks: true, AllInterfaces: true, PIDs: []int{os.Getpid()}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	at := time.Now()
	if _, err := s.Sample(at); err != nil {
		b.Fatal(err)
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		at = at.Add(time.Second)
		out, err := s.Sample(at)
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpuNs := float64((ru1.Utime.Nano()-ru0.Utime.Nano())+(ru1.Stime.Nano()-ru0.Stime.Nano())) / float64(b.N)
	b.ReportMetric(cpuNs, "cpu-ns/op")
	b.ReportMetric(float64(n), "samples/op")
	b.ReportMetric(100*cpuNs/1e9, "%core@1s")
	b.ReportMetric(100*cpuNs/1e8, "%core@100ms")
}
