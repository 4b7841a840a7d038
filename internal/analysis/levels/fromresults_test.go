package levels

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// The two-treatment store Headroom wrote before the fact tables
// (internal/results/testdata/v1/treatments.db): treatments small and big
// at 500 and 2000 req/s, 2 repetitions each, in randomized order; SLO p95
// of reads within 5 ms, 8 ms in big.
func TestFromResultsOneTreatment(t *testing.T) {
	r := resultstest.OpenV1(t, "treatments.db")
	for _, c := range []struct {
		name      string
		threshold time.Duration
		ids       []int64 // level 0 rep 1, level 0 rep 2, level 1 rep 1, level 1 rep 2
	}{
		{"small", 5 * time.Millisecond, []int64{3, 1, 4, 2}},
		{"big", 8 * time.Millisecond, []int64{7, 5, 8, 6}},
	} {
		in, incomplete, err := FromResults(r, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if in.Model != "open" || incomplete != 0 {
			t.Errorf("%s: model %q, %d incomplete", c.name, in.Model, incomplete)
		}
		if in.SLO == nil || in.SLO.Percentile != 95 || in.SLO.Threshold != c.threshold || in.SLO.Op != "read" {
			t.Errorf("%s: SLO %+v, want p95 of read within %v", c.name, in.SLO, c.threshold)
		}
		var ids []int64
		for _, rd := range in.Runs {
			ids = append(ids, rd.Run.ID)
			if rd.Run.Treatment != c.name || len(rd.Points) == 0 || len(rd.Resources) == 0 {
				t.Errorf("%s: run %d of %q with %d intervals, %d hosts", c.name, rd.Run.ID, rd.Run.Treatment, len(rd.Points), len(rd.Resources))
			}
			// The fold holds the measured phase's intervals and nothing else.
			ivs, err := r.Intervals(rd.Run.ID, "measure")
			if err != nil {
				t.Fatal(err)
			}
			var want, got int64
			starts := map[time.Time]bool{}
			for _, iv := range ivs {
				want += iv.Count
				starts[iv.Start] = true
			}
			for _, p := range rd.Points {
				got += p.Count
			}
			if got != want || len(rd.Points) != len(starts) || rd.Latencies["all"].TotalCount() != want {
				t.Errorf("run %d: folded %d requests in %d points (merged %d), the measured phase has %d in %d intervals",
					rd.Run.ID, got, len(rd.Points), rd.Latencies["all"].TotalCount(), want, len(starts))
			}
		}
		if len(ids) != 4 || ids[0] != c.ids[0] || ids[1] != c.ids[1] || ids[2] != c.ids[2] || ids[3] != c.ids[3] {
			t.Errorf("%s: runs %v, want %v (level, then repetition order)", c.name, ids, c.ids)
		}
		s := Summarize(in)
		if len(s.Levels) != 2 || s.Levels[0].Reps != 2 || s.FirstFail != -1 {
			t.Errorf("%s: summary levels %d, first fail %d", c.name, len(s.Levels), s.FirstFail)
		}
	}
}

// A slot run again counts once, with its completed run (the store refuses
// a second completion); the interrupted runs count as incomplete of their
// treatment only.
func TestFromResultsLastCompletedPerSlot(t *testing.T) {
	r := resultstest.OpenV1(t, "treatments.db")
	st := r.Store()
	first := r.CompletedRuns("small")[0] // slot 0: level 0, repetition 1
	id, err := st.StartRun(store.Run{Seq: 9, Slot: first.Slot, Treatment: "small", Model: "open", LevelIndex: first.LevelIndex,
		Level: first.Level, Repetition: first.Repetition, Start: first.End.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(id, store.StatusInterrupted, "interrupted by the user", first.End.Add(time.Hour+time.Second), store.RunSummary{}); err != nil {
		t.Fatal(err)
	}
	again, err := st.StartRun(store.Run{Seq: 10, Slot: first.Slot, Treatment: "small", Model: "open", LevelIndex: first.LevelIndex,
		Level: first.Level, Repetition: first.Repetition, Start: first.End.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	// The store itself keeps one completed run per slot: a second
	// completion is refused, and the slot keeps its first run.
	if err := st.FinishRun(again, store.StatusCompleted, "", first.End.Add(2*time.Hour+time.Second), first.Summary); err == nil ||
		!strings.Contains(err.Error(), "already completed") {
		t.Fatalf("a second completion of slot %d: %v, want refused", first.Slot, err)
	}
	if err := st.FinishRun(again, store.StatusInterrupted, "interrupted by the user", first.End.Add(2*time.Hour+time.Second), store.RunSummary{}); err != nil {
		t.Fatal(err)
	}
	r, err = results.New(st) // re-read the runs
	if err != nil {
		t.Fatal(err)
	}
	in, incomplete, err := FromResults(r, "small")
	if err != nil {
		t.Fatal(err)
	}
	if incomplete != 2 || len(in.Runs) != 4 || in.Runs[0].Run.ID != first.ID {
		t.Errorf("%d incomplete, %d runs, first %d; want 2, 4 and the slot's first run %d", incomplete, len(in.Runs), in.Runs[0].Run.ID, first.ID)
	}
	if _, incomplete, _ := FromResults(r, "big"); incomplete != 0 {
		t.Errorf("big: %d incomplete, want 0", incomplete)
	}
}
