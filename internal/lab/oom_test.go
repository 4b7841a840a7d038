package lab

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
)

// A process that needs more memory than its host's memory_mib is killed by
// the kernel, and the host's OOM count says so (the campaign then names the
// limit instead of a bare "signal: killed").
func TestOOMKillsCountsTheMemoryLimitsKills(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	l := upLab(t, "t-oom", []HostConfig{host("m1", "small", 1, 32, 0)})
	before, ok := l.OOMKills("m1")
	if !ok {
		t.Skip("this kernel does not count OOM kills per cgroup (memory.oom_control has no oom_kill)")
	}
	// 128 MiB of written bytes in a 32 MiB host (this machine has no swap
	// for it to go to; with swap the kernel may page instead of killing).
	cmd := exec.Command("python3", "-c", "b = b'x' * (128 << 20); print(len(b))")
	if err := l.Command("m1", cmd, 0, 0); err != nil {
		t.Fatal(err)
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the process was not stopped by the limit: %v", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the process ended with %v, want SIGKILL", err)
	}
	after, _ := l.OOMKills("m1")
	if after <= before {
		t.Fatalf("OOM kills %d before, %d after", before, after)
	}
	if n, ok := l.OOMKills("nosuch"); ok || n != 0 {
		t.Fatalf("an unknown host: %d, %v", n, ok)
	}
}
