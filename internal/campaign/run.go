package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/workload"
)

const (
	eventPopulated = "populated"
	eventKeySpace  = "key_space"
	populateBatch  = 500
)

// keySpace is where a run's inserts start: the YCSB insert key number and
// the next value of every statement sequence parameter. Records inserted by
// earlier runs stay in the target, so later runs continue after them.
type keySpace struct {
	NextInsert uint64  `json:"next_insert"`
	ReservedTo uint64  `json:"reserved_to,omitempty"`
	Sequences  []int64 `json:"sequences,omitempty"`
}

func (ex *executor) insertsKeys() bool {
	if ex.wcfg.IsStatements() {
		for _, st := range ex.wcfg.Statements {
			for _, p := range st.Params {
				if p.Kind == workload.ParamSequence {
					return true
				}
			}
		}
		return false
	}
	return ex.wcfg.Mix[workload.Insert] > 0
}

// reserveKeys records, once per interval of a run that inserts, how far the
// run's inserts may reach before the next interval: the keys (and sequence
// values) issued so far plus twice the last interval's and a margin. If the
// process dies (SIGKILL, power loss) before the run ends, a resumed
// campaign starts after this bound and never reuses a key that reached the
// target. A clean end records the exact next values instead.
func (ex *executor) reserveKeys(id int64, gen *workload.Generator, last *keySpace) error {
	if !ex.insertsKeys() {
		return nil
	}
	cur := keySpace{NextInsert: gen.NextInsert(), Sequences: gen.Sequences()}
	ks := keySpace{NextInsert: cur.NextInsert, ReservedTo: cur.NextInsert + 2*(cur.NextInsert-last.NextInsert) + 1000}
	for i, v := range cur.Sequences {
		prev := v
		if i < len(last.Sequences) {
			prev = last.Sequences[i]
		}
		ks.Sequences = append(ks.Sequences, v+2*(v-prev)+1000)
	}
	*last = cur
	return ex.addKeySpace(id, ks)
}

// reserveAhead records, before a run sends anything, a reservation far
// beyond where its inserts start, so that a process killed during the
// first interval (before the per-interval reservations begin) cannot make
// a resumed campaign reuse keys. Skipping key numbers costs nothing.
func (ex *executor) reserveAhead(id int64, start keySpace) error {
	if !ex.insertsKeys() {
		return nil
	}
	const ahead = 1 << 20
	ks := keySpace{NextInsert: start.NextInsert, ReservedTo: start.NextInsert + ahead}
	for _, v := range start.Sequences {
		ks.Sequences = append(ks.Sequences, v+ahead)
	}
	return ex.addKeySpace(id, ks)
}

func (ex *executor) addKeySpace(id int64, ks keySpace) error {
	detail, _ := json.Marshal(ks)
	if err := ex.st.AddEvent(store.Event{RunID: id, Time: time.Now(), Kind: eventKeySpace, Detail: string(detail)}); err != nil {
		return &storeError{err}
	}
	return nil
}

// lastKeySpace returns where the next run's inserts must start, from the
// latest key_space event: its exact values after a clean end, or its
// reservation when the run was cut short (zero when none was recorded: the
// generator then starts at record_count and at each sequence's first value).
func (ex *executor) lastKeySpace() (keySpace, error) {
	evs, err := ex.st.Events(-1)
	if err != nil {
		return keySpace{}, err
	}
	mine, err := ex.treatmentRuns()
	if err != nil {
		return keySpace{}, err
	}
	var next keySpace
	for _, e := range evs {
		if e.Kind == eventKeySpace && mine[e.RunID] {
			var ks keySpace
			if json.Unmarshal([]byte(e.Detail), &ks) == nil {
				next = keySpace{NextInsert: max(ks.NextInsert, ks.ReservedTo), Sequences: ks.Sequences}
			}
		}
	}
	return next, nil
}

// treatmentRuns is the set of run IDs of this treatment (every run when
// the campaign has no treatments): each treatment has its own target, so
// its key space continues only its own runs'.
func (ex *executor) treatmentRuns() (map[int64]bool, error) {
	runs, err := ex.st.Runs()
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for _, r := range runs {
		if r.Treatment == ex.tr.name {
			out[r.ID] = true
		}
	}
	return out, nil
}

