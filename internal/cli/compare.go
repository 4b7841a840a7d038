package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/analysis/compare"
	"github.com/headroom-dev/headroom/internal/report/comparison"
	"github.com/headroom-dev/headroom/internal/results"
)

// ExitRuleBroken is the exit code of a compare whose --fail-on rule broke.
const ExitRuleBroken = 3

func newCompareCmd() *cobra.Command {
	var (
		failOn, accept, figures []string
		treatments              string
		markdown, asJSON        bool
		confidence              float64
		passwordFile            string
	)
	c := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare a campaign B with a baseline A, level by level, with statistics",
		Long: `Compare the results of campaign B with those of the baseline A (results
directories, results.db files or postgres:// URLs of pushed campaigns), at
each load level both measured: throughput and latency per operation, the
change of B's mean over A's with its confidence interval across
repetitions (Welch's t-test), and a verdict: better, worse, or no
detectable difference with the smallest difference the repetitions could
have detected. Campaigns that differ in what they measured (the target's
type, the workload, the load model or the levels) are refused unless
--accept names the difference.

--fail-on makes it a gate for CI: the command exits with code 3 when a
figure got detectably worse by more than the limit (docs/compare.md).

Examples:
  headroom compare results/base results/candidate
  headroom compare --fail-on p99:+10% --fail-on throughput:-5% --markdown base cand > comment.md
  headroom compare --treatments small,large results/sweep results/sweep`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			if markdown && asJSON {
				return &exitError{ExitUsage, "--markdown and --json both print the comparison; choose one"}
			}
			var rules []compare.Rule
			for _, f := range failOn {
				for _, one := range strings.Split(f, ",") {
					r, err := compare.ParseRule(strings.TrimSpace(one))
					if err != nil {
						return &exitError{ExitUsage, err.Error()}
					}
					rules = append(rules, r)
				}
			}
			for _, f := range figures {
				if _, ok := compare.FigureNamed(f); !ok {
					return &exitError{ExitUsage, fmt.Sprintf("--figures %q: use some of %s", f, strings.Join(compare.FigureNames(), ", "))}
				}
			}
			opt := compare.Options{Confidence: confidence, Accept: accept}
			if treatments != "" {
				a, b, ok := strings.Cut(treatments, ",")
				if !ok || strings.Contains(b, ",") {
					return &exitError{ExitUsage, fmt.Sprintf("--treatments %q: give two names, A's then B's, e.g. --treatments small,large", treatments)}
				}
				opt.Pair, opt.TreatmentA, opt.TreatmentB = true, a, b
			}
			view, err := compareSources(args[0], args[1], passwordFile, opt)
			if err != nil {
				return err
			}
			for _, r := range rules {
				view.Rules = append(view.Rules, r.Judge(view.Cells, view.Confidence))
			}
			view.Shown = comparison.DefaultShown
			if len(figures) > 0 {
				view.Shown = slices.Clone(figures)
			}
			out := c.OutOrStdout()
			switch {
			case asJSON:
				err = comparison.JSON(out, view)
			case markdown:
				err = comparison.Markdown(out, view)
			default:
				err = comparison.Terminal(out, view)
			}
			if err != nil {
				return err
			}
			if view.Failed() {
				return &exitError{ExitRuleBroken, ""}
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&failOn, "fail-on", nil, "exit with code 3 when a figure got detectably worse than this, e.g. p99:+10%, p95@read:+5%, throughput:-5% (repeatable)")
	c.Flags().StringSliceVar(&accept, "accept", nil, "differences between A and B to accept: target, workload, model, levels")
	c.Flags().StringSliceVar(&figures, "figures", nil, "figures the tables show (default throughput, mean, p50, p95, p99; --json has all)")
	c.Flags().StringVar(&treatments, "treatments", "", "compare treatment A_NAME of A with B_NAME of B (A and B may be one campaign): A_NAME,B_NAME")
	c.Flags().BoolVar(&markdown, "markdown", false, "print Markdown, for a pull request comment")
	c.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON (docs/compare.md)")
	c.Flags().Float64Var(&confidence, "confidence", 0.95, "confidence level of the intervals and tests")
	c.Flags().StringVar(&passwordFile, "password-file", "", "file holding the shared results database's password, for postgres:// arguments (else PGPASSWORD or PGPASSFILE)")
	return c
}

// compareSources opens A and B and compares them.
func compareSources(argA, argB, passwordFile string, opt compare.Options) (comparison.View, error) {
	open := func(arg string) (*results.Results, func(), error) {
		src, err := openSource(arg, passwordFile)
		if err != nil {
			return nil, nil, err
		}
		r, err := results.Open(src.path)
		if err != nil {
			src.close()
			return nil, nil, err
		}
		return r, func() { r.Close(); src.close() }, nil
	}
	a, closeA, err := open(argA)
	if err != nil {
		return comparison.View{}, fmt.Errorf("campaign A: %w", err)
	}
	defer closeA()
	b, closeB, err := open(argB)
	if err != nil {
		return comparison.View{}, fmt.Errorf("campaign B: %w", err)
	}
	defer closeB()
	cmp, err := compare.FromResults(a, b, opt)
	if err != nil {
		return comparison.View{}, &exitError{ExitUsage, err.Error()}
	}
	return comparison.View{Comparison: cmp}, nil
}
