package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/sweep"
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
// why, or that it reached its cap without saturating (the report's sweep
// section says the same).
func printSweep(w io.Writer, r *results.Results, t results.Treatment) error {
	sw, err := r.Sweep(t.Name)
	if err != nil || sw == nil {
		return err
	}
	text, notes := sweep.Text(sw)
	fmt.Fprintf(w, "Sweep: %s\n", text)
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	return nil
}
