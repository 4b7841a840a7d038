package cli

import (
	"bufio"
	"database/sql"
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

func importInput(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func importedSamples(t *testing.T, db, resource string) int {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ss, err := st.Samples(store.SampleFilter{RunID: -1, Resource: resource})
	if err != nil {
		t.Fatal(err)
	}
	return len(ss)
}

// An empty file said "cannot tell its format"; it says it is empty, with
// or without --format.
func TestImportEmptyFile(t *testing.T) {
	empty := importInput(t, "empty.json", "")
	db := filepath.Join(t.TempDir(), "new.db")
	_, errOut, code := headroom(t, "import", empty, db)
	if code == 0 || strings.TrimSpace(errOut) != "headroom: "+empty+" is empty: there is no data to import" {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	_, errOut, code = headroom(t, "import", "--format", "cloudwatch", empty, db)
	if code == 0 || strings.TrimSpace(errOut) != "headroom: empty.json is empty: there is no data to import" {
		t.Fatalf("exit %d, %q", code, errOut)
	}
}

// `import --run 99999` answered "FOREIGN KEY constraint failed (787)".
func TestImportUnknownRun(t *testing.T) {
	io := filepath.Join("..", "monitor", "importer", "testdata", "iostat.json")
	db := filepath.Join(t.TempDir(), "new.db")
	if out, errOut, code := headroom(t, "import", io, db); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code := headroom(t, "import", "--run", "99999", io, db)
	if code != ExitUsage || strings.Contains(errOut, "FOREIGN KEY") ||
		!strings.Contains(errOut, "--run 99999: "+db+" has no run with that ID (it holds no runs); leave out --run") {
		t.Fatalf("exit %d, %q", code, errOut)
	}

	res := resultsPath(t, runQuiet(t, "testdata/null.yaml"))
	_, errOut, code = headroom(t, "import", "--run", "99999", io, res)
	if code != ExitUsage || !strings.Contains(errOut, "list its runs with `headroom export --table runs "+res+"`") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
}

// The summary line named the first host only (it listed host/resource
// pairs up to six); it names every host.
func TestImportSummaryNamesEveryHost(t *testing.T) {
	var hosts []string
	for i := range 4 {
		hosts = append(hosts, fmt.Sprintf(`{"nodename": "db%d", "statistics": [
 {"timestamp": "2026-11-23T10:22:11+0000", "disk": []},
 {"timestamp": "2026-11-23T10:22:12+0000", "avg-cpu": {"user": 10, "idle": 90},
  "disk": [{"disk_device": "vda", "r/s": 1, "w/s": 2}, {"disk_device": "vdb", "r/s": 1, "w/s": 2}, {"disk_device": "vdc", "r/s": 1, "w/s": 2},
   {"disk_device": "vdd", "r/s": 1, "w/s": 2}, {"disk_device": "vde", "r/s": 1, "w/s": 2}, {"disk_device": "vdf", "r/s": 1, "w/s": 2}]}]}`, i+1))
	}
	f := importInput(t, "hosts.json", `{"sysstat": {"hosts": [`+strings.Join(hosts, ",")+`]}}`)
	out, errOut, code := headroom(t, "import", f, filepath.Join(t.TempDir(), "new.db"))
	want := "samples of cpu, disk:vda, disk:vdb, disk:vdc, disk:vdd, disk:vde, 1 more on hosts db1, db2, db3, db4, "
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("exit %d\n%s%s\nwant %q", code, out, errOut, want)
	}
}

// A file damaged at its end stores nothing (it used to be rejected only
// after earlier parts were parsed, or accepted); one with a repeated
// iostat report says which it kept.
func TestImportDamagedFiles(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new.db")
	cut := importInput(t, "node.prom", "# headroom-scrape-time: 1795429370000\nnode_disk_reads_completed_total{device=\"vda\"} 1200\n"+
		"# headroom-scrape-time: 1795429380000\nnode_disk_reads_completed_total{device=\"vda\"} 1300\n"+
		"# headroom-scrape-time: 1795429390000\nnode_disk_reads_completed_total{device=\"vda\"} 1")
	_, errOut, code := headroom(t, "import", cut, db)
	if code == 0 || !strings.Contains(errOut, "node.prom:6: expected a newline after the last sample") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("a refused file into a new database left %s behind (%v)", db, err)
	}

	cw := importInput(t, "cw.json", `{"Period": 60, "MetricDataResults": [{"Label": "vol-1 VolumeReadOps", "Stat": "Sum",
 "Timestamps": ["2026-11-23T10:00:00Z", "0001-01-01T00:00:00Z"], "Values": [60, 120]}]}`)
	// The good file before it is stored, the bad one not at all.
	_, errOut, code = headroom(t, "import", filepath.Join("..", "monitor", "importer", "testdata", "cloudwatch.json"), cw, db)
	if code == 0 || !strings.Contains(errOut, `cw.json:1: MetricDataResults[0].Timestamps[1]: expected a time between 1970-01-01 and 2200-01-01, got "0001-01-01T00:00:00Z"`) {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	if n := importedSamples(t, db, "volume:vol-1"); n != 0 {
		t.Fatalf("a refused file stored %d samples", n)
	}
	before := importedSamples(t, db, "")
	if before == 0 {
		t.Fatal("the good file before the refused one stored nothing")
	}

	rep := importInput(t, "io.json", `{"sysstat": {"hosts": [{"nodename": "h", "statistics": [
 {"timestamp": "2026-11-23T10:22:11+0000"},
 {"timestamp": "2026-11-23T10:22:12+0000", "avg-cpu": {"user": 10, "idle": 90}},
 {"timestamp": "2026-11-23T10:22:12+0000", "avg-cpu": {"user": 30, "idle": 70}},
 {"timestamp": "2026-11-23T10:22:13+0000", "avg-cpu": {"user": 40, "idle": 60}}]}]}}`)
	out, errOut, code := headroom(t, "import", rep, db)
	if code != 0 || !strings.Contains(errOut, "warning: io.json: sysstat.hosts[0].statistics[2].timestamp: report 2 has the same time as report 1") ||
		!strings.Contains(out, "6 iostat samples of cpu on host h") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if n := importedSamples(t, db, "") - before; n != 6 {
		t.Fatalf("%d samples stored, want 6 (user, idle and util of two reports)", n)
	}
}

// A valid 305 MB iostat file needed more than 6 GB (about 20 times the
// file): the import streams it, so the process's memory does not grow
// with the file. Two large files, 12 and 24 MiB, past the sizes where the
// store's cache and the heap settle, must peak at nearly the same resident
// size; a 2 KB file's peak is logged for scale. (A difference between a
// large and a tiny file is the wrong measure: it is the settled cache and
// heap, whose size depends on the collector, not on the file; in CI on
// 2026-12-03 it was 17 MiB.)
func TestImportLargeFileBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 36 MiB of files")
	}
	dir := t.TempDir()
	small := filepath.Join("..", "monitor", "importer", "testdata", "iostat.json")
	base, _ := importRSS(t, small, filepath.Join(dir, "small.db"))
	var rss [2]int64
	for i, size := range []int{12 << 20, 24 << 20} {
		path := filepath.Join(dir, fmt.Sprintf("big%d.json", i))
		reports := writeIostat(t, path, size)
		var out string
		rss[i], out = importRSS(t, path, filepath.Join(dir, fmt.Sprintf("big%d.db", i)))
		if want := (reports - 1) * (6 + 4*8); !strings.Contains(out, fmt.Sprintf("%d iostat samples", want)) {
			t.Fatalf("output %q, want %d samples", out, want)
		}
	}
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	t.Logf("peak RSS %.1f MiB for a 2 KB file, %.1f MiB for 12 MiB, %.1f MiB for 24 MiB", mib(base), mib(rss[0]), mib(rss[1]))
	// Holding even the extra 12 MiB of input once would add 12 MiB; half
	// of that leaves room for the collector's timing.
	if grew := rss[1] - rss[0]; grew > 6<<20 {
		t.Errorf("the 24 MiB file peaked %.1f MiB above the 12 MiB one; a streaming import does not grow with the file", mib(grew))
	}
	if over := rss[1] - base; over > 24<<20 {
		t.Errorf("the 24 MiB file peaked %.1f MiB above a 2 KB one, more than the file itself", mib(over))
	}
}

