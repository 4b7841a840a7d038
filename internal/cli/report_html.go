package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"

	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/store"
)

// sectionBuilder makes report sections from a results store; each analysis
// that joins the report (capacity, variability, bottlenecks, ESL/SLP...)
// is one of these.
type sectionBuilder func(st *store.Store) ([]page.Section, error)

// reportSections are the analyses' sections, in report order, after the
// ones page.Build makes. Each analysis registers its builder from an init
// function in its own file (report_*.go) with registerSection.
var reportSections []sectionBuilder

var sectionOrder []int

// registerSection adds an analysis's sections to every report; order sorts
// them (capacity 100, variability 200, scaling 300, probe 400, ESL/SLP 500,
// bottlenecks 600).
func registerSection(order int, b sectionBuilder) {
	i := sort.SearchInts(sectionOrder, order+1)
	sectionOrder = slices.Insert(sectionOrder, i, order)
	reportSections = slices.Insert(reportSections, i, b)
}

// writeReportFiles builds the report of the store at dbPath, appends the
// sections of extra in order, and writes report.html and report.json beside
// the database. It tells w where the page is.
func writeReportFiles(w io.Writer, dbPath string, extra ...sectionBuilder) error {
	st, err := store.Open(dbPath)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := page.Build(st)
	if err != nil {
		return err
	}
	for _, build := range extra {
		secs, err := build(st)
		if err != nil {
			return err
		}
		r.Add(secs...)
	}
	dir := filepath.Dir(dbPath)
	if err := page.Write(dir, r); err != nil {
		return err
	}
	fmt.Fprintf(w, "Report: %s (the same numbers: %s)\n", filepath.Join(dir, page.HTMLFile), filepath.Join(dir, page.JSONFile))
	return nil
}
