package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/hostinfo"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/probe"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/report/rigor"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	httptarget "github.com/headroom-dev/headroom/internal/target/http"
	"github.com/headroom-dev/headroom/internal/target/mysql"
	"github.com/headroom-dev/headroom/internal/target/postgres"
	"github.com/headroom-dev/headroom/internal/version"
	"github.com/headroom-dev/headroom/internal/workload"
)

// probeFlags are the command line's probe parameters beside probe.Config.
type probeFlags struct {
	cfg      probe.Config
	rttAddr  string
	noRTT    bool
	output   string
	quiet    bool
	noReport bool
}

func newProbeCmd() *cobra.Command {
	f := probeFlags{cfg: probe.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "probe SPEC.yaml",
		Short: "Estimate the request rate a target sustains under a latency SLA (black-box probe)",
		Long: `Probe the spec's target with its workload (seed 004's black-box method,
docs/probe.md): hold an open-loop rate for one window, double it while more
than half of the window's seconds have a median latency within RTT + margin,
then climb from the last accepted rate in steps of fine-rate x that rate
until the SLA percentile exceeds the threshold. The estimate is the last
rate that met the SLA.

The spec's target, workload and population are used as by 'headroom run';
of the load section only arrival, max_in_flight, late_after, drop_after and
timeout apply (the model, rates and clients are ignored: the probe is open
loop and picks its own rates). The SLA defaults to the spec's slo when it
has one, else p90 <= 150ms.

A spec with a lab: section runs as a campaign does: its lab comes up, a
managed server runs on its lab host, and both go away afterwards. A spec
with treatments: probes each treatment in turn and prints a comparison
(the estimate, the lab host's type and the cost per req/s).

The RTT guard times TCP connects to the target's host:port, derived from the
target's options (http base_url, postgres/mysql host and port, a managed
server's port on its host, redis address) or given with --rtt-addr. Targets
without a network address (sqlite, disk, null) run without it.

Every window and every second is stored in a new results directory as it
completes; Ctrl-C stops at once and keeps them. At the end report.html and
report.json are written beside them (see docs/report.md).`,
		Example: `  headroom probe db.yaml
  headroom probe db.yaml --percentile 99 --threshold 50ms --start-rate 200 --window 8s
  headroom probe web.yaml --rtt-addr 10.0.0.5:80`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runProbe(c, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&f.cfg.Percentile, "percentile", f.cfg.Percentile, "SLA percentile P (default: the spec's slo, else 90)")
	fl.DurationVar(&f.cfg.Threshold, "threshold", f.cfg.Threshold, "SLA latency threshold L (default: the spec's slo, else 150ms)")
	fl.Float64Var(&f.cfg.StartRate, "start-rate", f.cfg.StartRate, "first window's rate T0 in requests/s")
	fl.DurationVar(&f.cfg.Window, "window", f.cfg.Window, "how long each rate is held (whole seconds)")
	fl.DurationVar(&f.cfg.Margin, "margin", f.cfg.Margin, "a second passes when its median latency <= RTT + margin")
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
	return cmd
}

// probeTarget is one thing to probe: the spec itself, or one of its
// treatments.
type probeTarget struct {
	name string // treatment name; "" without treatments
	spec *spec.Spec
}

func runProbe(c *cobra.Command, specPath string, f probeFlags) error {
	out, errw := c.OutOrStdout(), c.ErrOrStderr()
	if f.noRTT && f.rttAddr != "" {
		return &exitError{ExitUsage, "give either --rtt-addr or --no-rtt, not both"}
	}
	s, err := spec.LoadFile(specPath)
	if err != nil {
		return &exitError{ExitError, "the spec has problems:\n" + err.Error()}
	}
	targets := []probeTarget{{spec: s}}
	if len(s.Treatments) > 0 {
		targets = targets[:0]
		for _, t := range s.Treatments {
			targets = append(targets, probeTarget{name: t.Name, spec: t.Spec})
		}
	}
	cfgs := make([]probe.Config, len(targets))
	for i, pt := range targets {
		cfgs[i] = probeConfigFor(c, f.cfg, pt.spec)
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends the process the ordinary way
	}()

	base := s.Output
	if !filepath.IsAbs(base) {
		base = filepath.Join(filepath.Dir(s.File), base)
	}
	dir, err := probeResultsDir(base, s.Name, time.Now())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), s.Source, 0o644); err != nil {
		return fmt.Errorf("writing the spec copy into %s: %w", dir, err)
	}
	st, err := store.Create(filepath.Join(dir, "results.db"), store.Campaign{
		Name: s.Name, SpecFile: s.File, SpecYAML: string(s.Source), Seed: s.Seed,
		HostJSON: hostinfo.Collect().JSON(), ToolVersion: version.Version,
	})
	if err != nil {
		return err
	}
	dbPath := st.Path()
	failing := false
	for i, pt := range targets {
		if pt.name != "" {
			fmt.Fprintf(out, "\ntreatment %d/%d: %s\n", i+1, len(targets), pt.name)
		}
		res, err := probeOne(ctx, st, dir, pt, cfgs[i], f, out, errw)
		if err != nil {
			st.Close()
			if ctx.Err() != nil {
				if res != nil {
					return &exitError{ExitInterrupted, fmt.Sprintf("interrupted: %d windows stored in %s", len(res.Windows), dbPath)}
				}
				return &exitError{ExitInterrupted, fmt.Sprintf("interrupted before the first window; %s holds no windows", dir)}
			}
			return err
		}
		failing = failing || res.Stop == probe.StopTargetFailing
	}
	if len(targets) > 1 {
		if err := printProbeComparison(out, st); err != nil {
			st.Close()
			return err
		}
	}
	if err := st.Close(); err != nil {
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

// probeOne probes one spec (or treatment): it brings up its lab and opens
// its target (campaign.OpenTarget, so a managed server on a lab host works
// as in a campaign), populates it, runs the probe storing every window,
// and takes it all down again. An interruption returns the partial result
// with ctx's error.
func probeOne(ctx context.Context, st *store.Store, dir string, pt probeTarget, cfg probe.Config, f probeFlags, out, errw io.Writer) (*probe.Result, error) {
	s := pt.spec
	wcfg, err := campaign.WorkloadConfig(s.Workload, filepath.Dir(s.File))
	if err != nil {
		return nil, err
	}
	widenScheduler(s)
	// A managed server's port is picked now rather than when it starts, so
	// that the RTT guard knows where to dial.
	if err := pinManagedPort(s); err != nil {
		return nil, err
	}
	su, err := campaign.OpenTarget(s, dir, st, noteReporter{errw})
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := su.Close(); cerr != nil {
			fmt.Fprintf(errw, "closing the target: %v\n", cerr)
		}
	}()
	tgt := su.Target
	populate := *s.Phases.Populate
	if err := tgt.Prepare(ctx, wcfg, populate); err != nil {
		return nil, err
	}
	if populate {
		fmt.Fprintf(errw, "populating the target (phases.populate is true)...\n")
		if err := campaign.Populate(ctx, tgt, wcfg, campaign.RunSeed(s.Seed, -1), nil); err != nil {
			return nil, err
		}
	}

	var meter probe.RTTMeter
	addr := f.rttAddr
	if !f.noRTT && addr == "" {
		var why string
		addr, why = rttAddress(s, tgt, su.Lab)
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

	gen, err := workload.New(wcfg, campaign.RunSeed(s.Seed, 0))
	if err != nil {
		return nil, err
	}
	runner := &probe.EngineRunner{
		Target: tgt, Generator: gen, Arrival: s.Load.Arrival, MaxInFlight: s.Load.MaxInFlight,
		LateAfter: s.Load.LateAfter.Duration, DropAfter: s.Load.DropAfter.Duration, Timeout: s.Load.Timeout.Duration,
		Seed: campaign.RunSeed(s.Seed, 1),
	}
	id, err := st.StartProbe(store.Probe{
		Target: s.Target.Type, RTTAddr: addr, ConfigJSON: probeConfigJSON(cfg, s.Load, pt.name),
		SLAPercentile: cfg.Percentile, SLAThreshold: cfg.Threshold,
	})
	if err != nil {
		return nil, err
	}

	fmt.Fprintf(errw, "%s: probing %s for p%g <= %v from %g req/s, %v windows; results in %s\n",
		s.Name, s.Target.Type, cfg.Percentile, cfg.Threshold, cfg.StartRate, cfg.Window, dir)
	if !f.quiet {
		printProbeHeader(out, cfg)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var storeErr error
	progress := func(w probe.Window) {
		if !f.quiet {
			printProbeWindow(out, cfg, w)
		}
		if storeErr == nil {
			if storeErr = st.AddProbeWindow(storeWindow(id, w)); storeErr != nil {
				cancel() // the results cannot be kept: stop probing
			}
		}
	}
	res, runErr := probe.Run(runCtx, cfg, runner, meter, progress)
	if storeErr != nil {
		runErr = storeErr
	}
	status := store.StatusCompleted
	switch {
	case runErr != nil:
		status = store.StatusFailed
	case res.Stop == probe.StopInterrupted:
		status = store.StatusInterrupted
	}
	note := res.Note
	if runErr != nil {
		note = joinText(note, runErr.Error())
	}
	if ferr := st.FinishProbe(id, store.Probe{
		Status: status, Stop: res.Stop, Estimate: res.Estimate, LowerBound: res.LowerBound,
		ClientLimited: res.ClientLimited, BaselineRTTUs: res.BaselineRTT * 1000, Note: note,
	}); ferr != nil && runErr == nil {
		runErr = ferr
	}
	if runErr != nil {
		return &res, fmt.Errorf("%v; the windows so far are in %s", runErr, st.Path())
	}
	if status == store.StatusInterrupted {
		return &res, ctx.Err()
	}
	printProbeResult(out, cfg, res)
	return &res, nil
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
	rows, err := rigor.ProbeComparison(st)
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

// managedOf returns the managed-server block of a target's options (every
// managed target has a Managed *deploy.Managed field), or nil.
func managedOf(opts any) *deploy.Managed {
	v := reflect.ValueOf(opts)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("Managed")
	if !f.IsValid() {
		return nil
	}
	m, _ := f.Interface().(*deploy.Managed)
	return m
}

// pinManagedPort picks a free port for a managed server that would pick
// its own when it starts, so that the RTT guard knows where it listens.
func pinManagedPort(s *spec.Spec) error {
	m := managedOf(s.Target.Options)
	if m == nil || m.Port != 0 {
		return nil
	}
	p, err := deploy.FreePort()
	if err != nil {
		return err
	}
	m.Port = p
	return nil
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
	fmt.Fprintf(w, "%3d  %-9s  %9.6g  %9.1f  %8s  %8s  %8s  %15s  %2d/%-2d  %s\n",
		win.Seq+1, win.Phase, win.Rate, win.Achieved,
		fmtMs(percentileOf(win, 50)), fmtMs(percentileOf(win, 90)), fmtMs(win.SLALatency),
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
}

// percentileOf returns the window's latency at p, one of probe.Percentiles.
func percentileOf(w probe.Window, p float64) float64 {
	for i, q := range probe.Percentiles {
		if q == p && i < len(w.Percentiles) {
			return w.Percentiles[i]
		}
	}
	return math.NaN()
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

// storeWindow converts a judged window for the results store (latencies
// from milliseconds to microseconds).
func storeWindow(id int64, w probe.Window) store.ProbeWindow {
	us := func(v float64) float64 { return v * 1000 }
	sw := store.ProbeWindow{
		ProbeID: id, Seq: w.Seq, Phase: w.Phase, Rate: w.Rate, Offered: w.Offered, Achieved: w.Achieved,
		Start: w.Start, Duration: w.Duration, RTTBeforeUs: us(w.RTTBefore), RTTAfterUs: us(w.RTTAfter),
		PassedSeconds: w.PassedSeconds, Accepted: w.Accepted, MetSLA: w.MetSLA, Discarded: w.Discarded, Verdict: w.Verdict,
		Sent: w.Sent, Completed: w.Completed, Errors: w.Errors, Late: w.Late, Dropped: w.Dropped, ErrorKinds: w.ErrorKinds,
		SLAUs: us(w.SLALatency), Hist: w.Hist, Note: w.Note,
	}
	if sw.Start.IsZero() {
		sw.Start = time.Now()
	}
	for _, p := range store.ProbePercentiles {
		sw.Percentiles = append(sw.Percentiles, us(percentileOf(w, p)))
	}
	for _, s := range w.Seconds {
		sw.Seconds = append(sw.Seconds, store.ProbeSecond{
			Index: s.Index, Sent: s.Sent, Completed: s.Completed, Errors: s.Errors, Late: s.Late, Dropped: s.Dropped,
			P50Us: us(s.P50), P90Us: us(s.P90), RTTUs: us(s.RTT), Pass: s.Pass,
		})
	}
	return sw
}

// probeConfigJSON records every parameter the probe ran with, and the
// treatment it probed ("" without treatments).
func probeConfigJSON(c probe.Config, l spec.Load, treatment string) string {
	b, _ := json.Marshal(map[string]any{"treatment": treatment,
		"percentile": c.Percentile, "threshold": c.Threshold.String(), "start_rate": c.StartRate,
		"window": c.Window.String(), "margin": c.Margin.String(), "rtt_spike": c.RTTSpike.String(),
		"fine_rate": c.FineRate, "max_rate": c.MaxRate, "max_windows": c.MaxWindows, "max_retries": c.MaxRetries,
		"floor_rate": c.FloorRate, "client_shortfall": c.ClientShortfall, "max_error_ratio": c.MaxErrorRatio,
		"rtt_every": c.RTTEvery.String(), "percentiles": probe.Percentiles,
		"arrival": l.Arrival, "max_in_flight": l.MaxInFlight, "late_after": l.LateAfter.String(),
		"drop_after": l.DropAfter.String(), "timeout": l.Timeout.String(),
	})
	return string(b)
}

// rttAddress derives the host:port the RTT guard dials from the opened
// target (one that reports its address, like redis; tgt may be nil), from
// a managed server's port (on its lab host's address when it runs on one;
// lb is the spec's lab, nil without one), or from the target's options;
// when there is none it says why.
func rttAddress(s *spec.Spec, tgt any, lb *lab.Lab) (addr, why string) {
	if a, ok := tgt.(interface{ Address() string }); ok && a.Address() != "" {
		return a.Address(), ""
	}
	if m := managedOf(s.Target.Options); m != nil {
		if m.Port == 0 {
			return "", "the managed instance's port is picked when it starts"
		}
		host := "127.0.0.1"
		if m.Host != "" {
			if lb == nil {
				return "", "the managed server runs on lab host " + m.Host + ", but no lab is up"
			}
			h, err := lb.Host(m.Host)
			if err != nil {
				return "", err.Error()
			}
			host = h.Addr
		}
		return net.JoinHostPort(host, strconv.Itoa(m.Port)), ""
	}
	hostPort := func(host string, port int, defHost string, defPort int) (string, string) {
		if host == "" {
			host = defHost
		}
		if strings.HasPrefix(host, "/") {
			return "", "the target connects through a Unix socket"
		}
		if port == 0 {
			port = defPort
		}
		return net.JoinHostPort(host, strconv.Itoa(port)), ""
	}
	switch o := s.Target.Options.(type) {
	case *httptarget.Options:
		u, err := url.Parse(o.BaseURL)
		if err != nil || u.Hostname() == "" {
			return "", "base_url has no host"
		}
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "https" {
				port = "443"
			}
		}
		return net.JoinHostPort(u.Hostname(), port), ""
	case *postgres.Options:
		return hostPort(o.Host, o.Port, "127.0.0.1", 5432)
	case *mysql.Options:
		return hostPort(o.Host, o.Port, "127.0.0.1", 3306)
	}
	return "", fmt.Sprintf("the %s target has no network address", s.Target.Type)
}

// probeResultsDir makes a new directory NAME-probe-STAMP under base.
func probeResultsDir(base, name string, t time.Time) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("cannot create the output directory %s: %w (set output: in the spec, or --output, to a writable place)", base, err)
	}
	stamp := t.Format("20060102-150405")
	for i := 0; i < 100; i++ {
		dir := filepath.Join(base, name+"-probe-"+stamp)
		if i > 0 {
			dir += "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("cannot create the results directory %s: %w", dir, err)
		}
	}
	return "", fmt.Errorf("cannot find a free results directory name under %s", base)
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
