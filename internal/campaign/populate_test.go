package campaign

import (
	"context"
	"sync"
	"testing"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// countingTarget counts the operations its clients execute, by type.
type countingTarget struct {
	mu  sync.Mutex
	ops map[workload.OpType]int
	max uint64
}

func (c *countingTarget) Prepare(context.Context, workload.Config, bool) error { return nil }
func (c *countingTarget) NewClient(context.Context) (target.Client, error) {
	return countingClient{c}, nil
}
func (c *countingTarget) Close() error { return nil }

type countingClient struct{ t *countingTarget }

func (c countingClient) Do(_ context.Context, op *workload.Op) error {
	c.t.mu.Lock()
	c.t.ops[op.Type]++
	c.t.max = max(c.t.max, op.KeyNum)
	c.t.mu.Unlock()
	return nil
}
func (countingClient) Close() error { return nil }

// Populate (which run and the probe use) inserts record_count records numbered 0..record_count-1 through
// Do when the client has no bulk loader.
func TestPopulateInsertsRecordCount(t *testing.T) {
	w, err := workload.Preset("c")
	if err != nil {
		t.Fatal(err)
	}
	w.RecordCount = 1234
	tgt := &countingTarget{ops: map[workload.OpType]int{}}
	var last int64
	if err := Populate(context.Background(), tgt, w, 7, func(done, total int64) { last = done }); err != nil {
		t.Fatal(err)
	}
	if tgt.ops[workload.Insert] != 1234 || len(tgt.ops) != 1 || tgt.max != 1233 || last != 1234 {
		t.Fatalf("ops %v, max key %d, progress %d", tgt.ops, tgt.max, last)
	}
	w.RecordCount = 10
	w.Statements = []workload.Statement{{Name: "q"}}
	if err := Populate(context.Background(), tgt, w, 7, nil); err == nil {
		t.Fatal("a statement workload was populated through a target without a dataset loader")
	}
}
