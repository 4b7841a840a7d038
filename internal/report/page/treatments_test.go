package page

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// A campaign with treatments gets a load-response and an interval section
// per treatment, each from that treatment's runs only and with that
// treatment's SLO, with IDs unique in the report.
func TestBuildTreatmentsSeparately(t *testing.T) {
	dir := t.TempDir()
	spec := synthSpec + "treatments:\n  - name: slow\n  - name: Fast.2\n    set:\n      load.rates: [800]\n      slo.threshold: 2ms\n"
	st := resultstest.Create(t, dir, store.Campaign{Name: "tr", SpecFile: "tr.yaml", SpecYAML: spec, CreatedAt: synthT0})
	start := synthT0
	add := func(tr string, slot int, li int, level, tput float64) {
		id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Treatment: tr, Model: "open", LevelIndex: li, Level: level, Repetition: 1, Start: start})
		if err != nil {
			t.Fatal(err)
		}
		var ivs []store.Interval
		for k := range 3 {
			h := store.NewHistogram()
			_ = h.RecordValues(500, int64(tput))
			ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: "read", Start: start.Add(time.Duration(k) * time.Second), Duration: time.Second, Count: int64(tput), Hist: h})
		}
		if err := st.AddIntervals(ivs); err != nil {
			t.Fatal(err)
		}
		end := start.Add(3 * time.Second)
		if err := st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: int64(3 * level), Completed: int64(3 * tput),
			MeasureStart: start, MeasureEnd: end, MeasureSecs: 3, Throughput: tput}); err != nil {
			t.Fatal(err)
		}
		start = end.Add(time.Second)
	}
	add("slow", 0, 0, 100, 100)
	add("slow", 2, 1, 200, 150)
	add("Fast.2", 100000, 0, 800, 790)
	r := build(t, st)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range r.Sections {
		ids = append(ids, s.ID)
	}
	got := strings.Join(ids, ",")
	if got != "campaign,runs,t-slow-load-response,t-slow-intervals,t-fast-2-load-response,t-fast-2-intervals,events" {
		t.Fatalf("sections %s", got)
	}
	slow := section(t, r, "t-slow-load-response")
	fast := section(t, r, "t-fast-2-load-response")
	if !strings.Contains(slow.Title, "treatment slow") || !strings.Contains(slow.Summary, "150.0 ok/s at 200 req/s") {
		t.Errorf("slow: %q / %q", slow.Title, slow.Summary)
	}
	if !strings.Contains(fast.Summary, "790.0 ok/s at 800 req/s") || strings.Contains(fast.Summary, "200 req/s") {
		t.Errorf("fast mixes in other runs: %q", fast.Summary)
	}
	if !strings.HasPrefix(slow.Summary, "The SLO p99 ≤ 1ms (all operations) is met") || !strings.HasPrefix(fast.Summary, "The SLO p99 ≤ 2ms (all operations) is met") {
		t.Errorf("each treatment's own SLO: slow %q, fast %q", slow.Summary, fast.Summary)
	}
	if lat := findTable(t, r, "t-fast-2-levels-latency"); !strings.Contains(lat.Title, "2ms") {
		t.Errorf("fast latency table %q", lat.Title)
	}
	want := "Campaign tr ran 2 treatments (slow, Fast.2) whose load, levels, phases or target differ; each treatment's load response says what it ran; 3 of 3 runs completed."
	if got := section(t, r, "campaign").Summary; got != want {
		t.Errorf("campaign summary\n got %s\nwant %s", got, want)
	}
}
