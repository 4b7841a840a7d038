package campaign

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
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

// lockHelperEnv names the results directory the helper process locks.
const lockHelperEnv = "HEADROOM_LOCK_HELPER_DIR"

// TestLockHelperProcess is not a test: run by lockedByChild, it holds the
// locks of a results directory, as a running campaign does, until its
// standard input closes.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("helper process of the lock tests")
	}
	l, err := lockDir(dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	l.release()
	os.Exit(0)
}

// lockedByChild starts a second process holding dir's locks and returns
// its PID; the process ends with the test.
func lockedByChild(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("the helper did not take the lock: %q, %v", line, err)
	}
	return cmd.Process.Pid
}

// newStoreIn makes an empty results database in dir, closed.
func newStoreIn(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, StoreFile)
	st, err := store.Create(p, store.Campaign{Name: "locked"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Deleting the side file .headroom.lock does not unlock the directory: the
// lock is also on the directory and the database, and the refusal still
// names the holder's PID.
func TestLockSurvivesDeletedLockFile(t *testing.T) {
	dir := t.TempDir()
	newStoreIn(t, dir)
	pid := lockedByChild(t, dir)
	if err := os.Remove(filepath.Join(dir, LockFile)); err != nil {
		t.Fatal(err)
	}
	l, err := lockDir(dir)
	want := fmt.Sprintf("is in use by another headroom process (PID %d)", pid)
	if err == nil || !strings.Contains(err.Error(), want) {
		l.release()
		t.Fatalf("with the lock file deleted: %v, want an error containing %q", err, want)
	}
}

// A database moved out of a locked directory (to resume it elsewhere)
// stays locked by the process writing it.
func TestLockFollowsMovedDatabase(t *testing.T) {
	dir := t.TempDir()
	db := newStoreIn(t, dir)
	pid := lockedByChild(t, dir)
	other := t.TempDir()
	if err := os.Rename(db, filepath.Join(other, StoreFile)); err != nil {
		t.Fatal(err)
	}
	l, err := lockDir(other)
	want := fmt.Sprintf("is in use by another headroom process (PID %d)", pid)
	if err == nil || !strings.Contains(err.Error(), want) {
		l.release()
		t.Fatalf("the moved database: %v, want an error containing %q", err, want)
	}
}

// The flock on results.db is not SQLite's lock (SQLite takes POSIX fcntl
// locks): while another process holds it, this one reads the store; while
// this one holds it, it writes and reads the store.
func TestLockOnDatabaseLeavesSQLiteAlone(t *testing.T) {
	dir := t.TempDir()
	db := newStoreIn(t, dir)
	lockedByChild(t, dir)
	ro, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatalf("reading while another process holds the lock: %v", err)
	}
	if _, err := ro.Runs(); err != nil {
		t.Fatalf("reading while another process holds the lock: %v", err)
	}
	ro.Close()

	mine := t.TempDir()
	db = newStoreIn(t, mine)
	l, err := lockDir(mine)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.StartRun(store.Run{Model: "open", Level: 10, Repetition: 1})
	if err != nil {
		t.Fatalf("writing under the lock: %v", err)
	}
	if err := st.FinishRun(id, store.StatusCompleted, "", time.Time{}, store.RunSummary{}); err != nil {
		t.Fatalf("writing under the lock: %v", err)
	}
	reader, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := reader.Runs()
	reader.Close()
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusCompleted {
		t.Fatalf("reading beside the writer under the lock: %d runs, %v", len(runs), err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
