package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/regions"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	reportregions "github.com/headroom-dev/headroom/internal/report/regions"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/redis"
)

// buildHeadroom builds the headroom binary into dir: the agents run it.
func buildHeadroom(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "headroom")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/headroom-dev/headroom/cmd/headroom")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building headroom: %v\n%s", err, out)
	}
	return bin
}

// agentPIDs finds the processes of the agent named name running bin (this
// test's own build, so no other process matches).
func agentPIDs(bin, name string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		if len(args) >= 6 && args[0] == bin && args[1] == "agent" && slices.Contains(args, "--name") && args[len(args)-1] == name {
			out = append(out, pid)
		}
	}
	return out
}

// Two agents on two lab hosts drive one Redis on a third. Run 1: the
// merged intervals are the agents' intervals added up (counts) and merged
// (histograms, equal to re-recording every agent's values), and the
// offered rate is the spec's. Run 2: one agent is killed mid-run; the run
// completes, marked partial with the agent and the time, and the other
// agent's intervals are all there. The two agent hosts are in two
// regions: run 1's regions breakdown has one region per agent, its
// counts add up to the run's and its percentiles are each agent's own.
func TestLabTwoAgentsMergeExactly(t *testing.T) {
	labtest.NeedServer(t, "redis-server", "redis-server")
	dir := labtest.SearchableDir(t)
	bin := buildHeadroom(t, dir)
	s := parse(t, dir, fmt.Sprintf(`
name: lab-agents
lab:
  name: t-camp-agents
  hosts:
    - {name: db1, type: medium}
    - {name: load1, type: small, region: eu}
    - {name: load2, type: small, region: us}
target: {type: redis, managed: {host: db1}}
workload: {ycsb: c, record_count: 500, request_distribution: uniform}
load: {model: open, rates: [400], max_in_flight: 32, agents: {hosts: [load1, load2], binary: %s}}
phases: {warmup: 1s, measure: 6s}
repetitions: 2
interval: 1s
monitor: {disks: [], interfaces: []}
output: out
`, bin))

	type result struct {
		out Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := Start(context.Background(), s, Options{})
		done <- result{out, err}
	}()
	// Kill load2's agent in the middle of the second run's measured phase.
	killed := false
	deadline := time.Now().Add(3 * time.Minute)
	var res result
wait:
	for {
		select {
		case res = <-done:
			break wait
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the campaign did not end within 3 minutes")
		}
		if killed {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "out", "*", StoreFile))
		if len(paths) != 1 {
			continue
		}
		if agentIntervals(paths[0], 2, "load2") >= 4 {
			for _, pid := range agentPIDs(bin, "load2") {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed = true
			}
		}
	}
	if res.err != nil {
		if st, err := store.Open(res.out.StorePath); err == nil {
			runs, _ := st.Runs()
			for _, r := range runs {
				t.Logf("run %d: %s %s", r.ID, r.Status, r.Message)
			}
			st.Close()
		}
		t.Fatal(res.err)
	}
	if !killed {
		t.Fatal("load2's agent was not found to kill during run 2")
	}
	st := openStore(t, res.out)
	runs := storedRuns(t, st, 2)

	// Run 1: every interval merged exactly.
	r1 := runs[0]
	if r1.Status != store.StatusCompleted || r1.Message != "" {
		t.Fatalf("run 1: %s %q", r1.Status, r1.Message)
	}
	merged, err := st.Intervals(r1.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	per, err := st.AgentIntervals(r1.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		phase, op string
		start     int64
	}
	byKey := map[key][]store.AgentInterval{}
	for _, a := range per {
		k := key{a.Phase, a.Op, a.Start.UnixNano()}
		byKey[k] = append(byKey[k], a)
	}
	// Every interval has both agents' rows; a (phase, op) pair within it
	// may have only one agent's, as when a warmup request of one agent
	// completed in the first measured interval (a request keeps the
	// phase it was intended in) and none of the other's did.
	agentsAt := map[int64]map[string]bool{}
	for _, a := range per {
		s := a.Start.UnixNano()
		if agentsAt[s] == nil {
			agentsAt[s] = map[string]bool{}
		}
		agentsAt[s][a.Agent] = true
	}
	var offered int64
	rows := 0
	for _, m := range merged {
		if n := len(agentsAt[m.Start.UnixNano()]); n != 2 {
			t.Errorf("run 1 interval %v: %d agents' intervals, want 2", m.Start, n)
		}
		parts := byKey[key{m.Phase, m.Op, m.Start.UnixNano()}]
		rows += len(parts)
		if len(parts) == 0 || len(parts) > 2 {
			t.Errorf("run 1 %s %s %v: %d agents' intervals, want 1 or 2", m.Phase, m.Op, m.Start, len(parts))
			continue
		}
		// An independent merge: every value of every agent's histogram
		// recorded again into one histogram.
		all := store.NewHistogram()
		var count, late, dropped int64
		for _, a := range parts {
			count += a.Count
			late += a.Late
			dropped += a.Dropped
			for _, b := range a.Hist.Distribution() {
				if b.Count > 0 {
					_ = all.RecordValues(b.From, b.Count)
				}
			}
		}
		if m.Count != count || m.Late != late || m.Dropped != dropped {
			t.Errorf("run 1 %v: merged count/late/dropped %d/%d/%d, agents' sums %d/%d/%d", m.Start, m.Count, m.Late, m.Dropped, count, late, dropped)
		}
		for _, q := range []float64{50, 90, 99, 99.9, 100} {
			if got, want := m.Hist.ValueAtQuantile(q), all.ValueAtQuantile(q); got != want {
				t.Errorf("run 1 %v p%v: merged %d µs, all agents' values %d µs", m.Start, q, got, want)
			}
		}
		if m.Phase == "measure" {
			offered += m.Count + m.Errors + m.Dropped
		}
	}
	if rows != len(per) {
		t.Errorf("run 1: %d agents' interval rows, %d of them in a merged interval", len(per), rows)
	}
	rate := float64(offered) / 6
	t.Logf("run 1: %d merged intervals, offered %.1f req/s of 400 (%s)", len(merged), rate, r1.Summary.ClientNote)
	// 2400 Poisson arrivals: the standard deviation is about 2%.
	if math.Abs(rate-400) > 40 {
		t.Errorf("the agents offered %.1f req/s together, want 400", rate)
	}
	ars, err := st.AgentRuns(r1.ID)
	if err != nil || len(ars) != 2 {
		t.Fatalf("agent runs of run 1: %v %+v", err, ars)
	}
	for _, a := range ars {
		var d agentDetail
		if err := json.Unmarshal(a.Detail, &d); err != nil {
			t.Fatal(err)
		}
		if a.Status != store.AgentCompleted || d.Share.Rate != 200 || d.Result == nil || d.Clock.RTT <= 0 {
			t.Errorf("run 1 agent %s on %s: %s, share %+v, clock %+v", a.Agent, a.Host, a.Status, d.Share, d.Clock)
		}
	}

	checkRegions(t, res.out.StorePath, r1.ID, merged, per)

	// Run 2: partial, load1's data intact.
	r2 := runs[1]
	if r2.Status != store.StatusCompleted || !strings.HasPrefix(r2.Message, "partial: agent load2 lost at +") {
		t.Errorf("run 2: %s %q; want completed and partial because load2 was killed", r2.Status, r2.Message)
	}
	ars, _ = st.AgentRuns(r2.ID)
	if len(ars) != 2 || ars[0].Status != store.AgentCompleted || ars[1].Status != store.AgentLost || ars[1].LostAt.IsZero() {
		t.Fatalf("run 2 agents: %+v", ars)
	}
	one, _ := st.AgentIntervals(r2.ID, "load1")
	two, _ := st.AgentIntervals(r2.ID, "load2")
	m2, _ := st.Intervals(r2.ID, "")
	if len(two) >= len(one) || len(two) < 4 {
		t.Errorf("run 2: load1 sent %d intervals, load2 %d before it was killed; want at least 4 and fewer than load1's", len(one), len(two))
	}
	// Nothing either agent measured is lost, and nothing else is counted:
	// each merged row is the sum of the agents' rows of its interval. (A
	// count of rows alone is not that: a warm-up request one agent
	// answered in the first measured interval gives that interval a
	// "warmup" row of that agent beside its "measure" row.)
	type rowKey struct {
		start     time.Time
		phase, op string
	}
	type sums struct{ count, errors, dropped int64 }
	add := func(m map[rowKey]sums, iv store.Interval) {
		k := rowKey{iv.Start.UTC(), iv.Phase, iv.Op}
		x := m[k]
		x.count, x.errors, x.dropped = x.count+iv.Count, x.errors+iv.Errors, x.dropped+iv.Dropped
		m[k] = x
	}
	fromMerged, fromAgents := map[rowKey]sums{}, map[rowKey]sums{}
	for _, iv := range m2 {
		add(fromMerged, iv)
	}
	for _, a := range append(one, two...) {
		add(fromAgents, a.Interval)
	}
	measured := 0
	for k, a := range fromAgents {
		if fromMerged[k] != a {
			t.Errorf("run 2 %v %s %s: merged %+v, the agents' rows sum to %+v", k.start, k.phase, k.op, fromMerged[k], a)
		}
	}
	for k, m := range fromMerged {
		if _, ok := fromAgents[k]; !ok {
			t.Errorf("run 2 %v %s %s: merged %+v, and no agent has a row of that interval", k.start, k.phase, k.op, m)
		}
	}
	// The drain after the measured phase (answers to requests in flight
	// at its end) is no full second of load.
	var first time.Time
	for _, a := range one {
		if first.IsZero() || a.Start.Before(first) {
			first = a.Start
		}
	}
	full := func(a store.AgentInterval) bool {
		return a.Phase == "measure" && a.Start.Before(first.Add(7*time.Second))
	}
	for _, a := range one {
		if full(a) {
			measured++
		}
	}
	if measured < 6 {
		t.Errorf("run 2: load1 has %d full measured seconds of 6", measured)
	}
	if t.Failed() {
		for _, x := range m2 {
			t.Logf("merged %v %v %s %s %d", x.Start.Format("15:04:05.000"), x.Duration, x.Phase, x.Op, x.Count)
		}
		for _, x := range append(one, two...) {
			t.Logf("%s %v %v %s %s %d", x.Agent, x.Start.Format("15:04:05.000"), x.Duration, x.Phase, x.Op, x.Count)
		}
	}
	for _, a := range one {
		if full(a) && (a.Count < 140 || a.Count > 260) {
			t.Errorf("run 2 load1 %v: %d reads in a second at 200/s", a.Start, a.Count)
		}
	}
}

