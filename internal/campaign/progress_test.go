package campaign

import (
	"context"
	"sync"
	"testing"

	"github.com/headroom-dev/headroom/internal/progress"
)

// runCounter records the run numbers a campaign reports as runs end.
type runCounter struct {
	mu   sync.Mutex
	done [][2]int // Run, Runs
}

func (c *runCounter) Update(progress.State) {}
func (c *runCounter) RunDone(s progress.State, _ string) {
	c.mu.Lock()
	c.done = append(c.done, [2]int{s.Run, s.Runs})
	c.mu.Unlock()
}
func (c *runCounter) Note(string) {}
func (c *runCounter) Finish()     {}

// Progress counts runs across the whole campaign, also when treatments
// are interleaved by repetition (each block a separate plan): run k of n,
// k rising by one to n.
func TestProgressCountsRunsAcrossBlocks(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: blocks-progress
target: {type: sqlite}
workload: {ycsb: c, record_count: 50}
load: {model: open, rates: [50], arrival: constant}
phases: {warmup: 0s, measure: 200ms}
interval: 100ms
repetitions: 2
factors:
  - {path: workload.ycsb, values: [b, c]}
blocks: repetition
output: out
`)
	c := &runCounter{}
	if _, err := Start(context.Background(), s, Options{Progress: c}); err != nil {
		t.Fatal(err)
	}
	if len(c.done) != 4 {
		t.Fatalf("%d runs reported, want 4: %v", len(c.done), c.done)
	}
	for i, d := range c.done {
		if d != [2]int{i + 1, 4} {
			t.Errorf("run %d reported as %d/%d; want %d/4", i+1, d[0], d[1], i+1)
		}
	}
}
