package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// populatedDetail is the detail of a populated event.
type populatedDetail struct {
	Records int64   `json:"records,omitempty"`
	Rows    int64   `json:"rows,omitempty"`
	Seconds float64 `json:"seconds"`
	// RowsPerSecond is records (or rows) over seconds.
	RowsPerSecond float64 `json:"rows_per_second,omitempty"`
	// Unthrottled: the lab's limits were lifted while it loaded
	// (lab.populate_unthrottled), so its seconds say nothing of them.
	Unthrottled bool   `json:"unthrottled,omitempty"`
	Treatment   string `json:"treatment,omitempty"`
}

// The causes of the limit changes populate_unthrottled records around a
// population.
const (
	causePopulateUnthrottled = "populate_unthrottled"
	causePopulateDone        = "populate_done"
	// The same around the start of the target's servers.
	causeStartUnthrottled = "start_unthrottled"
	causeStartDone        = "start_done"
)

// Fill makes the target ready for the workload: it prepares it, and
// populates it when the spec asks (phases.populate) and no earlier session
// of this results directory has populated this treatment's target yet (a
// server instance made for this session starts empty, whatever an earlier
// session loaded into its own). show hears what it is doing (the phase
// "populate", with the rows loaded, their rate and ETA as they come; a
// phase saying why it populates again); nil = nothing. It reports whether
// it populated, so the target now holds exactly the loaded data set.
func (su *Setup) Fill(ctx context.Context, show func(progress.State)) (bool, error) {
	populated, err := su.populated()
	if err != nil {
		return false, err
	}
	if e, ok := su.Target.(target.Ephemeral); ok && e.Ephemeral() {
		populated = false
	}
	// The table is emptied only when it is about to be populated, so that
	// populate: false keeps the user's data and a resume after an
	// interrupted populate starts the population again from scratch.
	load := *su.spec.Phases.Populate && !populated
	if err := su.Target.Prepare(ctx, su.Workload, load); err != nil {
		return false, err
	}
	if populated && *su.spec.Phases.Populate {
		// An earlier session populated this target: check that its data is
		// still there before measuring it (a deleted SQLite file or a
		// flushed server would otherwise give runs of 100% not_found).
		gone, err := su.dataGone(ctx)
		if err != nil {
			return false, err
		}
		if gone {
			if show != nil {
				show(progress.State{Phase: "populate again: the target no longer holds the data an earlier session loaded"})
			}
			if err := su.Target.Prepare(ctx, su.Workload, true); err != nil {
				return false, err
			}
			return true, su.populate(ctx, show)
		}
	}
	if !load {
		return false, nil
	}
	return true, su.populate(ctx, show)
}

// dataGone reads the first and the last record the population loaded and
// reports whether either is missing. Statement workloads' tables are not
// checked (their rows have no key Headroom can name).
func (su *Setup) dataGone(ctx context.Context) (bool, error) {
	w := su.Workload
	if w.IsStatements() || w.RecordCount < 1 {
		return false, nil
	}
	gen, err := workload.New(w, RunSeed(su.spec.Seed, -1))
	if err != nil {
		return false, err
	}
	c, err := su.Target.NewClient(ctx)
	if err != nil {
		return false, fmt.Errorf("checking the loaded data: %w", err)
	}
	defer c.Close()
	op := gen.NewOp()
	for _, k := range []int64{0, w.RecordCount - 1} {
		gen.Populate(k, op)
		op.Type = workload.Read
		err := c.Do(ctx, op)
		if errors.Is(err, target.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("checking the loaded data (reading record %d): %w", k, err)
		}
	}
	return false, nil
}

// populated reports whether an earlier session already populated this
// treatment's target and no other treatment populated after it:
// treatments may share one database (the default SQLite file), and with
// blocks: repetition they take turns on it.
func (su *Setup) populated() (bool, error) {
	evs, err := su.st.Events(-1)
	if err != nil {
		return false, err
	}
	last, found := "", false
	for _, e := range evs {
		if e.Kind != eventPopulated {
			continue
		}
		var d populatedDetail
		_ = json.Unmarshal([]byte(e.Detail), &d)
		last, found = d.Treatment, true
	}
	return found && last == su.treatment, nil
}

func (su *Setup) addPopulated(d populatedDetail) error {
	d.Treatment = su.treatment
	b, _ := json.Marshal(d)
	if err := su.st.AddEvent(store.Event{Time: time.Now(), Kind: eventPopulated, Detail: string(b)}); err != nil {
		return &storeError{err}
	}
	return nil
}