// agentIntervals counts the stored intervals of one agent in one run, in
// a results database another goroutine is writing.
func agentIntervals(path string, run int64, agent string) int {
	st, err := store.OpenReadOnly(path)
	if err != nil {
		return 0
	}
	defer st.Close()
	ivs, _ := st.AgentIntervals(run, agent)
	return len(ivs)
}

// checkRegions checks run id's regions breakdown against the run's merged
// intervals and each agent's own (one agent per region, load1 in eu and
// load2 in us), and logs it as the report's table.
func checkRegions(t *testing.T, path string, id int64, merged []store.Interval, per []store.AgentInterval) {
	t.Helper()
	rr, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	all, err := regions.FromResults(rr)
	if err != nil {
		t.Fatal(err)
	}
	var x *regions.Result
	for i := range all {
		if all[i].Run.ID == id {
			x = &all[i]
		}
	}
	if x == nil || !x.Split() || len(x.Regions) != 2 || x.Regions[0].Name != "eu" || x.Regions[1].Name != "us" ||
		strings.Join(x.Regions[0].Agents, ",") != "load1" || strings.Join(x.Regions[1].Agents, ",") != "load2" {
		t.Fatalf("run %d regions: %+v; want eu (load1) and us (load2)", id, x)
	}
	// The run's measured totals and latencies, from the merged intervals.
	var done, errs, dropped int64
	run := store.NewHistogram()
	for _, m := range merged {
		if m.Phase == "measure" {
			done, errs, dropped = done+m.Count, errs+m.Errors, dropped+m.Dropped
			run.Merge(m.Hist)
		}
	}
	both := store.NewHistogram()
	var sd, se, sdr int64
	var tput float64
	t.Logf("run %d by region (%s s measured): region | agents | ok/s | p50 | p99 | errors | dropped", id, strconv.FormatFloat(x.MeasureSec, 'f', -1, 64))
	for _, g := range x.Regions {
		sd, se, sdr, tput = sd+g.Completed, se+g.Errors, sdr+g.Dropped, tput+g.Throughput
		both.Merge(g.Hist)
		// The agent's own latencies, recorded again from its intervals.
		own := store.NewHistogram()
		for _, a := range per {
			if a.Agent == g.Agents[0] && a.Phase == "measure" {
				for _, b := range a.Hist.Distribution() {
					if b.Count > 0 {
						_ = own.RecordValues(b.From, b.Count)
					}
				}
			}
		}
		for _, c := range []struct {
			name string
			got  int64
			q    float64
		}{{"p50", g.P50, 50}, {"p95", g.P95, 95}, {"p99", g.P99, 99}, {"max", g.Max, 100}} {
			if w := own.ValueAtQuantile(c.q); c.got != w {
				t.Errorf("region %s %s: %d µs; agent %s's own %d µs", g.Name, c.name, c.got, g.Agents[0], w)
			}
		}
		if g.Completed != own.TotalCount() {
			t.Errorf("region %s: %d completed; agent %s's histograms hold %d", g.Name, g.Completed, g.Agents[0], own.TotalCount())
		}
		t.Logf("| %s | %s | %.1f | %d µs | %d µs | %d | %d |", g.Name, strings.Join(g.Agents, ", "), g.Throughput, g.P50, g.P99, g.Errors, g.Dropped)
	}
	if sd != done || se != errs || sdr != dropped || sd == 0 {
		t.Errorf("regions add up to %d/%d/%d completed/errors/dropped; the run's merged intervals %d/%d/%d", sd, se, sdr, done, errs, dropped)
	}
	if math.Abs(tput-float64(done)/x.MeasureSec) > 1e-6 {
		t.Errorf("regions' ok/s add up to %v; the run's %v", tput, float64(done)/x.MeasureSec)
	}
	for _, q := range []float64{50, 99, 100} {
		if a, b := both.ValueAtQuantile(q), run.ValueAtQuantile(q); a != b {
			t.Errorf("p%v of the regions merged %d µs; the run's %d µs", q, a, b)
		}
	}
	t.Logf("terminal: %s", reportregions.Line(*x))
	checkHostRegions(t, rr, id)
}

