package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/hostinfo"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/monitor/importer"
	"github.com/headroom-dev/headroom/internal/regularfile"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/version"
)

func newImportCmd() *cobra.Command {
	var format, host string
	var runID int64
	cmd := &cobra.Command{
		Use:   "import FILE... RESULTS",
		Short: "Add resource data from iostat, sar, CloudWatch or Prometheus to a results database",
		Long: `Parse resource data recorded by other tools and store it in the results'
sample table, tagged with its source and original period, beside (or
instead of) what Headroom sampled itself.

Formats: iostat (iostat -x -t -o JSON), sar (sadf -d output), cloudwatch
(aws cloudwatch get-metric-data JSON), prometheus (node_exporter text
scrapes). Without --format each file's format is detected.

RESULTS is a results directory, a results database, or the path of a new
.db file, which is created for the imported data.`,
		Example: `  iostat -x -t -o JSON 1 60 > io.json
  headroom import io.json results/quickstart-20261123-101500
  headroom import --format cloudwatch --host db1 metrics.json volumes.db`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			files, dest := args[:len(args)-1], args[len(args)-1]
			if format != "" && !validFormat(format) {
				return &exitError{ExitUsage, fmt.Sprintf("--format %q is not supported; use one of %s", format, formatList())}
			}
			if err := importer.CheckHostName(host); host != "" && err != nil {
				return &exitError{ExitUsage, err.Error()}
			}
			_, statErr := os.Stat(dest)
			st, err := openOrCreateForImport(dest)
			if err != nil {
				return err
			}
			stored, err := importFiles(c, st, files, importer.Format(format), host, runID, dest)
			st.Close()
			if err != nil && statErr != nil && stored == 0 {
				// A new file that received nothing is not left behind.
				for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
					os.Remove(dest + suffix)
				}
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "", "input format: "+formatList()+" (default: detected)")
	cmd.Flags().StringVar(&host, "host", "", "host name for the samples (default: from the data)")
	cmd.Flags().Int64Var(&runID, "run", 0, "tie the samples to this run ID (default: the campaign)")
	return cmd
}

// importFiles imports each file in turn and returns how many it stored.
func importFiles(c *cobra.Command, st *store.Store, files []string, fm importer.Format, host string, runID int64, dest string) (int, error) {
	if runID != 0 {
		if err := checkImportRun(st, dest, runID); err != nil {
			return 0, err
		}
	}
	stored := 0
	for _, f := range files {
		ok, err := importFile(c, st, f, fm, host, runID, dest)
		if err != nil {
			return stored, err
		}
		if ok {
			stored++
		}
	}
	return stored, nil
}

// importFile streams one file into the store in one transaction: a file
// that fails to parse part-way stores nothing. A file whose content the
// store already holds is skipped with a sentence (ok false): imported
// twice, every sample would count twice.
func importFile(c *cobra.Command, st *store.Store, path string, fm importer.Format, host string, runID int64, dest string) (ok bool, err error) {
	fh, err := regularfile.Open(path)
	if err != nil {
		return false, fmt.Errorf("cannot import %s: %w", path, err)
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return false, fmt.Errorf("cannot import %s: %w", path, err)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return false, fmt.Errorf("cannot import %s: %w", path, err)
	}
	sum256 := hex.EncodeToString(h.Sum(nil))
	if before, found, err := st.FindImport(sum256); err != nil {
		return false, err
	} else if found {
		fmt.Fprintf(c.ErrOrStderr(), "skipped %s: %s already holds its content (imported as %s on %s, %d samples); importing it again would count every sample twice\n",
			path, dest, before.Name, before.At.Format(time.RFC3339), before.Samples)
		return false, nil
	}
	if fm == "" {
		f, known, err := importer.Sniff(path, fh)
		if err != nil {
			return false, err
		}
		if !known {
			return false, fmt.Errorf("%s: cannot tell its format; give --format (%s)", path, formatList())
		}
		fm = f
	}
	var sum importer.Summary
	err = st.AddImport(runID, store.ImportedFile{SHA256: sum256, Name: filepath.Base(path)}, func(add func([]monitor.Sample) error) error {
		var err error
		sum, err = importer.Read(fm, filepath.Base(path), fh, importer.Options{Host: host}, add)
		return err
	})
	if err != nil {
		return false, err
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(c.ErrOrStderr(), "warning: %s\n", w)
	}
	if sum.MoreWarnings > 0 {
		fmt.Fprintf(c.ErrOrStderr(), "warning: %s: %d more warnings like these\n", path, sum.MoreWarnings)
	}
	fmt.Fprintf(c.OutOrStdout(), "%s: %s\n", path, describeImport(fm, sum))
	if w, err := overlapsNoRun(st, sum, runID); err != nil {
		return true, err
	} else if w != "" {
		fmt.Fprintf(c.ErrOrStderr(), "warning: %s: %s\n", path, w)
	}
	return true, nil
}

