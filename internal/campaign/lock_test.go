package campaign

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two writers on one results directory: the second is refused with one
// sentence naming the holder's PID, and the directory is free again once
// the first closes.
func TestSecondWriterIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: locked
target: {type: null}
workload: {ycsb: c, record_count: 10}
load: {model: closed, clients: [1]}
output: out
`)
	first, err := NewSession(s, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ReopenSession(first.Dir)
	want := fmt.Sprintf("is in use by another headroom process (PID %d)", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second writer: %v, want an error containing %q", err, want)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, _, err := ReopenSession(first.Dir)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close()
}

// The lock is the kernel's: a holder that dies releases it, so a crashed
// run never leaves its directory locked.
func TestLockDiesWithItsHolder(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) is not installed (util-linux)")
	}
	dir := t.TempDir()
	// One process that holds the lock on an open descriptor and sleeps.
	holder := exec.Command("sh", "-c", `exec 9>>"$1" && flock 9 && exec sleep 30`, "sh", filepath.Join(dir, LockFile))
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := lockDir(dir)
		if err != nil {
			if !strings.Contains(err.Error(), "is in use by another") {
				t.Fatalf("while flock(1) holds it: %v", err)
			}
			break
		}
		l.release()
		if time.Now().After(deadline) {
			t.Fatal("flock(1) never took the lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = holder.Process.Kill()
	_ = holder.Wait()
	l, err := lockDir(dir)
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	l.release()
}
