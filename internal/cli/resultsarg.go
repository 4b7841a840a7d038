package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/pgstore"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/results"
)

// resultsSource is a RESULTS_DIR|results.db|postgres://... argument made
// ready to read. A campaign in a shared PostgreSQL database (pgstore) is
// copied into a temporary store file first, so every reader opens it with
// results.Open exactly as it opens a local file; close removes the copy.
type resultsSource struct {
	path   string            // the store file to read
	shared *pgstore.Campaign // the campaign copied, when arg was a URL
	tmp    string            // the temporary directory of the copy
}

// openSource resolves arg. The database's password comes from
// PGPASSWORD, PGPASSFILE, ~/.pgpass or the URL's passfile= parameter, or
// from passwordFile when the command has --password-file.
func openSource(arg, passwordFile string) (*resultsSource, error) {
	if !pgstore.IsURL(arg) {
		p, err := storePath(arg)
		if err != nil {
			return nil, err
		}
		return &resultsSource{path: p}, nil
	}
	tmp, err := os.MkdirTemp("", "headroom-shared-")
	if err != nil {
		return nil, fmt.Errorf("cannot make a temporary directory for the copy of the shared results: %v", err)
	}
	p := filepath.Join(tmp, campaign.StoreFile)
	c, err := pgstore.Fetch(context.Background(), arg, pgstore.Options{PasswordFile: passwordFile}, p)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &resultsSource{path: p, shared: &c, tmp: tmp}, nil
}

// close removes the temporary copy of a shared campaign.
func (s *resultsSource) close() {
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}

// withResults opens the results named by a RESULTS_DIR|results.db|
// postgres://... argument, as the commands that read a finished campaign
// take it, hands them to use and closes them when use returns.
func withResults(arg string, use func(r *results.Results) error) error {
	src, err := openSource(arg, "")
	if err != nil {
		return err
	}
	defer src.close()
	r, err := results.Open(src.path)
	if err != nil {
		return err
	}
	defer r.Close()
	return use(r)
}

// reportSource is headroom report: the page and JSON (beside a local store,
// or in outDir; a shared campaign's go to outDir, default the working
// directory), then the terminal summary.
func reportSource(w, errW io.Writer, arg, outDir, passwordFile string) error {
	src, err := openSource(arg, passwordFile)
	if err != nil {
		return err
	}
	defer src.close()
	if outDir == "" && src.shared != nil {
		outDir = "."
	}
	if outDir == "" {
		outDir = filepath.Dir(src.path)
	} else if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("cannot make the report directory %s: %v", outDir, err)
	}
	r, err := results.Open(src.path)
	if err != nil {
		return err
	}
	defer r.Close()
	// The page first: it also covers files of imported data only, which
	// have no load-response summary to print.
	if err := writeReportFilesIn(w, r, outDir, report.Sections...); err != nil {
		return err
	}
	if err := printSummary(w, r); err != nil {
		return err
	}
	if src.shared != nil {
		fmt.Fprintf(errW, "read from the shared results database: campaign %s (%s), pushed %s\n",
			src.shared.Name, src.shared.ID, src.shared.PushedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
		return nil
	}
	noteUnfinished(errW, r)
	return nil
}
