package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/availability"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/store"
)

// The deliberate loss with Redis (TestPromoteAfterKillLosesAsyncWrites'
// counterpart): a managed replica set, primary on r1 and replica on r2,
// takes 200 requests/s, 80% inserts. At 3 s a partition cuts the replica
// off; the primary goes on acknowledging inserts (Redis acknowledges
// before it replicates) that the replica never receives; at 6 s the
// primary is killed, at 7 s the partition heals, at 8 s r2 is promoted
// and the writes move to it. The inserts acknowledged during the
// partition are gone: the write check must find them lost. The control,
// the same kill and promote without the partition, loses only what was
// acknowledged but not yet sent to the replica when the kill hit: at
// most a few milliseconds of inserts on the lab's network. After either
// run the old primary's host has a replica of the new primary again.
func TestRedisPromoteAfterKillLosesAsyncWrites(t *testing.T) {
	labtest.NeedServer(t, "redis-server", "redis-server")
	labtest.NeedServer(t, "iptables", "iptables")
	for _, c := range []struct {
		name, events string
		partition    bool
	}{
		{"partition", `
  - {at: 3s, action: partition, groups: [[r1], [r2]]}
  - {at: 6s, action: kill, host: r1}
  - {at: 7s, action: heal}
  - {at: 8s, action: promote, host: r2}`, true},
		{"control", `
  - {at: 6s, action: kill, host: r1}
  - {at: 8s, action: promote, host: r2}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := labtest.SearchableDir(t)
			s := parse(t, dir, `
name: lab-redis-promote-`+c.name+`
lab:
  name: t-camp-rpromo
  hosts: [{name: r, count: 2, type: medium}]
target:
  type: redis
  managed: {cluster: {nodes: 2, hosts: r, mode: replicas}}
workload: {operations: {insert: 0.8, read: 0.2}, record_count: 500, field_count: 2, field_length: 20}
load: {model: open, arrival: constant, rates: [200], max_in_flight: 64, timeout: 1s}
phases: {warmup: 2s, measure: 14s}
events:`+c.events+`
analysis:
  failures: {tolerance: 0.5, stable: 3}
monitor: {disks: [], interfaces: []}
output: out
`)
			var notes syncBuffer
			out, err := Start(context.Background(), s, Options{Progress: progress.NewLines(&notes, time.Minute)})
			if err != nil {
				t.Fatalf("%v\n%s", err, notes.String())
			}
			st := openStore(t, out)
			x, at := failureRun(t, st)
			if at["promote"].IsZero() {
				t.Fatalf("no promote event: %v", at)
			}
			if len(x.Checks) != 1 {
				t.Fatalf("write checks: %+v", x.Checks)
			}
			wc := x.Checks[0]
			t.Logf("%s: write check %+v", c.name, wc)
			if wc.Trigger != "fault" || wc.Stable+wc.Lost+wc.NeverRead != wc.Checked || wc.NeverRead != 0 || wc.Checked < 500 {
				t.Errorf("write check: %+v", wc)
			}
			said := strings.Contains(notes.String(), "LOST WRITES: ")
			if c.partition {
				// About 3 s of 160 inserts/s acknowledged by the cut-off
				// primary.
				if wc.Lost < 100 || !said {
					t.Errorf("replica promoted after a partition and the primary's kill: %d lost (the terminal said LOST WRITES: %v), want the inserts of the partition (~480)", wc.Lost, said)
				}
			} else if wc.Lost > 20 {
				// 20 inserts are 125 ms of them, far more than the
				// replication lag on the lab's network.
				t.Errorf("replica promoted after the primary's kill, no partition: %d lost, want at most the few acknowledged in the replication lag", wc.Lost)
			}
			// The kill pairs with the promote, and the clients came back
			// on the new primary.
			var sc *availability.Scenario
			for i := range x.Result.Scenarios {
				if x.Result.Scenarios[i].Fault.Action == "kill" {
					sc = &x.Result.Scenarios[i]
				}
			}
			if sc == nil || sc.Recovery.Action != "promote" || !sc.To.Equal(at["promote"]) {
				t.Fatalf("kill scenario: %+v", sc)
			}
			var after int64
			var secs []string
			for _, sec := range x.Result.Timeline {
				secs = append(secs, fmt.Sprintf("%v %.2f", sec.Start.Sub(x.Origin).Round(100*time.Millisecond), sec.Availability))
				if sec.Start.After(at["promote"].Add(time.Second)) {
					after += int64(sec.Throughput * sec.Dur.Seconds())
				}
			}
			// Recovered is only logged: it also asks for a p99 within
			// 1.5 times the steady state's, and at Redis's sub-millisecond
			// latencies on a 1-vCPU lab host that goes either way from
			// one run to the next with the same availability.
			if after < 200 {
				t.Errorf("%d requests succeeded after the promote; the writes did not move to the new primary", after)
			}
			t.Logf("%s: kill -> promote: detected %v, recovered %v, MTTR %v, yield %.2f; %d requests answered from a second after the promote; availability per second: %s", c.name, sc.Detect, sc.Recovered, sc.MTTR, sc.Yield, after, strings.Join(secs, ", "))
			// The failover's change, and after the run a fresh replica of
			// the new primary on r1: the set has its two nodes again.
			evs, err := st.Events(x.Run.ID)
			if err != nil {
				t.Fatal(err)
			}
			var promoted *deploy.NodeChange
			for _, e := range evs {
				if e.Kind == eventFailover {
					promoted = new(deploy.NodeChange)
					if err := json.Unmarshal([]byte(e.Detail), promoted); err != nil {
						t.Fatal(err)
					}
				}
			}
			if promoted == nil || promoted.Error != "" || promoted.Node != "node2" || promoted.Host != "r2" || promoted.Done.IsZero() {
				t.Fatalf("failover change: %+v", promoted)
			}
			t.Logf("%s: %s", c.name, promoted.Detail)
			restored := restoredReplicas(t, st)
			if len(restored) != 1 || restored[0].Host != "r1" || restored[0].Error != "" ||
				!strings.Contains(restored[0].Detail, "in place of node1") || !strings.Contains(restored[0].Detail, "joined as a replica") {
				t.Fatalf("replicas rebuilt after the run: %+v", restored)
			}
			t.Logf("%s: %s", c.name, restored[0].Detail)
		})
	}
}

// restoredReplicas are the node changes recorded outside any run that
// put nodes back (restoreAfterFailover, undoNodes).
func restoredReplicas(t *testing.T, st *store.Store) []deploy.NodeChange {
	t.Helper()
	evs, err := st.Events(0)
	if err != nil {
		t.Fatal(err)
	}
	var out []deploy.NodeChange
	for _, e := range evs {
		if e.Kind != deploy.EventNodeChange+"_undo" {
			continue
		}
		var ch deploy.NodeChange
		if err := json.Unmarshal([]byte(e.Detail), &ch); err != nil {
			t.Fatal(err)
		}
		if ch.Action == actAddNode {
			out = append(out, ch)
		}
	}
	return out
}
