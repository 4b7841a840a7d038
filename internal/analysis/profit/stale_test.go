package profit

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/history"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

const sec = int64(time.Second)

func at(s float64) int64 { return int64(s * float64(sec)) }

func hw(key string, v int64, from, to float64, outcome string) history.Op {
	return history.Op{Process: 0, Kind: history.Write, Key: key, Value: v, InvokeNS: at(from), CompleteNS: at(to), Outcome: outcome, Level: "QUORUM"}
}

func hr(key string, v int64, from float64, outcome string) history.Op {
	return history.Op{Process: 1, Kind: history.Read, Key: key, Value: v, InvokeNS: at(from), CompleteNS: at(from + 0.01), Outcome: outcome, Level: "ONE"}
}

// staleHistory has 4 stale reads in its first 10 s, one at 1.8 s among
// them, and one more at 10.5 s.
func staleHistory() []history.Op {
	return []history.Op{
		hw("a", 1, 0.1, 0.2, history.OK),
		hr("a", 0, 0.15, history.OK), // overlaps the write: not counted
		hr("a", 0, 0.3, history.OK),  // stale, 1 behind
		hr("a", 1, 0.4, history.OK),
		hw("a", 2, 1.0, 1.1, history.OK),
		hr("a", 0, 1.2, history.OK), // stale, 2 behind
		hr("a", 1, 1.8, history.OK), // stale, 1 behind
		hr("a", 2, 1.9, history.OK),
		hw("b", 1, 5.0, 5.1, history.OK),
		hr("b", history.NoValue, 5.2, history.OK), // stale: not found
		hr("b", 0, 5.3, history.Fail),             // observed nothing
		hr("b", 1, 5.4, history.OK),
		hw("b", 2, 6.0, 6.1, history.Info), // not acknowledged: reading 1 is fresh
		hr("b", 1, 7.0, history.OK),
		hr("b", 0, 10.5, history.OK), // stale, after the measured phase
	}
}

// The count is the staleness analysis's (k-staleness > 0) over the reads
// invoked in the window; writes before the window still make reads in it
// stale.
func TestStaleInWindow(t *testing.T) {
	ops := staleHistory()
	for _, c := range []struct {
		from, to float64
		want     int64
	}{{0, 10, 4}, {0, 11, 5}, {2, 12, 2}, {1.8, 1.81, 1}, {1.9, 5, 0}} {
		if got := staleInWindow(ops, at(c.from), at(c.to)); got != c.want {
			t.Errorf("stale reads in [%gs, %gs) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
	// The measured phase starts after the warm-up rounded up to whole
	// intervals: 1.5 s of warm-up in 1 s intervals measures from 2 s.
	r, err := results.New(resultstest.MoneyStore(t, "", "w", []resultstest.MoneyConfig{{Name: "x", Nodes: 1, Capacity: 10}}, []float64{5}, 1, time.Millisecond, time.Second, results.Plan{}))
	if err != nil {
		t.Fatal(err)
	}
	run := r.Runs()[0]
	if err := r.Store().AppendHistory(run.ID, ops); err != nil {
		t.Fatal(err)
	}
	if n, err := staleReads(r, run, results.Load{Warmup: 1500 * time.Millisecond, Interval: time.Second}, true); n != 2 || err != nil {
		t.Errorf("after 1.5 s of warm-up: %d stale reads (%v), want 2", n, err)
	}
	if n, err := staleReads(r, run, results.Load{}, false); n != -1 || err != nil {
		t.Errorf("without a history: %d (%v), want -1 (not measured)", n, err)
	}
}

// A run with a history pays stale_cents per stale read of its measured
// phase; a run without one is not charged, and the note says which.
func TestFromResultsPricesStaleReads(t *testing.T) {
	cents := -0.01
	plan := plan4
	plan.SLA.StaleCents = &cents
	st := resultstest.MoneyStore(t, "", "stale", []resultstest.MoneyConfig{{Name: "rf3", Nodes: 1, Capacity: 100}}, []float64{50}, 2, 500*time.Millisecond, 6*time.Second, plan)
	runs, err := st.Runs()
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	if err := st.AppendHistory(runs[0].ID, staleHistory()); err != nil {
		t.Fatal(err)
	}
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	a, err := FromResults(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Both runs earn 500 requests × v in their 10 s; the first loses 4 ×
	// 0.01 cent on top.
	penalty := 4 * cents / CentsPerDollar
	want := map[int64][2]float64{runs[0].ID: {4, penalty}, runs[1].ID: {-1, 0}}
	for _, pr := range a.Runs {
		w := want[pr.ID]
		if float64(pr.Stale) != w[0] || !near(pr.Penalties, w[1]) || !near(float64(pr.RevenuePerHour), 360*(500*v+w[1])) {
			t.Errorf("run %d: %d stale, penalties %g, revenue/h %g; want %g stale, penalties %g, revenue/h %g",
				pr.ID, pr.Stale, pr.Penalties, float64(pr.RevenuePerHour), w[0], w[1], 360*(500*v+w[1]))
		}
	}
	if len(a.Cells) != 1 || !near(a.Cells[0].Revenue.Mean, 360*(500*v+penalty/2)) {
		t.Errorf("cells %+v: the cell's revenue is the mean of the runs'", a.Cells)
	}
	if note := a.Notes[len(a.Notes)-1]; !strings.HasPrefix(note, "staleness is priced only where measured: 1 of 2 runs have a consistency history") {
		t.Errorf("note %q", note)
	}
	// Without stale_cents, the stale reads are still counted (measured)
	// but cost nothing.
	st2 := resultstest.MoneyStore(t, "", "unpriced", []resultstest.MoneyConfig{{Name: "rf3", Nodes: 1, Capacity: 100}}, []float64{50}, 1, 500*time.Millisecond, 6*time.Second, plan4)
	runs2, _ := st2.Runs()
	if err := st2.AppendHistory(runs2[0].ID, staleHistory()); err != nil {
		t.Fatal(err)
	}
	r2, err := results.New(st2)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := FromResults(r2, Options{})
	if err != nil || a2.Runs[0].Stale != 4 || a2.Runs[0].Penalties != 0 {
		t.Errorf("unpriced: %+v (%v); want 4 stale reads and no penalty", a2.Runs, err)
	}
}
