package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// A real campaign's results render as report.html and report.json, with an
// analysis's section added after the built-in ones.
func TestWriteReportFiles(t *testing.T) {
	out, errOut, code := headroom(t, "run", "-o", t.TempDir(), "testdata/null.yaml")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	m := resultsDB.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no results path in output:\n%s", out)
	}
	added := func(r *results.Results) ([]page.Section, error) {
		return []page.Section{{ID: "later", Title: "A later analysis", Summary: fmt.Sprintf("It read %d runs.", len(r.Runs()))}}, nil
	}
	var w bytes.Buffer
	if err := writeReportFiles(&w, m[1], added); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(m[1])
	if want := "Report: " + filepath.Join(dir, page.HTMLFile); !strings.HasPrefix(w.String(), want) {
		t.Errorf("output %q, want it to start with %q", w.String(), want)
	}
	r := readReport(t, filepath.Join(dir, page.JSONFile))
	ids := sectionIDs(r)
	if strings.Join(ids, ",") != "answer,campaign,runs,load-response,intervals,events,later" || r.Sections[6].Summary != "It read 4 runs." {
		t.Errorf("sections %v, last %+v", ids, r.Sections[len(r.Sections)-1])
	}
	// 2 levels x 2 repetitions of the null target, SLO p99 <= 50ms.
	if r.Facts.Completed != 4 || !strings.Contains(r.Sections[3].Summary, "The SLO p99 ≤ 50ms (all operations)") {
		t.Errorf("facts %+v, load response %q", r.Facts, r.Sections[3].Summary)
	}
	html, err := os.ReadFile(filepath.Join(dir, page.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(html, []byte("<svg ")); n < 8 {
		t.Errorf("report.html has %d charts", n)
	}
}

// sectionIDs lists a report's section IDs in page order.
func sectionIDs(r page.Report) []string {
	var ids []string
	for _, s := range r.Sections {
		ids = append(ids, s.ID)
	}
	return ids
}