func (ex *executor) levelLabel(v float64) string {
	unit := " clients"
	if ex.s.Load.Model == "open" {
		unit = " req/s"
	}
	l := strconv.FormatFloat(v, 'f', -1, 64) + unit
	if ex.s.Load.Model == "open" && ex.s.Load.Schedule != nil {
		// A schedule's level is its mean rate, a fraction of no use in
		// full precision.
		l = "schedule, mean " + strconv.FormatFloat(v, 'f', 1, 64) + unit
	}
	if ex.tr.name != "" {
		l = ex.tr.name + ", " + l
	}
	return l
}

func (ex *executor) update(p spec.PlannedRun, phase string, t load.Tick, live load.Totals) {
	ex.prog.Update(ex.state(p, phase, t, live))
}

func (ex *executor) state(p spec.PlannedRun, phase string, t load.Tick, live load.Totals) progress.State {
	s := progress.State{
		Run: ex.runNumber(p), Runs: max(ex.tr.runsAll, len(ex.plan)), LevelIndex: p.LevelIndex + 1, Levels: len(ex.levels),
		Level: ex.levelLabel(p.Level), Repetition: p.Repetition, Reps: ex.s.Repetitions, Phase: phase,
		Done: ex.done + t.Start + t.Duration, Total: ex.total,
		Late: live.Late, Dropped: live.Dropped, Errs: live.Errors,
	}
	if phase == "cooldown" {
		s.Done = ex.done + ex.perRun - ex.s.Phases.Cooldown.Duration
	}
	if t.Duration > 0 {
		var ok int64
		agg := load.NewHistogram()
		for _, o := range t.Stats {
			ok += o.Count
			agg.Merge(o.Hist)
		}
		s.Throughput = float64(ok) / t.Duration.Seconds()
		s.P99 = time.Duration(agg.ValueAtQuantile(99)) * time.Microsecond
	}
	return s
}

// runNumber is p's 1-based position in the campaign's execution order: in
// its block's plan, after the runs of earlier blocks.
func (ex *executor) runNumber(p spec.PlannedRun) int {
	for i, q := range ex.plan {
		if q.Slot == p.Slot {
			return ex.tr.runsBefore + i + 1
		}
	}
	return ex.tr.runsBefore + p.Seq + 1
}

