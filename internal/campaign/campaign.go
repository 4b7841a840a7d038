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
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/headroom-dev/headroom/internal/hostinfo"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/monitor/procfs"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/version"
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
}

// Start creates a new results directory for s and runs the whole campaign.
func Start(ctx context.Context, s *spec.Spec, opt Options) (Outcome, error) {
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	base := s.Output
	if !filepath.IsAbs(base) && s.File != "" {
		base = filepath.Join(filepath.Dir(s.File), base)
	}
	dir, err := newResultsDir(base, s.Name, now())
	if err != nil {
		return Outcome{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), s.Source, 0o644); err != nil {
		return Outcome{}, fmt.Errorf("writing the spec copy into %s: %w", dir, err)
	}
	st, err := store.Create(filepath.Join(dir, StoreFile), store.Campaign{
		Name: s.Name, SpecFile: s.File, SpecYAML: string(s.Source), Seed: s.Seed,
		HostJSON: hostinfo.Collect().JSON(), ToolVersion: version.Version, CreatedAt: now(),
	})
	if err != nil {
		return Outcome{}, err
	}
	defer st.Close()
	return execute(ctx, s, st, dir, opt)
}

// Resume continues the campaign whose results directory is dir, running only
// the planned runs that have no completed run yet.
func Resume(ctx context.Context, dir string, opt Options) (Outcome, error) {
	path := filepath.Join(dir, StoreFile)
	if _, err := os.Stat(path); err != nil {
		return Outcome{}, fmt.Errorf("%s is not a Headroom results directory (no %s in it); pass the directory that `headroom run` printed", dir, StoreFile)
	}
	st, err := store.Open(path)
	if err != nil {
		return Outcome{}, err
	}
	defer st.Close()
	c, err := st.Campaign()
	if err != nil {
		return Outcome{}, err
	}
	name := c.SpecFile
	if name == "" {
		name = "spec.yaml"
	}
	s, err := spec.Parse(name, []byte(c.SpecYAML))
	if err != nil {
		return Outcome{}, fmt.Errorf("the spec stored in %s no longer validates: %w", path, err)
	}
	s.File = c.SpecFile
	if _, err := st.MarkRunningInterrupted("the process ended without finishing this run"); err != nil {
		return Outcome{}, err
	}
	return execute(ctx, s, st, dir, opt)
}

