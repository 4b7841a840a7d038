package agent

import (
	"strings"
	"testing"
)

func TestSplitOpenLoop(t *testing.T) {
	sh, err := Split("open", 3000, 256, 42, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	var rate float64
	seeds := map[uint64]bool{42: true}
	for i, s := range sh {
		rate += s.Rate
		if s.MaxInFlight != 86 {
			t.Errorf("agent %d: %d slots, want ceil(256/3) = 86", i, s.MaxInFlight)
		}
		if seeds[s.Seed] {
			t.Errorf("agent %d: seed %d repeats the run's or another agent's", i, s.Seed)
		}
		seeds[s.Seed] = true
		// Insert blocks are disjoint and follow each other.
		if want := uint64(1000) + uint64(i)*InsertSpan; s.InsertStart != want || s.InsertSpan != InsertSpan {
			t.Errorf("agent %d inserts from %d (span %d), want %d", i, s.InsertStart, s.InsertSpan, want)
		}
	}
	if rate != 3000 {
		t.Errorf("the agents' rates sum to %v, want 3000", rate)
	}
	if next := NextInsert(1000, 3); next != sh[2].InsertStart+InsertSpan {
		t.Errorf("the next run inserts from %d, after the last block ends at %d", next, sh[2].InsertStart+InsertSpan)
	}
	// The same run's shares are the same: seeds are derived, not drawn.
	again, _ := Split("open", 3000, 256, 42, 1000, 3)
	if again[1].Seed != sh[1].Seed {
		t.Error("agent seeds are not reproducible")
	}
}

func TestSplitClosedLoop(t *testing.T) {
	sh, err := Split("closed", 7, 0, 1, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{sh[0].Clients, sh[1].Clients, sh[2].Clients}; got[0] != 3 || got[1] != 2 || got[2] != 2 {
		t.Errorf("7 clients dealt to 3 agents as %v, want [3 2 2]", got)
	}
	_, err = Split("closed", 2, 0, 1, 0, 3)
	if err == nil || !strings.Contains(err.Error(), "at least one client") {
		t.Errorf("2 clients for 3 agents: %v", err)
	}
}