// writeIostat writes a valid sysstat JSON report file of about size bytes
// (one report a second, four disks each) and returns its report count.
func writeIostat(t *testing.T, path string, size int) (reports int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"sysstat": {"hosts": [{"nodename": "big", "statistics": [`)
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for written := 0; written < size; reports++ {
		if reports > 0 {
			w.WriteString(",")
		}
		n, _ := fmt.Fprintf(w, "\n{\"timestamp\": %q, \"avg-cpu\": {\"user\": 12.5, \"nice\": 0, \"system\": 4.25, \"iowait\": 3.1, \"steal\": 0, \"idle\": 80.15}, \"disk\": [",
			t0.Add(time.Duration(reports)*time.Second).Format("2006-01-02T15:04:05-0700"))
		written += n
		for d := range 4 {
			if d > 0 {
				w.WriteString(",")
			}
			n, _ = fmt.Fprintf(w, "\n  {\"disk_device\": \"vd%c\", \"r/s\": 10.00, \"w/s\": 250.00, \"d/s\": 0.00, \"rkB/s\": 400.00, \"wkB/s\": 16000.00, \"rrqm/s\": 0.00, \"wrqm/s\": 1.00, \"r_await\": 0.50, \"w_await\": 1.20, \"rareq-sz\": 4.00, \"wareq-sz\": 64.00, \"aqu-sz\": 0.35, \"util\": 41.20}", 'a'+d)
			written += n
		}
		w.WriteString("]}")
	}
	w.WriteString("]}]}}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return reports
}

// importRSS imports file into db and returns the peak resident size of
// the process in bytes, and its output.
func importRSS(t *testing.T, file, db string) (int64, string) {
	t.Helper()
	cmd := exec.Command(binary, "import", file, db)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10, string(out) // KiB on Linux
}

// A FIFO without a writer made import wait forever (issue 36); it and a
// directory get one sentence.
func TestImportRefusesAFIFOAndADirectory(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "sar.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "new.db")
	for path, want := range map[string]string{
		fifo: "headroom: cannot import " + fifo + ": " + fifo + " is a FIFO (named pipe), not a regular file; give a file",
		dir:  "headroom: cannot import " + dir + ": " + dir + " is a directory, not a regular file; give a file",
	} {
		_, errOut, code := headroom(t, "import", "--format", "sar", path, db)
		if code == 0 || strings.TrimSpace(errOut) != want {
			t.Errorf("%s: exit %d, %q, want %q", path, code, errOut, want)
		}
	}
}

// ESC and BEL in --host reached the terminal raw (issue 36): the flag is
// refused in one sentence, the characters escaped in it, and nothing is
// stored.
func TestImportRefusesAHostNameWithControlCharacters(t *testing.T) {
	in := importInput(t, "x.prom", "node_disk_writes_completed_total{device=\"sda\"} 100 1795429370000\n")
	db := filepath.Join(t.TempDir(), "new.db")
	_, errOut, code := headroom(t, "import", "--host", "db\x1b[31m\a", in, db)
	if code == 0 || strings.ContainsAny(errOut, "\x1b\a") || !strings.Contains(errOut, `--host "db\x1b[31m\a" holds control characters; give a plain host name`) {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused import left %s: %v", db, err)
	}
}

// The same file imported twice stored every sample twice (issue 36): a
// file whose content the store already holds, under any name, is skipped
// with a sentence, and the samples are counted once; another file still
// imports beside it.
func TestImportSkipsAFileAlreadyImported(t *testing.T) {
	data := "node_disk_writes_completed_total{device=\"sda\"} 100 1795429370000\n" +
		"node_disk_writes_completed_total{device=\"sda\"} 400 1795429380000\n"
	in := importInput(t, "a.prom", data)
	db := filepath.Join(t.TempDir(), "new.db")
	if _, errOut, code := headroom(t, "import", in, db); code != 0 {
		t.Fatalf("first import: exit %d, %s", code, errOut)
	}
	once := importedSamples(t, db, "disk:sda")
	copyOf := importInput(t, "copy.prom", data)
	other := importInput(t, "b.prom", "node_disk_writes_completed_total{device=\"sda\"} 400 1795429380000\n"+
		"node_disk_writes_completed_total{device=\"sda\"} 700 1795429390000\n")
	out, errOut, code := headroom(t, "import", in, copyOf, other, db)
	if code != 0 {
		t.Fatalf("second import: exit %d, %s", code, errOut)
	}
	for _, f := range []string{in, copyOf} {
		if !strings.Contains(errOut, "skipped "+f+": "+db+" already holds its content (imported as a.prom on ") ||
			!strings.Contains(errOut, "importing it again would count every sample twice") {
			t.Errorf("no skip sentence for %s: %q", f, errOut)
		}
	}
	if !strings.Contains(out, other+": ") {
		t.Errorf("the other file was not imported: %q", out)
	}
	if got := importedSamples(t, db, "disk:sda"); once == 0 || got != 2*once {
		t.Errorf("%d samples after importing a.prom once and b.prom once (a.prom alone: %d)", got, once)
	}
}

// Samples imported into a store whose runs they do not overlap were
// stored silently, and no analysis of a run ever saw them; import says so.
// Samples taken during the run import without a word.
func TestImportSaysWhenSamplesOverlapNoRun(t *testing.T) {
	res := resultsPath(t, runQuiet(t, "testdata/null.yaml"))
	old := filepath.Join("..", "monitor", "importer", "testdata", "iostat.json")
	_, errOut, code := headroom(t, "import", old, res)
	if code != 0 || !strings.Contains(errOut, "overlap no time of any of its 4 runs (") || !strings.Contains(errOut, "check the clock or time zone") {
		t.Fatalf("samples from before the run: exit %d, %q", code, errOut)
	}
	st, err := store.Open(res)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs()
	st.Close()
	if err != nil || len(runs) != 4 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	at := func(d time.Duration) string { return runs[0].Start.Add(d).Format("2006-01-02T15:04:05-0700") }
	during := importInput(t, "during.json", `{"sysstat": {"hosts": [{"nodename": "db1", "statistics": [
 {"timestamp": "`+at(time.Second)+`", "avg-cpu": {"user": 10, "idle": 90}, "disk": []},
 {"timestamp": "`+at(2*time.Second)+`", "avg-cpu": {"user": 12, "idle": 88}, "disk": []}]}]}}`)
	out, errOut, code := headroom(t, "import", during, res)
	if code != 0 || strings.Contains(errOut, "overlap no time") {
		t.Fatalf("samples during the run: exit %d\n%s%s", code, out, errOut)
	}
}

// Text from a results database reaches the terminal escaped (issue 36):
// a host name holding ESC, BEL and an 8-bit CSI, written into a store as
// a foreign or damaged one may hold it, prints as \u001b and \u0007 in
// the summary of `report` and in `bottleneck`, never raw; `export` of the
// table to standard output is data and keeps its bytes as stored.
func TestStoredControlCharactersReachTheTerminalEscaped(t *testing.T) {
	db := resultsPath(t, runQuiet(t, "testdata/null.yaml"))
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	const evil = "vm\x1b]0;owned\x07\x9b31m"
	if _, err := conn.Exec(`UPDATE sample SET host = ?`, evil); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report", db}, {"bottleneck", db}} {
		out, errOut, code := headroom(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", args[0], code, out, errOut)
		}
		if strings.ContainsAny(out+errOut, "\x1b\x07") || strings.Contains(out+errOut, "\x9b") {
			t.Errorf("%s printed a raw control character:\n%q", args[0], out+errOut)
		}
		if !strings.Contains(out, `vm\u001b]0;owned\u0007`) {
			t.Errorf("%s does not name the host, escaped:\n%s", args[0], out)
		}
	}
	out, errOut, code := headroom(t, "export", "--table", "samples", "--format", "csv", db)
	if code != 0 || !strings.Contains(out, evil) {
		t.Errorf("export to standard output changed the stored bytes: exit %d\n%q%s", code, out, errOut)
	}
}
