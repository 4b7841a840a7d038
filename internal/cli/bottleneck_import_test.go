package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/bottleneck/importgen"
)

// importScenario writes the scenario's files of one format for its three
// hosts and imports them with the real command into a new store.
func importScenario(t *testing.T, s *importgen.Scenario, format string) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"import"}
	for _, h := range s.Hosts {
		var data []byte
		name := h
		switch format {
		case "sar":
			data, name = s.Sar(h), h+".csv"
		case "iostat":
			data, name = s.Iostat(h), h+".json"
		case "prometheus":
			data, name = s.NodeExporter(h), h+".prom"
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	db := filepath.Join(dir, format+".db")
	out, errOut, code := headroom(t, append(args, db)...)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	return db
}

// bottleneckJSON runs headroom bottleneck --json with args.
func bottleneckJSON(t *testing.T, args ...string) importedJSON {
	t.Helper()
	out, errOut, code := headroom(t, append([]string{"bottleneck", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("bottleneck: exit %d\n%s\n%s", code, out, errOut)
	}
	var got importedJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return got
}

// checkWindows compares the classes per host/resource and window with the
// scenario's design, from window first on.
func checkWindows(t *testing.T, s *importgen.Scenario, got importedJSON, first int) {
	t.Helper()
	for i, w := range got.Windows {
		d := first + i
		if w.Error != "" || !w.From.Equal(s.WindowStart(d)) || w.Intervals != s.Seconds {
			t.Fatalf("window %d: from %v, %d intervals, error %q", d, w.From, w.Intervals, w.Error)
		}
		classes := map[string]string{}
		for _, r := range w.Resources {
			classes[r.Resource] = r.Class
		}
		for id, want := range s.Expected(d) {
			if classes[id] != want {
				t.Errorf("window %d (%s): %s is %q, want %q; finding: %s", d, s.Windows[d].Class, id, classes[id], want, w.Finding)
			}
		}
	}
}

// The finding of each window, in the sentence form of a run's.
var windowLine = regexp.MustCompile(`(?m)^  (\S+) to (\S+): (.*)$`)

// Generated sar, iostat and node_exporter data of three hosts, each over
// five windows designed to show one class, imported into a new store:
// headroom bottleneck classifies each window as designed.
func TestBottleneckOfImportedData(t *testing.T) {
	s := importgen.FiveClasses(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 60, 11)
	starts := []string{"single bottleneck: db1/cpu, critically saturated in 50% of 1s intervals",
		"oscillatory bottleneck: db1/cpu and db2/disk:vda saturate in turn",
		"concurrent bottlenecks: db1/disk:vda and db3/cpu saturate independently, each part of the time",
		"simultaneous bottlenecks: db2/cpu and db3/disk:vda are saturated in nearly every interval",
		"no bottleneck: no resource was above 95% utilisation"}
	for _, format := range []string{"sar", "iostat", "prometheus"} {
		t.Run(format, func(t *testing.T) {
			db := importScenario(t, s, format)
			got := bottleneckJSON(t, "--window", "1m", db)
			if strings.Join(got.Sources, ",") != format || strings.Join(got.Hosts, ",") != "db1,db2,db3" || got.Lambda != "1s" || len(got.Windows) != 5 {
				t.Fatalf("sources %v, hosts %v, lambda %s, %d windows", got.Sources, got.Hosts, got.Lambda, len(got.Windows))
			}
			checkWindows(t, s, got, 0)

			// The text: the store has no runs, so the imported data is
			// what is printed, one sentence per window.
			out, errOut, code := headroom(t, "bottleneck", "--window", "1m", db)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			if !strings.HasPrefix(out, "Bottlenecks of imported data ("+format+"; hosts db1, db2, db3; 1s intervals, saturated above 95%)\n") ||
				strings.Contains(out, "no runs to analyse") {
				t.Fatalf("output:\n%s", out)
			}
			lines := windowLine.FindAllStringSubmatch(out, -1)
			if len(lines) != 5 {
				t.Fatalf("%d window lines:\n%s", len(lines), out)
			}
			for i, m := range lines {
				if m[1] != s.WindowStart(i).Format(time.RFC3339) || !strings.HasPrefix(m[3], starts[i]) {
					t.Errorf("window %d: %q", i, m[0])
				}
			}

			// Windows named by time: relative to the start, or absolute.
			got = bottleneckJSON(t, "--from", "+2m", "--to", "2026-03-01T12:04:00Z", "--window", "60s", db)
			if len(got.Windows) != 2 {
				t.Fatalf("%d windows from +2m to 12:04", len(got.Windows))
			}
			checkWindows(t, s, got, 2)
			got = bottleneckJSON(t, "--from", "1m", "--to", "+2m", db)
			if len(got.Windows) != 1 {
				t.Fatalf("%d windows from 1m to 2m", len(got.Windows))
			}
			checkWindows(t, s, got, 1)
		})
	}
}

// A store with runs keeps its run analysis and says that imported data
// is there; --imported adds its classification after the runs'.
func TestBottleneckRunsAndImportedData(t *testing.T) {
	dir := bottleneckStore(t)
	s := importgen.FiveClasses(time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC), 12, 2)
	csv := filepath.Join(t.TempDir(), "db1.csv")
	if err := os.WriteFile(csv, s.Sar("db1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := headroom(t, "import", csv, dir); code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	runLine := "  level 10, repetition 1 (10.0 ok/s): single bottleneck: h1/cpu, critically saturated in 100% of 1s intervals"
	out, errOut, code := headroom(t, "bottleneck", dir)
	if code != 0 || !strings.HasPrefix(out, "Bottlenecks (1s intervals, saturated above 95%)\n"+runLine) ||
		!strings.HasSuffix(out, "\nThe store also holds imported resource data (sar of db1); the analysis above covers its runs only: add --imported to classify it too.\n") ||
		strings.Contains(out, "Bottlenecks of imported data") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = headroom(t, "bottleneck", "--imported", "--window", "12s", dir)
	if code != 0 || !strings.HasPrefix(out, "Bottlenecks (1s intervals, saturated above 95%)\n"+runLine) || strings.Contains(out, "also holds imported") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	_, imported, ok := strings.Cut(out, "\n\nBottlenecks of imported data (sar; hosts db1; 1s intervals, saturated above 95%)\n")
	if lines := windowLine.FindAllStringSubmatch(imported, -1); !ok || len(lines) != 5 ||
		!strings.HasPrefix(lines[0][3], "single bottleneck: db1/cpu") || !strings.HasPrefix(lines[4][3], "no bottleneck:") {
		t.Fatalf("imported part:\n%s", out)
	}
}

// Mistakes in the imported analysis's options get one sentence each.
func TestBottleneckImportedErrors(t *testing.T) {
	s := importgen.FiveClasses(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 12, 4)
	db := importScenario(t, s, "sar")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "noon"}, `--from: time "noon" is neither an RFC 3339 time`},
		{[]string{"--from", "+2m"}, "holds no imported data, which runs from 2026-03-01T12:00:00Z to 2026-03-01T12:01:00Z"},
		{[]string{"--window", "100ms"}, "window 100ms is shorter than one interval of 1s"},
		{[]string{"--host", "web9"}, "no imported CPU or disk utilisation (util_pct of cpu, disk: or volume:) of hosts web9"},
	} {
		out, errOut, code := headroom(t, append(append([]string{"bottleneck"}, c.args...), db)...)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
	}
}
