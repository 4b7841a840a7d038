package campaign

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/results"
)

// Where the load comes from, with three Cassandra nodes on a 2-core
// machine: the client-limit verdict must name the side that was the limit
// when the cause is designed in. One load agent on its own lab host sends
// 300 reads/s (open loop, ONE, RF 3) to a 3-node ring on three lab hosts,
// in two treatments:
//
//   - agent-starved: each node has a whole vCPU, the agent's host 0.02
//     (20 ms of CPU a second, while the agent needs tens of µs per request,
//     up to about 100 on a slow day): the agent cannot keep its schedule,
//     so its own verdict, and the run's, must say the client was the limit.
//     (The rate was 800 req/s and the nodes had 0.4 vCPU until a day when
//     this machine ran 3-5 times slower (2026-12-01): the ring itself then
//     fell behind, at a p99 of 1.2 s, serving 482 ok/s at 0.4 vCPU per node and 442
//     with whole vCPUs, and the verdict rightly blamed the target. The ring must have
//     room for the agent to be the only limit.)
//   - ring-starved: each node has 0.1 vCPU and the agent a whole core:
//     the ring serves under 90% of the offered rate and the verdict must
//     not blame the client. (Such a ring served 229-260 ok/s on 2026-11-25
//     and 63 on the slow day; at 0.05 vCPU the nodes timed out creating the
//     keyspace.)
func TestCassandraRingClientLimitVerdict(t *testing.T) {
	labtest.NeedCassandra(t)
	dir := labtest.SearchableDir(t)
	bin := buildHeadroom(t, dir)
	s := parse(t, dir, fmt.Sprintf(`
name: cassandra-client-limit
lab:
  name: t-cass-climit
  populate_unthrottled: true
  hosts:
    - {name: cass, count: 3, type: medium, vcpus: 1}
    - {name: load, type: small, vcpus: 0.02}
target:
  type: cassandra
  consistency: ONE
  managed:
    cluster: {nodes: 3, hosts: cass, replication_factor: 3}
workload: {ycsb: c, record_count: 1000, field_count: 4, field_length: 50, request_distribution: uniform}
load:
  model: open
  arrival: constant
  rates: [300]
  max_in_flight: 128
  timeout: 5s
  agents: {hosts: [load], binary: %s}
phases: {warmup: 3s, measure: 8s}
interval: 1s
monitor: {disks: [], interfaces: []}
treatments:
  - name: agent-starved
  - name: ring-starved
    set:
      lab.hosts[0].vcpus: 0.1
      lab.hosts[1].vcpus: 1
output: out
`, bin))
	_, st := start(t, s)
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		treatment string
		limited   bool
	}{{"agent-starved", true}, {"ring-starved", false}} {
		runs := r.CompletedRuns(c.treatment)
		if len(runs) != 1 {
			t.Fatalf("%s: completed runs %+v", c.treatment, runs)
		}
		run := runs[0]
		sum := run.Summary
		limiting, err := r.LimitingAgents(run.ID)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.0f ok/s of 300 offered, %d completed, %d errors, %d dropped, %d late; client-limited %v (agents %v): %s",
			c.treatment, sum.Throughput, sum.Completed, sum.Errors, sum.Dropped, sum.Late, sum.ClientLimited, limiting, sum.ClientNote)
		if part, _ := r.Partial(run.ID); part != "" {
			t.Errorf("%s: the agent must see the run through: %s", c.treatment, part)
		}
		if sum.ClientLimited != c.limited {
			t.Errorf("%s: client-limited = %v, want %v (note %q)", c.treatment, sum.ClientLimited, c.limited, sum.ClientNote)
		}
		if want := []string{"load"}; c.limited && strings.Join(limiting, ",") != "load" {
			t.Errorf("%s: limiting agents %v, want %v", c.treatment, limiting, want)
		}
		if !c.limited && len(limiting) != 0 {
			t.Errorf("%s: limiting agents %v, want none: the ring, not the agent, was the limit", c.treatment, limiting)
		}
		// The starved ring serves under 90% of the offered rate. (The starved
		// agent's rate says less: it sends in bursts between its quota's
		// throttled periods and served 588-659 of 800 ok/s; its late sends are
		// the evidence, and the verdict above counts them.)
		if !c.limited && sum.Throughput > 0.9*300 {
			t.Errorf("%s: %.0f ok/s of 300 offered; the ring at a tenth of a core each should not serve that", c.treatment, sum.Throughput)
		}
	}
}
