package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/target/registry"
)

func newTargetsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "targets",
		Short: "List the systems under test this build can drive",
		Long:  "List the target types usable in a spec's target.type field. docs/targets.md documents their options.",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			for _, n := range registry.Names() {
				f, _ := registry.Lookup(n)
				fmt.Fprintf(c.OutOrStdout(), "%-8s %s\n", n, f.Summary)
			}
			return nil
		},
	}
}
