package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// The CLI tests run the real binary, so that signals, exit codes and
// output streams are what a user gets.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "headroom-cli")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "headroom")
	out, err := exec.Command("go", "build", "-o", binary, "github.com/headroom-dev/headroom/cmd/headroom").CombinedOutput()
	if err != nil {
		panic("building headroom: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func headroom(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

var resultsDB = regexp.MustCompile(`results database: (\S+)`)

func TestRunPrintsSummaryAndExports(t *testing.T) {
	out, errOut, code := headroom(t, "run", "-o", t.TempDir(), "testdata/null.yaml")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"SLO     p99 <= 50ms", "Level 1/2 · 200 req/s", "Level 2/2 · 400 req/s", "read", "update", "all"} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary lacks %q:\n%s", want, out)
		}
	}
	m := resultsDB.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no results path in output:\n%s", out)
	}
	dir := filepath.Dir(m[1])

	// Every planned run completed: 2 levels x 2 repetitions, each 2 s of
	// constant arrivals, so exactly 400 or 800 requests.
	st, err := store.Open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs()
	st.Close()
	if err != nil || len(runs) != 4 {
		t.Fatalf("runs = %d, %v", len(runs), err)
	}
	for _, r := range runs {
		if r.Status != store.StatusCompleted || r.Summary.Sent+r.Summary.Dropped != int64(2*r.Level) {
			t.Fatalf("run %+v", r)
		}
	}

	// CSV export of the runs table parses and has one row per run.
	csvOut, _, code := headroom(t, "export", "--table", "runs", dir)
	if code != 0 {
		t.Fatalf("export exit %d", code)
	}
	rows, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil || len(rows) != 5 {
		t.Fatalf("runs.csv: %d rows, %v", len(rows), err)
	}
	// JSON export of the intervals table.
	jsOut, _, code := headroom(t, "export", "--format", "json", "--table", "intervals", dir)
	if code != 0 {
		t.Fatalf("export exit %d", code)
	}
	var ivs []map[string]any
	if err := json.Unmarshal([]byte(jsOut), &ivs); err != nil || len(ivs) < 4*2*2 {
		t.Fatalf("intervals.json: %d rows, %v", len(ivs), err)
	}
	// All tables into a directory.
	listing, errOut, code := headroom(t, "export", "--out", filepath.Join(t.TempDir(), "x"), dir)
	if code != 0 || strings.Count(listing, ".csv") != len(store.ExportTables()) || errOut != "" {
		t.Fatalf("export to directory: exit %d\n%s\n%s", code, listing, errOut)
	}
	// Without --out the tables go beside the results database, and it says so.
	listing, errOut, code = headroom(t, "export", dir)
	if code != 0 || strings.Count(listing, filepath.Join(dir, "export")) != len(store.ExportTables()) ||
		!strings.Contains(errOut, "written into "+filepath.Join(dir, "export")+", beside the results database (--out DIR") {
		t.Fatalf("export without --out: exit %d\n%s\n%s", code, listing, errOut)
	}
	// The report command reprints the summary from the store alone.
	rep, _, code := headroom(t, "report", dir)
	if code != 0 || !strings.Contains(rep, "Level 2/2 · 400 req/s") {
		t.Fatalf("report exit %d:\n%s", code, rep)
	}
}