func newResultsDir(base, name string, t time.Time) (string, error) {
	stamp := t.Format("20060102-150405")
	for i := 0; i < 100; i++ {
		dir := filepath.Join(base, name+"-"+stamp)
		if i > 0 {
			dir += "-" + strconv.Itoa(i)
		}
		if err := os.MkdirAll(base, 0o755); err != nil {
			return "", fmt.Errorf("cannot create the output directory %s: %w (set output: in the spec to a writable place)", base, err)
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
	holes   []uint64
	sampler *procfs.Sampler // nil when monitoring is off
	labMon  *lab.Monitor    // the lab hosts' sampler; nil without a lab or monitoring
	clock   *serverClock    // nil when the target reports no server times
	rs      resetState
	lab     *lab.Lab // nil when the spec has no lab
	limits  *limitLog
	killed  bool // a kill event stopped the target's server in this run
	tr      treatmentRun
}

// Setup is a target ready for load: the spec's lab (if it has one) is up,
// with the target's managed server on its host, and the target is open.
type Setup struct {
	Target target.Target
	Lab    *lab.Lab // nil without a lab: section
	keep   bool
	limits *limitLog // writes the lab hosts' limits as they change
}

// OpenTarget brings up the spec's lab (recording it in st) and opens its
// target in results directory dir. Close undoes both. The probe uses it
// too, so that a target placed on a lab host works the same there.
func OpenTarget(s *spec.Spec, dir string, st *store.Store, prog progress.Reporter) (*Setup, error) {
	if prog == nil {
		prog = progress.Quiet()
	}
	f, ok := registry.Lookup(s.Target.Type)
	if !ok {
		return nil, fmt.Errorf("target.type: unknown target %q", s.Target.Type)
	}
	specDir := ""
	if s.File != "" {
		specDir = filepath.Dir(s.File)
	}
	env := registry.Env{Dir: dir}
	su := &Setup{limits: newLimitLog(st)}
	if s.Lab != nil {
		lb, err := upLab(s, specDir, st, prog)
		if err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
		su.Lab, su.keep = lb, s.Lab.Keep
		env.Lab = placer(lb)
		if err := su.limits.record(lb, time.Now(), "up"); err != nil {
			return nil, errors.Join(err, lb.Close(su.keep))
		}
	}
	tgt, err := f.Open(s.Target.Options, env)
	if err != nil {
		if su.Lab != nil {
			err = errors.Join(err, su.Lab.Close(su.keep))
		}
		return nil, err
	}
	su.Target = tgt
	return su, nil
}

// Close closes the target (stopping the servers it runs), then takes the
// lab down when this process brought it up and the spec did not keep it.
func (su *Setup) Close() error {
	var errs []error
	if su.Target != nil {
		errs = append(errs, su.Target.Close())
	}
	if su.Lab != nil {
		if err := su.Lab.Close(su.keep); err != nil {
			errs = append(errs, fmt.Errorf("lab: %w", err))
		}
	}
	return errors.Join(errs...)
}

// treatmentRun is one treatment of a campaign as the executor runs it.
type treatmentRun struct {
	name     string
	index    int               // position among the campaign's treatments
	set      []results.Setting // the paths the treatment set, with their values
	slotBase int               // added to plan slots in the store (spec.SlotsPerTreatment apart)
	planned  time.Duration     // left to run in earlier treatments' plans (progress)
	total    time.Duration     // left to run in the whole campaign (progress)
}

// execute runs every treatment of the campaign in order (or the campaign
// itself when it has none), each with its own target and lab.
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
	left := make([]time.Duration, len(s.Treatments))
	var total time.Duration
	for i, t := range s.Treatments {
		per := perRunTime(t.Spec)
		for _, p := range t.Spec.Plan() {
			if !done[i*spec.SlotsPerTreatment+p.Slot] {
				left[i] += per
			}
		}
		total += left[i]
	}
	out := Outcome{Dir: dir, StorePath: st.Path(), Spec: s}
	var before time.Duration
	var errs []error
	for i, t := range s.Treatments {
		tr := treatmentRun{name: t.Name, index: i, set: settingsOf(t), slotBase: i * spec.SlotsPerTreatment, planned: before, total: total}
		before += left[i]
		o, err := executeTreatment(ctx, t.Spec, tr, st, dir, opt)
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
	if opt.Configure != nil {
		opt.Configure(s)
	}
	specDir := ""
	if s.File != "" {
		specDir = filepath.Dir(s.File)
	}
	wcfg, err := WorkloadConfig(s.Workload, specDir)
	if err != nil {
		return out, err
	}
	setup, err := OpenTarget(s, dir, st, progressOf(opt))
	if err != nil {
		return out, err
	}
	defer func() {
		if cerr := setup.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	tgt, lb := setup.Target, setup.Lab
	if err := checkReset(s.Reset, tgt, s.Target.Type); err != nil {
		return out, err
	}
	if err := RecordTreatment(st, s, tr.name, tr.index, setup, tr.set); err != nil {
		return out, err
	}

	done, err := st.CompletedSlots()
	if err != nil {
		return out, err
	}
	ex := &executor{s: s, st: st, tgt: tgt, wcfg: wcfg, ops: wcfg.Ops(), plan: s.Plan(), prog: progressOf(opt), levels: s.Levels(), clock: newServerClock(tgt), lab: lb, limits: setup.limits, tr: tr}
	defer ex.prog.Finish()
	out.Runs = len(ex.plan)
	ex.perRun = perRunTime(s)
	for _, p := range ex.plan {
		if !done[tr.slotBase+p.Slot] {
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
	if lb != nil && ex.sampler != nil {
		if ex.labMon, err = lb.NewMonitor(); err != nil {
			return out, fmt.Errorf("monitoring the lab: %w", err)
		}
		defer ex.labMon.Close()
	}
	populated, err := ex.populated()
	if err != nil {
		return out, err
	}
	if e, ok := tgt.(target.Ephemeral); ok && e.Ephemeral() {
		// A server instance made for this session starts empty, whatever
		// an earlier session loaded into its own instance.
		populated = false
	}
	if ex.next, err = ex.lastKeySpace(); err != nil {
		return out, err
	}
	// The table is emptied only when it is about to be populated, so that
	// populate: false keeps the user's data and a resume after an
	// interrupted populate starts the population again from scratch.
	if err := tgt.Prepare(ctx, wcfg, *s.Phases.Populate && !populated); err != nil {
		return out, err
	}
	if *s.Phases.Populate && !populated {
		if err := ex.populate(ctx); err != nil {
			return out, err
		}
		ex.rs.pristine = true
		// The target holds only the loaded records again: inserts restart
		// after them (sequences keep counting, which is harmless).
		ex.next.NextInsert, ex.holes = 0, nil
	}
	if err := ex.snapshot(ctx); err != nil {
		return out, err
	}

	for _, p := range ex.plan {
		if done[tr.slotBase+p.Slot] {
			out.Completed++
		}
	}
	for _, p := range ex.plan {
		if done[tr.slotBase+p.Slot] {
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
