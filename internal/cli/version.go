package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/version"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Headroom's version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintln(c.OutOrStdout(), versionLine())
			return nil
		},
	}
}

// versionLine is what `headroom version` and `headroom --version` print.
func versionLine() string {
	return fmt.Sprintf("headroom %s (%s, %s/%s)", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
