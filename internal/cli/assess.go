package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/pgstore"
	"github.com/headroom-dev/headroom/internal/report/pressure"
	"github.com/headroom-dev/headroom/internal/results"
)

func newAssessCmd() *cobra.Command {
	var models []string
	var thresholds []float64
	var opSize string
	var save, noSave, verify, quiet bool
	cmd := &cobra.Command{
		Use:   "assess RESULTS_DIR|results.db|postgres://...",
		Short: "Service level pressure: which rented service is pressed, what to provision, and what it costs",
		Long: `Judge every monitored host resource that has an expected service level
(ESL) model against it (seed 000, docs/esl.md): the service level pressure
SLP(o) = Σ (o/s_j) f_j of each sample, its boxplot (mean, 25th-75th,
1st-99th percentile), the maximum and total critical pressure times
(MCPT, TCPT) above each threshold, and a recommendation per host and
service: provision more (persistent pressure), a transient event saturates
it, or it is over-provisioned, with the evidence. With two or more
treatments it lines up the pressure before and after the change and
compares the cost of the change (option A) with scaling the base out
(option B) in $/month per req/s.

Models: a lab campaign's volumes (analytical provisioned-IOPS model), CPUs
and links get theirs from the hosts' limits in force when each sample was
taken (a set_volume event mid-run changes the volume's ESL from then on);
analysis.esl.models in the spec and --model here give others (imported
data needs them) and override the lab's. With --save the models read from
files are kept in the results store, so that later reports and
assessments find them when the files are gone. With provider-side
(CloudWatch) and client-side (iostat, sampled) series of the same volume it
also fits the factor and normalized-op unit that align them (seed 000
§5.3).

Everything is read from the results store, which only --save writes to;
headroom report writes the same as a report section and never writes to
the store.

With --verify it closes the loop of seed 000 §5.2: each recommendation
that a spec field can apply (more provisioned IOPS, a larger instance
type, or twice the nodes where the catalog has nothing larger) becomes a
treatment of the same campaign (the base treatment's settings plus the
change; added to the stored spec), its runs are appended to the same
results, and the campaign is assessed again: before and after pressure,
throughput and $/month per req/s, with a verdict on whether the
recommendation paid. Throughput is the capacity under the SLO, or the
highest achieved throughput on both sides when a side met the SLO at no
level. A change already measured by a treatment is compared without
running again, and a treatment --verify added is not verified in turn:
one call takes one step from the treatments you wrote.`,
		Example: `  headroom assess results/aisle-lab-20261124-101500
  headroom assess --model db1/disk:xvdf=io1-300.yaml --threshold 80 imported.db
  headroom assess --save --model db1/disk:xvdf=io1-300.yaml imported.db
  sudo headroom assess --verify results/aisle-lab-20261124-101500`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if save && noSave {
				return &exitError{ExitUsage, "--save and --no-save contradict each other; give one"}
			}
			opt := assess.Options{Thresholds: thresholds, OpSize: opSize}
			for _, m := range models {
				mf, err := parseModelFlag(m)
				if err != nil {
					return &exitError{ExitUsage, err.Error()}
				}
				opt.Models = append(opt.Models, mf)
			}
			if opSize != "" && opSize != assess.OpSizeBest && opSize != assess.OpSizeObserved {
				return &exitError{ExitUsage, fmt.Sprintf("--op-size %q is not a policy; use best or observed", opSize)}
			}
			if (verify || save) && pgstore.IsURL(args[0]) {
				return &exitError{ExitUsage, "--verify and --save add to the results store, and a postgres:// campaign is read from a temporary copy; run them on the local results, then headroom push them again"}
			}
			if verify {
				if save {
					return &exitError{ExitUsage, "--verify and --save do different jobs; run headroom assess --save first, then --verify"}
				}
				useLoadCollector(c.ErrOrStderr())
				return verifyRecommendations(c.OutOrStdout(), c.ErrOrStderr(), args[0], opt, quiet) // assess_verify.go
			}
			return withResults(args[0], func(r *results.Results) error {
				a, err := assess.FromResults(r, opt)
				if err != nil {
					return err
				}
				pressure.Terminal(c.OutOrStdout(), a)
				if save {
					return saveModels(c.OutOrStdout(), r, a)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringArrayVar(&models, "model", nil, "HOST/RESOURCE=FILE: the ESL model of a host's resource, e.g. db1/volume:data=esl.yaml (repeatable)")
	cmd.Flags().Float64SliceVar(&thresholds, "threshold", nil, "critical SLP threshold in percent (repeatable; default analysis.esl.thresholds, else 70 and 95)")
	cmd.Flags().StringVar(&opSize, "op-size", "", "where a volume's ESL is taken: best (the op size where it is highest) or observed (each interval's mean op size)")
	cmd.Flags().BoolVar(&save, "save", false, "keep the models read from files (--model, analysis.esl.models) in the results store")
	cmd.Flags().BoolVar(&verify, "verify", false, "turn each persistent pressure's recommendation into a treatment of the campaign, run it into the same results, and say whether it paid (needs the lab, as headroom run does)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "with --verify: no progress display")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not keep the models read from files in the results store (the default; see --save)")
	return cmd
}

// saveModels writes the models the assessment read from files into the
// results store, where later reports and assessments find them.
func saveModels(w io.Writer, r *results.Results, a *assess.Assessment) error {
	if len(a.FromFiles) == 0 {
		fmt.Fprintln(w, "\nNo model was read from a file; nothing to save.")
		return nil
	}
	var names []string
	for _, m := range a.FromFiles {
		if err := r.Store().PutESLModel(m); err != nil {
			return err
		}
		names = append(names, fmt.Sprintf("%s/%s (%s)", m.Host, m.Resource, m.Origin))
	}
	fmt.Fprintf(w, "\nSaved %d ESL model(s) in %s: %s\n", len(names), r.Path(), strings.Join(names, ", "))
	return nil
}

// parseModelFlag reads HOST/RESOURCE=FILE.
func parseModelFlag(v string) (assess.ModelFile, error) {
	ref, file, ok := strings.Cut(v, "=")
	if !ok || file == "" {
		return assess.ModelFile{}, fmt.Errorf("--model %q: write HOST/RESOURCE=FILE, e.g. db1/volume:data=esl.yaml", v)
	}
	host, res, src, err := slp.ParseSeries(ref)
	if err != nil {
		return assess.ModelFile{}, fmt.Errorf("--model: %v", err)
	}
	if src != "" {
		return assess.ModelFile{}, fmt.Errorf("--model %q: a model applies to every source of the resource; leave out @%s", v, src)
	}
	return assess.ModelFile{Host: host, Resource: res, File: file}, nil
}
