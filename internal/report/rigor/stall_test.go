package rigor

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

const stallSpec = `name: synthstall
target: {type: sqlite}
workload: {ycsb: c, record_count: 100}
load: {model: closed, clients: [4, 8]}
phases: {warmup: 0s, measure: 10s}
repetitions: 1
`

// A closed-loop store written as the campaign writes it: at 4 clients the
// target stood still twice for 1 s (20% of the 10 s measured), every client
// waiting; at 8 clients nothing completed for at most 5 ms once, below the
// 10 ms threshold (10 paces of 1 ms). The section shows both runs, the
// finding names the stalled share and the longest stall.
func TestStallSectionAndFinding(t *testing.T) {
	st := resultstest.Create(t, "", store.Campaign{Name: "synthstall", SpecFile: "s.yaml", SpecYAML: stallSpec, Seed: 1, ToolVersion: "test", CreatedAt: synthT0})
	must := resultstest.Must(t)
	at := synthT0
	for i, clients := range []float64{4, 8} {
		id, err := st.StartRun(store.Run{Seq: i, Slot: i, Model: "closed", LevelIndex: i, Level: clients, Repetition: 1, Start: at})
		must(err)
		h := store.NewHistogram()
		must(h.RecordValues(1000, 32_000)) // 1 ms
		w := store.QuietWatch{RunID: id, Clients: int(clients), Left: int(clients), Floor: 4 * time.Millisecond}
		if clients == 4 {
			must(h.RecordValues(1_000_000, 8)) // the 8 requests that waited through the stalls
			for _, s := range []time.Duration{2 * time.Second, 6 * time.Second} {
				w.Periods = append(w.Periods, store.QuietPeriod{Start: at.Add(s), End: at.Add(s + time.Second), Waiting: 4})
			}
		} else {
			w.Periods = []store.QuietPeriod{{Start: at.Add(time.Second), End: at.Add(time.Second + 5*time.Millisecond), Waiting: 8}}
		}
		must(st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: at, Duration: 10 * time.Second, Count: h.TotalCount(), Hist: h}}))
		must(st.PutQuietWatch(w))
		end := at.Add(10 * time.Second)
		must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: h.TotalCount(), Completed: h.TotalCount(),
			MeasureStart: at, MeasureEnd: end, MeasureSecs: 10, Throughput: float64(h.TotalCount()) / 10}))
		at = end.Add(time.Second)
	}
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := StallSections(r)
	if err != nil || len(secs) != 1 {
		t.Fatalf("sections %v, %v", secs, err)
	}
	sec := secs[0]
	for _, want := range []string{"closed-loop latency understates: use an open loop", "At 4 clients", "20.0% of the measured time", "longest stall 1.00 s", "8 requests waited"} {
		if !strings.Contains(sec.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, sec.Summary)
		}
	}
	tb := sec.Blocks[0].Table
	if tb == nil || len(tb.Rows) != 2 || !strings.Contains(tb.Source, "10 paces") {
		t.Fatalf("table %+v", tb)
	}
	// Columns: clients, repetition, pace, stalls, stalled %, longest, waited, ...
	if got := tb.Rows[0][3].Text + " " + tb.Rows[0][4].Text + " " + tb.Rows[1][3].Text; got != "2 20.0 0" {
		t.Errorf("stalls and share: %q, want \"2 20.0 0\"", got)
	}
	if tb.Rows[0][10].Mark != "warn" || tb.Rows[1][10].Mark != "" {
		t.Errorf("corrected p99 marks %q and %q, want the stalled run marked only", tb.Rows[0][10].Mark, tb.Rows[1][10].Mark)
	}
	fs, err := Findings(r, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fs {
		if f.Label == "Stalls" {
			n++
			if !strings.HasPrefix(f.Text, "closed-loop latency understates") {
				t.Errorf("finding %q", f.Text)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d stall findings in %+v, want 1", n, fs)
	}
}

// A closed-loop store from before the stall watch: its runs are "not
// watched" but still corrected, with no finding; an open-loop store has no
// section at all.
func TestStallSectionOldStores(t *testing.T) {
	r := resultstest.OpenV1(t, "closed.db")
	secs, err := StallSections(r)
	if err != nil || len(secs) != 1 {
		t.Fatalf("sections %v, %v", secs, err)
	}
	if !strings.Contains(secs[0].Summary, "no stall watch was recorded") || secs[0].Blocks[0].Table.Rows[0][3].Text != "not watched" {
		t.Errorf("summary %q, row %v", secs[0].Summary, secs[0].Blocks[0].Table.Rows[0])
	}
	fs, err := Findings(r, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Label == "Stalls" {
			t.Errorf("finding without a watch: %q", f.Text)
		}
	}
	secs, err = StallSections(resultstest.OpenV1(t, "treatments.db"))
	if err != nil || len(secs) != 0 {
		t.Errorf("open loop: %v, %v", secs, err)
	}
}
