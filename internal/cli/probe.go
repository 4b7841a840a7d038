package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/probe"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/report/rigor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// probeFlags are the command line's probe parameters beside probe.Config.
type probeFlags struct {
	cfg      probe.Config
	rttAddr  string
	noRTT    bool
	output   string
	quiet    bool
	noReport bool
	agents   string // --agents k8s:N
}

func newProbeCmd() *cobra.Command {
	f := probeFlags{cfg: probe.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "probe SPEC.yaml",
		Short: "Estimate the request rate a target sustains under a latency SLA (black-box probe)",
		Long: `Probe the spec's target with its workload (seed 004's black-box method,
docs/probe.md): first measure the unloaded latency (a short window at
--baseline-rate), then hold an open-loop rate for one window, double it while
more than half of the window's seconds have a median latency within RTT +
the unloaded latency beyond the RTT + margin, then climb from the last
accepted rate in steps of fine-rate x that rate until the SLA percentile
exceeds the threshold, or a window's latency rises steadily from its first
second to its last (an unstable queue; Headroom's rule, not seed 004's).
The estimate is the last rate that met the SLA.

The spec's target, workload and population are used as by 'headroom run';
of the load section only arrival, max_in_flight, late_after, drop_after and
timeout apply (the model, rates and clients are ignored: the probe is open
loop and picks its own rates). The SLA defaults to the spec's slo when it
has one, else p90 <= 150ms.

A spec with a lab: section runs as a campaign does: its lab comes up, a
managed server runs on its lab host, and both go away afterwards. A spec
with treatments: probes each treatment in turn and prints a comparison
(the estimate, the lab host's type and the cost per req/s).

The RTT guard times TCP connects to the host:port the opened target's
server listens on (http base_url, postgres/mysql/redis host and port, a
managed server's port on its host, an app tier's first application server)
or given with --rtt-addr. Targets without a network address (sqlite, disk,
null) run without it.

Every window and every second is stored in a new results directory as it
completes; Ctrl-C stops at once and keeps them. At the end report.html and
report.json are written beside them (see docs/report.md).`,
		Example: `  headroom probe db.yaml
  headroom probe db.yaml --percentile 99 --threshold 50ms --start-rate 200 --window 8s
  headroom probe web.yaml --rtt-addr 10.0.0.5:80`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			useLoadCollector(c.ErrOrStderr())
			return runProbe(c, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&f.cfg.Percentile, "percentile", f.cfg.Percentile, "SLA percentile P (default: the spec's slo, else 90)")
	fl.DurationVar(&f.cfg.Threshold, "threshold", f.cfg.Threshold, "SLA latency threshold L (default: the spec's slo, else 150ms)")
	fl.Float64Var(&f.cfg.StartRate, "start-rate", f.cfg.StartRate, "first window's rate T0 in requests/s")
	fl.DurationVar(&f.cfg.Window, "window", f.cfg.Window, "how long each rate is held (whole seconds)")
	fl.DurationVar(&f.cfg.Margin, "margin", f.cfg.Margin, "a second passes when its median latency <= RTT + unloaded latency beyond the RTT + margin")
	fl.Float64Var(&f.cfg.BaselineRate, "baseline-rate", f.cfg.BaselineRate, "rate of the window that measures the unloaded latency, requests/s (at most the start rate)")
	fl.DurationVar(&f.cfg.BaselineWindow, "baseline-window", f.cfg.BaselineWindow, "length of that window (whole seconds; 0: no baseline, seed 004's rule RTT + margin)")
	fl.Float64Var(&f.cfg.UnstableP, "unstable-p", f.cfg.UnstableP, "significance of a rising latency trend that makes a window an unstable queue (0: rule off, as in seed 004)")
	fl.DurationVar(&f.cfg.RTTSpike, "rtt-spike", f.cfg.RTTSpike, "RTT rise over its value before the window that discards the window")
	fl.Float64Var(&f.cfg.FineRate, "fine-rate", f.cfg.FineRate, "fine-tuning step as a fraction r of the last accepted rate")
	fl.Float64Var(&f.cfg.MaxRate, "max-rate", f.cfg.MaxRate, "highest rate to try, requests/s")
	fl.IntVar(&f.cfg.MaxWindows, "max-windows", f.cfg.MaxWindows, "most windows to run, discarded ones included")
	fl.IntVar(&f.cfg.MaxRetries, "max-retries", f.cfg.MaxRetries, "discarded windows in a row at one rate before giving up")
	fl.Float64Var(&f.cfg.FloorRate, "floor-rate", f.cfg.FloorRate, "lowest rate the halving back-off tries, requests/s")
	fl.Float64Var(&f.cfg.ClientShortfall, "client-shortfall", f.cfg.ClientShortfall, "share of unsent requests at low latency that means the client is the bottleneck")
	fl.Float64Var(&f.cfg.MaxErrorRatio, "max-errors", f.cfg.MaxErrorRatio, "largest share of failed requests a passing second or an SLA-meeting window may have")
	fl.DurationVar(&f.cfg.RTTEvery, "rtt-every", f.cfg.RTTEvery, "RTT sampling period during a window (0: only before and after)")
	fl.StringVar(&f.rttAddr, "rtt-addr", "", "host:port to time TCP connects to (default: derived from the target's options)")
	fl.BoolVar(&f.noRTT, "no-rtt", false, "run without the RTT guard (the pass rule then compares the median with the margin alone)")
	fl.StringVarP(&f.output, "output", "o", "", "parent directory for the results, relative to the working directory (overrides the spec's output)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print only the result, not one line per window")
	fl.BoolVar(&f.noReport, "no-report", false, "do not write report.html and report.json at the end (headroom report writes them later)")
	fl.StringVar(&f.agents, "agents", "", "k8s:N sends the windows' requests from N load agents in the pods of a Kubernetes Job (the spec's kubernetes: section), in place of load.agents")
	return cmd
}

func runProbe(c *cobra.Command, specPath string, f probeFlags) error {
	out, errw := c.OutOrStdout(), c.ErrOrStderr()
	if f.noRTT && f.rttAddr != "" {
		return &exitError{ExitUsage, "give either --rtt-addr or --no-rtt, not both"}
	}
	kube, err := kubernetesAgents(f.agents) // run_k8s.go; nil without --agents
	if err != nil {
		return err
	}
	s, err := spec.LoadFile(specPath)
	if err != nil {
		return &exitError{ExitError, "the spec has problems:\n" + err.Error()}
	}
	if kube != nil {
		if err := campaign.CheckKubernetesAgents(s, kube.Agents); err != nil {
			return &exitError{ExitError, err.Error()}
		}
	}
	treatments := campaign.Treatments(s)
	cfgs := make([]probe.Config, len(treatments))
	for i, t := range treatments {
		cfgs[i] = probeConfigFor(c, f.cfg, t.Spec)
		if err := cfgs[i].Validate(); err != nil {
			return &exitError{ExitUsage, probeFlagError(err)}
		}
	}
	if f.output != "" {
		abs, aerr := filepath.Abs(f.output)
		if aerr != nil {
			return &exitError{ExitError, fmt.Sprintf("--output %s: %v", f.output, aerr)}
		}
		s.Output = abs
	}
	ctx, stop := newStopContext()
	defer stop()

	sess, err := campaign.NewSession(s, campaign.SessionOptions{Kind: "probe"})
	if err != nil {
		return err
	}
	sess.Progress, sess.Configure = noteReporter{errw}, widenScheduler
	dbPath := sess.Store.Path()
	failing := false
	for i, t := range treatments {
		if t.Name != "" {
			fmt.Fprintf(out, "\ntreatment %d/%d: %s\n", i+1, len(treatments), t.Name)
		}
		res, err := probeOne(ctx, sess, t, cfgs[i], f, kube, out, errw)
		if err != nil {
			sess.Close()
			if ctx.Err() != nil {
				if res != nil {
					return &exitError{ctx.exitCode(), fmt.Sprintf("%s: %d windows stored in %s", ctx.stoppedBy(), len(res.Windows), dbPath)}
				}
				return &exitError{ctx.exitCode(), fmt.Sprintf("%s before the first window; %s holds no windows", ctx.stoppedBy(), sess.Dir)}
			}
			return err
		}
		failing = failing || res.Stop == probe.StopTargetFailing
	}
	if len(treatments) > 1 {
		if err := printProbeComparison(out, sess.Store); err != nil {
			sess.Close()
			return err
		}
	}
	if err := sess.Close(); err != nil {
		return err
	}
	if !f.noReport {
		if err := writeReportFiles(out, dbPath, report.Sections...); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	}
	fmt.Fprintf(out, "results database: %s\n", dbPath)
	if failing {
		return &exitError{ExitError, ""}
	}
	return nil
}

// probeConfigFor is the probe's configuration for one spec: the flags, with
// the spec's SLO as the SLA where the flags do not set it.
func probeConfigFor(c *cobra.Command, cfg probe.Config, s *spec.Spec) probe.Config {
	if s.SLO != nil {
		if !c.Flags().Changed("percentile") {
			cfg.Percentile = s.SLO.Percentile
		}
		if !c.Flags().Changed("threshold") {
			cfg.Threshold = s.SLO.Threshold.Duration
		}
	}
	return cfg
}

// probeOne probes one treatment (or the spec without treatments) in the
// session: its hosts come up and its target opens, fills and goes away
// again as in a campaign (campaign.Session), with the probe's windows
// printed as they come. An interruption returns the partial result with
// ctx's error.
func probeOne(ctx context.Context, sess *campaign.Session, t campaign.Treatment, cfg probe.Config, f probeFlags, kube *campaign.KubernetesAgents, out, errw io.Writer) (*probe.Result, error) {
	s := t.Spec
	su, err := sess.Open(ctx, t)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := su.Close(); cerr != nil {
			fmt.Fprintf(errw, "closing the target: %v\n", cerr)
		}
	}()
	shown := progress.New(errw) // the population's rows, rate and ETA
	_, err = su.Fill(ctx, shown.Update)
	shown.Finish()
	if err != nil {
		return nil, err
	}

	var meter probe.RTTMeter
	addr := f.rttAddr
	if !f.noRTT && addr == "" {
		var why string
		addr, why = campaign.RTTAddress(su.Target, s.Target.Type)
		if addr == "" {
			fmt.Fprintf(errw, "RTT guard off: %s; give --rtt-addr host:port to time connects to the server\n", why)
		}
	}
	if f.noRTT {
		addr = ""
		fmt.Fprintln(errw, "RTT guard off (--no-rtt): a second passes when its median latency is at most the margin")
	}
	if addr != "" {
		p, err := probe.NewTCPPinger(ctx, addr, 3, 2*time.Second)
		if err != nil {
			return nil, &exitError{ExitError, err.Error() + " (give --rtt-addr host:port, or --no-rtt)"}
		}
		meter = p
	}

	fmt.Fprintf(errw, "%s: probing %s for p%g <= %v from %g req/s, %v windows; results in %s\n",
		s.Name, s.Target.Type, cfg.Percentile, cfg.Threshold, cfg.StartRate, cfg.Window, sess.Dir)
	opt := campaign.ProbeOptions{Treatment: t.Name, RTTAddr: addr, Meter: meter, Kubernetes: kube,
		Note: func(line string) { fmt.Fprintln(errw, line) }}
	if !f.quiet {
		headed := false // the header comes after the baseline's lines
		opt.Window = func(w probe.Window) {
			if !headed {
				printProbeHeader(out, cfg)
				headed = true
			}
			printProbeWindow(out, cfg, w)
		}
		opt.Baseline = func(b probe.Baseline) { printProbeBaseline(out, cfg, b) }
	}
	res, err := su.Probe(ctx, cfg, opt)
	if err != nil {
		return res, err
	}
	printProbeResult(out, cfg, *res)
	return res, nil
}

