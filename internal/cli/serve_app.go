package cli

import (
	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/apptier"
	// The apptier target starts this command on lab hosts.
	_ "github.com/headroom-dev/headroom/internal/target/apptier"
)

// newServeAppCmd is `headroom serve-app`: one application server of the
// apptier target. It is hidden: the target runs it, on lab hosts, with the
// database URL in its environment (never on the command line).
func newServeAppCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "serve-app --listen ADDR [--db ENV] [--cpu-work D] [--pool N] [--table NAME]",
		Short:  "Serve YCSB requests over HTTP from a SQL database (run by the apptier target)",
		Hidden: true,
		// The flags are apptier's own, so that the target's tests, which
		// run the server from their test binary, parse them the same way.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			useLoadCollector(c.ErrOrStderr())
			if code := apptier.Main(args, c.OutOrStdout(), c.ErrOrStderr()); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
}
