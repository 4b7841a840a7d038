package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// startRun starts `headroom args...` in the background and returns it with
// its stderr.
func startRun(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &e
}

// stopWith sends sig to cmd and checks that it ends promptly with the
// shell's code for that signal and one line that starts with first.
func stopWith(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer, sig syscall.Signal, first string) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := cmd.Wait()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("took %v to stop after %v", took, sig)
	}
	ee, ok := err.(*exec.ExitError)
	if want := 128 + int(sig); !ok || ee.ExitCode() != want {
		t.Fatalf("exit after %v = %v, want %d\n%s", sig, err, want, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "headroom: "+first) || !strings.Contains(last, "--resume") {
		t.Fatalf("last line after %v: %q", sig, last)
	}
}

// SIGHUP (the terminal went away) stops a run as SIGTERM does: exit 129,
// the run marked interrupted, one line. While a resumed campaign runs, a
// second `run --resume` on the same directory is refused, naming the
// holder's PID; SIGTERM then ends the first with 143.
func TestHangupStopsAndOneWriterPerDirectory(t *testing.T) {
	out := t.TempDir()
	cmd, e := startRun(t, "run", "-q", "-o", out, "testdata/null.yaml")
	time.Sleep(1200 * time.Millisecond)
	stopWith(t, cmd, e, syscall.SIGHUP, "stopped by SIGHUP")
	dirs, _ := filepath.Glob(filepath.Join(out, "clitest-*"))
	if len(dirs) != 1 {
		t.Fatalf("results dirs: %v", dirs)
	}
	st, err := store.Open(filepath.Join(dirs[0], "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs()
	st.Close()
	if len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
		t.Fatalf("runs after SIGHUP: %+v", runs)
	}

	first, e1 := startRun(t, "run", "-q", "--resume", dirs[0])
	time.Sleep(700 * time.Millisecond)
	_, errOut, code := headroom(t, "run", "-q", "--resume", dirs[0])
	want := fmt.Sprintf("is in use by another headroom process (PID %d)", first.Process.Pid)
	if code != ExitError || !strings.Contains(errOut, want) {
		t.Fatalf("second writer: exit %d, %q; want %q", code, errOut, want)
	}
	stopWith(t, first, e1, syscall.SIGTERM, "stopped by SIGTERM")

	// The report of the unfinished campaign says so and how to finish it.
	_, errOut, code = headroom(t, "report", dirs[0])
	if code != 0 || !strings.Contains(errOut, "this campaign is unfinished: ") || !strings.Contains(errOut, "headroom run --resume "+dirs[0]) {
		t.Fatalf("report of an unfinished campaign: exit %d, %q", code, errOut)
	}
	if _, errOut, code = headroom(t, "run", "-q", "--resume", dirs[0]); code != 0 {
		t.Fatalf("resume to the end: exit %d, %s", code, errOut)
	}
	// Finished: the report says nothing of the kind, and another resume
	// has nothing to do.
	if _, errOut, _ = headroom(t, "report", dirs[0]); strings.Contains(errOut, "unfinished") {
		t.Fatalf("report of a finished campaign: %q", errOut)
	}
	stdout, errOut, code := headroom(t, "run", "-q", "--resume", dirs[0])
	if code != 0 || !strings.Contains(errOut, "nothing to resume: all 4 planned runs in "+dirs[0]+" have completed") || stdout != "" {
		t.Fatalf("resume of a finished campaign: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
}

// A campaign that fails before its first run (here: the password variable
// is not set) keeps no empty results directory and prints no summary.
func TestFailureBeforeTheFirstRunLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nopw.yaml")
	src := `name: nopw
target: {type: redis, address: 127.0.0.1:1, password_env: HEADROOM_TEST_UNSET_PASSWORD}
workload: {ycsb: c, record_count: 10}
load: {model: closed, clients: [1]}
phases: {warmup: 0s, measure: 1s}
output: out
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, errOut, code := headroom(t, "run", "-q", path)
	if code == 0 || !strings.Contains(errOut, "HEADROOM_TEST_UNSET_PASSWORD is not set") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(stdout, "levels") || strings.Contains(stdout, "results database") {
		t.Fatalf("an empty summary was printed: %q", stdout)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(left) != 0 {
		t.Fatalf("results directories left behind: %v", left)
	}
}