// noteReporter prints the lab's progress lines (bringing hosts up) and
// nothing else: the probe prints its own progress per window.
type noteReporter struct{ w io.Writer }

func (noteReporter) Update(progress.State)          {}
func (noteReporter) RunDone(progress.State, string) {}
func (noteReporter) Finish()                        {}
func (n noteReporter) Note(line string)             { fmt.Fprintln(n.w, line) }

// printProbeComparison prints the probes of the treatments side by side,
// with the lab host each ran on and its cost per req/s.
func printProbeComparison(w io.Writer, st *store.Store) error {
	res, err := results.New(st)
	if err != nil {
		return err
	}
	rows, err := rigor.ProbeComparison(res)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\ncomparison of the treatments")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "treatment\tSLA\testimate (req/s)\tstop\thost type\tvCPUs\t$/hour\t$/month per req/s\t")
	for _, r := range rows {
		est := "none"
		if !math.IsNaN(r.Estimate) {
			est = fmt.Sprintf("%.6g", r.Estimate)
		} else if !math.IsNaN(r.LowerBound) {
			est = fmt.Sprintf("none (>= %.6g)", r.LowerBound)
		}
		typ, vcpus, price, cost := "-", "-", "-", "-"
		if r.Servers > 0 {
			typ, vcpus, price = r.Type, fmt.Sprintf("%g", r.VCPUs), fmt.Sprintf("%.3f", r.PricePerHour)
			if r.Servers > 1 {
				typ = fmt.Sprintf("%d x %s", r.Servers, r.Type)
			}
		}
		if !math.IsNaN(r.CostPerReqPerSec) {
			cost = fmt.Sprintf("%.4f", r.CostPerReqPerSec)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Treatment, r.SLA, est, r.Stop, typ, vcpus, price, cost)
	}
	return tw.Flush()
}

