package results_test

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// An agent run's stored detail reads back as typed fields; a lost agent
// makes the run partial, naming it and when; per-agent intervals come
// back by agent with their histograms.
func TestAgentRuns(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "agents", CreatedAt: t0})
	must := resultstest.Must(t)
	id, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Model: "open", Level: 400, Repetition: 1, Start: t0})
	must(err)
	must(st.PutAgentRun(store.AgentRun{RunID: id, Agent: "load1", Host: "load1", Index: 0, Status: store.AgentCompleted,
		Detail: []byte(`{"share":{"rate":200,"seed":7,"insert_start":1000},"clock":{"offset_ns":1500,"rtt_ns":40000},"result":{"throughput":199.5,"client_cpu":12,"client_limited":true,"note":"behind","start_skew_ns":300000}}`)}))
	must(st.PutAgentRun(store.AgentRun{RunID: id, Agent: "load2", Host: "load2", Index: 1, Status: store.AgentLost, LostAt: t0.Add(4 * time.Second),
		Reason: "its connection ended: EOF", Detail: []byte(`{"share":{"rate":200,"seed":8,"insert_start":4294968296},"clock":{"offset_ns":-20,"rtt_ns":50000}}`)}))
	h := store.NewHistogram()
	must(h.RecordValue(420))
	must(st.AddAgentIntervals("load1", []store.Interval{{RunID: id, Phase: "measure", Op: "read", Start: t0.Add(time.Second), Duration: time.Second, Count: 1, Hist: h}}))
	r, err := results.New(st)
	must(err)

	as, err := r.AgentRuns(id)
	must(err)
	if len(as) != 2 {
		t.Fatalf("agent runs: %+v", as)
	}
	a, b := as[0], as[1]
	if a.Rate != 200 || a.Seed != 7 || a.InsertStart != 1000 || a.ClockOffset != 1500 || a.ClockRTT != 40*time.Microsecond ||
		!a.Reported || a.Throughput != 199.5 || !a.ClientLimited || a.ClientNote != "behind" || a.StartSkew != 300*time.Microsecond {
		t.Errorf("load1: %+v", a)
	}
	if b.Status != store.AgentLost || b.Reported || !b.LostAt.Equal(t0.Add(4*time.Second)) {
		t.Errorf("load2: %+v", b)
	}
	p, err := r.Partial(id)
	must(err)
	if !strings.Contains(p, "agent load2 on load2 lost at 2026-03-01T12:00:04Z (its connection ended: EOF)") || strings.Contains(p, "load1") {
		t.Errorf("partial: %q", p)
	}
	lim, err := r.LimitingAgents(id)
	must(err)
	if len(lim) != 1 || lim[0] != "load1" {
		t.Errorf("limiting agents: %v", lim)
	}
	ivs, err := r.AgentIntervals(id, "load1")
	must(err)
	if len(ivs) != 1 || ivs[0].Agent != "load1" || ivs[0].Hist.ValueAtQuantile(50) != h.ValueAtQuantile(50) {
		t.Errorf("agent intervals: %+v", ivs)
	}
	if none, _ := r.AgentRuns(id + 1); len(none) != 0 {
		t.Errorf("a run without agents has agent runs: %+v", none)
	}
}
