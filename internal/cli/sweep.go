package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
)

// sweepLines describes the sweeps of a spec for validate: from, step, stop
// rule, cap and whose CPU the CPU rule judges, one line per sweeping
// treatment.
func sweepLines(s *spec.Spec) []string {
	if len(s.Treatments) == 0 {
		if l := sweepLine(s, ""); l != "" {
			return []string{l}
		}
		return nil
	}
	var out []string
	for _, t := range s.Treatments {
		if l := sweepLine(t.Spec, t.Name+": "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func sweepLine(s *spec.Spec, prefix string) string {
	sw := s.Sweep()
	if sw == nil {
		return ""
	}
	line := fmt.Sprintf("%ssweep: %s; up to %d levels", prefix, sw.String(format.LoadUnit(s.Load.Model)), len(s.Levels()))
	if sw.CPUPct > 0 {
		line += "; " + cpuJudged(campaign.TreatmentFacts(s, "", 0, nil))
	}
	return line
}

// cpuJudged says whose CPU a sweep's CPU rule will judge (campaign/sweep.go
// judges it at run time).
func cpuJudged(t results.Treatment) string {
	switch {
	case len(t.Target.Hosts) > 0:
		return "the CPU rule judges lab host " + strings.Join(t.Target.Hosts, ", ")
	case t.Target.InProcess:
		return "the CPU rule does not apply: an in-process target shares the load generator's process, whose CPU cannot be split"
	case t.Target.Managed:
		return "the CPU rule judges the server's processes as a share of this machine's CPUs"
	}
	return "the CPU rule cannot fire: Headroom does not run this target's server, so its CPU is not monitored"
}

// printSweep says, in the summary, where a treatment's sweep stopped and
// why, or that it reached its cap without saturating.
func printSweep(w io.Writer, r *results.Results, t results.Treatment) error {
	sw, err := r.Sweep(t.Name)
	if err != nil || sw == nil {
		return err
	}
	model := sw.Plan.Model
	if stop, ok := sw.Stop(); ok {
		fmt.Fprintf(w, "Sweep: saturated at %s (level %d of at most %d, from %s by %s): %s\n",
			format.LoadText(model, stop.Level), stop.LevelIndex+1, sw.Plan.Levels, format.Num(sw.Plan.From), format.Num(sw.Plan.Step), strings.Join(stop.Reasons, "; "))
		for _, n := range stop.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
		return nil
	}
	switch n := len(sw.Levels); {
	case n == 0:
		fmt.Fprintf(w, "Sweep: no level has been judged yet (from %s by %s, at most %d levels)\n", format.Num(sw.Plan.From), format.Num(sw.Plan.Step), sw.Plan.Levels)
	case n >= sw.Plan.Levels:
		last := sw.Levels[n-1]
		fmt.Fprintf(w, "Sweep: reached its cap at %s without saturating (%d levels)\n", format.LoadText(model, last.Level), n)
		for _, note := range last.Notes {
			fmt.Fprintf(w, "  %s\n", note)
		}
	default:
		last := sw.Levels[n-1]
		fmt.Fprintf(w, "Sweep: unfinished: %d of at most %d levels judged, up to %s, none saturated\n", n, sw.Plan.Levels, format.LoadText(model, last.Level))
	}
	return nil
}
