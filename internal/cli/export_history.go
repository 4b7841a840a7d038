package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/results"
)

// historyExport is headroom export --history: the operation history of a
// consistency run (workload.consistency), as the history package writes
// it — JSON lines for any reader, Jepsen EDN for Elle (docs/consistency.md,
// "Exporting a history").
type historyExport struct {
	on  bool
	run int64
}

func (h *historyExport) flags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&h.on, "history", false, "write the consistency history of the runs instead of the tables, as --format jsonl (default) or edn (Jepsen EDN, for Elle)")
	cmd.Flags().Int64Var(&h.run, "run", 0, "with --history: only this run's history, to standard output (or --out FILE)")
}

// wanted reports whether the command line asked for a history.
func (h *historyExport) wanted(c *cobra.Command) bool {
	return h.on || c.Flags().Changed("run")
}

// export writes one run's history to standard output (or the file out),
// or every run's into the directory out (default RESULTS_DIR/export) as
// history-run<ID>.<format>, printing each file's path.
func (h *historyExport) export(c *cobra.Command, arg, format, table, out string) error {
	switch {
	case !h.on:
		return &exitError{ExitUsage, "--run picks the run whose history --history writes; add --history"}
	case table != "":
		return &exitError{ExitUsage, "--table and --history cannot be combined; --history writes the consistency history, not a table"}
	}
	if !c.Flags().Changed("format") {
		format = "jsonl"
	}
	if !slices.Contains(history.Formats, format) {
		return &exitError{ExitUsage, fmt.Sprintf("--format %q cannot write a history; use %s", format, strings.Join(history.Formats, " or "))}
	}
	path, err := storePath(arg)
	if err != nil {
		return err
	}
	r, err := results.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	runs, err := r.RunsWithHistory()
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return fmt.Errorf("%s has no consistency history: run a campaign with workload.consistency", arg)
	}
	if c.Flags().Changed("run") {
		if !slices.ContainsFunc(runs, func(hr results.HistoryRun) bool { return hr.ID == h.run }) {
			return fmt.Errorf("run %d has no consistency history; the runs with one are %s", h.run, runList(runs))
		}
		if out == "" {
			return writeHistory(dataOut(c), r, h.run, format)
		}
		return writeHistoryFile(out, r, h.run, format)
	}
	dir := out
	if dir == "" {
		dir = filepath.Join(filepath.Dir(path), "export")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	for _, hr := range runs {
		file := filepath.Join(dir, fmt.Sprintf("history-run%d.%s", hr.ID, format))
		if err := writeHistoryFile(file, r, hr.ID, format); err != nil {
			return err
		}
		fmt.Fprintln(c.OutOrStdout(), file)
	}
	return nil
}

func writeHistory(w io.Writer, r *results.Results, run int64, format string) error {
	ops, err := r.History(run)
	if err != nil {
		return err
	}
	return history.Export(w, ops, format)
}

func writeHistoryFile(file string, r *results.Results, run int64, format string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", file, err)
	}
	err = writeHistory(f, r, run, format)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// runList names runs "3 (treatment small), 5": IDs, with the treatment
// where the campaign has named ones.
func runList(runs []results.HistoryRun) string {
	parts := make([]string, len(runs))
	for i, hr := range runs {
		parts[i] = strconv.FormatInt(hr.ID, 10)
		if hr.Treatment != "" {
			parts[i] += " (treatment " + hr.Treatment + ")"
		}
	}
	return strings.Join(parts, ", ")
}
