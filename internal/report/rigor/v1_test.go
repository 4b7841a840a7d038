package rigor

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// The v1 treatments store (sqlite, treatments small and big, SLO p95 of
// read within 5 ms, big setting 8 ms) still gives one curve per treatment,
// each judged by its own treatment's SLO, and the variation verdicts;
// building the sections leaves the file as it was.
func TestV1StoreSections(t *testing.T) {
	r := resultstest.OpenV1(t, "treatments.db")
	path := r.Path()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secs := sectionsOf(t, r)
	validates(t, secs)
	sec := mustSection(t, secs, "capacity")
	for _, want := range []string{"small: no knee", "the SLO p95 ≤ 5ms is met at every level, up to 2000 req/s. big:", "the SLO p95 ≤ 8ms is met at every level"} {
		if !strings.Contains(sec.Summary, want) {
			t.Errorf("capacity summary lacks %q:\n%s", want, sec.Summary)
		}
	}
	for _, id := range []string{"capacity-t1-table", "capacity-t2-table"} {
		tb := table(t, secs, id)
		slo := col(t, tb, "SLO")
		if len(tb.Rows) != 2 {
			t.Fatalf("%s: %d rows, want the 2 levels", id, len(tb.Rows))
		}
		for _, row := range tb.Rows {
			if row[slo].Text != "pass" || value(row[col(t, tb, "reps")]) != 2 {
				t.Errorf("%s row %+v; want 2 repetitions passing the SLO", id, row)
			}
		}
	}
	if title := chartByID(t, secs, "capacity-t2-latency").Line.Rules[0].Label; title != "SLO 8ms" {
		t.Errorf("big's latency chart marks %q, want its own SLO 8ms", title)
	}
	if v := sectionByID(secs, "variability"); v == nil || !strings.Contains(v.Summary, "(a) small: tau_se < 5% of tau at 1 of 2 levels; not at 500 req/s (23.2%)") {
		t.Errorf("variability section %+v", v)
	}
	if sectionByID(secs, "scaling") != nil || sectionByID(secs, "probe") != nil {
		t.Error("no lab and no probe: no scaling or probe section expected")
	}
	fs, err := Findings(r, "big")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fs {
		got[f.Label] = f.Text
	}
	if got["SLO"] != "the SLO p95 ≤ 8ms is met at every level, up to 2000 req/s" || !strings.Contains(got["Capacity"], "ok/s at 2000 req/s") {
		t.Errorf("findings of big %v", got)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// WAL mode: a write would land in the -wal file first.
	wal, err := os.Stat(path + "-wal")
	if !bytes.Equal(before, after) || err == nil && wal.Size() > 0 {
		t.Error("building the report wrote to the results file")
	}
}
