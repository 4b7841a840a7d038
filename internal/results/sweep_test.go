package results

import (
	"testing"

	"github.com/headroom-dev/headroom/internal/store"
)

// SweepOf keeps each level's latest verdict (a level judged again after a
// resume), only the named treatment's, and Stop is the first saturated one.
func TestSweepOf(t *testing.T) {
	evs := []store.Event{
		{Kind: EventSweep, Detail: `{"treatment":"a","from":10,"step":10,"levels":5}`},
		{Kind: EventSweepLevel, Detail: `{"treatment":"a","level_index":1,"level":20,"saturated":true}`},
		{Kind: EventSweepLevel, Detail: `{"treatment":"a","level_index":0,"level":10}`},
		{Kind: EventSweepLevel, Detail: `{"treatment":"b","level_index":0,"level":10,"saturated":true}`},
		{Kind: EventSweepLevel, Detail: `{"treatment":"a","level_index":1,"level":20,"saturated":true,"reasons":["x"]}`},
		{Kind: EventSweepLevel, Detail: `{"treatment":"a","level_index":3,"level":40,"saturated":true}`},
	}
	sw := SweepOf(evs, "a")
	if sw == nil || sw.Plan.Levels != 5 || len(sw.Levels) != 3 {
		t.Fatalf("sweep %+v", sw)
	}
	stop, ok := sw.Stop()
	if !ok || stop.LevelIndex != 1 || len(stop.Reasons) != 1 {
		t.Errorf("stop %+v, want level 1 with the latest verdict's reason", stop)
	}
	if SweepOf(evs, "c") != nil {
		t.Error("a treatment without a sweep event has no sweep")
	}
}
