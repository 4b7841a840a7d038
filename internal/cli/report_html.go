package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/report/answer"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// writeReportFiles builds the report of the store at dbPath with the
// sections of builders after page.Build's (report.Sections for the whole
// report), the answer card first, and writes report.html and report.json beside the database. It
// tells w where the page is.
func writeReportFiles(w io.Writer, dbPath string, builders ...report.Builder) error {
	r, err := results.Open(dbPath)
	if err != nil {
		return err
	}
	defer r.Close()
	return writeReportFilesIn(w, r, filepath.Dir(dbPath), builders...)
}

// writeReportFilesIn is writeReportFiles of opened results, writing into
// dir. The summary printed beside it reads the same r, so each analysis is
// computed once (results.Memo) and both say the same.
func writeReportFilesIn(w io.Writer, r *results.Results, dir string, builders ...report.Builder) error {
	rep, err := page.Build(r)
	if err != nil {
		return err
	}
	for _, build := range builders {
		secs, err := build(r)
		if err != nil {
			return err
		}
		rep.Add(secs...)
	}
	card, err := answer.Build(r)
	if err != nil {
		return err
	}
	rep.PutAnswer(card) // after every section: it links only to sections the report has
	if err := page.Write(dir, rep); err != nil {
		return err
	}
	fmt.Fprintf(w, "Report: %s (the same numbers: %s)\n", filepath.Join(dir, page.HTMLFile), filepath.Join(dir, page.JSONFile))
	return nil
}
