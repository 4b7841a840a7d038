package procfs

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A server's worker that ends before sampling starts is left out when it
// is transient, and is an error when it was asked for by PID.
func TestTransientPIDsThatEndedAreLeftOut(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := cmd.Process.Pid // reaped: no /proc entry any more
	self := os.Getpid()
	s, err := New(Config{TransientPIDs: []int{gone, self}})
	if err != nil {
		t.Fatalf("an ended transient process failed the sampler: %v", err)
	}
	defer s.Close()
	if len(s.procs) != 1 || s.procs[0].pid != self {
		t.Errorf("sampled %d processes; want only this one (%d)", len(s.procs), self)
	}
	if _, err := New(Config{PIDs: []int{gone}}); err == nil || !strings.Contains(err.Error(), "process") {
		t.Errorf("an ended process asked for by PID: err = %v; want an error naming the process", err)
	}
}
