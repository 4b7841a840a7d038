package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/hostinfo"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/monitor/importer"
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
			st, err := openOrCreateForImport(dest)
			if err != nil {
				return err
			}
			defer st.Close()
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return fmt.Errorf("cannot read %s: %w", f, err)
				}
				fm := importer.Format(format)
				if fm == "" {
					var ok bool
					if fm, ok = importer.Detect(data); !ok {
						return fmt.Errorf("%s: cannot tell its format; give --format (%s)", f, formatList())
					}
				}
				samples, err := importer.Parse(fm, filepath.Base(f), data, importer.Options{Host: host})
				if err != nil {
					return err
				}
				if err := st.AddSamples(runID, samples); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: %s\n", f, describeImport(fm, samples))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "", "input format: "+formatList()+" (default: detected)")
	cmd.Flags().StringVar(&host, "host", "", "host name for the samples (default: from the data)")
	cmd.Flags().Int64Var(&runID, "run", 0, "tie the samples to this run ID (default: the campaign)")
	return cmd
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
// resources over which time span.
func describeImport(f importer.Format, ss []monitor.Sample) string {
	if len(ss) == 0 {
		return fmt.Sprintf("%s data with no samples", f)
	}
	res := map[string]bool{}
	first, last := ss[0].Start, ss[0].Start
	for _, s := range ss {
		res[s.Host+"/"+s.Resource] = true
		if s.Start.Before(first) {
			first = s.Start
		}
		if s.Start.After(last) {
			last = s.Start
		}
	}
	names := make([]string, 0, len(res))
	for r := range res {
		names = append(names, r)
	}
	sort.Strings(names)
	if len(names) > 6 {
		names = append(names[:6], fmt.Sprintf("and %d more", len(names)-6))
	}
	return fmt.Sprintf("%d %s samples of %s, %s to %s", len(ss), f, strings.Join(names, ", "),
		first.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339))
}