// checkHostRegions checks run id's hosts by region: eu holds load1, us
// load2, and db1 (no label) is with the machine. The two agents were given
// equal shares of one workload, so their hosts' network throughputs must
// agree to within a third, and each host's CPU must show the work.
func checkHostRegions(t *testing.T, rr *results.Results, id int64) {
	t.Helper()
	all, err := regions.HostsFromResults(rr)
	if err != nil {
		t.Fatal(err)
	}
	var x *regions.HostResult
	for i := range all {
		if all[i].Run.ID == id {
			x = &all[i]
		}
	}
	if x == nil || !x.Split() || len(x.Regions) != 3 {
		t.Fatalf("run %d hosts by region: %+v; want eu, us and %s", id, x, regions.NoRegion)
	}
	eu, us, none := x.Regions[0], x.Regions[1], x.Regions[2]
	if eu.Name != "eu" || strings.Join(eu.Hosts, ",") != "load1" || us.Name != "us" || strings.Join(us.Hosts, ",") != "load2" ||
		none.Name != regions.NoRegion || !slices.Contains(none.Hosts, "db1") {
		t.Fatalf("run %d hosts by region: %+v", id, x.Regions)
	}
	for _, g := range []regions.HostRegion{eu, us} {
		if !(g.CPUMean > 0) || !(g.NetBytes > 0) {
			t.Errorf("region %s: CPU %v%%, network %v B/s; an agent offering 200 req/s shows on both", g.Name, g.CPUMean, g.NetBytes)
		}
	}
	if r := eu.NetBytes / us.NetBytes; !(r > 0.75 && r < 1.33) {
		t.Errorf("equal shares: eu's network %.0f B/s against us's %.0f B/s", eu.NetBytes, us.NetBytes)
	}
	t.Logf("terminal: %s", reportregions.HostLine(*x))
}
