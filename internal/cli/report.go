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
	"github.com/headroom-dev/headroom/internal/report/rigor"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report RESULTS_DIR|results.db",
		Short: "Print a stored campaign's summary and write report.html and report.json",
		Long: `Print the same per-level summary that headroom run prints at the end, and
write report.html (self-contained: charts are inline SVG, nothing is fetched)
and report.json (the same numbers) beside the results database. Everything
is read from the results database only. See docs/report.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			path, err := storePath(args[0])
			if err != nil {
				return err
			}
			// The page first: it also covers files of imported data only,
			// which have no load-response summary to print.
			if err := writeReportFiles(c.OutOrStdout(), path, report.Sections...); err != nil {
				return err
			}
			return printSummary(c.OutOrStdout(), path, nil)
		},
	}
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

// printSummary renders the summary of the store at path. s may be nil, in
// which case the spec stored with the campaign is used.
func printSummary(w io.Writer, path string, s *spec.Spec) error {
	st, err := store.Open(path)
	if err != nil {
		return err
	}
	defer st.Close()
	if s == nil {
		c, err := st.Campaign()
		if err != nil {
			return err
		}
		if c.SpecYAML == "" {
			return fmt.Errorf("%s holds imported resource data only, no runs to summarise; read it with headroom export -t samples", path)
		}
		s, err = spec.Parse(c.SpecFile, []byte(c.SpecYAML))
		if err != nil {
			return fmt.Errorf("the spec stored in %s does not validate with this version: %w", path, err)
		}
	}
	if len(s.Treatments) == 0 {
		return printTreatment(w, st, s, "", "")
	}
	for i, t := range s.Treatments {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := fmt.Sprintf("treatment %d/%d: %s", i+1, len(s.Treatments), t.Name)
		if len(t.Set) > 0 {
			title += " (sets " + strings.Join(t.Set, ", ") + ")"
		}
		if err := printTreatment(w, st, t.Spec, t.Name, title); err != nil {
			return err
		}
	}
	return nil
}

// printTreatment prints the summary of one treatment's runs.
func printTreatment(w io.Writer, st *store.Store, s *spec.Spec, treatment, title string) error {
	var slo *levels.SLO
	if s.SLO != nil {
		slo = &levels.SLO{Percentile: s.SLO.Percentile, Threshold: s.SLO.Threshold.Duration, Op: s.SLO.Operation}
	}
	in, incomplete, err := levels.FromStore(st, s.Load.Model, slo)
	if err != nil {
		return err
	}
	in = in.Treatment(treatment)
	h := header(s)
	if title != "" {
		h.Name += " · " + title
	}
	findings, err := rigor.Findings(st, treatment)
	if err != nil {
		return err
	}
	if len(in.Runs) == 0 && len(findings) > 0 {
		// A probe's results: no runs, only the probe's findings.
		fmt.Fprintf(w, "\n%s · %s\n", h.Name, s.Target.Type)
	} else {
		report.Terminal(w, h, levels.Summarize(in), incomplete)
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

func header(s *spec.Spec) report.Header {
	model := "closed loop"
	if s.Load.Model == "open" {
		model = "open loop, " + s.Load.Arrival + " arrivals"
	}
	wl := "custom workload"
	if s.Workload.YCSB != "" {
		wl = "YCSB " + strings.ToUpper(s.Workload.YCSB)
	}
	if len(s.Workload.Operations) > 0 {
		wl = "custom mix"
	}
	if d := s.Workload.RequestDistribution; d != "" {
		wl += " (" + d + ")"
	} else if cfg, err := workload.Preset(strings.ToLower(s.Workload.YCSB)); err == nil {
		wl += " (" + cfg.RequestDistribution + ")"
	}
	f, _ := registry.Lookup(s.Target.Type)
	return report.Header{Name: s.Name, Model: model, Workload: wl, Target: s.Target.Type, Reps: s.Repetitions,
		Interval: s.Interval.Duration, Measure: s.Phases.Measure.Duration, InProcess: f.InProcess}
}