// runOne executes one planned run and records it; it returns the run's status.
func (ex *executor) runOne(ctx context.Context, p spec.PlannedRun) (string, error) {
	s := ex.s
	resetInfo, resetErr := ex.reset(ctx)
	if errors.Is(resetErr, ErrInterrupted) {
		return store.StatusInterrupted, resetErr
	}
	id, err := ex.st.StartRun(store.Run{
		Seq: p.Seq, Slot: ex.tr.slotBase + p.Slot, Treatment: ex.tr.name, Model: s.Load.Model, LevelIndex: p.LevelIndex, Level: p.Level,
		Repetition: p.Repetition, Start: time.Now(), Status: store.StatusRunning,
	})
	if err != nil {
		return store.StatusFailed, &storeError{err}
	}
	if resetInfo != "" {
		if err := ex.st.AddEvent(store.Event{RunID: id, Time: time.Now(), Kind: eventReset, Detail: resetInfo}); err != nil {
			return store.StatusFailed, &storeError{err}
		}
	}
	if resetErr != nil {
		if ferr := ex.st.FinishRun(id, store.StatusFailed, resetErr.Error(), time.Now(), store.RunSummary{}); ferr != nil {
			return store.StatusFailed, &storeError{ferr}
		}
		ex.prog.RunDone(ex.state(p, "done", load.Tick{}, load.Totals{}), "failed: "+resetErr.Error())
		return store.StatusFailed, resetErr
	}
	if ex.clock != nil {
		if cerr := ex.clock.start(ctx); cerr != nil {
			ex.noteServerTimeError(id, cerr)
		}
	}
	dead := deadWatch{after: s.Load.DeadAfter.Duration}
	if len(s.Events) > 0 {
		// A designed outage (kill, stop, link down, partition) is what the
		// run is about, not a reason to end it.
		dead.after = 0
	}
	ex.update(p, "warmup", load.Tick{}, load.Totals{})
	cfg := load.Config{
		Model: s.Load.Model, ThinkTime: s.Load.ThinkTime.Duration,
		MaxInFlight: s.Load.MaxInFlight, LateAfter: s.Load.LateAfter.Duration, DropAfter: s.Load.DropAfter.Duration,
		Timeout: s.Load.Timeout.Duration, Warmup: s.Phases.Warmup.Duration, Measure: s.Phases.Measure.Duration,
		Interval: s.Interval.Duration, Seed: RunSeed(s.Seed, p.Slot), Ops: ex.ops,
	}
	cfg.InProcess, cfg.Percentile = verdictSettings(s)
	var schedErr error
	if s.Load.Model == "open" {
		// The engine is handed the run's schedule: the level's rate, or
		// the spec's schedule (whose mean rate is the level).
		cfg.Schedule, schedErr = s.Load.Arrivals(p.Level, cfg.Seed)
	} else {
		cfg.Clients = int(p.Level)
	}
	stopMonitor, stopEvents, stopController := func() {}, func() {}, func() {}
	var cons *consistencyRun                // workload.consistency (consistency.go); nil without
	ctl, ctlErr := ex.prepareController(id) // controller.go; nil without
	ex.ctl = ctl
	defer func() { ex.ctl = nil }()
	cfg.Started = func(t0 time.Time) {
		warm := (cfg.Warmup + cfg.Interval - 1) / cfg.Interval * cfg.Interval
		stopMonitor = ex.startMonitor(id, t0, t0.Add(warm+cfg.Measure))
		stopEvents = ex.startEvents(ctx, id, t0.Add(warm))
		stopController = ctl.start(ctx, t0.Add(warm), t0.Add(warm+cfg.Measure))
		cons.begin(ctx, t0, t0.Add(warm+cfg.Measure))
	}
	var res load.Result
	gen, err := workload.New(ex.wcfg, cfg.Seed)
	if err == nil {
		err = schedErr
	}
	if err == nil {
		err = ctlErr
	}
	if err == nil {
		gen.ContinueInserts(ex.next.NextInsert)
		gen.ContinueSequences(ex.next.Sequences)
		gen.ContinueHoles(ex.holes)
		var live load.Totals
		lastKeys := keySpace{NextInsert: gen.NextInsert(), Sequences: gen.Sequences()}
		if err = ex.reserveAhead(id, lastKeys); err != nil {
			gen = nil
		}
		sink := func(t load.Tick) error {
			ivs := make([]store.Interval, 0, len(t.Stats))
			for _, o := range t.Stats {
				ivs = append(ivs, store.Interval{
					RunID: id, Phase: o.Phase.String(), Op: ex.wcfg.OpName(o.Op), Start: t.At, Duration: t.Duration,
					Count: o.Count, Errors: o.Errors, Late: o.Late, Dropped: o.Dropped, ErrorKinds: o.ErrorKinds, Hist: o.Hist,
				})
				live.Late += o.Late
				live.Dropped += o.Dropped
				live.Errors += o.Errors
			}
			if err := ex.st.AddIntervals(ivs); err != nil {
				return &storeError{err}
			}
			ex.ctl.observe(t)
			if err := ex.reserveKeys(id, gen, &lastKeys); err != nil {
				return err
			}
			if ex.clock != nil {
				xs, cerr := ex.clock.interval(ctx, id, t)
				if cerr != nil {
					ex.noteServerTimeError(id, cerr)
				}
				if err := ex.st.AddServerTimes(xs); err != nil {
					return &storeError{err}
				}
			}
			if err := dead.observe(t); err != nil {
				return err
			}
			ex.update(p, t.Phase.String(), t, live)
			return nil
		}
		if err == nil {
			cons, err = ex.openConsistency(ctx, id)
		}
		switch {
		case err == nil && ex.agents != nil: // load agents (agents.go)
			res, err = ex.runAgents(ctx, id, p, cfg, gen, sink)
		case err == nil:
			res, err = cons.run(ctx, cfg, ex.tgt, gen, sink)
		}
		stopEvents()
		stopController()
		stopMonitor()
		if cerr := cons.finish(ctx); cerr != nil && err == nil {
			err = cerr
		}
		// Heal, read back every acknowledged record, put the set-up back
		// (failure.go).
		if aerr := ex.afterEvents(ctx, id, gen); aerr != nil && err == nil {
			err = aerr
		}
	}

	// A run in which not one request succeeded measured nothing: it fails
	// with the engine's sentence on why (a target that never answered, or
	// answered only errors), before any error that ended it.
	status, msg := store.StatusCompleted, ""
	failure := res.Failure()
	switch {
	case res.Interrupted:
		status, msg = store.StatusInterrupted, "stopped by a signal"
	case err != nil && failure != "":
		status, msg = store.StatusFailed, failure+"; "+err.Error()
	case err != nil:
		status, msg = store.StatusFailed, err.Error()
	case failure != "":
		status, msg = store.StatusFailed, failure
		err = errors.New(failure)
	}
	if status == store.StatusCompleted && ex.partial != "" {
		msg, ex.partial = ex.partial, "" // some agents' shares are missing (agents.go)
	}
	m := res.Measured
	sum := store.RunSummary{
		Sent: m.Sent(), Completed: m.Completed, Errors: m.Errors, Late: m.Late, Dropped: m.Dropped,
		Unfinished: res.Unfinished, MeasureSecs: (res.MeasureEnd - res.MeasureStart).Seconds(),
		Throughput: res.Throughput, ClientCPU: res.ClientCPU, ClientLimited: res.ClientLimited, ClientNote: res.Note,
	}
	if sum.MeasureSecs < 0 {
		sum.MeasureSecs = 0
	}
	if !res.Start.IsZero() {
		sum.MeasureStart = res.Start.Add(res.MeasureStart)
		sum.MeasureEnd = res.Start.Add(max(res.MeasureEnd, res.MeasureStart))
	}
	if qerr := ex.saveQuietWatch(id, res); qerr != nil {
		return store.StatusFailed, qerr
	}
	if d := res.Client.Delay; d.Samples > 0 { // the load generator's own scheduling delay (load/clientdelay.go)
		if derr := ex.st.PutClientDelay(store.ClientDelay{RunID: id, Samples: int64(d.Samples), P50: d.P50, P99: d.P99}); derr != nil {
			return store.StatusFailed, &storeError{derr}
		}
	}
	if ferr := ex.st.FinishRun(id, status, msg, time.Now(), sum); ferr != nil {
		return store.StatusFailed, &storeError{ferr}
	}
	if gen != nil {
		ex.holes = gen.Holes()
	}
	if gen != nil && ex.insertsKeys() {
		ex.next = keySpace{NextInsert: gen.NextInsert(), Sequences: gen.Sequences()}
		if err := ex.addKeySpace(id, ex.next); err != nil {
			return store.StatusFailed, err
		}
	}
	verdict := fmt.Sprintf("%s: %.1f ok/s", status, res.Throughput)
	if s.Load.Model == "open" {
		verdict += fmt.Sprintf(" of %.0f offered", p.Level)
	}
	verdict += fmt.Sprintf(", %d errors, %d late, %d dropped", m.Errors, m.Late, m.Dropped)
	if d := res.Client.Delay; d.Samples > 0 {
		verdict += fmt.Sprintf(", client-side delay p50/p99 %v/%v", d.P50.Round(time.Microsecond), d.P99.Round(time.Microsecond))
	}
	if res.Note != "" {
		verdict += "; " + res.Note
	}
	if status == store.StatusFailed {
		verdict += "; " + msg
	}
	ex.prog.RunDone(ex.state(p, "done", load.Tick{}, load.Totals{}), verdict)
	if errors.Is(err, context.Canceled) && res.Interrupted {
		err = nil
	}
	return status, err
}

// noteServerTimeError records once per run that the server could not report
// its execution times; the client-side measurements stand regardless.
func (ex *executor) noteServerTimeError(id int64, err error) {
	_ = ex.st.AddEvent(store.Event{RunID: id, Time: time.Now(), Kind: "server_time_error", Detail: err.Error()})
}
