package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/analysis/plan"
	"github.com/headroom-dev/headroom/internal/analysis/profit"
	planreport "github.com/headroom-dev/headroom/internal/report/plan"
	"github.com/headroom-dev/headroom/internal/results"
)

// newPlanCmd is `headroom plan RESULTS_DIR...`: the profit-optimal
// configuration at each workload level over one or more results stores
// that measured the same workload.
func newPlanCmd() *cobra.Command {
	var (
		asJSON           bool
		nodeHour         float64
		basis, objective string
	)
	cmd := &cobra.Command{
		Use:   "plan RESULTS_DIR|results.db|postgres://...",
		Short: "Print the most profitable configuration at each workload, with break-even points and sensitivity",
		Long: `Price every completed run of one or more results stores with an SLA revenue
model (revenue per request as a step function of its response time; seed 003
Table 16 by default) and a cost model (the lab catalog's hourly prices, a
price per node-hour, $4 by default without a lab, or a table per
configuration), then print, for each workload level, the configuration with
the highest profit (or the objective you name), the break-even workloads
between neighbouring plans, and the ranges of the node-hour price and of the
SLA's first step over which the plan stays the same. Stores are merged when
they measured the same workload (and refused with the difference when not).
The models come from the first store's analysis.plan section; the flags
override them. See docs/planning.md.`,
		Example: `  headroom plan results/plan-ntier-20260301-0900
  headroom plan --node-hour 2.5 results/a results/b
  headroom plan --json results/plan-ntier-*/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if nodeHour < 0 {
				return &exitError{ExitUsage, "--node-hour takes a price in dollars above 0, e.g. 4"}
			}
			if basis != "" && basis != profit.Catalog && basis != profit.NodeHour && basis != profit.Table {
				return &exitError{ExitUsage, fmt.Sprintf("--basis %q is unknown; use catalog, node_hour or table", basis)}
			}
			if _, ok := profit.Objectives[objective]; objective != "" && !ok {
				return &exitError{ExitUsage, fmt.Sprintf("--objective %q is unknown; use profit, throughput, p99 or cost_per_req_s", objective)}
			}
			var rs []*results.Results
			defer func() {
				for _, r := range rs {
					r.Close()
				}
			}()
			for _, arg := range args {
				src, err := openSource(arg, "") // resultsarg.go: a postgres:// URL is copied first
				if err != nil {
					return err
				}
				defer src.close()
				r, err := results.Open(src.path)
				if err != nil {
					return err
				}
				rs = append(rs, r)
			}
			a, err := profit.FromAll(rs, profit.Options{NodeHour: nodeHour, Basis: basis, Objective: objective})
			if err != nil {
				return err
			}
			p, err := plan.Make(a)
			if err != nil {
				return err
			}
			w := c.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Plan     plan.Plan       `json:"plan"`
					Analysis profit.Analysis `json:"analysis"`
				}{p, a})
			}
			return planreport.WriteText(w, a, p)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the plan and every priced run as JSON")
	f.Float64Var(&nodeHour, "node-hour", 0, "price every node at this many dollars per hour (cost basis node_hour)")
	f.StringVar(&basis, "basis", "", "cost basis: catalog, node_hour or table (default: the store's, else catalog with lab prices, else node_hour)")
	f.StringVar(&objective, "objective", "", "what the plan maximises or minimises: profit, throughput, p99 or cost_per_req_s")
	return cmd
}