// SIGINT mid-run stops at once, keeps the completed intervals, marks the run
// interrupted and exits non-zero; --resume then completes the campaign
// without repeating completed runs.
func TestInterruptAndResume(t *testing.T) {
	out := t.TempDir()
	spec := filepath.Join(t.TempDir(), "long.yaml")
	src, _ := os.ReadFile("testdata/null.yaml")
	long := strings.Replace(string(src), "measure: 2s", "measure: 3s", 1)
	if err := os.WriteFile(spec, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "run", "-o", out, spec)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Interrupt the second run once the store holds its first interval,
	// read from the results database as a user's report would: waiting on
	// progress, not on a guess of how long this machine takes to get there.
	db, seen := waitForSecondRun(t, out, cmd, exited, &e)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("hung after SIGINT\n%s", e.String())
	}
	took := time.Since(sent)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit = %v, want %d\n%s", err, ExitInterrupted, e.String())
	}
	lines := strings.Split(strings.TrimSpace(e.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "headroom: interrupted: 1 of 4 runs completed") || !strings.Contains(last, "--resume") {
		t.Fatalf("last line: %q", last)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "clitest-*"))
	if len(dirs) != 1 || filepath.Join(dirs[0], "results.db") != db {
		t.Fatalf("results dirs: %v", dirs)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs()
	if len(runs) != 2 || runs[0].Status != store.StatusCompleted || runs[1].Status != store.StatusInterrupted {
		t.Fatalf("runs after interrupt: %+v", runs)
	}
	ivs, _ := st.Intervals(runs[1].ID, "measure")
	var kept int64
	for _, iv := range ivs {
		kept += iv.Count
	}
	st.Close()
	// Nothing measured before the signal is lost.
	if kept < seen {
		t.Fatalf("interrupted run kept %d completed requests, %d were stored before the signal", kept, seen)
	}
	// At once: the run stopped short of its planned measure, and the
	// process was gone sooner than a whole run takes on this machine (the
	// first one, timed by the store).
	if m := runs[1].Summary.MeasureSecs; m <= 0 || m >= 3 {
		t.Fatalf("interrupted run measured %.2fs, want it cut short of its 3s", m)
	}
	if whole := runs[0].End.Sub(runs[0].Start); took >= whole {
		t.Fatalf("took %v to stop after SIGINT, a whole run took %v", took, whole)
	}

	_, errOut, code := headroom(t, "run", "--resume", dirs[0], "-q")
	if code != 0 {
		t.Fatalf("resume exit %d: %s", code, errOut)
	}
	st, err = store.Open(filepath.Join(dirs[0], "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ = st.Runs()
	slots := map[int]int{}
	for _, r := range runs {
		if r.Status == store.StatusCompleted {
			slots[r.Slot]++
		}
	}
	if len(runs) != 5 || len(slots) != 4 {
		t.Fatalf("after resume: %d runs, completed slots %v", len(runs), slots)
	}
	for s, n := range slots {
		if n != 1 {
			t.Fatalf("slot %d completed %d times", s, n)
		}
	}
}

// waitForSecondRun polls the results database of a campaign started in out
// until its first run has completed and its second has stored a measured
// interval; it returns the database and the completions stored so far. It
// fails the test when the process exits first or makes no progress.
func waitForSecondRun(t *testing.T, out string, cmd *exec.Cmd, exited <-chan error, stderr *bytes.Buffer) (string, int64) {
	t.Helper()
	hung := time.After(2 * time.Minute)
	for {
		select {
		case err := <-exited:
			t.Fatalf("exited (%v) before its second run stored an interval\n%s", err, stderr.String())
		case <-hung:
			cmd.Process.Kill()
			<-exited
			t.Fatalf("hung: no second run with a stored interval\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		dbs, _ := filepath.Glob(filepath.Join(out, "clitest-*", "results.db"))
		if len(dbs) != 1 {
			continue
		}
		st, err := store.OpenReadOnly(dbs[0])
		if err != nil {
			continue // not created yet
		}
		var stored int64
		runs, err := st.Runs()
		if err == nil && len(runs) == 2 && runs[0].Status == store.StatusCompleted && runs[1].Status == store.StatusRunning {
			ivs, _ := st.Intervals(runs[1].ID, "measure")
			for _, iv := range ivs {
				stored += iv.Count
			}
		}
		st.Close()
		if stored > 0 {
			return dbs[0], stored
		}
	}
}

func TestUserErrorsAreOneLine(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nload: {model: sideways}\n"), 0o644)
	cases := [][]string{
		{"run", "does-not-exist.yaml"},
		{"run"},
		{"run", "--resume", t.TempDir()},
		{"validate", bad},
		{"export", "--format", "xml", "."},
		{"export", t.TempDir()},
		{"report", "nowhere"},
		{"run", "--bogus-flag"},
	}
	for _, args := range cases {
		_, errOut, code := headroom(t, args...)
		if code == 0 {
			t.Errorf("%v: exit 0", args)
		}
		if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
			t.Errorf("%v: stack trace:\n%s", args, errOut)
		}
		if !strings.Contains(errOut, "headroom: ") && !strings.Contains(errOut, ".yaml") {
			t.Errorf("%v: no clear message: %q", args, errOut)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	out, _, code := headroom(t, "version")
	if code != 0 || !strings.HasPrefix(out, "headroom ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if flag, _, code := headroom(t, "--version"); code != 0 || flag != out {
		t.Errorf("--version: exit %d, %q; want what version prints, %q", code, flag, out)
	}
	for _, sub := range []string{"run", "validate", "export", "report", "version", "targets"} {
		out, _, code := headroom(t, sub, "--help")
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Fatalf("%s --help: %d\n%s", sub, code, out)
		}
	}
}

// A closed-loop campaign against a real SQLite file: the target is
// populated once, every run completes without errors, and the summary has
// both of workload F's operation types.
func TestSQLiteClosedLoopCampaign(t *testing.T) {
	out := runQuiet(t, "testdata/sqlite-closed.yaml")
	for _, want := range []string{"1 clients offered", "2 clients offered", "read_modify_write", "errors 0"} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary lacks %q:\n%s", want, out)
		}
	}
	db := resultsPath(t, out)
	st := openResults(t, out)
	evs, _ := st.Events(-1)
	populated := 0
	for _, e := range evs {
		if e.Kind == "populated" && strings.Contains(e.Detail, `"records":500`) {
			populated++
		}
	}
	if populated != 1 {
		t.Fatalf("populate events: %+v", evs)
	}
	runs, _ := st.Runs()
	for _, r := range runs {
		if r.Status != store.StatusCompleted || r.Summary.Errors != 0 || r.Summary.Completed < 50 {
			t.Fatalf("run %+v", r)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db), "target.db")); err != nil {
		t.Fatalf("target database not in the results directory: %v", err)
	}
}

// Inserts of later runs continue after the records earlier runs inserted:
// three runs of a half-insert workload on one SQLite file see no
// constraint errors.
func TestInsertsContinueAcrossRuns(t *testing.T) {
	out := runQuiet(t, "testdata/sqlite-inserts.yaml")
	st := openResults(t, out)
	runs, _ := st.Runs()
	if len(runs) != 3 {
		t.Fatalf("%d runs", len(runs))
	}
	for _, r := range runs {
		if r.Summary.Errors != 0 || r.Summary.Completed != 200 {
			t.Fatalf("run %d: %d errors, %d completed", r.ID, r.Summary.Errors, r.Summary.Completed)
		}
	}
}

// End to end against a designed answer: a simulated server of capacity
// 200 req/s meets the SLO at 60 req/s and fails it at 400 req/s, where the
// throughput is capped near its capacity.
func TestSLOFailsWhereCapacityIsExceeded(t *testing.T) {
	out := runQuiet(t, "testdata/queue.yaml")
	if !strings.Contains(out, "met up to 60 req/s; first fails at 400 req/s") {
		t.Fatalf("SLO verdict:\n%s", out)
	}
	st := openResults(t, out)
	runs, _ := st.Runs()
	for _, r := range runs {
		// Go timers overshoot by up to about 1 ms, so the real service
		// time is 5-6 ms: capacity 165-200 req/s.
		if r.Level == 400 && (r.Summary.Throughput < 140 || r.Summary.Throughput > 210) {
			t.Fatalf("overloaded throughput %.0f/s, want about the capacity of 165-200/s", r.Summary.Throughput)
		}
		if r.Level == 60 && (r.Summary.Throughput < 50 || r.Summary.Dropped > 0) {
			t.Fatalf("light load: %+v", r.Summary)
		}
	}
}

// Resource samples are stored per run on the same interval boundaries as
// the latency intervals, and the summary reports the host.
func TestMonitoringAlignedWithIntervals(t *testing.T) {
	out := runQuiet(t, "testdata/queue.yaml")
	if !strings.Contains(out, "  host ") || !strings.Contains(out, "CPU ") {
		t.Fatalf("summary lacks the host line:\n%s", out)
	}
	st := openResults(t, out)
	runs, _ := st.Runs()
	for _, r := range runs {
		ss, err := st.Samples(store.SampleFilter{RunID: r.ID, Resource: "cpu", Metric: "util_pct"})
		if err != nil || len(ss) < 2 {
			t.Fatalf("run %d: %d cpu samples, %v", r.ID, len(ss), err)
		}
		ivs, _ := st.Intervals(r.ID, "")
		starts := map[int64]bool{}
		for _, iv := range ivs {
			starts[iv.Start.UnixNano()] = true
		}
		for _, s := range ss {
			if !starts[s.Start.UnixNano()] || s.Period%time.Second != 0 || s.Period == 0 || s.Source != "sampled" {
				t.Fatalf("sample at %v (period %v) is not on an interval boundary of run %d", s.Start, s.Period, r.ID)
			}
		}
		self, _ := st.Samples(store.SampleFilter{RunID: r.ID, Metric: "rss_bytes"})
		if len(self) == 0 || self[0].Value <= 0 {
			t.Fatalf("run %d: no RSS samples of the headroom process", r.ID)
		}
	}
}

// populate: false keeps the data an earlier campaign loaded (review
// finding: the table used to be emptied at every start).
func TestPopulateFalseKeepsData(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "shared.db")
	write := func(name, populate string) string {
		p := filepath.Join(dir, name+".yaml")
		src := fmt.Sprintf("name: %s\ntarget: {type: sqlite, path: %s}\nworkload: {ycsb: c, record_count: 300}\nload: {model: closed, clients: [1]}\nphases: {populate: %s, warmup: 0s, measure: 1s}\n", name, db, populate)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if out, errOut, code := headroom(t, "run", "-q", "-o", dir, write("first", "true")); code != 0 {
		t.Fatalf("first: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code := headroom(t, "run", "-q", "-o", dir, write("second", "false"))
	if code != 0 {
		t.Fatalf("second: %d\n%s\n%s", code, out, errOut)
	}
	st := openResults(t, out)
	runs, _ := st.Runs()
	if len(runs) != 1 || runs[0].Summary.Errors != 0 || runs[0].Summary.Completed == 0 {
		t.Fatalf("reads of the kept records: %+v", runs)
	}
}

// headroom import stores real iostat, sar, Prometheus and CloudWatch data
// in one sample table, tagged with source and period, and names the
// expected format when a file does not match.
func TestImport(t *testing.T) {
	dir := filepath.Join("..", "monitor", "importer", "testdata")
	db := filepath.Join(t.TempDir(), "imported.db")
	files := []string{"iostat.json", "sar.csv", "node_exporter.prom", "cloudwatch.json"}
	args := []string{"import"}
	for _, f := range files {
		args = append(args, filepath.Join(dir, f))
	}
	out, errOut, code := headroom(t, append(args, db)...)
	if code != 0 || strings.Count(out, " samples of ") != len(files) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for src, period := range map[string]time.Duration{"iostat": time.Second, "sar": time.Second, "cloudwatch": time.Minute} {
		ss, err := st.Samples(store.SampleFilter{RunID: 0, Source: src})
		if err != nil || len(ss) == 0 {
			t.Fatalf("%s: %d samples, %v", src, len(ss), err)
		}
		if ss[0].Period != period {
			t.Fatalf("%s period %v, want %v", src, ss[0].Period, period)
		}
	}
	// Into another store: this one holds sar.csv already, and would skip it.
	_, errOut, code = headroom(t, "import", "--format", "iostat", filepath.Join(dir, "sar.csv"), filepath.Join(t.TempDir(), "other.db"))
	if code == 0 || !strings.Contains(errOut, `sar.csv:1: expected iostat -x -o JSON output`) {
		t.Fatalf("wrong format: exit %d, %q", code, errOut)
	}
	_, errOut, _ = headroom(t, "report", db)
	if !strings.Contains(errOut, "imported resource data only") {
		t.Fatalf("report on an import-only file: %q", errOut)
	}
}

// YCSB D reads the latest inserts; with inserts in flight they must not be
// read before they finish (review finding: "latest" picked queued inserts
// and the reads failed with not_found).
func TestLatestReadsOnlyFinishedInserts(t *testing.T) {
	out := runQuiet(t, "testdata/sqlite-latest.yaml")
	st := openResults(t, out)
	runs, _ := st.Runs()
	ivs, _ := st.Intervals(runs[0].ID, "")
	for _, iv := range ivs {
		if n := iv.ErrorKinds["not_found"]; n > 0 {
			t.Fatalf("%d not_found errors in %s interval at %v", n, iv.Op, iv.Start)
		}
	}
	if runs[0].Summary.Completed < 10000 {
		t.Fatalf("only %d requests completed", runs[0].Summary.Completed)
	}
}

// runQuiet runs the campaign of the spec file at path with -q into a
// temporary directory and returns what it printed; a non-zero exit fails
// the test.
func runQuiet(t *testing.T, path string) string {
	t.Helper()
	out, errOut, code := headroom(t, "run", "-q", "-o", t.TempDir(), path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	return out
}

// resultsPath is the results database whose path a run or probe printed.
func resultsPath(t *testing.T, out string) string {
	t.Helper()
	m := resultsDB.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no results path in output:\n%s", out)
	}
	return m[1]
}

// openResults opens the results database whose path a run or probe printed.
func openResults(t *testing.T, out string) *store.Store {
	t.Helper()
	st, err := store.Open(resultsPath(t, out))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
