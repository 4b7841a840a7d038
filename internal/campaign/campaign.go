// Package campaign executes an experiment campaign: it expands the spec into
// its plan, opens and populates the target, runs every planned run through
// the load engine, and writes everything to the campaign's results store as
// it happens. It is the "run" box of the architecture's data flow; analyses
// read the store afterwards.
package campaign

import (
	"context"
	"errors"
	"fmt"
	"github.com/headroom-dev/headroom/internal/controller/ods"
	"hash/fnv"
	"os"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/monitor/procfs"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// ErrInterrupted is returned when a signal stopped the campaign.
var ErrInterrupted = errors.New("interrupted")

// StoreFile is the name of the results database inside a results directory.
const StoreFile = "results.db"

// Outcome says where the results are and how far the campaign got.
type Outcome struct {
	Dir       string // results directory
	StorePath string
	Spec      *spec.Spec
	Runs      int // runs in the plan
	Completed int // planned runs with a completed run, including earlier sessions
	Failed    int // runs that failed in this session
}

// Options control one invocation.
type Options struct {
	Progress progress.Reporter // nil = quiet
	// Now is used to name new results directories; nil = time.Now.
	Now func() time.Time
	// Configure, when set, is called with the spec before the target opens
	// (the command line sizes the Go scheduler to the target type).
	Configure func(*spec.Spec)
	// Kubernetes, when set, launches the load agents as pods instead of
	// load.agents (headroom run --agents k8s:N; agents_k8s.go).
	Kubernetes *KubernetesAgents
}

// Start creates a new results directory for s and runs the whole campaign.
func Start(ctx context.Context, s *spec.Spec, opt Options) (Outcome, error) {
	ss, err := NewSession(s, SessionOptions{Now: opt.Now})
	if err != nil {
		return Outcome{}, err
	}
	out, err := execute(ctx, s, ss.Store, ss.Dir, opt)
	if err == nil {
		return out, ss.Close()
	}
	// A campaign that failed before its first run (a missing password
	// variable, a server that would not start) measured nothing: no
	// summary or report of nothing (no StorePath), and no empty results
	// directory (a server's log the error points to keeps it).
	runs, rerr := ss.Store.Runs()
	ss.Close()
	if rerr == nil && len(runs) == 0 {
		out.StorePath = ""
		if removeBareDir(ss.Dir) {
			out.Dir = ""
		}
	}
	return out, err
}

// ErrNothingToResume is returned by Resume when every planned run of the
// campaign has completed.
var ErrNothingToResume = errors.New("nothing to resume")

// Resume continues the campaign whose results directory is dir, running only
// the planned runs that have no completed run yet.
func Resume(ctx context.Context, dir string, opt Options) (Outcome, error) {
	ss, s, err := ReopenSession(dir)
	if err != nil {
		return Outcome{}, err
	}
	defer ss.Close()
	if _, err := ss.Store.MarkRunningInterrupted("the process ended without finishing this run"); err != nil {
		return Outcome{}, err
	}
	planned, pending, err := pendingRuns(s, ss.Store)
	if err != nil {
		return Outcome{}, err
	}
	if pending == 0 {
		return Outcome{Dir: ss.Dir, StorePath: ss.Store.Path(), Spec: s, Runs: planned, Completed: planned}, ErrNothingToResume
	}
	return execute(ctx, s, ss.Store, ss.Dir, opt)
}

// pendingRuns counts the campaign's planned runs and those without a
// completed run in st. A sweep that stopped plans no level above the one
// that saturated (sweep.go).
func pendingRuns(s *spec.Spec, st *store.Store) (planned, pending int, err error) {
	done, err := st.CompletedSlots()
	if err != nil {
		return 0, 0, err
	}
	stops, err := readSweepStops(s, st)
	if err != nil {
		return 0, 0, err
	}
	for _, b := range s.Blocks() {
		for _, p := range b.Runs {
			if stops.beyond(s, b, p) {
				continue
			}
			planned++
			if !done[b.Treatment*spec.SlotsPerTreatment+p.Slot] {
				pending++
			}
		}
	}
	return planned, pending, nil
}

// removeBareDir removes a results directory that holds only what a new
// session writes before its first run (the spec copy, the store and the
// lock) and says whether it did. A directory with anything else, such as
// a managed server's log that the error points to, is kept.
func removeBareDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == "spec.yaml", n == LockFile, strings.HasPrefix(n, StoreFile):
		default:
			return false
		}
	}
	return os.RemoveAll(dir) == nil
}

// RunSeed derives a run's random seed from the campaign seed and the run's
// plan slot, so that a resumed run replays exactly the same requests; slot
// -1 seeds population, so that run and probe load the same records.
func RunSeed(seed int64, slot int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", seed, slot)
	return h.Sum64()
}

