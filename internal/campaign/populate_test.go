package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/spec"
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

// A resumed session whose SQLite file was deleted finds the data gone and
// populates again, instead of measuring an empty table (runs of 100%
// not_found).
func TestResumeRepopulatesWhenTheDataIsGone(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: gone
target: {type: sqlite}
workload: {ycsb: c, record_count: 200}
load: {model: closed, clients: [1]}
output: out
`)
	ss, err := NewSession(s, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fill := func(ss *Session, s *spec.Spec) (bool, []string) {
		t.Helper()
		su, err := ss.Open(context.Background(), Treatments(s)[0])
		if err != nil {
			t.Fatal(err)
		}
		defer su.Close()
		var phases []string
		filled, err := su.Fill(context.Background(), func(p progress.State) {
			if p.Populate == nil { // steps, not the rows as they load
				phases = append(phases, p.Phase)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return filled, phases
	}
	if filled, _ := fill(ss, s); !filled {
		t.Fatal("the first session did not populate")
	}
	ss.Close()
	for _, f := range []string{"target.db", "target.db-wal", "target.db-shm"} {
		_ = os.Remove(filepath.Join(ss.Dir, f))
	}
	ss2, s2, err := ReopenSession(ss.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ss2.Close()
	filled, phases := fill(ss2, s2)
	if !filled || len(phases) == 0 || !strings.Contains(phases[0], "no longer holds the data") {
		t.Fatalf("after the file was deleted: filled %v, phases %q", filled, phases)
	}
	// And a third session finds the data there again: nothing to do.
	ss2.Close()
	ss3, s3, err := ReopenSession(ss.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ss3.Close()
	if filled, phases := fill(ss3, s3); filled || len(phases) != 0 {
		t.Fatalf("with the data in place: filled %v, phases %q", filled, phases)
	}
}
