package cli

import (
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/spec"
	// store registers the sqlite driver the results database uses.
	_ "github.com/headroom-dev/headroom/internal/store"
)

// A results store written by the previous release (schema 1, no fact
// tables: internal/results/testdata/v1/treatments.db) still reports after a
// spec field it used was renamed: its stored spec text says max_inflight,
// which today's parser rejects, and headroom report prints and writes both
// treatments with their own levels and SLOs from what the text says.
func TestReportCompatOldStoreAfterFieldRename(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	b, err := os.ReadFile(filepath.Join("..", "results", "testdata", "v1", "treatments.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	file, text := renameStoredSpecField(t, db, "max_in_flight:", "max_inflight:")
	if _, err := spec.Parse(file, []byte(text)); err == nil || !strings.Contains(err.Error(), "max_inflight") {
		t.Fatalf("spec.Parse of the renamed text: %v; want it rejected for max_inflight", err)
	}

	out, errOut, code := headroom(t, "report", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	small, big, ok := strings.Cut(out, "treatment 2/2: big")
	if !ok || !strings.Contains(small, "v1-treatments · treatment 1/2: small · open loop, poisson arrivals · YCSB B (zipfian) on sqlite") {
		t.Fatalf("summary lacks the treatments' headers:\n%s", out)
	}
	if !strings.HasPrefix(big, " (sets slo.threshold=8ms, workload.record_count=4000) · open loop") {
		t.Errorf("big's header does not say what it sets:\n%s", big)
	}
	for name, part := range map[string]string{"small": small, "big": big} {
		for _, want := range []string{"2 levels x 2 repetitions", "Level 1/2 · 500 req/s offered · 2 repetition(s)", "Level 2/2 · 2000 req/s offered · 2 repetition(s)"} {
			if !strings.Contains(part, want) {
				t.Errorf("%s's summary lacks %q:\n%s", name, want, part)
			}
		}
	}
	if want := "SLO     p95 <= 5ms (read): met at every level, up to 2000 req/s"; !strings.Contains(small, want) {
		t.Errorf("small's summary lacks %q:\n%s", want, small)
	}
	if want := "SLO     p95 <= 8ms (read): met at every level, up to 2000 req/s"; !strings.Contains(big, want) {
		t.Errorf("big's summary lacks %q:\n%s", want, big)
	}

	got := readReport(t, filepath.Join(dir, page.JSONFile))
	var v1 struct{ Sections []page.Section }
	readJSON(t, filepath.Join("testdata", "v1-treatments-load-response.json"), &v1)
	if len(v1.Sections) != 2 {
		t.Fatalf("golden file has %d sections", len(v1.Sections))
	}
	for _, old := range v1.Sections {
		sec, ok := sectionByID(got, old.ID)
		if !ok {
			t.Errorf("report.json has no section %s", old.ID)
			continue
		}
		want := old.Summary
		if old.ID == "t-big-load-response" {
			// The release that wrote the file showed the base SLO in every
			// treatment's load response; big's own is 8ms.
			want = strings.Replace(want, "p95 ≤ 5ms", "p95 ≤ 8ms", 1)
		}
		if sec.Summary != want {
			t.Errorf("%s summary\n got %s\nwant %s", old.ID, sec.Summary, want)
		}
		for _, ob := range old.Blocks {
			if ob.Table == nil {
				continue
			}
			nt, ok := tableByID(sec, ob.Table.ID)
			if !ok {
				t.Errorf("%s has no table %s", old.ID, ob.Table.ID)
				continue
			}
			cols := len(ob.Table.Columns)
			if ob.Table.ID == "t-big-levels-latency" {
				if !strings.Contains(nt.Title, "p95 ≤ 8ms (read)") {
					t.Errorf("big's latency table %q does not name its SLO", nt.Title)
				}
				cols = 4 // load, p50, p95, p99; within and the verdict are against 8ms now
			}
			sameCells(t, ob.Table, nt, cols)
		}
	}
}

// renameStoredSpecField rewrites the spec text stored in the campaign row
// of the results database at db, replacing from with to, and returns the
// spec's file name and the new text.
func renameStoredSpecField(t *testing.T, db, from, to string) (file, text string) {
	t.Helper()
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var old string
	if err := conn.QueryRow(`SELECT spec_file, spec_yaml FROM campaign`).Scan(&file, &old); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Parse(file, []byte(old)); err != nil {
		t.Fatalf("the stored spec should parse before the rename: %v", err)
	}
	text = strings.Replace(old, from, to, 1)
	if text == old {
		t.Fatalf("the stored spec has no %q", from)
	}
	if _, err := conn.Exec(`UPDATE campaign SET spec_yaml = ?`, text); err != nil {
		t.Fatal(err)
	}
	return file, text
}

func readReport(t *testing.T, path string) page.Report {
	t.Helper()
	var r page.Report
	readJSON(t, path, &r)
	return r
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func sectionByID(r page.Report, id string) (page.Section, bool) {
	for _, s := range r.Sections {
		if s.ID == id {
			return s, true
		}
	}
	return page.Section{}, false
}

func tableByID(s page.Section, id string) (*page.Table, bool) {
	for _, b := range s.Blocks {
		if b.Table != nil && b.Table.ID == id {
			return b.Table, true
		}
	}
	return nil, false
}

// sameCells compares the first cols columns of two tables: titles, and
// every cell's text, mark and numbers (to 1e-9, relative).
func sameCells(t *testing.T, want, got *page.Table, cols int) {
	t.Helper()
	if len(got.Columns) < cols || len(got.Rows) != len(want.Rows) {
		t.Errorf("%s: %d columns, %d rows; want %d rows with at least %d columns", want.ID, len(got.Columns), len(got.Rows), len(want.Rows), cols)
		return
	}
	for j := range cols {
		if got.Columns[j] != want.Columns[j] {
			t.Errorf("%s column %d: %+v, want %+v", want.ID, j, got.Columns[j], want.Columns[j])
		}
	}
	near := func(a, b *float64) bool {
		if a == nil || b == nil {
			return a == b
		}
		return math.Abs(*a-*b) <= 1e-9*math.Max(1, math.Abs(*b))
	}
	for i, row := range want.Rows {
		for j := range cols {
			w, g := row[j], got.Rows[i][j]
			if g.Text != w.Text || g.Mark != w.Mark || !near(g.Value, w.Value) || !near(g.SE, w.SE) {
				t.Errorf("%s row %d column %s: %q %v±%v %q, want %q %v±%v %q", want.ID, i, want.Columns[j].Title,
					g.Text, deref(g.Value), deref(g.SE), g.Mark, w.Text, deref(w.Value), deref(w.SE), w.Mark)
			}
		}
	}
}

func deref(x *float64) any {
	if x == nil {
		return nil
	}
	return *x
}