type executor struct {
	s      *spec.Spec
	st     *store.Store
	tgt    target.Target
	wcfg   workload.Config
	ops    []workload.OpType
	plan   []spec.PlannedRun
	prog   progress.Reporter
	total  time.Duration
	done   time.Duration
	perRun time.Duration
	levels []float64
	// next is where the next run's inserts start (key number and statement
	// sequences): records inserted by earlier runs stay in the target, so
	// later runs must continue after them.
	next keySpace
	// holes are the key numbers of earlier runs' inserts that stored
	// nothing (dropped or failed), so "latest" in later runs skips them.
	holes    []uint64
	sampler  *procfs.Sampler // nil when monitoring is off
	hostMons hostMonitors    // the provider's hosts' samplers; empty for this machine alone or without monitoring
	// hostMonOf are the same samplers by host name, and live the sources
	// the running run's monitor samples (nil between runs): cluster
	// events add and remove hosts while a run goes on (nodes.go).
	hostMonOf map[string]infra.Monitor
	live      *liveSources
	undo      nodeUndo     // what the running run's cluster events changed
	clock     *serverClock // nil when the target reports no server times
	rs        resetState
	setup     *Setup
	faults    infra.Faulter // the provider's run-time events; nil when it has none
	killed    bool          // a kill event stopped the target's server in this run
	tr        treatmentRun
	sweep     *sweeper // the treatment's sweep (sweep.go); nil when its levels are a list
	agents    *fleet   // load.agents (agents.go); nil = this process drives the load
	partial   string   // agents.go: which agents' shares the running run lost, "" = none
	// ctl is the running run's controller (controller.go), nil without
	// one; odsSeed the treatment's ODS records from the spec's stores.
	ctl     *controllerRun
	odsSeed []ods.Record
}

// treatmentRun is one treatment of a campaign as the executor runs it.
type treatmentRun struct {
	name     string
	index    int               // position among the campaign's treatments
	set      []results.Setting // the paths the treatment set, with their values
	slotBase int               // added to plan slots in the store (spec.SlotsPerTreatment apart)
	planned  time.Duration     // left to run in earlier treatments' plans (progress)
	total    time.Duration     // left to run in the whole campaign (progress)
	// runsBefore are the campaign's runs in blocks before this one and
	// runsAll all of its runs, so that progress counts runs across the
	// campaign (runsAll 0: the plan is the campaign).
	runsBefore, runsAll int
}

