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
	"github.com/headroom-dev/headroom/internal/report/format"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Header describes the campaign (one treatment of it) in one line above
// the summary; HeaderOf makes it from the treatment's facts.
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
	// ClientDelay is the load generator's own scheduling delay per level
	// (ClientDelayOf); nil for stores written before it was recorded. A
	// pointer keeps Header comparable.
	ClientDelay *Delays
}

// Delays holds the client-side delay by level.
type Delays struct{ ByLevel map[float64]Delay }

// Delay is a level's client-side delay: the mean across repetitions of
// each run's p50 and p99 (µs).
type Delay struct{ P50, P99 stats.Estimate }

// ClientDelayOf gathers the client-side delay (internal/load/clientdelay.go)
// of in's completed runs by level.
func ClientDelayOf(r *results.Results, in levels.Input) (*Delays, error) {
	ds, err := r.ClientDelays()
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	p50, p99 := map[float64][]float64{}, map[float64][]float64{}
	for _, rd := range in.Runs {
		if d, ok := ds[rd.Run.ID]; ok && rd.Run.Status == results.StatusCompleted {
			p50[rd.Run.Level] = append(p50[rd.Run.Level], float64(d.P50)/1e3)
			p99[rd.Run.Level] = append(p99[rd.Run.Level], float64(d.P99)/1e3)
		}
	}
	out := map[float64]Delay{}
	for l := range p99 {
		out[l] = Delay{P50: stats.Summarize(p50[l]), P99: stats.Summarize(p99[l])}
	}
	return &Delays{ByLevel: out}, nil
}

// HeaderOf describes one treatment of the campaign named campaign from its
// facts.
func HeaderOf(campaign string, t results.Treatment) Header {
	model := "closed loop"
	if t.Load.Open() {
		model = "open loop"
		if t.Load.Arrival != "" {
			model += ", " + t.Load.Arrival + " arrivals"
		}
	}
	target := t.Target.Type
	if target == "" {
		target = "an unknown target" // the stored spec could not be read
	}
	return Header{Name: campaign, Model: model, Workload: workloadText(t.Workload), Target: target, Reps: t.Load.Repetitions,
		Interval: t.Load.Interval, Measure: t.Load.Measure, InProcess: t.Target.InProcess}
}

// workloadText names a workload: "YCSB B (zipfian)" for a preset as it
// comes, "custom mix (uniform)" for a preset's records with an operation
// mix of one's own, "custom workload" for SQL statements.
func workloadText(w results.Workload) string {
	var s string
	switch {
	case w.Kind == "ycsb" && w.YCSB != "" && isPresetMix(w):
		s = "YCSB " + strings.ToUpper(w.YCSB)
	case w.Kind == "ycsb" && len(w.Mix) > 0:
		s = "custom mix"
	case w.Kind == "":
		return "unknown workload" // the stored spec could not be read
	default:
		s = "custom workload"
	}
	if w.Distribution != "" {
		s += " (" + w.Distribution + ")"
	}
	return s
}

// isPresetMix reports whether the workload's operation mix is its YCSB
// preset's own. Operation names are compared without underscores, as
// stores written before the fact tables may spell them either way.
func isPresetMix(w results.Workload) bool {
	cfg, err := workload.Preset(w.YCSB)
	if err != nil {
		return false
	}
	want := map[string]float64{}
	for _, op := range cfg.Ops() {
		want[strings.ReplaceAll(cfg.OpName(op), "_", "")] = cfg.Mix[op]
	}
	got := map[string]float64{}
	for op, x := range w.Mix {
		if x > 0 {
			got[strings.ReplaceAll(op, "_", "")] += x
		}
	}
	if len(got) != len(want) {
		return false
	}
	for op, x := range want {
		if math.Abs(got[op]-x) > 1e-9 {
			return false
		}
	}
	return true
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
		writeLevel(w, s, i, l, h.ClientDelay)
	}
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
			fmt.Fprintf(w, "met at every level, up to %s\n", format.LoadText(s.Model, s.Levels[len(s.Levels)-1].Level))
		default:
			f := s.Levels[s.FirstFail]
			if s.LastPass >= 0 {
				fmt.Fprintf(w, "met up to %s; ", format.LoadText(s.Model, s.Levels[s.LastPass].Level))
			} else {
				fmt.Fprint(w, "not met at any level; ")
			}
			fmt.Fprintf(w, "first fails at %s (%.2f%% of offered requests within %v, p%g = %s)\n",
				format.LoadText(s.Model, f.Level), 100*f.SLO.Within.Mean, s.SLO.Threshold, s.SLO.Percentile, format.Terminal.Micros(f.SLO.Value.Mean))
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
			fmt.Fprintf(w, "Client  was the limit in %d run(s), from %s on: the target runs inside the client process, and the engine's own share of its CPU was what limited the load\n", limited, format.LoadText(s.Model, first))
		} else {
			fmt.Fprintf(w, "Client  was the limit in %d run(s), from %s on: those levels measure the load generator, not the target\n", limited, format.LoadText(s.Model, first))
		}
	}
	fmt.Fprintln(w)
}

func writeLevel(w io.Writer, s levels.Summary, i int, l levels.Level, delay *Delays) {
	fmt.Fprintf(w, "Level %d/%d · %s offered · %d repetition(s)\n", i+1, len(s.Levels), format.LoadText(s.Model, l.Level), l.Reps)
	fmt.Fprintf(w, "  achieved %s ok/s · late %s · dropped %s · errors %s",
		format.Terminal.Est(l.Throughput, 1), format.Terminal.Est(l.Late, 0), format.Terminal.Est(l.Dropped, 0), format.Terminal.Est(l.Errors, 0))
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
		head += "server\tnetwork+queueing\t"
	}
	fmt.Fprintln(tw, head)
	for _, o := range l.Ops {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t", o.Op, format.Terminal.Est(o.Count, 0),
			lat(o.Latency.Mean), lat(o.Latency.P50), lat(o.Latency.P95), lat(o.Latency.P99), lat(o.Latency.Max))
		if withServer {
			mu := lat(o.Network)
			if o.Network.N > 0 && o.Network.Mean < 0 {
				mu = page.MuWithinError
			}
			fmt.Fprintf(tw, "%s\t%s\t", lat(o.Server), mu)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if d, ok := delay.of(l.Level); ok {
		fmt.Fprintf(w, "  client-side delay p50 %s · p99 %s (the load generator's wait for a processor, part of the latencies above)\n", lat(d.P50), lat(d.P99))
	}
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
			fmt.Fprintf(w, "%snetwork %s", sep, format.Terminal.BytesPerSec(h.NetBytes))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// lat prints a latency estimate (µs) in a readable unit.
func lat(e stats.Estimate) string {
	if e.N == 0 || math.IsNaN(e.Mean) {
		return "-"
	}
	s := format.Terminal.Micros(e.Mean)
	if e.N >= 2 && !math.IsNaN(e.SE) {
		s += " ± " + strings.TrimSpace(format.Terminal.Micros(e.SE))
	}
	return s
}

// of is level's delay; false when none was recorded.
func (d *Delays) of(level float64) (Delay, bool) {
	if d == nil {
		return Delay{}, false
	}
	v, ok := d.ByLevel[level]
	return v, ok
}
