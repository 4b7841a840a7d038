package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// populatedDetail is the detail of a populated event.
type populatedDetail struct {
	Records   int64   `json:"records,omitempty"`
	Rows      int64   `json:"rows,omitempty"`
	Seconds   float64 `json:"seconds"`
	Treatment string  `json:"treatment,omitempty"`
}

// Fill makes the target ready for the workload: it prepares it, and
// populates it when the spec asks (phases.populate) and no earlier session
// of this results directory has populated this treatment's target yet (a
// server instance made for this session starts empty, whatever an earlier
// session loaded into its own). phase hears what it is doing ("populate",
// "populate 300/1000 rows"); nil = nothing. It reports whether it
// populated, so the target now holds exactly the loaded data set.
func (su *Setup) Fill(ctx context.Context, phase func(string)) (bool, error) {
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
			if phase != nil {
				phase("populate again: the target no longer holds the data an earlier session loaded")
			}
			if err := su.Target.Prepare(ctx, su.Workload, true); err != nil {
				return false, err
			}
			return true, su.populate(ctx, phase)
		}
	}
	if !load {
		return false, nil
	}
	return true, su.populate(ctx, phase)
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

// populate loads the data set into the prepared target and records it.
func (su *Setup) populate(ctx context.Context, phase func(string)) error {
	if phase == nil {
		phase = func(string) {}
	}
	if su.Workload.IsStatements() {
		return su.loadDataset(ctx, phase)
	}
	start := time.Now()
	phase("populate")
	if err := Populate(ctx, su.Target, su.Workload, RunSeed(su.spec.Seed, -1), nil); err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return err
	}
	return su.addPopulated(populatedDetail{Records: su.Workload.RecordCount, Seconds: time.Since(start).Seconds()})
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

// populating shows a population step in the progress display.
func (ex *executor) populating(phase string) {
	ex.prog.Update(progress.State{Phase: phase, Runs: len(ex.plan), Total: ex.total})
}

// loadDataset fills the tables of a statement workload through the target.
func (su *Setup) loadDataset(ctx context.Context, phase func(string)) error {
	dl, ok := su.Target.(target.DatasetLoader)
	if !ok {
		return fmt.Errorf("workload.statements: the %s target does not run SQL statement workloads; use sqlite, postgres or mysql", su.spec.Target.Type)
	}
	start := time.Now()
	var rows int64
	err := dl.LoadDataset(ctx, su.Workload, RunSeed(su.spec.Seed, -1), func(done, total int64) {
		rows = total
		phase(fmt.Sprintf("populate %d/%d rows", done, total))
	})
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return fmt.Errorf("populate: %w", err)
	}
	return su.addPopulated(populatedDetail{Rows: rows, Seconds: time.Since(start).Seconds()})
}
