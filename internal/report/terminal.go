// Package report renders analysis results for people: the terminal summary
// now; HTML and JSON reports join it as analyses grow.
package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// Header describes the campaign in one line above the summary.
type Header struct {
	Name     string
	Model    string // "open, poisson arrivals" / "closed"
	Workload string
	Target   string
	Reps     int
	Interval time.Duration
	Measure  time.Duration
	// InProcess says the target runs inside the Headroom process, so that
	// client and target share one CPU budget.
	InProcess bool
}

// Terminal writes the load-response summary: verdicts first, then one table
// per level. Every number says what it is computed from.
func Terminal(w io.Writer, h Header, s levels.Summary, incomplete int) {
	fmt.Fprintf(w, "\n%s · %s · %s on %s\n", h.Name, h.Model, h.Workload, h.Target)
	fmt.Fprintf(w, "%d levels x %d repetitions; each figure is the mean ± standard error across repetitions of the measured phase (%v, intervals of %v)\n",
		len(s.Levels), h.Reps, h.Measure, h.Interval)
	if incomplete > 0 {
		fmt.Fprintf(w, "%d run(s) were interrupted or failed and are not included.\n", incomplete)
	}
	fmt.Fprintln(w)
	writeVerdicts(w, s, h.InProcess)
	for i, l := range s.Levels {
		writeLevel(w, s, i, l)
	}
}

func unit(model string, v float64) string {
	if model == "closed" {
		return fmt.Sprintf("%g clients", v)
	}
	return fmt.Sprintf("%g req/s", v)
}

func writeVerdicts(w io.Writer, s levels.Summary, inProcess bool) {
	if s.SLO != nil && len(s.Levels) > 0 {
		op := "all operations"
		if s.SLO.Op != "" {
			op = s.SLO.Op
		}
		fmt.Fprintf(w, "SLO     p%g <= %v (%s): ", s.SLO.Percentile, s.SLO.Threshold, op)
		switch {
		case s.FirstFail < 0:
			fmt.Fprintf(w, "met at every level, up to %s\n", unit(s.Model, s.Levels[len(s.Levels)-1].Level))
		default:
			f := s.Levels[s.FirstFail]
			if s.LastPass >= 0 {
				fmt.Fprintf(w, "met up to %s; ", unit(s.Model, s.Levels[s.LastPass].Level))
			} else {
				fmt.Fprint(w, "not met at any level; ")
			}
			fmt.Fprintf(w, "first fails at %s (%.2f%% of offered requests within %v, p%g = %s)\n",
				unit(s.Model, f.Level), 100*f.SLO.Within.Mean, s.SLO.Threshold, s.SLO.Percentile, micros(f.SLO.Value.Mean))
		}
	}
	limited := 0
	first := -1.0
	for _, l := range s.Levels {
		if l.ClientLimited > 0 {
			if first < 0 {
				first = l.Level
			}
			limited += l.ClientLimited
		}
	}
	if limited == 0 {
		fmt.Fprintln(w, "Client  was not the limit in any run")
	} else {
		if inProcess {
			fmt.Fprintf(w, "Client  was the limit in %d run(s), from %s on: the target runs inside the client process, so they compete for the same CPU and the schedule slipped\n", limited, unit(s.Model, first))
		} else {
			fmt.Fprintf(w, "Client  was the limit in %d run(s), from %s on: those levels measure the load generator, not the target\n", limited, unit(s.Model, first))
		}
	}
	fmt.Fprintln(w)
}

func writeLevel(w io.Writer, s levels.Summary, i int, l levels.Level) {
	fmt.Fprintf(w, "Level %d/%d · %s offered · %d repetition(s)\n", i+1, len(s.Levels), unit(s.Model, l.Level), l.Reps)
	fmt.Fprintf(w, "  achieved %s ok/s · late %s · dropped %s · errors %s",
		est(l.Throughput, 1), est(l.Late, 0), est(l.Dropped, 0), est(l.Errors, 0))
	if l.SLO != nil {
		verdict := "pass"
		if !l.SLO.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, " · SLO %s (%.2f%% within)", verdict, 100*l.SLO.Within.Mean)
	}
	fmt.Fprintln(w)
	// One note per level keeps the table readable; every run's note is in
	// the run table (headroom export -t runs).
	if len(l.Notes) > 0 {
		fmt.Fprintf(w, "  note: %s", l.Notes[0])
		if more := len(l.Notes) - 1; more > 0 {
			fmt.Fprintf(w, " (and %d other run note(s) at this level)", more)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	withServer := false
	for _, o := range l.Ops {
		withServer = withServer || o.Server.N > 0
	}
	head := "  op\tok/run\tmean\tp50\tp95\tp99\tmax\t"
	if withServer {
		head += "server\tnetwork+queue\t"
	}
	fmt.Fprintln(tw, head)
	for _, o := range l.Ops {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t", o.Op, est(o.Count, 0),
			lat(o.Latency.Mean), lat(o.Latency.P50), lat(o.Latency.P95), lat(o.Latency.P99), lat(o.Latency.Max))
		if withServer {
			fmt.Fprintf(tw, "%s\t%s\t", lat(o.Server), lat(o.Network))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, h := range l.Hosts {
		fmt.Fprintf(w, "  host %s:", h.Host)
		sep := " "
		if !math.IsNaN(h.CPUMean) {
			fmt.Fprintf(w, "%sCPU %.0f%% (peak %.0f%%)", sep, h.CPUMean, h.CPUMax)
			sep = " · "
		}
		if h.Disk != "" {
			fmt.Fprintf(w, "%sbusiest disk %s %.0f%% busy (peak %.0f%%)", sep, h.Disk, h.DiskUtil, h.DiskUtilMax)
			sep = " · "
		}
		if !math.IsNaN(h.NetBytes) {
			fmt.Fprintf(w, "%snetwork %s", sep, bytesPerSec(h.NetBytes))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func bytesPerSec(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB/s", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB/s", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB/s", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B/s", b)
}

// est prints mean ± standard error; the ± part is left out for a single
// repetition, where there is no standard error.
func est(e stats.Estimate, decimals int) string {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return "-"
	}
	if e.N < 2 || math.IsNaN(e.SE) {
		return fmt.Sprintf("%.*f", decimals, e.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", decimals, e.Mean, decimals, e.SE)
}

// lat prints a latency estimate (µs) in a readable unit.
func lat(e stats.Estimate) string {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return "-"
	}
	s := micros(e.Mean)
	if e.N >= 2 && !math.IsNaN(e.SE) {
		s += " ± " + strings.TrimSpace(micros(e.SE))
	}
	return s
}

func micros(us float64) string {
	switch {
	case math.IsNaN(us):
		return "-"
	case us >= 1e6:
		return fmt.Sprintf("%.2fs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2fms", us/1e3)
	}
	return fmt.Sprintf("%.0fµs", us)
}