// populate loads the data set into the prepared target, with the lab's
// limits lifted when it asks (populate_unthrottled), and records it. show
// hears the rows loaded, their recent rate and the time left.
func (su *Setup) populate(ctx context.Context, show func(progress.State)) (err error) {
	if show == nil {
		show = func(progress.State) {}
	}
	unthrottled := su.spec.Lab != nil && su.spec.Lab.PopulateUnthrottled
	if unthrottled {
		if err := su.unthrottle(causePopulateUnthrottled); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, su.rethrottle(causePopulateDone)) }()
	}
	start := time.Now()
	show(progress.State{Phase: "populate"})
	meter := progress.NewRowMeter(start)
	var rows int64
	watch := func(done, total int64) {
		rows = total
		r := meter.At(time.Now(), done, total)
		show(progress.State{Phase: "populate", Populate: &r})
	}
	d := populatedDetail{Unthrottled: unthrottled}
	if su.Workload.IsStatements() {
		err = su.loadDataset(ctx, watch)
		d.Rows = rows
	} else {
		err = Populate(ctx, su.Target, su.Workload, RunSeed(su.spec.Seed, -1), watch)
		d.Records = su.Workload.RecordCount
	}
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return err
	}
	d.Seconds = time.Since(start).Seconds()
	if d.Seconds > 0 {
		d.RowsPerSecond = float64(d.Records+d.Rows) / d.Seconds
	}
	return su.addPopulated(d)
}

// unthrottle lifts the lab's volume and CPU limits for a population (or
// the servers' start) and records the lift in the hosts' limit log with
// cause, so that nothing judges those seconds against the defined limits.
func (su *Setup) unthrottle(cause string) error {
	u, ok := su.Provider.(infra.Unthrottler)
	if !ok {
		return fmt.Errorf("lab.populate_unthrottled: the %s provider cannot lift its hosts' limits; leave it out", su.Provider.Name())
	}
	if err := u.Unthrottle(); err != nil {
		return errors.Join(fmt.Errorf("lab.populate_unthrottled: lifting the hosts' limits: %w", err), u.Rethrottle())
	}
	return su.recordLimits(time.Now(), cause)
}

// rethrottle puts the lab's limits back as defined after a population
// (or the servers' start), before any run, and records them with cause.
func (su *Setup) rethrottle(cause string) error {
	if err := su.Provider.(infra.Unthrottler).Rethrottle(); err != nil {
		return fmt.Errorf("lab.populate_unthrottled: putting the hosts' limits back after populating: %w", err)
	}
	return su.recordLimits(time.Now(), cause)
}

// Populate loads a workload's data set into tgt: record_count YCSB records
// in batches (through the target's bulk loader when it has one), or a
// statement workload's tables. seed decides the records (RunSeed(seed, -1)
// for the campaign's). progress, when not nil, hears how far it got.
func Populate(ctx context.Context, tgt target.Target, w workload.Config, seed uint64, progress func(done, total int64)) error {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	if w.IsStatements() {
		dl, ok := tgt.(target.DatasetLoader)
		if !ok {
			return fmt.Errorf("workload.statements: this target does not run SQL statement workloads; use sqlite, postgres or mysql")
		}
		if err := dl.LoadDataset(ctx, w, seed, progress); err != nil {
			return fmt.Errorf("populate: %w", err)
		}
		return nil
	}
	gen, err := workload.New(w, seed)
	if err != nil {
		return err
	}
	c, err := tgt.NewClient(ctx)
	if err != nil {
		return fmt.Errorf("populate: %w", err)
	}
	defer c.Close()
	loader, _ := c.(target.Loader)
	batch := make([]*workload.Op, populateBatch)
	for i := range batch {
		batch[i] = gen.NewOp()
	}
	n := w.RecordCount
	for i := int64(0); i < n; i += populateBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := int(min(populateBatch, n-i))
		for j := 0; j < k; j++ {
			gen.Populate(i+int64(j), batch[j])
		}
		if loader != nil {
			err = loader.LoadBatch(ctx, batch[:k])
		} else {
			for _, op := range batch[:k] {
				if err = c.Do(ctx, op); err != nil {
					break
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("populate: inserting record %d: %w", i, err)
		}
		progress(i+int64(k), n)
	}
	return nil
}

// populating shows a population step in the progress display, at the
// campaign's place in its plan.
func (ex *executor) populating(s progress.State) {
	s.Runs, s.Total, s.Done = len(ex.plan), ex.total, ex.done
	ex.prog.Update(s)
}

// loadDataset fills the tables of a statement workload through the target;
// watch hears the rows loaded of all.
func (su *Setup) loadDataset(ctx context.Context, watch func(done, total int64)) error {
	dl, ok := su.Target.(target.DatasetLoader)
	if !ok {
		return fmt.Errorf("workload.statements: the %s target does not run SQL statement workloads; use sqlite, postgres or mysql", su.spec.Target.Type)
	}
	if err := dl.LoadDataset(ctx, su.Workload, RunSeed(su.spec.Seed, -1), watch); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("populate: %w", err)
	}
	return nil
}