// probeFlagError names the flag behind a probe.Config field in a
// validation error ("start rate: ..." becomes "--start-rate: ...").
func probeFlagError(err error) string {
	msg := err.Error()
	field, rest, ok := strings.Cut(msg, ":")
	if !ok {
		return msg
	}
	flags := map[string]string{
		"percentile": "percentile", "threshold": "threshold", "start rate": "start-rate", "window": "window",
		"margin": "margin", "rtt spike": "rtt-spike", "fine rate": "fine-rate", "max rate": "max-rate",
		"max windows": "max-windows", "max retries": "max-retries", "floor rate": "floor-rate",
		"client shortfall": "client-shortfall", "max error ratio": "max-errors", "rtt sampling period": "rtt-every",
		"baseline rate": "baseline-rate", "baseline window": "baseline-window", "unstable p": "unstable-p",
	}
	if f, ok := flags[field]; ok {
		return "--" + f + ":" + rest
	}
	return msg
}

func printProbeHeader(w io.Writer, cfg probe.Config) {
	fmt.Fprintf(w, "%3s  %-9s  %9s  %9s  %8s  %8s  %8s  %15s  %5s  %s\n",
		"#", "phase", "rate/s", "achieved", "p50", "p90", "p"+strconv.FormatFloat(cfg.Percentile, 'g', -1, 64)+"(SLA)", "rtt before/after", "pass", "verdict")
}

