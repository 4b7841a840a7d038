package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// widenScheduler gives the Go scheduler twice as many processors as the
// machine has cores for an in-process target, unless the user set
// GOMAXPROCS. An in-process target (SQLite) blocks threads in fsync and
// lock back-off sleeps, and a blocked thread keeps its scheduler slot until
// the runtime notices; with spare slots the pacer and the workers still run
// on time, so requests are not sent late because of the client
// (docs/measurement.md). A target in another process only blocks in the
// network poller, and there the extra slots cost CPU: against a local
// Redis, closed-loop throughput at 16 connections was 116-119k ops/s with
// twice the slots and 126-134k with one per core (docs/performance.md).
// A one-thread server (Redis) on this machine gets a core of its own: with
// as many slots as cores, the kernel time-slices the client's threads
// against the server's, and goroutines whose answers have arrived wait in
// the run queue of a descheduled thread for milliseconds (the client-side
// delay; against a local Redis at 64 connections, p99 4.7 ms with 2 slots
// and 0.7 ms with 1).
// A server of many processes (PostgreSQL's backend per connection) is
// the opposite case: the kernel shares the cores among all of them, each
// client thread gets its share, and with one slot fewer Headroom reached
// 0.66-0.69 of pgbench instead of 0.85-0.92 (docs/performance.md).
func widenScheduler(s *spec.Spec) {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	// Go's default already follows the CPU quota of a container; the
	// client-limit verdict is judged against that budget, not against the
	// widened number of slots.
	// It is called once per treatment: always size from the process's
	// starting value, never from an earlier treatment's widened one.
	base := startProcs
	load.SetCPUBudget(base)
	procs := base
	if f, ok := registry.Lookup(s.Target.Type); ok && f.InProcess {
		procs = 2 * base
	} else if base > 1 && oneThreadServer[s.Target.Type] && serverOnThisMachine(s.Target.Options) {
		procs = base - 1
		load.SetCPUBudget(procs)
	}
	runtime.GOMAXPROCS(procs)
}

// startProcs is GOMAXPROCS as the process started (Go's default follows
// the CPUs and any container quota).
var startProcs = runtime.GOMAXPROCS(0)

