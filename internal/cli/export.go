package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/store"
)

func newExportCmd() *cobra.Command {
	var format, table, out string
	var hist historyExport // --history: export_history.go
	cmd := &cobra.Command{
		Use:   "export RESULTS_DIR|results.db",
		Short: "Write stored results as CSV or JSON",
		Long: `Write the results tables (campaign, runs, intervals, events, samples) as CSV or
JSON. With --table, one table goes to standard output (or --out FILE).
Without it, every table is written into the directory --out (default
RESULTS_DIR/export) as <table>.<format>. With --history, the consistency
history of every run that has one (history-run<ID>.jsonl or .edn), or of
--run ID to standard output.`,
		Example: `  headroom export results/quickstart-20261123-101500
  headroom export --format json --table runs results/quickstart-20261123-101500 > runs.json
  headroom export --history --run 3 --format edn results/staleness-20261123-101500 > history.edn`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if hist.wanted(c) {
				return hist.export(c, args[0], format, table, out)
			}
			if format != "csv" && format != "json" {
				return &exitError{ExitUsage, fmt.Sprintf("--format %q is not supported; use csv or json", format)}
			}
			if table != "" && !slices.Contains(store.ExportTables(), table) {
				return &exitError{ExitUsage, fmt.Sprintf("--table %q does not exist; use one of %s", table, strings.Join(store.ExportTables(), ", "))}
			}
			path, err := storePath(args[0])
			if err != nil {
				return err
			}
			st, err := store.Open(path)
			if err != nil {
				return err
			}
			defer st.Close()
			if table != "" {
				var w io.Writer = dataOut(c)
				if out != "" {
					f, err := os.Create(out)
					if err != nil {
						return fmt.Errorf("cannot write %s: %w", out, err)
					}
					defer f.Close()
					w = f
				}
				return st.Export(w, table, format)
			}
			dir := out
			if dir == "" {
				dir = filepath.Join(filepath.Dir(path), "export")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("cannot create %s: %w", dir, err)
			}
			for _, t := range store.ExportTables() {
				file := filepath.Join(dir, t+"."+format)
				f, err := os.Create(file)
				if err != nil {
					return fmt.Errorf("cannot write %s: %w", file, err)
				}
				err = st.Export(f, t, format)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), file)
			}
			if out == "" {
				fmt.Fprintf(c.ErrOrStderr(), "%d tables written into %s, beside the results database (--out DIR writes them elsewhere)\n", len(store.ExportTables()), dir)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "csv", "csv or json (with --history: jsonl or edn)")
	cmd.Flags().StringVarP(&table, "table", "t", "", "one table to standard output: "+strings.Join(store.ExportTables(), ", "))
	cmd.Flags().StringVarP(&out, "out", "o", "", "output file (with --table, or --history --run) or directory")
	hist.flags(cmd)
	return cmd
}
