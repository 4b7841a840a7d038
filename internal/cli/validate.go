package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/lab"
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
				reset := ""
				if s.Reset != "none" {
					reset = ", reset: " + s.Reset + " before each run"
				}
				shape := fmt.Sprintf("%d levels x %d repetitions, %s order%s", len(s.Levels()), s.Repetitions, s.Order, reset)
				if len(s.Treatments) > 0 {
					shape = treatmentShape(s)
				}
				upTo := "" // a sweep stops after its saturating level (sweep.go)
				if len(sweepLines(s)) > 0 {
					upTo = "up to "
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: ok: %s%d runs (%s), about %v\n",
					path, upTo, plannedRuns(s), shape, plannedDuration(s).Round(time.Second))
				for _, l := range append(append(treatmentLines(s), sweepLines(s)...), relativeLines(s)...) { // sweep.go, relative.go
					fmt.Fprintln(c.OutOrStdout(), "  "+l)
				}
				if s.Lab != nil {
					fmt.Fprintln(c.OutOrStdout(), "  "+labLine(s))
					for _, l := range computeUnitLines(s) {
						fmt.Fprintln(c.OutOrStdout(), "  "+l)
					}
				}
			}
			if bad > 0 {
				return &exitError{ExitError, fmt.Sprintf("%d of %d spec(s) have problems", bad, len(args))}
			}
			return nil
		},
	}
}

// plannedDuration is the time the runs take by the spec (population not
// included); spec.Cost adds it up without overflow.
func plannedDuration(s *spec.Spec) time.Duration {
	return s.Cost().Duration
}

// plannedRuns counts the runs of every treatment.
func plannedRuns(s *spec.Spec) int {
	return s.Cost().Runs
}

// labLine describes the spec's lab in one line: its hosts and what they
// cost (the spec has been validated, so the lab section resolves).
func labLine(s *spec.Spec) string {
	hosts, _, err := s.Lab.Resolve(filepath.Dir(s.File))
	if err != nil {
		return "lab: " + err.Error()
	}
	var parts []string
	var hourly, monthly float64
	for _, h := range hosts {
		p := fmt.Sprintf("%s (%s, %g vCPU", h.Name, h.Type, h.VCPUs)
		for _, v := range h.Volumes {
			p += fmt.Sprintf(", %s %g IOPS", v.Name, v.IOPS)
			monthly += v.MonthlyPrice
		}
		parts = append(parts, p+")")
		hourly += h.PricePerHour
	}
	monthly += hourly * lab.HoursPerMonth
	return fmt.Sprintf("lab: %s; emulated price $%.3f/hour, $%.2f/month with volumes (needs root)", strings.Join(parts, ", "), hourly, monthly)
}

// treatmentShape says how many treatments the spec has, where they come
// from and in what order they run.
func treatmentShape(s *spec.Spec) string {
	out := fmt.Sprintf("%d treatments", len(s.Treatments))
	if len(s.Factors) > 0 {
		var names, sizes []string
		for _, f := range s.Factors {
			names = append(names, f.Name)
			sizes = append(sizes, fmt.Sprint(len(f.Values)))
		}
		out += fmt.Sprintf(" from factors %s (%s)", strings.Join(names, " x "), strings.Join(sizes, " x "))
	}
	if s.TreatmentOrder == "randomized" {
		out += ", in randomized order"
	}
	if s.Blocking == "repetition" {
		out += ", interleaved by repetition"
	}
	return out
}

// maxBlocksShown keeps the printed run order to one readable line.
const maxBlocksShown = 12

// treatmentLines describes each treatment (its settings and runs) and,
// when it is not simply the order written, the order of the blocks.
func treatmentLines(s *spec.Spec) []string {
	var out []string
	for _, t := range s.Treatments {
		set := "the spec as written"
		if len(t.Set) > 0 {
			var parts []string
			for i, p := range t.Set {
				parts = append(parts, p+"="+t.Values[i])
			}
			set = strings.Join(parts, ", ")
		}
		ts := t.Spec
		out = append(out, fmt.Sprintf("%s: %s; %d runs (%d levels x %d repetitions, %s order)",
			t.Name, set, len(ts.Plan()), len(ts.Levels()), ts.Repetitions, ts.Order))
	}
	if len(s.Treatments) == 0 || (s.TreatmentOrder != "randomized" && s.Blocking != "repetition") {
		return out
	}
	blocks := s.Blocks()
	var order []string
	for i, b := range blocks {
		if i == maxBlocksShown {
			order = append(order, fmt.Sprintf("... (%d blocks)", len(blocks)))
			break
		}
		name := s.Treatments[b.Treatment].Name
		if b.Repetition > 0 {
			name += fmt.Sprintf(" #%d", b.Repetition)
		}
		order = append(order, name)
	}
	return append(out, "run order: "+strings.Join(order, ", "))
}

// computeUnitLines say what the lab's vCPUs would be on this machine now
// (the lab measures again when it comes up), and where a host could not
// get its share.
func computeUnitLines(s *spec.Spec) []string {
	hosts, _, err := s.Lab.Resolve(filepath.Dir(s.File))
	if err != nil {
		return nil
	}
	cu, err := lab.Calibrate(s.Lab.ComputeUnit, hosts)
	if err != nil {
		return []string{"compute unit: " + err.Error()}
	}
	out := []string{cu.String() + " (measured now; the lab measures again when it comes up)"}
	for _, n := range cu.Notes {
		out = append(out, "note: "+n)
	}
	return out
}
