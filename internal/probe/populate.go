package probe

import (
	"context"
	"fmt"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// populateBatch is how many records go to the target per batch.
const populateBatch = 500

// Populate loads the workload's data set into the target before a probe,
// as `headroom run` does before its first run: record_count YCSB records
// (through the target's bulk loader when it has one) or a statement
// workload's tables. seed must be the one the run command uses for
// population, so that both load the same records. progress may be nil.
//
// It mirrors internal/campaign's populate step, which is not exported.
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
