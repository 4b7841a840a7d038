package bottleneck

import (
	"testing"
	"time"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/analysis/bottleneck/importgen"
	"github.com/headroom-dev/headroom/internal/monitor/importer"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// A store of imported sar data only (no runs) gets the bottleneck section
// of that data in the report: one row for the whole span whose finding is
// the analysis's, and the sources and hosts in its source line.
func TestReportSectionsOfImportedData(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "imported", CreatedAt: t0})
	must := resultstest.Must(t)
	s := importgen.FiveClasses(t0, 30, 5)
	for _, h := range s.Hosts {
		ss, err := importer.Parse(importer.FormatSar, h+".csv", s.Sar(h), importer.Options{})
		must(err)
		must(st.AddSamples(0, ss))
	}
	r, err := results.New(st)
	must(err)
	want, err := ab.FromImported(r, ab.ImportedOptions{})
	must(err)
	secs, err := ReportSections(r)
	must(err)
	if len(secs) != 1 || secs[0].ID != "bottlenecks-imported" || len(secs[0].Blocks) == 0 || secs[0].Blocks[0].Table == nil {
		t.Fatalf("sections %+v", secs)
	}
	tb := secs[0].Blocks[0].Table
	if len(tb.Rows) != 1 || tb.Rows[0][2].Text != want.Windows[0].Result.Finding || secs[0].Summary != want.Windows[0].Result.Finding ||
		tb.Rows[0][0].Text != "2026-03-01T12:00:00Z" {
		t.Fatalf("rows %+v, summary %q; want the finding %q", tb.Rows, secs[0].Summary, want.Windows[0].Result.Finding)
	}
	if want.Windows[0].Result.Finding == "" || len(want.Hosts) != 3 {
		t.Fatalf("the analysis found nothing to say: %+v", want)
	}

	// A store with neither runs nor imported data has no section.
	empty, err := results.New(resultstest.Create(t, "", store.Campaign{Name: "empty", CreatedAt: t0}))
	must(err)
	if secs, err := ReportSections(empty); err != nil || len(secs) != 0 {
		t.Fatalf("empty store: %+v %v", secs, err)
	}
}
