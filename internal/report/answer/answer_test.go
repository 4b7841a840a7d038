package answer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// The designed campaign: open loop at 100 and 200 req/s, 2 repetitions,
// SLO p99 <= 1 ms. At 100 req/s every request takes 500 µs and the runs
// complete 99 and 101 ok/s (mean 100, standard error 1, so the 95% t
// interval is ± 12.706 x 1 with 1 degree of freedom); at 200 req/s every
// request takes 1500 µs (the SLO fails) and the client limited both runs.
// A third run at 200 req/s failed and nothing completed its slot; after
// the first run at 200 req/s a write check found 3 of 100 records lost.
const designSpec = `name: design
target: {type: null}
workload: {ycsb: a, record_count: 100}
load: {model: open, arrival: constant, rates: [100, 200]}
phases: {warmup: 0s, measure: 10s}
repetitions: 2
slo: {percentile: 99, threshold: 1ms}
`

func designStore(t *testing.T) *results.Results {
	t.Helper()
	dir := t.TempDir()
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, dir, store.Campaign{Name: "design", SpecFile: "design.yaml", SpecYAML: designSpec, Seed: 1, ToolVersion: "test", CreatedAt: t0})
	must := resultstest.Must(t)
	start := t0
	slot := 0
	for li, level := range []float64{100, 200} {
		for rep := 1; rep <= 2; rep++ {
			id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Model: "open", LevelIndex: li, Level: level, Repetition: rep, Start: start})
			must(err)
			slot++
			lat := int64(500)
			if level == 200 {
				lat = 1500
			}
			var ivs []store.Interval
			for k := 0; k < 10; k++ {
				h := store.NewHistogram()
				must(h.RecordValues(lat, int64(level)))
				ivs = append(ivs, store.Interval{RunID: id, Phase: "measure", Op: "read", Start: start.Add(time.Duration(k) * time.Second), Duration: time.Second, Count: int64(level), Hist: h})
			}
			must(st.AddIntervals(ivs))
			end := start.Add(10 * time.Second)
			tput := level - 1
			if rep == 2 {
				tput = level + 1
			}
			sum := store.RunSummary{Sent: int64(10 * level), Completed: int64(10 * level), MeasureStart: start, MeasureEnd: end, MeasureSecs: 10,
				Throughput: tput, ClientLimited: level == 200}
			must(st.FinishRun(id, store.StatusCompleted, "", end, sum))
			if level == 200 && rep == 1 {
				must(st.AddEvent(store.Event{RunID: id, Time: end, Kind: eventWriteCheck, Detail: `{"checked":100,"lost":3,"strong":true}`}))
			}
			start = end.Add(time.Second)
		}
	}
	id, err := st.StartRun(store.Run{Seq: slot, Slot: slot, Model: "open", LevelIndex: 1, Level: 200, Repetition: 3, Start: start})
	must(err)
	must(st.FinishRun(id, store.StatusFailed, "the target closed the connection", start.Add(time.Second), store.RunSummary{}))
	r, err := results.Open(st.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestCardOfDesignedCampaign(t *testing.T) {
	c, err := Build(designStore(t))
	if err != nil {
		t.Fatal(err)
	}
	byTopic := func(ls []Line, topic string) []Line {
		var out []Line
		for _, l := range ls {
			if l.Topic == topic {
				out = append(out, l)
			}
		}
		return out
	}
	capLines := byTopic(c.Answers, Capacity)
	if len(capLines) != 1 || capLines[0].Evidence != CapacitySection {
		t.Fatalf("capacity lines %+v", capLines)
	}
	for _, want := range []string{"100 ok/s ± 12.71 (95% confidence, 2 repetitions) at 100 req/s", "SLO p99 ≤ 1ms", "first fails at 200 req/s"} {
		if !strings.Contains(capLines[0].Text, want) {
			t.Errorf("capacity %q lacks %q", capLines[0].Text, want)
		}
	}
	if c.Answers[0].Topic != Capacity {
		t.Errorf("the card opens with %s, want the capacity", c.Answers[0].Topic)
	}
	// No samples and no lab: no bottleneck or pressure to report.
	if n := len(byTopic(c.Answers, Pressure)) + len(byTopic(c.Answers, Bottleneck)); n != 1 && n != 0 {
		t.Errorf("answers %+v", c.Answers)
	}
	cl := byTopic(c.Attention, ClientLimit)
	if len(cl) != 1 || !strings.Contains(cl[0].Text, "at 200 req/s") || cl[0].Evidence != CapacitySection {
		t.Errorf("client limit %+v", cl)
	}
	lw := byTopic(c.Attention, LostWrites)
	if len(lw) != 1 || !strings.Contains(lw[0].Text, "lost 3 of 100 acknowledged records") || lw[0].Evidence != FailuresSection {
		t.Errorf("lost writes %+v", lw)
	}
	fr := byTopic(c.Attention, FailedRuns)
	if len(fr) != 1 || !strings.Contains(fr[0].Text, "1 run did not complete") || !strings.Contains(fr[0].Text, "the target closed the connection") || fr[0].Evidence != RunsSection {
		t.Errorf("failed runs %+v", fr)
	}
	if len(byTopic(c.Attention, Stalls)) != 0 {
		t.Errorf("an open loop cannot stall: %+v", c.Attention)
	}
	// The SLO held at 100 req/s and failed from 200 on: counted, and not a
	// finding of its own, since a level met it.
	if c.SLOFailed == 0 || c.SLOFailed >= c.SLOLevels || len(byTopic(c.Attention, SLOMissed)) != 0 {
		t.Errorf("SLO failed at %d of %d levels, lines %+v", c.SLOFailed, c.SLOLevels, byTopic(c.Attention, SLOMissed))
	}
}

// A lab store (postgres on db1 whose volume's IOPS a set_volume event
// raises mid-run) answers with its pressure and bottleneck as well, each
// linked to its section.
func TestCardOfLabStore(t *testing.T) {
	c, err := Build(resultstest.OpenV1(t, "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range append(c.Answers, c.Attention...) {
		t.Logf("%s %s: %s [%s]", l.Topic, l.Treatment, l.Text, l.Evidence)
		if l.Evidence == "" || l.Text == "" {
			t.Errorf("line without evidence or text: %+v", l)
		}
	}
	topics := map[string]bool{}
	for _, l := range c.Answers {
		topics[l.Topic] = true
	}
	for _, want := range []string{Capacity, Bottleneck, Pressure} {
		if !topics[want] {
			t.Errorf("no %s line in %+v", want, c.Answers)
		}
	}
}

// The plan hook adds its lines after the others'.
func TestPlanHook(t *testing.T) {
	PlanLines = func(r *results.Results) ([]Line, error) {
		return []Line{{Topic: Plan, Text: "run 2 nodes up to 300 req/s", Evidence: "plan"}}, nil
	}
	defer func() { PlanLines = nil }()
	c, err := Build(designStore(t))
	if err != nil {
		t.Fatal(err)
	}
	if last := c.Answers[len(c.Answers)-1]; last.Topic != Plan || last.Evidence != "plan" {
		t.Errorf("answers %+v", c.Answers)
	}
}

// Rules of one answer for the card, whichever renderer shows it: lost
// writes lead, before every answer; the summary never says that nothing
// needs attention while a write was lost or a level failed its SLO; and
// the counts read as English.
func TestCardLinesAndSummaryFollowTheRules(t *testing.T) {
	c := Card{
		Answers: []Line{{Topic: Capacity, Text: "100 ok/s"}, {Topic: Bottleneck, Text: "cpu of db1"}},
		Attention: []Line{{Topic: ClientLimit, Text: "the client"}, {Topic: LostWrites, Text: "3 of 100 records lost"},
			{Topic: FailedRuns, Text: "1 run failed"}},
	}
	var topics []string
	for _, l := range c.Lines() {
		topics = append(topics, fmt.Sprintf("%s/%v", l.Topic, l.Alert))
	}
	if got, want := strings.Join(topics, " "), "Lost writes/true Capacity/false Bottleneck/false Client limit/true Failed runs/true"; got != want {
		t.Errorf("lines in the order %s, want %s", got, want)
	}
	if s := c.Summary(); s != "3 findings in red need attention before the numbers are trusted or acted on." {
		t.Errorf("summary %q", s)
	}
	c.Attention = c.Attention[1:2]
	if s := c.Summary(); s != "1 finding in red needs attention before the numbers are trusted or acted on." {
		t.Errorf("summary with the lost writes alone %q", s)
	}
	c.Attention, c.SLOLevels, c.SLOFailed = nil, 6, 2
	if s := c.Summary(); strings.Contains(s, "needs attention") || !strings.Contains(s, "The SLO failed at 2 of 6 levels measured") {
		t.Errorf("summary with failed SLO levels %q", s)
	}
	c.SLOFailed = 0
	if s := c.Summary(); strings.Contains(s, "SLO failed") || !strings.HasPrefix(s, "Nothing was found that makes these numbers untrustworthy") {
		t.Errorf("summary of a clean campaign %q", s)
	}
}