// overlapsNoRun says, when the store holds runs and the imported samples
// fall in none of them (the run --run named, or any), that no analysis
// of a run will see them: their clock or time zone is probably off.
func overlapsNoRun(st *store.Store, sum importer.Summary, runID int64) (string, error) {
	if sum.Samples == 0 {
		return "", nil
	}
	runs, err := st.Runs()
	if err != nil {
		return "", err
	}
	var first, last time.Time
	n := 0
	for _, r := range runs {
		if runID != 0 && r.ID != runID {
			continue
		}
		end := r.End
		if end.IsZero() {
			end = r.Start
		}
		if r.Start.IsZero() {
			continue
		}
		n++
		if !sum.Last.Before(r.Start) && !sum.First.After(end) {
			return "", nil
		}
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if end.After(last) {
			last = end
		}
	}
	if n == 0 {
		return "", nil
	}
	what := "any of its " + format.Plural(n, "run")
	if n == 1 {
		what = "its run"
	}
	if runID != 0 {
		what = fmt.Sprintf("run %d", runID)
	}
	return fmt.Sprintf("its samples (%s to %s) overlap no time of %s (%s to %s), so no analysis of a run will see them; check the clock or time zone the file was written with",
		sum.First.UTC().Format(time.RFC3339), sum.Last.UTC().Format(time.RFC3339), what,
		first.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339)), nil
}

// checkImportRun refuses --run with an ID the store does not hold (which
// SQLite would report as a failed foreign key constraint).
func checkImportRun(st *store.Store, dest string, runID int64) error {
	runs, err := st.Runs()
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.ID == runID {
			return nil
		}
	}
	see := fmt.Sprintf("list its runs with `headroom export --table runs %s`", dest)
	if len(runs) == 0 {
		see = "it holds no runs"
	}
	return &exitError{ExitUsage, fmt.Sprintf("--run %d: %s has no run with that ID (%s); leave out --run to store the samples for the campaign", runID, dest, see)}
}

func validFormat(f string) bool {
	for _, x := range importer.Formats() {
		if string(x) == f {
			return true
		}
	}
	return false
}

func formatList() string {
	var s []string
	for _, f := range importer.Formats() {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// openOrCreateForImport opens a results store, or creates a new one for
// imported data when dest is a path ending in .db that does not exist yet.
func openOrCreateForImport(dest string) (*store.Store, error) {
	if _, err := os.Stat(dest); err != nil {
		if !strings.HasSuffix(dest, ".db") {
			return nil, fmt.Errorf("%s does not exist; pass a results directory, a results database, or a new file name ending in .db", dest)
		}
		return store.Create(dest, store.Campaign{
			Name: strings.TrimSuffix(filepath.Base(dest), ".db"), SpecYAML: "", Seed: 0,
			HostJSON: hostinfo.Collect().JSON(), ToolVersion: version.Version, CreatedAt: time.Now(),
		})
	}
	if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
		dest = filepath.Join(dest, campaign.StoreFile)
	}
	return store.Open(dest)
}

// describeImport says what a file held: how many samples of which
// resources on which hosts (every one of them) over which time span.
func describeImport(f importer.Format, sum importer.Summary) string {
	if sum.Samples == 0 {
		return fmt.Sprintf("%s data with no samples", f)
	}
	res := slices.Clone(sum.Resources)
	if len(res) > 6 {
		res = append(res[:6], fmt.Sprintf("%d more", len(res)-6))
	}
	hosts := "host " + sum.Hosts[0]
	if len(sum.Hosts) > 1 {
		hosts = "hosts " + strings.Join(sum.Hosts, ", ")
	}
	return fmt.Sprintf("%d %s samples of %s on %s, %s to %s", sum.Samples, f, strings.Join(res, ", "), hosts,
		sum.First.UTC().Format(time.RFC3339), sum.Last.UTC().Format(time.RFC3339))
}
