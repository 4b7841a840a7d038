package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// historyStore writes a store of three runs, the first and the third
// with a designed consistency history, and returns its directory and
// the histories by run ID.
func historyStore(t *testing.T) (string, map[int64][]history.Op) {
	t.Helper()
	dir := t.TempDir()
	st := resultstest.MoneyStore(t, dir, "hist", []resultstest.MoneyConfig{{Name: "rf3", Nodes: 3, Capacity: 100}},
		[]float64{50, 100, 150}, 1, 10*time.Millisecond, 2*time.Second, results.Plan{})
	runs, err := st.Runs()
	if err != nil || len(runs) != 3 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	want := map[int64][]history.Op{
		runs[0].ID: {
			{Process: 0, Kind: history.Write, Key: "ck0", Value: 1, InvokeNS: 100, CompleteNS: 300, Outcome: history.OK, Level: "QUORUM"},
			{Process: 1, Kind: history.Read, Key: "ck0", Value: 0, InvokeNS: 400, CompleteNS: 450, Outcome: history.OK, Replica: "db2", Level: "ONE"},
			{Process: 2, Kind: history.Read, Key: "ck0", Value: 1, InvokeNS: 410, CompleteNS: 470, Outcome: history.OK, Level: "QUORUM"},
			{Process: 1, Kind: history.Read, Key: `odd"key`, Value: history.NoValue, InvokeNS: 500, CompleteNS: 900, Outcome: history.Info, Level: "ONE"},
		},
		runs[2].ID: {
			{Process: 0, Kind: history.Write, Key: "ck1", Value: 1, InvokeNS: 10, CompleteNS: 20, Outcome: history.Fail, Level: "primary"},
			{Process: 3, Kind: history.Read, Key: "ck1", Value: 0, InvokeNS: 30, CompleteNS: 35, Outcome: history.OK, Replica: "replica1", Level: "replica"},
		},
	}
	for id, ops := range want {
		if err := st.AppendHistory(id, ops); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, want
}

// One run's history goes to standard output as JSON lines (the default)
// or EDN, exactly as the history package writes it, and reads back
// unchanged.
func TestExportHistoryOneRun(t *testing.T) {
	dir, want := historyStore(t)
	var id int64
	for k := range want {
		id = max(id, k)
	}
	run := "--run=" + itoa(id)
	out, errOut, code := headroom(t, "export", "--history", run, dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, err := history.ReadJSONL(strings.NewReader(out))
	if err != nil || !reflect.DeepEqual(got, want[id]) {
		t.Fatalf("JSON lines read back as %+v (%v), want %+v\n%s", got, err, want[id], out)
	}
	out, errOut, code = headroom(t, "export", "--history", run, "--format", "edn", dir)
	var edn bytes.Buffer
	if err := history.WriteEDN(&edn, want[id]); err != nil {
		t.Fatal(err)
	}
	if code != 0 || out != edn.String() || !strings.HasPrefix(out, "{:index 0, :time 10, :type :invoke, :process 0, :f :txn, :value [[:w \"ck1\" 1]]}\n") {
		t.Fatalf("edn: exit %d %s\n%s\nwant\n%s", code, errOut, out, edn.String())
	}
	// --out names the file of one run.
	file := filepath.Join(t.TempDir(), "one.jsonl")
	if _, errOut, code := headroom(t, "export", "--history", run, "--out", file, dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != mustJSONL(t, want[id]) {
		t.Errorf("%s holds %q (%v)", file, b, err)
	}
}

// Without --run, every run with a history gets its file under --out
// (default RESULTS_DIR/export); runs without one get none.
func TestExportHistoryEveryRun(t *testing.T) {
	dir, want := historyStore(t)
	out, errOut, code := headroom(t, "export", "--history", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "export", "history-run*"))
	if len(files) != len(want) || strings.Count(out, "\n") != len(want) {
		t.Fatalf("files %v, output %q; want one per run with a history (%d)", files, out, len(want))
	}
	for id, ops := range want {
		file := filepath.Join(dir, "export", "history-run"+itoa(id)+".jsonl")
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := history.ReadJSONL(f)
		f.Close()
		if err != nil || !reflect.DeepEqual(got, ops) {
			t.Errorf("%s read back as %+v (%v), want %+v", file, got, err, ops)
		}
		if !strings.Contains(out, file+"\n") {
			t.Errorf("output does not name %s:\n%s", file, out)
		}
	}
	edn := t.TempDir()
	if _, errOut, code := headroom(t, "export", "--history", "-f", "edn", "-o", edn, dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for id, ops := range want {
		var w bytes.Buffer
		if err := history.WriteEDN(&w, ops); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(edn, "history-run"+itoa(id)+".edn"))
		if err != nil || string(b) != w.String() {
			t.Errorf("run %d's EDN = %q (%v), want %q", id, b, err, w.String())
		}
	}
}

// Bad requests end with one sentence that says what to do.
func TestExportHistoryErrors(t *testing.T) {
	dir, want := historyStore(t)
	var ids []int64
	for id := range want {
		ids = append(ids, id)
	}
	lo, hi := min(ids[0], ids[1]), max(ids[0], ids[1])
	bare := resultstest.MoneyStore(t, "", "bare", []resultstest.MoneyConfig{{Name: "one", Nodes: 1, Capacity: 10}}, []float64{5}, 1, time.Millisecond, time.Second, results.Plan{})
	barePath := bare.Path()
	bare.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--history", barePath}, ExitError, barePath + " has no consistency history: run a campaign with workload.consistency\n"},
		{[]string{"--history", "--run", "2", dir}, ExitError, "run 2 has no consistency history; the runs with one are " + itoa(lo) + " (treatment rf3), " + itoa(hi) + " (treatment rf3)\n"},
		{[]string{"--history", "--format", "csv", dir}, ExitUsage, `--format "csv" cannot write a history; use jsonl or edn` + "\n"},
		{[]string{"--history", "--table", "runs", dir}, ExitUsage, "--table and --history cannot be combined"},
		{[]string{"--run", "1", dir}, ExitUsage, "--run picks the run whose history --history writes; add --history\n"},
	} {
		_, errOut, code := headroom(t, append([]string{"export"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("export %v: exit %d, %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	// The tables still export as before beside --history's flags.
	if out, errOut, code := headroom(t, "export", "--table", "runs", dir); code != 0 || strings.Count(out, "\n") != 4 {
		t.Errorf("table export: exit %d %s\n%s", code, errOut, out)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustJSONL(t *testing.T, ops []history.Op) string {
	t.Helper()
	var b bytes.Buffer
	if err := history.WriteJSONL(&b, ops); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