// execute runs every treatment of the campaign in its blocks' order (or
// the campaign itself when it has none), each block with its own target
// and lab.
func execute(ctx context.Context, s *spec.Spec, st *store.Store, dir string, opt Options) (Outcome, error) {
	if len(s.Treatments) == 0 {
		out, err := executeTreatment(ctx, s, treatmentRun{total: -1}, st, dir, opt)
		out.Spec = s
		return out, err
	}
	done, err := st.CompletedSlots()
	if err != nil {
		return Outcome{Dir: dir, StorePath: st.Path(), Spec: s}, err
	}
	stops, err := readSweepStops(s, st)
	if err != nil {
		return Outcome{Dir: dir, StorePath: st.Path(), Spec: s}, err
	}
	// The treatments run in blocks (spec.Blocks): a treatment's whole plan,
	// or one repetition of it with blocks: repetition, each a session.
	blocks := s.Blocks()
	left := make([]time.Duration, len(blocks))
	todo := make([]int, len(blocks))
	var total time.Duration
	for k, b := range blocks {
		per := perRunTime(b.Spec)
		for _, p := range b.Runs {
			if !done[b.Treatment*spec.SlotsPerTreatment+p.Slot] && !stops.beyond(s, b, p) {
				left[k] += per
				todo[k]++
			}
		}
		total += left[k]
	}
	runsAll := 0
	for _, b := range blocks {
		runsAll += len(b.Runs)
	}
	out := Outcome{Dir: dir, StorePath: st.Path(), Spec: s}
	if err := recordAllTreatments(st, s); err != nil {
		return out, err
	}
	var before time.Duration
	var errs []error
	for k, b := range blocks {
		t := s.Treatments[b.Treatment]
		if todo[k] == 0 {
			// Completed by an earlier session: no target to bring up.
			out.Runs += len(b.Runs)
			out.Completed += len(b.Runs)
			continue
		}
		tr := treatmentRun{name: t.Name, index: b.Treatment, set: settingsOf(t), slotBase: b.Treatment * spec.SlotsPerTreatment, planned: before, total: total,
			runsBefore: out.Runs, runsAll: runsAll}
		before += left[k]
		o, err := executeTreatment(ctx, b.Spec, tr, st, dir, opt)
		out.Runs += o.Runs
		out.Completed += o.Completed
		out.Failed += o.Failed
		if err == nil {
			continue
		}
		err = fmt.Errorf("treatment %s: %w", t.Name, err)
		if errors.Is(err, ErrInterrupted) || isFatal(err) || (o.Failed > 0 && s.OnFailure == "stop") || o.Runs == 0 {
			return out, err
		}
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// perRunTime is how long one run of s takes: warmup (rounded up to whole
// intervals, as the engine does), measured phase and cooldown.
func perRunTime(s *spec.Spec) time.Duration {
	interval := s.Interval.Duration
	warm := (s.Phases.Warmup.Duration + interval - 1) / interval * interval
	return warm + s.Phases.Measure.Duration + s.Phases.Cooldown.Duration
}

// executeTreatment runs one treatment's plan (the whole campaign when the
// spec has no treatments).
func executeTreatment(ctx context.Context, s *spec.Spec, tr treatmentRun, st *store.Store, dir string, opt Options) (_ Outcome, err error) {
	out := Outcome{Dir: dir, StorePath: st.Path(), Spec: s}
	sess := &Session{Dir: dir, Store: st, Progress: progressOf(opt), Configure: opt.Configure}
	setup, err := sess.Open(ctx, Treatment{Name: tr.name, Index: tr.index, Set: tr.set, Spec: s})
	if err != nil {
		return out, err
	}
	defer func() {
		if cerr := setup.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	tgt, wcfg := setup.Target, setup.Workload
	if err := checkReset(s.Reset, tgt, s.Target.Type); err != nil {
		return out, err
	}

	done, err := st.CompletedSlots()
	if err != nil {
		return out, err
	}
	ex := &executor{s: s, st: st, tgt: tgt, wcfg: wcfg, ops: wcfg.Ops(), plan: s.Plan(), prog: progressOf(opt), levels: s.Levels(), clock: newServerClock(tgt), setup: setup, faults: setup.Faults(), tr: tr}
	defer ex.prog.Finish()
	if err := ex.startSweep(done); err != nil {
		return out, err
	}
	out.Runs = ex.sweepPlanned()
	ex.perRun = perRunTime(s)
	for _, p := range ex.plan {
		if !done[tr.slotBase+p.Slot] && !ex.beyondSweep(p) {
			ex.total += ex.perRun
		}
	}
	if tr.total >= 0 {
		// Progress counts the whole campaign across treatments.
		ex.total, ex.done = tr.total, tr.planned
	}

	if ex.sampler, err = newSampler(s.Monitor, serverPIDs(tgt)); err != nil {
		return out, err
	}
	defer func() {
		if ex.sampler != nil {
			ex.sampler.Close() // the current one: a restart replaces it
		}
	}()
	ex.hostMonOf = map[string]infra.Monitor{}
	if ex.sampler != nil {
		if ex.hostMons, ex.hostMonOf, err = openHostMonitors(setup.Hosts); err != nil {
			return out, err
		}
		// A function, not the slice now: cluster events add hosts.
		defer func() { ex.hostMons.Close() }()
	}
	if ex.next, err = ex.lastKeySpace(); err != nil {
		return out, err
	}
	populated, err := setup.Fill(ctx, ex.populating)
	if err != nil {
		return out, err
	}
	if populated {
		ex.rs.pristine = true
		// The target holds only the loaded records again: inserts restart
		// after them (sequences keep counting, which is harmless).
		ex.next.NextInsert, ex.holes = 0, nil
	}
	if err := ex.snapshot(ctx); err != nil {
		return out, err
	}
	// Relative levels get their rates from a short probe (relative.go),
	// on the filled target and before the load agents start.
	if err := ex.probeLevels(ctx, opt.Kubernetes); err != nil {
		return out, err
	}
	if ex.agents, err = ex.startAgents(ctx, dir, opt.Kubernetes); err != nil { // agents.go
		return out, err
	}
	defer func() {
		if cerr := ex.agents.close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	for _, p := range ex.plan {
		if done[tr.slotBase+p.Slot] {
			out.Completed++
		}
	}
	for i, p := range ex.plan {
		if done[tr.slotBase+p.Slot] || ex.beyondSweep(p) {
			continue
		}
		if ctx.Err() != nil {
			return out, ErrInterrupted
		}
		status, err := ex.runOne(ctx, p)
		switch {
		case status == store.StatusCompleted:
			out.Completed++
		case status == store.StatusInterrupted:
			return out, ErrInterrupted
		default:
			out.Failed++
			if err != nil && (isFatal(err) || errors.Is(err, ErrInterrupted)) {
				return out, err
			}
			if s.OnFailure == "stop" {
				return out, fmt.Errorf("run %d failed and on_failure is stop: %v; the results so far are in %s (resume with headroom run --resume %s)", p.Seq+1, err, dir, dir)
			}
		}
		if err := ex.afterSweepRun(i); err != nil {
			return out, err
		}
		out.Runs = ex.sweepPlanned()
		if ctx.Err() == nil && s.Phases.Cooldown.Duration > 0 {
			ex.update(p, "cooldown", load.Tick{}, load.Totals{})
			sleepCtx(ctx, s.Phases.Cooldown.Duration)
		}
		ex.done += ex.perRun
	}
	if out.Failed > 0 {
		return out, fmt.Errorf("%d of %d runs failed; see the run table (headroom export --table runs %s)", out.Failed, out.Runs, dir)
	}
	return out, nil
}

// isFatal tells errors that will fail every following run too (the store
// cannot be written) from errors of one run.
func isFatal(err error) bool {
	var se *storeError
	return errors.As(err, &se)
}

type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

func progressOf(opt Options) progress.Reporter {
	if opt.Progress == nil {
		return progress.Quiet()
	}
	return opt.Progress
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
