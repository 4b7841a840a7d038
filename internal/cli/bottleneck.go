package cli

import (
	"github.com/spf13/cobra"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	bnreport "github.com/headroom-dev/headroom/internal/report/bottleneck"
	"github.com/headroom-dev/headroom/internal/results"
)

// newBottleneckCmd is `headroom bottleneck RESULTS_DIR`: the bottleneck
// analysis of a stored campaign, as text.
func newBottleneckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bottleneck RESULTS_DIR|results.db",
		Short: "Print which resources limited each run, the intervention analysis and the maps",
		Long: `Print, for every run of a stored campaign, its multi-bottleneck
classification in one sentence (single, concurrent, oscillatory or
simultaneous bottleneck, with saturation frequencies), the intervention
analysis of each treatment's load sweep (which monitored metric changes its
trend where the SLO starts to fail), and, when analysis.bottleneck.map names
the tiers, the maximum-throughput and bottleneck maps. Settings come from the
spec's analysis.bottleneck section. See docs/bottleneck.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withResults(args[0], func(r *results.Results) error {
				a, err := ab.FromResults(r)
				if err != nil {
					return err
				}
				bnreport.Terminal(c.OutOrStdout(), a)
				return nil
			})
		},
	}
}
