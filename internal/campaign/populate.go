package campaign

import (
	"context"
	"encoding/json"
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

// populated reports whether an earlier session already populated this
// treatment's target.
func (ex *executor) populated() (bool, error) {
	evs, err := ex.st.Events(-1)
	if err != nil {
		return false, err
	}
	for _, e := range evs {
		if e.Kind != eventPopulated {
			continue
		}
		var d populatedDetail
		_ = json.Unmarshal([]byte(e.Detail), &d)
		if d.Treatment == ex.tr.name {
			return true, nil
		}
	}
	return false, nil
}

func (ex *executor) addPopulated(d populatedDetail) error {
	d.Treatment = ex.tr.name
	b, _ := json.Marshal(d)
	if err := ex.st.AddEvent(store.Event{Time: time.Now(), Kind: eventPopulated, Detail: string(b)}); err != nil {
		return &storeError{err}
	}
	return nil
}

// populate loads the data set before the first run and records it.
func (ex *executor) populate(ctx context.Context) error {
	if ex.wcfg.IsStatements() {
		return ex.loadDataset(ctx)
	}
	start := time.Now()
	ex.prog.Update(progress.State{Phase: "populate", Runs: len(ex.plan), Total: ex.total})
	if err := Populate(ctx, ex.tgt, ex.wcfg, RunSeed(ex.s.Seed, -1), nil); err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return err
	}
	return ex.addPopulated(populatedDetail{Records: ex.wcfg.RecordCount, Seconds: time.Since(start).Seconds()})
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

// loadDataset fills the tables of a statement workload through the target.
func (ex *executor) loadDataset(ctx context.Context) error {
	dl, ok := ex.tgt.(target.DatasetLoader)
	if !ok {
		return fmt.Errorf("workload.statements: the %s target does not run SQL statement workloads; use sqlite, postgres or mysql", ex.s.Target.Type)
	}
	start := time.Now()
	var rows int64
	err := dl.LoadDataset(ctx, ex.wcfg, RunSeed(ex.s.Seed, -1), func(done, total int64) {
		rows = total
		ex.prog.Update(progress.State{Phase: fmt.Sprintf("populate %d/%d rows", done, total), Runs: len(ex.plan), Total: ex.total})
	})
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return fmt.Errorf("populate: %w", err)
	}
	return ex.addPopulated(populatedDetail{Rows: rows, Seconds: time.Since(start).Seconds()})
}
