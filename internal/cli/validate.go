package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/spec"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate SPEC.yaml [SPEC.yaml...]",
		Short: "Check experiment specs without running them",
		Long: `Check each spec strictly (unknown keys, wrong types, values out of range)
and print every problem with its file, line and field path, or the plan the
spec expands to. Exits 1 if any spec has a problem.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			bad := 0
			for _, path := range args {
				s, err := spec.LoadFile(path)
				if err != nil {
					fmt.Fprintln(c.ErrOrStderr(), err)
					bad++
					continue
				}
				plan := s.Plan()
				reset := ""
				if s.Reset != "none" {
					reset = ", reset: " + s.Reset + " before each run"
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: ok: %d runs (%d levels x %d repetitions, %s order%s), about %v\n",
					path, len(plan), len(s.Levels()), s.Repetitions, s.Order, reset, plannedDuration(s).Round(time.Second))
			}
			if bad > 0 {
				return &exitError{ExitError, fmt.Sprintf("%d of %d spec(s) have problems", bad, len(args))}
			}
			return nil
		},
	}
}

// plannedDuration is the time the runs take by the spec (population not
// included).
func plannedDuration(s *spec.Spec) time.Duration {
	iv := s.Interval.Duration
	warm := (s.Phases.Warmup.Duration + iv - 1) / iv * iv
	per := warm + s.Phases.Measure.Duration + s.Phases.Cooldown.Duration
	return time.Duration(len(s.Plan())) * per
}
