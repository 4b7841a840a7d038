package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/report/answer"
	"github.com/headroom-dev/headroom/internal/report/consistency"
	"github.com/headroom-dev/headroom/internal/report/controller"
	"github.com/headroom-dev/headroom/internal/report/failures"
	"github.com/headroom-dev/headroom/internal/report/regions"
	"github.com/headroom-dev/headroom/internal/report/rigor"
	"github.com/headroom-dev/headroom/internal/results"
)

func newReportCmd() *cobra.Command {
	var outDir, passwordFile string
	c := &cobra.Command{
		Use:   "report RESULTS_DIR|results.db|postgres://...",
		Short: "Print a stored campaign's summary and write report.html and report.json",
		Long: `Print the same per-level summary that headroom run prints at the end, and
write report.html (self-contained: charts are inline SVG, nothing is fetched)
and report.json (the same numbers) beside the results database. Everything
is read from the results database only. See docs/report.md. A campaign in a
shared PostgreSQL database (headroom push) is read from its URL, e.g.
postgres://USER@HOST/DB?campaign=ID; see docs/fleet.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return reportSource(c.OutOrStdout(), c.ErrOrStderr(), args[0], outDir, passwordFile) // resultsarg.go
		},
	}
	c.Flags().StringVar(&outDir, "out", "", "directory for report.html and report.json (default: beside the results database; for a postgres:// URL, the working directory)")
	c.Flags().StringVar(&passwordFile, "password-file", "", "file holding the shared results database's password (else PGPASSWORD or PGPASSFILE)")
	return c
}

// storePath accepts a results directory or the database file itself.
func storePath(arg string) (string, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return "", fmt.Errorf("%s does not exist; pass a results directory printed by headroom run, or its %s", arg, campaign.StoreFile)
	}
	if fi.IsDir() {
		p := filepath.Join(arg, campaign.StoreFile)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s has no %s; pass a results directory printed by headroom run", arg, campaign.StoreFile)
		}
		return p, nil
	}
	return arg, nil
}

// printSummary prints the summary of r, treatment by treatment, from the
// results model's facts and never from the spec a run just ran: the store
// holds the same facts, and reading only them means the summary after a
// run and a later headroom report never differ, and a store whose spec
// today's parser rejects still prints.
func printSummary(w io.Writer, r *results.Results) error {
	c := r.Campaign()
	if c.SpecYAML == "" && len(r.Runs()) == 0 {
		return fmt.Errorf("%s holds imported resource data only, no runs to summarise; read it with headroom export -t samples", r.Path())
	}
	if err := failures.Terminal(w, r); err != nil { // lost writes and failure verdicts lead
		return err
	}
	card, err := answer.Build(r) // the answers lead the summary
	if err != nil {
		return err
	}
	report.TerminalAnswers(w, card)
	if err := consistency.Terminal(w, r); err != nil { // staleness and session verdicts of consistency runs
		return err
	}
	if err := controller.Terminal(w, r); err != nil { // one line per elastic controller
		return err
	}
	if err := regions.Terminal(w, r); err != nil { // one line per run whose agents span regions
		return err
	}
	ts := r.Treatments()
	if len(ts) == 1 && ts[0].Name == "" {
		return printTreatment(w, r, ts[0], "")
	}
	for i, t := range ts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := fmt.Sprintf("treatment %d/%d: %s", i+1, len(ts), t.Name)
		if len(t.Set) > 0 {
			set := make([]string, len(t.Set))
			for j, x := range t.Set {
				set[j] = x.Path + "=" + x.Value
			}
			title += " (sets " + strings.Join(set, ", ") + ")"
		}
		if err := printTreatment(w, r, t, title); err != nil {
			return err
		}
	}
	return nil
}

// printTreatment prints the summary of one treatment's runs.
func printTreatment(w io.Writer, r *results.Results, t results.Treatment, title string) error {
	in, incomplete, err := levels.FromResults(r, t.Name)
	if err != nil {
		return err
	}
	h := report.HeaderOf(r.Campaign().Name, t)
	if h.ClientDelay, err = report.ClientDelayOf(r, in); err != nil {
		return err
	}
	if title != "" {
		h.Name += " · " + title
	}
	findings, err := rigor.Findings(r, t.Name)
	if err != nil {
		return err
	}
	if len(in.Runs) == 0 && len(findings) > 0 {
		// A probe's results: no runs, only the probe's findings.
		fmt.Fprintf(w, "\n%s · %s\n", h.Name, h.Target)
	} else {
		report.Terminal(w, h, levels.Summarize(in), incomplete)
	}
	if err := printSweep(w, r, t); err != nil { // sweep.go
		return err
	}
	printFindings(w, findings)
	return nil
}

// printFindings prints the headline findings of the capacity and rigor
// analyses (the sentences the report's sections use), one per line.
func printFindings(w io.Writer, fs []rigor.Finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintln(w, "Findings")
	for _, f := range fs {
		fmt.Fprintf(w, "  %-12s %s\n", f.Label, f.Text)
	}
}

// noteUnfinished says, after the report, when the campaign has planned runs
// without a completed run, and how to finish it.
func noteUnfinished(w io.Writer, r *results.Results) {
	done, planned := r.Progress()
	if done < planned {
		fmt.Fprintf(w, "this campaign is unfinished: %d of %d planned runs completed, and the report covers only those; finish it with: headroom run --resume %s\n", done, planned, filepath.Dir(r.Path()))
	}
}