// printProbeWindow prints one line per window (live progress).
func printProbeWindow(w io.Writer, cfg probe.Config, win probe.Window) {
	verdict := win.Verdict
	if win.Note != "" && (win.Discarded || verdict == "client-limited" || verdict == "target failing") {
		verdict += ": " + win.Note
	}
	if win.Trend.Unstable {
		// Say it on every window whose latency kept rising, accepted or not.
		verdict += fmt.Sprintf(" (latency rising %.1f ms/s)", win.Trend.Slope)
	}
	fmt.Fprintf(w, "%3d  %-9s  %9.6g  %9.1f  %8s  %8s  %8s  %15s  %2d/%-2d  %s\n",
		win.Seq+1, win.Phase, win.Rate, win.Achieved,
		fmtMs(campaign.WindowPercentile(win, 50)), fmtMs(campaign.WindowPercentile(win, 90)), fmtMs(win.SLALatency),
		fmtMs(win.RTTBefore)+"/"+fmtMs(win.RTTAfter), win.PassedSeconds, len(win.Seconds), verdict)
}

func printProbeResult(w io.Writer, cfg probe.Config, res probe.Result) {
	sla := fmt.Sprintf("p%g <= %v", cfg.Percentile, cfg.Threshold)
	switch {
	case !math.IsNaN(res.Estimate):
		fmt.Fprintf(w, "estimate: %.6g req/s at %s (%d windows)\n", res.Estimate, sla, len(res.Windows))
	case res.ClientLimited:
		fmt.Fprintf(w, "no estimate: the client is the bottleneck (%d windows)\n", len(res.Windows))
	default:
		fmt.Fprintf(w, "no estimate (%s, %d windows)\n", res.Stop, len(res.Windows))
	}
	if !math.IsNaN(res.LowerBound) && math.IsNaN(res.Estimate) {
		fmt.Fprintf(w, "lower bound: the server met %s at %.6g req/s\n", sla, res.LowerBound)
	}
	if res.Note != "" {
		fmt.Fprintf(w, "note: %s\n", res.Note)
	}
	if math.IsNaN(res.BaselineRTT) {
		fmt.Fprintln(w, "baseline RTT: not measured (RTT guard off)")
	} else {
		fmt.Fprintf(w, "baseline RTT: %s\n", fmtMs(res.BaselineRTT))
	}
	if b := res.Baseline; b != nil {
		fmt.Fprintf(w, "baseline latency: %s unloaded (median of %d requests at %.6g req/s)\n", fmtMs(b.Latency), b.Completed, b.Rate)
	} else if cfg.BaselineWindow == 0 {
		fmt.Fprintln(w, "baseline latency: not measured (--baseline-window 0: seed 004's rule, RTT + margin)")
	}
}

// printProbeBaseline prints the unloaded latency and the pass rule it
// gives, before the first window.
func printProbeBaseline(w io.Writer, cfg probe.Config, b probe.Baseline) {
	rtt := "no RTT guard"
	if !math.IsNaN(b.RTT) {
		rtt = "RTT " + fmtMs(b.RTT)
	}
	fmt.Fprintf(w, "baseline: %s median, %s p90 unloaded (%d requests at %.6g req/s over %v), %s\n",
		fmtMs(b.Latency), fmtMs(b.P90), b.Completed, b.Rate, b.Duration, rtt)
	if math.IsNaN(b.RTT) {
		fmt.Fprintf(w, "a second passes when its median <= %s + %v margin\n", fmtMs(b.Unloaded), cfg.Margin)
	} else {
		fmt.Fprintf(w, "a second passes when its median <= the RTT before its window + %s unloaded + %v margin\n", fmtMs(b.Unloaded), cfg.Margin)
	}
}

func fmtMs(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	case v < 1:
		return fmt.Sprintf("%.2fms", v)
	}
	return fmt.Sprintf("%.1fms", v)
}
