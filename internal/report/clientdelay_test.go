package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

const delaySpec = `name: synthdelay
target: {type: sqlite}
workload: {ycsb: c, record_count: 100}
load: {model: closed, clients: [4, 64]}
phases: {warmup: 0s, measure: 10s}
repetitions: 1
`

// The client-side delay a campaign stored per run shows beside the
// percentiles: two columns of the report's latency table and a line under
// each level of the summary. A run without the figure leaves its level's
// cells empty.
func TestClientDelayBesideThePercentiles(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "synthdelay", SpecFile: "s.yaml", SpecYAML: delaySpec, Seed: 1, ToolVersion: "test", CreatedAt: t0})
	must := resultstest.Must(t)
	at := t0
	for i, clients := range []float64{4, 64} {
		id, err := st.StartRun(store.Run{Seq: i, Slot: i, Model: "closed", LevelIndex: i, Level: clients, Repetition: 1, Start: at})
		must(err)
		h := store.NewHistogram()
		must(h.RecordValues(1000, 10_000)) // 1 ms
		must(st.AddIntervals([]store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: at, Duration: 10 * time.Second, Count: h.TotalCount(), Hist: h}}))
		if clients == 64 {
			must(st.PutClientDelay(store.ClientDelay{RunID: id, Samples: 5000, P50: 360 * time.Microsecond, P99: 850 * time.Microsecond}))
		}
		end := at.Add(10 * time.Second)
		must(st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: h.TotalCount(), Completed: h.TotalCount(),
			MeasureStart: at, MeasureEnd: end, MeasureSecs: 10, Throughput: float64(h.TotalCount()) / 10}))
		at = end.Add(time.Second)
	}
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}

	rep, err := page.Build(r)
	if err != nil {
		t.Fatal(err)
	}
	var lat *page.Table
	for _, s := range rep.Sections {
		for _, b := range s.Blocks {
			if b.Table != nil && b.Table.ID == "levels-latency" {
				lat = b.Table
			}
		}
	}
	if lat == nil {
		t.Fatal("the report has no latency table")
	}
	if got := lat.Columns[4].Title + " | " + lat.Columns[5].Title; got != "client-side delay p50 | client-side delay p99" {
		t.Fatalf("columns 4 and 5: %q", got)
	}
	if got := lat.Rows[0][5].Text + " | " + lat.Rows[1][4].Text + " | " + lat.Rows[1][5].Text; got != "– | 360 µs | 850 µs" {
		t.Errorf("delay cells (4 clients p99 | 64 clients p50 | p99) = %q", got)
	}

	in, _, err := levels.FromResults(r, "")
	if err != nil {
		t.Fatal(err)
	}
	h := report.HeaderOf("synthdelay", r.Treatments()[0])
	if h.ClientDelay, err = report.ClientDelayOf(r, in); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	report.Terminal(&out, h, levels.Summarize(in), 0)
	text := out.String()
	if n := strings.Count(text, "client-side delay p50"); n != 1 {
		t.Errorf("%d client-side delay lines, want 1 (the 64-client level):\n%s", n, text)
	}
	if !strings.Contains(text, "client-side delay p50 360µs · p99 850µs") {
		t.Errorf("summary lacks the 64-client level's delay:\n%s", text)
	}
}
