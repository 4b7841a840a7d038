package campaign

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// Three agents on this machine (no lab needed) in a closed loop against
// the null target: 7 clients dealt 3, 2, 2; every merged interval is the
// sum of the agents'; the results model reads the agents back.
func TestLocalAgentsClosedLoop(t *testing.T) {
	dir := t.TempDir()
	bin := buildHeadroom(t, dir)
	s := parse(t, dir, fmt.Sprintf(`
name: local-agents
target: {type: null}
workload: {ycsb: b, record_count: 1000}
load: {model: closed, clients: [7], think_time: 2ms, agents: {hosts: [local, local, local], binary: %s}}
phases: {warmup: 1s, measure: 2s, populate: false}
interval: 1s
monitor: {enabled: false}
output: out
`, bin))
	out, st := start(t, s)
	r := storedRuns(t, st, 1)[0]
	if r.Status != store.StatusCompleted || r.Message != "" {
		t.Fatalf("run: %s %q", r.Status, r.Message)
	}
	merged, err := st.Intervals(r.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	per, err := st.AgentIntervals(r.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, a := range per {
		sums[fmt.Sprint(a.Phase, a.Op, a.Start.UnixNano())] += a.Count
	}
	var total int64
	for _, m := range merged {
		if got := sums[fmt.Sprint(m.Phase, m.Op, m.Start.UnixNano())]; got != m.Count || m.Hist.TotalCount() != m.Count {
			t.Errorf("%s %s %v: merged %d (histogram %d), agents %d", m.Phase, m.Op, m.Start, m.Count, m.Hist.TotalCount(), got)
		}
		total += m.Count
	}
	// Every agent's interval adds to a merged one, and every agent wrote
	// some. Not every agent has a row for every merged one: an agent
	// writes no row for an operation none of its requests did, which
	// happens to updates (5% of YCSB B) in a short interval on two clients
	// (a CI run of 2026-12-07 had 19 rows for 3 agents and 7 merged ones).
	keys := map[string]bool{}
	for _, m := range merged {
		keys[fmt.Sprint(m.Phase, m.Op, m.Start.UnixNano())] = true
	}
	rowsOf := map[string]int{}
	for _, a := range per {
		rowsOf[a.Agent]++
		if !keys[fmt.Sprint(a.Phase, a.Op, a.Start.UnixNano())] {
			t.Errorf("agent %s's %s %s interval at %v has no merged interval", a.Agent, a.Phase, a.Op, a.Start)
		}
	}
	if total < 1000 || len(rowsOf) != 3 || len(per) > 3*len(merged) {
		t.Errorf("%d requests in %d merged and %d agent intervals (by agent %v)", total, len(merged), len(per), rowsOf)
	}
	res, err := results.Open(out.StorePath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	as, err := res.AgentRuns(r.ID)
	if err != nil || len(as) != 3 {
		t.Fatalf("agent runs: %v %+v", err, as)
	}
	var names []string
	clients := 0
	for _, a := range as {
		names = append(names, a.Agent)
		clients += a.Clients
		if !a.Reported || a.Status != store.AgentCompleted {
			t.Errorf("agent %s: %+v", a.Agent, a)
		}
	}
	if strings.Join(names, ",") != "local,local-2,local-3" || as[0].Clients != 3 || clients != 7 {
		t.Errorf("agents %v with %d, ... clients (%d in all), want local,local-2,local-3 with 3, 2, 2", names, as[0].Clients, clients)
	}
}
