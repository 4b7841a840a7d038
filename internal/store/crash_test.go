package store

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const crashEnv = "HEADROOM_STORE_CRASH_DB"

// TestCrashHelper is the child process of TestSIGKILL: it writes a run and
// some intervals, says so, and waits to be killed.
func TestCrashHelper(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("child process of TestSIGKILL")
	}
	s, err := Create(path, testCampaign())
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.StartRun(testRun(0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		var ivs []Interval
		for _, op := range []string{"read", "update", "insert", "scan", "rmw"} {
			ivs = append(ivs, Interval{RunID: id, Phase: "measure", Op: op, Start: testRun(0).Start.Add(time.Duration(i) * time.Second),
				Duration: time.Second, Count: 100, Hist: hist(t, int64(i), 100)})
		}
		if err := s.AddIntervals(ivs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddEvent(Event{RunID: id, Time: t0, Kind: "phase", Detail: "measure"}); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ready\n")
	select {}
}

// TestSIGKILL kills a writing process and checks that everything it
// committed is in the file, and that the run can then be marked interrupted.
func TestSIGKILL(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip()
	}
	path := filepath.Join(t.TempDir(), "killed.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code, no Close
		t.Fatal(err)
	}
	cmd.Wait()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs()
	if err != nil || len(runs) != 1 || runs[0].Status != StatusRunning {
		t.Fatalf("runs after SIGKILL: %+v, %v", runs, err)
	}
	ivs, err := s.Intervals(runs[0].ID, "")
	if err != nil || len(ivs) != 15 {
		t.Fatalf("intervals after SIGKILL: %d, %v; want all 15 committed", len(ivs), err)
	}
	if evs, err := s.Events(-1); err != nil || len(evs) != 1 {
		t.Errorf("events after SIGKILL: %v, %v", evs, err)
	}
	if n, err := s.MarkRunningInterrupted("headroom process died"); err != nil || n != 1 {
		t.Fatalf("MarkRunningInterrupted = %d, %v", n, err)
	}
	runs, _ = s.Runs()
	if want := testRun(0).Start.Add(3 * time.Second); runs[0].Status != StatusInterrupted || !runs[0].End.Equal(want) {
		t.Errorf("after marking: %+v; want interrupted, ending %v", runs[0], want)
	}
}