func newRunCmd() *cobra.Command {
	var resume string
	var quiet, noReport bool
	var output, agents string
	cmd := &cobra.Command{
		Use:   "run SPEC.yaml | run --resume RESULTS_DIR",
		Short: "Run an experiment campaign and print its load-response summary",
		Long: `Run every planned run of the campaign (levels x repetitions, in the spec's
order) and write each interval to a new results directory as it completes.
At the end, print the summary per level and the results database path.

Ctrl-C, SIGTERM or SIGHUP stops the current run at once: completed intervals are
kept, the run is marked interrupted, and 'headroom run --resume DIR'
finishes the campaign later without repeating completed runs.`,
		Example: `  headroom run examples/quickstart.yaml
  headroom run --resume results/quickstart-20261123-101500`,
		RunE: func(c *cobra.Command, args []string) error {
			useLoadCollector(c.ErrOrStderr())
			if (resume == "") == (len(args) == 0) || len(args) > 1 {
				return &exitError{ExitUsage, "give either one spec file or --resume RESULTS_DIR (see headroom run --help)"}
			}
			kube, err := kubernetesAgents(agents) // run_k8s.go; nil without --agents
			if err != nil {
				return err
			}
			ctx, stop := newStopContext()
			defer stop()
			var prog progress.Reporter = progress.Quiet()
			if !quiet {
				prog = progress.New(c.ErrOrStderr())
			}
			opt := campaign.Options{Progress: prog, Configure: widenScheduler, Kubernetes: kube}
			var out campaign.Outcome
			if resume != "" {
				out, err = campaign.Resume(ctx, resume, opt)
			} else {
				var s *spec.Spec
				s, err = spec.LoadFile(args[0])
				if err != nil {
					return &exitError{ExitError, "the spec has problems:\n" + err.Error()}
				}
				if output != "" {
					// --output is relative to the working directory, while
					// the spec's own paths (dataset scripts) stay relative
					// to the spec file.
					abs, aerr := filepath.Abs(output)
					if aerr != nil {
						return &exitError{ExitError, fmt.Sprintf("--output %s: %v", output, aerr)}
					}
					s.Output = abs
				}
				if opt.Kubernetes != nil {
					if err := campaign.CheckKubernetesAgents(s, opt.Kubernetes.Agents); err != nil {
						return &exitError{ExitError, "--agents " + agents + ": the spec has problems:\n" + err.Error()}
					}
				}
				upTo := "" // a sweep stops after its saturating level (sweep.go)
				if len(sweepLines(s)) > 0 {
					upTo = "up to "
				}
				fmt.Fprintf(c.ErrOrStderr(), "%s: %s%d runs, about %v; results in %s\n", s.Name, upTo, plannedRuns(s), plannedDuration(s), s.Output)
				out, err = campaign.Start(ctx, s, opt)
			}
			prog.Finish()
			if errors.Is(err, campaign.ErrNothingToResume) {
				fmt.Fprintf(c.ErrOrStderr(), "nothing to resume: all %d planned runs in %s have completed; see the results with: headroom report %s\n", out.Runs, out.Dir, out.Dir)
				return nil
			}
			if errors.Is(err, campaign.ErrInterrupted) && out.Dir == "" {
				return &exitError{ctx.exitCode(), ctx.stoppedBy() + " before the first run: nothing was measured and no results directory was kept"}
			}
			if errors.Is(err, campaign.ErrInterrupted) {
				return &exitError{ctx.exitCode(), fmt.Sprintf("%s: %d of %d runs completed and stored in %s; continue with: headroom run --resume %s", ctx.stoppedBy(), out.Completed, out.Runs, out.Dir, out.Dir)}
			}
			if out.StorePath != "" {
				if kerr := keepModelFiles(out.StorePath); kerr != nil && err == nil {
					err = fmt.Errorf("keeping the ESL model files in the results: %w", kerr)
				}
				if rerr := summarizeRun(c.OutOrStdout(), out.StorePath, !noReport); rerr != nil && err == nil {
					err = rerr
				}
				fmt.Fprintf(c.OutOrStdout(), "results database: %s\n", out.StorePath)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&resume, "resume", "", "continue the campaign in this results directory")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress display")
	cmd.Flags().BoolVar(&noReport, "no-report", false, "do not write report.html and report.json at the end (headroom report writes them later)")
	cmd.Flags().StringVar(&agents, "agents", "", "k8s:N launches N load agents as pods of a Kubernetes Job (the spec's kubernetes: section), in place of load.agents")
	cmd.Flags().StringVarP(&output, "output", "o", "", "parent directory for the results, relative to the working directory (overrides the spec's output)")
	return cmd
}

// summarizeRun prints the summary of the results at path and, with files,
// writes report.html and report.json beside them: one opened Results for
// both, so that each analysis is computed once and both say the same.
func summarizeRun(w io.Writer, path string, files bool) error {
	r, err := results.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := printSummary(w, r); err != nil {
		return err
	}
	if !files {
		return nil
	}
	if err := writeReportFilesIn(w, r, filepath.Dir(path), report.Sections...); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// keepModelFiles stores the ESL model files the campaign's analysis.esl.models
// name in its results while the files are at hand, so that later reports
// and assessments work without them (docs/esl.md). The run writes its own
// results; reports never write. A file that cannot be read is left for the
// report to warn about.
func keepModelFiles(path string) error {
	r, err := results.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	named := false
	for _, t := range r.Treatments() {
		named = named || len(t.Analysis.ESL.Models) > 0
	}
	if !named {
		return nil
	}
	in, _, err := assess.Gather(r, assess.Options{})
	if err != nil {
		return nil
	}
	for _, m := range in.FromFiles {
		if err := r.Store().PutESLModel(m); err != nil {
			return err
		}
	}
	return nil
}
